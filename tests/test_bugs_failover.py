"""The bug zoo's failover families (``docs/bugs.md``): KAFKA-3143 / KAFKA-3096 (a new controller
leaves a dead last ISR member leader: ``offline_replicas_on_startup``) and KAFKA-6650 (a new
controller picks up a half-deleted topic: ``recursive_topic_deletion``)."""

from __future__ import annotations

from typing import Any

import pytest

import invariants.controller as spec
from explorer.core import always
from explorer.engines.bfs import check_bfs
from invariants.mutants.controller import ControllerConfig, build
from model.controller.state import State
from model.state_machines import PartitionState

#: controller-small with one session expiry (the bug's entry, without the key's value)
SMALL: dict[str, Any] = dict(
    brokers=2, topics=1, replication_factor=2, max_crashes=1, max_restarts=0, max_session_expiries=1
)


def _only(c: ControllerConfig, name: str) -> list[Any]:
    """``name``'s violations on ``c`` (the search stops at the first)."""
    props = [p for p in spec.properties(c) if p.name == name]
    assert props, name
    return check_bfs(build(c), props, model="controller", config=c).violations


def test_startup_sets_a_dead_last_isr_member_leader_to_none_only_with_the_key() -> None:
    """Kafka 2.3's startup (the key) writes leader -1 for the partition whose last ISR member
    died before the failover; the bug (the seeds' startup) leaves the dead broker leader."""
    fixed = ControllerConfig(**SMALL, offline_replicas_on_startup=True)
    assert _only(fixed, "no_dead_leader_when_quiet") == []
    buggy = ControllerConfig(**SMALL, bug="KAFKA-3143")
    assert buggy.offline_replicas_on_startup is True  # implied
    assert [(v.property, v.length) for v in _only(buggy, "no_dead_leader_when_quiet")] == [
        ("no_dead_leader_when_quiet", 16)
    ]
    # the property is the key's guarantee: the seeds' startup does not claim it
    assert not [
        p for p in spec.properties(ControllerConfig(**SMALL)) if p.name == "no_dead_leader_when_quiet"
    ]


def test_with_the_key_a_dead_leader_is_eventually_replaced_without_exception() -> None:
    """``dead_leader_eventually_replaced`` lets the seeds' startup leave a dead last ISR member
    leader (KAFKA-3096); with Kafka 2.3's startup it makes no such exception, and the bug, which
    takes the fix away, breaks it (a lasso)."""
    live = {**SMALL, "liveness": True}
    assert (
        _only(ControllerConfig(**live, offline_replicas_on_startup=True), "dead_leader_eventually_replaced")
        == []
    )
    assert _only(ControllerConfig(**live), "dead_leader_eventually_replaced") == []
    found = _only(ControllerConfig(**live, bug="KAFKA-3143"), "dead_leader_eventually_replaced")
    assert [(v.property, v.length) for v in found] == [("dead_leader_eventually_replaced", 17)]


def _half_deleted_and_failed_over(s: State) -> bool:
    """Topic 0 still exists and is queued for deletion, its partition's state znode is gone,
    and a controller of a later epoch than the first has read it into its context."""
    zk = s.zk
    if zk.parts[0] is not None or 0 in zk.gone or 0 not in zk.delete_topics:
        return False
    return any(
        n.ctx is not None and n.ctx.epoch > 1 and n.ctx.pstates[0] != PartitionState.NonExistentPartition
        for n in s.nodes
    )


@pytest.mark.slow  # about 2 CPU-s
def test_recursive_deletion_leaves_a_half_deleted_topic_to_the_next_controller() -> None:
    """With the znodes deleted one request at a time, a controller that dies between them
    leaves a half-deleted topic, which the next controller fails over with (without the key a
    topic's znodes go in one step and no such state is reachable)."""
    admin: dict[str, Any] = dict(
        brokers=2,
        topics=2,
        assignment=((0, 1), (1,)),
        max_crashes=1,
        max_restarts=1,
        max_session_expiries=0,
        send_update_metadata=False,
        max_topic_deletions=1,
        deletion_ignores_stale_broker_epoch=True,
    )
    never = always("never_half_deleted", lambda s: not _half_deleted_and_failed_over(s), "")
    c = ControllerConfig(**admin, recursive_topic_deletion=True)
    r = check_bfs(build(c), [never], model="controller", config=c)
    assert [v.property for v in r.violations] == ["never_half_deleted"]
    c = ControllerConfig(**admin)
    r = check_bfs(build(c), [never], model="controller", config=c)
    assert r.exit_reason.value == "complete" and r.violations == []
