"""The id kinds a record's field can hold, declared as the field's annotation: a controller event,
ZooKeeper request or response, program step or parked continuation says which of its fields name
brokers, partitions, topics (``partition: PartitionId``, ``brokers: BrokerSet``), and the symmetry
renamer (``model/controller/renamer.py``) renames each field by its kind. A new message, step or
continuation whose fields use these kinds needs no renamer edit; a field of no kind here holds
no id (an epoch, a zkVersion, a flag) and is kept.

The state records (``state.py``: ``PartZ``, ``Zk``, ``Ctx``, ``Rep``, ``Node``, ``State``) go
further: every field declares a kind, either one that holds ids (these, or another state record,
``zk: Zk``) or one of the ``VALUE_KINDS`` that hold none (``epoch: Epoch``, ``alive: Flag``), and
:func:`check_state_record` refuses a record with a field of neither when ``state.py`` is
imported, so a new state field is never silently left unrenamed.

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
    "VALUE_KINDS",
    "AckedRecords",
    "AdminZnodes",
    "Assignments",
    "BrokerAndEpoch",
    "BrokerAndPartitionMask",
    "BrokerEpochPairs",
    "BrokerId",
    "BrokerList",
    "BrokerPartitions",
    "BrokerSet",
    "BrokerZnodes",
    "Channels",
    "Continuation",
    "ControllerZnode",
    "ElectionItems",
    "Events",
    "HistoryBits",
    "InvalidTransition",
    "IsrChangeSeqs",
    "LeaderAndIsrStates",
    "MetadataCache",
    "Nodes",
    "PartitionId",
    "PartitionSet",
    "PartitionZnode",
    "PartitionZnodes",
    "PerBroker",
    "PerPartition",
    "PerPartitionZnode",
    "Reassignments",
    "Replicas",
    "Session",
    "ShutdownRequest",
    "StopReplicaData",
    "TopicId",
    "TopicList",
    "TopicSet",
    "UpdateMetadataData",
    "ZkRequests",
    "ZkResponses",
    "check_state_record",
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


# -- the kinds only the state records' fields hold ----------------------------------------------
#: a ZooKeeper session: the initial session ``b + 1`` of broker ``b`` is renamed with it, a
#: later one (above the brokers) keeps its number (``symmetry.py``)
Session = int
#: ``/controller``: (broker, owner session)
ControllerZnode = tuple[int, int]
#: ``/brokers/ids/<id>`` per broker, indexed by broker id: (owner session, broker epoch) or None
BrokerZnodes = tuple[tuple[int, int] | None, ...]
#: a value that holds no id per partition, indexed by partition id (a state machine's state)
PerPartition = tuple[Any, ...]
#: replicas in order per partition, indexed by partition id (an assignment, ``()``: none read)
Assignments = tuple[tuple[int, ...], ...]
#: a broker's replica (``Rep``) per partition, indexed by partition id
Replicas = tuple[Any, ...]
#: a broker's metadata cache: (leader, leader epoch, ISR) or None per partition, indexed by it
MetadataCache = tuple[tuple[int, int, tuple[int, ...]] | None, ...]
#: a session's queue of ZooKeeper requests (``messages.py``), in order
ZkRequests = tuple[Any, ...]
#: a session's queue of ZooKeeper responses (``responses.py``), in order
ZkResponses = tuple[Any, ...]
#: a controller's queue of events (``events.py``), in order
Events = tuple[Any, ...]
#: a parked continuation (``continuations.py``)
Continuation = Any
#: a controlled shutdown: 0 none, 2 answered, ``3 + c``: requested at controller ``c``
ShutdownRequest = int
#: a ``Node`` per broker, indexed by broker id
Nodes = tuple[Any, ...]
#: the controller channels' queues of requests, indexed ``sender * brokers + destination``
Channels = tuple[tuple[Any, ...], ...]
#: acknowledged records (partition, offset, epoch), sorted
AckedRecords = tuple[tuple[int, int, int], ...]
#: the first invalid state-machine transition (machine, partition, from, to), or ``()``
InvalidTransition = tuple[int, ...]
#: bit 0: an unclean election was written; bit ``1 + p``: partition ``p`` had no leader
HistoryBits = int

# -- the kinds that hold no id: a state record's field of one of these is kept ------------------
#: an epoch (controller, leader or broker epoch): a value the model counts up
Epoch = int
#: a zkVersion
ZkVersion = int
#: an offset in a log
Offset = int
#: a count of something done (faults, admin requests, records produced, a session counter)
Count = int
#: a flag
Flag = bool
#: bits that name no id (the ``D_*`` workflows done)
Bits = int
#: epochs in order (a log's records, as the leader epoch each was appended in)
Epochs = tuple[int, ...]
#: counts in order (one per plug-in fault)
Counts = tuple[int, ...]

#: the kinds that hold no id (a state record's field of one of these is kept)
VALUE_KINDS = frozenset({"Epoch", "ZkVersion", "Offset", "Count", "Flag", "Bits", "Epochs", "Counts"})
#: every kind's name that holds ids (what a field's annotation must read to be renamed)
ID_KINDS = (
    frozenset(n for n in __all__ if n[0].isupper() and n not in {"ID_KINDS", "VALUE_KINDS"}) - VALUE_KINDS
)


def check_state_record(cls: type, records: frozenset[str]) -> tuple[str, ...]:
    """The kind each field of state record ``cls`` declares, as written (``Ctx | None``): one of
    ``ID_KINDS``, ``VALUE_KINDS`` or ``records`` (the state records' names), ``| None`` aside. A
    field of any other annotation is an error, so that no state field goes unrenamed by oversight.

    >>> from typing import NamedTuple
    >>> class Ok(NamedTuple):
    ...     leader: BrokerId
    ...     epoch: Epoch
    >>> check_state_record(Ok, frozenset())
    ('BrokerId', 'Epoch')
    >>> class Bad(NamedTuple):
    ...     leader: int
    >>> check_state_record(Bad, frozenset())
    Traceback (most recent call last):
    ...
    TypeError: Bad.leader: int is no kind of model/controller/ids.py (an id kind, a state record or one of VALUE_KINDS)
    """
    import inspect

    kinds = []
    for name, ann in inspect.get_annotations(cls).items():
        ann = getattr(ann, "__forward_arg__", ann)  # NamedTuple keeps a string annotation as a ForwardRef
        written = ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))
        written = written.removeprefix("ids.")  # state.py names them ``ids.BrokerId``
        kind = written.removesuffix(" | None")
        if kind not in ID_KINDS and kind not in VALUE_KINDS and kind not in records:
            raise TypeError(
                f"{cls.__name__}.{name}: {kind} is no kind of model/controller/ids.py"
                " (an id kind, a state record or one of VALUE_KINDS)"
            )
        kinds.append(written)
    return tuple(kinds)
