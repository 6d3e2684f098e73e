"""How strong the release's exploration is (issue 58, item 3): of N seeds, how many find a planted
violation, and at what cost.

The release's ``controller-explore`` entry (``configs/release.toml``: ``configs/controller-explore.toml``,
engine simulate) runs one seed's budget of random walks; passing proves nothing, and it finds a
bug only if one of its walks takes it. This measures that chance: the entry's configuration with a
**planted violation** (default ``serve_before_registration=true``: a restarted broker applies the
controller's requests before it registers, the finding 273d784 fixed in the model; or a catalogue
mutant, ``--set mutant=NAME``) is explored with seeds ``0 .. N-1``, each run stopping at its first
violation, and the walk that found it is recorded.

The simulate engine draws every walk from one ``random.Random(seed)`` stream and a walk's budget
only cuts that stream short, so a run of ``W`` walks finds the violation exactly when the walk
recorded here is at most ``W``: one run per seed, up to the largest budget, answers every smaller
one. A different depth or swarm setting draws differently and is run on its own.

Each run is a fresh process (``--jobs`` at a time, default 1: the machine is shared); its CPU
seconds are the child's (``resource.getrusage``). Run on demand, never in tests::

    python -m benchmarks.explore_strength --seeds 10 --walks 3000 --depth 150 --swarm
    python -m benchmarks.explore_strength --seeds 10 --walks 1500 --depth 150 --no-swarm
    python -m benchmarks.explore_strength --seeds 1 --walks 1500 --plant none   # today's cost

It prints one JSON line per seed (seed, walk found or null, property, steps of the walk, CPU
seconds, walks run) and a table: for each budget in ``--budgets``, the seeds that found it within
that many walks.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, resource, sys
from explorer.config import load_config
from explorer.engines.simulate import check_simulate
from invariants import get_model
seed, walks, depth, swarm, overrides, only = json.loads(sys.argv[1])
spec = get_model("controller")
cfg = load_config(spec.config_cls, sys.argv[2], overrides)
system, props = spec.build(cfg), spec.properties(cfg)
if only:
    props = [p for p in props if p.name in only]
r = check_simulate(system, props, model="controller", config=cfg, seed=seed, walks=walks, depth=depth, swarm=swarm)
sim = r.coverage["simulate"]
found = sorted(sim["violating_walks"].items(), key=lambda kv: kv[1])
cpu = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "seed": seed,
    "walk": found[0][1] if found else None,
    "property": found[0][0] if found else None,
    "steps": min((v.length for v in r.violations), default=None),
    "walks_run": sim["walks_run"],
    "distinct": r.distinct_states,
    "cpu": round(cpu.ru_utime + cpu.ru_stime, 1),
}))
"""

#: the planted violations by name (``--plant``): overrides of the entry's configuration
PLANTS = {
    "serve-before-registration": ["serve_before_registration=true"],
    "none": [],
}


def run_seed(
    seed: int, walks: int, depth: int, swarm: bool, overrides: list[str], only: list[str], config: Path
) -> dict[str, Any]:
    """One seed's exploration in a fresh process, to its first violation (of ``only``'s
    properties, all when empty) or ``walks`` walks."""
    arg = json.dumps([seed, walks, depth, swarm, overrides, only])
    out = subprocess.run(
        [sys.executable, "-c", CHILD, arg, str(config)], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    row: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return row


def found_within(rows: list[dict[str, Any]], budget: int) -> int:
    """How many of ``rows`` (one per seed) found the violation within ``budget`` walks.

    >>> found_within([{"walk": 3}, {"walk": None}, {"walk": 900}], 500)
    1
    """
    return sum(1 for r in rows if r["walk"] is not None and r["walk"] <= budget)


def main() -> None:
    """Explore seeds ``--first .. --first+--seeds-1`` and print a row per seed and the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "controller-explore.toml")
    ap.add_argument("--plant", choices=sorted(PLANTS), default="serve-before-registration")
    ap.add_argument("--set", action="append", default=[], help="a further override (e.g. mutant=NAME)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--walks", type=int, default=1500)
    ap.add_argument("--depth", type=int, default=150)
    ap.add_argument("--swarm", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--budgets", default="", help="comma-separated walk budgets for the table")
    ap.add_argument(
        "--properties",
        default="broker_views_match_zookeeper",
        help="comma-separated properties checked (default: the planted violation's; 'all': every one)",
    )
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    overrides = [*PLANTS[args.plant], *args.set]
    only = [] if args.properties == "all" else args.properties.split(",")
    seeds = range(args.first, args.first + args.seeds)
    with ThreadPoolExecutor(args.jobs) as pool:
        futures = [
            pool.submit(run_seed, s, args.walks, args.depth, args.swarm, overrides, only, args.config)
            for s in seeds
        ]
        rows = []
        for f in futures:
            rows.append(f.result())
            print(json.dumps(rows[-1]), flush=True)
    budgets = sorted({int(b) for b in args.budgets.split(",") if b} | {args.walks})
    print(f"\n{args.plant} {' '.join(args.set)}: depth {args.depth}, swarm {args.swarm}, {len(rows)} seeds")
    print("walks  found/N")
    for b in budgets:
        print(f"{b:>5}  {found_within(rows, b)}/{len(rows)}")
    print(
        f"CPU-s total {sum(r['cpu'] for r in rows):.0f} (each seed to its first violation); "
        f"walks run total {sum(r['walks_run'] for r in rows)}"
    )


if __name__ == "__main__":
    main()
