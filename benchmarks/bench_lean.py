"""Today's serial bfs (a dict of states) vs the lean bfs (``--visited fingerprints``), side by side.

Each run is a fresh interpreter (so peak RSS is its own); runs alternate (bfs, lean, bfs,
...) so load from other users of the machine hits both alike. Reported per engine: the
median states/s, peak RSS (``ru_maxrss``), bytes per state (peak RSS over distinct states,
and the same net of the interpreter's RSS before the search), the fingerprint table's bytes
per state (lean), and the ratio lean / bfs of the rates.

Usage::

    python -m benchmarks.bench_lean [--config configs/controller-ref.toml] [--model controller]
        [--max-states 1000000] [--runs 3] [--toy] [--frontier-batch N]

``--toy`` measures ``tests.toys.Grid(1500)`` (2.25M states, tiny states) instead.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from benchmarks.common import RSS_PRELUDE, median, run_child

_CHILD = (
    RSS_PRELUDE
    + """
import time
from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from explorer.engines.bfs import check_lean
from explorer.frontend import model_spec
from tests.toys import Grid
toy, model, path, max_states, lean = {toy!r}, {model!r}, {path!r}, {max_states!r}, {lean!r}
lean_kw = {lean_kw!r}
if toy:
    system = Grid(1500)
    props = []
else:
    spec = model_spec(model)
    c = load_config(spec.config_cls, path, [])
    system, props = spec.build(c), list(spec.properties(c))
base = rss_kib()
t0, c0 = time.perf_counter(), time.process_time()
if lean:
    r = check_lean(system, props, max_states=max_states, **lean_kw)
else:
    r = check_bfs(system, props, max_states=max_states)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({{"distinct": r.distinct_states, "wall": wall, "cpu": cpu, "peak_kib": peak_kib(), "base_kib": base}}))
"""
)


def one(
    toy: bool, model: str, path: str, max_states: int | None, lean: bool, lean_kw: dict[str, Any]
) -> dict[str, float]:
    """One run in a fresh interpreter: distinct states, wall and CPU seconds, peak and base RSS (KiB)."""
    code = _CHILD.format(toy=toy, model=model, path=path, max_states=max_states, lean=lean, lean_kw=lean_kw)
    return run_child(code)


def table_bytes_per_state(n: int) -> float:
    """Bytes per state of a fingerprint table that grew (by half, at 4/5 full) to hold ``n``.

    >>> 10 <= table_bytes_per_state(1_000_000) <= 15
    True
    """
    cap = 1024
    while n > cap - cap // 5:
        cap += cap // 2
    return 8 * cap / n


def main(argv: list[str] | None = None) -> None:
    """Run the comparison and print one line per engine and the ratio (and a JSON summary)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="controller")
    ap.add_argument("--config", default="configs/controller-ref.toml")
    ap.add_argument("--max-states", type=int, default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--toy", action="store_true")
    ap.add_argument("--frontier-batch", type=int, default=None, help="the lean run's --frontier-batch")
    a = ap.parse_args(argv)
    lean_kw = {} if a.frontier_batch is None else {"frontier_batch": a.frontier_batch}
    rows: dict[str, list[dict[str, float]]] = {"bfs": [], "lean": []}
    for _ in range(a.runs):
        for name in ("bfs", "lean"):
            rows[name].append(one(a.toy, a.model, a.config, a.max_states, name == "lean", lean_kw))
    summary = {}
    for name, rs in rows.items():
        n = rs[0]["distinct"]
        rate = median([r["distinct"] / r["wall"] for r in rs])
        cpu_rate = median([r["distinct"] / r["cpu"] for r in rs])
        peak = median([r["peak_kib"] for r in rs]) * 1024
        net = median([r["peak_kib"] - r["base_kib"] for r in rs]) * 1024
        summary[name] = {
            "distinct": n,
            "states_per_s": round(rate),
            "states_per_cpu_s": round(cpu_rate),
            "peak_rss_mb": round(peak / 1e6, 1),
            "bytes_per_state": round(peak / n, 1),
            "net_bytes_per_state": round(net / n, 1),
        }
        extra = f", table {table_bytes_per_state(n):.1f} B/state" if name == "lean" else ""
        print(
            f"{name:5} {n:,} states  {rate:,.0f} states/s ({cpu_rate:,.0f} per CPU s)  peak RSS {peak / 1e6:,.0f} MB  "
            f"{peak / n:,.0f} B/state ({net / n:,.0f} net of the interpreter){extra}"
        )
    ratio = summary["lean"]["states_per_s"] / summary["bfs"]["states_per_s"]
    cpu_ratio = summary["lean"]["states_per_cpu_s"] / summary["bfs"]["states_per_cpu_s"]
    print(
        f"lean / bfs states/s: {ratio:.3f} wall, {cpu_ratio:.3f} CPU (median of {a.runs} alternating runs each)"
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
