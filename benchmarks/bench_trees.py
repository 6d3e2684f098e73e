"""One check command run in two checkouts of the project, alternating, side by side.

For a change that must not slow the checker down (a restructuring, a refactor): each
round runs the command once in the baseline checkout and once in the candidate, each in
a fresh interpreter whose working directory (and so whose ``explorer``, ``model`` and
``invariants``) is that checkout; the medians of the wall times and of the distinct
states per second, and the ratio candidate / baseline, are printed. Both checkouts need
the C accelerator built in place (``python setup.py build_ext --inplace``) or neither.

Run, for example (a baseline checkout made with ``git worktree add /tmp/base REV``)::

    python -m benchmarks.bench_trees /tmp/base . --runs 3 -- \\
        check controller --config configs/controller-ref.toml --max-states 1000000 --quiet
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import median


def run_once(tree: Path, args: list[str]) -> tuple[float, float, int]:
    """Run ``python -m explorer ARGS --json F`` in ``tree``: (wall seconds, states/s, distinct)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        t0 = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-m", "explorer", *args, "--json", str(out)],
            cwd=tree,
            check=False,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - t0
        if not out.exists():
            raise SystemExit(f"{tree}: no result (exit {p.returncode}): {p.stderr.strip()[-300:]}")
        r = json.loads(out.read_text())
    return wall, float(r["states_per_second"]), int(r["distinct_states"])


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the rounds, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("baseline", type=Path)
    ap.add_argument("candidate", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        ap.error("give the kafka-mc arguments after --")
    cut = argv.index("--")
    ns = ap.parse_args(argv[:cut])
    args = argv[cut + 1 :]
    rows: dict[str, list[tuple[float, float, int]]] = {"baseline": [], "candidate": []}
    for i in range(ns.runs):
        for name, tree in (("baseline", ns.baseline), ("candidate", ns.candidate)):
            rows[name].append(run_once(tree.resolve(), args))
            wall, sps, n = rows[name][-1]
            print(f"run {i + 1} {name:9s}: {wall:7.1f} s  {sps:9,.0f} states/s  {n:,} states", flush=True)
    med = {k: (median([r[0] for r in v]), median([r[1] for r in v])) for k, v in rows.items()}
    for k, (w, s) in med.items():
        print(f"median {k:9s}: {w:7.1f} s  {s:9,.0f} states/s")
    print(
        f"candidate / baseline: time {med['candidate'][0] / med['baseline'][0]:.3f}, "
        f"states/s {med['candidate'][1] / med['baseline'][1]:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
