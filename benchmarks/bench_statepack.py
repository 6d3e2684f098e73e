"""The C state packer (``explorer.search.statepack``) against pickle on sampled states.

Takes the first ``--states`` states of a config in BFS order (default 20,000 of
``configs/controller-ref.toml``; ``--level L`` takes BFS level ``L`` instead, all of
it), then times, on that same list, ``pickle.dumps(states, protocol=5)``,
``pickle.loads``, ``dumps_states`` and ``loads_states``: microseconds per state,
median of ``--runs`` runs (default 5), plus the blob sizes in bytes per state and the
model's own ``successors`` per state for scale. A garbage collection runs before each
timed call and the collector is off during it, for both.

Run: ``python -m benchmarks.bench_statepack [--config F] [--states N | --level L] [--runs 5]``
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import time
from collections.abc import Callable
from typing import Any

import invariants
from benchmarks.common import median
from explorer.config import load_config
from explorer.search import statepack

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sample(system: Any, states: int | None, level: int | None) -> list[Any]:
    """The first ``states`` states in BFS order, or all of BFS level ``level``."""
    front = list(system.init_states())
    out, seen, depth = list(front), set(front), 0
    while front and (level is None or depth < level) and (states is None or len(out) < states):
        nxt = []
        for s in front:
            for _a, t in system.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        out.extend(nxt)
        front, depth = nxt, depth + 1
    return front if level is not None else out[:states]


def per_state_us(f: Callable[[], Any], n: int, runs: int) -> float:
    """Median over ``runs`` of one call of ``f``, in microseconds per state."""
    times = []
    for _ in range(runs):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        finally:
            gc.enable()
    return median(times) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "controller-ref.toml"))
    ap.add_argument("--model", help="the model of --config when its name is not <model>-ref.toml")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--states", type=int, default=20_000)
    g.add_argument("--level", type=int)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    base = os.path.basename(args.config)
    name = args.model or (base[: -len("-ref.toml")] if base.endswith("-ref.toml") else base.split(".")[0])
    spec = invariants.get_model(name)
    system = spec.build(load_config(spec.config_cls, args.config, []))
    states = sample(system, None if args.level is not None else args.states, args.level)
    n = len(states)
    what = f"BFS level {args.level}" if args.level is not None else f"first {n:,} states"
    print(f"{os.path.relpath(args.config, ROOT)}, {what} ({n:,} states); C packer active: {statepack.ACTIVE}")
    blob_p = pickle.dumps(states, protocol=5)
    blob_s = statepack.dumps_states(states)
    assert statepack.loads_states(blob_s) == states
    rows = {
        "pickle.dumps": per_state_us(lambda: pickle.dumps(states, protocol=5), n, args.runs),
        "pickle.loads": per_state_us(lambda: pickle.loads(blob_p), n, args.runs),
        "dumps_states": per_state_us(lambda: statepack.dumps_states(states), n, args.runs),
        "loads_states": per_state_us(lambda: statepack.loads_states(blob_s), n, args.runs),
        "successors": per_state_us(lambda: [list(system.successors(s)) for s in states], n, args.runs),
    }
    for k, v in rows.items():
        print(f"  {k:13} {v:7.2f} us a state")
    print(
        f"  pack {rows['pickle.dumps'] / rows['dumps_states']:.1f}x faster than pickle, "
        f"unpack {rows['pickle.loads'] / rows['loads_states']:.1f}x; "
        f"bytes a state: pickle {len(blob_p) / n:.1f}, statepack {len(blob_s) / n:.1f}"
    )


if __name__ == "__main__":
    main()
