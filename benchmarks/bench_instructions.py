"""Instructions per state of serial bfs on controller-ref, two checkouts side by side (issue 56),
counted by valgrind's callgrind: a figure the machine's load does not move.

On this shared 2-vCPU machine CPU seconds move with the load (the second hyperthread's work
slows the first's), so a side-by-side ratio of CPU seconds needs many runs. Callgrind counts the
instructions the process executes instead, whatever else runs: the same binary and input give
the same count within about 0.2% (string hashes are randomised per process; the runs here set
``PYTHONHASHSEED=0``, which leaves only the environment's own variation). The figure is per
state of the search proper: a run of ``--max-states N`` minus a run of ``--max-states 1`` (the interpreter's start-up, the imports
and the configuration), divided by ``N - 1``. An instruction is not a nanosecond (cache misses,
branch mispredictions and the allocator's page faults are not counted), so quote it beside a
CPU-second ratio, not instead of one.

Each run is ``valgrind --tool=callgrind python3 -m explorer check controller --config
configs/controller-ref.toml --quiet --max-states N [ARGS]`` in the checkout (with ``PYTHONPATH``
set to it); valgrind runs the interpreter about 50 times slower, so N = 20,000 takes some
minutes. Results are appended to ``--results`` (JSON) and read back first: an interrupted
measurement resumes.

Usage::

    python3 -m benchmarks.bench_instructions --tree /tmp/base --states 20000 --results /tmp/ir.json
    python3 -m benchmarks.bench_instructions --tree . --env-b KAFKA_MC_FULL_CHECK=1 --results /tmp/ir-inc.json
    python3 -m benchmarks.bench_instructions --tree /tmp/base --args "--visited fingerprints" --results /tmp/ir-fp.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions(tree: Path, states: int, extra: list[str], env: dict[str, str]) -> int:
    """The instructions callgrind counted for one check of ``states`` states in ``tree``."""
    exe = os.path.realpath(sys.executable)  # not a pyenv shim: valgrind must see the interpreter
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", exe, "-m", "explorer"]
    cmd += ["check", "controller", "--config", "configs/controller-ref.toml", "--quiet"]
    cmd += ["--max-states", str(states), *extra]
    p = subprocess.run(
        cmd,
        cwd=tree,
        env=dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0", **env),
        capture_output=True,
        text=True,
    )
    m = COLLECTED.search(p.stderr)
    if m is None:
        raise SystemExit(f"callgrind printed no count for {tree} (exit {p.returncode}): {p.stderr[-300:]}")
    return int(m.group(1))


def main(argv: list[str] | None = None) -> None:
    """Count both trees' start-up and search; print instructions per state and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="checkout B (the baseline)")
    ap.add_argument("--this", default=str(ROOT), help="checkout A (default: this one)")
    ap.add_argument("--states", type=int, default=20_000)
    ap.add_argument("--args", default="", help="more check options for both (one shell-quoted string)")
    ap.add_argument(
        "--env-b", action="append", default=[], metavar="KEY=VALUE", help="set in B's environment only"
    )
    ap.add_argument("--results", default="instructions.json")
    a = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    env_b = dict(kv.split("=", 1) for kv in a.env_b)
    extra = shlex.split(a.args)
    path = Path(a.results)
    done: dict[str, int] = json.loads(path.read_text()) if path.exists() else {}
    trees = {"A": Path(a.this).resolve(), "B": Path(a.tree).resolve()}
    per_state: dict[str, float] = {}
    for side, tree in trees.items():
        for n in (1, a.states):
            key = f"{side} {tree} {n} {shlex.join(extra)} {env_b if side == 'B' else {}}"
            if key not in done:
                done[key] = instructions(tree, n, extra, env_b if side == "B" else {})
                path.write_text(json.dumps(done, indent=1))
            print(f"{side} {tree} --max-states {n}: {done[key]:,} instructions", flush=True)
        start = done[f"{side} {tree} 1 {shlex.join(extra)} {env_b if side == 'B' else {}}"]
        whole = done[f"{side} {tree} {a.states} {shlex.join(extra)} {env_b if side == 'B' else {}}"]
        per_state[side] = (whole - start) / (a.states - 1)
        print(f"{side}: {per_state[side]:,.0f} instructions a state (the search proper)", flush=True)
    print(
        f"B / A: {per_state['B'] / per_state['A']:.3f} (A executes that many times fewer instructions a state)"
    )


if __name__ == "__main__":
    main()
