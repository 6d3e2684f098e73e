"""What epoch fencing can hide: the controller model's convergence properties.

Fencing makes a stale controller's writes fail, so the safety properties of
``invariants/controller.py`` hold even when a controller keeps acting after it was
deposed, when a broker's view silently stays stale, or when the controller's context
drifts from ZooKeeper. These properties read what Kafka's users observe once the
cluster is *quiet*: every controller event processed, no continuation parked, no
ZooKeeper request or response and no controller request in flight, every live broker's
session held by the server, every dead broker's session expired on the server, no
controlled shutdown under way. In a quiet state every fault has been handled, so the
cluster must have converged:

* ``controller_converges``: exactly one broker acts as controller, it owns
  ``/controller`` with the epoch in ``/controller_epoch``, and every live broker's
  ``activeControllerId`` names it (seed 004 ``elect``; seed 001: 集群中只有一个 Controller);
* ``broker_views_match_zookeeper``: every live assigned replica knows the partition's
  leader and leader epoch that ZooKeeper holds (seed 001: the controller "将最新的
  元数据信息推送给其他所有的 broker");
* ``leader_isr_matches_zookeeper``: every live leader (at ZooKeeper's leader epoch) caches
  ZooKeeper's ISR and zkVersion, on which its next ISR change is conditioned (KAFKA-1382);
* ``metadata_cache_matches_zookeeper`` (``send_update_metadata`` only): every live
  broker's metadata cache holds the registered brokers as alive and ZooKeeper's leader,
  leader epoch and ISR of every partition (seed 001 ``onBrokerStartup``: UpdateMetadata to
  every live broker "这样的话其他的节点就会知道当前的 Broker 已经上线了"; seed 004
  ``onControllerFailover``; ``IsrChangeNotification``: UpdateMetadata of the changed ISR);
* ``context_matches_zookeeper``: the active controller's ``ControllerContext`` (live
  brokers with their epochs, each partition's leader, leader epoch, ISR and zkVersion)
  equals ZooKeeper
  (seed 004 ``onControllerFailover`` reads it; every later change goes through it);
* ``replica_states_match_liveness``: the controller's ReplicaStateMachine agrees with the
  brokers it knows: no replica of a dead broker is OnlineReplica, none of a live broker
  OfflineReplica (seed 001 ``onBrokerFailure`` / ``onBrokerStartup``);
* ``no_leaderless_partition_when_quiet``: no partition (of a topic not queued for
  deletion) is without a live leader while a live ISR member exists (seed 002
  ``OfflinePartition``: the controller elects when a leader's broker fails);
* ``no_dead_broker_in_written_isr`` (transition): an offline-partition election or a
  new partition's initialisation never writes an ISR holding a broker the controller's
  context knows is dead (seed 003 ``leaderForOffline``: ``isr.filter(liveReplicas)``).

Three more read what a deposed controller *does*, since fencing makes its writes harmless
and the brokers' epoch check its requests (so no quiet state shows the damage):

* ``context_only_while_active``: a broker holds a controller context only while its
  ``activeControllerId`` names itself (2.x ``isActive = activeControllerId == brokerId``;
  ``maybeResign``: a controller that reads that ``/controller`` moved resigns, seed 004);
* ``resigned_controller_sends_nothing`` (transition): no controller request is delivered
  from a broker that has resigned (seed 004 ``onControllerResignation``:
  ``controllerChannelManager.shutdown()``; seed 001: 关闭相应的发送线程和清空请求队列);
* ``no_write_over_newer_controller_state``: no controller has a
  partition-state write queued that is conditioned on a state a newer controller wrote (seed 003
  ``doElectLeaderForPartitions``: "aborted leader election ... already written by another
  controller").

>>> from invariants.mutants.controller import ControllerConfig, build
>>> s = build(ControllerConfig(brokers=2)).init_states()[0]
>>> quiet(s), controller_converges(s)
(True, True)
"""

from __future__ import annotations

from typing import Any

from invariants.controller_guards import gated
from model.controller import ControllerSystem, KafkaVersion, State
from model.controller.effects import Effect, does, zk_request_of
from model.controller.messages import (
    S_ADMIN_UNCLEAN,
    S_CONTROLLED_SHUTDOWN,
    S_INIT,
    S_OFFLINE,
    S_PREFERRED,
    UpdateLeaderAndIsr,
)
from model.election import NO_LEADER
from model.state_machines import PartitionState, ReplicaState

__all__ = [
    "broker_views_match_zookeeper",
    "context_matches_zookeeper",
    "context_only_while_active",
    "controller_converges",
    "leader_isr_matches_zookeeper",
    "metadata_cache_matches_zookeeper",
    "no_dead_broker_in_written_isr",
    "no_election_for_a_topic_being_deleted",
    "no_leaderless_partition_when_quiet",
    "no_write_over_newer_controller_state",
    "partition_offline_only_without_live_leader",
    "quiet",
    "replica_states_match_liveness",
    "resigned_controller_sends_nothing",
    "serving",
    "shutting_down_brokers_are_live",
]


def quiet(s: State) -> bool:
    """The controller plane has drained (see the module docstring); the data plane (fetches,
    produce) may still run.

    >>> from invariants.mutants.controller import ControllerConfig, build
    >>> s = build(ControllerConfig(brokers=2)).init_states()[0]
    >>> quiet(s), quiet(s._replace(chans=((), ((1,),), (), ())))
    (True, False)
    """
    for q in s.chans:
        if q:
            return False
    for n in s.nodes:
        if n.alive:
            if (
                n.events
                or n.pending is not None
                or n.zk_out
                or n.zk_in
                or n.expired
                or n.session == 0
                or n.cs
            ):
                return False
        elif n.session != 0 and not n.expired:
            return False  # the server has not expired the dead broker's session yet
    return True


#: the last state ``serving`` judged and its answer: the convergence properties each ask it of
#: the same state in turn, so it is computed once per state (the state is kept alive here, so
#: ``is`` cannot match a new state at a reused address)
_SERVING_LAST: list[Any] = [None, False]


def serving(s: State) -> bool:
    """Quiet, and some live broker holds a session (there is a cluster to converge).

    >>> from invariants.mutants.controller import ControllerConfig, build
    >>> s = build(ControllerConfig(brokers=2)).init_states()[0]
    >>> serving(s), serving(s._replace(chans=((), ((1,),), (), ()))), serving(s)
    (True, False, True)
    """
    last = _SERVING_LAST
    if s is last[0]:
        return last[1]
    v = quiet(s) and any(n.alive for n in s.nodes)
    last[0], last[1] = s, v
    return v


@gated(serving)
def shutting_down_brokers_are_live(s: State) -> bool:
    """When quiet, every broker the active controller counts as shutting down is live: a
    broker that dies (or stops after its controlled shutdown) leaves
    ``shuttingDownBrokerIds`` in ``onBrokerFailure`` (Kafka 2.x: ``deadBrokersThatWereShuttingDown``,
    ``shuttingDownBrokerIds.remove``; the seeds name only the set, seed 002's controlled shutdown
    election), or a restarted broker would stay barred from leadership.

    >>> from invariants.mutants.controller import ControllerConfig, build
    >>> shutting_down_brokers_are_live(build(ControllerConfig(brokers=2)).init_states()[0])
    True
    """
    return all(
        ctx.live[b]
        for n in s.nodes
        if n.alive and (ctx := n.ctx) is not None and ctx.shutting
        for b in ctx.shutting
    )


@gated(serving)
def controller_converges(s: State) -> bool:
    """When quiet, exactly one live broker acts as controller, it owns ``/controller`` with its
    session (or ``/controller`` names it under a session ZooKeeper expired and kept, which no
    broker can delete: ``faults/orphaned_session.py``) and the current ``/controller_epoch``,
    and every live broker's ``activeControllerId`` names it."""
    active = [b for b, n in enumerate(s.nodes) if n.alive and n.ctx is not None]
    if len(active) != 1:
        return False
    b = active[0]
    n = s.nodes[b]
    ctx = n.ctx
    c = s.zk.controller
    # /controller names b under another session only when that session's expiry left it
    if ctx is None or c is None or c[0] != b or ctx.epoch != s.zk.epoch:
        return False
    return all(m.active_id == b for m in s.nodes if m.alive)


def broker_views_match_zookeeper(sys: ControllerSystem) -> Any:
    ppt = sys.ppt

    @gated(serving)
    def check(s: State) -> bool:
        """When quiet, every live replica of a partition (of a topic not queued for deletion)
        knows ZooKeeper's leader and leader epoch of it."""
        zk = s.zk
        for p, z in enumerate(zk.parts):
            if z is None or (p // ppt) in zk.delete_topics:
                continue
            for r in zk.ar[p]:
                n = s.nodes[r]
                if not n.alive:
                    continue
                rep = n.reps[p]
                if rep.leader != z.leader or rep.epoch != z.leader_epoch:
                    return False
        return True

    return check


def leader_isr_matches_zookeeper(sys: ControllerSystem) -> Any:
    ppt = sys.ppt

    @gated(serving)
    def check(s: State) -> bool:
        """When quiet, every live broker that leads a partition (of a topic not queued for
        deletion) at the leader and leader epoch ZooKeeper holds caches ZooKeeper's ISR and
        zkVersion of it: the leader's ``Partition.inSyncReplicas`` and ``zkVersion``, which its
        next ISR change is conditioned on (KAFKA-1382: a leader whose retried ISR write met
        BadVersion kept the old ones, and every later ISR write of its failed)."""
        zk = s.zk
        nodes = s.nodes
        for p, z in enumerate(zk.parts):
            if z is None or z.leader < 0 or (p // ppt) in zk.delete_topics:
                continue
            n = nodes[z.leader]
            if not n.alive:
                continue
            r = n.reps[p]
            if r.leader == z.leader and r.epoch == z.leader_epoch and (r.zkv != z.version or r.isr != z.isr):
                return False
        return True

    return check


def metadata_cache_matches_zookeeper(sys: ControllerSystem) -> Any:
    ppt = sys.ppt
    np_ = sys.np

    @gated(serving)
    def check(s: State) -> bool:
        """When quiet, every live broker's metadata cache holds the registered brokers as alive,
        and ZooKeeper's leader, leader epoch and ISR of every existing partition (of a topic not
        queued for deletion)."""
        zk = s.zk
        live = tuple(b for b, reg in enumerate(zk.brokers) if reg is not None)
        for n in s.nodes:
            if not n.alive:
                continue
            if n.mc_live != live:
                return False
            cache = n.mc_parts or (None,) * np_
            for p, z in enumerate(zk.parts):
                if z is None or (p // ppt) in zk.delete_topics or not sys.present(zk, p):
                    continue
                if cache[p] != (z.leader, z.leader_epoch, z.isr):
                    return False
        return True

    return check


def context_matches_zookeeper(sys: ControllerSystem) -> Any:
    # Kafka 0.8's controller has no /isr_change_notification (KAFKA-1367, fixed in 0.9): its
    # context learns a leader's ISR change only when it next reads the partition, so under
    # ``kafka_version = "0.8"`` the context's leader and leader epoch are compared, not its ISR
    isr_tracked = sys.cfg.kafka_version is not KafkaVersion.KAFKA_0_8

    @gated(serving)
    def check(s: State) -> bool:
        """When quiet, the active controller's context holds ZooKeeper's live brokers (with their
        epochs) and every existing partition's state as ZooKeeper has it: leader, leader epoch,
        ISR, controller epoch and zkVersion.

        Leaders change the ISR without the controller, which learns it from
        ``/isr_change_notification`` (``updateLeaderAndIsrCache``): one sequential child per
        change, and the handler deletes only those it read, so none is lost."""
        zk = s.zk
        live = tuple(0 if e is None else e[1] for e in zk.brokers)
        for n in s.nodes:
            ctx = n.ctx
            if not n.alive or ctx is None:
                continue
            if ctx.live != live:
                return False
            for p, z in enumerate(zk.parts):
                if z is None or not sys.present(zk, p):
                    continue
                c = ctx.leaders[p]
                if c != z and (isr_tracked or c is None or c[:2] != z[:2]):
                    return False
        return True

    return check


def replica_states_match_liveness(sys: ControllerSystem) -> Any:
    ppt = sys.ppt
    rindex = sys.rindex
    # partitions that exist from the start: onNewPartitionCreation moves every new replica to
    # OnlineReplica, a dead broker's too (Kafka 2.x doHandleStateChanges does not look at
    # liveness there), so a partition created while a broker is down starts out of step
    checked = tuple(p for p in range(sys.np) if p not in sys.added and p // ppt < sys.topics_at_start)

    @gated(serving)
    def check(s: State) -> bool:
        """When quiet, the active controller's replica state machine agrees with the brokers it
        knows: no assigned replica of a dead broker is OnlineReplica and none of a live broker
        is OfflineReplica (partitions that exist from the start, of topics not queued for
        deletion)."""
        for n in s.nodes:
            ctx = n.ctx
            if not n.alive or ctx is None:
                continue
            for p in checked:
                if ctx.pstates[p] == PartitionState.NonExistentPartition or (p // ppt) in ctx.deleting:
                    continue
                row = ctx.rstates[p]
                z = ctx.leaders[p]
                for r in ctx.ar[p]:
                    rs = row[rindex[p][r]]
                    if ctx.live[r]:
                        if rs == ReplicaState.OfflineReplica:
                            return False
                    elif rs == ReplicaState.OnlineReplica and not (z is not None and z.isr == (r,)):
                        # a dead broker's replica may be OnlineReplica as its partition's only
                        # ISR member (which doRemoveReplicasFromIsr keeps, and a new controller's
                        # startup before Kafka 2.3 does not even try): a reassignment counts it
                        # in sync (areReplicasInIsr reads only the ISR) and its step 5 moves RAR
                        # to OnlineReplica without looking at liveness (KAFKA-4214's fix lets a
                        # failover resume a reassignment whose new replica is down)
                        return False
        return True

    return check


def no_leaderless_partition_when_quiet(sys: ControllerSystem) -> Any:
    ppt = sys.ppt

    cfg = sys.cfg
    static_unclean = tuple(cfg.unclean(p) for p in range(sys.np))
    replicas = sys.replicas

    @gated(serving)
    def check(s: State) -> bool:
        """When quiet, every partition (of a topic not queued for deletion) with a live,
        registered ISR member has a live leader; and so does one with a live, registered
        assigned replica when its topic allows unclean election (statically or since
        ``TopicUncleanLeaderElectionEnable``)."""
        zk = s.zk

        def up(b: int) -> bool:
            n = s.nodes[b]
            reg = zk.brokers[b]
            return n.alive and reg is not None and reg[0] == n.session

        for p, z in enumerate(zk.parts):
            if z is None or (p // ppt) in zk.delete_topics:
                continue
            if z.leader != NO_LEADER and up(z.leader):
                continue
            if any(up(r) for r in z.isr):
                return False
            unclean = static_unclean[p] or (p // ppt) in zk.unclean_dyn
            if unclean and any(up(r) for r in (zk.ar[p] if zk.ar else replicas[p])):
                return False
        return True

    return check


def no_dead_broker_in_written_isr(s: State, a: Any, t: State) -> bool:
    """No offline-partition election or new-partition initialisation lands with an ISR holding
    a broker the writing controller's context knows is dead (seed 003 ``leaderForOffline``:
    ``isr.filter(liveReplicas)``; ``initializeLeaderAndIsrForPartitions``: the live replicas).

    Checked when the write lands: the controller is parked on the write's response from the
    moment it sends it, so its context is the one it wrote with. The other writes keep the
    ISR they read (``newLeader``, an epoch bump) or remove one replica
    (``doRemoveReplicasFromIsr``), so they may carry a broker whose death the controller has
    not handled yet, as Kafka's do."""
    req = zk_request_of(a)
    if type(req) is not UpdateLeaderAndIsr or req.strategy not in (S_OFFLINE, S_INIT):
        return True
    ctx = s.nodes[a.broker].ctx
    if ctx is None:
        return True
    before, after = s.zk.parts, t.zk.parts
    live = ctx.live
    return all(after[p] == before[p] or all(live[r] for r in z.isr) for p, z in a.req.writes)


def context_only_while_active(s: State) -> bool:
    """No live broker holds a controller context while its ``activeControllerId`` names another
    broker (or none): 2.x's ``isActive`` is ``activeControllerId == config.brokerId``, and
    ``maybeResign`` resigns a controller that reads that ``/controller`` moved.

    Not for the 0.8 elector, whose ``LeaderChangeListener`` sets ``leaderId`` without resigning.

    >>> from invariants.mutants.controller import ControllerConfig, build
    >>> s = build(ControllerConfig(brokers=2)).init_states()[0]
    >>> context_only_while_active(s)
    True
    >>> n = s.nodes[0]
    >>> context_only_while_active(s._replace(nodes=(n._replace(active_id=1), s.nodes[1])))
    False
    """
    for b, n in enumerate(s.nodes):  # noqa: SIM110 - a loop, not all(): checked on every state
        if n.alive and n.ctx is not None and n.active_id != b:
            return False
    return True


def resigned_controller_sends_nothing(s: State, a: Any, t: State) -> bool:
    """No controller request is delivered from a broker without a controller context (one that
    resigned, or never was controller): ``onControllerResignation`` shuts the
    ``ControllerChannelManager`` and its queues go with it.

    >>> from invariants.mutants.controller import ControllerConfig, build
    >>> from model.controller.actions import Deliver
    >>> s = build(ControllerConfig(brokers=2)).init_states()[0]
    >>> resigned_controller_sends_nothing(s, Deliver(0, 1, (0, 1, 1, ())), s)
    True
    >>> resigned_controller_sends_nothing(s, Deliver(1, 0, (0, 1, 1, ())), s)
    False
    """
    if not does(a, Effect.DELIVERS_CONTROLLER_REQUEST):
        return True
    return s.nodes[a.sender].ctx is not None


def no_write_over_newer_controller_state(s: State) -> bool:
    """No controller has sent a partition-state update conditioned on a state znode that a
    controller of a newer epoch wrote (``doElectLeaderForPartitions`` / ``doRemoveReplicasFromIsr``
    abort: "already written by another controller").

    Read on the requests queued in every session: a write conditioned on the znode's current
    zkVersion was decided on that very state (every write raises the version), so a current
    state with a newer controller epoch than the writer's means the writer read it and went on.

    >>> from invariants.mutants.controller import ControllerConfig, build
    >>> no_write_over_newer_controller_state(build(ControllerConfig(brokers=2)).init_states()[0])
    True
    """
    zk_parts = s.zk.parts
    for n in s.nodes:
        for req in n.zk_out:
            if type(req) is not UpdateLeaderAndIsr or req.create:
                continue  # not a partition-state update (or a creation, conditioned on absence)
            for p, z in req.writes:
                cur = zk_parts[p]
                if cur is not None and cur.version == z.version and cur.ctl_epoch > req.controller_epoch:
                    return False
    return True


def partition_offline_only_without_live_leader(sys: ControllerSystem):
    """The check of ``partition_offline_only_without_live_leader`` for ``sys``'s configuration."""
    ppt = sys.ppt
    on, off = PartitionState.OnlinePartition, PartitionState.OfflinePartition

    def check(s: State, a: Any, t: State) -> bool:
        """A partition goes from OnlinePartition to OfflinePartition in a controller's context
        only when its leader, as that context has it, is no live broker (or none), or its topic
        is queued for deletion: ``onBrokerFailure`` moves to OfflinePartition only
        ``partitionsWithOfflineLeader`` (seed 001: 180; seed 002: the leader's broker is not in
        ``liveOrShuttingDownBrokerIds``), ``onTopicDeletion`` those of the deleted topic. A
        partition with a live leader is moved only by a reassignment, a preferred election or
        a controlled shutdown, each of which keeps it OnlinePartition.

        It relates two parts of the controller's state (the partition state machine and its
        live brokers) in the step that changes the first, so it needs no history: a partition
        Offline since a controller's start whose leader then restarts is elected again (by the
        offline strategy, maybe to another replica), which is no Online -> Offline step."""
        for n, m in zip(s.nodes, t.nodes, strict=True):
            c, d = n.ctx, m.ctx
            if c is None or d is None or c is d or c.pstates is d.pstates or c.epoch != d.epoch:
                continue
            for p, (was, now) in enumerate(zip(c.pstates, d.pstates, strict=True)):
                if was is not on or now is not off or (p // ppt) in d.deleting:
                    continue
                z = d.leaders[p]
                if z is not None and z.leader != NO_LEADER and d.live[z.leader]:
                    return False
        return True

    return check


#: the strategies of the leader elections a topic queued for deletion must not get (the other
#: partition-state writes create a partition or take a replica out of the ISR; a reassignment's
#: election goes on: a topic with a reassignment in progress is queued but ineligible, and its
#: deletion waits for the reassignment, whose steps do not look at the deletion queue)
_ELECTIONS = frozenset({S_OFFLINE, S_PREFERRED, S_CONTROLLED_SHUTDOWN, S_ADMIN_UNCLEAN})


def no_election_for_a_topic_being_deleted(sys: ControllerSystem):
    """The check of ``no_election_for_a_topic_being_deleted`` for ``sys``'s configuration."""
    ppt = sys.ppt

    def check(s: State, a: Any, t: State) -> bool:
        """No leader election lands for a partition whose topic the writing controller has
        queued for deletion: ``triggerOnlinePartitionStateChange`` filters them out
        (``isTopicQueuedUpForDeletion``), as do ``fetchPendingPreferredReplicaElections``, the
        auto rebalance, ``doControlledShutdown``'s ``partitionsToActOn`` and an admin's
        ElectLeaders (seed 002). A reassignment's own election is left out: one in progress
        makes the topic ineligible for deletion and runs to its end (seed 001).

        Checked when the write lands, against the context the controller wrote with (it is
        parked on the write's response from the moment it sends it, and only a processed
        TopicDeletion event changes the queue)."""
        req = zk_request_of(a)
        if type(req) is not UpdateLeaderAndIsr or req.strategy not in _ELECTIONS:
            return True
        ctx = s.nodes[a.broker].ctx
        if ctx is None or not ctx.deleting or t.zk.parts is s.zk.parts:
            return True
        return all(p // ppt not in ctx.deleting for p, _z in a.req.writes)

    return check
