"""Properties found by a probe of plausible one-line controller mistakes (issue 35,
``docs/mutation.md``, "A probe of plausible mistakes"): each reads what Kafka writes or sends at
the step where it does so, named after the Kafka method that guarantees it.

* ``controlled_shutdown_isr_excludes_shutting_down`` (transition): a controlled-shutdown
  election writes the ISR it read minus the brokers shutting down (seed 002
  ``leaderForControlledShutdown``: ``newIsr = isr.filter(replica =>
  !shuttingDownBrokers.contains(replica))``), so no producer with acks=all waits on a broker
  that is leaving;
* ``controlled_shutdown_answered_after_followers_offline`` (transition): a controlled shutdown
  is answered only once the broker's follower replicas are out of the ISR in the answering
  controller's context (Kafka 2.x ``doControlledShutdown``: the partitions it follows go
  ``OfflineReplica``, ``doRemoveReplicasFromIsr``, before the response; seed 000's diagram [4]:
  OnlineReplica -> OfflineReplica removes the replica from the ISR), unless it is the ISR's last
  member or still leads (its election found no other leader);
* ``no_replica_deletion_while_reassigning`` (transition): no controller starts deleting the
  replicas of a partition it is reassigning (seed 001, TopicDeletion: topics with a partition
  being reassigned go into ``topicsIneligibleForDeletion``; reassignment: "将该 Topic 标记为
  不可删除状态"), so the reassignment's new replicas are not deleted under it;
* ``elected_leader_is_live`` (transition): a partition-state write a controller lands names, as
  a new leader, only a broker that controller counts live (seed 002: every election algorithm,
  offline, reassignment, preferred and controlled shutdown, picks from ``liveReplicas``;
  ``initializeLeaderAndIsrForPartitions`` from the live assigned replicas), so no partition is
  handed to a broker the controller knows is gone;
* ``controlled_shutdown_skips_single_replica_partitions`` (transition): a controller processing
  a controlled shutdown leaves the partitions with a single assigned replica alone, no election
  read and no StopReplica for them (seed 002: "这里的选举会将副本数量==1的分区给过滤掉";
  Kafka 2.x ``doControlledShutdown``: ``partitionReplicaAssignment(partition).size > 1``); they
  lose their leader only when the broker is gone;
* ``controlled_shutdown_completes_after_answer`` (transition): a broker ends its controlled
  shutdown and stops only once no controller holding a context still has its request queued
  (Kafka 2.x ``KafkaServer.controlledShutdown`` waits for the ControlledShutdownResponse, retrying
  while the controller lives), so the leaderships it holds are moved before it stops.
"""

from __future__ import annotations

from typing import Any

from explorer.core import Property, transition
from invariants.controller_guards import completes_shutdown, controller_stepped, zk_changed
from model.controller import ControllerSystem, State
from model.controller.effects import (
    CONTROLLER_STEPS,
    Effect,
    does,
    does_any,
    processed_event_of,
    zk_request_of,
)
from model.controller.events import ControlledShutdown
from model.controller.messages import (
    S_ADMIN_UNCLEAN,
    S_CONTROLLED_SHUTDOWN,
    S_EPOCH,
    S_OFFLINE,
    S_REMOVE,
    ControlledShutdownResponse,
    GetTopicPartitionStates,
    StopReplicaRequest,
    UpdateLeaderAndIsr,
)
from model.state_machines import PartitionState

__all__ = [
    "controlled_shutdown_answered_after_followers_offline",
    "controlled_shutdown_completes_after_answer",
    "controlled_shutdown_isr_excludes_shutting_down",
    "controlled_shutdown_skips_single_replica_partitions",
    "elected_leader_is_live",
    "no_replica_deletion_while_reassigning",
    "observed_properties",
]


def _landed(s: State, a: Any, t: State, strategy: int) -> list[tuple[int, Any, Any]]:
    """The partition-state writes of ``strategy`` that the step ``a`` (a ZooKeeper server step)
    landed: (partition, state before, state after)."""
    req = zk_request_of(a)
    if type(req) is not UpdateLeaderAndIsr or req.strategy != strategy:
        return []
    before, after = s.zk.parts, t.zk.parts
    if before is after:
        return []
    return [(p, before[p], after[p]) for p, _ in a.req.writes if after[p] is not before[p]]


def controlled_shutdown_isr_excludes_shutting_down(s: State, a: Any, t: State) -> bool:
    """A controlled-shutdown election that lands writes the ISR it read without the brokers the
    writing controller counts as shutting down, in the ISR's order (seed 002
    ``leaderForControlledShutdown``).

    >>> from model.controller import ControllerConfig
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> controlled_shutdown_isr_excludes_shutting_down(s, None, s)
    True
    """
    landed = _landed(s, a, t, S_CONTROLLED_SHUTDOWN)
    if not landed:
        return True
    ctx = s.nodes[a.broker].ctx
    if ctx is None:
        return True
    shutting = ctx.shutting
    for _, old, new in landed:
        if old is None or new is None:
            continue
        if new.isr != tuple(r for r in old.isr if r not in shutting):
            return False
    return True


def controlled_shutdown_answered_after_followers_offline(sys: ControllerSystem) -> Any:
    """The check of ``controlled_shutdown_answered_after_followers_offline`` for ``sys``."""
    nb, ppt, parts_of = sys.nb, sys.ppt, sys.parts_of

    def check(s: State, a: Any, t: State) -> bool:
        """Where a controller step queues a ControlledShutdownResponse to broker ``b``, the
        sending controller's context holds ``b`` in the ISR of no partition with more than one
        assigned replica (of a topic not queued for deletion) unless ``b`` leads it or is its
        ISR's only member.

        >>> from model.controller import ControllerConfig
        >>> sys = ControllerSystem(ControllerConfig(brokers=2))
        >>> s = sys.init_states()[0]
        >>> controlled_shutdown_answered_after_followers_offline(sys)(s, None, s)
        True
        """
        if t.chans is s.chans or not does_any(a, CONTROLLER_STEPS):
            return True
        for i, (q0, q1) in enumerate(zip(s.chans, t.chans, strict=True)):
            if q1 is q0 or not any(type(m) is ControlledShutdownResponse and m not in q0 for m in q1):
                continue
            ctx, b = t.nodes[i // nb].ctx, i % nb
            if ctx is None:
                continue
            for p in parts_of[b]:
                z = ctx.leaders[p]
                if z is None or len(ctx.ar[p]) < 2 or b not in ctx.ar[p] or p // ppt in ctx.deleting:
                    continue
                if ctx.pstates[p] == PartitionState.NonExistentPartition:
                    continue
                if b in z.isr and z.leader != b and z.isr != (b,):
                    return False
        return True

    return check


def no_replica_deletion_while_reassigning(nb: int) -> Any:
    """The check of ``no_replica_deletion_while_reassigning`` for ``nb`` brokers."""

    def check(s: State, a: Any, t: State) -> bool:
        """No controller step (an event processed, or a ZooKeeper reply that continues it) puts
        on a channel a StopReplica of the topic deletion (``delete = true`` with the deletion's
        callback; the reassignment's StopReplica of its old replicas has none) naming a partition
        the sending controller counts as being reassigned (``partitionsBeingReassigned``).

        >>> from model.controller import ControllerConfig
        >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
        >>> no_replica_deletion_while_reassigning(2)(s, None, s)
        True
        """
        if t.chans is s.chans or not does_any(a, CONTROLLER_STEPS):
            return True
        for i, (q0, q1) in enumerate(zip(s.chans, t.chans, strict=True)):
            if q1 is q0:
                continue
            ctx = t.nodes[i // nb].ctx
            if ctx is None or not ctx.reassigning:
                continue
            for m in q1:
                if type(m) is StopReplicaRequest and m.data.delete and m.data.callback and m not in q0:
                    for p, _ in ctx.reassigning:
                        if (m.data.mask >> p) & 1:
                            return False
        return True

    return check


#: the partition-state writes that elect a leader: every strategy but ``S_REMOVE``
#: (``doRemoveReplicasFromIsr`` keeps the leader unless it is the replica removed) and
#: ``S_EPOCH`` (``updateLeaderEpoch`` keeps the leader and the ISR)
_ELECTING = frozenset(range(S_OFFLINE, S_ADMIN_UNCLEAN + 1)) - {S_REMOVE, S_EPOCH}


def elected_leader_is_live(s: State, a: Any, t: State) -> bool:
    """A ZooKeeper step that lands a controller's election write (a leader election of any
    strategy, or a new partition's first leader) names, where it names a leader at all, a broker
    the writing controller's context counts live (seed 002's election algorithms choose from
    ``liveReplicas``; a new partition's leader is its first live assigned replica). A write of a
    controller that has since lost its context is not judged.

    >>> from model.controller import ControllerConfig
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> elected_leader_is_live(s, None, s)
    True
    """
    req = zk_request_of(a)
    if type(req) is not UpdateLeaderAndIsr or req.strategy not in _ELECTING:
        return True
    before, after = s.zk.parts, t.zk.parts
    if before is after:
        return True
    ctx = s.nodes[a.broker].ctx
    if ctx is None:
        return True
    live = ctx.live
    for p, _ in a.req.writes:
        z2 = after[p]
        if z2 is not None and z2 is not before[p] and z2.leader >= 0 and not live[z2.leader]:
            return False
    return True


def controlled_shutdown_completes_after_answer(s: State, a: Any, t: State) -> bool:
    """A broker's ShutdownComplete step finds no live broker holding a controller context with the
    broker's ControlledShutdown request still queued: the broker stops once answered, or once
    the controller it asked is gone (then the request is retried until
    ``controlled.shutdown.max.retries`` and the broker stops anyway).

    >>> from model.controller import ControllerConfig
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> controlled_shutdown_completes_after_answer(s, None, s)
    True
    """
    if not does(a, Effect.COMPLETES_SHUTDOWN):
        return True
    b = a.broker
    for n in s.nodes:
        if n.alive and n.ctx is not None:
            for e in n.events:
                if type(e) is ControlledShutdown and e.broker == b:
                    return False
    return True


def controlled_shutdown_skips_single_replica_partitions(nb: int) -> Any:
    """The check of ``controlled_shutdown_skips_single_replica_partitions`` for ``nb`` brokers."""

    def check(s: State, a: Any, t: State) -> bool:
        """A step in which a controller processes a ControlledShutdown sends ZooKeeper no read of,
        and no broker a StopReplica for, a partition its context assigns a single replica.

        >>> from model.controller import ControllerConfig
        >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
        >>> controlled_shutdown_skips_single_replica_partitions(2)(s, None, s)
        True
        """
        if type(processed_event_of(a)) is not ControlledShutdown:
            return True
        c = a.broker
        ctx = s.nodes[c].ctx
        if ctx is None:
            return True
        single = [p for p, ar in enumerate(ctx.ar) if len(ar) <= 1]
        if not single:
            return True
        old = s.nodes[c].zk_out
        for req in t.nodes[c].zk_out[len(old) :]:
            if type(req) is GetTopicPartitionStates and any(p in req.partitions for p in single):
                return False
        for i in range(c * nb, (c + 1) * nb):
            q0, q1 = s.chans[i], t.chans[i]
            if q1 is q0:
                continue
            for m in q1[len(q0) :]:
                if type(m) is StopReplicaRequest and any((m.data.mask >> p) & 1 for p in single):
                    return False
        return True

    return check


def observed_properties(config: Any, sys: ControllerSystem) -> list[Property]:
    """The probe's properties that apply to ``config`` (``sys`` is the system built from it).

    >>> from model.controller import ControllerConfig
    >>> c = ControllerConfig(max_controlled_shutdowns=1)
    >>> [p.name for p in observed_properties(c, ControllerSystem(c))]
    ['elected_leader_is_live', 'controlled_shutdown_isr_excludes_shutting_down', \
'controlled_shutdown_answered_after_followers_offline', 'controlled_shutdown_skips_single_replica_partitions', \
'controlled_shutdown_completes_after_answer']
    """
    props: list[Property] = [
        transition(
            "elected_leader_is_live",
            elected_leader_is_live,
            "a controller's partition-state write names as new leader only a broker it counts live "
            "(seed 002: every election algorithm picks from liveReplicas)",
            guard=zk_changed,
        )
    ]
    if config.max_controlled_shutdowns:
        props.append(
            transition(
                "controlled_shutdown_isr_excludes_shutting_down",
                controlled_shutdown_isr_excludes_shutting_down,
                "a controlled-shutdown election writes the ISR it read minus the shutting-down brokers "
                "(seed 002 leaderForControlledShutdown: newIsr = isr.filter(!shuttingDownBrokers))",
                guard=zk_changed,
            )
        )
    if config.max_controlled_shutdowns:
        props.append(
            transition(
                "controlled_shutdown_answered_after_followers_offline",
                controlled_shutdown_answered_after_followers_offline(sys),
                "a controlled shutdown is answered only once the broker's follower replicas are out of "
                "the ISR (doControlledShutdown: followers -> OfflineReplica before the response; seed 000 "
                "[4] OnlineReplica -> OfflineReplica removes the replica from the ISR)",
                guard=controller_stepped,
            )
        )
    if config.max_controlled_shutdowns:
        props.append(
            transition(
                "controlled_shutdown_skips_single_replica_partitions",
                controlled_shutdown_skips_single_replica_partitions(sys.nb),
                "a controlled shutdown leaves single-replica partitions alone: no election, no "
                "StopReplica (seed 002: 这里的选举会将副本数量==1的分区给过滤掉; doControlledShutdown "
                "acts on partitions whose assignment has more than one replica)",
                guard=controller_stepped,
            )
        )
    if config.max_controlled_shutdowns:
        props.append(
            transition(
                "controlled_shutdown_completes_after_answer",
                controlled_shutdown_completes_after_answer,
                "a broker ends a controlled shutdown only once answered, or once the controller it "
                "asked is gone (KafkaServer.controlledShutdown waits for the response)",
                guard=completes_shutdown,
            )
        )
    if config.max_topic_deletions and config.max_reassignments:
        props.append(
            transition(
                "no_replica_deletion_while_reassigning",
                no_replica_deletion_while_reassigning(sys.nb),
                "no controller starts deleting the replicas of a partition it is reassigning (seed 001: "
                "a topic with a partition being reassigned is ineligible for deletion, 标记为不可删除状态)",
                guard=controller_stepped,
            )
        )
    # the others are not declared symmetric (``invariants.controller.SYMMETRIC``): they apply only with controlled
    # shutdowns or with deletions and reassignments, which no configuration with a symmetry has
    return props
