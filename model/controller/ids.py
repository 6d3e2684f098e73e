"""The id kinds a record's field can hold, declared as the field's annotation: a controller event,
ZooKeeper request or response, program step or parked continuation says which of its fields name
brokers, partitions, topics (``partition: PartitionId``, ``brokers: BrokerSet``), and the symmetry
renamer (``model/controller/renamer.py``) renames each field by its kind. A new message, step or
continuation whose fields use these kinds needs no renamer edit; a field of no kind here holds
no id (an epoch, a zkVersion, a flag) and is kept.

Each alias is the field's type; its name is the kind (``model.records.Record`` keeps each
field's annotation as written, in ``_field_types``).

>>> from model.controller.program import OnTopicDeletion
>>> OnTopicDeletion._field_types
('TopicId',)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ID_KINDS",
    "AdminZnodes",
    "BrokerAndEpoch",
    "BrokerAndPartitionMask",
    "BrokerEpochPairs",
    "BrokerId",
    "BrokerList",
    "BrokerPartitions",
    "BrokerSet",
    "ElectionItems",
    "IsrChangeSeqs",
    "LeaderAndIsrStates",
    "PartitionId",
    "PartitionSet",
    "PartitionZnode",
    "PartitionZnodes",
    "PerBroker",
    "PerPartitionZnode",
    "Reassignments",
    "StopReplicaData",
    "TopicId",
    "TopicList",
    "TopicSet",
    "UpdateMetadataData",
]

#: a broker id (negative: none)
BrokerId = int
#: brokers in the order the model chose (an ISR, an assignment): each renamed in place
BrokerList = tuple[int, ...]
#: brokers the model keeps sorted
BrokerSet = tuple[int, ...]
#: a value per broker, indexed by broker id (its registration epoch, 0: none)
PerBroker = tuple[int, ...]
#: a partition id
PartitionId = int
#: partitions the model keeps sorted
PartitionSet = tuple[int, ...]
#: a partition's state znode (a ``PartZ``: its leader and ISR are brokers) or None
PartitionZnode = Any
#: (partition, ``PartZ`` or None) pairs, sorted by partition
PartitionZnodes = tuple[tuple[int, Any], ...]
#: a ``PartZ`` or None per partition, indexed by partition id
PerPartitionZnode = tuple[Any, ...]
#: a topic id (negative: none)
TopicId = int
#: topics the model keeps sorted
TopicSet = tuple[int, ...]
#: topics in the order they were listed
TopicList = tuple[int, ...]
#: (partition, sequence zkVersion) pairs, sorted
IsrChangeSeqs = tuple[tuple[int, int], ...]
#: (broker, epoch) pairs, sorted
BrokerEpochPairs = tuple[tuple[int, int], ...]
#: (broker, sorted partitions) pairs, sorted
BrokerPartitions = tuple[tuple[int, tuple[int, ...]], ...]
#: (partition, target replicas in order) pairs, sorted
Reassignments = tuple[tuple[int, tuple[int, ...]], ...]
#: (partition, recipients in order, unclean) triples of an election write, sorted
ElectionItems = tuple[tuple[int, tuple[int, ...], int], ...]
#: the failover's admin reads: (present per partition, AR per partition, deletions (topics),
#: reassignments, preferred elections (partitions))
AdminZnodes = tuple[Any, ...]
#: a LeaderAndIsr request's partition states, in the order sent: (partition, leader, leader
#: epoch, ISR, zkVersion[, AR]) each (``messages.LeaderAndIsrPartitionState``)
LeaderAndIsrStates = tuple[Any, ...]
#: an UpdateMetadata request's data (``messages.UpdateMetadataPayload``): the live brokers (sorted)
#: and (partition, leader, leader epoch, ISR) per partition sent, sorted by partition
UpdateMetadataData = Any
#: a StopReplica request's data (``messages.StopReplicaPartitions``): a partition bit mask and flags
StopReplicaData = Any
#: an event argument ``broker_epoch * 8 + broker``
BrokerAndEpoch = int
#: an event argument ``partition bit mask * 8 + broker``
BrokerAndPartitionMask = int

#: every kind's name (what a field's annotation must read to be renamed)
ID_KINDS = frozenset(n for n in __all__ if n != "ID_KINDS")
