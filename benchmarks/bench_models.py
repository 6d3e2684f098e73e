"""Distinct states per second and memory per visited state, per reference configuration.

Each configuration is checked ``--runs`` times (default 3), each in a fresh process;
the median of seconds and states/s is printed with the peak resident memory the
search added, divided by the number of distinct states (bytes per visited state).

Run: ``python -m benchmarks.bench_models [NAME ...]`` (names like ``timing-wheel-ref``;
default: every ``configs/*-ref.toml`` and ``configs/*-small.toml``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.common import RSS_PRELUDE, median, run_child

ROOT = Path(__file__).resolve().parents[1]

CHILD = (
    RSS_PRELUDE
    + """
from explorer.engines.bfs import check_bfs
from explorer.config import load_config
from invariants import get_model
spec = get_model(__MODEL__)
cfg = load_config(spec.config_cls, __PATH__)
system, props = spec.build(cfg), spec.properties(cfg)
gc.collect()
before = rss_kib()
r = check_bfs(system, props, model=spec.name, config=cfg, keep_going=True)
peak = peak_kib()
print(json.dumps({"states": r.distinct_states, "seconds": r.seconds, "rate": r.states_per_second,
                  "bytes_per_state": (peak - before) * 1024 / max(1, r.distinct_states),
                  "exit": r.exit_reason.value, "violated": sorted(v.property for v in r.violations)}))
"""
)


def model_of(config_name: str) -> str:
    """``timing-wheel-ref`` -> ``timing-wheel``."""
    return config_name.rsplit("-", 1)[0]


def main() -> None:
    """Print one line per configuration."""
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    names = args.names or sorted(p.stem for p in (ROOT / "configs").glob("*-ref.toml"))
    for name in names:
        path = ROOT / "configs" / f"{name}.toml"
        code = CHILD.replace("__MODEL__", json.dumps(model_of(name))).replace(
            "__PATH__", json.dumps(str(path))
        )
        runs = [run_child(code) for _ in range(args.runs)]
        secs = median([r["seconds"] for r in runs])
        rate = median([r["rate"] for r in runs])
        bps = median([r["bytes_per_state"] for r in runs])
        r0 = runs[0]
        print(
            f"{name}: {r0['states']:,} states, {r0['exit']} {r0['violated'] or ''}, median {secs:.2f} s, "
            f"{rate:,.0f} states/s, {bps:,.0f} bytes/state (runs: {[round(r['seconds'], 2) for r in runs]})",
            flush=True,
        )


if __name__ == "__main__":
    main()
