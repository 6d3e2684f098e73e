"""The kept session (``model/controller/faults/orphaned_session.py``): ZooKeeper expires a live
broker's session but keeps its ephemerals (ZOOKEEPER-2985), the trigger of KAFKA-7165 and
KAFKA-13407 (``docs/bugs.md``). Off by default; its step keeps the tree; Kafka 2.2's
registration re-creates the kept node and 2.1's (KAFKA-7165) fails on it; PR 11476's key starts
the controller that finds itself elected by a kept ``/controller``."""

from __future__ import annotations

from typing import Any

import invariants.controller as spec
from explorer.config import load_config
from explorer.core import CheckResult
from explorer.engines.bfs import check_bfs
from invariants.mutants.controller import ControllerConfig, build
from model.controller import ControllerSystem
from model.controller.bugs.kafka_7165 import Kafka7165
from model.controller.faults import rules, spent
from model.controller.faults.orphaned_session import OrphanedSessionExpire
from model.controller.state import State

SMALL = "configs/controller-small.toml"
KEPT = ["max_crashes=0", "max_orphaned_sessions=1"]


def _config(*overrides: str) -> ControllerConfig:
    return load_config(ControllerConfig, SMALL, list(overrides))


def _reachable(system: Any) -> list[State]:
    """Every state reachable in ``system`` (a small one), breadth first."""
    seen = {s: None for s in system.init_states()}
    todo = list(seen)
    while todo:
        s = todo.pop()
        for _, t in system.successors(s):
            if t not in seen:
                seen[t] = None
                todo.append(t)
    return list(seen)


def _check(*overrides: str) -> CheckResult:
    c = _config(*overrides)
    return check_bfs(build(c), spec.properties(c), model="controller", config=c, keep_going=True)


def test_off_by_default() -> None:
    """No kept session unless its budget is set: controller-small's action kinds lack it."""
    assert "OrphanedSessionExpire" not in ControllerSystem(_config()).action_kinds()
    assert "OrphanedSessionExpire" in ControllerSystem(_config(*KEPT)).action_kinds()


def test_the_step_expires_the_session_and_keeps_the_tree() -> None:
    """Every reachable kept-session step marks the broker's session expired, leaves ZooKeeper's
    tree (its ephemerals) and every queue as they were, and counts the budget."""
    system = build(_config(*KEPT, "start_controller_when_already_elected=true"))
    rule = next(r for r in rules() if r.action is OrphanedSessionExpire)
    steps = 0
    for s in _reachable(system):
        for a, t in system.successors(s):
            if type(a) is not OrphanedSessionExpire:
                continue
            steps += 1
            b = a.broker
            assert a.session == s.nodes[b].session and not s.nodes[b].expired
            assert t.zk == s.zk and t.nodes[b] == s.nodes[b]._replace(expired=True)
            assert all(t.nodes[i] == s.nodes[i] for i in range(len(s.nodes)) if i != b)
            assert spent(t, rule) == spent(s, rule) + 1 == 1
    assert steps == 2  # either broker's session, once, from the settled start


def test_registration_recreates_the_kept_node_since_2_2() -> None:
    """Broker 1's kept session: Kafka 2.2's registration deletes and re-creates
    ``/brokers/ids/1`` in the new session (a new broker epoch); 2.1's (KAFKA-7165) answers
    nothing and leaves the kept node."""
    for zookeeper, recreated in ((None, True), (Kafka7165, False)):
        c = _config(*KEPT)
        system = ControllerSystem(c, zookeeper=zookeeper) if zookeeper else build(c)
        s = system.init_states()[0]
        kept = s.zk.brokers[1]
        assert kept is not None
        _, s = next(
            (a, t) for a, t in system.successors(s) if type(a) is OrphanedSessionExpire and a.broker == 1
        )
        s = system.brokers.notice_expiry(s, 1)[1]
        _, t = system.zookeeper.serve(s, 1)  # the new session's RegisterBroker
        if recreated:
            assert (
                t.zk.brokers[1]
                == (t.nodes[1].session, kept[1] + 1)
                == (t.nodes[1].session, t.nodes[1].bepoch)
            )
        else:
            assert t.zk.brokers[1] == kept and not t.nodes[1].zk_out and not t.nodes[1].events


def test_not_offered_under_the_legacy_elector() -> None:
    """0.8 meeting a kept node is KAFKA-1029's loop, which the fault leaves out: no step."""
    system = build(_config(*KEPT, "kafka_version=0.8"))
    assert not any(type(a) is OrphanedSessionExpire for a, _ in system.successors(system.init_states()[0]))


def test_pr_11476_starts_the_controller_elected_by_a_kept_node() -> None:
    """The controller's kept session: without PR 11476's key no broker runs a controller once
    quiet (KAFKA-13407, 233 states); with it every property holds (242 states)."""
    bug = _check(*KEPT)
    assert [(v.property, v.length) for v in bug.violations] == [("controller_converges", 5)]
    assert bug.distinct_states == 233
    fixed = _check(*KEPT, "start_controller_when_already_elected=true")
    assert fixed.exit_reason.value == "complete" and fixed.violations == [] and fixed.distinct_states == 242
