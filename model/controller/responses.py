"""The ZooKeeper server's responses to the controller model's requests (server -> client, FIFO
per session), one named type each; the requests are in ``model/controller/messages.py``."""

from __future__ import annotations

from typing import Any, NamedTuple

from model.controller.messages import name_records


class BrokerRegistered(NamedTuple):
    """``/brokers/ids/<id>`` created: the broker epoch (its czxid)."""

    op: int
    broker_epoch: int
    reelect: bool


class ControllerIdAndEpoch(NamedTuple):
    """``/controller``'s broker id (-1: none), ``/controller_epoch`` and its zkVersion."""

    op: int
    controller_id: int
    epoch: int
    epoch_zk_version: int


class ControllerRegistered(NamedTuple):
    """The election multi's result (``ok`` false: NodeExists / BadVersion)."""

    op: int
    ok: bool
    epoch: int
    epoch_zk_version: int


class ControllerPathCreated(NamedTuple):
    """0.8: ``/controller`` created (``ok``), else who holds it."""

    op: int
    ok: bool
    controller_id: int


class ControllerEpochRead(NamedTuple):
    """0.8: ``/controller_epoch`` and its zkVersion."""

    op: int
    epoch: int
    epoch_zk_version: int


class ControllerEpochIncremented(NamedTuple):
    """0.8: the conditional epoch write's result."""

    op: int
    ok: bool
    epoch: int
    epoch_zk_version: int


class ControllerContextData(NamedTuple):
    """The failover reads: each broker's epoch (0: not registered) and the partition states."""

    op: int
    live: tuple[int, ...]
    partition_states: tuple[Any, ...]


class ControllerContextWithTopics(NamedTuple):
    """The failover reads with the number of topics ``/brokers/topics`` holds
    (``topics_created_later``)."""

    op: int
    live: tuple[int, ...]
    partition_states: tuple[Any, ...]
    topics: int


class ControllerContextWithAdmin(NamedTuple):
    """The failover reads with the admin znodes: ``admin`` is (present partitions,
    assignments, ``/admin/delete_topics``, ``/admin/reassign_partitions``,
    ``/admin/preferred_replica_election``); ``topics`` is -1."""

    op: int
    live: tuple[int, ...]
    partition_states: tuple[Any, ...]
    topics: int
    admin: tuple[Any, ...]


class TopicPartitionStates(NamedTuple):
    """(partition, PartZ or None) per partition read."""

    op: int
    states: tuple[tuple[int, Any], ...]


class TopicPartitionStatesWithConfigs(NamedTuple):
    """The states with the topics whose ``unclean.leader.election.enable`` was set
    dynamically (``getLogConfigs``)."""

    op: int
    states: tuple[tuple[int, Any], ...]
    unclean_topics: tuple[int, ...]


class LeaderAndIsrWritten(NamedTuple):
    """The partition-state writes' results: ``ok`` false when the fence failed
    (ControllerMovedException), else (partition, new PartZ or None for BadVersion)."""

    op: int
    ok: bool
    results: tuple[tuple[int, Any], ...]


class BrokerEpochs(NamedTuple):
    """Each broker's registration epoch (0: not registered)."""

    op: int
    epochs: tuple[int, ...]


class IsrChangeNotifications(NamedTuple):
    """The notifications (partition, zkVersion written) and each one's partition's current state."""

    op: int
    notifications: tuple[tuple[int, int], ...]
    states: tuple[Any, ...]


class IsrUpdated(NamedTuple):
    """A leader's ISR write: the new state, or None (BadVersion)."""

    op: int
    partition: int
    state: Any


class Topics(NamedTuple):
    """How many topics ``/brokers/topics`` holds (they are created in order)."""

    op: int
    topics: int


class TopicsWithDeleted(NamedTuple):
    """The topics and those deleted (admin configurations)."""

    op: int
    topics: int
    deleted: tuple[int, ...]


class TopicDeletions(NamedTuple):
    """Children of ``/admin/delete_topics``."""

    op: int
    topics: tuple[int, ...]


class TopicZNodeDeleted(NamedTuple):
    """The fenced topic deletion's result."""

    op: int
    ok: bool


class ReplicaAssignment(NamedTuple):
    """Which partitions of ``topic`` exist."""

    op: int
    topic: int
    present: tuple[bool, ...]


class ReplicaAssignmentWritten(NamedTuple):
    """The fenced assignment write's result."""

    op: int
    ok: bool


class PartitionReassignment(NamedTuple):
    """``/admin/reassign_partitions``: (partition, RAR) pairs."""

    op: int
    reassignments: tuple[tuple[int, tuple[int, ...]], ...]


class PreferredReplicaElection(NamedTuple):
    """``/admin/preferred_replica_election``'s partitions."""

    op: int
    partitions: tuple[int, ...]


name_records(globals(), __name__)
