"""The ZooKeeper server's responses to the controller model's requests (server -> client, FIFO
per session), one record class each (``model/records.py``), named after what it returns: the
tuple of its request's code and its fields, as before; the requests are in
``model/controller/messages.py``."""

from __future__ import annotations

from typing import Any, ClassVar

from model.controller import messages as q
from model.controller.ids import (
    AdminZnodes,
    BrokerId,
    PartitionId,
    PartitionSet,
    PartitionZnode,
    PartitionZnodes,
    PerBroker,
    PerPartitionZnode,
    Reassignments,
    TopicList,
    TopicSet,
)
from model.records import Record


class ZkResponse(Record):
    """A ZooKeeper response: the tuple ``(code, field, ...)`` whose code is its request's; a
    subclass names its ``request`` class (and so its code and ``kafka_call``)."""

    __slots__ = ()
    #: the request it answers, and what that does (as a trace names it)
    request: ClassVar[type[q.ZkRequest]]
    kafka_call: ClassVar[str] = ""

    def __init_subclass__(cls, request: type[q.ZkRequest] | None = None, **kw: Any) -> None:
        super().__init_subclass__(code=None if request is None else request.code, **kw)
        if request is not None:
            cls.request = request
            cls.kafka_call = request.kafka_call


class BrokerRegistered(ZkResponse, request=q.RegisterBroker):
    """``/brokers/ids/<id>`` created: the broker epoch (its czxid)."""

    __slots__ = ()
    broker_epoch: int
    reelect: bool


class ControllerIdAndEpoch(ZkResponse, request=q.GetControllerIdAndEpoch):
    """``/controller``'s broker id (-1: none), ``/controller_epoch`` and its zkVersion."""

    __slots__ = ()
    controller_id: BrokerId
    epoch: int
    epoch_zk_version: int


class ControllerRegistered(ZkResponse, request=q.RegisterControllerAndIncrementControllerEpoch):
    """The election multi's result (``ok`` false: NodeExists / BadVersion)."""

    __slots__ = ()
    ok: bool
    epoch: int
    epoch_zk_version: int


class ControllerPathCreated(ZkResponse, request=q.CreateControllerPath):
    """0.8: ``/controller`` created (``ok``), else who holds it."""

    __slots__ = ()
    ok: bool
    controller_id: BrokerId


class ControllerEpochRead(ZkResponse, request=q.ReadControllerEpoch):
    """0.8: ``/controller_epoch`` and its zkVersion."""

    __slots__ = ()
    epoch: int
    epoch_zk_version: int


class ControllerEpochIncremented(ZkResponse, request=q.IncrementControllerEpoch):
    """0.8: the conditional epoch write's result."""

    __slots__ = ()
    ok: bool
    epoch: int
    epoch_zk_version: int


class ControllerContext(ZkResponse, request=q.ReadControllerContext):
    """The failover reads: each broker's epoch (0: not registered) and the partition states;
    ``topics`` (``topics_created_later`` only): how many topics ``/brokers/topics`` holds;
    ``admin`` (admin configurations only, ``topics`` -1): (present partitions, assignments,
    ``/admin/delete_topics``, ``/admin/reassign_partitions``,
    ``/admin/preferred_replica_election``). A field not sent is absent from the tuple."""

    __slots__ = ()
    live: PerBroker
    partition_states: PerPartitionZnode
    topics: int = -1
    admin: AdminZnodes | None = None


class TopicPartitionStates(ZkResponse, request=q.GetTopicPartitionStates):
    """(partition, PartZ or None) per partition read; with ``max_unclean_enables``, the topics
    whose ``unclean.leader.election.enable`` was set dynamically (``getLogConfigs``)."""

    __slots__ = ()
    states: PartitionZnodes
    unclean_topics: TopicList = ()


class LeaderAndIsrWritten(ZkResponse, request=q.UpdateLeaderAndIsr):
    """The partition-state writes' results: ``ok`` false when the fence failed
    (ControllerMovedException), else (partition, new PartZ or None for BadVersion)."""

    __slots__ = ()
    ok: bool
    results: PartitionZnodes


class BrokerEpochs(ZkResponse, request=q.GetAllBrokersInCluster):
    """Each broker's registration epoch (0: not registered)."""

    __slots__ = ()
    epochs: PerBroker


class IsrChangeNotifications(ZkResponse, request=q.GetAllIsrChangeNotifications):
    """The notifications (partition, zkVersion written) and each one's partition's current state."""

    __slots__ = ()
    notifications: tuple[tuple[int, int], ...]
    states: tuple[Any, ...]


class IsrUpdated(ZkResponse, request=q.UpdateIsr):
    """A leader's ISR write: the new state, or None (BadVersion)."""

    __slots__ = ()
    partition: PartitionId
    state: PartitionZnode


class Topics(ZkResponse, request=q.GetAllTopicsInCluster):
    """How many topics ``/brokers/topics`` holds (they are created in order); in admin
    configurations, also those deleted."""

    __slots__ = ()
    topics: int
    deleted: TopicSet = ()


class TopicDeletions(ZkResponse, request=q.GetTopicDeletions):
    """Children of ``/admin/delete_topics``."""

    __slots__ = ()
    topics: TopicSet


class TopicZNodeDeleted(ZkResponse, request=q.DeleteTopicZNode):
    """The fenced topic deletion's result."""

    __slots__ = ()
    ok: bool


class ReplicaAssignment(ZkResponse, request=q.GetReplicaAssignmentForTopic):
    """Which partitions of ``topic`` exist."""

    __slots__ = ()
    topic: int
    present: tuple[bool, ...]


class ReplicaAssignmentWritten(ZkResponse, request=q.SetReplicaAssignment):
    """The fenced assignment write's result."""

    __slots__ = ()
    ok: bool


class PartitionReassignment(ZkResponse, request=q.GetPartitionReassignment):
    """``/admin/reassign_partitions``: (partition, RAR) pairs."""

    __slots__ = ()
    reassignments: Reassignments


class PreferredReplicaElection(ZkResponse, request=q.GetPreferredReplicaElection):
    """``/admin/preferred_replica_election``'s partitions."""

    __slots__ = ()
    partitions: PartitionSet
