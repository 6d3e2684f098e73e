"""The controller's small programs: the steps an event handler runs, one record class per step
(named after the Kafka method it stands for), and the codes that encode steps and waits.

A controller event handler in Kafka runs to completion, blocking on its ZooKeeper calls. The
model cuts it at each call: the handler sends the request and *parks* a continuation in
``Node.pending`` (a record of ``model/controller/continuations.py``: what it waits for, the data
the resumed code needs, the requests gathered for ``sendRequestsToBrokers`` and ``rest``, the
steps still to run). The ZooKeeper response resumes it (``KafkaController.resume``), which
continues the Kafka method and then runs ``rest`` (``KafkaController.run``, a ``match`` on the
step's class).

A step is a :class:`model.records.Record`: a tuple ``(code, args...)`` with named fields, so a
state holding it encodes as it always did. The ``O_*`` and ``W_*`` codes below are that encoding
and nothing else: the model builds and matches the classes (a plain tuple, as a mutant may write
one, is read with ``STEPS.view``).
"""

from __future__ import annotations

from typing import Any

from model.controller.ids import (
    BrokerEpochPairs,
    BrokerId,
    BrokerList,
    BrokerPartitions,
    BrokerSet,
    PartitionId,
    PartitionSet,
    TopicId,
    TopicSet,
)
from model.records import Record, RecordFamily

# the encoding: program steps' codes (item 0 of a step record)
(
    O_ELECT,
    O_MAYBE_RESIGN,
    O_FAILOVER,
    O_TRIGGER,
    O_BROKER_CHANGE,
    O_ON_STARTUP,
    O_ON_FAILURE,
    O_REMOVE_ISR,
    O_LIVE_REMOVE,
    O_LIVE_ADD,
    O_ISR_CHANGE,
    O_L_ELECT,
    O_L_RESIGN_ELECT,
    O_SEND_UM,
    O_NEW_PARTITIONS,
    O_NEW_REPLICAS_ONLINE,
    O_RESUME_DELETIONS,
    O_DEL_STARTED,
    O_DEL_COMPLETE,
    O_FAIL_DELETION,
    O_REASSIGN,
    O_REASSIGN_DONE,
    O_ELECT_PARTS,
    O_DELETE_PREFERRED,
    O_CS_RESPOND,
    O_RESUME_TOPIC,
    O_ON_TOPIC_DELETION,
    O_STOP,
) = range(28)

# ... and waits' codes (item 0 of a parked continuation, ``continuations.py``)
W_ELECT_READ, W_RESIGN_READ, W_REGISTER, W_CONTEXT, W_INIT, W_ELECT_PARTS, W_ELECT_WRITE = range(7)
W_BROKERS, W_ISR_READ, W_RM_READ, W_RM_WRITE, W_L_READ, W_L_CREATE, W_L_EPOCH, W_L_INC = range(7, 15)
W_TOPICS = 15
W_DEL_READ, W_DEL_DONE, W_PMOD, W_REASSIGN_READ, W_REASSIGN_PARTS, W_ASSIGN, W_PREF_READ = range(16, 23)
W_EPOCH_LISTENER = 23  # KAFKA-1096's ControllerEpochListener (model/controller/bugs/kafka_1096.py)


class Elect(Record, code=O_ELECT):
    """2.x ``elect``: read ``/controller`` (``getControllerId``), register if none, failover."""

    __slots__ = ()


class MaybeResign(Record, code=O_MAYBE_RESIGN):
    """``maybeResign``: re-read ``/controller``, resign if another broker holds it."""

    __slots__ = ()


class OnControllerFailover(Record, code=O_FAILOVER):
    """``onControllerFailover`` (its context read first)."""

    __slots__ = ()


class TriggerOnlinePartitionStateChange(Record, code=O_TRIGGER):
    """``triggerOnlinePartitionStateChange`` (of one topic when ``topic`` >= 0)."""

    __slots__ = ()
    topic: TopicId = -1


class ElectLeaderForPartitions(Record, code=O_ELECT_PARTS):
    """``handleStateChanges(partitions, OnlinePartition, strategy)`` (``strategy``: ``S_*``)."""

    __slots__ = ()
    strategy: int
    partitions: PartitionSet


class ProcessBrokerChange(Record, code=O_BROKER_CHANGE):
    """``processBrokerChange``: read ``/brokers/ids``."""

    __slots__ = ()


class OnBrokerStartup(Record, code=O_ON_STARTUP):
    """``onBrokerStartup(brokers)``."""

    __slots__ = ()
    brokers: BrokerSet


class OnBrokerFailure(Record, code=O_ON_FAILURE):
    """``onBrokerFailure(brokers)``."""

    __slots__ = ()
    brokers: BrokerSet


class OfflineReplicas(Record, code=O_REMOVE_ISR):
    """A broker's replicas (of ``partitions``; ``None``: all it holds) -> OfflineReplica
    (``doRemoveReplicasFromIsr``)."""

    __slots__ = ()
    broker: BrokerId
    partitions: PartitionSet | None = None


class RemoveLiveBrokers(Record, code=O_LIVE_REMOVE):
    """``removeLiveBrokers`` (a bounced broker)."""

    __slots__ = ()
    brokers: BrokerSet


class AddLiveBrokersAndEpochs(Record, code=O_LIVE_ADD):
    """``addLiveBrokersAndEpochs`` (a bounced broker, with its new epoch)."""

    __slots__ = ()
    brokers_and_epochs: BrokerEpochPairs


class ProcessIsrChangeNotification(Record, code=O_ISR_CHANGE):
    """``processIsrChangeNotification``."""

    __slots__ = ()


class SendUpdateMetadataRequest(Record, code=O_SEND_UM):
    """``sendUpdateMetadataRequest`` to every live broker."""

    __slots__ = ()


class LegacyElect(Record, code=O_L_ELECT):
    """0.8 ``ZookeeperLeaderElector.elect``."""

    __slots__ = ()


class LegacyResignAndElect(Record, code=O_L_RESIGN_ELECT):
    """0.8 ``handleDataDeleted``: resign if it was the controller, then elect."""

    __slots__ = ()


class OnNewPartitionCreation(Record, code=O_NEW_PARTITIONS):
    """``onNewPartitionCreation``."""

    __slots__ = ()
    partitions: PartitionSet


class NewReplicasOnline(Record, code=O_NEW_REPLICAS_ONLINE):
    """The new partitions' replicas -> OnlineReplica."""

    __slots__ = ()
    partitions: PartitionSet


class ResumeDeletions(Record, code=O_RESUME_DELETIONS):
    """``topicDeletionManager.resumeDeletions``."""

    __slots__ = ()


class ResumeDeletionForTopics(Record, code=O_RESUME_TOPIC):
    """``resumeDeletionForTopics(topics)``."""

    __slots__ = ()
    topics: TopicSet


class OnTopicDeletion(Record, code=O_ON_TOPIC_DELETION):
    """``onTopicDeletion`` / ``startReplicaDeletion``."""

    __slots__ = ()
    topic: TopicId


class MoveToReplicaDeletionStarted(Record, code=O_DEL_STARTED):
    """Replicas -> ReplicaDeletionStarted, with StopReplica(delete) (``startReplicaDeletion``)."""

    __slots__ = ()
    replicas: BrokerPartitions


class CompleteDeleteTopic(Record, code=O_DEL_COMPLETE):
    """``completeDeleteTopic``."""

    __slots__ = ()
    topic: TopicId


class FailReplicaDeletion(Record, code=O_FAIL_DELETION):
    """``failReplicaDeletion``."""

    __slots__ = ()
    replicas: BrokerPartitions


class OnPartitionReassignment(Record, code=O_REASSIGN):
    """``onPartitionReassignment`` (mode 0: initiate, 1: restart, 2: ISR change)."""

    __slots__ = ()
    partition: PartitionId
    mode: int


class StopOldReplicasOfReassignedPartition(Record, code=O_REASSIGN_DONE):
    """Steps 8-10 of a reassignment (``stopOldReplicasOfReassignedPartition``), ``old``: the
    replicas to stop (``()``: they are stopped, finish)."""

    __slots__ = ()
    partition: PartitionId
    old: BrokerList


class RemovePartitionsFromPreferredReplicaElection(Record, code=O_DELETE_PREFERRED):
    """``removePartitionsFromPreferredReplicaElection``: delete the znode."""

    __slots__ = ()


class ControlledShutdownRespond(Record, code=O_CS_RESPOND):
    """The ``ControlledShutdownResponse`` to ``broker``."""

    __slots__ = ()
    broker: BrokerId


class SendStopReplica(Record, code=O_STOP):
    """``sendStopReplicaRequest(broker, partitions, deletePartitions = extra)``; ``broker`` -1:
    ``stopOldReplicasOfReassignedPartition`` of ``partitions`` (one) on the old replicas
    ``extra`` (-> Started -> Successful -> NonExistent); so ``extra`` holds brokers only then
    (the renamer's one step renamed by hand)."""

    __slots__ = ()
    broker: BrokerId
    partitions: PartitionSet
    extra: Any


#: every step class, and the view of a plain step tuple as its record
STEPS = RecordFamily(
    [
        Elect,
        MaybeResign,
        OnControllerFailover,
        TriggerOnlinePartitionStateChange,
        ElectLeaderForPartitions,
        ProcessBrokerChange,
        OnBrokerStartup,
        OnBrokerFailure,
        OfflineReplicas,
        RemoveLiveBrokers,
        AddLiveBrokersAndEpochs,
        ProcessIsrChangeNotification,
        SendUpdateMetadataRequest,
        LegacyElect,
        LegacyResignAndElect,
        OnNewPartitionCreation,
        NewReplicasOnline,
        ResumeDeletions,
        ResumeDeletionForTopics,
        OnTopicDeletion,
        MoveToReplicaDeletionStarted,
        CompleteDeleteTopic,
        FailReplicaDeletion,
        OnPartitionReassignment,
        StopOldReplicasOfReassignedPartition,
        RemovePartitionsFromPreferredReplicaElection,
        ControlledShutdownRespond,
        SendStopReplica,
    ]
)


def sort_runs(prog: tuple) -> tuple:
    """``prog`` with each run of consecutive ``OfflineReplicas(b)`` steps sorted by broker:
    ``onBrokerFailure`` emits one per failed broker, in id order, so a renamed program is the one
    the model would have built (symmetry reduction).

    >>> sort_runs((TriggerOnlinePartitionStateChange(), OfflineReplicas(3), OfflineReplicas(2)))
    (TriggerOnlinePartitionStateChange(), OfflineReplicas(broker=2), OfflineReplicas(broker=3))
    """
    out = list(prog)
    i = 0
    while i < len(out):
        j = i
        while j < len(out) and type(out[j]) is OfflineReplicas and len(out[j]) == 2:
            j += 1
        if j - i > 1:
            out[i:j] = sorted(out[i:j])
        i = max(j, i + 1)
    return tuple(out)
