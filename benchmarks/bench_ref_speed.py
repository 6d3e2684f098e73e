"""States per CPU-second of serial bfs on controller-ref, two checkouts side by side (issue 56).

Each run is ``python3 -m explorer check controller --config configs/controller-ref.toml --quiet
--json FILE`` (plus ``--max-states N`` and any ``--args``) in a fresh process, in a checkout given
by ``--tree`` (run with ``PYTHONPATH`` set to it, so a ``git worktree`` of another commit runs its
own code); the runs alternate between the trees (A B A B ...) so the machine's load hits both
alike. A run's figure is its distinct states over its CPU seconds (user + system of the whole
process, start-up included, from ``getrusage(RUSAGE_CHILDREN)``); reported: the median per tree
and the median of the pairwise ratios A / B. Each run is appended to ``--results`` (JSON), read
back first, so an interrupted measurement resumes.

Usage (the whole of controller-ref: about 6 CPU-minutes a run)::

    git worktree add /tmp/base 5eb45fd && (cd /tmp/base && python3 setup.py build_ext --inplace)
    python3 -m benchmarks.bench_ref_speed --tree /tmp/base --runs 3 --results /tmp/ref-speed.json
    python3 -m benchmarks.bench_ref_speed --tree /tmp/base --runs 3 --max-states 300000 --results /tmp/ref-300k.json
    # one tree, incremental property checking on (A) and off (B, KAFKA_MC_FULL_CHECK=1)
    python3 -m benchmarks.bench_ref_speed --tree . --env-b KAFKA_MC_FULL_CHECK=1 --max-states 300000 --results /tmp/inc.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import median

ROOT = Path(__file__).resolve().parent.parent


def one_run(tree: Path, extra: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """One check in ``tree`` (with ``env`` added to the environment): distinct states, CPU
    seconds, states per CPU-second, exit code."""
    with tempfile.TemporaryDirectory(prefix="kafka-mc-bench-ref-") as tmp:
        out = Path(tmp) / "r.json"
        cmd = [
            sys.executable,
            "-m",
            "explorer",
            "check",
            "controller",
            "--config",
            "configs/controller-ref.toml",
        ]
        cmd += ["--quiet", "--json", str(out), *extra]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(
            cmd,
            cwd=tree,
            env=dict(os.environ, PYTHONPATH=str(tree), **(env or {})),
            capture_output=True,
            text=True,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        doc = json.loads(out.read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    states = int(doc["distinct_states"])
    return {"exit": p.returncode, "states": states, "cpu": cpu, "rate": states / cpu}


def main(argv: list[str] | None = None) -> None:
    """Alternate runs of this checkout (A) and ``--tree`` (B); print medians and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="checkout B (the baseline)")
    ap.add_argument("--this", default=str(ROOT), help="checkout A (default: this one)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-states", type=int, default=None)
    ap.add_argument("--args", default="", help="more check options for both (one shell-quoted string)")
    ap.add_argument("--results", default="ref-speed.json")
    ap.add_argument(
        "--env-b",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set in B's environment only, e.g. KAFKA_MC_FULL_CHECK=1 with --tree . (incremental "
        "property checking off: the same tree side by side with and without it)",
    )
    a = ap.parse_args(argv)
    env_b = dict(kv.split("=", 1) for kv in a.env_b)
    extra = shlex.split(a.args) + ([] if a.max_states is None else ["--max-states", str(a.max_states)])
    path = Path(a.results)
    runs: list[dict[str, Any]] = json.loads(path.read_text()) if path.exists() else []
    trees = {"A": Path(a.this).resolve(), "B": Path(a.tree).resolve()}
    while min(sum(1 for r in runs if r["side"] == s) for s in trees) < a.runs:
        for side, tree in trees.items():
            if sum(1 for r in runs if r["side"] == side) < a.runs:
                env = env_b if side == "B" else {}
                r = one_run(tree, extra, env)
                r.update(side=side, tree=str(tree), args=extra, env=env)
                runs.append(r)
                path.write_text(json.dumps(runs, indent=1))
                print(
                    f"{side} {tree}: {r['states']:,} states in {r['cpu']:.1f} CPU-s = {r['rate']:,.0f}/CPU-s",
                    flush=True,
                )
    rate = {s: [r["rate"] for r in runs if r["side"] == s] for s in trees}
    pairs = [x / y for x, y in zip(rate["A"], rate["B"], strict=False)]
    for s, tree in trees.items():
        print(f"{s} ({tree}): median {median(rate[s]):,.0f} states per CPU-second over {len(rate[s])} runs")
    print(f"A / B: median ratio {median(pairs):.3f} over {len(pairs)} pairs")


if __name__ == "__main__":
    main()
