"""Fidelity of the controller model to the seeds (issue 19): ISR order, leader selectors, partition
and replica states during topic deletion, the admin-triggered unclean election."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import invariants.controller as spec
from explorer.config import ConfigError, load_config
from explorer.core import CheckResult
from explorer.engines.bfs import check_bfs
from explorer.speedups import set_item
from invariants.controller_fidelity import fidelity_properties, isr_order_kept
from invariants.mutants.controller import ControllerConfig, build
from model.controller import ControllerSystem, State
from model.controller.base import ControllerBase
from model.controller.broker import Brokers
from model.controller.config import ReplicaTable
from model.controller.coverage import state_machine_graphs
from model.controller.events import BrokerChange, ControllerChange, Reelect
from model.controller.messages import S_CONTROLLED_SHUTDOWN
from model.controller.state import D_ADMIN_UNCLEAN, D_UNCLEAN_DYN
from model.controller.state_machines import PartitionStateMachine
from model.controller.zookeeper import ZooKeeperServer
from model.election import LeaderAndIsr
from model.state_machines import PartitionState, ReplicaState

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


@pytest.mark.slow  # over 1.3 CPU-s in the CI of session 17
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
    psm = sys.kafka_controller.partition_state_machine
    res = psm.elect_leader_for_partition(w, S_CONTROLLED_SHUTDOWN, 0, cur, w.live_broker_ids(), ())
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


# -- topic deletion: partition state and the replica table ---------------------------------------

ADMIN = "configs/controller-admin.toml"
DELETE_NO_FAULT = {
    "brokers": 2,
    "max_topic_deletions": 1,
    "max_crashes": 0,
    "max_restarts": 0,
    "max_session_expiries": 0,
    "send_update_metadata": False,
}


def _reachable(sys: ControllerSystem) -> list[State]:
    init = sys.init_states()[0]
    seen = {init}
    todo = [init]
    while todo:
        s = todo.pop()
        for _, t in sys.successors(s):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return list(seen)


def test_partition_offline_while_its_topic_is_deleted() -> None:
    """Seed 002: a partition goes OfflinePartition when its topic is deleted and stays there
    while the deletion runs (NonExistentPartition once completeDeleteTopic runs)."""
    states = _reachable(build(ControllerConfig(**DELETE_NO_FAULT)))
    started = [
        ctx
        for s in states
        for n in s.nodes
        if (ctx := n.ctx) is not None and ReplicaState.ReplicaDeletionStarted in ctx.rstates[0]
    ]
    assert started
    assert all(ctx.pstates[0] == PartitionState.OfflinePartition for ctx in started)
    assert any(
        s.zk.gone and n.ctx is not None and n.ctx.pstates[0] == PartitionState.NonExistentPartition
        for s in states
        for n in s.nodes
    )


def _admin(overrides: list[str], only: str | None = None) -> CheckResult:
    c = load_config(ControllerConfig, ADMIN, overrides)
    props = spec.properties(c)
    if only is not None:
        props = [p for p in props if p.name == only]
    return check_bfs(build(c), props, model="controller", config=c, keep_going=only is None)


def test_replica_table_key() -> None:
    assert ControllerConfig().replica_table is ReplicaTable.LATER_2X
    assert ControllerConfig(replica_table="printed").replica_table is ReplicaTable.PRINTED
    with pytest.raises(ConfigError, match="replica_table"):
        load_config(ControllerConfig, None, ["replica_table=0.9"])
    printed = state_machine_graphs("printed")["replica"]
    later = state_machine_graphs("later-2.x")["replica"]
    assert set(later.edges) - set(printed.edges) == {("OfflineReplica", "ReplicaDeletionIneligible")}


@pytest.mark.slow
def test_printed_table_deletion_completes_without_the_later_edge() -> None:
    """With the table seeds 000 and 001 print, a dead broker's replica cannot go OfflineReplica ->
    ReplicaDeletionIneligible: Kafka logs and skips it, the topic stays ineligible until the
    broker is back, and the deletion still completes (every property, liveness included)."""
    r = _admin(["replica_table=printed"])
    assert r.exit_reason.value == "complete" and r.violations == []
    assert {"topic_deleted", "deletion_resumed_on_startup"} <= set(r.witnesses)
    assert r.properties["deletion_eventually_completes"]["status"] == "held"


def test_printed_table_rejects_seed_001s_dead_replica_step() -> None:
    """Recorded strictly, seed 001's startReplicaDeletion step (dead replicas ->
    ReplicaDeletionIneligible) is an invalid transition of the printed table, reached sooner than
    the later table's invalid ones (a deleted replica's broker failing: length 16)."""
    r = _admin(["replica_table=printed", "strict_deletion_transitions=true"], only="valid_transitions")
    assert [(v.property, v.length) for v in r.violations] == [("valid_transitions", 10)]
    # broker 1 is dead when the deletion starts: its replica is OfflineReplica
    actions = [step.action for step in r.violations[0].trace]
    assert actions[1] == "broker 1: crashes" and "TopicDeletion" in actions[-2]
    r = _admin(["strict_deletion_transitions=true"], only="valid_transitions")
    assert [(v.property, v.length) for v in r.violations] == [("valid_transitions", 16)]


# -- the admin-triggered unclean election ---------------------------------------------------------

# partition [0, 1]: follower 1 leaves the ISR when it crashes, then the leader dies and 1 is the
# only live replica
ADMIN_UNCLEAN = {
    "brokers": 2,
    "replication_factor": 2,
    "max_crashes": 2,
    "max_restarts": 1,
    "max_session_expiries": 0,
    "send_update_metadata": False,
}


def test_admin_unclean_election_off_by_default() -> None:
    c = ControllerConfig(**ADMIN_UNCLEAN)
    assert c.max_admin_unclean_elections == 0 and not c.admin
    assert "AdminUncleanElection" not in build(c).action_kinds()
    assert not any(s.history & 1 for s in _reachable(build(c)))


@pytest.mark.slow  # 1.5 CPU-s
def test_admin_unclean_election_elects_outside_the_isr() -> None:
    """allowUnclean = true (AdminClientTriggered) ignores the topic's
    unclean.leader.election.enable (false here): the live out-of-sync replica leads, ISR = [it];
    every property holds."""
    c = ControllerConfig(**ADMIN_UNCLEAN, max_admin_unclean_elections=1)
    sys = build(c)
    assert "AdminUncleanElection" in sys.action_kinds()
    states = _reachable(sys)
    unclean = [s for s in states if s.done & D_ADMIN_UNCLEAN]
    assert unclean and all(s.history & 1 for s in unclean)
    assert any(len(s.zk.parts[0].isr) == 1 and s.zk.parts[0].leader == s.zk.parts[0].isr[0] for s in unclean)
    r = check_bfs(sys, spec.properties(c), model="controller", config=c, keep_going=True)
    assert r.exit_reason.value == "complete" and r.violations == []
    assert r.distinct_states == len(states)


class _DeadBrokerStartsShutdown:
    """``REJOIN``'s system plus one wrong step: a broker that is down (its session not yet
    expired) begins a controlled shutdown, as the measure's survivor ``system.py:346`` (the
    liveness test dropped from the rule that starts one) let it."""

    def __init__(self, sys: ControllerSystem) -> None:
        self.sys = sys

    def __getattr__(self, name: str) -> object:
        return getattr(self.sys, name)

    def _wrong(self, s: State) -> list[tuple[str, State]]:
        return [
            ("DeadBrokerShutdown", s._replace(nodes=(*s.nodes[:b], n._replace(cs=3), *s.nodes[b + 1 :])))
            for b, n in enumerate(s.nodes)
            if not n.alive and n.cs == 0
        ]

    def successors(self, s: State) -> list:
        return [*self.sys.successors(s), *self._wrong(s)]

    def successors_labelled(self, s: State) -> list:
        return [*self.sys.successors_labelled(s), *((a, t, ()) for a, t in self._wrong(s))]


@pytest.mark.slow  # 2.6 CPU-s in a loaded default run (2026-11-29)
def test_dead_broker_memory_property_holds_and_catches_a_dead_broker_step() -> None:
    """``dead_broker_holds_no_process_memory`` holds on the model and fails, at the first
    crash, on a model in which a dead broker still takes a step."""
    c = ControllerConfig(**REJOIN)
    sys = build(c)
    props = [p for p in fidelity_properties(c, sys) if p.name == "dead_broker_holds_no_process_memory"]
    assert len(props) == 1
    ok = check_bfs(sys, props, model="controller", config=c)
    assert ok.exit_reason.value == "complete" and ok.violations == []
    bad = check_bfs(_DeadBrokerStartsShutdown(sys), props, model="controller", config=c)
    assert [v.property for v in bad.violations] == ["dead_broker_holds_no_process_memory"]
    assert bad.violations[0].trace[-1].action == "DeadBrokerShutdown"


class _UncountedRestart:
    """The model with a restart that is not counted against ``max_restarts`` (the measure's
    survivor ``broker.py:44``): a broker can crash and come back as often as crashes allow."""

    def __init__(self, sys: ControllerSystem) -> None:
        self.sys = sys

    def __getattr__(self, name: str) -> object:
        return getattr(self.sys, name)

    @staticmethod
    def _fix(s: State, a: object, t: State) -> State:
        return t._replace(restarts=s.restarts) if type(a).__name__ == "Restart" else t

    def successors(self, s: State) -> list:
        return [(a, self._fix(s, a, t)) for a, t in self.sys.successors(s)]

    def successors_labelled(self, s: State) -> list:
        return [(a, self._fix(s, a, t), labels) for a, t, labels in self.sys.successors_labelled(s)]


@pytest.mark.slow  # 1.4 CPU-s in a loaded default run (2026-11-29)
def test_fault_budget_property_holds_and_catches_an_uncounted_restart() -> None:
    """``faults_within_budget`` holds on the model and fails once a second restart opens a
    session beyond ``max_restarts + max_session_expiries``, although the counter says one."""
    c = load_config(ControllerConfig, "configs/controller-small.toml", ["max_restarts=1", "max_crashes=2"])
    sys = build(c)
    props = [p for p in fidelity_properties(c, sys) if p.name == "faults_within_budget"]
    assert len(props) == 1
    ok = check_bfs(sys, props, model="controller", config=c)
    assert ok.exit_reason.value == "complete" and ok.violations == []
    bad = check_bfs(_UncountedRestart(sys), props, model="controller", config=c)
    assert [v.property for v in bad.violations] == ["faults_within_budget"]
    assert bad.violations[0].trace[-1].action_kind == "Restart"


# both topics deleted under Kafka 2.x as written: a StopReplica(delete) sent to a broker's previous
# incarnation comes back with STALE_BROKER_EPOCH to the current controller's deletion callback
STALE_DELETION = ["liveness=false", "max_topic_deletions=2", "deletion_ignores_stale_broker_epoch=false"]
STALE_DELETION_STATES = 116254  # release entry controller-admin-delete-stale-broker-epoch


def _response_names_partition_0(monkeypatch: pytest.MonkeyPatch) -> None:
    """The measure's survivor ``replica_manager.py:69`` (be4a9d0; ``payload[0]`` made
    ``payload[-1]``): a stale StopReplica's error response names the request's ``callback`` flag
    (``True``, partition 0's bit) instead of its partitions."""
    from model.controller.replica_manager import ReplicaManager

    real = ReplicaManager.stop_replica_response

    def wrong(self: ReplicaManager, s: State, sender: int, d: int, mask: int, error: bool) -> State:
        return real(self, s, sender, d, True if error else mask, error)

    monkeypatch.setattr(ReplicaManager, "stop_replica_response", wrong)


@pytest.mark.slow  # 1.0 CPU-s in a loaded default run (2026-11-29)
def test_stop_replica_response_property_catches_a_response_naming_other_partitions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``stop_replica_response_answers_request`` fails, in 15 steps, once the error response to
    topic 1's StopReplica (partition 1) names partition 0: the controller would fail the wrong
    replica's deletion and leave partition 1's in ReplicaDeletionStarted."""
    c = load_config(ControllerConfig, "configs/controller-admin.toml", STALE_DELETION)
    _response_names_partition_0(monkeypatch)
    sys = build(c)
    props = [p for p in fidelity_properties(c, sys) if p.name == "stop_replica_response_answers_request"]
    assert len(props) == 1
    bad = check_bfs(sys, props, model="controller", config=c)
    assert [v.property for v in bad.violations] == ["stop_replica_response_answers_request"]
    assert len(bad.violations[0].trace) - 1 == 15
    assert bad.violations[0].trace[-1].action_kind == "Deliver"


class _ExpiryBelievesBroker0(Brokers):
    """The 907ad5d measure's survivor ``broker.py:83`` (``-1`` made ``0``): a broker that notices
    its session expired believes broker 0 is the controller until it reads /controller again."""

    def notice_expiry(self, s: State, b: int) -> tuple[Any, State]:
        a, t = super().notice_expiry(s, b)
        return a, t._replace(nodes=set_item(t.nodes, b, t.nodes[b]._replace(active_id=0)))


def test_controller_id_properties_hold_and_catch_an_id_not_read() -> None:
    """``new_session_knows_no_controller`` holds with a session expiry and fails, in 2 steps
    (broker 0's session expires, it notices), once a broker that notices its expiry believes
    broker 0, not nobody, is the controller: broker 0 then counts itself the active controller
    (ActiveControllerCount 1) with /controller gone. ``active_controller_id_from_zookeeper``
    holds there too (the noticed expiry is no controller step: it leaves that to the other)."""
    c = load_config(ControllerConfig, "configs/controller-small.toml", ["max_session_expiries=1"])
    names = ["active_controller_id_from_zookeeper", "new_session_knows_no_controller"]
    props = [p for p in fidelity_properties(c, build(c)) if p.name in names]
    assert [p.name for p in props] == names
    ok = check_bfs(build(c), props, model="controller", config=c)
    assert (ok.exit_reason.value, ok.violations, ok.distinct_states) == ("complete", [], 6205)
    bad = check_bfs(ControllerSystem(c, brokers=_ExpiryBelievesBroker0), props, model="controller", config=c)
    assert [(v.property, len(v.trace) - 1) for v in bad.violations] == [
        ("new_session_knows_no_controller", 2)
    ]
    assert bad.violations[0].trace[-1].action_kind == "SessionNotice"


class _ReadsTheWrongController(ControllerBase):
    """A controller step that takes the next broker's id, not the one /controller holds."""

    def commit(self, s: State, **node_changes: Any) -> State:
        if self.active_id >= 0 and self.active_id != s.nodes[self.me].active_id:
            self.active_id = (self.active_id + 1) % self.sys.nb
        return super().commit(s, **node_changes)


def test_active_controller_id_property_catches_an_id_not_read() -> None:
    """``active_controller_id_from_zookeeper`` fails at the first election once the id a broker
    learns is not the one /controller holds."""
    c = load_config(ControllerConfig, "configs/controller-small.toml", [])
    props = [p for p in fidelity_properties(c, build(c)) if p.name == "active_controller_id_from_zookeeper"]
    bad = check_bfs(
        ControllerSystem(c, controller=_ReadsTheWrongController), props, model="controller", config=c
    )
    assert [v.property for v in bad.violations] == ["active_controller_id_from_zookeeper"]
    assert bad.violations[0].trace[-1].action_kind == "ZkServe"


def test_controller_id_properties_only_where_the_id_is_read_at_once() -> None:
    """The 0.8 elector takes the id from a watch's data and a separate ZooKeeper response may be
    stale when it arrives: neither property is registered there; the older expiry handling keeps
    the id until its queued Expire runs: only the first is."""
    names = [
        {p.name for p in fidelity_properties(c, build(c))} & {"active_controller_id_from_zookeeper", "new_session_knows_no_controller"}
        for c in (ControllerConfig(), ControllerConfig(kafka_version="0.8"), ControllerConfig(zk_responses="separate"),
                  ControllerConfig(session_expiry_handling="queued"))
    ]  # fmt: skip
    assert [len(n) for n in names] == [2, 0, 0, 1] and names[3] == {"active_controller_id_from_zookeeper"}


def test_stop_replica_response_property_not_registered_without_deletions() -> None:
    """Without topic deletions no StopReplica has a callback: the property is not registered."""
    c = ControllerConfig()
    assert "stop_replica_response_answers_request" not in [p.name for p in fidelity_properties(c, build(c))]


@pytest.mark.slow
def test_stale_broker_epoch_deletion_holds_every_property() -> None:
    """The release entry ``controller-admin-delete-stale-broker-epoch`` holds every property, the
    response property included, in its pinned number of states (about 12 s)."""
    c = load_config(ControllerConfig, "configs/controller-admin.toml", STALE_DELETION)
    sys = build(c)
    props = spec.properties(c)
    assert "stop_replica_response_answers_request" in [p.name for p in props]
    ok = check_bfs(sys, props, model="controller", config=c)
    assert ok.exit_reason.value == "complete" and ok.violations == []
    assert ok.distinct_states == STALE_DELETION_STATES


def _remove_topic_keeps_leadership(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant of ``completeDeleteTopic``'s ``controllerContext.removeTopic``: the context keeps
    the deleted partitions' leadership, so later requests are built with them."""
    from model.controller.state import D_DEL_RESUME, D_DELETED, D_DELETED_AFTER_RESUME
    from model.controller.topic_deletion import TopicDeletionManager

    def keeps(self: TopicDeletionManager, c: object, ok: bool, t: int, rest: tuple) -> None:
        if self.kafka_controller.write_failed(c, ok, rest):
            return
        ctx = c.ctx  # type: ignore[attr-defined]
        c.ctx = ctx._replace(ineligible=tuple(x for x in ctx.ineligible if x != t))  # type: ignore[attr-defined]
        c.done |= D_DELETED  # type: ignore[attr-defined]
        if c.done & D_DEL_RESUME:  # type: ignore[attr-defined]
            c.done |= D_DELETED_AFTER_RESUME  # type: ignore[attr-defined]
        self.kafka_controller.run(c, rest)

    monkeypatch.setattr(TopicDeletionManager, "delete_topic_done", keeps)


@pytest.mark.slow
def test_no_request_for_a_deleted_topic_holds_and_catches_a_kept_leadership(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``no_request_for_a_deleted_topic`` holds on ``controller-admin`` with UpdateMetadata (its
    first 20,000 states; the release entry ``controller-admin-metadata`` runs it all), and fails,
    in 23 steps, once the context keeps a deleted topic's leadership: the next UpdateMetadata
    to every broker names the deleted partition (about 6 s)."""
    c = load_config(
        ControllerConfig, "configs/controller-admin.toml", ["liveness=false", "send_update_metadata=true"]
    )
    props = [p for p in fidelity_properties(c, build(c)) if p.name == "no_request_for_a_deleted_topic"]
    assert len(props) == 1
    ok = check_bfs(build(c), props, model="controller", config=c, max_states=20000)
    assert ok.violations == []
    _remove_topic_keeps_leadership(monkeypatch)
    bad = check_bfs(build(c), props, model="controller", config=c)
    assert [v.property for v in bad.violations] == ["no_request_for_a_deleted_topic"]
    assert len(bad.violations[0].trace) - 1 == 23


# release entry controller-admin-unclean-election-shutdown: an admin unclean election with a
# controlled shutdown, a crash and a restart
UNCLEAN_SHUTDOWN = [
    "brokers=2", "replication_factor=2", "max_crashes=1", "max_restarts=1", "max_session_expiries=0",
    "send_update_metadata=false", "max_admin_unclean_elections=1", "max_controlled_shutdowns=1",
]  # fmt: skip
UNCLEAN_SHUTDOWN_STATES = 182552


def _admin_unclean_elects(monkeypatch: pytest.MonkeyPatch, keep: tuple[int, ...]) -> None:
    """The fresh measure's survivors ``admin.py:117`` (an operand of the ``or`` dropped): of the
    leader conditions (-1, dead, shutting down) only those in ``keep`` elect; without the first,
    a leader of -1 is read as the last broker's (``ctx.live[-1]``) liveness."""
    from model.controller.admin import AdminWorkflows
    from model.controller.messages import S_ADMIN_UNCLEAN
    from model.controller.program import ElectLeaderForPartitions

    def elects(self: AdminWorkflows, c: object) -> None:
        ctx = c.ctx  # type: ignore[attr-defined]

        def invalid(leader: int) -> bool:
            why = (leader == -1, not ctx.live[leader], leader in ctx.shutting)
            return any(why[i] for i in keep)

        elect = tuple(
            p
            for p, z in enumerate(ctx.leaders)
            if z is not None
            and ctx.pstates[p] != PartitionState.NonExistentPartition
            and not c.is_topic_queued_up_for_deletion(p)  # type: ignore[attr-defined]
            and invalid(z.leader)
        )
        if elect:
            self.kafka_controller.run(c, (ElectLeaderForPartitions(S_ADMIN_UNCLEAN, elect),))

    monkeypatch.setattr(AdminWorkflows, "process_replica_leader_election_unclean", elects)


@pytest.mark.slow  # about 12 CPU-s
def test_admin_unclean_election_elects_every_leaderless_partition() -> None:
    """``admin_unclean_election_elects_leaderless`` and every other property hold on the release
    entry's configuration (its state count pinned)."""
    c = load_config(ControllerConfig, None, UNCLEAN_SHUTDOWN)
    good = check_bfs(build(c), spec.properties(c), model="controller", config=c, keep_going=True)
    assert good.distinct_states == UNCLEAN_SHUTDOWN_STATES and not good.violations


@pytest.mark.slow  # 3 to 6 CPU-s each
@pytest.mark.parametrize(("keep", "length"), [((1, 2), 23), ((0, 1), 8)])
def test_admin_unclean_election_property_catches_a_dropped_condition(
    monkeypatch: pytest.MonkeyPatch, keep: tuple[int, ...], length: int
) -> None:
    """The property fails when a leader of -1 (``keep = (1, 2)``, 23 steps; 20 before a restarted broker
    served requests only once registered, 273d784) or a shutting-down
    leader (``(0, 1)``, 8 steps) is not elected."""
    c = load_config(ControllerConfig, None, UNCLEAN_SHUTDOWN)
    _admin_unclean_elects(monkeypatch, keep)
    only = [p for p in spec.properties(c) if p.name == "admin_unclean_election_elects_leaderless"]
    bad = check_bfs(build(c), only, model="controller", config=c)
    assert [(v.property, v.length) for v in bad.violations] == [
        ("admin_unclean_election_elects_leaderless", length)
    ]


class _DropsWatchEvent(ZooKeeperServer):
    """A ZooKeeper server that never notifies the watchers of one event kind (``DROPPED``)."""

    DROPPED: type = ControllerChange

    def fire_watches(self, nodes: list[Any], ev: Any, who: str, skip: int = -1) -> None:
        if type(ev) is not self.DROPPED:
            super().fire_watches(nodes, ev, who, skip)


@pytest.mark.slow  # 1.3 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize(
    ("dropped", "steps", "kind"),
    [(ControllerChange, 6, "ZkServe"), (Reelect, 1, "SessionExpire"), (BrokerChange, 1, "SessionExpire")],
)
def test_zookeeper_watches_fire_holds_and_catches_a_dropped_notification(
    dropped: type, steps: int, kind: str
) -> None:
    """``zookeeper_watches_fire`` holds on controller-small with a session expiry and fails once
    ZooKeeper drops one kind of notification: a new controller's registration that tells nobody
    (the 907ad5d measure's survivor ``zookeeper.py:146``: every broker still learns the winner from
    its own failed create, so no other property sees it), a deleted /controller (``:169`` under
    0.8), a broker's ephemeral gone with its session."""
    c = load_config(ControllerConfig, "configs/controller-small.toml", ["max_session_expiries=1"])
    props = [p for p in fidelity_properties(c, build(c)) if p.name == "zookeeper_watches_fire"]
    assert len(props) == 1
    ok = check_bfs(build(c), props, model="controller", config=c)
    assert (ok.exit_reason.value, ok.violations, ok.distinct_states) == ("complete", [], 6205)
    mutant = type("Mutant", (_DropsWatchEvent,), {"DROPPED": dropped})
    bad = check_bfs(ControllerSystem(c, zookeeper=mutant), props, model="controller", config=c)
    assert [(v.property, len(v.trace) - 1) for v in bad.violations] == [("zookeeper_watches_fire", steps)]
    assert bad.violations[0].trace[-1].action_kind == kind


@pytest.mark.slow
def test_zookeeper_watches_fire_catches_the_0_8_resign_telling_nobody() -> None:
    """Under 0.8 the elector's resign deletes /controller (seed 000: ``deletePath``); with that
    delete's watch dropped (``zookeeper.py:169``) the property fails at the delete itself, where
    ``controller-0.8``'s expected violations (``controller_converges`` among them) hid it."""
    c = load_config(ControllerConfig, "configs/controller-0.8.toml", [])
    props = [p for p in fidelity_properties(c, build(c)) if p.name == "zookeeper_watches_fire"]
    ok = check_bfs(build(c), props, model="controller", config=c)
    assert (ok.exit_reason.value, ok.violations) == ("complete", [])
    mutant = type("Mutant", (_DropsWatchEvent,), {"DROPPED": Reelect})
    bad = check_bfs(ControllerSystem(c, zookeeper=mutant), props, model="controller", config=c)
    assert [v.property for v in bad.violations] == ["zookeeper_watches_fire"]


class _StaticUncleanCountedDynamic(PartitionStateMachine):
    """The 907ad5d measure's survivor ``state_machines.py:218:58`` (``1`` made ``2``): an unclean
    election under the static topic config is recorded as one under a dynamically enabled config."""

    def elect_leader_for_partitions_written(self, c: ControllerBase, *args: Any) -> None:
        before = c.history & 1
        super().elect_leader_for_partitions_written(c, *args)
        if c.history & 1 and not before:
            c.done |= D_UNCLEAN_DYN


def test_witnesses_follow_their_requests_catches_a_flag_set_without_its_request() -> None:
    """``witnesses_follow_their_requests`` holds on the release's static unclean entry and fails once
    its unclean election is recorded as a dynamically enabled one: no admin ever set the topic
    config, yet a witness reading the flag would count the dynamic scenario covered."""
    c = load_config(
        ControllerConfig, "configs/controller-small.toml", ["unclean_leader_election=true", "max_records=1"]
    )
    props = [p for p in fidelity_properties(c, build(c)) if p.name == "witnesses_follow_their_requests"]
    assert len(props) == 1
    ok = check_bfs(build(c), props, model="controller", config=c)
    assert (ok.exit_reason.value, ok.violations) == ("complete", [])
    bad = check_bfs(
        ControllerSystem(c, partition_state_machine=_StaticUncleanCountedDynamic),
        props,
        model="controller",
        config=c,
    )
    assert [v.property for v in bad.violations] == ["witnesses_follow_their_requests"]
