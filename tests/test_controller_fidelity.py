"""Fidelity of the controller model to the seeds (issue 19): ISR order, leader selectors, partition
and replica states during topic deletion, the admin-triggered unclean election."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from explorer.engines.bfs import check_bfs
from invariants.controller_fidelity import fidelity_properties, isr_order_kept
from invariants.mutants.controller import ControllerConfig, build
from model.controller import S_CONTROLLED_SHUTDOWN, ControllerSystem, State
from model.election import LeaderAndIsr

# three replicas of one partition; broker 0 (the first controller, and the partition's leader)
# crashes and comes back: its replica rejoins the ISR after the others
REJOIN = {
    "brokers": 3,
    "replication_factor": 3,
    "max_crashes": 1,
    "max_restarts": 1,
    "max_session_expiries": 0,
    "send_update_metadata": False,
}


def _find(sys: ControllerSystem, goal: Callable[[State], bool]) -> State:
    """The first state (breadth first) that satisfies ``goal``."""
    init = sys.init_states()[0]
    seen = {init}
    frontier = [init]
    while frontier:
        nxt = []
        for s in frontier:
            for _, t in sys.successors(s):
                if t not in seen:
                    if goal(t):
                        return t
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    raise AssertionError("goal not reachable")


def _rejoined(s: State) -> bool:
    z = s.zk.parts[0]
    return z.leader == 1 and len(z.isr) == 3


def test_rejoining_replica_is_appended() -> None:
    """Partition.maybeExpandIsr appends: broker 0 rejoins an ISR led by 1 as its last member,
    not in assignment order (0, 1, 2)."""
    s = _find(build(ControllerConfig(**REJOIN)), _rejoined)
    assert s.zk.parts[0].isr == (1, 2, 0)


def test_isr_order_property_holds() -> None:
    c = ControllerConfig(**REJOIN)
    sys = build(c)
    r = check_bfs(sys, fidelity_properties(c, sys), model="controller", config=c)
    assert r.exit_reason.value == "complete"
    assert r.violations == []


def test_isr_order_property_catches_assignment_order() -> None:
    """A write that rebuilds the ISR in assignment order (the model before issue 19) breaks it."""
    sys = build(ControllerConfig(**REJOIN))
    check = isr_order_kept(sys)
    s = _find(sys, lambda t: t.zk.parts[0].isr == (1, 2))
    z = s.zk.parts[0]
    for isr, ok in (((1, 2, 0), True), ((0, 1, 2), False), ((2,), True), ((2, 1), False)):
        t = s._replace(zk=s.zk._replace(parts=(z._replace(isr=isr, version=z.version + 1),)))
        assert check(s, None, t) is ok, isr


def _shutdown_leader(selectors: str, isr: tuple[int, ...]) -> int | None:
    """The leader the active controller's ``elect_leader_for_partition`` picks when broker 1,
    the leader, shuts down, for an ISR of the given order."""
    sys = build(ControllerConfig(**REJOIN, leader_selectors=selectors))
    s = sys.init_states()[0]
    b = s.zk.controller[0]
    w = sys.controller_cls(sys, s, b, s.nodes[b])
    w.ctx = w.ctx._replace(shutting=(1,))
    cur = LeaderAndIsr(1, 3, isr, 5)
    res = w.elect_leader_for_partition(S_CONTROLLED_SHUTDOWN, 0, cur, w.live_broker_ids(), ())
    return None if res.leader_and_isr is None else res.leader_and_isr.leader


def test_isr_order_decides_the_controlled_shutdown_leader() -> None:
    """Seed 000's ControlledShutdownLeaderSelector takes the head of the ISR without the
    shutting-down broker: with Kafka's order (1, 2, 0) broker 2 leads, with assignment order
    (0, 1, 2) broker 0 would. The 2.x rule walks the assignment and picks 0 either way."""
    assert _shutdown_leader("0.8", (1, 2, 0)) == 2
    assert _shutdown_leader("0.8", (0, 1, 2)) == 0
    assert _shutdown_leader("2.x", (1, 2, 0)) == 0
    assert _shutdown_leader("2.x", (0, 1, 2)) == 0


@pytest.mark.slow
def test_isr_order_decides_the_leader_end_to_end() -> None:
    """With seed 000's selectors the controller itself elects broker 2 on a controlled shutdown of
    leader 1 once 0 has rejoined (ISR (1, 2, 0)); assignment order would have elected 0."""
    c = ControllerConfig(**REJOIN, leader_selectors="0.8", max_controlled_shutdowns=1)
    sys = build(c)

    def goal(s: State) -> bool:
        z = s.zk.parts[0]
        return s.shutdowns == 1 and z.leader == 2 and z.isr == (2, 0) and s.nodes[1].cs != 0

    s = _find(sys, goal)
    assert s.zk.parts[0].isr == (2, 0)
