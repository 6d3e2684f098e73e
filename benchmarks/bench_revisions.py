"""One check run on two revisions of this project, side by side: CPU seconds and wall time of
``kafka-mc check`` in each checkout, alternating, medians of ``--runs`` (default 3), and the
ratio new / old. For a change that must not slow the model or the engines down (issue 31:
serial bfs on the first 1,000,000 states of controller-ref at least as fast as before).

The old revision is checked out with ``git worktree`` into a temporary folder (its C
accelerator built in place when the checkout has one) and removed afterwards.

Run: ``python -m benchmarks.bench_revisions --old HEAD~3 -- controller --config
configs/controller-ref.toml --max-states 1000000``
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import median

ROOT = Path(__file__).resolve().parent.parent


def timed(checkout: Path, args: list[str]) -> tuple[float, float, str]:
    """(CPU seconds of the child, wall seconds, its distinct-states line) of one check run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    p = subprocess.run(
        [sys.executable, "-m", "explorer", "check", *args],
        cwd=checkout, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    line = next((x.strip() for x in p.stdout.splitlines() if "distinct states" in x), p.stderr.strip()[-200:])
    return cpu, wall, line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the git revision to compare with the working tree")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("check_args", nargs=argparse.REMAINDER, help="-- then kafka-mc check's arguments")
    a = ap.parse_args()
    args = [x for x in a.check_args if x != "--"]
    tmp = Path(tempfile.mkdtemp(prefix="kafka-mc-old-"))
    old = tmp / "old"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(old), a.old], cwd=ROOT, check=True, capture_output=True
    )
    try:
        for so in ROOT.glob("explorer/_speedups*.so"):
            if (old / "explorer" / "_speedups.c").exists():
                shutil.copy2(so, old / "explorer" / so.name)
        res: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
        for i in range(a.runs):
            for name, where in (("old", old), ("new", ROOT)):
                cpu, wall, line = timed(where, args)
                res[name].append((cpu, wall))
                print(f"run {i + 1} {name}: {cpu:.1f} CPU-s, {wall:.1f} s wall ({line})", flush=True)
        med = {k: (median([c for c, _ in v]), median([w for _, w in v])) for k, v in res.items()}
        for k, (c, w) in med.items():
            print(f"{k} ({a.old if k == 'old' else 'working tree'}): median {c:.1f} CPU-s, {w:.1f} s wall")
        print(f"new / old: {med['new'][0] / med['old'][0]:.3f} CPU, {med['new'][1] / med['old'][1]:.3f} wall")
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False, capture_output=True
        )
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
