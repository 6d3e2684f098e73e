"""The spark engine (``local[2]``) against bfs on the largest reference configuration.

Picks the ``configs/*-ref.toml`` with the most distinct states (or ``--config``),
then runs, each in a fresh process and alternating, ``--runs`` times (default 3):
bfs; spark with the default hybrid (small levels in the driver); and spark with every
level on Spark (``local_frontier=0``). The Spark session is started before the clock
starts (its start-up time is printed apart). Prints medians side by side, the ratios,
the fixed cost of one Spark level (a 60-level chain of single states), and each
engine's peak driver memory (the Python process; Spark's JVM is a separate process).
Target: spark local[2] at least 1.6x faster than bfs.

Also prints what one state costs in one process (successors, fingerprints of its
successors, pickling), which bounds what Spark can gain: bfs pays only the first.

Run: ``python -m benchmarks.bench_spark [--runs 3] [--config configs/x-ref.toml] [--set k=v ...]
[--max-states N]``
"""

from __future__ import annotations

import argparse
import glob
import json
import os
from typing import Any

from benchmarks.common import RSS_PRELUDE, median, run_child

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LOAD = """
import sys, time
sys.path.insert(0, __ROOT__)
import invariants
from explorer.config import load_config
path, overrides = __PATH__, __SETS__
name = path.split("/")[-1][: -len("-ref.toml")] if path.endswith("-ref.toml") else __NAME__
spec = invariants.get_model(name)
config = load_config(spec.config_cls, path, overrides)
system, props = spec.build(config), spec.properties(config)
"""

BFS = """
from explorer.engines.bfs import check_bfs
r = check_bfs(system, props, keep_going=True, max_states=__MAX__)
print(json.dumps({"seconds": r.seconds, "distinct": r.distinct_states, "generated": r.generated_states,
                  "depth": r.max_depth, "peak_kib": peak_kib()}))
"""

SPARK = """
from explorer.engines.spark import check_spark, spark_session
t0 = time.perf_counter()
spark = spark_session("local[2]", conf={"spark.driver.memory": "4g"})
spark.sparkContext.parallelize([1, 2], 2).count()  # executors' Python workers up
startup = time.perf_counter() - t0
r = check_spark(system, props, keep_going=True, spark=spark, local_frontier=__LF__, max_states=__MAX__)
print(json.dumps({"seconds": r.seconds, "distinct": r.distinct_states, "generated": r.generated_states,
                  "depth": r.max_depth, "peak_kib": peak_kib(), "startup": startup, "note": r.notes[-1]}))
spark.stop()
"""

CHAIN = """
import sys, time
sys.path.insert(0, __ROOT__)
from explorer.core import always
from explorer.engines.spark import check_spark, spark_session
class Chain:
    def init_states(self): return [0]
    def successors(self, s): return [("step", s + 1)] if s < 60 else []
    def is_terminal(self, s): return True
spark = spark_session("local[2]")
check_spark(Chain(), [], spark=spark, local_frontier=0, max_depth=3)  # warm up
r = check_spark(Chain(), [always("any", lambda s: True, "")], spark=spark, local_frontier=0)
spark_levels = len(r.levels) - 1
print(json.dumps({"seconds": r.seconds, "levels": spark_levels, "peak_kib": peak_kib()}))
spark.stop()
"""


COSTS = """
import pickle
from explorer.engines.spark import state_fingerprint
sample, seen, front = [], set(), list(system.init_states())
while front and len(sample) < 20_000:
    nxt = []
    for s in front:
        for _a, t in system.successors(s):
            if t not in seen:
                seen.add(t)
                nxt.append(t)
                sample.append(t)
    front = nxt
sample = sample[:20_000]
def per_state(f):
    t0 = time.perf_counter()
    f()
    return (time.perf_counter() - t0) / len(sample) * 1e6
succ = [t for s in sample for _a, t in system.successors(s)]
blob = pickle.dumps(sample, protocol=5)
print(json.dumps({
    "states": len(sample),
    "successors_per_state": len(succ) / len(sample),
    "successors_us": per_state(lambda: [list(system.successors(s)) for s in sample]),
    "fingerprint_us_per_successor": per_state(lambda: [state_fingerprint(t) for t in succ[: len(sample)]]),
    "pickle_us": per_state(lambda: pickle.dumps(sample, protocol=5)),
    "unpickle_us": per_state(lambda: pickle.loads(blob)),
    "bytes_per_state": len(blob) / len(sample),
}))
"""


def _code(
    template: str, path: str, sets: list[str], name: str, lf: int = 10_000, cap: int | None = None
) -> str:
    return (
        RSS_PRELUDE
        + LOAD.replace("__ROOT__", repr(ROOT))
        .replace("__PATH__", repr(path))
        .replace("__SETS__", repr(sets))
        .replace("__NAME__", repr(name))
        + template.replace("__LF__", str(lf)).replace("__MAX__", repr(cap))
    )


def pick_reference() -> tuple[str, int]:
    """The ref configuration with the most distinct states (one bfs run each)."""
    best = ("", -1)
    for path in sorted(glob.glob(os.path.join(ROOT, "configs", "*-ref.toml"))):
        name = os.path.basename(path)[: -len("-ref.toml")]
        try:
            got = run_child(_code(BFS, path, [], name))
        except Exception as e:  # a model not registered (yet)
            print(f"  skipped {os.path.basename(path)}: {type(e).__name__}")
            continue
        print(f"  {os.path.basename(path)}: {got['distinct']:,} distinct states, bfs {got['seconds']:.2f} s")
        if got["distinct"] > best[1]:
            best = (path, got["distinct"])
    return best


def main() -> None:
    """Print the medians, ratios, per-level cost and peak memory."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--config", help="a configuration file instead of the largest ref")
    ap.add_argument("--model", help="the model of --config when its name is not <model>-ref.toml")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    ap.add_argument("--max-states", type=int, help="stop both engines at this many distinct states")
    args = ap.parse_args()
    cap = args.max_states
    if args.config:
        path = os.path.abspath(args.config)
    else:
        print("reference configurations:")
        path, _ = pick_reference()
    name = args.model or os.path.basename(path)[: -len("-ref.toml")]
    print(
        f"benchmark: {os.path.relpath(path, ROOT)} {' '.join(args.set)}"
        + (f" (first {cap:,} states)" if cap else "")
    )
    costs = run_child(_code(COSTS, path, args.set, name))
    print(
        "CPU per state, one process ({states:,} sampled states): successors {successors_us:.1f} us "
        "({successors_per_state:.2f} successors); fingerprint {fingerprint_us_per_successor:.1f} us per "
        "successor; pickle {pickle_us:.1f} us, unpickle {unpickle_us:.1f} us ({bytes_per_state:.0f} bytes)".format(
            **costs
        )
    )
    runs: dict[str, list[dict[str, Any]]] = {"bfs": [], "spark": [], "spark-all": []}
    for _ in range(args.runs):
        runs["bfs"].append(run_child(_code(BFS, path, args.set, name, cap=cap)))
        runs["spark"].append(run_child(_code(SPARK, path, args.set, name, 10_000, cap)))
        runs["spark-all"].append(run_child(_code(SPARK, path, args.set, name, 0, cap)))
    first = runs["bfs"][0]
    for label, rs in runs.items():
        for r in rs:
            assert (r["distinct"], r["generated"], r["depth"]) == (
                first["distinct"],
                first["generated"],
                first["depth"],
            ), (label, r, first)
    print(f"{first['distinct']:,} distinct states, {first['generated']:,} generated, depth {first['depth']}")
    med = {k: median([r["seconds"] for r in rs]) for k, rs in runs.items()}
    for label, rs in runs.items():
        secs = [round(r["seconds"], 2) for r in rs]
        peak = max(r["peak_kib"] for r in rs) / 1024
        extra = ""
        if "startup" in rs[0]:
            extra = f"  (+ session start {median([r['startup'] for r in rs]):.1f} s; {rs[0]['note']})"
        print(f"{label:<10} median {med[label]:7.2f} s  runs {secs}  driver peak {peak:,.0f} MiB{extra}")
    print(f"speed-up spark (hybrid) vs bfs: {med['bfs'] / med['spark']:.2f}x  (target >= 1.6x)")
    print(f"speed-up spark (all levels on Spark) vs bfs: {med['bfs'] / med['spark-all']:.2f}x")
    chain = [run_child(RSS_PRELUDE + CHAIN.replace("__ROOT__", repr(ROOT))) for _ in range(args.runs)]
    per_level = median([c["seconds"] / c["levels"] for c in chain])
    print(f"fixed cost of one Spark level (60-level chain, local[2]): {per_level:.3f} s")
    print(json.dumps({"medians": med, "per_level": per_level}))


if __name__ == "__main__":
    main()
