"""Counterexample quality: seeded simulation finds each known violation within a fixed
budget, and shrinking ends at most one step longer than the shortest counterexample
``bfs`` finds in the same configuration.

Each :class:`Case` pins the lengths it observed: the simulated trace (cycles cut), the
trace after ddmin alone (``--shrinker ddmin``, no bfs), after ddmin and Hypothesis (the
default shrinker, no bfs; never longer than ddmin's), after the full shrinker
(configuration kept), and bfs's shortest. A change to an engine or a model that moves any of them fails here
and must re-pin them deliberately. A model not registered yet is skipped.

The controller cases are its variants (``tests/test_controller.py``): each older design
breaks one property in the smallest configuration that test uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

import invariants
from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from explorer.engines.simulate import check_simulate
from explorer.shrink import shrink_trace

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
    bfs_max_states: int = 50_000  # the shrinker's bounded bfs (kafka-mc shrink --bfs-max-states)
    hypothesis: int | None = None  # after ddmin then Hypothesis, no bfs (None: ddmin's length)

    @property
    def id(self) -> str:
        over = ",".join(f"{k}={v}" for k, v in self.overrides.items()).replace(" ", "")
        return f"{self.model}[{over}]-{self.property}{'-swarm' if self.swarm else ''}"


GRACEFUL = {"delays": [1, 5], "stop_mode": "graceful"}
FORCE = {"delays": [2, 1], "stop_mode": "force"}
TWO = {"brokers": 2, "replication_factor": 2, "max_crashes": 1, "max_restarts": 1, "max_session_expiries": 1}
HW_TRUNCATION = {
    "brokers": 3,
    "replication_factor": 3,
    "max_crashes": 2,
    "max_restarts": 0,
    "max_session_expiries": 0,
    "max_records": 1,
    "send_update_metadata": False,
    "follower_truncation": "high-watermark",
}

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
    # controller variants (configurations of tests/test_controller.py)
    Case(
        "controller",
        {**TWO, "zk_write_fencing": "partition-version", "session_expiry_handling": "queued"},
        "zk_writes_fenced",
        simulated=20,
        ddmin=16,
        shrunk=13,
        bfs=13,
        hypothesis=14,
    ),
    Case(
        "controller",
        {**TWO, "broker_epoch": False},
        "brokers_reject_stale_broker_epoch",
        15,
        13,
        9,
        9,
        hypothesis=11,
    ),
    Case(
        "controller",
        {**TWO, "unclean_leader_election": True, "max_records": 1},
        "no_acked_record_lost",
        simulated=21,
        ddmin=13,
        shrunk=13,
        bfs=13,
    ),
    Case(
        "controller", {**TWO, "session_expiry_handling": "queued"}, "controller_znode_valid", 12, 11, 10, 10
    ),
    Case("controller", {**TWO, "elector": "legacy"}, "controller_znode_valid", 23, 15, 15, 15),
    # rarer: seed 0 finds it at walk 1,531 (809 before 273d784 changed the walks; seeds 1 and 2
    # at walks 1,848 and 1,118, measured), hence 2,000 walks. bfs needs 57k states here, more
    # than the shrinker's default bfs budget, so the shrunk length is ddmin's
    Case(
        "controller",
        {**TWO, "elector": "legacy"},
        "controller_znode_removed_by_owner",
        simulated=23,
        ddmin=18,
        shrunk=18,
        bfs=18,
        walks=2000,
    ),
    # uniform walks miss it in 10000 walks; swarm seed 0 finds it at walk 1756 (465 before
    # issue 20's model changes altered the walks, hence 3000 walks). Its trace is 1-minimal at
    # 22 steps and bfs needs about 320k states to reach the shortest (20; the whole space is
    # 362,940): with the default budget of 50k states the shrinker ends at 22, two steps over
    Case(
        "controller",
        HW_TRUNCATION,
        "no_acked_record_lost",
        simulated=23,
        ddmin=22,
        shrunk=20,
        bfs=20,
        walks=3000,
        swarm=True,
        bfs_max_states=400_000,
    ),
]


def _build(case: Case) -> tuple[Any, Any, Any, list[Any]]:
    if case.model not in invariants.MODEL_MODULES:
        pytest.skip(f"model {case.model} is not registered yet")
    spec = invariants.get_model(case.model)
    config = load_config(spec.config_cls, values=case.overrides)
    props = [p for p in spec.properties(config) if p.name == case.property]
    assert props or case.property == "deadlock", f"{case.model} has no property {case.property}"
    return spec, config, spec.build(config), props


#: cases whose simulation budget no longer reaches the violation, each with why (strict: a case
#: that starts passing again fails here, to be pinned anew)
MISSED: dict[str, str] = {}


def _params(cases: list[Case]) -> list[Any]:
    return [
        pytest.param(c, id=c.id, marks=pytest.mark.xfail(reason=MISSED[c.property], strict=True))
        if c.property in MISSED
        else pytest.param(c, id=c.id)
        for c in cases
    ]


@pytest.mark.parametrize("case", _params(CASES))
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
    ddmin_only = shrink_trace(
        spec, config, v.trace, case.property, shrink_config=False, use_bfs=False, shrinker="ddmin"
    )
    with_hypothesis = shrink_trace(spec, config, v.trace, case.property, shrink_config=False, use_bfs=False)
    assert with_hypothesis.length <= ddmin_only.length
    assert with_hypothesis.length == (case.hypothesis if case.hypothesis is not None else case.ddmin)
    shrunk = shrink_trace(
        spec, config, v.trace, case.property, shrink_config=False, bfs_max_states=case.bfs_max_states
    )
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
