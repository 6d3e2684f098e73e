"""Leader election rules (model/election.py) against the cases the seeds describe.

Seed 002's nine questions ("思考几个问题") each have a ``test_q<n>_...`` test; where the
answer depends on controller behaviour beyond a pure rule, the test checks the rule
part and a comment says what is left to the controller model.
"""

from __future__ import annotations

import itertools

import pytest

from model.election import (
    INITIAL_LEADER_EPOCH,
    INITIAL_ZK_VERSION,
    NO_LEADER,
    ControlledShutdownAction,
    ElectionOutcome,
    ElectionResult,
    ElectionTrigger,
    LeaderAndIsr,
    allow_unclean_for_trigger,
    collect_unclean_leader_election_state,
    controlled_shutdown_partition_action,
    controlled_shutdown_partition_leader_election,
    initialize_leader_and_isr,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
    new_leader,
    new_leader_and_isr,
    offline_partition_leader_election,
    offline_partition_leader_election_strategy,
    preferred_replica_partition_leader_election,
    reassign_partition_leader_election,
    remove_replica_from_isr,
)
from model.leader_selectors import (
    legacy_controlled_shutdown_leader_selector,
    legacy_offline_partition_leader_selector,
    legacy_preferred_replica_partition_leader_selector,
    legacy_reassigned_partition_leader_selector,
    no_op_leader_selector,
)
from model.state_machines import (
    PartitionState,
    StateMachine,
    is_valid_transition,
    triggers_online_partition_state_change,
)

# ----------------------------------------------------------------------------------------
# LeaderAndIsr constructors


def test_new_leader_and_isr_bumps_leader_epoch_and_keeps_zk_version():
    current = LeaderAndIsr(1, 4, (1, 2), 7)
    assert new_leader_and_isr(current, 2, (2,)) == LeaderAndIsr(2, 5, (2,), 7)
    assert new_leader(current, 2) == LeaderAndIsr(2, 5, (1, 2), 7)


def test_constants_match_kafka():
    assert NO_LEADER == -1
    assert INITIAL_LEADER_EPOCH == 0
    assert INITIAL_ZK_VERSION == 0


# ----------------------------------------------------------------------------------------
# offlinePartitionLeaderElection / leaderForOffline (seeds 002, 003)


def test_offline_election_takes_first_live_isr_replica_in_assignment_order():
    # ISR order (3, 2) differs from assignment order: the assignment decides (seed 004:
    # "ISR集合副本顺序可能会发生改变").
    assert offline_partition_leader_election((1, 2, 3), (3, 2), (1, 2, 3), False) == 2


def test_offline_election_skips_dead_isr_members():
    assert offline_partition_leader_election((1, 2, 3), (1, 2, 3), (3,), False) == 3


def test_offline_election_without_live_isr_and_unclean_off_elects_nobody():
    assert offline_partition_leader_election((1, 2, 3), (1,), (2, 3), False) is None


def test_offline_election_unclean_takes_first_live_replica_in_assignment_order():
    assert offline_partition_leader_election((1, 2, 3), (1,), (3, 2), True) == 2


def test_offline_election_unclean_with_no_live_replica_elects_nobody():
    assert offline_partition_leader_election((1, 2, 3), (1,), (), True) is None
    assert offline_partition_leader_election((1, 2, 3), (1,), (4, 5), True) is None


def test_offline_election_prefers_clean_even_when_unclean_is_enabled():
    assert offline_partition_leader_election((1, 2, 3), (3,), (1, 2, 3), True) == 3


def test_offline_election_empty_inputs():
    assert offline_partition_leader_election((), (), (), True) is None
    assert offline_partition_leader_election((1, 2), (), (1, 2), False) is None
    assert offline_partition_leader_election((1, 2), (), (1, 2), True) == 1


def test_leader_for_offline_clean_result():
    current = LeaderAndIsr(1, 3, (1, 3, 2), 5)
    result = leader_for_offline((1, 2, 3), current, (2, 3), False)
    # New ISR = old ISR without its dead members, in ISR order; epoch + 1; recipients =
    # live assigned replicas.
    assert result == ElectionResult(LeaderAndIsr(2, 4, (3, 2), 5), (2, 3), ElectionOutcome.CLEAN)


def test_leader_for_offline_unclean_result_has_isr_of_leader_only():
    current = LeaderAndIsr(1, 3, (1,), 5)
    result = leader_for_offline((1, 2, 3), current, (2, 3), True)
    assert result == ElectionResult(LeaderAndIsr(2, 4, (2,), 5), (2, 3), ElectionOutcome.UNCLEAN)


def test_leader_for_offline_failure_writes_nothing():
    current = LeaderAndIsr(1, 3, (1,), 5)
    assert leader_for_offline((1, 2, 3), current, (2, 3), False) == ElectionResult(
        None, (2, 3), ElectionOutcome.NONE
    )


def test_leader_for_offline_without_leader_and_isr_elects_nobody():
    assert leader_for_offline((1, 2), None, (1, 2), True) == ElectionResult(
        None, (1, 2), ElectionOutcome.NONE
    )


def test_leader_for_offline_accepts_every_live_broker_as_live_replicas():
    # Only membership matters: passing all live brokers (4 is not assigned) is the same
    # as passing the live assigned replicas.
    current = LeaderAndIsr(1, 0, (1, 2, 3), 0)
    assert leader_for_offline((1, 2, 3), current, (4, 3, 2), False) == leader_for_offline(
        (1, 2, 3), current, (2, 3), False
    )


def test_leader_for_offline_can_reelect_the_same_live_leader():
    # OnlinePartition -> OnlinePartition with the offline strategy: the live leader is
    # the first live ISR member and is re-elected with a new epoch.
    current = LeaderAndIsr(1, 2, (1, 2), 3)
    result = leader_for_offline((1, 2), current, (1, 2), False)
    assert result.leader_and_isr == LeaderAndIsr(1, 3, (1, 2), 3)


# ----------------------------------------------------------------------------------------
# collectUncleanLeaderElectionState and the allowUnclean admin override (seed 002)


@pytest.mark.parametrize(
    ("allow_unclean", "topic_setting", "expected"),
    [(False, False, False), (False, True, True), (True, False, True), (True, True, True)],
)
def test_unclean_state_without_live_isr(allow_unclean, topic_setting, expected):
    assert collect_unclean_leader_election_state((1,), (2, 3), allow_unclean, topic_setting) is expected


@pytest.mark.parametrize(("allow_unclean", "topic_setting"), list(itertools.product([False, True], repeat=2)))
def test_unclean_state_with_live_isr_is_always_false(allow_unclean, topic_setting):
    assert collect_unclean_leader_election_state((1, 2), (2, 3), allow_unclean, topic_setting) is False


def test_allow_unclean_only_for_admin_client_trigger():
    assert allow_unclean_for_trigger(ElectionTrigger.ADMIN_CLIENT_TRIGGERED) is True
    assert allow_unclean_for_trigger(ElectionTrigger.AUTO_TRIGGERED) is False
    assert allow_unclean_for_trigger(ElectionTrigger.ZK_TRIGGERED) is False


def test_admin_override_elects_uncleanly_although_topic_forbids_it():
    current = LeaderAndIsr(1, 0, (1,), 2)
    allow = allow_unclean_for_trigger(ElectionTrigger.ADMIN_CLIENT_TRIGGERED)
    result = offline_partition_leader_election_strategy((1, 2, 3), current, (3, 2), allow, False)
    assert result == ElectionResult(LeaderAndIsr(2, 1, (2,), 2), (2, 3), ElectionOutcome.UNCLEAN)


def test_without_override_topic_setting_decides():
    current = LeaderAndIsr(1, 0, (1,), 2)
    off = offline_partition_leader_election_strategy((1, 2, 3), current, (3, 2), False, False)
    on = offline_partition_leader_election_strategy((1, 2, 3), current, (3, 2), False, True)
    assert off.outcome is ElectionOutcome.NONE
    assert on.outcome is ElectionOutcome.UNCLEAN


def test_override_does_not_make_an_election_unclean_when_isr_is_live():
    current = LeaderAndIsr(1, 0, (1, 3), 2)
    result = offline_partition_leader_election_strategy((1, 2, 3), current, (2, 3), True, True)
    assert result.leader_and_isr == LeaderAndIsr(3, 1, (3,), 2)
    assert result.outcome is ElectionOutcome.CLEAN


def test_offline_strategy_without_state_elects_nobody():
    result = offline_partition_leader_election_strategy((1, 2), None, (1, 2), True, True)
    assert result == ElectionResult(None, (1, 2), ElectionOutcome.NONE)


# ----------------------------------------------------------------------------------------
# reassignPartitionLeaderElection / leaderForReassign (seed 002)


def test_reassign_seed_example_old_leader_not_in_target_replicas():
    # Seed 002: [2,0] ==> [1,0]; 2 led and is gone from the assignment, so a new leader is
    # elected among the target replicas, in their order, ISR unchanged.
    current = LeaderAndIsr(2, 6, (2, 0, 1), 9)
    result = leader_for_reassign((1, 0), current, (0, 1, 2))
    assert result == ElectionResult(LeaderAndIsr(1, 7, (2, 0, 1), 9), (1, 0), ElectionOutcome.CLEAN)


def test_reassign_order_is_target_order_not_isr_order():
    assert reassign_partition_leader_election((3, 1), (1, 3), (1, 3)) == 3


def test_reassign_old_leader_offline():
    # Seed 002's second trigger: the leader (in the target replicas) went offline.
    current = LeaderAndIsr(1, 2, (1, 2), 0)
    result = leader_for_reassign((1, 2), current, (2,))
    assert result.leader_and_isr == LeaderAndIsr(2, 3, (1, 2), 0)


def test_reassign_no_target_replica_in_isr_and_live():
    current = LeaderAndIsr(0, 1, (0, 2), 0)
    assert leader_for_reassign((4, 5), current, (0, 2, 4, 5)) == ElectionResult(
        None, (4, 5), ElectionOutcome.NONE
    )
    assert leader_for_reassign((0, 5), current, (5,)).outcome is ElectionOutcome.NONE


def test_reassign_empty_target():
    assert reassign_partition_leader_election((), (1,), (1,)) is None


# ----------------------------------------------------------------------------------------
# preferredReplicaPartitionLeaderElection / leaderForPreferredReplica (seed 002)


def test_preferred_replica_leads_when_live_and_in_isr():
    current = LeaderAndIsr(2, 1, (2, 1), 4)
    result = leader_for_preferred_replica((1, 2), current, (1, 2))
    assert result == ElectionResult(LeaderAndIsr(1, 2, (2, 1), 4), (1, 2), ElectionOutcome.CLEAN)


def test_preferred_replica_not_in_isr_no_other_replica_is_tried():
    assert preferred_replica_partition_leader_election((1, 2, 3), (2, 3), (1, 2, 3)) is None


def test_preferred_replica_dead():
    assert preferred_replica_partition_leader_election((1, 2), (1, 2), (2,)) is None
    current = LeaderAndIsr(2, 0, (1, 2), 0)
    assert leader_for_preferred_replica((1, 2), current, (2,)) == ElectionResult(
        None, (1, 2), ElectionOutcome.NONE
    )


def test_preferred_replica_empty_assignment():
    assert preferred_replica_partition_leader_election((), (1,), (1,)) is None


def test_preferred_replica_already_leader_in_2x_gives_new_epoch():
    # 2.x's algorithm does not refuse (the controller filters such partitions before);
    # the 0.8 selector throws LeaderElectionNotNeededException.
    current = LeaderAndIsr(1, 5, (1, 2), 0)
    assert leader_for_preferred_replica((1, 2), current, (1, 2)).leader_and_isr == LeaderAndIsr(
        1, 6, (1, 2), 0
    )
    assert legacy_preferred_replica_partition_leader_selector((1, 2), current, (1, 2)).leader_and_isr is None


# ----------------------------------------------------------------------------------------
# controlledShutdownPartitionLeaderElection / leaderForControlledShutdown (seed 002)


def test_controlled_shutdown_elects_first_isr_replica_not_shutting_down():
    current = LeaderAndIsr(1, 2, (1, 3, 2), 8)
    result = leader_for_controlled_shutdown((1, 2, 3), current, (1, 2, 3), (1,))
    # Leader in assignment order (2, not 3); ISR minus the shutting-down broker.
    assert result == ElectionResult(LeaderAndIsr(2, 3, (3, 2), 8), (1, 2, 3), ElectionOutcome.CLEAN)


def test_controlled_shutdown_with_several_brokers_shutting_down():
    current = LeaderAndIsr(1, 0, (1, 2, 3), 0)
    result = leader_for_controlled_shutdown((1, 2, 3), current, (1, 2, 3), (1, 2))
    assert result.leader_and_isr == LeaderAndIsr(3, 1, (3,), 0)


def test_controlled_shutdown_no_other_isr_member():
    current = LeaderAndIsr(1, 0, (1,), 0)
    assert leader_for_controlled_shutdown((1, 2), current, (1, 2), (1,)) == ElectionResult(
        None, (1, 2), ElectionOutcome.NONE
    )


def test_controlled_shutdown_skips_dead_isr_members():
    # Broker 2 is dead (not live, not shutting down): it cannot lead; recipients are the
    # assigned replicas that are live or shutting down.
    current = LeaderAndIsr(1, 0, (1, 2, 3), 0)
    result = leader_for_controlled_shutdown((1, 2, 3), current, (1, 3), (1,))
    assert result.leader_and_isr == LeaderAndIsr(3, 1, (2, 3), 0)
    assert result.live_replicas == (1, 3)


def test_controlled_shutdown_algorithm_empty_inputs():
    assert controlled_shutdown_partition_leader_election((), (), (), ()) is None
    assert controlled_shutdown_partition_leader_election((1, 2), (1, 2), (1, 2), (1, 2)) is None


@pytest.mark.parametrize(
    ("assignment", "leader", "kwargs", "expected"),
    [
        ((1,), 1, {}, ControlledShutdownAction.SKIP),
        ((1, 2), 1, {}, ControlledShutdownAction.ELECT_LEADER),
        ((1, 2), 2, {}, ControlledShutdownAction.OFFLINE_FOLLOWER),
        ((1, 2), 1, {"has_leader_and_isr": False}, ControlledShutdownAction.SKIP),
        ((1, 2), 1, {"topic_queued_for_deletion": True}, ControlledShutdownAction.SKIP),
    ],
)
def test_controlled_shutdown_partition_action(assignment, leader, kwargs, expected):
    assert controlled_shutdown_partition_action(assignment, leader, 1, **kwargs) is expected


# ----------------------------------------------------------------------------------------
# initializeLeaderAndIsrForPartitions (seeds 000, 002, 003)


def test_initialize_first_live_replica_leads_isr_is_live_replicas_in_assignment_order():
    assert initialize_leader_and_isr((3, 1, 2), (2, 1)) == LeaderAndIsr(1, 0, (1, 2), 0)


def test_initialize_all_live():
    assert initialize_leader_and_isr((0, 1, 2), (0, 1, 2)) == LeaderAndIsr(0, 0, (0, 1, 2), 0)


def test_initialize_no_live_replica():
    assert initialize_leader_and_isr((1, 2), ()) is None
    assert initialize_leader_and_isr((1, 2), (3,)) is None
    assert initialize_leader_and_isr((), (1,)) is None


# ----------------------------------------------------------------------------------------
# doRemoveReplicasFromIsr: the offline-replica rule (seed 002)


def test_remove_leader_sets_no_leader_and_drops_it_from_isr():
    assert remove_replica_from_isr(LeaderAndIsr(1, 3, (1, 2), 4), 1) == LeaderAndIsr(NO_LEADER, 4, (2,), 4)


def test_remove_follower_keeps_leader():
    assert remove_replica_from_isr(LeaderAndIsr(1, 3, (1, 2, 3), 4), 2) == LeaderAndIsr(1, 4, (1, 3), 4)


def test_remove_last_isr_member_keeps_it_in_isr():
    # "当Isr的数量只剩下1个的时候,那么ISR等于原ISR": leader -1, ISR keeps its last member.
    assert remove_replica_from_isr(LeaderAndIsr(1, 3, (1,), 4), 1) == LeaderAndIsr(NO_LEADER, 4, (1,), 4)


def test_remove_last_isr_member_that_is_not_the_leader():
    assert remove_replica_from_isr(LeaderAndIsr(1, 3, (2,), 4), 2) == LeaderAndIsr(1, 4, (2,), 4)


def test_remove_replica_not_in_isr_writes_nothing():
    assert remove_replica_from_isr(LeaderAndIsr(1, 3, (1, 2), 4), 3) is None
    assert remove_replica_from_isr(LeaderAndIsr(NO_LEADER, 3, (1,), 4), 2) is None


# ----------------------------------------------------------------------------------------
# 0.8 selectors (seed 000, section 5.4)


def test_no_op_selector_returns_current_state_and_assignment():
    current = LeaderAndIsr(1, 2, (1, 2), 3)
    assert no_op_leader_selector(current, (1, 2, 3)) == ElectionResult(
        current, (1, 2, 3), ElectionOutcome.CLEAN
    )
    assert no_op_leader_selector(LeaderAndIsr(NO_LEADER, 2, (1,), 3), (1,)).outcome is ElectionOutcome.NONE


def test_legacy_offline_selector_clean_unclean_and_failures():
    current = LeaderAndIsr(1, 0, (1, 3, 2), 0)
    clean = legacy_offline_partition_leader_selector((1, 2, 3), current, (2, 3), False)
    assert clean == ElectionResult(LeaderAndIsr(2, 1, (3, 2), 1), (2, 3), ElectionOutcome.CLEAN)
    only_1 = LeaderAndIsr(1, 0, (1,), 0)
    unclean = legacy_offline_partition_leader_selector((1, 2, 3), only_1, (3, 2), True)
    assert unclean == ElectionResult(LeaderAndIsr(2, 1, (2,), 1), (2, 3), ElectionOutcome.UNCLEAN)
    assert legacy_offline_partition_leader_selector((1, 2, 3), only_1, (3, 2), False).leader_and_isr is None
    assert legacy_offline_partition_leader_selector((1, 2, 3), only_1, (), True).leader_and_isr is None
    # A live ISR member outside the assignment: liveReplicasInIsr.head of an empty list.
    assert legacy_offline_partition_leader_selector((1, 2), LeaderAndIsr(1, 0, (4,), 0), (4,), True) == (
        ElectionResult(None, (), ElectionOutcome.NONE)
    )


def test_legacy_reassigned_selector():
    current = LeaderAndIsr(1, 0, (1, 3, 2), 5)
    result = legacy_reassigned_partition_leader_selector((2, 3), current, (1, 2, 3))
    assert result == ElectionResult(LeaderAndIsr(2, 1, (1, 3, 2), 6), (2, 3), ElectionOutcome.CLEAN)
    assert legacy_reassigned_partition_leader_selector((4,), current, (4,)).leader_and_isr is None
    assert legacy_reassigned_partition_leader_selector((), current, (1,)).leader_and_isr is None


def test_legacy_preferred_selector():
    current = LeaderAndIsr(2, 0, (2, 1), 0)
    assert legacy_preferred_replica_partition_leader_selector((1, 2), current, (1, 2)).leader_and_isr == (
        LeaderAndIsr(1, 1, (2, 1), 1)
    )
    assert legacy_preferred_replica_partition_leader_selector((1, 2), current, (2,)).leader_and_isr is None
    assert legacy_preferred_replica_partition_leader_selector((3, 2), current, (2, 3)).leader_and_isr is None
    assert legacy_preferred_replica_partition_leader_selector((), current, (2,)).leader_and_isr is None


def test_legacy_controlled_shutdown_selector_takes_head_of_isr_not_assignment_order():
    current = LeaderAndIsr(1, 0, (1, 3, 2), 0)
    legacy = legacy_controlled_shutdown_leader_selector((1, 2, 3), current, (1, 2, 3), (1,))
    modern = leader_for_controlled_shutdown((1, 2, 3), current, (1, 2, 3), (1,))
    assert legacy.leader_and_isr == LeaderAndIsr(3, 1, (3, 2), 1)
    assert modern.leader_and_isr == LeaderAndIsr(2, 1, (3, 2), 0)
    assert legacy_controlled_shutdown_leader_selector((1, 2), LeaderAndIsr(1, 0, (1,), 0), (1, 2), (1,)) == (
        ElectionResult(None, (1, 2), ElectionOutcome.NONE)
    )


def test_legacy_controlled_shutdown_selector_does_not_check_liveness():
    # 0.8 picks the head of ISR - shutting down even if that broker is dead; 2.x does not.
    current = LeaderAndIsr(1, 0, (1, 2, 3), 0)
    assert (
        legacy_controlled_shutdown_leader_selector((1, 2, 3), current, (1, 3), (1,)).leader_and_isr.leader
        == 2
    )
    assert leader_for_controlled_shutdown((1, 2, 3), current, (1, 3), (1,)).leader_and_isr.leader == 3


# ----------------------------------------------------------------------------------------
# Exhaustive checks over three brokers


def _subsets(xs):
    for n in range(len(xs) + 1):
        yield from itertools.combinations(xs, n)


def _small_cases():
    brokers = (1, 2, 3)
    for assignment in itertools.permutations(brokers):
        for isr in _subsets(assignment):
            for live in _subsets(brokers):
                yield assignment, isr, live


def test_offline_election_properties_exhaustive():
    for assignment, isr, live in _small_cases():
        clean = offline_partition_leader_election(assignment, isr, live, False)
        if clean is not None:
            assert clean in isr and clean in live
            assert offline_partition_leader_election(assignment, isr, live, True) == clean
        else:
            assert not set(isr) & set(live)
        current = LeaderAndIsr(assignment[0], 3, isr, 1)
        for unclean in (False, True):
            result = leader_for_offline(assignment, current, live, unclean)
            if result.leader_and_isr is None:
                assert result.outcome is ElectionOutcome.NONE
                continue
            new = result.leader_and_isr
            assert new.leader in new.isr
            assert set(new.isr) <= set(assignment) & set(live)
            assert new.leader_epoch == 4 and new.zk_version == 1
            assert (result.outcome is ElectionOutcome.UNCLEAN) == (new.leader not in isr)
            if result.outcome is ElectionOutcome.UNCLEAN:
                assert unclean and new.isr == (new.leader,)


def test_other_strategies_elect_only_live_isr_members_exhaustive():
    for assignment, isr, live in _small_cases():
        current = LeaderAndIsr(assignment[-1], 0, isr, 0)
        for result in (
            leader_for_reassign(assignment[:2], current, live),
            leader_for_preferred_replica(assignment, current, live),
            leader_for_controlled_shutdown(assignment, current, live, assignment[:1]),
        ):
            if result.leader_and_isr is not None:
                assert result.leader_and_isr.leader in isr and result.leader_and_isr.leader in live
                assert result.leader_and_isr.leader_epoch == 1
                assert result.outcome is ElectionOutcome.CLEAN
            else:
                assert result.outcome is ElectionOutcome.NONE


def test_remove_replica_from_isr_never_empties_isr_exhaustive():
    for assignment, isr, _ in _small_cases():
        if not isr:
            continue
        for leader in (*assignment, NO_LEADER):
            for replica in assignment:
                new = remove_replica_from_isr(LeaderAndIsr(leader, 0, isr, 0), replica)
                if replica not in isr:
                    assert new is None
                    continue
                assert new is not None and len(new.isr) >= 1
                assert new.leader == (NO_LEADER if replica == leader else leader)
                assert new.isr == (isr if len(isr) == 1 else tuple(r for r in isr if r != replica))


# ----------------------------------------------------------------------------------------
# Seed 002's nine questions


def test_q1_partition_state_machine_elects_on_transitions_to_online():
    """Q1 什么是分区状态机? Every partition state change goes through the partition state
    machine; leader election happens on the transitions to OnlinePartition ("就是在之前
    状态=>OnlinePartition状态的时候发生的"), and only New/Offline partitions of topics not
    being deleted are triggered."""
    online = PartitionState.OnlinePartition
    for source in (
        PartitionState.NewPartition,
        PartitionState.OfflinePartition,
        PartitionState.OnlinePartition,
    ):
        assert is_valid_transition(StateMachine.PARTITION, source, online)
    assert not is_valid_transition(StateMachine.PARTITION, PartitionState.NonExistentPartition, online)
    assert triggers_online_partition_state_change(PartitionState.NewPartition, False)
    assert triggers_online_partition_state_change(PartitionState.OfflinePartition, False)
    assert not triggers_online_partition_state_change(PartitionState.OnlinePartition, False)
    assert not triggers_online_partition_state_change(PartitionState.OfflinePartition, True)


def test_q2_topic_creation_takes_first_live_replica_without_election():
    """Q2 创建Topic的时候如何选举Leader? No election: the first live replica (AR order) leads
    and the ISR is every live replica, in AR order, with leader epoch 0."""
    assert initialize_leader_and_isr((2, 0, 1), (0, 1, 2)) == LeaderAndIsr(2, 0, (2, 0, 1), 0)
    # Broker 2 down at creation: 0 leads, ISR keeps AR order.
    assert initialize_leader_and_isr((2, 0, 1), (1, 0)) == LeaderAndIsr(0, 0, (0, 1), 0)


@pytest.mark.parametrize(
    ("allow_unclean", "topic_unclean", "expected_leader"),
    [(False, False, None), (False, True, 3), (True, False, 3)],
)
def test_q3_all_replicas_down_then_a_non_isr_replica_starts(allow_unclean, topic_unclean, expected_leader):
    """Q3 分区的所有副本都不在线, 启动一台之前不在ISR内的副本, 它会当选为Leader吗? It depends:
    with unclean.leader.election.enable (or the admin override) it is the only live
    replica and leads uncleanly with ISR = [itself]; otherwise nobody leads."""
    # Assignment (1, 2, 3); the ISR shrank to (1,) and then broker 1 died (leader -1, the
    # ISR keeps its last member); broker 3 (never in the ISR) comes back.
    current = remove_replica_from_isr(LeaderAndIsr(1, 5, (1,), 7), 1)
    assert current == LeaderAndIsr(NO_LEADER, 6, (1,), 7)
    result = offline_partition_leader_election_strategy(
        (1, 2, 3), current, (3,), allow_unclean, topic_unclean
    )
    if expected_leader is None:
        assert result == ElectionResult(None, (3,), ElectionOutcome.NONE)
    else:
        assert result == ElectionResult(LeaderAndIsr(3, 7, (3,), 7), (3,), ElectionOutcome.UNCLEAN)


def _fail_brokers_one_by_one(assignment, order):
    """All brokers of a partition fail one after the other: offline election on each
    failure (clean only), then the offline-replica rule."""
    state = initialize_leader_and_isr(assignment, assignment)
    live = assignment
    for broker in order:
        live = tuple(b for b in live if b != broker)
        elected = leader_for_offline(assignment, state, live, False).leader_and_isr
        if state.leader == broker and elected is not None:
            state = elected
        removed = remove_replica_from_isr(state, broker)
        if removed is not None:
            state = removed
    return state


def test_q4_restart_one_by_one_unclean_off_first_isr_member_to_return_leads():
    """Q4 所有副本都不在线, 一个一个重启, 谁会当选? Not simply the first to start: with unclean
    election off, the first replica *in the ISR* to come back leads (not necessarily the
    AR head); brokers outside the ISR starting earlier do not lead."""
    state = _fail_brokers_one_by_one((1, 2, 3), (1, 2, 3))
    # The ISR kept its last member, broker 3; the leader is -1.
    # Epochs: 1 (2 leads), 2 (3 leads), 3 (broker 3 removed: leader -1).
    assert state == LeaderAndIsr(NO_LEADER, 3, (3,), 0)
    live: tuple[int, ...] = ()
    for broker, expected in ((1, None), (2, None), (3, 3)):
        live = (*live, broker)
        result = leader_for_offline((1, 2, 3), state, live, False)
        assert (None if result.leader_and_isr is None else result.leader_and_isr.leader) == expected
    assert result.outcome is ElectionOutcome.CLEAN


def test_q4_restart_one_by_one_unclean_on_first_to_start_leads():
    """Q4 with unclean.leader.election.enable=true: whoever starts first leads ("谁先启动,
    谁就当选(会丢失部分数据)")."""
    state = _fail_brokers_one_by_one((1, 2, 3), (1, 2, 3))
    result = leader_for_offline((1, 2, 3), state, (2,), True)
    assert result == ElectionResult(LeaderAndIsr(2, 4, (2,), 0), (2,), ElectionOutcome.UNCLEAN)


def test_q4_preferred_replica_election_moves_leadership_back_later():
    """Q4 (end): the leader may not be the AR head; the auto-rebalance (preferred replica
    strategy) fixes that once the preferred replica is back in the ISR. Rejoining the ISR
    is data-plane behaviour (the leader expands the ISR), left to the controller model."""
    after_q4 = LeaderAndIsr(3, 6, (3,), 0)
    assert leader_for_preferred_replica((1, 2, 3), after_q4, (1, 2, 3)).outcome is ElectionOutcome.NONE
    caught_up = after_q4._replace(isr=(3, 1))
    assert leader_for_preferred_replica((1, 2, 3), caught_up, (1, 2, 3)).leader_and_isr.leader == 1


def test_q5_restarted_broker_gets_leadership_back_only_by_preferred_election():
    """Q5 Broker下线, Leader切换给了其他副本, 重启后Leader会还给之前的副本吗? Only if
    auto.leader.rebalance.enable runs the preferred replica strategy; the partition is
    Online, so the broker start-up trigger (New/Offline only) elects nothing. The
    rebalance timer and imbalance ratio are controller behaviour."""
    state = LeaderAndIsr(1, 0, (1, 2), 0)
    state = leader_for_offline((1, 2), state, (2,), False).leader_and_isr
    state = remove_replica_from_isr(state, 1) or state
    assert state == LeaderAndIsr(2, 1, (2,), 0)
    # Broker 1 restarts: the partition is OnlinePartition and is not triggered.
    assert not triggers_online_partition_state_change(PartitionState.OnlinePartition, False)
    # Preferred election: refused until 1 is back in the ISR, then 1 leads again.
    assert leader_for_preferred_replica((1, 2), state, (1, 2)).leader_and_isr is None
    back = leader_for_preferred_replica((1, 2), state._replace(isr=(2, 1)), (1, 2))
    assert back.leader_and_isr == LeaderAndIsr(1, 2, (2, 1), 0)


def test_q6_a_successful_election_publishes_a_new_leader_epoch():
    """Q6 选举成功的那一刻, 生产者和消费者都做了哪些事情? The seed asks but does not answer;
    client behaviour (metadata refresh, NOT_LEADER retries) is outside these rules. The
    rule part: every successful election writes leader epoch + 1 and sends LeaderAndIsr
    to recipients that include the new leader, which is what brokers and clients see."""
    current = LeaderAndIsr(1, 9, (1, 2, 3), 4)
    results = [
        leader_for_offline((1, 2, 3), current, (2, 3), False),
        leader_for_reassign((3, 2), current, (2, 3)),
        leader_for_preferred_replica((2, 1, 3), current, (1, 2, 3)),
        leader_for_controlled_shutdown((1, 2, 3), current, (1, 2, 3), (1,)),
    ]
    for result in results:
        assert result.leader_and_isr.leader_epoch == current.leader_epoch + 1
        assert result.leader_and_isr.leader in result.live_replicas


def test_q7_election_that_finds_no_leader_writes_nothing():
    """Q7 Leader选举期间对分区的影响: the seed answers that a switch takes milliseconds
    (timing is the controller model's). The rule part: a failed election writes no new
    state ("当没有选出Leader的时候,那么是不会去更新ZK中的Leader和ISR信息的"); the partition
    stays leaderless (-1 through the offline-replica rule) until a candidate returns."""
    current = LeaderAndIsr(1, 2, (1,), 3)
    assert leader_for_offline((1, 2), current, (2,), False).leader_and_isr is None
    assert remove_replica_from_isr(current, 1).leader == NO_LEADER


def test_q8_broker_crash_drops_its_replicas_from_isr_except_last_members():
    """Q8 Broker宕机了, 会立即触发所有副本脱离ISR吗? The controller removes the dead replica
    from each ISR at once (OfflineReplica -> doRemoveReplicasFromIsr, no lag timeout),
    except where it is the ISR's last member: that ISR keeps it. Where the offline
    election already ran, the new ISR excludes it and nothing more is written."""
    dead = 1
    led = LeaderAndIsr(1, 0, (1, 2), 0)
    followed = LeaderAndIsr(2, 0, (2, 1), 0)
    alone = LeaderAndIsr(1, 0, (1,), 0)
    # Partition led by the dead broker: the offline election already shrank the ISR.
    elected = leader_for_offline((1, 2), led, (2,), False).leader_and_isr
    assert elected == LeaderAndIsr(2, 1, (2,), 0)
    assert remove_replica_from_isr(elected, dead) is None
    # Partition followed by the dead broker: no election; the ISR drops it.
    assert remove_replica_from_isr(followed, dead) == LeaderAndIsr(2, 1, (2,), 0)
    # Partition whose ISR is only the dead broker: leader -1, ISR keeps it.
    assert leader_for_offline((1, 2), alone, (2,), False).leader_and_isr is None
    assert remove_replica_from_isr(alone, dead) == LeaderAndIsr(NO_LEADER, 1, (1,), 0)


def test_q9_controlled_shutdown_then_offline_strategy_covers_the_rest():
    """Q9 为什么会又触发受控关机Leader选举策略、又会触发离线分区Leader选举策略? The
    controlled-shutdown strategy moves most leaders away while the broker is still up, but
    skips single-replica partitions and fails where no other ISR member exists; when the
    broker is gone the offline strategy handles those. Whether controlled.shutdown.enable
    is set is controller configuration."""
    broker = 1
    # RF = 1: skipped by controlled shutdown, leaderless after the broker dies.
    single = LeaderAndIsr(1, 0, (1,), 0)
    assert controlled_shutdown_partition_action((1,), 1, broker) is ControlledShutdownAction.SKIP
    assert leader_for_offline((1,), single, (), True).outcome is ElectionOutcome.NONE
    # RF = 2, ISR (1, 2): the controlled-shutdown election succeeds.
    healthy = LeaderAndIsr(1, 0, (1, 2), 0)
    assert controlled_shutdown_partition_action((1, 2), 1, broker) is ControlledShutdownAction.ELECT_LEADER
    assert leader_for_controlled_shutdown((1, 2), healthy, (1, 2), (1,)).leader_and_isr == LeaderAndIsr(
        2, 1, (2,), 0
    )
    # RF = 2, ISR (1,): controlled shutdown fails; after the broker dies the offline
    # strategy elects 2 only if unclean election is allowed.
    lagging = LeaderAndIsr(1, 0, (1,), 0)
    assert leader_for_controlled_shutdown((1, 2), lagging, (1, 2), (1,)).outcome is ElectionOutcome.NONE
    assert leader_for_offline((1, 2), lagging, (2,), False).outcome is ElectionOutcome.NONE
    assert leader_for_offline((1, 2), lagging, (2,), True).outcome is ElectionOutcome.UNCLEAN
