"""Serial bfs vs the multi-process bfs (``--workers``) on the first N states of a config.

Runs alternate (serial, parallel, serial, ...) so that load from other users of the
machine hits both alike; prints the median rates, their ratio, the driver's CPU share
and the workers' load balance. ``--full`` runs the whole configuration once with the
workers instead (controller-ref: 6,525,279 states) and reports time, rate and peak RSS.

Usage::

    python -m benchmarks.bench_pbfs [--states 300000] [--workers 2] [--repeats 3]
    python -m benchmarks.bench_pbfs --full
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from typing import Any

from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from explorer.engines.pbfs import PbfsStats, check_pbfs
from explorer.frontend import model_spec


def build(model: str, path: str) -> tuple[Any, list[Any]]:
    """The system and properties of a model's configuration file."""
    spec = model_spec(model)
    c = load_config(spec.config_cls, path, [])
    return spec.build(c), list(spec.properties(c))


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def run_serial(system: Any, props: list[Any], states: int | None) -> dict[str, float]:
    """One serial bfs run: distinct states, wall seconds, CPU seconds, rate."""
    c0, t0 = _cpu(), time.perf_counter()
    r = check_bfs(system, props, max_states=states)
    wall = time.perf_counter() - t0
    return {"distinct": r.distinct_states, "wall": wall, "cpu": _cpu() - c0, "rate": r.distinct_states / wall}


def run_parallel(system: Any, props: list[Any], states: int | None, workers: int) -> dict[str, Any]:
    """One multi-process run, with its :class:`PbfsStats`."""
    st = PbfsStats()
    t0 = time.perf_counter()
    r = check_pbfs(system, props, workers=workers, max_states=states, stats=st)
    wall = time.perf_counter() - t0
    return {
        "distinct": r.distinct_states,
        "generated": r.generated_states,
        "wall": wall,
        "rate": r.distinct_states / wall,
        "stats": st,
        "exit": r.exit_reason.value,
    }


def capacity(system: Any, props: list[Any], states: int, copies: int) -> float:
    """How much this machine gives ``copies`` CPU-bound processes: the aggregate rate of
    ``copies`` independent serial runs at once over the rate of one alone (the ceiling of
    any multi-process speed-up here, measured now, under the machine's current load)."""
    import multiprocessing

    alone = run_serial(system, props, states)["wall"]
    ctx = multiprocessing.get_context("fork")
    t0 = time.perf_counter()
    procs = [
        ctx.Process(target=check_bfs, args=(system, props), kwargs={"max_states": states})
        for _ in range(copies)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    together = time.perf_counter() - t0
    return copies * alone / together


def describe(st: PbfsStats) -> str:
    """Driver CPU share and the workers' balance of one run."""
    total = st.driver_cpu + sum(st.worker_cpu)
    par = sum(st.parents) or 1
    return (
        f"driver CPU {st.driver_cpu:.1f} s ({100 * st.driver_cpu / total:.0f}% of all CPU), "
        f"workers CPU {[round(c, 1) for c in st.worker_cpu]} s, "
        f"idle waiting for the driver {[round(c, 1) for c in st.worker_waited]} s, "
        f"parents share {[f'{100 * p / par:.0f}%' for p in st.parents]}, forked at depth {st.forked_at_depth}"
    )


def main() -> None:
    """Run the comparison (or the full run) and print the numbers."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="controller")
    ap.add_argument("--config", default="configs/controller-ref.toml")
    ap.add_argument("--states", type=int, default=300_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--full", action="store_true", help="one whole run with the workers")
    ap.add_argument(
        "--capacity-states",
        type=int,
        default=60_000,
        help="states of the capacity probe (independent serial runs side by side; 0: skip)",
    )
    a = ap.parse_args()
    system, props = build(a.model, a.config)
    print(f"load average at start: {os.getloadavg()}")
    if a.full:
        p = run_parallel(system, props, None, a.workers)
        st = p["stats"]
        print(
            f"full {a.config}, {a.workers} workers: {p['exit']}, {p['distinct']:,} distinct, "
            f"{p['generated']:,} generated, {p['wall']:.1f} s, {p['rate']:,.0f} states/s"
        )
        print(describe(st))
        print(
            f"peak RSS: driver {st.driver_rss_kb / 1024:.0f} MiB, "
            f"workers {[round(k / 1024) for k in st.worker_rss_kb]} MiB "
            f"(children max {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB)"
        )
        return
    ser: list[dict[str, float]] = []
    par: list[dict[str, Any]] = []
    for i in range(a.repeats):
        ser.append(run_serial(system, props, a.states))
        par.append(run_parallel(system, props, a.states, a.workers))
        s, p = ser[-1], par[-1]
        assert s["distinct"] == p["distinct"], (s, p)
        print(
            f"round {i + 1}: serial {s['rate']:,.0f}/s ({s['wall']:.1f} s, CPU {s['cpu']:.1f} s), "
            f"{a.workers} workers {p['rate']:,.0f}/s ({p['wall']:.1f} s); {describe(p['stats'])}"
        )
    sr = statistics.median(x["rate"] for x in ser)
    pr = statistics.median(x["rate"] for x in par)
    print(
        f"median over {a.repeats}: serial {sr:,.0f} states/s, {a.workers} workers {pr:,.0f} states/s, ratio {pr / sr:.2f}"
    )
    if a.capacity_states:
        cap = capacity(system, props, a.capacity_states, a.workers)
        print(
            f"machine capacity now: {a.workers} independent serial runs side by side give {cap:.2f}x "
            f"the rate of one (the ceiling of the ratio above)"
        )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
