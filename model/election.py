"""Partition leader election rules of Kafka's controller, as pure functions.

The rules come from the seeds (``/work/shared/seeds``):

* seed 002 (Kafka 2.x ``PartitionStateMachine.doElectLeaderForPartitions`` and
  ``Election``): the four ``PartitionLeaderElectionAlgorithms`` (offline, reassign,
  preferred replica, controlled shutdown), the per-strategy results ``leaderForOffline``,
  ``leaderForReassign``, ``leaderForPreferredReplica``, ``leaderForControlledShutdown``,
  ``collectUncleanLeaderElectionState`` with the admin ``allowUnclean`` override,
  ``ReplicaStateMachine.doRemoveReplicasFromIsr`` (the offline-replica rule) and the
  new-topic initialisation;
* seed 003 (Kafka 2.x ``leaderForOffline``, ``offlinePartitionLeaderElection``,
  ``initializeLeaderAndIsrForPartitions``);
* seed 000 (the 0.8 ``PartitionLeaderSelector`` classes), kept as ``legacy_*``
  functions for a variant of the controller model.

Conventions
-----------
Replica lists (assignment, ISR, live replicas, shutting-down brokers) are tuples of
broker ids; order matters where Kafka's does (the assignment order decides who leads).
Liveness arguments are used only for membership, so a caller may pass either the live
replicas of the partition or every live broker id. Kafka's ``Option`` results are
``None`` here, and the exceptions of the 0.8 selectors (``NoReplicaOnlineException``,
``StateChangeFailedException``, ``LeaderElectionNotNeededException``) become a result
without a ``LeaderAndIsr``.

Arguments named alike mean the same throughout (their types are in the signatures):
``assignment`` the assigned replicas in order, ``current`` the partition's state read from
ZooKeeper, ``isr`` the ISR read from ZooKeeper, ``live_replicas`` the replicas (brokers) that
are online; the 0.8 selectors' ``live_brokers`` is the last.

Every rule is written once, as plain loops and conditionals over its inputs (no sets,
no sorting, no comprehensions over hidden state) so that a symbolic engine can later
execute the same definitions.

The ``zk_version`` of a ``LeaderAndIsr`` follows Kafka 2.x: ``newLeaderAndIsr`` keeps
the version it was read with (it is the expected version of the conditional write; the
ZooKeeper write then sets the new one with ``withZkVersion``). The 0.8 selectors of
seed 000 instead return ``zkVersion + 1``, and the ``legacy_*`` functions do the same.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

__all__ = [
    "INITIAL_LEADER_EPOCH",
    "INITIAL_ZK_VERSION",
    "NO_LEADER",
    "ControlledShutdownAction",
    "ElectionOutcome",
    "ElectionResult",
    "ElectionTrigger",
    "LeaderAndIsr",
    "allow_unclean_for_trigger",
    "collect_unclean_leader_election_state",
    "contains",
    "controlled_shutdown_partition_action",
    "controlled_shutdown_partition_leader_election",
    "drop_members",
    "initialize_leader_and_isr",
    "keep_members",
    "leader_for_controlled_shutdown",
    "leader_for_offline",
    "leader_for_preferred_replica",
    "leader_for_reassign",
    "new_leader",
    "new_leader_and_isr",
    "offline_partition_leader_election",
    "offline_partition_leader_election_strategy",
    "preferred_replica_partition_leader_election",
    "reassign_partition_leader_election",
    "remove_replica_from_isr",
]

NO_LEADER = -1
"""``LeaderAndIsr.NoLeader``: the leader field when no replica leads (seed 002)."""

INITIAL_LEADER_EPOCH = 0
"""``LeaderAndIsr.initialLeaderEpoch`` (seed 000's znode example: ``"leader_epoch":0``)."""

INITIAL_ZK_VERSION = 0
"""``LeaderAndIsr.initialZKVersion``."""


class LeaderAndIsr(NamedTuple):
    """Kafka's ``LeaderAndIsr``: the content of ``/brokers/topics/T/partitions/P/state``.

    ``leader`` is a broker id or ``NO_LEADER``; ``isr`` keeps Kafka's list order.
    """

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int


class ElectionOutcome(IntEnum):
    """How an election ended, for coverage counts.

    ``NONE``: no leader could be chosen (Kafka's ``Option`` is empty, or a 0.8 selector
    threw); ``CLEAN``: the leader was in the ISR; ``UNCLEAN``: the leader was chosen
    outside the ISR (``unclean.leader.election.enable`` or the admin override).
    """

    NONE = 0
    CLEAN = 1
    UNCLEAN = 2


class ElectionTrigger(IntEnum):
    """Kafka 2.x ``ElectionTrigger``: who asked for an election (seed 002)."""

    AUTO_TRIGGERED = 0
    ZK_TRIGGERED = 1
    ADMIN_CLIENT_TRIGGERED = 2


class ElectionResult(NamedTuple):
    """Kafka 2.x ``ElectionResult`` plus the outcome.

    ``leader_and_isr`` is the new state to write (``None`` when the election failed and
    nothing is written, seed 002: "当没有选出Leader的时候,那么是不会去更新ZK中的Leader和ISR信息的");
    ``live_replicas`` is Kafka's ``ElectionResult.liveReplicas``, the brokers that receive
    the LeaderAndIsr request.
    """

    leader_and_isr: LeaderAndIsr | None
    live_replicas: tuple[int, ...]
    outcome: ElectionOutcome


class ControlledShutdownAction(IntEnum):
    """What ``KafkaController.doControlledShutdown`` does with one partition of the broker."""

    SKIP = 0
    ELECT_LEADER = 1
    OFFLINE_FOLLOWER = 2


# ----------------------------------------------------------------------------------------
# Small helpers: membership and order-preserving filters written as plain loops.


def contains(xs: tuple[int, ...], x: int) -> bool:
    """``x`` is a member of ``xs`` (an explicit loop, not ``x in xs``, so that the symbolic
    engine can follow it; ``prove_contains_is_membership`` proves it is membership).

    >>> contains((3, 1), 1), contains((), 1)
    (True, False)
    """
    for y in xs:  # noqa: SIM110
        if y == x:
            return True
    return False


def keep_members(xs: tuple[int, ...], keep: tuple[int, ...]) -> tuple[int, ...]:
    """The members of ``xs`` that are in ``keep``, in ``xs``'s order.

    >>> keep_members((3, 1, 2), (2, 3))
    (3, 2)
    """
    out: tuple[int, ...] = ()
    for x in xs:
        if contains(keep, x):
            out = (*out, x)
    return out


def drop_members(xs: tuple[int, ...], drop: tuple[int, ...]) -> tuple[int, ...]:
    """The members of ``xs`` not in ``drop``, in ``xs``'s order.

    >>> drop_members((3, 1, 2), (1,))
    (3, 2)
    """
    out: tuple[int, ...] = ()
    for x in xs:
        if not contains(drop, x):
            out = (*out, x)
    return out


# ----------------------------------------------------------------------------------------
# LeaderAndIsr constructors (Kafka 2.x LeaderAndIsr).


def new_leader_and_isr(current: LeaderAndIsr, leader: int, isr: tuple[int, ...]) -> LeaderAndIsr:
    """``LeaderAndIsr.newLeaderAndIsr``: new leader and ISR, leader epoch + 1, same zkVersion.

    Parameters
    ----------
    leader : int
        The new leader (or ``NO_LEADER``).
    isr : tuple of int
        The new ISR.

    Returns
    -------
    LeaderAndIsr
        ``current`` with ``leader``, ``isr`` and ``leader_epoch + 1``; the zkVersion is
        the expected version of the conditional write (Kafka 2.x; seeds 002 and 003 call
        ``leaderAndIsr.newLeaderAndIsr(leader, newIsr)``).

    Examples
    --------
    >>> new_leader_and_isr(LeaderAndIsr(1, 4, (1, 2), 7), 2, (2,))
    LeaderAndIsr(leader=2, leader_epoch=5, isr=(2,), zk_version=7)
    """
    return LeaderAndIsr(leader, current.leader_epoch + 1, isr, current.zk_version)


def new_leader(current: LeaderAndIsr, leader: int) -> LeaderAndIsr:
    """``LeaderAndIsr.newLeader``: a new leader with the ISR unchanged, leader epoch + 1.

    Used by ``leaderForReassign`` and ``leaderForPreferredReplica`` (seed 002: "注意这里是
    没有修改ISR信息的").

    Parameters
    ----------
    leader : int
        The new leader.

    Examples
    --------
    >>> new_leader(LeaderAndIsr(2, 0, (2, 1), 3), 1)
    LeaderAndIsr(leader=1, leader_epoch=1, isr=(2, 1), zk_version=3)
    """
    return new_leader_and_isr(current, leader, current.isr)


# ----------------------------------------------------------------------------------------
# PartitionLeaderElectionAlgorithms (Kafka 2.x, seeds 002 and 003).


def offline_partition_leader_election(
    assignment: tuple[int, ...],
    isr: tuple[int, ...],
    live_replicas: tuple[int, ...],
    unclean_leader_election_enabled: bool,
) -> int | None:
    """``PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection`` (seeds 002, 003).

    The first replica in assignment order that is live and in the ISR; if there is none
    and unclean election is enabled, the first live replica in assignment order (which
    is not in the ISR: an unclean election); otherwise ``None``.

    Parameters
    ----------
    assignment : tuple of int
        The assigned replicas (AR), in assignment order.
    live_replicas : tuple of int
        Replicas (brokers) that are online; only membership is used.
    unclean_leader_election_enabled : bool
        The flag produced by ``collect_unclean_leader_election_state``.

    Returns
    -------
    int or None
        The new leader.

    Examples
    --------
    >>> offline_partition_leader_election((1, 2, 3), (3, 2), (2, 3), False)
    2
    >>> offline_partition_leader_election((1, 2, 3), (1,), (2, 3), False) is None
    True
    >>> offline_partition_leader_election((1, 2, 3), (1,), (3, 2), True)
    2
    """
    for replica in assignment:
        if contains(live_replicas, replica) and contains(isr, replica):
            return replica
    if unclean_leader_election_enabled:
        for replica in assignment:
            if contains(live_replicas, replica):
                return replica
    return None


def reassign_partition_leader_election(
    reassignment: tuple[int, ...], isr: tuple[int, ...], live_replicas: tuple[int, ...]
) -> int | None:
    """``PartitionLeaderElectionAlgorithms.reassignPartitionLeaderElection`` (seed 002).

    The first replica of the target (reassigned) replicas, in their order, that is live
    and in the ISR (seed 002: "遍历的顺序是当前副本的分配方式(AR),跟ISR的顺序没有什么关系").

    Parameters
    ----------
    reassignment : tuple of int
        The target replicas of the reassignment (RAR), in order.

    Examples
    --------
    >>> reassign_partition_leader_election((1, 0), (0, 2, 1), (0, 1, 2))
    1
    >>> reassign_partition_leader_election((4, 5), (0, 2), (0, 2, 4, 5)) is None
    True
    """
    for replica in reassignment:
        if contains(live_replicas, replica) and contains(isr, replica):
            return replica
    return None


def preferred_replica_partition_leader_election(
    assignment: tuple[int, ...], isr: tuple[int, ...], live_replicas: tuple[int, ...]
) -> int | None:
    """``PartitionLeaderElectionAlgorithms.preferredReplicaPartitionLeaderElection`` (seed 002).

    The preferred replica (the head of the assignment) if it is live and in the ISR;
    no other replica is tried (seed 002: "如果不满足,也不会再找其他副本了").

    Parameters
    ----------
    assignment : tuple of int
        The assigned replicas; the first one is the preferred replica.

    Examples
    --------
    >>> preferred_replica_partition_leader_election((1, 2), (2, 1), (1, 2))
    1
    >>> preferred_replica_partition_leader_election((1, 2), (2,), (1, 2)) is None
    True
    """
    if len(assignment) == 0:
        return None
    preferred = assignment[0]
    if contains(live_replicas, preferred) and contains(isr, preferred):
        return preferred
    return None


def controlled_shutdown_partition_leader_election(
    assignment: tuple[int, ...],
    isr: tuple[int, ...],
    live_replicas: tuple[int, ...],
    shutting_down_brokers: tuple[int, ...],
) -> int | None:
    """``PartitionLeaderElectionAlgorithms.controlledShutdownPartitionLeaderElection`` (seed 002).

    The first replica in assignment order that is live, in the ISR and not on a broker
    that is shutting down.

    Parameters
    ----------
    assignment : tuple of int
        The assigned replicas, in order.
    live_replicas : tuple of int
        Replicas online *including* shutting-down brokers (Kafka passes
        ``isReplicaOnline(..., includeShuttingDownBrokers = true)``).
    shutting_down_brokers : tuple of int
        ``controllerContext.shuttingDownBrokerIds``.

    Examples
    --------
    >>> controlled_shutdown_partition_leader_election((1, 2, 3), (1, 3, 2), (1, 2, 3), (1,))
    2
    >>> controlled_shutdown_partition_leader_election((1, 2), (1,), (1, 2), (1,)) is None
    True
    """
    for replica in assignment:
        if (
            contains(live_replicas, replica)
            and contains(isr, replica)
            and not contains(shutting_down_brokers, replica)
        ):
            return replica
    return None


# ----------------------------------------------------------------------------------------
# Per-strategy results (Kafka 2.x Election.leaderForXxx, seeds 002 and 003).


def collect_unclean_leader_election_state(
    isr: tuple[int, ...],
    live_replicas: tuple[int, ...],
    allow_unclean: bool,
    topic_unclean_leader_election_enable: bool,
) -> bool:
    """``PartitionStateMachine.collectUncleanLeaderElectionState`` for one partition (seed 002).

    A partition with a live ISR member never elects uncleanly. Otherwise the admin
    override ``allowUnclean`` (``OfflinePartitionLeaderElectionStrategy(allowUnclean)``)
    wins; without it the topic's ``unclean.leader.election.enable`` decides (seed 002:
    "如果这里是true,则忽略topic本身的unclean.leader.election.enable 配置"). A failed read of
    the topic config (no election at all) is controller behaviour and not modelled here.

    Parameters
    ----------
    allow_unclean : bool
        The strategy's ``allowUnclean`` (see ``allow_unclean_for_trigger``).
    topic_unclean_leader_election_enable : bool
        The topic's (or broker default) ``unclean.leader.election.enable``.

    Returns
    -------
    bool
        The ``uncleanLeaderElectionEnabled`` passed to ``leaderForOffline``.

    Examples
    --------
    >>> collect_unclean_leader_election_state((1,), (2,), True, False)
    True
    >>> collect_unclean_leader_election_state((1, 2), (2,), True, True)
    False
    """
    for replica in isr:
        if contains(live_replicas, replica):
            return False
    if allow_unclean:
        return True
    return topic_unclean_leader_election_enable


def allow_unclean_for_trigger(trigger: ElectionTrigger) -> bool:
    """``allowUnclean = electionTrigger == AdminClientTriggered`` (seed 002, ElectionType.UNCLEAN).

    An unclean election asked for by ``kafka-leader-election.sh`` (the admin client)
    ignores the topic setting; an automatic or ZooKeeper-triggered one does not. The
    partition state machine's own ``triggerOnlinePartitionStateChange`` always passes
    ``OfflinePartitionLeaderElectionStrategy(false)``.

    Examples
    --------
    >>> allow_unclean_for_trigger(ElectionTrigger.ADMIN_CLIENT_TRIGGERED)
    True
    >>> allow_unclean_for_trigger(ElectionTrigger.ZK_TRIGGERED)
    False
    """
    return trigger == ElectionTrigger.ADMIN_CLIENT_TRIGGERED


def leader_for_offline(
    assignment: tuple[int, ...],
    current: LeaderAndIsr | None,
    live_replicas: tuple[int, ...],
    unclean_leader_election_enabled: bool,
) -> ElectionResult:
    """``Election.leaderForOffline`` / ``PartitionStateMachine.leaderForOffline`` (seeds 002, 003).

    Elects with ``offline_partition_leader_election``. A clean leader keeps the ISR
    minus its dead members (``isr.filter(isReplicaOnline)``); an unclean leader gets
    ``ISR = [leader]``. Leader epoch + 1. The LeaderAndIsr recipients are the live
    assigned replicas.

    Parameters
    ----------
    assignment : tuple of int
        The assigned replicas, in order.
    current : LeaderAndIsr or None
        The state read from ZooKeeper (``None``: no state, no election).
    unclean_leader_election_enabled : bool
        From ``collect_unclean_leader_election_state``.

    Examples
    --------
    >>> leader_for_offline((1, 2, 3), LeaderAndIsr(1, 3, (1, 3, 2), 5), (2, 3), False)
    ElectionResult(leader_and_isr=LeaderAndIsr(leader=2, leader_epoch=4, isr=(3, 2), zk_version=5), \
live_replicas=(2, 3), outcome=<ElectionOutcome.CLEAN: 1>)
    >>> leader_for_offline((1, 2), LeaderAndIsr(1, 3, (1,), 5), (2,), True).leader_and_isr
    LeaderAndIsr(leader=2, leader_epoch=4, isr=(2,), zk_version=5)
    """
    live_assigned = keep_members(assignment, live_replicas)
    if current is None:
        return ElectionResult(None, live_assigned, ElectionOutcome.NONE)
    leader = offline_partition_leader_election(
        assignment, current.isr, live_assigned, unclean_leader_election_enabled
    )
    if leader is None:
        return ElectionResult(None, live_assigned, ElectionOutcome.NONE)
    if contains(current.isr, leader):
        new_isr = keep_members(current.isr, live_replicas)
        return ElectionResult(
            new_leader_and_isr(current, leader, new_isr), live_assigned, ElectionOutcome.CLEAN
        )
    return ElectionResult(
        new_leader_and_isr(current, leader, (leader,)), live_assigned, ElectionOutcome.UNCLEAN
    )


def offline_partition_leader_election_strategy(
    assignment: tuple[int, ...],
    current: LeaderAndIsr | None,
    live_replicas: tuple[int, ...],
    allow_unclean: bool,
    topic_unclean_leader_election_enable: bool,
) -> ElectionResult:
    """The ``OfflinePartitionLeaderElectionStrategy(allowUnclean)`` branch of
    ``doElectLeaderForPartitions`` for one partition (seed 002).

    ``collect_unclean_leader_election_state`` followed by ``leader_for_offline``.

    Parameters
    ----------
    allow_unclean : bool
        The admin override.
    topic_unclean_leader_election_enable : bool
        The topic setting.

    Examples
    --------
    >>> offline_partition_leader_election_strategy((1, 2), LeaderAndIsr(1, 0, (1,), 0), (2,), True, False).outcome
    <ElectionOutcome.UNCLEAN: 2>
    >>> offline_partition_leader_election_strategy((1, 2), LeaderAndIsr(1, 0, (1,), 0), (2,), False, False).outcome
    <ElectionOutcome.NONE: 0>
    """
    isr: tuple[int, ...] = ()
    if current is not None:
        isr = current.isr
    unclean = collect_unclean_leader_election_state(
        isr, live_replicas, allow_unclean, topic_unclean_leader_election_enable
    )
    return leader_for_offline(assignment, current, live_replicas, unclean)


def _new_leader_result(
    current: LeaderAndIsr, leader: int | None, recipients: tuple[int, ...]
) -> ElectionResult:
    """The result of a strategy that keeps the ISR (reassign, preferred replica): ``leader``
    with ``leaderAndIsr.newLeader``, or no election when the algorithm found none.

    >>> _new_leader_result(LeaderAndIsr(2, 6, (2, 1), 9), None, (1,)).outcome
    <ElectionOutcome.NONE: 0>
    """
    if leader is None:
        return ElectionResult(None, recipients, ElectionOutcome.NONE)
    return ElectionResult(new_leader(current, leader), recipients, ElectionOutcome.CLEAN)


def leader_for_reassign(
    target_replicas: tuple[int, ...], current: LeaderAndIsr, live_replicas: tuple[int, ...]
) -> ElectionResult:
    """``Election.leaderForReassign`` (seed 002).

    Leader from ``reassign_partition_leader_election`` over the target replicas; the ISR
    is unchanged (``leaderAndIsr.newLeader``); the recipients are the target replicas.

    Parameters
    ----------
    target_replicas : tuple of int
        ``partitionFullReplicaAssignment(partition).targetReplicas`` (RAR).

    Examples
    --------
    >>> leader_for_reassign((1, 0), LeaderAndIsr(2, 6, (2, 0, 1), 9), (0, 1, 2))
    ElectionResult(leader_and_isr=LeaderAndIsr(leader=1, leader_epoch=7, isr=(2, 0, 1), zk_version=9), \
live_replicas=(1, 0), outcome=<ElectionOutcome.CLEAN: 1>)
    """
    live_targets = keep_members(target_replicas, live_replicas)
    leader = reassign_partition_leader_election(target_replicas, current.isr, live_targets)
    return _new_leader_result(current, leader, target_replicas)


def leader_for_preferred_replica(
    assignment: tuple[int, ...], current: LeaderAndIsr, live_replicas: tuple[int, ...]
) -> ElectionResult:
    """``Election.leaderForPreferredReplica`` (seed 002).

    Leader from ``preferred_replica_partition_leader_election``; the ISR is unchanged;
    the recipients are all assigned replicas. Kafka 2.x does not refuse when the
    preferred replica already leads (the 0.8 selector did, and the 2.x controller
    filters such partitions before electing): the result is a new leader epoch.

    Examples
    --------
    >>> leader_for_preferred_replica((1, 2), LeaderAndIsr(2, 1, (2, 1), 4), (1, 2)).leader_and_isr
    LeaderAndIsr(leader=1, leader_epoch=2, isr=(2, 1), zk_version=4)
    """
    live_assigned = keep_members(assignment, live_replicas)
    leader = preferred_replica_partition_leader_election(assignment, current.isr, live_assigned)
    return _new_leader_result(current, leader, assignment)


def leader_for_controlled_shutdown(
    assignment: tuple[int, ...],
    current: LeaderAndIsr,
    live_or_shutting_down_replicas: tuple[int, ...],
    shutting_down_brokers: tuple[int, ...],
) -> ElectionResult:
    """``Election.leaderForControlledShutdown`` (seed 002).

    Leader from ``controlled_shutdown_partition_leader_election``; new ISR = current ISR
    minus the shutting-down brokers; leader epoch + 1; the recipients are the assigned
    replicas that are live or shutting down.

    Parameters
    ----------
    live_or_shutting_down_replicas : tuple of int
        ``liveOrShuttingDownBrokerIds``.

    Examples
    --------
    >>> leader_for_controlled_shutdown((1, 2, 3), LeaderAndIsr(1, 2, (1, 2, 3), 8), (1, 2, 3), (1,))
    ElectionResult(leader_and_isr=LeaderAndIsr(leader=2, leader_epoch=3, isr=(2, 3), zk_version=8), \
live_replicas=(1, 2, 3), outcome=<ElectionOutcome.CLEAN: 1>)
    """
    live_or_shutting_down = keep_members(assignment, live_or_shutting_down_replicas)
    leader = controlled_shutdown_partition_leader_election(
        assignment, current.isr, live_or_shutting_down, shutting_down_brokers
    )
    if leader is None:
        return ElectionResult(None, live_or_shutting_down, ElectionOutcome.NONE)
    new_isr = drop_members(current.isr, shutting_down_brokers)
    return ElectionResult(
        new_leader_and_isr(current, leader, new_isr), live_or_shutting_down, ElectionOutcome.CLEAN
    )


def controlled_shutdown_partition_action(
    assignment: tuple[int, ...],
    leader: int,
    broker_id: int,
    has_leader_and_isr: bool = True,
    topic_queued_for_deletion: bool = False,
) -> ControlledShutdownAction:
    """What ``KafkaController.doControlledShutdown`` does with a partition on ``broker_id``.

    Seed 002: partitions with a single replica are left out of the controlled-shutdown
    election ("这里的选举会将副本数量==1的分区给过滤掉"); they lose their leader only when
    the broker is gone, through the offline strategy (question 9). Kafka 2.x also skips
    partitions without leadership info or queued for deletion; of the rest, those led by
    the broker get a ``ControlledShutdownPartitionLeaderElectionStrategy`` election and
    those it follows move its replica to ``OfflineReplica``.

    Parameters
    ----------
    leader : int
        The partition's current leader.
    broker_id : int
        The broker shutting down (a member of ``assignment``).

    Examples
    --------
    >>> controlled_shutdown_partition_action((1,), 1, 1)
    <ControlledShutdownAction.SKIP: 0>
    >>> controlled_shutdown_partition_action((1, 2), 1, 1)
    <ControlledShutdownAction.ELECT_LEADER: 1>
    >>> controlled_shutdown_partition_action((1, 2), 2, 1)
    <ControlledShutdownAction.OFFLINE_FOLLOWER: 2>
    """
    if len(assignment) <= 1 or not has_leader_and_isr or topic_queued_for_deletion:
        return ControlledShutdownAction.SKIP
    if leader == broker_id:
        return ControlledShutdownAction.ELECT_LEADER
    return ControlledShutdownAction.OFFLINE_FOLLOWER


# ----------------------------------------------------------------------------------------
# New partitions and offline replicas.


def initialize_leader_and_isr(
    assignment: tuple[int, ...], live_replicas: tuple[int, ...]
) -> LeaderAndIsr | None:
    """``PartitionStateMachine.initializeLeaderAndIsrForPartitions`` for one partition
    (seeds 002, 003; 0.8 ``initializeLeaderAndIsrForPartition`` in seed 000).

    No election happens: the first live replica in assignment order leads and the ISR is
    every live assigned replica, in assignment order ("这个时候获取的isr信息的顺序就是
    分区创建时候分配好的AR顺序"), with ``LeaderAndIsr(leader, isr)``'s initial leader epoch
    and zkVersion. With no live replica the partition stays NewPartition (``None``).
    The LeaderAndIsr recipients are the new ISR.

    Examples
    --------
    >>> initialize_leader_and_isr((3, 1, 2), (1, 2))
    LeaderAndIsr(leader=1, leader_epoch=0, isr=(1, 2), zk_version=0)
    >>> initialize_leader_and_isr((3,), (1, 2)) is None
    True
    """
    live_assigned = keep_members(assignment, live_replicas)
    if len(live_assigned) == 0:
        return None
    return LeaderAndIsr(live_assigned[0], INITIAL_LEADER_EPOCH, live_assigned, INITIAL_ZK_VERSION)


def remove_replica_from_isr(current: LeaderAndIsr, replica_id: int) -> LeaderAndIsr | None:
    """``ReplicaStateMachine.doRemoveReplicasFromIsr`` for one partition (seed 002).

    Used when a replica goes to OfflineReplica. If the replica leads, the leader becomes
    ``NO_LEADER`` (-1); the ISR drops the replica unless it is the ISR's last member, in
    which case the ISR is kept as it is; leader epoch + 1. A partition whose ISR does not
    contain the replica is not rewritten (Kafka 2.x partitions the states by
    ``isr.contains(replicaId)`` first; after a successful offline election the dead replica
    is already out of the ISR, so "副本变更的时候修改zk的值基本不变").

    Parameters
    ----------
    replica_id : int
        The replica going offline.

    Returns
    -------
    LeaderAndIsr or None
        The state to write, or ``None`` when nothing is written.

    Examples
    --------
    >>> remove_replica_from_isr(LeaderAndIsr(1, 3, (1, 2), 4), 1)
    LeaderAndIsr(leader=-1, leader_epoch=4, isr=(2,), zk_version=4)
    >>> remove_replica_from_isr(LeaderAndIsr(1, 3, (1,), 4), 1)
    LeaderAndIsr(leader=-1, leader_epoch=4, isr=(1,), zk_version=4)
    >>> remove_replica_from_isr(LeaderAndIsr(2, 3, (2,), 4), 1) is None
    True
    """
    if not contains(current.isr, replica_id):
        return None
    leader = current.leader
    if replica_id == current.leader:
        leader = NO_LEADER
    isr = current.isr
    if len(current.isr) != 1:
        isr = drop_members(current.isr, (replica_id,))
    return new_leader_and_isr(current, leader, isr)
