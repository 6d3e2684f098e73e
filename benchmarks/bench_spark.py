"""Serial bfs, ``--workers 2`` and the spark engine (``local[2]``) side by side, with CPU per state.

By default the full ``configs/controller-ref.toml`` (``--max-states N`` for a prefix,
``--config`` for another file). Each engine runs in a fresh process, alternating,
``--runs`` times (default 1: the full run is minutes per engine). Printed per engine:
wall seconds (spark: with the session's start-up, which is also printed apart), CPU
seconds per distinct state, and the ratios to serial bfs.

CPU is measured as

- bfs: the process's own CPU time;
- ``--workers 2``: the driver's plus its forked workers' (``os.times``, children reaped);
- spark: the *executor* CPU, summed over the level tasks by the engine itself
  (``time.process_time`` in each task, ``spark-profile.json``), and the CPU of every
  process under the run (Python workers, daemon, JVM; ``/proc``, reaped children
  included) as a second figure.

Also printed: the fixed cost of one Spark level (a 60-level chain of single states,
median of the per-level ``job + driver`` seconds), what one state costs in one
process (successors, fingerprints, pickling, and the state packer the blocks use), and
the per-level profile of the spark run (frontier, executor CPU, slowest partition,
bytes, driver seconds), which ``docs/spark.md`` projects to more cores. ``--json FILE`` writes everything.

``--one-core`` adds ``spark1``: the spark engine on ``local[1]`` with two partitions, so
its tasks run one at a time: on a machine whose two vCPUs are one physical core, two
concurrent processes each get less done per CPU second, which inflates the CPU per
state of ``local[2]`` and ``--workers 2`` alike. ``--cluster`` adds ``cluster2``: the spark engine against a standalone
cluster on 127.0.0.1 that the benchmark starts (a master and two one-core workers, from
the pyspark package, stopped by PID at the end), and prints it next to the projection
for two cores made from the ``local[2]`` run's profile.

``--engine-session`` lets the engine start the ``local[2]`` session itself, as ``kafka-mc check
--engine spark`` does (in the background, while the driver runs the first levels), instead
of starting it (and its Python workers) before the clock of the search starts; both are in
the wall time.

Run: ``python -m benchmarks.bench_spark [--runs 1] [--max-states N] [--cluster] [--engine-session] [--json out.json]``
(``--skip`` every engine for the one-process costs alone).
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from benchmarks.common import RSS_PRELUDE, median, run_child

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LOAD = """
import os, sys, time, json
sys.path.insert(0, __ROOT__)
import invariants
from explorer.config import load_config
path, overrides, name = __PATH__, __SETS__, __NAME__
spec = invariants.get_model(name)
config = load_config(spec.config_cls, path, overrides)
system, props = spec.build(config), spec.properties(config)
only = __ONLY__
if only:  # --properties: the named ones (deadlock is not a property here)
    props = [p for p in props if p.name in only]
def cpu_self():
    t = os.times()
    return t.user + t.system
def cpu_children():
    t = os.times()
    return t.children_user + t.children_system
CLK = os.sysconf("SC_CLK_TCK")
def cpu_tree():
    # CPU of every process below this one, with the reaped children of each counted
    procs = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                st = open(f"/proc/{d}/stat").read()
            except OSError:
                continue
            f = st[st.rfind(")") + 2 :].split()
            procs[int(d)] = (int(f[1]), sum(int(x) for x in f[11:15]) / CLK)
    me, total = os.getpid(), 0.0
    for p, (pp, cpu) in procs.items():
        q = pp
        while q in procs and q != me:
            q = procs[q][0]
        if q == me and p != me:
            total += cpu
    return total
"""

BFS = """
from explorer.engines.bfs import check_bfs
from explorer.engines.pbfs import check_pbfs
c0, k0 = cpu_self(), cpu_children()
if __WORKERS__ > 1:
    r = check_pbfs(system, props, keep_going=True, max_states=__MAX__, workers=__WORKERS__)
else:
    r = check_bfs(system, props, keep_going=True, max_states=__MAX__)
cpu = cpu_self() - c0 + cpu_children() - k0
print(json.dumps({"seconds": r.seconds, "distinct": r.distinct_states, "generated": r.generated_states,
                  "depth": r.max_depth, "cpu": cpu, "peak_kib": peak_kib()}))
"""

SPARK = """
import tempfile
from explorer.engines.spark import check_spark, spark_session
t0 = time.perf_counter()
master = __MASTER__
conf = {"spark.driver.memory": "4g"}
if master.startswith("spark://"):
    conf.update({"spark.executor.memory": "768m", "spark.driver.host": "127.0.0.1",
                 "spark.driver.bindAddress": "127.0.0.1"})
if __OWN__:  # the engine starts the session itself, as `kafka-mc check --engine spark` does
    spark, startup = None, None
else:
    spark = spark_session(master, conf=conf, executor_wait=120)
    spark.sparkContext.parallelize([1, 2], 2).count()  # executors' Python workers up
    startup = time.perf_counter() - t0
run_dir = tempfile.mkdtemp(prefix="bench-spark-")
c0, t0c = cpu_self(), cpu_tree()
r = check_spark(system, props, keep_going=True, spark=spark, master=master, spark_conf=conf,
                executor_wait=120, local_frontier=__LF__, max_states=__MAX__,
                run_dir=run_dir, partitions=2,
                checkpoint_dir=os.path.join(run_dir, "checkpoints") if master.startswith("spark://") else None)
total = time.perf_counter() - t0
# the JVM and Python workers' CPU, read while they run: a session the engine started and
# stopped itself has taken its Python workers' CPU with it (not measured then)
tree = None if __OWN__ else cpu_tree() - t0c
driver = cpu_self() - c0
prof_path = os.path.join(run_dir, "spark-profile.json")
profile = json.load(open(prof_path)) if os.path.exists(prof_path) else []
print(json.dumps({"seconds": r.seconds, "total": total, "startup": startup, "distinct": r.distinct_states,
                  "generated": r.generated_states, "depth": r.max_depth, "cpu": sum(p["executor_cpu"] for p in profile),
                  "tree_cpu": tree, "driver_cpu": driver, "peak_kib": peak_kib(),
                  "note": [n for n in r.notes if n.startswith("spark:")], "profile": profile}))
if spark is not None:
    spark.stop()
import shutil
shutil.rmtree(run_dir, ignore_errors=True)
"""

CHAIN = """
import sys, time, json, tempfile, os
sys.path.insert(0, __ROOT__)
from explorer.core import always
from explorer.engines.spark import check_spark, spark_session
class Chain:
    def init_states(self): return [0]
    def successors(self, s): return [("step", s + 1)] if s < 60 else []
    def is_terminal(self, s): return True
spark = spark_session("local[2]")
check_spark(Chain(), [], spark=spark, local_frontier=0, max_depth=3)  # warm up
d = tempfile.mkdtemp()
r = check_spark(Chain(), [always("any", lambda s: True, "")], spark=spark, local_frontier=0, run_dir=d)
prof = json.load(open(os.path.join(d, "spark-profile.json")))
per = sorted(p["job_seconds"] + p["driver_seconds"] for p in prof)
print(json.dumps({"seconds": r.seconds, "levels": len(prof), "per_level_median": per[len(per) // 2],
                  "per_level_mean": r.seconds / len(prof)}))
spark.stop()
"""

COSTS = """
import pickle
from explorer.engines.spark import state_fingerprint
from explorer.search.statepack import dumps_states, loads_states
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
import gc
def per_state(f):
    # the collector paused, as in the engines' level tasks (else a full collection lands
    # in whichever call happens to cross the threshold)
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        f()
        return (time.perf_counter() - t0) / len(sample) * 1e6
    finally:
        gc.enable()
succ = [t for s in sample for _a, t in system.successors(s)]
blob = pickle.dumps(sample, protocol=5)
packed = dumps_states(sample)
print(json.dumps({
    "states": len(sample),
    "successors_per_state": len(succ) / len(sample),
    "successors_us": per_state(lambda: [list(system.successors(s)) for s in sample]),
    "fingerprint_us_per_successor": per_state(lambda: [state_fingerprint(t) for t in succ[: len(sample)]]),
    "pickle_us": per_state(lambda: pickle.dumps(sample, protocol=5)),
    "unpickle_us": per_state(lambda: pickle.loads(blob)),
    "bytes_per_state": len(blob) / len(sample),
    "pack_us": per_state(lambda: dumps_states(sample)),
    "unpack_us": per_state(lambda: loads_states(packed)),
    "packed_bytes_per_state": len(packed) / len(sample),
}))
"""


def _code(template: str, path: str, sets: list[str], name: str, **subs: Any) -> str:
    code = (
        RSS_PRELUDE
        + LOAD.replace("__ROOT__", repr(ROOT))
        .replace("__ONLY__", repr(_ONLY))
        .replace("__PATH__", repr(path))
        .replace("__SETS__", repr(sets))
        .replace("__NAME__", repr(name))
        + template
    )
    for k, v in subs.items():
        code = code.replace(f"__{k.upper()}__", repr(v))
    return code


#: ``--properties``: check only these (empty: every property of the configuration)
_ONLY: list[str] = []

NETWORK_BYTES_PER_S = 125e6  # 1 Gbit/s between executors, for the projection


def project(profile: list[dict[str, Any]], before: float, fixed: float, cores: int) -> dict[str, float]:
    """Seconds the Spark levels of ``profile`` would take on ``cores`` cores (one partition each).

    The model: a level costs the fixed cost of a Spark level (``fixed``, measured on the
    60-level chain), plus its executor CPU spread over the cores with the imbalance
    measured (slowest partition / mean partition, at least 1), plus its pickled blocks
    crossing the network ((k-1)/k of them, at ``NETWORK_BYTES_PER_S``, not overlapped),
    plus the driver's own seconds (winners, level file, broadcast), which do not shrink.
    ``before`` is what precedes the Spark levels (session start, driver levels).

    >>> p = [{"executor_cpu": 8.0, "max_partition_cpu": 4.0, "block_bytes": 0, "driver_seconds": 0.5}]
    >>> project(p, 1.0, 0.1, 4)["total"]
    3.6
    """
    parts_measured = 2
    cpu = sum(x["executor_cpu"] for x in profile)
    t = before
    for x in profile:
        mean = x["executor_cpu"] / parts_measured
        imbalance = max(x["max_partition_cpu"] / mean, 1.0) if mean > 0 else 1.0
        t += fixed + x["executor_cpu"] / cores * imbalance
        t += x["block_bytes"] * (cores - 1) / cores / NETWORK_BYTES_PER_S + x["driver_seconds"]
    return {"total": round(t, 2), "executor_cpu": cpu}


def main() -> None:
    """Run the engines alternately and print the side-by-side table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "controller-ref.toml"))
    ap.add_argument("--model", help="the model of --config when its name is not <model>-ref.toml")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    ap.add_argument("--max-states", type=int, help="stop every engine at this many distinct states")
    ap.add_argument("--local-frontier", type=int, default=10_000, help="the spark engine's local_frontier")
    ap.add_argument("--skip", action="append", default=[], choices=["bfs", "workers2", "spark", "chain"])
    ap.add_argument("--cluster", action="store_true", help="also run on a two-worker standalone cluster")
    ap.add_argument(
        "--engine-session",
        action="store_true",
        help="spark local[2]: let the engine start the session (in the background, while the driver "
        "runs the first levels), as `kafka-mc check --engine spark` does, instead of starting it first",
    )
    ap.add_argument(
        "--one-core",
        action="store_true",
        help="also run spark on local[1] (two partitions, one task at a time): executor CPU per state "
        "without two tasks sharing a core",
    )
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument(
        "--properties",
        default="",
        help="check only these (comma-separated), e.g. an older revision's, so properties added since "
        "do not count against the engines",
    )
    args = ap.parse_args()
    _ONLY[:] = [n for n in args.properties.split(",") if n]
    path = os.path.abspath(args.config)
    base = os.path.basename(path)
    name = args.model or (base[: -len("-ref.toml")] if base.endswith("-ref.toml") else base.split(".")[0])
    cap = args.max_states
    print(
        f"benchmark: {os.path.relpath(path, ROOT)} {' '.join(args.set)}"
        + (f" (first {cap:,} states)" if cap else " (full)")
    )
    costs = run_child(_code(COSTS, path, args.set, name))
    print(
        "one process, {states:,} sampled states: successors {successors_us:.1f} us a state "
        "({successors_per_state:.2f} successors); fingerprint {fingerprint_us_per_successor:.1f} us a "
        "successor; pickle {pickle_us:.1f} us, unpickle {unpickle_us:.1f} us a state ({bytes_per_state:.0f} bytes); "
        "statepack (the spark blocks) {pack_us:.1f} us, unpack {unpack_us:.1f} us ({packed_bytes_per_state:.0f} bytes)".format(
            **costs
        )
    )
    engines = {
        "bfs": _code(BFS, path, args.set, name, max=cap, workers=1),
        "workers2": _code(BFS, path, args.set, name, max=cap, workers=2),
        "spark": _code(
            SPARK,
            path,
            args.set,
            name,
            max=cap,
            lf=args.local_frontier,
            master="local[2]",
            own=args.engine_session,
        ),
    }
    engines = {k: v for k, v in engines.items() if k not in args.skip}
    if args.one_core:
        engines["spark1"] = _code(
            SPARK, path, args.set, name, max=cap, lf=args.local_frontier, master="local[1]", own=False
        )
    if not engines and not args.cluster:  # every engine skipped: the one-process costs only
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"costs": costs}, fh, indent=1)
        return
    cluster = None
    if args.cluster:
        import tempfile
        from pathlib import Path

        from tests.test_spark_cluster import Cluster

        cluster = Cluster(Path(tempfile.mkdtemp(prefix="bench-cluster-")))
        cluster.start_master()
        for i in (1, 2):
            cluster.start_worker(f"worker-{i}")
        engines["cluster2"] = _code(
            SPARK, path, args.set, name, max=cap, lf=args.local_frontier, master=cluster.master_url, own=False
        )
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in engines}
    try:
        for _ in range(args.runs):
            for label, code in engines.items():
                runs[label].append(run_child(code))
                r = runs[label][-1]
                print(
                    f"  {label}: {r.get('total', r['seconds']):.1f} s, {r['distinct']:,} states", flush=True
                )
    finally:
        if cluster is not None:
            cluster.stop_all()
    first = next(iter(runs.values()))[0]
    for label, rs in runs.items():
        for r in rs:
            assert (r["distinct"], r["generated"], r["depth"]) == (
                first["distinct"],
                first["generated"],
                first["depth"],
            ), (label, r)
    n = first["distinct"]
    print(f"{n:,} distinct states, {first['generated']:,} generated, depth {first['depth']}")
    out: dict[str, Any] = {"costs": costs, "distinct": n, "runs": runs}
    wall = {k: median([r.get("total", r["seconds"]) for r in rs]) for k, rs in runs.items()}
    cpu = {k: median([r["cpu"] for r in rs]) for k, rs in runs.items()}
    print(f"{'engine':<10} {'wall s':>8} {'vs bfs':>7} {'CPU us/state':>13} {'vs bfs':>7}  notes")
    for label, rs in runs.items():
        note = ""
        if label in ("spark", "spark1", "cluster2"):
            r0 = rs[0]
            starts = [r["startup"] for r in rs if r["startup"] is not None]
            start = (
                f"session start {median(starts):.1f} s included"
                if starts
                else "session started by the engine in the background (included)"
            )
            note = (
                f"{start}; executor CPU in level tasks; "
                + (
                    f"all processes {median([r['tree_cpu'] + r['driver_cpu'] for r in rs]) / n * 1e6:.1f} us/state; "
                    if all(r["tree_cpu"] is not None for r in rs)
                    else "all processes not measured (the engine stopped its own session); "
                )
                + "; ".join(r0["note"])
            )
        elif label == "workers2":
            note = "driver + workers"
        ratio = wall["bfs"] / wall[label] if "bfs" in wall else float("nan")
        cratio = cpu[label] / cpu["bfs"] if "bfs" in cpu else float("nan")
        print(
            f"{label:<10} {wall[label]:8.1f} {ratio:6.2f}x {cpu[label] / n * 1e6:13.1f} {cratio:6.2f}x  {note}"
        )
    if "spark" in runs and runs["spark"][0]["profile"]:
        prof = runs["spark"][0]["profile"]
        print(
            "spark levels (first run): level frontier new cand  exec-CPU  max-part  block-KiB  summ-KiB  job-s  driver-s"
        )
        for p in prof:
            print(
                f"  {p['level']:3d} {p['frontier']:9,d} {p['new']:8,d} {p['candidates']:8,d} {p['executor_cpu']:8.2f} "
                f"{p['max_partition_cpu']:8.2f} {p['block_bytes'] / 1024:9.0f} {p['summary_bytes'] / 1024:8.0f} "
                f"{p['job_seconds']:6.2f} {p['driver_seconds']:6.3f}"
            )
    for label in ("spark", "spark1", "cluster2"):
        prof = runs[label][0]["profile"] if label in runs else []
        new = sum(p["new"] for p in prof)
        if new and all("executor_phases" in p for p in prof):
            ph = [sum(p["executor_phases"][i] for p in prof) / new * 1e6 for i in range(4)]
            print(
                f"{label} executor CPU by phase (us per new state on Spark levels, first run): "
                f"frontier {ph[0]:.1f}, expand {ph[1]:.1f}, check {ph[2]:.1f}, pack {ph[3]:.1f}"
            )
    if "chain" not in args.skip:
        chain = [
            run_child(RSS_PRELUDE + CHAIN.replace("__ROOT__", repr(ROOT))) for _ in range(max(args.runs, 1))
        ]
        per_level = median([c["per_level_median"] for c in chain])
        print(f"fixed cost of one Spark level (60-level chain, local[2], median level): {per_level:.3f} s")
        out["chain"] = chain
        out["per_level"] = per_level
    if "spark" in runs and runs["spark"][0]["profile"] and "per_level" in out:
        r0 = runs["spark"][0]
        prof = r0["profile"]
        spark_levels = sum(p["job_seconds"] + p["driver_seconds"] for p in prof)
        before = r0["total"] - spark_levels  # session start and the driver's levels
        print(
            f"projection (model in docs/spark.md; measured here: {r0['total']:.1f} s on local[2], "
            f"{before:.1f} s of it before the first Spark level):"
        )
        for k in (2, 4, 16, 64):
            pr = project(prof, before, out["per_level"], k)
            print(f"  {k:3d} cores: {pr['total']:8.1f} s")
        out["projection"] = {k: project(prof, before, out["per_level"], k) for k in (2, 4, 16, 64)}
        if "cluster2" in runs:
            measured = median([r["total"] for r in runs["cluster2"]])
            predicted = out["projection"][2]["total"]
            print(
                f"  check: two-worker standalone cluster measured {measured:.1f} s against the two-core "
                f"projection {predicted:.1f} s (measured / projected {measured / predicted:.2f})"
            )
            out["cluster_check"] = {"measured": measured, "projected": predicted}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
