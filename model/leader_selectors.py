"""Kafka 0.8's ``PartitionLeaderSelector`` classes as seed 000 prints them (section 5.4):
``NoOpLeaderSelector``, ``OfflinePartitionLeaderSelector``, ``ReassignedPartitionLeaderSelector``,
``PreferredReplicaPartitionLeaderSelector`` and ``ControlledShutdownLeaderSelector``.

They share their records (``LeaderAndIsr``, ``ElectionResult``) with the 2.x rules of
:mod:`model.election`.

>>> from model.election import LeaderAndIsr
>>> no_op_leader_selector(LeaderAndIsr(1, 0, (1, 2), 0), (1, 2)).leader_and_isr.leader
1
"""

from __future__ import annotations

from model.election import (
    ElectionOutcome,
    ElectionResult,
    LeaderAndIsr,
    contains,
    drop_members,
    keep_members,
)

__all__ = [
    "legacy_controlled_shutdown_leader_selector",
    "legacy_offline_partition_leader_selector",
    "legacy_preferred_replica_partition_leader_selector",
    "legacy_reassigned_partition_leader_selector",
    "no_op_leader_selector",
]


def no_op_leader_selector(current: LeaderAndIsr, assignment: tuple[int, ...]) -> ElectionResult:
    """0.8 ``NoOpLeaderSelector.selectLeader`` (seed 000, 5.4.1).

    Returns the current leader and ISR unchanged and the assignment as recipients (Kafka
    logs "I should never have been asked to perform leader election"). The outcome is
    ``CLEAN`` when the current leader is in the ISR, else ``NONE``.

    Examples
    --------
    >>> no_op_leader_selector(LeaderAndIsr(1, 2, (1, 2), 3), (1, 2)).leader_and_isr
    LeaderAndIsr(leader=1, leader_epoch=2, isr=(1, 2), zk_version=3)
    """
    outcome = ElectionOutcome.NONE
    if contains(current.isr, current.leader):
        outcome = ElectionOutcome.CLEAN
    return ElectionResult(current, assignment, outcome)


def legacy_offline_partition_leader_selector(
    assignment: tuple[int, ...],
    current: LeaderAndIsr,
    live_brokers: tuple[int, ...],
    unclean_leader_election_enable: bool,
) -> ElectionResult:
    """0.8 ``OfflinePartitionLeaderSelector.selectLeader`` (seed 000, 5.4.2).

    With a live ISR member: the first live assigned replica that is in the live ISR leads
    and the new ISR is the live ISR (ISR order). With none: if unclean election is off,
    ``NoReplicaOnlineException``; else the first live assigned replica leads with
    ``ISR = [leader]``; with no live assigned replica, ``NoReplicaOnlineException``.
    Leader epoch + 1 and zkVersion + 1; recipients: the live assigned replicas.
    A live ISR member outside the assignment makes Kafka take the head of an empty list
    (an exception): ``None`` here too.

    Examples
    --------
    >>> legacy_offline_partition_leader_selector((1, 2, 3), LeaderAndIsr(1, 0, (1, 3, 2), 0), (2, 3), False)
    ElectionResult(leader_and_isr=LeaderAndIsr(leader=2, leader_epoch=1, isr=(3, 2), zk_version=1), \
live_replicas=(2, 3), outcome=<ElectionOutcome.CLEAN: 1>)
    """
    live_assigned = keep_members(assignment, live_brokers)
    live_isr = keep_members(current.isr, live_brokers)
    epoch = current.leader_epoch + 1
    version = current.zk_version + 1
    if len(live_isr) == 0:
        if not unclean_leader_election_enable or len(live_assigned) == 0:
            return ElectionResult(None, live_assigned, ElectionOutcome.NONE)
        leader = live_assigned[0]
        return ElectionResult(
            LeaderAndIsr(leader, epoch, (leader,), version), live_assigned, ElectionOutcome.UNCLEAN
        )
    live_replicas_in_isr = keep_members(live_assigned, live_isr)
    if len(live_replicas_in_isr) == 0:
        return ElectionResult(None, live_assigned, ElectionOutcome.NONE)
    return ElectionResult(
        LeaderAndIsr(live_replicas_in_isr[0], epoch, live_isr, version), live_assigned, ElectionOutcome.CLEAN
    )


def legacy_reassigned_partition_leader_selector(
    reassigned_replicas: tuple[int, ...], current: LeaderAndIsr, live_brokers: tuple[int, ...]
) -> ElectionResult:
    """0.8 ``ReassignedPartitionLeaderSelector.selectLeader`` (seed 000, 5.4.3).

    New leader: the first reassigned replica that is live and in the current ISR; ISR
    unchanged; leader epoch + 1, zkVersion + 1; recipients: the reassigned replicas.

    Examples
    --------
    >>> legacy_reassigned_partition_leader_selector((2, 3), LeaderAndIsr(1, 0, (1, 3, 2), 5), (1, 2, 3))
    ElectionResult(leader_and_isr=LeaderAndIsr(leader=2, leader_epoch=1, isr=(1, 3, 2), zk_version=6), \
live_replicas=(2, 3), outcome=<ElectionOutcome.CLEAN: 1>)
    """
    for replica in reassigned_replicas:
        if contains(live_brokers, replica) and contains(current.isr, replica):
            new_state = LeaderAndIsr(replica, current.leader_epoch + 1, current.isr, current.zk_version + 1)
            return ElectionResult(new_state, reassigned_replicas, ElectionOutcome.CLEAN)
    return ElectionResult(None, reassigned_replicas, ElectionOutcome.NONE)


def legacy_preferred_replica_partition_leader_selector(
    assignment: tuple[int, ...], current: LeaderAndIsr, live_brokers: tuple[int, ...]
) -> ElectionResult:
    """0.8 ``PreferredReplicaPartitionLeaderSelector.selectLeader`` (seed 000, 5.4.4).

    If the preferred replica already leads: ``LeaderElectionNotNeededException`` (which
    ``electLeaderForPartition`` swallows); if it is live and in the ISR it leads with the
    ISR unchanged, epoch + 1, zkVersion + 1; otherwise ``StateChangeFailedException``.
    Recipients: the assigned replicas.

    Examples
    --------
    >>> legacy_preferred_replica_partition_leader_selector((1, 2), LeaderAndIsr(1, 0, (1, 2), 0), (1, 2)).outcome
    <ElectionOutcome.NONE: 0>
    """
    if len(assignment) == 0:
        return ElectionResult(None, assignment, ElectionOutcome.NONE)
    preferred = assignment[0]
    if preferred == current.leader:
        return ElectionResult(None, assignment, ElectionOutcome.NONE)
    if contains(live_brokers, preferred) and contains(current.isr, preferred):
        new_state = LeaderAndIsr(preferred, current.leader_epoch + 1, current.isr, current.zk_version + 1)
        return ElectionResult(new_state, assignment, ElectionOutcome.CLEAN)
    return ElectionResult(None, assignment, ElectionOutcome.NONE)


def legacy_controlled_shutdown_leader_selector(
    assignment: tuple[int, ...],
    current: LeaderAndIsr,
    live_or_shutting_down_brokers: tuple[int, ...],
    shutting_down_brokers: tuple[int, ...],
) -> ElectionResult:
    """0.8 ``ControlledShutdownLeaderSelector.selectLeader`` (seed 000, 5.4.5).

    New ISR = current ISR minus the shutting-down brokers; the new leader is the *head of
    that ISR* (ISR order, no liveness check: 2.x instead takes the first live ISR member
    in assignment order); epoch + 1, zkVersion + 1; an empty new ISR is a
    ``StateChangeFailedException``. Recipients: the live-or-shutting-down assigned
    replicas.

    Examples
    --------
    >>> legacy_controlled_shutdown_leader_selector((1, 2, 3), LeaderAndIsr(1, 0, (1, 3, 2), 0), (1, 2, 3), (1,))
    ElectionResult(leader_and_isr=LeaderAndIsr(leader=3, leader_epoch=1, isr=(3, 2), zk_version=1), \
live_replicas=(1, 2, 3), outcome=<ElectionOutcome.CLEAN: 1>)
    """
    live_assigned = keep_members(assignment, live_or_shutting_down_brokers)
    new_isr = drop_members(current.isr, shutting_down_brokers)
    if len(new_isr) == 0:
        return ElectionResult(None, live_assigned, ElectionOutcome.NONE)
    new_state = LeaderAndIsr(new_isr[0], current.leader_epoch + 1, new_isr, current.zk_version + 1)
    return ElectionResult(new_state, live_assigned, ElectionOutcome.CLEAN)
