"""Controller events (the ``ControllerEventManager``'s queue), one record class per event, named
as Kafka names it (``ControllerChange``, ``BrokerChange``, ``IsrChangeNotification``, ...).

An event is the pair ``(code, arg)``: its kind's ``EV_*`` code and one argument (-1: none; a
broker, topic or partition). That pair is how a state encodes it, as before; the model builds
and matches the classes (``KafkaController.process_event``), and reads a plain pair with
``EVENTS.view``. The ``EV_*`` codes below are that encoding and nothing else.

>>> ControllerChange(2) == (EV_CTL_CHANGE, 2), BrokerChange() == (EV_BROKER_CHANGE, -1)
(True, True)
>>> str(ControllerChange(2)), str(BrokerChange()), ControlledShutdown(1, 3).broker_epoch
('ControllerChange(2)', 'BrokerChange', 3)
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, ClassVar

from explorer.speedups import install_fast_new
from model.controller.ids import BrokerId, PartitionId, TopicId
from model.records import Record, RecordFamily, declare_fields, make_new

__all__ = [
    "EVENTS",
    "AutoPreferredReplicaLeaderElection",
    "BrokerChange",
    "ControlledShutdown",
    "ControllerChange",
    "ControllerEpochChange",
    "ControllerEvent",
    "Expire",
    "IsrChangeNotification",
    "PartitionModifications",
    "PartitionReassignment",
    "PartitionReassignmentIsrChange",
    "PreferredReplicaLeaderElection",
    "Reelect",
    "ReplicaLeaderElection",
    "Startup",
    "TopicChange",
    "TopicDeletion",
    "TopicDeletionStopReplicaResponseError",
    "TopicDeletionStopReplicaResponseReceived",
    "TopicUncleanLeaderElectionEnable",
]

# the encoding: event kinds' codes (item 0 of an event)
EV_STARTUP, EV_REELECT, EV_CTL_CHANGE, EV_BROKER_CHANGE, EV_ISR_CHANGE, EV_EXPIRE, EV_TOPIC_CHANGE = range(7)
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
    EV_ADMIN_UNCLEAN,
) = range(7, 18)
EV_CTL_EPOCH_CHANGE = 18


class ControllerEvent(Record):
    """A ``ControllerEvent``: the pair ``(code, arg)`` (see the module docstring). A subclass
    names its code and at most one field, its argument (without one the argument is -1), and
    ``kafka_name`` when its name in a trace is not the class's."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ("code", "arg")
    #: the event's name in a trace (default: the class's)
    kafka_name: ClassVar[str] = ""
    #: the one argument, whatever it names (-1: none)
    arg = property(itemgetter(1))

    def __init_subclass__(cls, code: int | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if code is None:
            return
        names = declare_fields(cls, code)
        cls.kafka_name = cls.__dict__.get("kafka_name") or cls.__name__
        if len(names) > 1:
            raise TypeError(f"event {cls.__name__}: one argument at most")
        if "__new__" in cls.__dict__:  # an argument packed from several fields (see below)
            return
        cls.__match_args__ = tuple(names)  # type: ignore[misc]
        if names:
            setattr(cls, names[0], property(itemgetter(1)))
            cls.__new__ = make_new(cls, names[0], [f"return _tnew(cls, (_C, {names[0]}))"])  # type: ignore[method-assign]
            install_fast_new(cls, prefix=(code,), fields=(names[0],), required=1, omit_optional=True)
        else:
            single = tuple.__new__(cls, (code, -1))
            cls.__new__ = lambda cls: single  # type: ignore[method-assign, assignment, misc]
            install_fast_new(cls, fields=(), omit_optional=True, single=single)

    def __new__(cls, *args: Any) -> Any:
        """(Each event class gets its own.)"""
        raise TypeError(f"{cls.__name__} names no code: it is not an event class")

    def __repr__(self) -> str:
        names = type(self).__match_args__
        return f"{type(self).__name__}(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in names) + ")"

    def __str__(self) -> str:
        """The event by its Kafka name, with its argument when it has one (``BrokerChange``,
        ``ControllerChange(1)``)."""
        return self.kafka_name if self[1] < 0 else f"{self.kafka_name}({self[1]})"


class Startup(ControllerEvent, code=EV_STARTUP):
    """``Startup`` (queued by the broker's registration, ``RegisterBrokerAndReelect``)."""

    __slots__ = ()


class Reelect(ControllerEvent, code=EV_REELECT):
    """``Reelect``: ``/controller`` deleted."""

    __slots__ = ()


class ControllerChange(ControllerEvent, code=EV_CTL_CHANGE):
    """``ControllerChange``: ``/controller`` created, by ``controller_id``."""

    __slots__ = ()
    controller_id: BrokerId


class BrokerChange(ControllerEvent, code=EV_BROKER_CHANGE):
    """``BrokerChange``: children of ``/brokers/ids`` changed."""

    __slots__ = ()


class IsrChangeNotification(ControllerEvent, code=EV_ISR_CHANGE):
    """``IsrChangeNotification``: a child of ``/isr_change_notification`` created."""

    __slots__ = ()


class Expire(ControllerEvent, code=EV_EXPIRE):
    """``Expire``: the broker's ZooKeeper session expired (0.8: ``handleNewSession``)."""

    __slots__ = ()


class TopicChange(ControllerEvent, code=EV_TOPIC_CHANGE):
    """``TopicChange``: children of ``/brokers/topics`` changed."""

    __slots__ = ()


class TopicDeletion(ControllerEvent, code=EV_DELETE_TOPICS):
    """``TopicDeletion``: children of ``/admin/delete_topics`` changed."""

    __slots__ = ()


def _stop_replica_response_new(cls: type, replica_id: int, partitions: int) -> Any:
    return tuple.__new__(cls, (cls.code, partitions * 8 + replica_id))  # type: ignore[attr-defined]


_replica_id = property(lambda self: self[1] & 7)
_partitions = property(lambda self: self[1] >> 3)


class TopicDeletionStopReplicaResponseReceived(ControllerEvent, code=EV_DELETE_RESP):
    """``TopicDeletionStopReplicaResponseReceived(replicaId, ...)``: broker ``replica_id``
    deleted ``partitions`` (a bit mask); the argument is ``partitions * 8 + replica_id``."""

    __slots__ = ()
    __match_args__ = ("replica_id", "partitions")
    _field_types = ("BrokerAndPartitionMask",)  #: its one argument's id kind (``ids.py``)
    error = False  #: whether the response carries an error
    replica_id = _replica_id
    partitions = _partitions
    __new__ = _stop_replica_response_new  # type: ignore[assignment]


class TopicDeletionStopReplicaResponseError(ControllerEvent, code=EV_DELETE_RESP_ERR):
    """``TopicDeletionStopReplicaResponseReceived`` with an error (its fields as above)."""

    __slots__ = ()
    __match_args__ = ("replica_id", "partitions")
    _field_types = ("BrokerAndPartitionMask",)  #: its one argument's id kind (``ids.py``)
    kafka_name = "TopicDeletionStopReplicaResponseReceived (error)"
    error = True
    replica_id = _replica_id
    partitions = _partitions
    __new__ = _stop_replica_response_new  # type: ignore[assignment]


class PartitionModifications(ControllerEvent, code=EV_PARTITION_MOD):
    """``PartitionModifications(topic)``: the topic's assignment znode changed."""

    __slots__ = ()
    topic: TopicId


class PartitionReassignment(ControllerEvent, code=EV_REASSIGN):
    """``PartitionReassignment``: ``/admin/reassign_partitions`` created."""

    __slots__ = ()


class PartitionReassignmentIsrChange(ControllerEvent, code=EV_REASSIGN_ISR):
    """``PartitionReassignmentIsrChange(partition)``: a reassigned partition's state znode changed."""

    __slots__ = ()
    partition: PartitionId


class PreferredReplicaLeaderElection(ControllerEvent, code=EV_PREFERRED):
    """``PreferredReplicaLeaderElection``: ``/admin/preferred_replica_election`` created."""

    __slots__ = ()


class AutoPreferredReplicaLeaderElection(ControllerEvent, code=EV_AUTO_REBALANCE):
    """``AutoPreferredReplicaLeaderElection``: the rebalance task's tick."""

    __slots__ = ()


def _controlled_shutdown_new(cls: type, broker: int, broker_epoch: int) -> Any:
    return tuple.__new__(cls, (EV_CONTROLLED_SHUTDOWN, broker_epoch * 8 + broker))


class ControlledShutdown(ControllerEvent, code=EV_CONTROLLED_SHUTDOWN):
    """``ControlledShutdown(id, brokerEpoch)`` (KIP-380); the argument is
    ``broker_epoch * 8 + broker``."""

    __slots__ = ()
    __match_args__ = ("broker", "broker_epoch")
    _field_types = ("BrokerAndEpoch",)  #: its one argument's id kind (``ids.py``)
    broker = property(lambda self: self[1] & 7)
    broker_epoch = property(lambda self: self[1] >> 3)
    __new__ = _controlled_shutdown_new  # type: ignore[assignment]


class TopicUncleanLeaderElectionEnable(ControllerEvent, code=EV_UNCLEAN_ENABLE):
    """``TopicUncleanLeaderElectionEnable(topic)``: the topic's unclean election enabled dynamically."""

    __slots__ = ()
    topic: TopicId


class ControllerEpochChange(ControllerEvent, code=EV_CTL_EPOCH_CHANGE):
    """``ControllerEpochListener.handleDataChange``: ``/controller_epoch`` changed. Only Kafka
    0.8.0 and 0.8.1 watch it (KAFKA-1096's variant, ``model/controller/bugs/kafka_1096.py``)."""

    __slots__ = ()


class ReplicaLeaderElection(ControllerEvent, code=EV_ADMIN_UNCLEAN):
    """``ReplicaLeaderElection(partitions, ElectionType.UNCLEAN, AdminClientTriggered)``."""

    __slots__ = ()
    kafka_name = "ReplicaLeaderElection (unclean, admin)"


#: every event class, and the view of a plain ``(code, arg)`` pair as its record
EVENTS = RecordFamily(
    [
        c
        for c in list(globals().values())
        if isinstance(c, type) and issubclass(c, ControllerEvent) and c is not ControllerEvent
    ]
)
