"""``kafka-mc --help`` and ``kafka-mc models`` start fast (issue 37, item 1): they import none
of the heavy dependencies (numpy, scipy, networkx, z3, hypothesis, pyspark), which are
imported where they are used. Checked by what is imported, not by a timer (the machine is
shared; the times are in the closing note: medians of 10)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "scipy", "networkx", "z3", "hypothesis", "pyspark")


@pytest.mark.slow  # 1.2 CPU-s in a loaded default run (2026-11-29)
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


# A Ctrl-C at the k-th import of the command's start-up (issue 37, item 4: the first Ctrl-C is
# always enough and never prints Python's traceback). The interrupt is raised from the import
# machinery itself, so the point it lands on is exact, not a race with a timer.
_INTERRUPT_AT_IMPORT = """
import builtins, sys
real_import, seen, fired = builtins.__import__, [0], [False]
def interrupting_import(name, *args, **kwargs):
    seen[0] += 1
    if seen[0] == {k} and not fired[0]:
        fired[0] = True
        raise KeyboardInterrupt
    return real_import(name, *args, **kwargs)
sys.argv = ["kafka-mc", "models"]
from explorer._entry import main
builtins.__import__ = interrupting_import
try:
    main()
finally:
    sys.stdout.flush()
    print("FIRED" if fired[0] else "NOT-FIRED", file=sys.stderr)
"""


@pytest.mark.parametrize("k", [1, 40, 400])
def test_a_ctrl_c_during_start_up_ends_in_one_line(k: int) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _INTERRUPT_AT_IMPORT.format(k=k)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = out.stderr.strip().splitlines()
    assert lines[-1] == "FIRED", "the start-up has fewer imports than k: the case tests nothing"
    assert out.returncode == 3, out.stderr
    assert "Traceback" not in out.stderr
    assert len(lines) == 2 and lines[0].startswith("kafka-mc: interrupted by SIGINT after "), out.stderr


@pytest.mark.parametrize("verb", ["check", "models", "replay", "prove", "shrink", "release", "mutate"])
def test_every_verb_says_what_it_does(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``kafka-mc VERB --help``: after the usage lines, a paragraph saying what the verb does and
    what its exit codes mean (issue 37, item 2), before the list of arguments."""
    from explorer.cli import main

    with contextlib.suppress(SystemExit):
        main([verb, "--help"])
    blocks = [b for b in capsys.readouterr().out.split("\n\n") if b.strip()]
    description = blocks[1]
    assert not description.startswith(("positional arguments", "options")), blocks[:2]
    assert "Exit 0" in description and len(description.split()) >= 25, description
