"""Project a whole spark run on k cores from a measured prefix (issue 18, item 4).

``bench_spark --max-states N --json prefix.json`` measures the first N states of a
configuration on ``local[2]``: per Spark level its executor CPU, slowest partition, block
bytes and driver seconds (``spark-profile.json``), and the fixed cost of a level (the
60-level chain). This script scales the prefix's per-state costs to a whole run of
``--states`` distinct states over ``--levels`` Spark levels (both known from a complete
``bfs`` / ``--workers`` run, for example the deep configuration's 77,166,067 states and 70
levels, docs/scale.md) with the model of docs/spark.md:

    T(k) = before + L * f + c * n / k * u + b * n * (k - 1) / k / W + d * n

``before``: the session start and the driver's levels (measured); ``L``: Spark levels,
``f``: the fixed cost of one; ``c``: executor CPU per new state, ``u``: the imbalance
(slowest partition over the mean, weighted by CPU); ``b``: block bytes crossing the shuffle
per new state, ``W`` = 125 MB/s; ``d``: driver seconds per new state (winners, level
file, broadcast). It assumes the whole run costs per state what its prefix did: wider
levels amortise the fixed costs better, and a larger visited set makes each lookup
slightly dearer, so read it as an estimate, within a few tens of percent.

Usage::

    python -m benchmarks.bench_spark --config configs/controller-deep.toml --max-states 2000000 \\
        --skip workers2 --json deep-prefix.json
    python -m benchmarks.project_spark deep-prefix.json --states 77166067 --levels 70
"""

from __future__ import annotations

import argparse
import json
from typing import Any

W = 125e6  # bytes a second between executors (1 Gbit/s), as in bench_spark.project


def per_state(profile: list[dict[str, Any]]) -> dict[str, float]:
    """The prefix's per-new-state costs over its Spark levels.

    >>> p = [{"new": 10, "executor_cpu": 2.0, "max_partition_cpu": 1.2, "block_bytes": 1000,
    ...       "driver_seconds": 0.5}]
    >>> c = per_state(p)
    >>> c["cpu"], c["imbalance"], c["bytes"], c["driver"]
    (0.2, 1.2, 100.0, 0.05)
    """
    new = sum(p["new"] for p in profile)
    cpu = sum(p["executor_cpu"] for p in profile)
    imb = sum(
        max(p["max_partition_cpu"] / (p["executor_cpu"] / 2), 1.0) * p["executor_cpu"]
        for p in profile
        if p["executor_cpu"] > 0
    )
    return {
        "cpu": cpu / new,
        "imbalance": round(imb / cpu, 4) if cpu else 1.0,
        "bytes": sum(p["block_bytes"] for p in profile) / new,
        "driver": sum(p["driver_seconds"] for p in profile) / new,
    }


def project_whole(
    costs: dict[str, float], before: float, fixed: float, states: int, levels: int, cores: int
) -> float:
    """Seconds of a whole run of ``states`` over ``levels`` Spark levels on ``cores`` cores.

    >>> round(project_whole({"cpu": 1e-4, "imbalance": 1.0, "bytes": 0.0, "driver": 0.0}, 5.0, 0.1, 10**6, 10, 4), 2)
    31.0
    """
    t = before + levels * fixed + costs["cpu"] * states / cores * costs["imbalance"]
    return t + costs["bytes"] * states * (cores - 1) / cores / W + costs["driver"] * states


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("prefix", help="the --json output of bench_spark on a prefix")
    ap.add_argument("--states", type=int, required=True, help="distinct states of the whole run")
    ap.add_argument("--levels", type=int, required=True, help="levels of the whole run (depth + 1)")
    ap.add_argument(
        "--keep-last",
        action="store_true",
        help="keep the prefix's last Spark level (by default left out: --max-states cut it, and its "
        "driver seconds include the re-count of the cut level)",
    )
    args = ap.parse_args()
    with open(args.prefix) as fh:
        doc = json.load(fh)
    r0 = doc["runs"]["spark"][0]
    prof = r0["profile"]
    fixed = doc["per_level"]
    before = r0["total"] - sum(p["job_seconds"] + p["driver_seconds"] for p in prof)
    driver_levels = r0["depth"] + 1 - len(prof)
    spark_levels = max(args.levels - driver_levels, 0)
    c = per_state(prof if args.keep_last or len(prof) < 2 else prof[:-1])
    print(
        f"prefix: {r0['distinct']:,} states, {len(prof)} Spark levels ({'all' if args.keep_last else 'the last left out'}), "
        f"{before:.1f} s before them; executor CPU "
        f"{c['cpu'] * 1e6:.1f} us, {c['bytes']:.0f} block bytes, {c['driver'] * 1e6:.1f} us of driver a new state; "
        f"imbalance {c['imbalance']:.3f}; fixed cost of a level {fixed:.3f} s"
    )
    if "bfs" in doc["runs"]:
        b = doc["runs"]["bfs"][0]
        print(f"serial bfs on the prefix: {b['cpu'] / b['distinct'] * 1e6:.1f} us CPU a state")
    print(f"whole run: {args.states:,} states, {spark_levels} Spark levels")
    for k in (2, 4, 16, 64):
        print(f"  {k:3d} cores: {project_whole(c, before, fixed, args.states, spark_levels, k):9.0f} s")


if __name__ == "__main__":
    main()
