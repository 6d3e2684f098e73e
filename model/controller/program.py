"""The controller's small programs: the steps an event handler runs (``O_*``) and what a
parked continuation waits for (``W_*``).

A controller event handler in Kafka runs to completion, blocking on its ZooKeeper calls. The
model cuts it at each call: the handler sends the request and *parks* a continuation in
``Node.pending`` = ``(wait, data, batch, rest)``: the ``W_*`` it waits for, the data the resumed
code needs, the controller requests gathered but not yet sent (``sendRequestsToBrokers``'s
batch), and ``rest``, the program steps still to run. The ZooKeeper response resumes it
(``KafkaController.resume``), which continues the Kafka method and then runs ``rest``
(``KafkaController.run``). A program step is a tuple ``(O_*, args...)``.

========================  ==============================================================
step                      Kafka method it stands for
========================  ==============================================================
``O_ELECT``               2.x ``elect`` (read ``/controller``, register, failover)
``O_MAYBE_RESIGN``        ``maybeResign``
``O_FAILOVER``            ``onControllerFailover`` (its context read first)
``O_TRIGGER``             ``triggerOnlinePartitionStateChange`` (of one topic: arg)
``O_ELECT_PARTS``         ``handleStateChanges(OnlinePartition, strategy)`` of partitions
``O_BROKER_CHANGE``       ``processBrokerChange`` (read ``/brokers/ids``)
``O_ON_STARTUP``          ``onBrokerStartup(brokers)``
``O_ON_FAILURE``          ``onBrokerFailure(brokers)``
``O_REMOVE_ISR``          replicas of a broker -> OfflineReplica (``doRemoveReplicasFromIsr``)
``O_LIVE_REMOVE/ADD``     ``removeLiveBrokers`` / ``addLiveBrokersAndEpochs`` (bounced broker)
``O_ISR_CHANGE``          ``processIsrChangeNotification``
``O_SEND_UM``             ``sendUpdateMetadataRequest`` to every live broker
``O_L_ELECT``             0.8 ``ZookeeperLeaderElector.elect``
``O_L_RESIGN_ELECT``      0.8 ``handleDataDeleted``: resign if it was the controller, elect
``O_NEW_PARTITIONS``      ``onNewPartitionCreation``
``O_NEW_REPLICAS_ONLINE`` its replicas -> OnlineReplica
``O_RESUME_DELETIONS``    ``topicDeletionManager.resumeDeletions``
``O_RESUME_TOPIC``        ``resumeDeletionForTopics(topics)``
``O_ON_TOPIC_DELETION``   ``onTopicDeletion`` / ``startReplicaDeletion``
``O_DEL_STARTED``         replicas -> ReplicaDeletionStarted with StopReplica(delete)
``O_DEL_COMPLETE``        ``completeDeleteTopic``
``O_FAIL_DELETION``       ``failReplicaDeletion``
``O_REASSIGN``            ``onPartitionReassignment`` (mode: initiate, restart, ISR change)
``O_REASSIGN_DONE``       steps 8-10 of a reassignment (``stopOldReplicasOfReassignedPartition``)
``O_DELETE_PREFERRED``    ``removePartitionsFromPreferredReplicaElection``
``O_CS_RESPOND``          the ``ControlledShutdownResponse``
``O_STOP``                ``sendStopReplicaRequest``
========================  ==============================================================

A wait names the call a continuation is parked on: ``W_ELECT_READ`` / ``W_RESIGN_READ``
(``elect`` / ``maybeResign`` reading ``/controller``), ``W_REGISTER``
(``registerControllerAndIncrementControllerEpoch``), ``W_CONTEXT`` (failover's reads),
``W_INIT`` (``initializeLeaderAndIsrForPartitions``' creates), ``W_ELECT_PARTS`` /
``W_ELECT_WRITE`` (``doElectLeaderForPartitions``' read and write), ``W_BROKERS``,
``W_ISR_READ``, ``W_RM_READ`` / ``W_RM_WRITE`` (``doRemoveReplicasFromIsr``), ``W_L_*``
(0.8 election: read, create, epoch read, epoch increment), ``W_TOPICS``, ``W_DEL_READ``,
``W_DEL_DONE`` (``completeDeleteTopic``'s deletes), ``W_PMOD``, ``W_REASSIGN_READ``,
``W_REASSIGN_PARTS``, ``W_ASSIGN`` and ``W_PREF_READ``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

# program ops of the controller interpreter
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

# waits (what a parked continuation waits for)
W_ELECT_READ, W_RESIGN_READ, W_REGISTER, W_CONTEXT, W_INIT, W_ELECT_PARTS, W_ELECT_WRITE = range(7)
W_BROKERS, W_ISR_READ, W_RM_READ, W_RM_WRITE, W_L_READ, W_L_CREATE, W_L_EPOCH, W_L_INC = range(7, 15)
W_TOPICS = 15
W_DEL_READ, W_DEL_DONE, W_PMOD, W_REASSIGN_READ, W_REASSIGN_PARTS, W_ASSIGN, W_PREF_READ = range(16, 23)


#: the Kafka call each wait continues (how a parked continuation reads in a counterexample)
WAIT_NAMES = {
    W_ELECT_READ: "elect: getControllerId",
    W_RESIGN_READ: "maybeResign: getControllerId",
    W_REGISTER: "registerControllerAndIncrementControllerEpoch",
    W_CONTEXT: "onControllerFailover: read the context",
    W_INIT: "initializeLeaderAndIsrForPartitions: createTopicPartitionStatesRaw",
    W_ELECT_PARTS: "doElectLeaderForPartitions: getTopicPartitionStatesRaw",
    W_ELECT_WRITE: "doElectLeaderForPartitions: updateLeaderAndIsr",
    W_BROKERS: "processBrokerChange: getAllBrokerAndEpochsInCluster",
    W_ISR_READ: "processIsrChangeNotification: getAllIsrChangeNotifications",
    W_RM_READ: "doRemoveReplicasFromIsr: getTopicPartitionStatesRaw",
    W_RM_WRITE: "doRemoveReplicasFromIsr: updateLeaderAndIsr",
    W_L_READ: "ZookeeperLeaderElector.elect: read /controller",
    W_L_CREATE: "ZookeeperLeaderElector.elect: create /controller",
    W_L_EPOCH: "readControllerEpochFromZookeeper",
    W_L_INC: "incrementControllerEpoch",
    W_TOPICS: "processTopicChange: getAllTopicsInCluster",
    W_DEL_READ: "processTopicDeletion: getTopicDeletions",
    W_DEL_DONE: "completeDeleteTopic: deleteTopicZNode",
    W_PMOD: "processPartitionModifications: getReplicaAssignmentForTopics",
    W_REASSIGN_READ: "processPartitionReassignment: getPartitionReassignment",
    W_REASSIGN_PARTS: "onPartitionReassignment: getTopicPartitionStatesRaw",
    W_ASSIGN: "updateAssignmentForPartition: setReplicaAssignment",
    W_PREF_READ: "processPreferredReplicaLeaderElection: getPreferredReplicaElection",
}


class Parked(NamedTuple):
    """A parked continuation (``Node.pending``): the ZooKeeper call it waits on (``W_*``), the
    data the resumed code needs, the requests gathered for ``sendRequestsToBrokers`` and the
    program steps still to run. It encodes as the plain tuple ``(wait, data, batch, rest)``.

    >>> str(Parked(W_REGISTER, None, (), ()))
    'waits on registerControllerAndIncrementControllerEpoch'
    """

    wait: int
    data: Any
    batch: tuple
    rest: tuple

    def __str__(self) -> str:
        extra = ", ".join(
            f"{k} {v!r}" for k, v in (("data", self.data), ("batch", self.batch), ("then", self.rest)) if v
        )
        return f"waits on {WAIT_NAMES[self.wait]}" + (f" ({extra})" if extra else "")


def sort_runs(prog: tuple) -> tuple:
    """``prog`` with each run of consecutive ``(O_REMOVE_ISR, b)`` steps sorted by broker:
    ``onBrokerFailure`` emits one per failed broker, in id order, so a renamed program is the one
    the model would have built (symmetry reduction).

    >>> sort_runs(((O_TRIGGER,), (O_REMOVE_ISR, 3), (O_REMOVE_ISR, 2)))
    ((3,), (7, 2), (7, 3))
    """
    out = list(prog)
    i = 0
    while i < len(out):
        j = i
        while j < len(out) and out[j][0] == O_REMOVE_ISR and len(out[j]) == 2:
            j += 1
        if j - i > 1:
            out[i:j] = sorted(out[i:j])
        i = max(j, i + 1)
    return tuple(out)
