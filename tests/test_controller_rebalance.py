"""The auto leader rebalance against the rule of seed 002 (``leader.imbalance.per.broker.percentage``:
the ratio of a preferred broker's partitions led elsewhere): ``auto_rebalance_follows_imbalance``
and the release entry ``controller-admin-rebalance`` that reaches the deletion case."""

from __future__ import annotations

from typing import Any

import pytest

from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from invariants.controller_fidelity import auto_rebalance_candidates, auto_rebalance_follows_imbalance
from invariants.mutants.controller import ControllerConfig, build
from model.controller import ControllerSystem, State
from model.controller.actions import ProcessEvent
from model.controller.events import AutoPreferredReplicaLeaderElection

REBALANCE = "configs/controller-admin-rebalance.toml"


def _rebalance_steps(sys: ControllerSystem, limit: int) -> list[tuple[State, Any, State]]:
    """The auto-rebalance events processed among the first ``limit`` states, breadth first."""
    init = sys.init_states()[0]
    seen = {init}
    frontier = [init]
    steps = []
    while frontier and len(seen) < limit:
        nxt = []
        for s in frontier:
            for a, t in sys.successors(s):
                if type(a) is ProcessEvent and type(a.event) is AutoPreferredReplicaLeaderElection:
                    steps.append((s, a, t))
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return steps


def _config() -> ControllerConfig:
    return load_config(ControllerConfig, REBALANCE)


def test_the_property_holds_and_can_fail_both_ways() -> None:
    """Each processed task agrees with the rule; the same step with the election dropped, or with
    an election where the rule elects nothing, breaks it."""
    sys = build(_config())
    check = auto_rebalance_follows_imbalance(sys)
    steps = _rebalance_steps(sys, 4_000)
    elects = [(s, a, t) for s, a, t in steps if t.nodes[a.broker].pending is not None]
    idle = [(s, a, t) for s, a, t in steps if t.nodes[a.broker].pending is None]
    assert elects and idle
    assert all(check(s, a, t) for s, a, t in steps)
    s, a, t = elects[0]
    dropped = t._replace(
        nodes=tuple(n._replace(pending=None) if i == a.broker else n for i, n in enumerate(t.nodes))
    )
    assert not check(s, a, dropped)
    s2, a2, t2 = idle[0]
    spurious = t2._replace(
        nodes=tuple(t.nodes[a.broker] if i == a2.broker else n for i, n in enumerate(t2.nodes))
    )
    assert not check(s2, a2, spurious)


def test_a_topic_queued_for_deletion_does_not_count() -> None:
    """The candidates of seed 002's rule: broker 1 prefers partitions 0 and 1 and leads only 0
    (50%, not over 50); with topic 0 queued for deletion partition 1 is alone and led elsewhere."""
    sys = build(_config())
    ctx = sys.init_states()[0].nodes[0].ctx
    lead = ctx.leaders
    moved = ctx._replace(leaders=(lead[0], lead[1]._replace(leader=0)))
    assert auto_rebalance_candidates(moved, 1, 50) == []
    assert auto_rebalance_candidates(moved._replace(deleting=(0,)), 1, 50) == [1]
    assert auto_rebalance_candidates(moved, 1, 49) == [1]
    assert auto_rebalance_candidates(moved._replace(live=(1, 0)), 1, 49) == []


@pytest.mark.slow
def test_the_entry_holds_and_elects_under_a_deletion() -> None:
    """The release entry's configuration: every property holds, and the task elects."""
    import invariants.controller as spec

    c = _config()
    sys = build(c)
    r = check_bfs(sys, spec.properties(c), model="controller", config=c)
    assert r.exit_reason.value == "complete" and r.violations == []
    assert r.distinct_states == 71_648
