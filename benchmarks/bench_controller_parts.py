"""Where a bfs step's time goes on controller-ref: microseconds per generated successor.

Explores controller-ref breadth first (plain ``successors`` and a set) down to
``--depth``, takes ``--parents`` states of that level, and times each part of the
engine's per-successor work on them separately, each the median of ``--runs``:

- the model's ``successors``, and ``successors_labelled`` with label counting;
- the transition properties, unguarded, with their guards (``transition_groups``) and with the
  guards looked up by action type (``TransitionChecks``);
- the state properties (per new state; shown per successor at the measured new-state share);
- ``hash`` of each successor, and inserting it into a dict holding the explored states;
- the model's time per action type (timed around each ``next()`` of its generator).

Run: ``python -m benchmarks.bench_controller_parts [--depth 22] [--parents 60000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from explorer.config import load_config
from explorer.core import PropertyKind, TransitionChecks, transition_groups
from explorer.search import label_counting
from invariants import get_model

ROOT = Path(__file__).resolve().parents[1]


def level_sample(system: Any, depth: int, parents: int) -> tuple[list[Any], set[Any]]:
    """The first ``parents`` states first seen at ``depth``, and every state seen so far."""
    seen = set(system.init_states())
    frontier = list(seen)
    for _ in range(depth):
        nxt = []
        for s in frontier:
            for _a, t in system.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return frontier[:parents], seen


def timed(fn: Callable[[], Any], runs: int) -> float:
    """Median seconds of ``runs`` calls of ``fn``."""
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    """Print the table (µs per generated successor) and the per-action-type split."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, default=22)
    ap.add_argument("--parents", type=int, default=60_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    spec = get_model("controller")
    cfg = load_config(spec.config_cls, str(ROOT / "configs" / "controller-ref.toml"))
    system, props = spec.build(cfg), spec.properties(cfg)
    gc.disable()  # as the engines do during a search
    sample, seen = level_sample(system, args.depth, args.parents)
    edges = [(s, a, t) for s in sample for a, t in system.successors(s)]
    new = {t for _, _, t in edges if t not in seen}
    n = len(edges)
    print(f"depth {args.depth}: {len(sample)} parents, {n} successors, {len(new)} new ({len(new) / n:.0%})")
    trans = [p.check for p in props if p.kind is PropertyKind.TRANSITION]
    groups = transition_groups(props)
    always = [p.check for p in props if p.kind is PropertyKind.ALWAYS]
    new_states = list(new)

    def succ() -> None:
        for s in sample:
            for _ in system.successors(s):
                pass

    def labelled() -> None:
        counted = label_counting(system, {}) or system.successors
        for s in sample:
            for _ in counted(s):
                pass

    def trans_plain() -> None:
        for s, a, t in edges:
            for c in trans:
                c(s, a, t)

    def trans_guarded() -> None:
        for s, a, t in edges:
            for guard, checks in groups:
                if guard is None or guard(s, a, t):
                    for _, _, c in checks:
                        c(s, a, t)

    by_type = TransitionChecks(groups)

    def trans_by_type() -> None:
        table, for_type = by_type.table, by_type.for_type
        for s, a, t in edges:
            got = table.get(type(a))
            for guard, checks in for_type(type(a)) if got is None else got:
                if guard is None or guard(s, a, t):
                    for _, _, c in checks:
                        c(s, a, t)

    def states() -> None:
        for t in new_states:
            for c in always:
                c(t)

    def hashes() -> None:
        for _, _, t in edges:
            hash(t)

    base = dict.fromkeys(seen)

    def insert() -> None:
        d = base.copy()
        sd = d.setdefault
        for s, _, t in edges:
            sd(t, s)

    def copy_only() -> None:
        base.copy()

    t_succ = timed(succ, args.runs)
    rows = [
        ("model successors", t_succ),
        ("coverage labels (successors_labelled + counting, extra)", timed(labelled, args.runs) - t_succ),
        (f"{len(trans)} transition properties, unguarded", timed(trans_plain, args.runs)),
        (f"the same with their guards ({len(groups)} groups)", timed(trans_guarded, args.runs)),
        ("the same, groups looked up by action type", timed(trans_by_type, args.runs)),
        (f"{len(always)} state properties on the new states", timed(states, args.runs)),
        ("hash(successor)", timed(hashes, args.runs)),
        ("insert into the visited dict (incl. hash)", timed(insert, args.runs) - timed(copy_only, args.runs)),
    ]
    for name, secs in rows:
        print(f"  {name:58s} {secs / n * 1e6:6.2f} us per successor")

    tot: dict[str, float] = defaultdict(float)
    cnt: dict[str, int] = defaultdict(int)
    clock = time.perf_counter
    for s in sample:
        g = iter(system.successors(s))
        while True:
            t0 = clock()
            try:
                a, _ = next(g)
            except StopIteration:
                tot["(scan after the last action)"] += clock() - t0
                cnt["(scan after the last action)"] += 1
                break
            tot[type(a).__name__] += clock() - t0
            cnt[type(a).__name__] += 1
    total = sum(tot.values())
    print("model time per action type:")
    for k in sorted(tot, key=lambda k: -tot[k]):
        print(f"  {k:30s} {cnt[k]:8d} x {tot[k] / cnt[k] * 1e6:6.2f} us  {tot[k] / total:6.1%}")


if __name__ == "__main__":
    main()
