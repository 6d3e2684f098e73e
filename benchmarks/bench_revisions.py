"""One check run on two revisions of this project, side by side: CPU seconds and wall time of
``kafka-mc check`` in each checkout, alternating, medians of ``--runs`` (default 3), and the
ratio new / old. For a change that must not slow the model or the engines down (issue 31:
serial bfs on the first 1,000,000 states of controller-ref at least as fast as before).

The old revision is checked out with ``git worktree`` into a temporary folder (its C
accelerator built in place when the checkout has one) and removed afterwards.

Run: ``python -m benchmarks.bench_revisions --old HEAD~3 -- controller --config
configs/controller-ref.toml --max-states 1000000``

``--instructions LO,HI`` counts instructions instead of seconds (valgrind's cachegrind, which
counts the same for the same run whatever else the machine does): each revision's run to ``LO``
and to ``HI`` states, and the slope between them, instructions per state (start-up apart).

``--same-properties`` checks, in the working tree, only the properties the old revision checks
(``kafka-mc check --properties``; the names read from one short run of the old revision), so
properties added since do not count against the model's speed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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


def old_properties(checkout: Path, args: list[str]) -> list[str]:
    """The names of the properties ``kafka-mc check args`` checks in ``checkout`` (deadlock
    apart), from its JSON result on a run of one state."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        subprocess.run(
            [sys.executable, "-m", "explorer", "check", *args, "--max-states", "1", "--json", str(out)],
            cwd=checkout, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        return [n for n in json.loads(out.read_text())["properties"] if n != "deadlock"]


def instructions(checkout: Path, args: list[str], states: int) -> int:
    """Instructions executed by ``kafka-mc check args --max-states states`` in ``checkout``
    (cachegrind's ``I refs``)."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    p = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, "-m", "explorer", "check", *args, "--max-states", str(states)],
        cwd=checkout, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
    if m is None:
        raise SystemExit(f"cachegrind gave no instruction count: {p.stderr.strip()[-300:]}")
    return int(m.group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the git revision to compare with the working tree")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--same-properties",
        action="store_true",
        help="check in the working tree only the properties the old revision checks",
    )
    ap.add_argument(
        "--instructions",
        metavar="LO,HI",
        help="count instructions per state between LO and HI states (cachegrind) instead of timing",
    )
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
        new_args = args
        if a.same_properties:
            names = old_properties(old, args)
            print(f"the working tree checks the old revision's {len(names)} properties", flush=True)
            new_args = [*args, "--properties", ",".join(names)]
        if a.instructions:
            lo, hi = (int(x) for x in a.instructions.split(","))
            per: dict[str, float] = {}
            for name, where in (("old", old), ("new", ROOT)):
                run_args = args if name == "old" else new_args
                i_lo, i_hi = instructions(where, run_args, lo), instructions(where, run_args, hi)
                per[name] = (i_hi - i_lo) / (hi - lo)
                print(f"{name}: {i_lo:,} instructions to {lo:,} states, {i_hi:,} to {hi:,}: "
                      f"{per[name] / 1000:.1f}k a state", flush=True)  # fmt: skip
            print(f"new / old: {per['new'] / per['old']:.3f} instructions per state")
            return
        res: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
        for i in range(a.runs):
            for name, where in (("old", old), ("new", ROOT)):
                cpu, wall, line = timed(where, args if name == "old" else new_args)
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
