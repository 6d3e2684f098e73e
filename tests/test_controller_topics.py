"""Topic creation after start in the controller model (issue 3 item 9; seed 001 新建 Topic,
seed 003 initializeLeaderAndIsrForPartitions): config key ``topics_created_later``."""

from __future__ import annotations

from collections import deque

import pytest

import invariants.controller as spec
from explorer.config import ConfigError, load_config
from explorer.engines.bfs import check_bfs
from model.controller import ControllerConfig, ControllerSystem, State
from model.controller.actions import AdminCreateTopic
from model.state_machines import PartitionState, ReplicaState

BASE = [
    "brokers=2",
    "topics=2",
    "replication_factor=2",
    "topics_created_later=1",
    "max_restarts=0",
    "max_session_expiries=0",
]
NO_FAULT = [*BASE, "max_crashes=0"]
ONE_CRASH = [*BASE, "max_crashes=1"]
# topic 1's only replica is broker 1: when broker 1 is down at creation no replica is live
LONE_REPLICA = [*ONE_CRASH, "assignment=[[0, 1], [1]]"]

NO_FAULT_STATES = 223
ONE_CRASH_STATES = 3849
LONE_REPLICA_STATES = 554
LONE_REPLICA_RESTART_STATES = 36079

_P = PartitionState
_R = ReplicaState


def _config(overrides: list[str]) -> ControllerConfig:
    return load_config(ControllerConfig, None, overrides)


def run(overrides: list[str]):
    c = _config(overrides)
    return check_bfs(spec.build(c), spec.properties(c), model="controller", config=c, keep_going=True)


def explore(overrides: list[str]) -> tuple[ControllerSystem, list[tuple[State, object, State]]]:
    """Every (s, action, t) of the reachable graph (small configurations only)."""
    sys = ControllerSystem(_config(overrides))
    init = sys.init_states()[0]
    seen = {init}
    todo = deque([init])
    edges = []
    while todo:
        s = todo.popleft()
        for a, t in sys.successors(s):
            edges.append((s, a, t))
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return sys, edges


def _known_topics(sys: ControllerSystem, s: State, b: int) -> int:
    ctx = s.nodes[b].ctx
    return sum(1 for t in range(sys.cfg.topics) if ctx.pstates[t * sys.ppt] != _P.NonExistentPartition)


def test_default_off_keeps_action_kinds() -> None:
    sys = ControllerSystem(ControllerConfig(brokers=2))
    assert "AdminCreateTopic" not in sys.action_kinds()
    assert all(not isinstance(a, AdminCreateTopic) for a, _ in sys.successors(sys.init_states()[0]))


def test_topic_absent_at_start() -> None:
    sys = ControllerSystem(_config(NO_FAULT))
    s = sys.init_states()[0]
    assert s.zk.created == 0
    assert s.zk.parts[0] is not None and s.zk.parts[1] is None
    ctx = s.nodes[0].ctx
    assert ctx.pstates == (_P.OnlinePartition, _P.NonExistentPartition)
    assert ctx.rstates[1] == (_R.NonExistentReplica, _R.NonExistentReplica)
    assert all(n.reps[1].leader == -1 for n in s.nodes)
    acts = [a for a, _ in sys.successors(s) if isinstance(a, AdminCreateTopic)]
    assert acts == [AdminCreateTopic(1)]
    assert "AdminCreateTopic" in sys.action_kinds()
    assert str(acts[0]) == "admin: creates topic 1 (/brokers/topics/1 with its assignment)"


def test_no_fault_golden() -> None:
    r = run(NO_FAULT)
    assert r.exit_reason.value == "complete"
    assert r.violations == []
    assert r.distinct_states == NO_FAULT_STATES
    assert "topic_created_online" in r.witnesses


def test_one_crash_golden() -> None:
    r = run(ONE_CRASH)
    assert r.exit_reason.value == "complete"
    assert r.violations == []
    assert r.distinct_states == ONE_CRASH_STATES
    assert set(r.witnesses) == {"failover", "topic_created_online"}


def test_state_machine_transitions_observed() -> None:
    """The controller takes topic 1's partition NonExistent -> New -> Online and its replicas
    NonExistentReplica -> NewReplica -> OnlineReplica; leader = first live replica, ISR = live."""
    sys, edges = explore(NO_FAULT)
    pt: set = set()
    rt: set = set()
    for s, _, t in edges:
        for b in range(sys.nb):
            c0, c1 = s.nodes[b].ctx, t.nodes[b].ctx
            if c0 is None or c1 is None:
                continue
            if c0.pstates[1] != c1.pstates[1]:
                pt.add((c0.pstates[1], c1.pstates[1]))
            for i in range(2):
                if c0.rstates[1][i] != c1.rstates[1][i]:
                    rt.add((c0.rstates[1][i], c1.rstates[1][i]))
        assert not t.invalid
    assert pt == {(_P.NonExistentPartition, _P.NewPartition), (_P.NewPartition, _P.OnlinePartition)}
    assert rt == {(_R.NonExistentReplica, _R.NewReplica), (_R.NewReplica, _R.OnlineReplica)}
    # the creation writes leader = first live replica (assignment [1, 0]), ISR = live replicas
    created = {t.zk.parts[1] for _, _, t in edges if t.zk.parts[1] is not None}
    assert min(created, key=lambda z: z.version)[:4] == (1, 0, (1, 0), 1)
    # both replicas get the leader (LeaderAndIsr to the new ISR)
    assert any(all(n.reps[1].leader == 1 and n.reps[1].epoch == 0 for n in t.nodes) for _, _, t in edges)


def test_quiet_controller_knows_every_created_topic() -> None:
    """A live active controller with nothing queued or in flight knows exactly the topics in
    /brokers/topics, also after a failover (the failover context read includes created topics)."""
    sys, edges = explore(ONE_CRASH)
    after_failover = False
    for _, _, t in edges:
        existing = sys.topics_at_start + t.zk.created
        for b, n in enumerate(t.nodes):
            if n.alive and n.ctx is not None:
                assert _known_topics(sys, t, b) <= existing
                if n.pending is None and not n.events and not n.zk_out and not n.zk_in:
                    assert _known_topics(sys, t, b) == existing
                    if n.ctx.epoch > 1 and t.zk.created == 1:
                        after_failover = True
    assert after_failover


def test_crash_during_creation_first_live_replica_leads() -> None:
    """Broker 1 (first in topic 1's assignment [1, 0]) is down when the controller creates the
    partition: broker 0, the first live replica, leads with ISR [0]."""
    r = run(ONE_CRASH)
    assert r.violations == []
    _, edges = explore(ONE_CRASH)
    inits = set()
    for s, _, t in edges:
        if s.zk.parts[1] is None and t.zk.parts[1] is not None:
            inits.add((t.zk.parts[1].leader, t.zk.parts[1].isr, t.nodes[1].alive))
    assert (0, (0,), False) in inits  # broker 1 dead and known dead: 0 leads alone
    assert (1, (1, 0), True) in inits
    # broker 1 dead but not yet noticed by the controller: it is named leader, then re-elected
    assert (1, (1, 0), False) in inits


@pytest.mark.slow  # over a CPU-second: the ci selection runs it
def test_no_live_replica_stays_new() -> None:
    """seed 003: "No assigned replica is alive": the partition stays NewPartition (no state znode)
    and a later broker startup initializes it."""
    r = run(LONE_REPLICA)
    assert r.exit_reason.value == "complete" and r.violations == []
    assert r.distinct_states == LONE_REPLICA_STATES
    _, edges = explore(LONE_REPLICA)
    stuck = [
        t
        for _, _, t in edges
        if t.zk.created == 1
        and not t.nodes[1].alive
        and t.nodes[0].ctx is not None
        and t.nodes[0].pending is None
        and not t.nodes[0].events
        and t.nodes[0].ctx.live[1] == 0
        and t.nodes[0].ctx.pstates[1] != _P.NonExistentPartition
        and t.zk.parts[1] is None
    ]
    assert stuck
    for t in stuck:
        # the create was never sent (no live replica): the partition stays NewPartition, its
        # replica went NewReplica -> OnlineReplica (2.x onNewPartitionCreation does so regardless)
        assert t.nodes[0].ctx.pstates[1] == _P.NewPartition
        assert t.nodes[0].ctx.rstates[1] == (_R.OnlineReplica,)
        assert not t.invalid
    # with a restart, broker 1's startup (onBrokerStartup -> triggerOnlinePartitionStateChange)
    # brings the partition online
    r = run([*LONE_REPLICA, "max_restarts=1"])
    assert r.exit_reason.value == "complete" and r.violations == []
    assert r.distinct_states == LONE_REPLICA_RESTART_STATES
    assert "topic_created_online" in r.witnesses


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["topics=1", "topics_created_later=2"], "topics_created_later"),
        (["topics_created_later=-1"], "topics_created_later"),
    ],
)
def test_config_errors(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(ControllerConfig, None, overrides)
