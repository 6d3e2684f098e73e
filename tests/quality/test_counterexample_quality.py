"""Counterexample quality: seeded simulation finds each known violation within a fixed
budget, and shrinking ends at most one step longer than the shortest counterexample
``bfs`` finds in the same configuration.

Each :class:`Case` pins the lengths it observed: the simulated trace (cycles cut), the
trace after ddmin alone (no bfs), after the full shrinker (configuration kept), and
bfs's shortest. A change to an engine or a model that moves any of them fails here
and must re-pin them deliberately. Extend :data:`CASES` with the controller variants
as they land (a model not registered yet is skipped).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

import invariants
from explorer.bfs import check_bfs
from explorer.config import load_config
from explorer.shrink import shrink_trace
from explorer.simulate import check_simulate

pytestmark = pytest.mark.quality


@dataclass(frozen=True)
class Case:
    """One known violation: where it is, the simulation budget, the pinned lengths."""

    model: str
    overrides: dict[str, Any]
    property: str
    simulated: int  # length of the simulated counterexample (cycles cut)
    ddmin: int  # after ddmin over the steps alone
    shrunk: int  # after the full shrinker, configuration kept
    bfs: int  # the shortest counterexample
    seed: int = 0
    walks: int = 200
    depth: int = 200
    weights: dict[str, float] = field(default_factory=dict)
    swarm: bool = False

    @property
    def id(self) -> str:
        over = ",".join(f"{k}={v}" for k, v in self.overrides.items()).replace(" ", "")
        return f"{self.model}[{over}]-{self.property}{'-swarm' if self.swarm else ''}"


GRACEFUL = {"delays": [1, 5], "stop_mode": "graceful"}
FORCE = {"delays": [2, 1], "stop_mode": "force"}

CASES = [
    Case(
        "simple-timing-wheel", {"delays": [1, 5]}, "no_task_lost", simulated=32, ddmin=30, shrunk=30, bfs=30
    ),
    Case("simple-timing-wheel", {"delays": [2, 1], "stop_mode": "force"}, "no_task_lost", 18, 18, 18, 18),
    Case(
        "simple-timing-wheel",
        {"delays": [1, 5], "stop_mode": "graceful"},
        "deadlock",
        simulated=97,
        ddmin=97,
        shrunk=71,
        bfs=71,
    ),
    # rare interleavings: uniform walks miss these in 3000 walks; swarm walks find them
    Case("simple-timing-wheel", GRACEFUL, "graceful_stop_waits", 67, 67, 58, 58, walks=400, swarm=True),
    Case("simple-timing-wheel", GRACEFUL, "task_count_consistent", 72, 72, 63, 63, walks=400, swarm=True),
    Case("simple-timing-wheel", GRACEFUL, "stop_terminates_trigger", 103, 103, 91, 91, walks=400, swarm=True),
    Case("simple-timing-wheel", FORCE, "lateness_bounded", 52, 49, 49, 49, walks=400, swarm=True),
]


def _build(case: Case) -> tuple[Any, Any, Any, list[Any]]:
    if case.model not in invariants.MODEL_MODULES:
        pytest.skip(f"model {case.model} is not registered yet")
    spec = invariants.get_model(case.model)
    config = load_config(spec.config_cls, values=case.overrides)
    props = [p for p in spec.properties(config) if p.name == case.property]
    assert props or case.property == "deadlock", f"{case.model} has no property {case.property}"
    return spec, config, spec.build(config), props


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_simulation_finds_and_shrinking_reaches_the_shortest(case: Case) -> None:
    spec, config, system, props = _build(case)
    deadlock = case.property == "deadlock"
    sim = check_simulate(
        system,
        props,
        seed=case.seed,
        walks=case.walks,
        depth=case.depth,
        weights=case.weights or None,
        swarm=case.swarm,
        deadlock=deadlock,
    )
    found = [v for v in sim.violations if v.property == case.property]
    assert found, f"simulation (seed {case.seed}, {case.walks} walks of {case.depth}) missed {case.property}"
    assert sim.coverage["simulate"]["walks_run"] <= case.walks
    v = found[0]
    bfs = check_bfs(system, props, deadlock=deadlock)
    shortest = bfs.violations[0].length
    ddmin_only = shrink_trace(spec, config, v.trace, case.property, shrink_config=False, use_bfs=False)
    shrunk = shrink_trace(spec, config, v.trace, case.property, shrink_config=False)
    assert shrunk.length <= shortest + 1
    assert ddmin_only.length <= v.length
    assert (v.length, ddmin_only.length, shrunk.length, shortest) == (
        case.simulated,
        case.ddmin,
        case.shrunk,
        case.bfs,
    )


@pytest.mark.parametrize("case", CASES[:1], ids=[c.id for c in CASES[:1]])
def test_configuration_shrinks_without_lengthening_the_trace(case: Case) -> None:
    spec, config, system, props = _build(case)
    v = check_simulate(
        system, props, seed=case.seed, walks=case.walks, depth=case.depth, deadlock=False
    ).violations[0]
    out = shrink_trace(spec, config, v.trace, case.property)
    assert out.length <= case.shrunk
    assert out.config_changes() == ["wheel_size 4 -> 1", "max_ticks 12 -> 1"]
    assert out.length == 21
