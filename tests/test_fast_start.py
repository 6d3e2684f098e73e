"""``kafka-mc --help`` and ``kafka-mc models`` start fast (issue 37, item 1): they import none
of the heavy dependencies (numpy, scipy, networkx, z3, hypothesis, pyspark), which are
imported where they are used. Checked by what is imported, not by a timer (the machine is
shared; the times are in the closing note: medians of 10)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "scipy", "networkx", "z3", "hypothesis", "pyspark")


@pytest.mark.parametrize("argv", [["--help"], ["models"], ["check", "--help"], ["release", "--help"]])
def test_the_quick_verbs_import_no_heavy_dependency(argv: list[str]) -> None:
    code = (
        "import contextlib, io, json, sys\n"
        "from explorer.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
