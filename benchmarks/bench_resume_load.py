"""Memory of a resumed ``--workers`` level: a worker loading its frontier share from a snapshot.

A resumed ``--workers N`` run with packed workers (the default with fingerprints) has each
worker read its share of the frontier back from the snapshot (``W<i>.bin`` files of packed
chunks). Unpickling the whole share and packing it afterwards held every state of the share
live at once; :func:`explorer.search.pool.load_share_as` packs chunk by chunk as the
file is read. This benchmark writes one share (the widest level of the first ``--max-depth``
levels of a controller configuration) and loads it in fresh interpreters, alternating: the old
way (``load_share`` then ``PackedStates``) and ``load_share_as``; printed per way: the peak RSS
above the interpreter's RSS before the load (medians), the packed size, seconds, and the
ratio.

Run: ``python -m benchmarks.bench_resume_load [--config FILE] [--max-depth N] [--runs 3]``
(default: the first 19 levels of ``configs/controller-deep.toml``; its widest level, 180,324 states).
"""

from __future__ import annotations

import argparse
import os
import tempfile

from benchmarks.common import RSS_PRELUDE, median, run_child

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WRITE = """
import json, sys
sys.path.insert(0, __ROOT__)
import invariants.controller as spec
from explorer.config import load_config
from explorer.search.pool import dump_share
from invariants.controller import ControllerConfig
c = load_config(ControllerConfig, __CONFIG__, [])
system = spec.build(c)
seen, front, widest = set(), list(system.init_states()), []
for _ in range(__DEPTH__):
    nxt = []
    for s in front:
        for _a, t in system.successors(s):
            if t not in seen:
                seen.add(t)
                nxt.append(t)
    front = nxt
    if len(front) > len(widest):
        widest = front
n = dump_share(__PATH__, widest, list(range(0, 2 * len(widest), 2)))
print(json.dumps({"states": n}))
"""

LOAD = (
    RSS_PRELUDE
    + """
import sys, time
sys.path.insert(0, __ROOT__)
from explorer.search.pool import PackedStates, load_share, load_share_as
gc.collect()
base = rss_kib()
t0 = time.perf_counter()
if __WAY__ == "whole":
    states, ranks = load_share(__PATH__)
    frontier = PackedStates(states, 512)
    del states
else:
    frontier, ranks = load_share_as(__PATH__, True, 512)
secs = time.perf_counter() - t0
print(json.dumps({"extra_kib": peak_kib() - base, "packed_kib": sum(len(b) for b in frontier.blobs) // 1024,
                  "states": len(frontier), "seconds": secs}))
"""
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "controller-deep.toml"))
    ap.add_argument("--max-depth", type=int, default=19)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "W0.bin")
        wrote = run_child(
            WRITE.replace("__ROOT__", repr(ROOT))
            .replace("__CONFIG__", repr(args.config))
            .replace("__DEPTH__", str(args.max_depth))
            .replace("__PATH__", repr(path))
        )
        print(f"share: {wrote['states']:,} states, {os.path.getsize(path) / 2**20:.1f} MiB pickled")
        got: dict[str, list[dict[str, float]]] = {"whole": [], "chunked": []}
        for _ in range(args.runs):
            for way in got:
                code = LOAD.replace("__ROOT__", repr(ROOT)).replace("__PATH__", repr(path))
                got[way].append(run_child(code.replace("__WAY__", repr(way))))
    for way, runs in got.items():
        extra = median([r["extra_kib"] for r in runs]) / 1024
        secs = median([r["seconds"] for r in runs])
        print(
            f"  {way:8s} peak RSS above the interpreter {extra:8.1f} MiB, packed {runs[0]['packed_kib'] / 1024:.1f} MiB,"
            f" {secs:.2f} s (median of {len(runs)})"
        )
    w = median([r["extra_kib"] for r in got["whole"]])
    c = median([r["extra_kib"] for r in got["chunked"]])
    print(f"chunked / whole: memory {c / w:.2f}")


if __name__ == "__main__":
    main()
