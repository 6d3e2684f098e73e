"""``--workers 2 --visited fingerprints`` with the workers' states packed and as live objects.

The workers of the multi-process bfs hold their frontier share and the level's candidates;
as live objects that is most of a large run's memory (about 3.6 KB a state of the widest
level on controller-deeper). With ``pack`` they hold them as state-packer blobs. Each run
is a fresh interpreter, alternating; reported: the workers' peak RSS (summed), the
driver's, wall time and CPU per distinct state, and each figure's ratio packed / objects.

Run: ``python -m benchmarks.bench_pack_workers [--config FILE] [--max-depth N] [--runs 2]``
(default: the first 22 levels of ``configs/controller-deep.toml``).
"""

from __future__ import annotations

import argparse
import os

from benchmarks.common import median, run_child

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CODE = """
import json, sys
sys.path.insert(0, __ROOT__)
import invariants.controller as spec
from explorer.config import load_config
from explorer.engines.pbfs import PbfsStats, check_pbfs
from invariants.controller import ControllerConfig
c = load_config(ControllerConfig, __CONFIG__, [])
st = PbfsStats()
r = check_pbfs(spec.build(c), spec.properties(c), workers=2, visited="fingerprints", keep_going=True,
               max_depth=__DEPTH__, pack=__PACK__, stats=st)
print(json.dumps({"distinct": r.distinct_states, "widest": max(lv.new_states for lv in r.levels),
                  "wall": st.wall, "cpu": st.driver_cpu + sum(st.worker_cpu),
                  "workers_kib": sum(st.worker_rss_kb), "driver_kib": st.driver_rss_kb, "packed": st.packed}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "controller-deep.toml"))
    ap.add_argument("--max-depth", type=int, default=22)
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    code = CODE.replace("__ROOT__", repr(ROOT)).replace("__CONFIG__", repr(args.config))
    code = code.replace("__DEPTH__", str(args.max_depth))
    runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for _ in range(args.runs):
        for pack in (False, True):
            r = run_child(code.replace("__PACK__", str(pack)))
            runs[pack].append(r)
            print(f"  pack={pack}: {r['wall']:.1f} s, workers {r['workers_kib'] / 1024:.0f} MiB", flush=True)
    a, b = runs[False][0], runs[True][0]
    assert a["distinct"] == b["distinct"], (a, b)
    print(
        f"{os.path.relpath(args.config, ROOT)}, {args.max_depth} levels: {a['distinct']:,} states, widest level {a['widest']:,}"
    )
    print(
        f"{'':10} {'workers peak':>13} {'B/widest-state':>15} {'driver peak':>12} {'wall s':>8} {'CPU us/state':>13}"
    )
    med = {}
    for pack, rs in runs.items():
        m = {k: median([r[k] for r in rs]) for k in ("workers_kib", "driver_kib", "wall", "cpu")}
        med[pack] = m
        print(
            f"{'packed' if pack else 'objects':10} {m['workers_kib'] / 1024:10.0f} MiB "
            f"{m['workers_kib'] * 1024 / a['widest']:15.0f} {m['driver_kib'] / 1024:8.0f} MiB "
            f"{m['wall']:8.1f} {m['cpu'] / a['distinct'] * 1e6:13.1f}"
        )
    r = {k: med[True][k] / med[False][k] for k in med[True]}
    print(
        f"packed / objects: workers' memory {r['workers_kib']:.2f}x, wall {r['wall']:.2f}x, CPU {r['cpu']:.2f}x "
        f"(medians of {args.runs})"
    )


if __name__ == "__main__":
    main()
