"""The bfs engine against SPIN on the same toy system: CPU seconds per state (issue 56).

The toy is ``benchmarks/bench_engine.py``'s: four counters in 0..K-1 starting at (0,0,0,0);
each step moves one counter up by 1 or 2 (mod K): 8 successors a state, K**4 states, the
invariant "the counters' sum is nonnegative" checked on each. SPIN's model is
``benchmarks/spin/toy.pml`` (one process, a ``do`` loop of 8 ``d_step`` options, each asserting
the invariant after its step), so SPIN stores exactly K**4 states; the script checks that both
sides count K**4.

SPIN's verifier is generated (``spin -DK=K -a toy.pml``) and compiled once, outside the timing,
with ``gcc -O2 -DSAFETY -DNOREDUCE -DNOCLAIM`` (safety only, no partial-order reduction, no
never claim), once depth-first (pan's default, run with ``-m`` just above K**4 so the DFS stack
holds the whole search) and once with ``-DBFS`` (breadth-first, like the engine). The engine
runs ``explorer.engines.bfs.check_bfs`` on the Python toy in a fresh interpreter. A run's CPU
is user + system of the whole child process from ``getrusage(RUSAGE_CHILDREN)``: for the engine
that includes the interpreter's start-up and imports; the engine's own ``r.seconds`` (the
search's wall time) is reported too. Runs alternate (SPIN DFS, SPIN BFS, engine, SPIN DFS, ...)
``--runs`` times so the machine's load hits all alike; printed: every run, the medians, states
per CPU-second, and the ratio engine CPU per state / SPIN CPU per state (issue 56's target:
<= 3).

Run: ``python3 -m benchmarks.bench_spin --k 40 --runs 3`` (needs ``spin`` and ``gcc`` on PATH;
K=40 is 2,560,000 states: about 20 CPU-seconds and 0.5 GB for the engine a run).
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
from pathlib import Path
from typing import Any

from benchmarks.common import median

PML = Path(__file__).resolve().parent / "spin" / "toy.pml"
ROOT = Path(__file__).resolve().parent.parent
CFLAGS = ["-O2", "-DSAFETY", "-DNOREDUCE", "-DNOCLAIM"]

ENGINE = """
from typing import NamedTuple
class Move(NamedTuple):
    i: int
    def __str__(self): return f"counter {self.i} moves"
class Toy:
    # four counters in 0..K-1; each step moves one counter up by 1 or 2 (mod K)
    def __init__(self, k): self.k = k
    def init_states(self): return [(0, 0, 0, 0)]
    def successors(self, s):
        k = self.k
        out = []
        for i in range(4):
            for d in (1, 2):
                t = list(s); t[i] = (t[i] + d) % k
                out.append((Move(i), tuple(t)))
        return out
import json
from explorer.engines.bfs import check_bfs
from explorer.core import always
toy = Toy(__K__)
r = check_bfs(toy, [always("nonneg", lambda s: s[0] + s[1] + s[2] + s[3] >= 0, "")])
print(json.dumps({"seconds": r.seconds, "states": r.distinct_states}))
"""


def timed(cmd: list[str], cwd: Path | None = None) -> tuple[str, float]:
    """Run ``cmd``; its stdout and the CPU seconds (user + system) of the child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed (exit {p.returncode}): {p.stderr.strip() or p.stdout[-500:]}")
    return p.stdout, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build_pan(tmp: Path, k: int) -> dict[str, Path]:
    """Generate SPIN's verifier for the toy with counters mod ``k`` and compile it, depth-first
    and breadth-first; the two executables by mode."""
    shutil.copy(PML, tmp / "toy.pml")
    subprocess.run(["spin", f"-DK={k}", "-a", "toy.pml"], cwd=tmp, check=True, capture_output=True)
    exes = {}
    for mode, extra in (("dfs", []), ("bfs", ["-DBFS"])):
        exe = tmp / f"pan_{mode}"
        subprocess.run(["gcc", *CFLAGS, *extra, "-o", str(exe), "pan.c"], cwd=tmp, check=True)
        exes[mode] = exe
    return exes


def run_pan(exe: Path, mode: str, k: int) -> dict[str, Any]:
    """One SPIN search: states stored, CPU seconds, pan's own elapsed time."""
    args = [f"-m{k**4 + 1000}"] if mode == "dfs" else []
    out, cpu = timed([str(exe), *args], cwd=exe.parent)
    stored = re.search(r"^\s*(\d+) states, stored", out, re.M)
    errors = re.search(r"errors: (\d+)", out)
    elapsed = re.search(r"elapsed time ([\d.e+-]+) seconds", out)
    if stored is None or errors is None or errors.group(1) != "0" or "search depth too small" in out:
        raise SystemExit(f"pan ({mode}): errors, a truncated search or output not understood:\n{out}")
    return {
        "states": int(stored.group(1)),
        "cpu": cpu,
        "seconds": float(elapsed.group(1)) if elapsed else float("nan"),
    }


def run_engine(k: int) -> dict[str, Any]:
    """One engine search in a fresh interpreter: states, CPU seconds, the engine's r.seconds."""
    out, cpu = timed([sys.executable, "-c", ENGINE.replace("__K__", str(k))], cwd=ROOT)
    doc = json.loads(out.strip().splitlines()[-1])
    return {"states": int(doc["states"]), "cpu": cpu, "seconds": float(doc["seconds"])}


def main(argv: list[str] | None = None) -> None:
    """Alternate SPIN (DFS, BFS) and engine runs; print every run, medians and the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", "-k", type=int, default=40, help="counter range: K**4 states (2..255)")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    missing = [t for t in ("spin", "gcc") if shutil.which(t) is None]
    if missing:
        print(
            f"bench_spin: {' and '.join(missing)} not found on PATH (apt-get install spin gcc)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    if not 2 <= a.k <= 255:
        print("bench_spin: --k must be in 2..255 (SPIN's counters are bytes)", file=sys.stderr)
        raise SystemExit(2)
    version = subprocess.run(["spin", "-V"], capture_output=True, text=True).stdout.strip()
    print(f"{version}; pan compiled with gcc {' '.join(CFLAGS)} [-DBFS]; K={a.k}: {a.k**4:,} states")
    print("load average at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    sides = ("spin-dfs", "spin-bfs", "engine")
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in sides}
    with tempfile.TemporaryDirectory(prefix="kafka-mc-bench-spin-") as tmp:
        exes = build_pan(Path(tmp), a.k)
        for i in range(a.runs):
            for side in sides:
                if side == "engine":
                    r = run_engine(a.k)
                else:
                    mode = side.split("-")[1]
                    r = run_pan(exes[mode], mode, a.k)
                if r["states"] != a.k**4:
                    raise SystemExit(f"{side} counted {r['states']:,} states, not K**4 = {a.k**4:,}")
                runs[side].append(r)
                print(
                    f"run {i + 1} {side:8}: {r['states']:,} states, {r['cpu']:.3f} CPU-s "
                    f"({r['states'] / r['cpu']:,.0f}/CPU-s), own timer {r['seconds']:.3f} s",
                    flush=True,
                )
    print("load average at end:   {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    states = a.k**4
    cpu = {s: median([r["cpu"] for r in runs[s]]) for s in sides}
    own = {s: median([r["seconds"] for r in runs[s]]) for s in sides}
    for s in sides:
        print(
            f"{s:8} median {cpu[s]:.3f} CPU-s = {states / cpu[s]:,.0f} states/CPU-s, "
            f"{1e6 * cpu[s] / states:.3f} CPU-us/state; own timer median {own[s]:.3f} s"
        )
    for s in ("spin-dfs", "spin-bfs"):
        pairs = [e["cpu"] / p["cpu"] for e, p in zip(runs["engine"], runs[s])]
        print(
            f"engine / {s}: CPU per state ratio {cpu['engine'] / cpu[s]:.2f} (target <= 3), "
            f"median of the {len(pairs)} runs' ratios {median(pairs):.2f}; "
            f"engine's r.seconds / pan's elapsed {own['engine'] / own[s]:.2f}"
        )


if __name__ == "__main__":
    main()
