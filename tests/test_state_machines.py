"""PartitionStateMachine / ReplicaStateMachine tables and startup rules (model/state_machines.py)."""

from __future__ import annotations

import itertools

import pytest

from model.election import NO_LEADER
from model.state_machines import (
    PARTITION_VALID_PREVIOUS_STATES,
    PARTITION_VALID_PREVIOUS_STATES_0_8,
    REPLICA_VALID_PREVIOUS_STATES,
    REPLICA_VALID_PREVIOUS_STATES_0_8,
    REPLICA_VALID_PREVIOUS_STATES_LATER_2X,
    PartitionState,
    ReplicaState,
    StateMachine,
    TableVersion,
    initial_partition_state,
    initial_replica_state,
    is_valid_transition,
    triggers_online_partition_state_change,
    valid_previous_states,
    valid_transitions,
)

P = PartitionState
R = ReplicaState

# Every edge the seeds list, with where.
SEED_PARTITION_EDGES = [
    (P.NonExistentPartition, P.NewPartition),  # 000 line 430, 001 line 34
    (P.NewPartition, P.OnlinePartition),  # 000 line 477, 001 line 36
    (P.OnlinePartition, P.OnlinePartition),  # 000 line 477, 001 line 36
    (P.OfflinePartition, P.OnlinePartition),  # 000 line 477, 001 line 36
    (P.NewPartition, P.OfflinePartition),  # 000 line 626, 001 line 38
    (P.OnlinePartition, P.OfflinePartition),  # 000 line 626, 001 line 38
    (P.OfflinePartition, P.OfflinePartition),  # 000 line 626, 001 line 38
    (P.OfflinePartition, P.NonExistentPartition),  # 000 line 640, 001 line 32
]

SEED_REPLICA_EDGES = [
    (R.NonExistentReplica, R.NewReplica),  # 000 line 815, 001 line 44, 003 line 22
    (R.NewReplica, R.OnlineReplica),  # 000 line 895, 001 line 45, 003 line 100
    (R.OnlineReplica, R.OnlineReplica),
    (R.OfflineReplica, R.OnlineReplica),
    (R.ReplicaDeletionIneligible, R.OnlineReplica),  # 000 line 895, 003 line 100
    (R.NewReplica, R.OfflineReplica),  # 000 diagram lines 783-786, 001 line 46
    (R.OnlineReplica, R.OfflineReplica),
    (R.OfflineReplica, R.OfflineReplica),
    (R.ReplicaDeletionIneligible, R.OfflineReplica),  # 000 diagram line 786
    (R.OfflineReplica, R.ReplicaDeletionStarted),  # 000 line 842, 001 line 47
    (R.ReplicaDeletionStarted, R.ReplicaDeletionSuccessful),  # 000 line 868, 001 line 48
    (R.ReplicaDeletionStarted, R.ReplicaDeletionIneligible),  # 000 line 856, 001 line 49
    (R.ReplicaDeletionSuccessful, R.NonExistentReplica),  # 000 line 879, 001 line 50
]


def test_state_values_are_kafka_state_bytes():
    assert [(s.name, s.value) for s in PartitionState] == [
        ("NewPartition", 0),
        ("OnlinePartition", 1),
        ("OfflinePartition", 2),
        ("NonExistentPartition", 3),
    ]
    assert [(s.name, s.value) for s in ReplicaState] == [
        ("NewReplica", 1),
        ("OnlineReplica", 2),
        ("OfflineReplica", 3),
        ("ReplicaDeletionStarted", 4),
        ("ReplicaDeletionSuccessful", 5),
        ("ReplicaDeletionIneligible", 6),
        ("NonExistentReplica", 7),
    ]
    assert str(PartitionState.OnlinePartition) == "OnlinePartition"
    assert str(ReplicaState.ReplicaDeletionIneligible) == "ReplicaDeletionIneligible"


@pytest.mark.parametrize(("source", "target"), SEED_PARTITION_EDGES)
def test_every_seed_partition_edge_is_valid(source, target):
    assert is_valid_transition(StateMachine.PARTITION, source, target)
    assert is_valid_transition(StateMachine.PARTITION, source, target, TableVersion.KAFKA_0_8)


@pytest.mark.parametrize(("source", "target"), SEED_REPLICA_EDGES)
def test_every_seed_replica_edge_is_valid(source, target):
    for version in TableVersion:
        assert is_valid_transition(StateMachine.REPLICA, source, target, version)


def test_tables_hold_exactly_the_seed_edges():
    assert set(valid_transitions(StateMachine.PARTITION)) == set(SEED_PARTITION_EDGES)
    assert set(valid_transitions(StateMachine.REPLICA)) == set(SEED_REPLICA_EDGES)
    assert len(valid_transitions(StateMachine.PARTITION)) == len(SEED_PARTITION_EDGES)
    assert len(valid_transitions(StateMachine.REPLICA)) == len(SEED_REPLICA_EDGES)


def test_every_pair_not_listed_is_invalid():
    for source, target in itertools.product(PartitionState, repeat=2):
        expected = (source, target) in SEED_PARTITION_EDGES
        assert is_valid_transition(StateMachine.PARTITION, source, target) is expected
    for source, target in itertools.product(ReplicaState, repeat=2):
        expected = (source, target) in SEED_REPLICA_EDGES
        assert is_valid_transition(StateMachine.REPLICA, source, target) is expected


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (
            P.NonExistentPartition,
            P.OnlinePartition,
        ),  # 000 line 476: "不能直接从 NonExistentPartition 转换为 OnlinePartition"
        (P.NewPartition, P.NonExistentPartition),
        (P.OnlinePartition, P.NonExistentPartition),
        (P.OnlinePartition, P.NewPartition),  # 000 line 497: "it never goes back to the NewPartition state"
        (P.NonExistentPartition, P.OfflinePartition),
    ],
)
def test_invalid_partition_transitions_rejected(source, target):
    assert not is_valid_transition(StateMachine.PARTITION, source, target)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (R.OnlineReplica, R.ReplicaDeletionStarted),  # deletion must go through OfflineReplica
        (R.NonExistentReplica, R.OnlineReplica),
        (R.ReplicaDeletionSuccessful, R.OnlineReplica),
        (R.ReplicaDeletionIneligible, R.ReplicaDeletionStarted),
        (R.OnlineReplica, R.NonExistentReplica),
        (R.NewReplica, R.NewReplica),
        (R.OfflineReplica, R.ReplicaDeletionIneligible),  # only in later 2.x, see below
    ],
)
def test_invalid_replica_transitions_rejected(source, target):
    assert not is_valid_transition(StateMachine.REPLICA, source, target)


def test_0_8_tables_match_2x_tables():
    assert PARTITION_VALID_PREVIOUS_STATES_0_8 == PARTITION_VALID_PREVIOUS_STATES
    assert REPLICA_VALID_PREVIOUS_STATES_0_8 == REPLICA_VALID_PREVIOUS_STATES


def test_later_2x_table_adds_offline_to_ineligible_only():
    diff = set(valid_transitions(StateMachine.REPLICA, TableVersion.KAFKA_LATER_2_X)) - set(
        valid_transitions(StateMachine.REPLICA)
    )
    assert diff == {(R.OfflineReplica, R.ReplicaDeletionIneligible)}
    assert is_valid_transition(
        StateMachine.REPLICA, R.OfflineReplica, R.ReplicaDeletionIneligible, TableVersion.KAFKA_LATER_2_X
    )
    assert REPLICA_VALID_PREVIOUS_STATES_LATER_2X[R.NewReplica] == REPLICA_VALID_PREVIOUS_STATES[R.NewReplica]


def test_seed_000_class_comment_is_narrower_than_the_code():
    # 000 lines 344-345 (Kafka's class comment) omit Online -> Online and Offline -> Offline;
    # the assertValidPreviousStates calls (lines 477, 626) allow them, and so do we.
    assert is_valid_transition(StateMachine.PARTITION, P.OnlinePartition, P.OnlinePartition)
    assert is_valid_transition(StateMachine.PARTITION, P.OfflinePartition, P.OfflinePartition)


def test_seed_001_omission_of_ineligible_follows_the_code():
    # 001 lines 45-46 omit ReplicaDeletionIneligible; 000 line 895 and 003 line 100 have it.
    assert is_valid_transition(StateMachine.REPLICA, R.ReplicaDeletionIneligible, R.OnlineReplica)
    assert is_valid_transition(StateMachine.REPLICA, R.ReplicaDeletionIneligible, R.OfflineReplica)


def test_tables_have_an_entry_for_every_state_and_frozenset_values():
    for table, states in (
        (PARTITION_VALID_PREVIOUS_STATES, PartitionState),
        (REPLICA_VALID_PREVIOUS_STATES, ReplicaState),
        (REPLICA_VALID_PREVIOUS_STATES_LATER_2X, ReplicaState),
    ):
        assert set(table) == set(states)
        assert all(isinstance(v, frozenset) and v for v in table.values())


def test_valid_previous_states_lookup():
    assert valid_previous_states(StateMachine.REPLICA, R.NewReplica) == frozenset({R.NonExistentReplica})
    assert valid_previous_states(StateMachine.PARTITION, P.NewPartition) == frozenset(
        {P.NonExistentPartition}
    )


def test_mismatched_machine_and_state_is_an_error():
    with pytest.raises(ValueError, match="not a PartitionState"):
        is_valid_transition(StateMachine.PARTITION, P.NewPartition, R.NewReplica)
    with pytest.raises(ValueError, match="not a ReplicaState"):
        is_valid_transition(StateMachine.REPLICA, P.NewPartition, R.NewReplica)
    with pytest.raises(ValueError, match="not a ReplicaState"):
        valid_previous_states(StateMachine.REPLICA, P.OnlinePartition)


def test_valid_transitions_order_is_deterministic():
    edges = valid_transitions(StateMachine.REPLICA)
    assert list(edges) == sorted(edges, key=lambda e: (e[1], e[0]))
    assert edges[0] == (R.NonExistentReplica, R.NewReplica)


# ----------------------------------------------------------------------------------------
# Startup (seed 003)


def test_initial_replica_state():
    assert initial_replica_state(True) is R.OnlineReplica
    assert initial_replica_state(False) is R.ReplicaDeletionIneligible


def test_startup_moves_every_initial_replica_state_to_online_validly():
    # startup(): handleStateChanges(allLiveReplicas, OnlineReplica) -- OnlineReplica ->
    # OnlineReplica for live ones; a dead replica (Ineligible) may go Online when its
    # broker returns (onBrokerStartup) or Offline.
    for live in (True, False):
        assert is_valid_transition(StateMachine.REPLICA, initial_replica_state(live), R.OnlineReplica)
        assert is_valid_transition(StateMachine.REPLICA, initial_replica_state(live), R.OfflineReplica)


@pytest.mark.parametrize(
    ("leader", "leader_is_live", "has_leader_and_isr", "expected"),
    [
        (1, True, True, P.OnlinePartition),
        (1, False, True, P.OfflinePartition),
        (NO_LEADER, False, True, P.OfflinePartition),
        (NO_LEADER, True, True, P.OfflinePartition),  # -1 is never an online replica
        (1, True, False, P.NewPartition),
        (1, False, False, P.NewPartition),
    ],
)
def test_initial_partition_state(leader, leader_is_live, has_leader_and_isr, expected):
    assert initial_partition_state(leader, leader_is_live, has_leader_and_isr) is expected


def test_startup_trigger_moves_new_and_offline_partitions_validly():
    for state in PartitionState:
        for queued in (False, True):
            triggered = triggers_online_partition_state_change(state, queued)
            assert triggered is (not queued and state in (P.NewPartition, P.OfflinePartition))
            if triggered:
                assert is_valid_transition(StateMachine.PARTITION, state, P.OnlinePartition)


@pytest.mark.parametrize("version", list(TableVersion))
def test_transition_graphs_hold_exactly_the_tables_edges(version):
    """The networkx graphs of both machines are the valid-previous-states tables."""
    from model.state_machines import transition_graph

    for machine, states in ((StateMachine.PARTITION, P), (StateMachine.REPLICA, R)):
        g = transition_graph(machine, version)
        assert set(g.nodes) == {s.name for s in states}
        want = {
            (a.name, b.name) for a in states for b in states if is_valid_transition(machine, a, b, version)
        }
        assert set(g.edges) == want
    g = transition_graph(StateMachine.PARTITION)
    assert set(g.edges) == {(a.name, b.name) for a, b in SEED_PARTITION_EDGES}
    g = transition_graph(StateMachine.REPLICA)
    assert set(g.edges) == {(a.name, b.name) for a, b in SEED_REPLICA_EDGES}
    assert g.nodes["OnlineReplica"]["state"] is R.OnlineReplica
