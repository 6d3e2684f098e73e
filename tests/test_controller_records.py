"""The controller's program steps, parked continuations, events and ZooKeeper requests and
responses as named records (``model/controller/program.py``, ``continuations.py``,
``events.py``, ``messages.py``, ``responses.py``): each is the very tuple
the model encoded before (so states compare, hash and fingerprint as they did), keeps its class
through pickling, the data codec and the C packer, and a plain tuple of the same items (a
mutant's step) is read as its record."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import pytest

from explorer.encoding import fingerprint
from explorer.search import codec
from explorer.search.statepack import dumps_states, loads_states
from model.controller import continuations, events, messages, program, responses
from model.controller.continuations import PARKED, ElectLeaderForPartitionsRead, Parked, RegisterController
from model.controller.program import (
    STEPS,
    OfflineReplicas,
    SendStopReplica,
    TriggerOnlinePartitionStateChange,
)
from model.records import Record

ROOT = Path(__file__).resolve().parents[1]

STEP_CLASSES = sorted(STEPS.classes, key=lambda c: c.code)
PARKED_CLASSES = sorted(PARKED.classes, key=lambda c: c.code)
EVENT_CLASSES = sorted(events.EVENTS.classes, key=lambda c: c.code)
REQUEST_CLASSES = sorted(messages.REQUESTS.classes, key=lambda c: c.code)
BROKER_REQUEST_CLASSES = sorted(messages.BROKER_REQUESTS.classes, key=lambda c: c.code)
RESPONSE_CLASSES = sorted(
    (
        c
        for c in vars(responses).values()
        if isinstance(c, type) and issubclass(c, responses.ZkResponse) and c is not responses.ZkResponse
    ),
    key=lambda c: c.__name__,
)


def test_every_code_has_one_class() -> None:
    """Every ``O_*`` and ``W_*`` code names exactly one record class."""
    o_codes = {v for k, v in vars(program).items() if k.startswith("O_")}
    w_codes = {v for k, v in vars(program).items() if k.startswith("W_")}
    assert {c.code for c in STEP_CLASSES} == o_codes
    assert {c.code for c in PARKED_CLASSES} == w_codes
    ev_codes = {v for k, v in vars(events).items() if k.startswith("EV_")}
    assert {c.code for c in EVENT_CLASSES} == ev_codes and len(EVENT_CLASSES) == len(ev_codes)
    q_codes = {v for k, v in vars(messages).items() if k.startswith("Q_")}
    assert {c.code for c in REQUEST_CLASSES} == q_codes and len(REQUEST_CLASSES) == len(q_codes)
    m_codes = {v for k, v in vars(messages).items() if k.startswith("M_")}
    assert {c.code for c in BROKER_REQUEST_CLASSES} == m_codes and len(BROKER_REQUEST_CLASSES) == len(m_codes)
    # a response repeats its request's code, and says which request it answers
    assert all(r.code == r.request.code and r.request in messages.REQUESTS.classes for r in RESPONSE_CLASSES)


def test_requests_and_responses_are_todays_tuples() -> None:
    """A request or response is ``(code, field, ...)``, an optional field absent when not sent."""
    req = messages.UpdateIsr(2, None)
    assert req == (messages.Q_UPDATE_ISR, 2, None) and (req.partition, req.state) == (2, None)
    assert messages.GetControllerIdAndEpoch() == (messages.Q_READ_CTL,)
    assert str(messages.RegisterBroker(True)) == "RegisterBroker(reelect=True)"
    ctx = responses.ControllerContext((1, 0), ())
    assert ctx == (messages.Q_READ_CONTEXT, (1, 0), ()) and (ctx.topics, ctx.admin) == (-1, None)
    assert responses.ControllerContext((1,), (), 2) == (messages.Q_READ_CONTEXT, (1,), (), 2)
    assert responses.Topics(3).deleted == () and len(responses.Topics(3, (0,))) == 3
    assert responses.BrokerRegistered(4, True).kafka_call == messages.RegisterBroker.kafka_call
    assert type(messages.REQUESTS.view((messages.Q_UPDATE_ISR, 2, None))) is messages.UpdateIsr


def test_broker_requests_are_todays_tuples() -> None:
    """A controller-to-broker request is ``(code, controller epoch, broker epoch, data)``, as the
    ``M_*``-coded tuples were; its ``str`` names it and its fields."""
    entry = messages.LeaderAndIsrPartitionState(0, 1, 3, (1, 0), 4)
    lai = messages.LeaderAndIsrRequest(2, 5, (entry,))
    assert lai == (messages.M_LEADER_AND_ISR, 2, 5, ((0, 1, 3, (1, 0), 4),))
    assert (lai.controller_epoch, lai.broker_epoch, lai.partition_states) == (2, 5, (entry,))
    data = messages.UpdateMetadataPayload((0, 1), ((0, 1, 3, (1, 0)),))
    assert messages.UpdateMetadataRequest(2, 5, data) == (messages.M_UPDATE_METADATA, 2, 5, data)
    stop = messages.StopReplicaRequest(2, 5, messages.StopReplicaPartitions(0b11, True, False))
    assert stop == (messages.M_STOP_REPLICA, 2, 5, (3, True, False)) and stop.data.delete
    assert messages.ControlledShutdownResponse(2, 5, ()) == (messages.M_CS_RESPONSE, 2, 5, ())
    assert (
        str(stop)
        == "StopReplicaRequest(controller_epoch=2, broker_epoch=5, data=StopReplicaPartitions(mask=3, delete=True, callback=False))"
    )
    assert [c.kafka_name for c in BROKER_REQUEST_CLASSES] == [
        "LeaderAndIsr",
        "UpdateMetadata",
        "StopReplica",
        "ControlledShutdownResponse",
    ]
    plain = (messages.M_LEADER_AND_ISR, 2, 5, (entry,))
    assert type(messages.BROKER_REQUESTS.view(plain)) is messages.LeaderAndIsrRequest


def test_events_are_todays_pairs() -> None:
    """An event is ``(code, arg)``, -1 when it has no argument; its ``str`` is as before."""
    assert (
        events.BrokerChange() == (events.EV_BROKER_CHANGE, -1)
        and str(events.BrokerChange()) == "BrokerChange"
    )
    assert (
        events.ControllerChange(2) == (events.EV_CTL_CHANGE, 2)
        and events.ControllerChange(2).controller_id == 2
    )
    cs = events.ControlledShutdown(3, 5)
    assert cs == (events.EV_CONTROLLED_SHUTDOWN, 5 * 8 + 3) and (cs.broker, cs.broker_epoch) == (3, 5)
    err = events.TopicDeletionStopReplicaResponseError(1, 6)
    assert err == (events.EV_DELETE_RESP_ERR, 6 * 8 + 1) and (err.replica_id, err.partitions, err.error) == (
        1,
        6,
        True,
    )
    assert str(err) == "TopicDeletionStopReplicaResponseReceived (error)(49)"
    assert events.EVENTS.view((events.EV_REASSIGN_ISR, 4)) == events.PartitionReassignmentIsrChange(4)
    assert type(events.EVENTS.view((events.EV_REASSIGN_ISR, 4))) is events.PartitionReassignmentIsrChange


def test_records_are_todays_tuples() -> None:
    t = TriggerOnlinePartitionStateChange()
    assert t == (program.O_TRIGGER,) and TriggerOnlinePartitionStateChange(2) == (program.O_TRIGGER, 2)
    assert t.topic == -1 and TriggerOnlinePartitionStateChange(2).topic == 2
    assert OfflineReplicas(1) == (program.O_REMOVE_ISR, 1) and OfflineReplicas(1).partitions is None
    k = ElectLeaderForPartitionsRead(0, (1, 2), batch=((0, "e"),), rest=(t,))
    assert k == (program.W_ELECT_PARTS, (0, (1, 2)), ((0, "e"),), (t,))
    assert (k.strategy, k.partitions, k.batch, k.rest) == (0, (1, 2), ((0, "e"),), (t,))
    assert hash(k) == hash(tuple(k)) and fingerprint(k) == fingerprint(tuple(k))
    assert RegisterController(rest=()) == (program.W_REGISTER, None, (), ())
    with pytest.raises(TypeError):
        SendStopReplica(1, (0,))


@pytest.mark.parametrize(
    "cls",
    [
        *STEP_CLASSES,
        *PARKED_CLASSES,
        *EVENT_CLASSES,
        *REQUEST_CLASSES,
        *BROKER_REQUEST_CLASSES,
        *RESPONSE_CLASSES,
    ],
    ids=lambda c: c.__name__,
)
def test_every_record_keeps_its_class_through_pickle_codec_and_packer(cls: type) -> None:
    """No instance ``__dict__`` (the C packer takes the class as a NamedTuple), and pickling,
    the data codec and the state packer give back the same class and items."""
    fields = cls.__match_args__
    if issubclass(cls, Parked):
        x = cls(*range(len(fields) - 2), batch=(), rest=(TriggerOnlinePartitionStateChange(),))
    elif issubclass(cls, events.ControllerEvent):
        x = cls(*range(1, len(fields) + 1))
    else:
        x = cls(*range(cls._required))
    assert not hasattr(x, "__dict__") and type(x).__basicsize__ == tuple.__basicsize__
    for back in (
        pickle.loads(pickle.dumps(x)),
        codec.decode(codec.encode(x)),
        loads_states(dumps_states([x]))[0],
    ):
        assert type(back) is cls and back == x
        if issubclass(cls, Parked):
            assert type(back.rest[0]) is TriggerOnlinePartitionStateChange


def test_a_plain_tuple_is_read_as_its_record() -> None:
    step = STEPS.view((program.O_REASSIGN, 3, 1))
    assert type(step).__name__ == "OnPartitionReassignment" and (step.partition, step.mode) == (3, 1)
    k = PARKED.view((program.W_ASSIGN, (1, 2, (0, 1)), (), ()))
    assert type(k).__name__ == "AssignmentWritten" and (k.partition, k.phase, k.replicas) == (1, 2, (0, 1))
    same = TriggerOnlinePartitionStateChange()
    assert STEPS.view(same) is same


def test_no_integer_step_wait_event_or_request_code_outside_the_encoding() -> None:
    """``O_*``, ``W_*``, ``EV_*``, ``Q_*`` and ``M_*`` appear only in ``program.py``,
    ``continuations.py``, ``events.py`` and ``messages.py`` (the classes' definitions): the rest
    of the controller and its properties build and match the classes (and the catalogue mutants
    do too)."""
    allowed = {"program.py", "continuations.py", "events.py", "messages.py"}
    found = {}
    paths = [*(ROOT / "model" / "controller").rglob("*.py"), *(ROOT / "invariants").glob("controller*.py")]
    for path in sorted(paths):
        if path.name in allowed:
            continue
        tree = ast.parse(path.read_text())
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        codes = sorted(n for n in names if re.fullmatch(r"([OW]|EV|Q|M)_[A-Z_]+", n))
        if codes:
            found[str(path.relative_to(ROOT))] = codes
    assert found == {}
    mutants = ROOT / "invariants" / "mutants" / "controller.py"
    names = {n.id for n in ast.walk(ast.parse(mutants.read_text())) if isinstance(n, ast.Name)}
    assert sorted(n for n in names if re.fullmatch(r"([OW]|EV|Q|M)_[A-Z_]+", n)) == []


def test_record_classes_are_records() -> None:
    classes = [*STEP_CLASSES, *PARKED_CLASSES, *EVENT_CLASSES, *REQUEST_CLASSES, *BROKER_REQUEST_CLASSES]
    assert all(issubclass(c, Record) for c in [*classes, *RESPONSE_CLASSES])
    assert continuations.Parked in continuations.ElectRead.__mro__


# -- the id kinds a record's fields declare (issue 31, item 4) ---------------------------------

#: fields whose name says they hold ids but which hold none (counts of topics)
_COUNTS = {("Topics", "topics"), ("ControllerContext", "topics")}
#: the fields the renamer renames by hand (``Renamer.step`` / ``response``): renamed together
_BY_HAND = {
    ("SendStopReplica", "extra"),
    ("IsrChangeNotifications", "notifications"),
    ("IsrChangeNotifications", "states"),
    ("ReplicaAssignment", "topic"),
    ("ReplicaAssignment", "present"),
}
_ID_NAME = re.compile(
    r"(^|_)(brokers?|partitions?|topics?|replicas?|controller_id|isr|leader|live|elect|writes|results|states)$"
)


def _record_classes() -> list[type]:
    out = [*STEP_CLASSES, *PARKED_CLASSES, *EVENT_CLASSES, *REQUEST_CLASSES, *BROKER_REQUEST_CLASSES]
    out += RESPONSE_CLASSES
    return sorted(set(out), key=lambda c: (c.__module__, c.__name__))


def test_every_id_kind_has_a_renaming() -> None:
    """Each kind ``ids.py`` declares, and each state record, is renamed by one renamer method,
    and no other kind is."""
    from model.controller.ids import ID_KINDS
    from model.controller.renamer import KIND_METHODS, Renamer
    from model.controller.state import STATE_RECORDS

    assert set(KIND_METHODS) == ID_KINDS | {r.__name__ for r in STATE_RECORDS}
    assert all(callable(getattr(Renamer, m)) for m in KIND_METHODS.values())


@pytest.mark.parametrize("cls", _record_classes(), ids=lambda c: c.__name__)
def test_a_field_that_holds_ids_declares_their_kind(cls: type) -> None:
    """Every field of every event, request, response, step and continuation is either of an id
    kind (``ids.py``, so the symmetry renamer renames it with no edit of its own) or holds no
    id: its name says nothing of brokers, partitions or topics (a count of topics aside), and
    its type is a plain ``int`` / ``bool`` / ``Any`` (only the records renamed by hand hold
    ids in other types)."""
    from model.controller.ids import ID_KINDS

    names = [n for n in cls.__match_args__ if n not in ("batch", "rest")]
    if issubclass(cls, events.ControllerEvent) and cls._field_types and len(names) != 1:
        names = ["arg"]  # one packed argument, its kind declared for it
    assert len(names) == len(cls._field_types), cls
    for name, kind in zip(names, cls._field_types):
        if kind.removesuffix(" | None") in ID_KINDS or (cls.__name__, name) in _BY_HAND:
            continue
        assert kind in ("int", "bool", "Any"), (cls.__name__, name, kind)
        assert not _ID_NAME.search(name) or (cls.__name__, name) in _COUNTS, (cls.__name__, name, kind)
