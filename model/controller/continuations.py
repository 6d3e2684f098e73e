"""Parked continuations: one record class per ZooKeeper call a controller event handler can be
parked on (``Node.pending``), named after the Kafka call it waits for, with named fields.

A continuation is the tuple ``(wait, data, batch, rest)``: the wait's code, the data the resumed
code needs (``None``, the one field, or the tuple of the fields), the requests gathered for
``sendRequestsToBrokers`` (``batch``) and the program steps still to run (``rest``). That tuple is
how a state encodes it, as before; the model builds and matches the classes
(``KafkaController.resume``), and reads a plain tuple with ``PARKED.view``.

>>> k = ElectLeaderForPartitionsRead(3, (0, 1), rest=())
>>> k == (W_ELECT_PARTS, (3, (0, 1)), (), ()), k.strategy, k.partitions
(True, 3, (0, 1))
>>> str(RegisterController(rest=()))
'waits on registerControllerAndIncrementControllerEpoch'
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, ClassVar

from model.controller.ids import BrokerId, BrokerList, ElectionItems, PartitionId, PartitionSet, TopicId
from model.controller.program import (
    W_ASSIGN,
    W_BROKERS,
    W_CONTEXT,
    W_DEL_DONE,
    W_DEL_READ,
    W_ELECT_PARTS,
    W_ELECT_READ,
    W_ELECT_WRITE,
    W_EPOCH_LISTENER,
    W_INIT,
    W_ISR_READ,
    W_L_CREATE,
    W_L_EPOCH,
    W_L_INC,
    W_L_READ,
    W_PMOD,
    W_PREF_READ,
    W_REASSIGN_PARTS,
    W_REASSIGN_READ,
    W_REGISTER,
    W_RESIGN_READ,
    W_RM_READ,
    W_RM_WRITE,
    W_TOPICS,
)
from model.records import Record, RecordFamily, declare_fields, make_new


def _data_field(i: int) -> property:
    return property(lambda self: self[1][i])


class Parked(Record):
    """A parked continuation ``(wait, data, batch, rest)`` (see the module docstring); a
    subclass names the wait's code and its data fields, and ``kafka_call``, the call it waits on.
    """

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ("wait", "data", "batch", "rest")
    _ndata: ClassVar[int] = 0
    #: the Kafka call it waits on (how it reads in a counterexample)
    kafka_call: ClassVar[str] = ""
    wait = property(itemgetter(0))
    data = property(itemgetter(1))
    batch = property(itemgetter(2))
    rest = property(itemgetter(3))

    def __init_subclass__(cls, code: int | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if code is None:
            return
        names = declare_fields(cls, code)
        if len(names) == 1:
            setattr(cls, names[0], property(itemgetter(1)))
        else:
            for i, name in enumerate(names):
                setattr(cls, name, _data_field(i))
        cls._ndata = len(names)
        cls.__match_args__ = (*names, "batch", "rest")  # type: ignore[misc]
        data = "None" if not names else names[0] if len(names) == 1 else f"({', '.join(names)})"
        params = ", ".join([*names, "*", "batch=()", "rest=()"])
        cls.__new__ = make_new(cls, params, [f"return _tnew(cls, (_C, {data}, batch, rest))"])  # type: ignore[method-assign]

    def __new__(cls, *data: Any, batch: tuple = (), rest: tuple = ()) -> Any:
        """(Each continuation class gets its own, with its data fields' names.)"""
        raise TypeError(f"{cls.__name__} names no wait: it is not a continuation class")

    def __str__(self) -> str:
        extra = ", ".join(
            f"{k} {v!r}" for k, v in (("data", self.data), ("batch", self.batch), ("then", self.rest)) if v
        )
        return f"waits on {self.kafka_call}" + (f" ({extra})" if extra else "")


class ElectRead(Parked, code=W_ELECT_READ):
    __slots__ = ()
    kafka_call = "elect: getControllerId"


class MaybeResignRead(Parked, code=W_RESIGN_READ):
    __slots__ = ()
    kafka_call = "maybeResign: getControllerId"


class RegisterController(Parked, code=W_REGISTER):
    __slots__ = ()
    kafka_call = "registerControllerAndIncrementControllerEpoch"


class FailoverContextRead(Parked, code=W_CONTEXT):
    __slots__ = ()
    kafka_call = "onControllerFailover: read the context"


class InitializeLeaderAndIsrWritten(Parked, code=W_INIT):
    __slots__ = ()
    kafka_call = "initializeLeaderAndIsrForPartitions: createTopicPartitionStatesRaw"
    elect: PartitionSet  #: the partitions to elect next (``doElectLeaderForPartitions``)


class ElectLeaderForPartitionsRead(Parked, code=W_ELECT_PARTS):
    __slots__ = ()
    kafka_call = "doElectLeaderForPartitions: getTopicPartitionStatesRaw"
    strategy: int
    partitions: PartitionSet


class ElectLeaderForPartitionsWritten(Parked, code=W_ELECT_WRITE):
    __slots__ = ()
    kafka_call = "doElectLeaderForPartitions: updateLeaderAndIsr"
    strategy: int
    items: ElectionItems  #: (partition, recipients, unclean)


class BrokerChangeRead(Parked, code=W_BROKERS):
    __slots__ = ()
    kafka_call = "processBrokerChange: getAllBrokerAndEpochsInCluster"


class IsrChangeNotificationsRead(Parked, code=W_ISR_READ):
    __slots__ = ()
    kafka_call = "processIsrChangeNotification: getAllIsrChangeNotifications"


class RemoveReplicasFromIsrRead(Parked, code=W_RM_READ):
    __slots__ = ()
    kafka_call = "doRemoveReplicasFromIsr: getTopicPartitionStatesRaw"
    broker: BrokerId
    partitions: PartitionSet


class RemoveReplicasFromIsrWritten(Parked, code=W_RM_WRITE):
    __slots__ = ()
    kafka_call = "doRemoveReplicasFromIsr: updateLeaderAndIsr"
    broker: BrokerId
    partitions: PartitionSet


class LegacyControllerRead(Parked, code=W_L_READ):
    __slots__ = ()
    kafka_call = "ZookeeperLeaderElector.elect: read /controller"


class LegacyControllerCreated(Parked, code=W_L_CREATE):
    __slots__ = ()
    kafka_call = "ZookeeperLeaderElector.elect: create /controller"


class LegacyEpochRead(Parked, code=W_L_EPOCH):
    __slots__ = ()
    kafka_call = "readControllerEpochFromZookeeper"


class LegacyEpochIncremented(Parked, code=W_L_INC):
    __slots__ = ()
    kafka_call = "incrementControllerEpoch"


class TopicChangeRead(Parked, code=W_TOPICS):
    __slots__ = ()
    kafka_call = "processTopicChange: getAllTopicsInCluster"


class TopicDeletionRead(Parked, code=W_DEL_READ):
    __slots__ = ()
    kafka_call = "processTopicDeletion: getTopicDeletions"


class TopicZNodeDeleted(Parked, code=W_DEL_DONE):
    __slots__ = ()
    kafka_call = "completeDeleteTopic: deleteTopicZNode"
    topic: TopicId


class PartitionModificationsRead(Parked, code=W_PMOD):
    __slots__ = ()
    kafka_call = "processPartitionModifications: getReplicaAssignmentForTopics"
    topic: TopicId


class PartitionReassignmentRead(Parked, code=W_REASSIGN_READ):
    __slots__ = ()
    kafka_call = "processPartitionReassignment: getPartitionReassignment"


class ReassignmentPartitionStateRead(Parked, code=W_REASSIGN_PARTS):
    __slots__ = ()
    kafka_call = "onPartitionReassignment: getTopicPartitionStatesRaw"
    partition: PartitionId
    mode: int


class AssignmentWritten(Parked, code=W_ASSIGN):
    __slots__ = ()
    kafka_call = "updateAssignmentForPartition: setReplicaAssignment"
    partition: PartitionId
    phase: int  #: 1: AR = RAR + OAR written (step 1); 2: AR = RAR (step 6)
    replicas: BrokerList


class PreferredReplicaElectionRead(Parked, code=W_PREF_READ):
    __slots__ = ()
    kafka_call = "processPreferredReplicaLeaderElection: getPreferredReplicaElection"


class ControllerEpochListenerRead(Parked, code=W_EPOCH_LISTENER):
    """Kafka 0.8.1's ``ControllerEpochListener`` (KAFKA-1096's variant only) on its read."""

    __slots__ = ()
    kafka_call = "ControllerEpochListener: readControllerEpochFromZookeeper"


#: every continuation class, and the view of a plain ``(wait, data, batch, rest)`` as its record
PARKED = RecordFamily(
    [c for c in list(globals().values()) if isinstance(c, type) and issubclass(c, Parked) and c is not Parked]
)
