"""Which release entries reach the scenarios of issue 35's item 3? (``docs/mutation.md``)

A bug can only be caught where the search reaches it. This census runs each exhaustive
controller entry of the release suite (``controller-ref`` left out: 6.5M states) breadth first
up to ``--max-states`` distinct states and counts, per entry, the steps that are:

- ``create_with_replica_down``: a new partition's first state written while one of its
  assigned replicas' brokers is down (``onNewPartitionCreation`` with a dead replica);
- ``election_write_version_conflict``: a partition-state write of the current controller
  epoch that ZooKeeper refuses for its zkVersion (someone wrote the partition meanwhile);
- ``failover_with_partition_without_live_replica``: a new controller epoch won while some
  partition has no live replica (``initializePartitionStateMachine`` of an offline partition).

Usage::

    python -m benchmarks.scenario_census [--entries NAME,NAME] [--max-states 400000]

It prints one line per entry (its distinct states, ``(cut)`` when the bound stopped it, and
the count of each scenario's steps) and exits 0; a scenario no entry reaches is named last.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from typing import Any

from explorer.config import load_config
from explorer.suite import load_suite
from invariants.mutants.controller import ControllerConfig, build
from model.controller.effects import zk_request_of
from model.controller.messages import UpdateLeaderAndIsr

SCENARIOS = (
    "create_with_replica_down",
    "election_write_version_conflict",
    "failover_with_partition_without_live_replica",
)


def scenarios(system: Any, s: Any, a: Any, t: Any) -> Iterator[str]:
    """The scenarios the step ``s --a--> t`` of ``system`` is an instance of.

    >>> system = build(ControllerConfig())
    >>> s = system.init_states()[0]
    >>> list(scenarios(system, s, None, s))
    []
    """
    req = zk_request_of(a)  # any step that applies a ZooKeeper request (by effect, not class)
    if type(req) is UpdateLeaderAndIsr:
        for p, z in req.writes:
            if req.create:
                if any(not s.nodes[b].alive for b in system.slots[p]):
                    yield "create_with_replica_down"
            else:
                cur = s.zk.parts[p]
                if cur is not None and cur.version != z.version and s.zk.epoch == req.controller_epoch:
                    yield "election_write_version_conflict"
    if t.zk.epoch > s.zk.epoch and any(
        not any(t.nodes[b].alive for b in system.slots[p]) for p in range(system.np)
    ):
        yield "failover_with_partition_without_live_replica"


def census(system: Any, max_states: int) -> tuple[int, bool, dict[str, int]]:
    """Breadth first over ``system`` up to ``max_states`` distinct states: (states, whether
    the bound cut the search, steps per scenario)."""
    init = system.init_states()
    seen = set(init)
    frontier = list(init)
    found: dict[str, int] = {}
    while frontier and len(seen) < max_states:
        nxt = []
        for s in frontier:
            for a, t in system.successors(s):
                for k in scenarios(system, s, a, t):
                    found[k] = found.get(k, 0) + 1
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return len(seen), bool(frontier), found


def main(argv: list[str] | None = None) -> int:
    """Print the census of the release suite's controller entries (see the module docstring)."""
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.scenario_census", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--suite", default="configs/release.toml")
    ap.add_argument("--entries", default=None, help="comma-separated entry names (default: all)")
    ap.add_argument("--max-states", type=int, default=400_000)
    args = ap.parse_args(argv)
    wanted = set(args.entries.split(",")) if args.entries else None
    reached: set[str] = set()
    for e in load_suite(args.suite):
        if e.model != "controller" or e.engine != "bfs" or e.name == "controller-ref":
            continue
        if wanted is not None and e.name not in wanted:
            continue
        system = build(load_config(ControllerConfig, e.config, list(e.set)))
        t0 = time.perf_counter()
        n, cut, found = census(system, args.max_states)
        reached |= set(found)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(found.items())) or "none"
        print(
            f"{e.name:<44} {n:>9,}{' (cut)' if cut else '      '}  {counts}  {time.perf_counter() - t0:.0f} s"
        )
    missing = [k for k in SCENARIOS if k not in reached]
    print("reached by no entry: " + (", ".join(missing) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
