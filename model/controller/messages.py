"""Messages between the actors, each a named type: ZooKeeper requests and controller-to-broker
requests (the ZooKeeper responses are in ``responses.py``, the controller events in ``events.py``).

Every message is a ``NamedTuple`` whose first field is its kind (``EV_*``, ``Q_*`` or ``M_*``),
so messages of different types never compare equal and a state holds nothing but tuples and
ints (its canonical encoding, ``explorer.encoding``, is that of the plain tuple). A ZooKeeper
response repeats its request's op. Construct a message with its kind first:
``RegisterBroker(Q_REGISTER_BROKER, True)``.

>>> GetControllerIdAndEpoch(Q_READ_CTL) == (Q_READ_CTL,)
True
>>> RegisterBroker(Q_REGISTER_BROKER, True).op == Q_REGISTER_BROKER
True
"""

from __future__ import annotations

from typing import Any, NamedTuple

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
WRITES = frozenset(
    {
        Q_WRITE_PARTS,
        Q_REGISTER_CTL,
        Q_INC_EPOCH,
        Q_DELETE_CTL,
        Q_DELETE_ISR_CHANGES,
        Q_CREATE_CTL,
        Q_DELETE_DELETIONS,
        Q_DELETE_TOPIC,
        Q_WRITE_ASSIGN,
        Q_WRITE_REASSIGN,
        Q_DELETE_PREFERRED,
    }
)
FENCED_ADMIN_WRITES = frozenset(
    {Q_DELETE_DELETIONS, Q_DELETE_TOPIC, Q_WRITE_ASSIGN, Q_WRITE_REASSIGN, Q_DELETE_PREFERRED}
)
# where the fence (expected /controller_epoch zkVersion) sits in an admin write request; the
# writer's controller epoch follows it
FENCE_AT = {
    Q_DELETE_DELETIONS: 2,
    Q_DELETE_TOPIC: 2,
    Q_WRITE_ASSIGN: 3,
    Q_WRITE_REASSIGN: 2,
    Q_DELETE_PREFERRED: 1,
}


def admin_write_epoch(req: tuple) -> int:
    """The controller epoch an admin-workflow write was sent with.

    >>> from model.controller.messages import Q_DELETE_PREFERRED
    >>> admin_write_epoch((Q_DELETE_PREFERRED, 4, 2))
    2
    """
    return req[FENCE_AT[req[0]] + 1]


# election strategies (doElectLeaderForPartitions) and other partition-state writes, as tagged on
# the write request
S_OFFLINE, S_REASSIGN, S_PREFERRED, S_CONTROLLED_SHUTDOWN, S_INIT, S_REMOVE, S_EPOCH, S_ADMIN_UNCLEAN = range(
    8
)
#: coverage labels, by strategy (S_ADMIN_UNCLEAN: OfflinePartitionLeaderElectionStrategy(allowUnclean = true))
STRATEGY_NAMES = ("offline", "reassign", "preferred", "controlled_shutdown", "", "", "", "admin_unclean")

# controller-to-broker request kinds
M_LEADER_AND_ISR, M_UPDATE_METADATA, M_STOP_REPLICA, M_CS_RESPONSE = 0, 1, 2, 3
# UpdateMetadata's leader of a partition whose topic is being deleted (LeaderAndIsr.LeaderDuringDelete)
LEADER_DURING_DELETE = -2
MESSAGE_NAMES = ("LeaderAndIsr", "UpdateMetadata", "StopReplica", "ControlledShutdownResponse")


# ---------------------------------------------------------------------------------------
# ZooKeeper requests (client -> server, FIFO per session), named after KafkaZkClient's methods


class RegisterBroker(NamedTuple):
    """``registerBroker``: create ``/brokers/ids/<id>`` (ephemeral); ``reelect``: the 2.x
    ``RegisterBrokerAndReelect`` (the response queues the election)."""

    op: int
    reelect: bool


class GetControllerIdAndEpoch(NamedTuple):
    """2.x ``elect``: ``getControllerId`` and ``getControllerEpoch``, read back to back."""

    op: int


class RegisterControllerAndIncrementControllerEpoch(NamedTuple):
    """multi(create ``/controller``, setData ``/controller_epoch`` = ``epoch`` expecting
    ``epoch_zk_version``): ``epoch`` is the new epoch (read + 1)."""

    op: int
    epoch: int
    epoch_zk_version: int


class CreateControllerPath(NamedTuple):
    """0.8 ``ZookeeperLeaderElector.elect``: create ``/controller`` (ephemeral)."""

    op: int


class ReadControllerEpoch(NamedTuple):
    """0.8 ``readControllerEpochFromZookeeper``."""

    op: int


class IncrementControllerEpoch(NamedTuple):
    """0.8 ``incrementControllerEpoch``: setData ``/controller_epoch`` = ``epoch`` (the new
    one) expecting ``epoch_zk_version``."""

    op: int
    epoch: int
    epoch_zk_version: int


class DeleteControllerPath(NamedTuple):
    """Delete ``/controller`` (0.8 ``resign``); fire-and-forget."""

    op: int


class ReadControllerContext(NamedTuple):
    """``onControllerFailover``'s reads (brokers with their epochs, topics, partition states,
    admin znodes), registering the controller's watches first."""

    op: int


class GetTopicPartitionStates(NamedTuple):
    """``getTopicPartitionStates`` of ``partitions``."""

    op: int
    partitions: tuple[int, ...]


class UpdateLeaderAndIsr(NamedTuple):
    """``updateLeaderAndIsr`` / ``createTopicPartitionStatesRaw`` (``create``): one
    conditional write per partition, fenced on ``/controller_epoch``'s zkVersion (``fence``;
    -1: not fenced); ``strategy`` (``S_*``) says why the controller writes."""

    op: int
    writes: tuple[tuple[int, Any], ...]  #: (partition, PartZ with the expected version)
    fence: int
    controller_epoch: int
    create: bool
    strategy: int


class GetAllBrokersInCluster(NamedTuple):
    """``getAllBrokerAndEpochsInCluster``: ``/brokers/ids`` children with their epochs."""

    op: int


class GetAllIsrChangeNotifications(NamedTuple):
    """``getAllIsrChangeNotifications`` and the notified partitions' states."""

    op: int


class DeleteIsrChangeNotifications(NamedTuple):
    """``deleteIsrChangeNotifications(sequenceNumbers)``: the notifications read, no others
    (fenced; fire-and-forget)."""

    op: int
    notifications: tuple[tuple[int, int], ...]  #: (partition, zkVersion) of each, as read
    fence: int
    controller_epoch: int


class UpdateIsr(NamedTuple):
    """A partition leader's ISR change: setData of the partition state expecting its
    zkVersion, plus an ``/isr_change_notification``."""

    op: int
    partition: int
    state: Any  #: the new PartZ, with the zkVersion it expects


class GetAllTopicsInCluster(NamedTuple):
    """``getAllTopicsInCluster`` and the new topics' assignments."""

    op: int


class GetTopicDeletions(NamedTuple):
    """``getTopicDeletions``: children of ``/admin/delete_topics``."""

    op: int


class DeleteTopicDeletions(NamedTuple):
    """``deleteTopicDeletions`` (fenced; fire-and-forget)."""

    op: int
    topics: tuple[int, ...]
    fence: int
    controller_epoch: int


class DeleteTopicZNode(NamedTuple):
    """``deleteTopicZNode`` (recursive), ``deleteTopicConfigs`` and the deletion znode (fenced)."""

    op: int
    topic: int
    fence: int
    controller_epoch: int


class GetReplicaAssignmentForTopic(NamedTuple):
    """``getReplicaAssignmentForTopics`` of one topic (``PartitionModifications``)."""

    op: int
    topic: int


class SetReplicaAssignment(NamedTuple):
    """``setTopicAssignment``: AR of one partition (fenced)."""

    op: int
    partition: int
    replicas: tuple[int, ...]
    fence: int
    controller_epoch: int


class GetPartitionReassignment(NamedTuple):
    """``getPartitionReassignment``: ``/admin/reassign_partitions``."""

    op: int


class RemovePartitionsFromReassignment(NamedTuple):
    """``removePartitionsFromReassignedPartitions`` (fenced; fire-and-forget); ``completed``:
    the reassignment finished (not cancelled)."""

    op: int
    partitions: tuple[int, ...]
    fence: int
    controller_epoch: int
    completed: bool


class GetPreferredReplicaElection(NamedTuple):
    """``getPreferredReplicaElection``: ``/admin/preferred_replica_election``."""

    op: int


class DeletePreferredReplicaElection(NamedTuple):
    """Delete ``/admin/preferred_replica_election`` (fenced; fire-and-forget)."""

    op: int
    fence: int
    controller_epoch: int


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


class LeaderAndIsrRequest(NamedTuple):
    """``LeaderAndIsrRequest`` with the controller and broker epochs it is sent with."""

    kind: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[Any, ...]


class UpdateMetadataPayload(NamedTuple):
    """What an ``UpdateMetadataRequest`` carries (of Kafka's fields, those the model has):
    ``liveBrokers`` and, per partition sent, its leader, leader epoch and ISR as the controller
    knows them (leader ``LEADER_DURING_DELETE``: the topic is being deleted)."""

    live_brokers: tuple[int, ...]
    partition_states: tuple[tuple[int, int, int, tuple[int, ...]], ...]  #: (p, leader, leader epoch, ISR)


class UpdateMetadataRequest(NamedTuple):
    """``UpdateMetadataRequest``: the live brokers and some partitions' states, for the brokers'
    metadata caches."""

    kind: int
    controller_epoch: int
    broker_epoch: int
    payload: UpdateMetadataPayload


class StopReplicaPartitions(NamedTuple):
    """A StopReplica's partitions (bit mask), ``deletePartitions`` and whether its response
    goes to the deletion callback."""

    mask: int
    delete: bool
    callback: bool


class StopReplicaRequest(NamedTuple):
    """``StopReplicaRequest``."""

    kind: int
    controller_epoch: int
    broker_epoch: int
    payload: StopReplicaPartitions


class ControlledShutdownResponse(NamedTuple):
    """The controller's answer to a ``ControlledShutdownRequest``."""

    kind: int
    controller_epoch: int
    broker_epoch: int
    payload: tuple[()]


def _named(self: Any) -> str:
    """The message as ``Name(field=value, ...)``, its kind left out (the class names it): how a
    counterexample's step table shows it (``explorer.core.describe``)."""
    return (
        f"{type(self).__name__}(" + ", ".join(f"{k}={v!r}" for k, v in zip(self._fields[1:], self[1:])) + ")"
    )


def name_records(namespace: dict[str, Any], module: str) -> None:
    """Give every record class of ``module`` (found in its ``namespace``) whose first field is
    its ``op`` or ``kind`` code the ``Name(field=value, ...)`` ``str`` (:func:`_named`)."""
    for cls in [c for c in list(namespace.values()) if isinstance(c, type) and c.__module__ == module]:
        if issubclass(cls, tuple) and getattr(cls, "_fields", ("",))[:1] in (("op",), ("kind",)):
            setattr(cls, "__str__", _named)  # noqa: B010 - a class attribute set after the fact


name_records(globals(), __name__)
