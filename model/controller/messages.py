from __future__ import annotations

# event kinds
EV_STARTUP, EV_REELECT, EV_CTL_CHANGE, EV_BROKER_CHANGE, EV_ISR_CHANGE, EV_EXPIRE, EV_TOPIC_CHANGE = range(7)
EVENT_NAMES = (
    "Startup",
    "Reelect",
    "ControllerChange",
    "BrokerChange",
    "IsrChangeNotification",
    "Expire",
    "TopicChange",
    "TopicDeletion",
    "TopicDeletionStopReplicaResponseReceived",
    "TopicDeletionStopReplicaResponseReceived (error)",
    "PartitionModifications",
    "PartitionReassignment",
    "PartitionReassignmentIsrChange",
    "PreferredReplicaLeaderElection",
    "AutoPreferredReplicaLeaderElection",
    "ControlledShutdown",
    "TopicUncleanLeaderElectionEnable",
)
(
    EV_DELETE_TOPICS,
    EV_DELETE_RESP,
    EV_DELETE_RESP_ERR,
    EV_PARTITION_MOD,
    EV_REASSIGN,
    EV_REASSIGN_ISR,
    EV_PREFERRED,
    EV_AUTO_REBALANCE,
    EV_CONTROLLED_SHUTDOWN,
    EV_UNCLEAN_ENABLE,
) = range(7, 17)

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

    >>> from model.controller import Q_DELETE_PREFERRED
    >>> admin_write_epoch((Q_DELETE_PREFERRED, 4, 2))
    2
    """
    return req[FENCE_AT[req[0]] + 1]


# election strategies (doElectLeaderForPartitions) and other partition-state writes, as tagged on
# the write request
S_OFFLINE, S_REASSIGN, S_PREFERRED, S_CONTROLLED_SHUTDOWN, S_INIT, S_REMOVE, S_EPOCH = range(7)
STRATEGY_NAMES = ("offline", "reassign", "preferred", "controlled_shutdown")  #: coverage labels

# controller-to-broker request kinds
M_LEADER_AND_ISR, M_UPDATE_METADATA, M_STOP_REPLICA, M_CS_RESPONSE = 0, 1, 2, 3
MESSAGE_NAMES = ("LeaderAndIsr", "UpdateMetadata", "StopReplica", "ControlledShutdownResponse")
