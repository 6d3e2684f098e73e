"""Where could partial-order reduction reduce a configuration at all? (``docs/reduction.md``)

Samples states (a breadth-first prefix and seeded random walks, which reach the levels after
every fault) and classifies each with :func:`explorer.search.por_census.census`: enabled
actions that are invisible to the run's properties, states whose actual dependence graph is
connected, states where every component holds a visible action (both fully expanded by any
sound ample-set reduction), candidates, and the states a declared footprint reduces (none on the controller, which declares none).

Usage::

    python -m benchmarks.por_census [--model controller] [--config configs/controller-ref.toml]
        [--set KEY=VALUE ...] [--bfs 20000] [--walks 200] [--seed 1]
        [--properties all|none|NAME,NAME] [--optimistic]

``--properties none`` checks deadlocks only (the weakest visibility); a list of names keeps
those properties alone. ``--optimistic`` also runs
:func:`explorer.search.por_census.optimistic_states` (an unsound indication of what a perfect
dependency declaration could remove with no property; it searches the whole configuration).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from explorer.config import ConfigError, load_config
from explorer.frontend import UsageError, model_spec
from explorer.search.por_census import bfs_states, census, optimistic_states, walk_states


def _setup(args: argparse.Namespace) -> tuple[Any, list[Any], str]:
    """The system, the properties kept and the configuration path the arguments name."""
    for flag in ("bfs", "walks"):
        if getattr(args, flag) < 0:
            raise UsageError(f"--{flag}: must be at least 0, got {getattr(args, flag)}")
    spec = model_spec(args.model)
    path = args.config or f"configs/{args.model}-ref.toml"
    cfg = load_config(spec.config_cls, path, args.set)
    props = list(spec.properties(cfg))
    if args.properties == "none":
        props = []
    elif args.properties != "all":
        names = set(args.properties.split(","))
        unknown = names - {p.name for p in props}
        if unknown:
            raise UsageError(f"--properties: unknown property {sorted(unknown)[0]!r}")
        props = [p for p in props if p.name in names]
    return spec.build(cfg), props, path


def main(argv: list[str] | None = None) -> None:
    """Print the census of the chosen configuration, one section per sample."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.por_census", description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="controller")
    ap.add_argument("--config", default=None, help="default: configs/MODEL-ref.toml")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--bfs", type=int, default=20_000, help="states of the breadth-first prefix (0: none)")
    ap.add_argument("--walks", type=int, default=200, help="seeded random walks (0: none)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--properties", default="all")
    ap.add_argument("--optimistic", action="store_true", help="also the unsound optimistic search")
    args = ap.parse_args(argv)
    try:
        system, props, path = _setup(args)
    except (ConfigError, UsageError) as e:
        print(f"por_census: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"{args.model} {path} {' '.join(args.set)}: {len(props)} properties")
    samples: list[tuple[str, Callable[[], Iterable[Any]]]] = []
    if args.bfs:
        samples.append((f"breadth-first prefix, {args.bfs} states", lambda: bfs_states(system, args.bfs)))
    if args.walks:
        samples.append(
            (
                f"{args.walks} random walks, seed {args.seed}",
                lambda: itertools.islice(walk_states(system, args.walks, args.seed), 1_000_000),
            )
        )
    for title, states in samples:
        t0 = time.perf_counter()
        c = census(system, props, states())
        print(f"-- {title} ({time.perf_counter() - t0:.1f} s)")
        for line in c.lines():
            print("   " + line)
    if args.optimistic:
        t0 = time.perf_counter()
        n, done = optimistic_states(system)
        state = "complete" if done else "stopped at the limit"
        print(
            f"-- optimistic search (unsound, no property): {n} states, {state} ({time.perf_counter() - t0:.1f} s)"
        )


if __name__ == "__main__":
    main()
