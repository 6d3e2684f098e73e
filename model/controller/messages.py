"""Messages between the actors, each a named type: ZooKeeper requests and controller-to-broker
requests (the ZooKeeper responses are in ``responses.py``, the controller events in ``events.py``).

A ZooKeeper request is a record (``model/records.py``): the tuple of its kind's ``Q_*`` code and
its fields, so a state holds nothing but tuples and ints (its canonical encoding,
``explorer.encoding``, is that of the plain tuple, as before). The model builds and matches the
classes, named after KafkaZkClient's methods; the ``Q_*`` codes are the encoding and nothing else
(a response, ``responses.py``, repeats its request's). A controller-to-broker request
(``BrokerRequest``, named after Kafka's request classes) is a record too, of an ``M_*`` code.

>>> GetControllerIdAndEpoch() == (Q_READ_CTL,), RegisterBroker(True).reelect
(True, True)
>>> str(RegisterBroker(True)), type(REQUESTS.view((Q_READ_CTL,))).__name__
('RegisterBroker(reelect=True)', 'GetControllerIdAndEpoch')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from model.controller.ids import (
    BrokerList,
    IsrChangeSeqs,
    LeaderAndIsrStates,
    PartitionId,
    PartitionSet,
    PartitionZnode,
    PartitionZnodes,
    StopReplicaData,
    TopicId,
    TopicSet,
    UpdateMetadataData,
)
from model.records import Record, RecordFamily

# ZooKeeper request ops (first item of a request tuple; responses reuse the op)
(
    Q_REGISTER_BROKER,
    Q_READ_CTL,
    Q_REGISTER_CTL,
    Q_CREATE_CTL,
    Q_READ_EPOCH,
    Q_INC_EPOCH,
    Q_DELETE_CTL,
    Q_READ_CONTEXT,
    Q_READ_PARTS,
    Q_WRITE_PARTS,
    Q_READ_BROKERS,
    Q_READ_ISR_CHANGES,
    Q_DELETE_ISR_CHANGES,
    Q_UPDATE_ISR,
    Q_READ_TOPICS,
    Q_READ_DELETIONS,
    Q_DELETE_DELETIONS,
    Q_DELETE_TOPIC,
    Q_READ_ASSIGN,
    Q_WRITE_ASSIGN,
    Q_READ_REASSIGN,
    Q_WRITE_REASSIGN,
    Q_READ_PREFERRED,
    Q_DELETE_PREFERRED,
) = range(24)
REQUEST_NAMES = (
    "create /brokers/ids/<id> (ephemeral)",
    "getData /controller and /controller_epoch",
    "multi(create /controller, setData /controller_epoch)",
    "create /controller (ephemeral)",
    "getData /controller_epoch",
    "setData /controller_epoch",
    "delete /controller",
    "read context and register controller watches",
    "getData partition states",
    "write partition states",
    "getChildren /brokers/ids",
    "read /isr_change_notification",
    "delete isr change notifications",
    "leader ISR update (setData partition state + isr_change_notification)",
    "getChildren /brokers/topics and the new topics' assignments",
    "getChildren /admin/delete_topics",
    "delete /admin/delete_topics/<t>",
    "delete /brokers/topics/<t> (recursive), /config/topics/<t>, /admin/delete_topics/<t>",
    "getData /brokers/topics/<t>",
    "setData /brokers/topics/<t> (assignment)",
    "getData /admin/reassign_partitions",
    "remove partitions from /admin/reassign_partitions",
    "getData /admin/preferred_replica_election",
    "delete /admin/preferred_replica_election",
)
# election strategies (doElectLeaderForPartitions) and other partition-state writes, as tagged on
# the write request
S_OFFLINE, S_REASSIGN, S_PREFERRED, S_CONTROLLED_SHUTDOWN, S_INIT, S_REMOVE, S_EPOCH, S_ADMIN_UNCLEAN = range(
    8
)
#: coverage labels, by strategy (S_ADMIN_UNCLEAN: OfflinePartitionLeaderElectionStrategy(allowUnclean = true))
STRATEGY_NAMES = ("offline", "reassign", "preferred", "controlled_shutdown", "", "", "", "admin_unclean")

# controller-to-broker request kinds (first item of a request tuple: the encoding only)
M_LEADER_AND_ISR, M_UPDATE_METADATA, M_STOP_REPLICA, M_CS_RESPONSE = 0, 1, 2, 3
# UpdateMetadata's leader of a partition whose topic is being deleted (LeaderAndIsr.LeaderDuringDelete)
LEADER_DURING_DELETE = -2


# ---------------------------------------------------------------------------------------
# ZooKeeper requests (client -> server, FIFO per session), named after KafkaZkClient's methods


class ZkRequest(Record):
    """A ZooKeeper request: the tuple ``(code, field, ...)`` (``model/records.py``); a subclass
    names its ``Q_*`` code, and gets ``kafka_call`` (how a trace names it) from it."""

    __slots__ = ()
    #: what the request does, as a trace names it
    kafka_call: ClassVar[str] = ""

    def __init_subclass__(cls, code: int | None = None, **kw: Any) -> None:
        super().__init_subclass__(code=code, **kw)
        if code is not None:
            cls.kafka_call = REQUEST_NAMES[code]


class RegisterBroker(ZkRequest, code=Q_REGISTER_BROKER):
    """``registerBroker``: create ``/brokers/ids/<id>`` (ephemeral); ``reelect``: the 2.x
    ``RegisterBrokerAndReelect`` (the response queues the election)."""

    __slots__ = ()
    reelect: bool


class GetControllerIdAndEpoch(ZkRequest, code=Q_READ_CTL):
    """2.x ``elect``: ``getControllerId`` and ``getControllerEpoch``, read back to back."""

    __slots__ = ()


class RegisterControllerAndIncrementControllerEpoch(ZkRequest, code=Q_REGISTER_CTL):
    """multi(create ``/controller``, setData ``/controller_epoch`` = ``epoch`` expecting
    ``epoch_zk_version``): ``epoch`` is the new epoch (read + 1)."""

    __slots__ = ()
    epoch: int
    epoch_zk_version: int


class CreateControllerPath(ZkRequest, code=Q_CREATE_CTL):
    """0.8 ``ZookeeperLeaderElector.elect``: create ``/controller`` (ephemeral)."""

    __slots__ = ()


class ReadControllerEpoch(ZkRequest, code=Q_READ_EPOCH):
    """0.8 ``readControllerEpochFromZookeeper``."""

    __slots__ = ()


class IncrementControllerEpoch(ZkRequest, code=Q_INC_EPOCH):
    """0.8 ``incrementControllerEpoch``: setData ``/controller_epoch`` = ``epoch`` (the new
    one) expecting ``epoch_zk_version``."""

    __slots__ = ()
    epoch: int
    epoch_zk_version: int


class DeleteControllerPath(ZkRequest, code=Q_DELETE_CTL):
    """Delete ``/controller`` (0.8 ``resign``); fire-and-forget."""

    __slots__ = ()


class ReadControllerContext(ZkRequest, code=Q_READ_CONTEXT):
    """``onControllerFailover``'s reads (brokers with their epochs, topics, partition states,
    admin znodes), registering the controller's watches first; with ``delete_isr_changes``
    (2.x, seed 004: 1311), ``deleteIsrChangeNotifications(epochZkVersion)`` before the reads:
    every ``/isr_change_notification`` child deleted, fenced on ``fence`` (``-1``: unfenced).
    Without it (0.8, which has no such znode) the tuple is ``(code,)`` as before."""

    __slots__ = ()
    delete_isr_changes: bool = False
    fence: int = -1


class GetTopicPartitionStates(ZkRequest, code=Q_READ_PARTS):
    """``getTopicPartitionStates`` of ``partitions``."""

    __slots__ = ()
    partitions: PartitionSet


class UpdateLeaderAndIsr(ZkRequest, code=Q_WRITE_PARTS):
    """``updateLeaderAndIsr`` / ``createTopicPartitionStatesRaw`` (``create``): one
    conditional write per partition, fenced on ``/controller_epoch``'s zkVersion (``fence``;
    -1: not fenced); ``strategy`` (``S_*``) says why the controller writes."""

    __slots__ = ()
    writes: PartitionZnodes  #: (partition, PartZ with the expected version)
    fence: int
    controller_epoch: int
    create: bool
    strategy: int


class GetAllBrokersInCluster(ZkRequest, code=Q_READ_BROKERS):
    """``getAllBrokerAndEpochsInCluster``: ``/brokers/ids`` children with their epochs."""

    __slots__ = ()


class GetAllIsrChangeNotifications(ZkRequest, code=Q_READ_ISR_CHANGES):
    """``getAllIsrChangeNotifications`` and the notified partitions' states."""

    __slots__ = ()


class DeleteIsrChangeNotifications(ZkRequest, code=Q_DELETE_ISR_CHANGES):
    """``deleteIsrChangeNotifications(sequenceNumbers)``: the notifications read, no others
    (fenced; fire-and-forget)."""

    __slots__ = ()
    notifications: IsrChangeSeqs  #: (partition, zkVersion) of each, as read
    fence: int
    controller_epoch: int


class UpdateIsr(ZkRequest, code=Q_UPDATE_ISR):
    """A partition leader's ISR change: setData of the partition state expecting its
    zkVersion, plus an ``/isr_change_notification``."""

    __slots__ = ()
    partition: PartitionId
    state: PartitionZnode  #: the new PartZ, with the zkVersion it expects


class GetAllTopicsInCluster(ZkRequest, code=Q_READ_TOPICS):
    """``getAllTopicsInCluster`` and the new topics' assignments."""

    __slots__ = ()


class GetTopicDeletions(ZkRequest, code=Q_READ_DELETIONS):
    """``getTopicDeletions``: children of ``/admin/delete_topics``."""

    __slots__ = ()


class DeleteTopicDeletions(ZkRequest, code=Q_DELETE_DELETIONS):
    """``deleteTopicDeletions`` (fenced; fire-and-forget)."""

    __slots__ = ()
    topics: TopicSet
    fence: int
    controller_epoch: int


class DeleteTopicZNode(ZkRequest, code=Q_DELETE_TOPIC):
    """``deleteTopicZNode`` (recursive), ``deleteTopicConfigs`` and the deletion znode (fenced);
    with ``recursive_topic_deletion``, one of ``deleteRecursive``'s deletes: ``partition`` >= 0,
    that partition's state znode (no response awaited: the controller waits on the topic's),
    else ``/brokers/topics/<t>`` with its config (the deletion znode is a ``DeleteTopicDeletions``
    of its own)."""

    __slots__ = ()
    topic: TopicId
    fence: int
    controller_epoch: int
    partition: PartitionId = -1

    def describe(self) -> str:
        """How a trace names it: ``kafka_call``, or the one partition's delete."""
        if self.partition < 0:
            return self.kafka_call
        return "delete /brokers/topics/<t>/partitions/<p>/state (deleteRecursive, one partition)"


class GetReplicaAssignmentForTopic(ZkRequest, code=Q_READ_ASSIGN):
    """``getReplicaAssignmentForTopics`` of one topic (``PartitionModifications``)."""

    __slots__ = ()
    topic: TopicId


class SetReplicaAssignment(ZkRequest, code=Q_WRITE_ASSIGN):
    """``setTopicAssignment``: AR of one partition (fenced)."""

    __slots__ = ()
    partition: PartitionId
    replicas: BrokerList
    fence: int
    controller_epoch: int


class GetPartitionReassignment(ZkRequest, code=Q_READ_REASSIGN):
    """``getPartitionReassignment``: ``/admin/reassign_partitions``."""

    __slots__ = ()


class RemovePartitionsFromReassignment(ZkRequest, code=Q_WRITE_REASSIGN):
    """``removePartitionsFromReassignedPartitions`` (fenced; fire-and-forget); ``completed``:
    the reassignment finished (not cancelled)."""

    __slots__ = ()
    partitions: PartitionSet
    fence: int
    controller_epoch: int
    completed: bool


class GetPreferredReplicaElection(ZkRequest, code=Q_READ_PREFERRED):
    """``getPreferredReplicaElection``: ``/admin/preferred_replica_election``."""

    __slots__ = ()


class DeletePreferredReplicaElection(ZkRequest, code=Q_DELETE_PREFERRED):
    """Delete ``/admin/preferred_replica_election`` (fenced; fire-and-forget)."""

    __slots__ = ()
    fence: int
    controller_epoch: int


#: every request class, and the view of a plain request tuple as its record
REQUESTS = RecordFamily(
    [
        c
        for c in list(globals().values())
        if isinstance(c, type) and issubclass(c, ZkRequest) and c is not ZkRequest
    ]
)
#: the requests that write to ZooKeeper
WRITES = frozenset(
    {
        UpdateLeaderAndIsr,
        RegisterControllerAndIncrementControllerEpoch,
        IncrementControllerEpoch,
        DeleteControllerPath,
        DeleteIsrChangeNotifications,
        CreateControllerPath,
        DeleteTopicDeletions,
        DeleteTopicZNode,
        SetReplicaAssignment,
        RemovePartitionsFromReassignment,
        DeletePreferredReplicaElection,
    }
)
#: the admin workflows' writes, fenced on ``/controller_epoch``'s zkVersion (``fence``) and
#: carrying the writer's ``controller_epoch``
FENCED_ADMIN_WRITES = frozenset(
    {
        DeleteTopicDeletions,
        DeleteTopicZNode,
        SetReplicaAssignment,
        RemovePartitionsFromReassignment,
        DeletePreferredReplicaElection,
    }
)


# ---------------------------------------------------------------------------------------
# Controller-to-broker requests (FIFO per (controller, broker) channel)


class LeaderAndIsrPartitionState(NamedTuple):
    """One partition's entry of a LeaderAndIsr request."""

    partition: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int


class LeaderAndIsrPartitionStateWithReplicas(NamedTuple):
    """An entry with the assigned replicas (admin configurations: the leader adds to the ISR
    only replicas of this AR)."""

    partition: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]


class BrokerRequest(Record):
    """A controller-to-broker request (or the controlled-shutdown response), sent on the FIFO
    channel of (controller, broker): the tuple ``(code, controller_epoch, broker_epoch, data)``
    (``model/records.py``), every one fenced by the controller epoch and the broker epoch it is
    sent with. A subclass names its ``M_*`` code and ``kafka_name``, how a trace names it.

    >>> r = LeaderAndIsrRequest(2, 1, (LeaderAndIsrPartitionState(0, 1, 3, (1, 0), 4),))
    >>> r == (M_LEADER_AND_ISR, 2, 1, ((0, 1, 3, (1, 0), 4),)), r.kafka_name, r.controller_epoch
    (True, 'LeaderAndIsr', 2)
    >>> type(BROKER_REQUESTS.view((M_CS_RESPONSE, 2, 1, ()))).__name__
    'ControlledShutdownResponse'
    """

    __slots__ = ()
    #: the request's name in Kafka, as a trace shows it
    kafka_name: ClassVar[str] = ""
    if TYPE_CHECKING:  # every subclass declares both (at run time its own annotations name them)
        controller_epoch: int
        broker_epoch: int


class LeaderAndIsrRequest(BrokerRequest, code=M_LEADER_AND_ISR):
    """``LeaderAndIsrRequest``: ``partition_states``, one ``LeaderAndIsrPartitionState`` (or
    ``...WithReplicas``) per partition the receiving broker leads or follows."""

    __slots__ = ()
    kafka_name = "LeaderAndIsr"
    controller_epoch: int
    broker_epoch: int
    partition_states: LeaderAndIsrStates


class UpdateMetadataPayload(NamedTuple):
    """What an ``UpdateMetadataRequest`` carries (of Kafka's fields, those the model has):
    ``liveBrokers`` and, per partition sent, its leader, leader epoch and ISR as the controller
    knows them (leader ``LEADER_DURING_DELETE``: the topic is being deleted)."""

    live_brokers: tuple[int, ...]
    partition_states: tuple[tuple[int, int, int, tuple[int, ...]], ...]  #: (p, leader, leader epoch, ISR)


class UpdateMetadataRequest(BrokerRequest, code=M_UPDATE_METADATA):
    """``UpdateMetadataRequest``: the live brokers and some partitions' states, for the brokers'
    metadata caches (``data``, Kafka's ``UpdateMetadataRequestData``).

    >>> UpdateMetadataRequest(1, 2, UpdateMetadataPayload((0, 1), ((0, 1, 1, (1, 0)),))).data.live_brokers
    (0, 1)
    """

    __slots__ = ()
    kafka_name = "UpdateMetadata"
    controller_epoch: int
    broker_epoch: int
    data: UpdateMetadataData


class StopReplicaPartitions(NamedTuple):
    """A StopReplica's partitions (bit mask), ``deletePartitions`` and whether its response
    goes to the deletion callback."""

    mask: int
    delete: bool
    callback: bool


class StopReplicaRequest(BrokerRequest, code=M_STOP_REPLICA):
    """``StopReplicaRequest``: its partitions and ``deletePartitions`` (``data``, Kafka's
    ``StopReplicaRequestData``), and whether the response goes to the deletion callback.

    >>> StopReplicaRequest(1, 2, StopReplicaPartitions(0b101, True, True)).data.delete
    True
    """

    __slots__ = ()
    kafka_name = "StopReplica"
    controller_epoch: int
    broker_epoch: int
    data: StopReplicaData


class ControlledShutdownResponse(BrokerRequest, code=M_CS_RESPONSE):
    """The controller's answer to a ``ControlledShutdownRequest`` (``partitionsRemaining``: the
    model's controller answers when none is left, so always empty).

    >>> ControlledShutdownResponse(1, 2, ()) == (M_CS_RESPONSE, 1, 2, ())
    True
    """

    __slots__ = ()
    kafka_name = "ControlledShutdownResponse"
    controller_epoch: int
    broker_epoch: int
    partitions_remaining: PartitionSet


#: every controller-to-broker request class, and the view of a plain request tuple as its record
BROKER_REQUESTS = RecordFamily(
    [LeaderAndIsrRequest, UpdateMetadataRequest, StopReplicaRequest, ControlledShutdownResponse]
)
