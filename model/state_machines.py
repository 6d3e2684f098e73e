"""The controller's PartitionStateMachine and ReplicaStateMachine: states, valid previous
states and the startup initialisation rules, as data and pure functions.

Sources (line numbers are those of the files in ``/work/shared/seeds``):

* seed 000 (0.8 controller): ``assertValidPreviousStates`` calls in
  ``PartitionStateMachine.handleStateChange`` (lines 430, 477, 626, 640) and
  ``ReplicaStateMachine.handleStateChange`` (lines 815, 842, 856, 868, 879, 894-895; the
  OfflineReplica case is not printed, its edges are in the diagram, lines 783-786);
* seed 001: the prose lists of valid previous states (partition lines 32-38, replica
  lines 44-50);
* seed 003 (2.x controller): ``NewReplica.validPreviousStates`` (line 22), the
  OnlineReplica comment in ``doHandleStateChanges`` (line 100), ``initializeReplicaState``
  (lines 43-58), ``initializePartitionState`` (lines 155-173) and
  ``triggerOnlinePartitionStateChange`` (lines 180-190).

Where the seeds disagree
------------------------
* Seed 000 quotes Kafka's class comment (lines 342-345): OnlinePartition from
  New/Offline only and OfflinePartition from New/Online only. The code it prints
  (lines 477, 626) and seed 001 (lines 36, 38) also allow Online -> Online and
  Offline -> Offline; the tables follow the code.
* Seed 001 (lines 45-46) leaves ReplicaDeletionIneligible out of the previous states of
  OnlineReplica and OfflineReplica; the 0.8 code (line 895, diagram line 786) and the
  2.x comment of seed 003 (line 100) include it; the tables follow the code.
* All three seeds give ReplicaDeletionIneligible only ReplicaDeletionStarted as a
  previous state (000 line 856, 001 line 49), and 0.8 and the 2.x of seed 003 agree on
  every row, so ``REPLICA_VALID_PREVIOUS_STATES`` (2.x, the default) and
  ``REPLICA_VALID_PREVIOUS_STATES_0_8`` hold the same edges. Later Kafka 2.x releases
  (not printed in the seeds) also allow OfflineReplica -> ReplicaDeletionIneligible,
  the step seed 001's topic deletion takes for replicas on dead brokers;
  ``REPLICA_VALID_PREVIOUS_STATES_LATER_2X`` has that edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import TYPE_CHECKING

from model.election import NO_LEADER

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "PARTITION_VALID_PREVIOUS_STATES",
    "PARTITION_VALID_PREVIOUS_STATES_0_8",
    "REPLICA_VALID_PREVIOUS_STATES",
    "REPLICA_VALID_PREVIOUS_STATES_0_8",
    "REPLICA_VALID_PREVIOUS_STATES_LATER_2X",
    "PartitionState",
    "ReplicaState",
    "StateMachine",
    "TableVersion",
    "initial_partition_state",
    "initial_replica_state",
    "is_valid_transition",
    "transition_graph",
    "triggers_online_partition_state_change",
    "valid_previous_states",
    "valid_transitions",
]


class KafkaState(IntEnum):
    """A state of one of Kafka's two state machines: its value is Kafka 2.x's ``state`` byte
    (seed 003: ``NewReplica`` has ``state: Byte = 1``), its ``str`` its name. What the state
    machine has not seen is in its ``NonExistent...`` state
    (``partitionState.getOrElseUpdate(partition, NonExistentPartition)``, likewise
    ``replicaState``, seed 003)."""

    def __str__(self) -> str:
        return self.name


class PartitionState(KafkaState):
    """Kafka's ``PartitionState``."""

    NewPartition = 0
    OnlinePartition = 1
    OfflinePartition = 2
    NonExistentPartition = 3


class ReplicaState(KafkaState):
    """Kafka's ``ReplicaState``."""

    NewReplica = 1
    OnlineReplica = 2
    OfflineReplica = 3
    ReplicaDeletionStarted = 4
    ReplicaDeletionSuccessful = 5
    ReplicaDeletionIneligible = 6
    NonExistentReplica = 7


class StateMachine(IntEnum):
    """Which of the controller's two state machines."""

    PARTITION = 0
    REPLICA = 1


class TableVersion(IntEnum):
    """Which valid-previous-states tables to use (see the module docstring)."""

    KAFKA_2_X = 0
    KAFKA_0_8 = 1
    KAFKA_LATER_2_X = 2


_P = PartitionState
_R = ReplicaState

PARTITION_VALID_PREVIOUS_STATES: Mapping[PartitionState, frozenset[PartitionState]] = {
    # seed 000 line 430; seed 001 line 34
    _P.NewPartition: frozenset({_P.NonExistentPartition}),
    # seed 000 line 477; seed 001 line 36; seed 003 doHandleStateChanges (New, Offline, Online)
    _P.OnlinePartition: frozenset({_P.NewPartition, _P.OnlinePartition, _P.OfflinePartition}),
    # seed 000 line 626; seed 001 line 38
    _P.OfflinePartition: frozenset({_P.NewPartition, _P.OnlinePartition, _P.OfflinePartition}),
    # seed 000 line 640; seed 001 line 32
    _P.NonExistentPartition: frozenset({_P.OfflinePartition}),
}
"""Kafka 2.x ``PartitionState.validPreviousStates`` (target -> sources); the default.

Identical to the 0.8 ``assertValidPreviousStates`` calls printed in seed 000 and to
seed 001's list (the narrower class comment quoted in seed 000, lines 342-345, is not
what the code checks).
"""

PARTITION_VALID_PREVIOUS_STATES_0_8: Mapping[PartitionState, frozenset[PartitionState]] = dict(
    PARTITION_VALID_PREVIOUS_STATES
)
"""The 0.8 table of seed 000 (lines 430, 477, 626, 640): the same edges as 2.x."""

REPLICA_VALID_PREVIOUS_STATES: Mapping[ReplicaState, frozenset[ReplicaState]] = {
    # seed 000 line 815; seed 001 line 44; seed 003 line 22
    _R.NewReplica: frozenset({_R.NonExistentReplica}),
    # seed 000 lines 894-895; seed 003 line 100 (seed 001 line 45 omits ReplicaDeletionIneligible)
    _R.OnlineReplica: frozenset(
        {_R.NewReplica, _R.OnlineReplica, _R.OfflineReplica, _R.ReplicaDeletionIneligible}
    ),
    # seed 000 diagram lines 783-786 (seed 001 line 46 omits ReplicaDeletionIneligible)
    _R.OfflineReplica: frozenset(
        {_R.NewReplica, _R.OnlineReplica, _R.OfflineReplica, _R.ReplicaDeletionIneligible}
    ),
    # seed 000 line 842; seed 001 line 47
    _R.ReplicaDeletionStarted: frozenset({_R.OfflineReplica}),
    # seed 000 line 868; seed 001 line 48
    _R.ReplicaDeletionSuccessful: frozenset({_R.ReplicaDeletionStarted}),
    # seed 000 line 856; seed 001 line 49
    _R.ReplicaDeletionIneligible: frozenset({_R.ReplicaDeletionStarted}),
    # seed 000 line 879; seed 001 line 50
    _R.NonExistentReplica: frozenset({_R.ReplicaDeletionSuccessful}),
}
"""Kafka 2.x ``ReplicaState.validPreviousStates`` as the seeds give it (target -> sources);
the default. The 2.x rows printed in seed 003 (NewReplica, OnlineReplica) match the 0.8
code of seed 000, which gives the rest.
"""

REPLICA_VALID_PREVIOUS_STATES_0_8: Mapping[ReplicaState, frozenset[ReplicaState]] = dict(
    REPLICA_VALID_PREVIOUS_STATES
)
"""The 0.8 table of seed 000 (``assertValidPreviousStates``, lines 815-895): the same edges."""

REPLICA_VALID_PREVIOUS_STATES_LATER_2X: Mapping[ReplicaState, frozenset[ReplicaState]] = {
    **REPLICA_VALID_PREVIOUS_STATES,
    _R.ReplicaDeletionIneligible: frozenset({_R.OfflineReplica, _R.ReplicaDeletionStarted}),
}
"""Later Kafka 2.x (not printed in the seeds): ReplicaDeletionIneligible is also reachable
from OfflineReplica, which seed 001's deletion steps need ("将处于 dead 节点上的 Replica 的状态
设置为 ReplicaDeletionIneligible 状态").
"""

_PARTITION_TABLES = {
    TableVersion.KAFKA_2_X: PARTITION_VALID_PREVIOUS_STATES,
    TableVersion.KAFKA_0_8: PARTITION_VALID_PREVIOUS_STATES_0_8,
    TableVersion.KAFKA_LATER_2_X: PARTITION_VALID_PREVIOUS_STATES,
}
_REPLICA_TABLES = {
    TableVersion.KAFKA_2_X: REPLICA_VALID_PREVIOUS_STATES,
    TableVersion.KAFKA_0_8: REPLICA_VALID_PREVIOUS_STATES_0_8,
    TableVersion.KAFKA_LATER_2_X: REPLICA_VALID_PREVIOUS_STATES_LATER_2X,
}


def valid_previous_states(
    machine: StateMachine,
    target: PartitionState | ReplicaState,
    version: TableVersion = TableVersion.KAFKA_2_X,
) -> frozenset[PartitionState] | frozenset[ReplicaState]:
    """``target.validPreviousStates`` in the chosen table.

    Parameters
    ----------
    target : PartitionState or ReplicaState
        A state of ``machine``.

    Raises
    ------
    ValueError
        If ``target`` is not a state of ``machine``.

    Examples
    --------
    >>> sorted(map(str, valid_previous_states(StateMachine.PARTITION, PartitionState.NonExistentPartition)))
    ['OfflinePartition']
    """
    if machine == StateMachine.PARTITION:
        if not isinstance(target, PartitionState):
            raise ValueError(f"partition state machine: {target!r} is not a PartitionState")
        return _PARTITION_TABLES[version][target]
    if not isinstance(target, ReplicaState):
        raise ValueError(f"replica state machine: {target!r} is not a ReplicaState")
    return _REPLICA_TABLES[version][target]


def is_valid_transition(
    machine: StateMachine,
    from_state: PartitionState | ReplicaState,
    to_state: PartitionState | ReplicaState,
    version: TableVersion = TableVersion.KAFKA_2_X,
) -> bool:
    """``isValidTransition``: is ``from_state`` a valid previous state of ``to_state``?

    Kafka 2.x ``PartitionStateMachine`` / ``ReplicaStateMachine.isValidTransition``
    (``targetState.validPreviousStates.contains(currentState)``, seed 003); the 0.8
    ``assertValidPreviousStates`` of seed 000 checks the same thing.

    Parameters
    ----------
    from_state, to_state : PartitionState or ReplicaState
        States of ``machine``.

    Raises
    ------
    ValueError
        If a state does not belong to ``machine``.

    Examples
    --------
    >>> is_valid_transition(StateMachine.PARTITION, PartitionState.NewPartition, PartitionState.OnlinePartition)
    True
    >>> is_valid_transition(StateMachine.REPLICA, ReplicaState.OnlineReplica, ReplicaState.ReplicaDeletionStarted)
    False
    """
    sources = valid_previous_states(machine, to_state, version)
    state_type = PartitionState if machine == StateMachine.PARTITION else ReplicaState
    if not isinstance(from_state, state_type):
        raise ValueError(
            f"{machine.name.lower()} state machine: {from_state!r} is not a {state_type.__name__}"
        )
    return from_state in sources


def valid_transitions(
    machine: StateMachine, version: TableVersion = TableVersion.KAFKA_2_X
) -> tuple[tuple[PartitionState, PartitionState], ...] | tuple[tuple[ReplicaState, ReplicaState], ...]:
    """Every valid edge ``(from, to)`` of a table, ordered by ``(to, from)`` state value.

    For coverage reports that draw the seeds' diagrams.

    Examples
    --------
    >>> len(valid_transitions(StateMachine.PARTITION)), len(valid_transitions(StateMachine.REPLICA))
    (8, 13)
    """
    table: Mapping = (
        _PARTITION_TABLES[version] if machine == StateMachine.PARTITION else _REPLICA_TABLES[version]
    )
    edges = []
    for target in sorted(table):
        for source in sorted(table[target]):
            edges.append((source, target))
    return tuple(edges)


def transition_graph(machine: StateMachine, version: TableVersion = TableVersion.KAFKA_2_X) -> nx.DiGraph:
    """The valid transitions of a table as a networkx directed graph.

    Nodes are every state of ``machine`` (as its name, e.g. ``"OnlinePartition"``; the
    node attribute ``state`` holds the enum member), edges are ``valid_transitions``
    (self-loops included); the graph attribute ``machine`` is ``"partition"`` or
    ``"replica"``. Coverage reports count hits per edge and draw this graph.

    Examples
    --------
    >>> g = transition_graph(StateMachine.PARTITION)
    >>> g.number_of_nodes(), g.number_of_edges(), g.has_edge("NewPartition", "OnlinePartition")
    (4, 8, True)
    >>> transition_graph(StateMachine.REPLICA).graph["machine"]
    'replica'
    """
    states: type[PartitionState] | type[ReplicaState] = (
        PartitionState if machine == StateMachine.PARTITION else ReplicaState
    )
    import networkx as nx  # here, not at the top: a CLI start should not pay for it

    g = nx.DiGraph(machine="partition" if machine == StateMachine.PARTITION else "replica")
    for st in states:
        g.add_node(st.name, state=st)
    for a, b in valid_transitions(machine, version):
        g.add_edge(a.name, b.name)
    return g


def initial_replica_state(replica_broker_is_live: bool) -> ReplicaState:
    """``ReplicaStateMachine.initializeReplicaState`` for one replica (seed 003 lines 43-58;
    0.8 in seed 000).

    A replica on a live broker starts OnlineReplica; one on a dead broker starts
    ReplicaDeletionIneligible ("to be on the safer side" for topic deletion). Startup then
    moves every live replica to OnlineReplica (OnlineReplica -> OnlineReplica).

    Parameters
    ----------
    replica_broker_is_live : bool
        ``controllerContext.isReplicaOnline(replicaId, partition)``.

    Examples
    --------
    >>> str(initial_replica_state(True)), str(initial_replica_state(False))
    ('OnlineReplica', 'ReplicaDeletionIneligible')
    """
    if replica_broker_is_live:
        return ReplicaState.OnlineReplica
    return ReplicaState.ReplicaDeletionIneligible


def initial_partition_state(leader: int, leader_is_live: bool, has_leader_and_isr: bool) -> PartitionState:
    """``PartitionStateMachine.initializePartitionState`` for one partition (seed 003 lines 155-173).

    Without a leader-and-ISR znode the partition is NewPartition; with one, it is
    OnlinePartition if the leader is online and OfflinePartition otherwise. A leader of
    ``NO_LEADER`` (-1) is never online (no broker has that id).

    Parameters
    ----------
    leader : int
        The leader recorded in the partition's state znode.
    leader_is_live : bool
        ``controllerContext.isReplicaOnline(leader, partition)``.
    has_leader_and_isr : bool
        Whether ``partitionLeadershipInfo`` has the partition.

    Examples
    --------
    >>> str(initial_partition_state(1, True, True)), str(initial_partition_state(-1, True, True))
    ('OnlinePartition', 'OfflinePartition')
    >>> str(initial_partition_state(1, True, False))
    'NewPartition'
    """
    if not has_leader_and_isr:
        return PartitionState.NewPartition
    if leader != NO_LEADER and leader_is_live:
        return PartitionState.OnlinePartition
    return PartitionState.OfflinePartition


def triggers_online_partition_state_change(state: PartitionState, topic_queued_for_deletion: bool) -> bool:
    """Is the partition in ``triggerOnlinePartitionStateChange``'s set? (seed 003 lines 180-190;
    seed 002's ``triggerOnlineStateChangeForPartitions``).

    New and Offline partitions of topics not queued for deletion are moved to
    OnlinePartition with ``OfflinePartitionLeaderElectionStrategy(false)``.

    Examples
    --------
    >>> triggers_online_partition_state_change(PartitionState.OfflinePartition, False)
    True
    >>> triggers_online_partition_state_change(PartitionState.OfflinePartition, True)
    False
    """
    if topic_queued_for_deletion:
        return False
    return state == PartitionState.NewPartition or state == PartitionState.OfflinePartition
