"""The state checks of the serial search with and without incremental checking (issue 56), in
one process on the same states: what skipping the properties whose slices a step left alone
saves per new state.

Explores the first ``--states`` states of a configuration breadth first (default controller-ref,
100,000), keeping each new state with its parent, then times, alternately ``--runs`` times each,
the monitor's full check of every new state (``PropertyMonitor.check_state``, today's path with
``KAFKA_MC_FULL_CHECK=1``) and its incremental check (``check_child``, the default), both over
every property of the configuration (slices declared as ``kafka-mc check`` declares them).
Prints the process CPU per state of each (median), the ratio, and how often each declared
property was evaluated. The whole search's CPU per state is ``bench_ref_speed``'s figure.

Usage::

    python3 -m benchmarks.bench_incremental --states 100000 --runs 3
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from benchmarks.common import median
from explorer.config import load_config
from explorer.core import PropertyKind
from explorer.frontend import model_spec
from explorer.search.incremental import ACTIVE, Slicer
from explorer.search.monitor import PropertyMonitor


def pairs_of(system: Any, limit: int) -> list[tuple[Any, Any]]:
    """(parent, new state) for the first ``limit`` states reached breadth first."""
    init = system.init_states()
    seen = dict.fromkeys(init)
    front, out = list(init), []
    while front and len(seen) < limit:
        nxt = []
        for s in front:
            for _, t in system.successors(s):
                if t not in seen and len(seen) < limit:
                    seen[t] = None
                    nxt.append(t)
                    out.append((s, t))
        front = nxt
    return out


def main(argv: list[str] | None = None) -> None:
    """Time full and incremental state checks on the same states; print medians and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/controller-ref.toml")
    ap.add_argument("--states", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    spec = model_spec("controller")
    cfg = load_config(spec.config_cls, a.config, [])
    system, props = spec.build(cfg), spec.properties(cfg)
    pairs = pairs_of(system, a.states)
    times: dict[str, list[float]] = {"full": [], "incremental": []}
    for _ in range(a.runs):
        for mode in times:
            m = PropertyMonitor(props, keep_going=True)
            for s in system.init_states():
                m.check_state(s, 0)
            t0 = time.process_time()
            if mode == "full":
                for i, (_, t) in enumerate(pairs):
                    m.check_state(t, i)
            else:
                for i, (s, t) in enumerate(pairs):
                    m.check_child(t, i, s)
            times[mode].append((time.process_time() - t0) / len(pairs) * 1e6)
    full, inc = median(times["full"]), median(times["incremental"])
    print(f"{len(pairs):,} new states of {a.config}, masks in {ACTIVE}, medians of {a.runs}:")
    print(
        f"  full checks {full:.2f} us a state, incremental {inc:.2f}: {full / inc:.2f}x, {full - inc:.2f} us saved"
    )
    slicer = Slicer.of(pairs[0][0])
    assert slicer is not None
    changed = [slicer.changed(s, t) for s, t in pairs]
    for p in props:
        if p.kind is PropertyKind.ALWAYS and p.slices is not None:
            mask = slicer.mask(p.slices)
            share = sum(1 for c in changed if c & mask) / len(changed)
            print(f"  {p.name}: evaluated on {share:.0%} of new states")


if __name__ == "__main__":
    main()
