"""The state records' field kinds (issue 31, item 4): every field of every state record
(``state.STATE_RECORDS``) declares what it holds (``model/controller/ids.py``), and the symmetry
renamer's renaming of each record is compiled from those declarations (``renamer._derive``), so
a state field is added without a renamer edit. The checks here are generated from the records'
fields and from the config's keys (``tests/test_symmetry_generated.py``'s variants), not from a
hand-written list: a field without a kind is refused, the derived renaming is the field-by-field
renaming by kind, renaming and renaming back gives the state again on sampled reachable states,
a state and its image get the same verdict, and a field wrongly declared as holding no id is
caught wherever the symmetric variants reach it.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

import pytest

from model.controller import ControllerConfig, ids, renamer, state
from model.controller.state import FIELD_KINDS, STATE_RECORDS, Ctx, State
from model.controller.symmetry import Permutation
from tests.test_symmetry_controller import (
    NOT_SYMMETRIC,
    _all_properties,
    asymmetric_properties,
    equivariance_failures,
    sample_states,
)
from tests.test_symmetry_generated import VARIANTS, _names, _system

RECORD_NAMES = frozenset(r.__name__ for r in STATE_RECORDS)
#: (record, field, kind as written) for every field of every state record
FIELDS = [(r, f, k) for r in STATE_RECORDS for f, k in zip(r._fields, FIELD_KINDS[r])]
#: a name that says its field holds brokers, partitions, topics or sessions
_ID_NAME = re.compile(r"(^|_)(brokers?|partitions?|topics?|replicas?|isr|leaders?|live|session|controller)$")
#: fields named like ids that hold none, and why
_NAMED_LIKE_IDS = {
    ("Zk", "next_session"): "the next session's number: above every initial session, which no renaming moves",
}
#: the sample per variant: breadth-first states, random walks of ``WALK`` steps
BFS, WALKS, WALK = 120, 3, 40


def _kind(written: str) -> str:
    return written.removesuffix(" | None")


def _holds_ids(written: str) -> bool:
    return _kind(written) not in ids.VALUE_KINDS


# -- every field declares a kind --------------------------------------------------------------


@pytest.mark.parametrize(("record", "field", "kind"), FIELDS, ids=[f"{r.__name__}.{f}" for r, f, _ in FIELDS])
def test_every_state_field_declares_a_kind(record: type, field: str, kind: str) -> None:
    """A kind of ``ids.py`` or a state record; one that holds ids has a renamer method, one that
    holds none is not named like an id."""
    assert _kind(kind) in ids.ID_KINDS | ids.VALUE_KINDS | RECORD_NAMES, (record, field, kind)
    if _holds_ids(kind):
        assert callable(getattr(renamer.Renamer, renamer.KIND_METHODS[_kind(kind)]))
    else:
        assert not _ID_NAME.search(field) or (record.__name__, field) in _NAMED_LIKE_IDS, (record, field)


def test_every_state_record_is_renamed_by_a_derived_method() -> None:
    """Each state record's renaming is the method compiled from its fields (not hand-written)."""
    for r in STATE_RECORDS:
        method = getattr(renamer.Renamer, renamer.KIND_METHODS[r.__name__])
        assert method.__code__.co_filename == f"<the renaming of {r.__name__}>"


def test_a_field_without_a_kind_is_refused() -> None:
    """A state record whose field is annotated with a plain type is an error when it is defined
    (``state.py`` checks each record as it is imported), as is a kind the renamer cannot rename."""

    class Probe(NamedTuple):
        leader: ids.BrokerId
        seen: tuple[int, ...]

    with pytest.raises(TypeError, match=r"Probe\.seen: tuple\[int, \.\.\.\] is no kind"):
        ids.check_state_record(Probe, RECORD_NAMES)


def test_a_kind_without_a_renaming_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    class Probe(NamedTuple):
        leader: ids.BrokerId
        epoch: ids.Epoch

    monkeypatch.setitem(FIELD_KINDS, Probe, ("BrokerId", "Mystery"))

    @renamer._derived(Probe)
    def probe(self: Any, x: Probe) -> Probe:  # type: ignore[empty-body]
        """A probe."""

    with pytest.raises(TypeError, match=r"Probe\.epoch: no renamer method for kind Mystery"):
        renamer._derive(probe)


def test_a_new_record_needs_only_its_declarations(monkeypatch: pytest.MonkeyPatch) -> None:
    """A record declared from the kinds alone is renamed field by field by them (None kept)."""

    class Probe(NamedTuple):
        leader: ids.BrokerId
        isr: ids.BrokerList
        parts: ids.PartitionSet
        topics: ids.TopicSet
        ctx: Ctx | None
        epoch: ids.Epoch

    monkeypatch.setitem(FIELD_KINDS, Probe, ids.check_state_record(Probe, RECORD_NAMES))

    @renamer._derived(Probe)
    def probe(self: Any, x: Probe) -> Probe:  # type: ignore[empty-body]
        """A probe."""

    rename = renamer._derive(probe)
    r = renamer.Renamer(Permutation((2, 0, 1), (1, 0, 3, 2), (1, 0)))
    assert rename(r, Probe(1, (1, 2, 0), (0, 3), (0,), None, 7)) == Probe(0, (0, 1, 2), (1, 2), (1,), None, 7)
    assert rename(r, None) is None


# -- on sampled reachable states of configurations the config's keys generate ------------------


def _records(s: State) -> list[Any]:
    """Every state record in ``s``, found through the fields whose kind is a state record or a
    tuple of them (``Nodes``, ``Replicas``, ``PerPartitionZnode``)."""
    out, todo = [], [s]
    while todo:
        r = todo.pop()
        out.append(r)
        for x in r:
            items = x if type(x) is tuple else (x,)
            todo.extend(y for y in items if type(y) in FIELD_KINDS)
    return out


def _by_fields(g: Permutation, r: Any) -> Any:
    """``r`` renamed field by field by its fields' kinds (each through the renamer's method)."""
    R = renamer.Renamer(g)
    out = []
    for v, k in zip(r, FIELD_KINDS[type(r)]):
        if not _holds_ids(k) or v is None:
            out.append(v)
        else:
            out.append(getattr(R, renamer.KIND_METHODS[_kind(k)])(v))
    return type(r)(*out)


def _permutations(cfg: ControllerConfig) -> list[Permutation]:
    """The configuration's symmetries, and renamings that need not be (brokers reversed, the
    partitions of each topic reversed, the topics reversed): renaming is defined on any."""
    nb, nt = cfg.brokers, cfg.topics
    ppt = cfg.partitions // nt
    ident_p, ident_t = tuple(range(cfg.partitions)), tuple(range(nt))
    tp = tuple(reversed(range(nt)))
    out = [
        Permutation(tuple(reversed(range(nb))), ident_p, ident_t),
        Permutation(
            tuple(range(nb)), tuple(t * ppt + ppt - 1 - i for t in range(nt) for i in range(ppt)), ident_t
        ),
        Permutation(tuple(range(nb)), tuple(tp[t] * ppt + i for t in range(nt) for i in range(ppt)), tp),
    ]
    return [g for g in out if not g.is_identity()]


@functools.cache
def _sample(name: str) -> tuple[State, ...]:
    system = _system(name)
    assert system is not None
    return tuple(sample_states(system, BFS, WALKS, WALK, seed=len(name)))


def _check_renaming(name: str) -> int:
    """Round trips, the derived renaming against the field-by-field one, and verdicts (for the
    declared symmetries); how many (state, renaming) pairs it checked."""
    system = _system(name)
    if system is None:
        return 0
    states = _sample(name)
    symmetries = system.symmetries()
    pairs = 0
    for g in [*symmetries, *_permutations(system.cfg)]:
        inv, R = g.inverse(), renamer.Renamer(g)
        for s in states:
            assert inv(g(s)) == s, (name, g)
            for r in _records(s):
                derived = getattr(R, renamer.KIND_METHODS[type(r).__name__])
                assert derived(r) == _by_fields(g, r), (name, g, type(r).__name__)
            pairs += 1
    if symmetries:
        props = _all_properties(system.cfg)
        assert asymmetric_properties(system, props, states[: BFS // 2], symmetries) <= set(NOT_SYMMETRIC)
    return pairs


@pytest.mark.slow  # 1.1 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("name", _names(4))
def test_renaming_round_trips_on_generated_variants(name: str) -> None:
    _check_renaming(name)


@pytest.mark.slow
def test_renaming_round_trips_on_every_generated_variant() -> None:
    assert sum(_check_renaming(name) for name in VARIANTS) > 10_000


# -- a field wrongly declared as holding no id ------------------------------------------------


def _forgetting(record: type, field: str) -> Any:
    """The renaming of ``record`` compiled as if ``field`` were declared as holding no id."""
    kinds = list(FIELD_KINDS[record])
    kinds[record._fields.index(field)] = "Counts"
    stub = getattr(renamer.Renamer, renamer.KIND_METHODS[record.__name__])
    original = FIELD_KINDS[record]
    FIELD_KINDS[record] = tuple(kinds)
    try:
        return renamer._derive(_Stub(record, stub.__name__))
    finally:
        FIELD_KINDS[record] = original


class _Stub:
    """A stand-in for a ``_derived`` stub (what ``_derive`` reads of one)."""

    def __init__(self, record: type, name: str) -> None:
        self._derives, self.__name__ = (record, 0), name
        self.__doc__, self.__qualname__, self.__module__ = None, f"Renamer.{name}", __name__
        self.__annotations__: dict[str, Any] = {}


@pytest.mark.slow
def test_a_field_declared_as_holding_no_id_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """For every field that holds ids, declared as holding none: wherever that changes the image
    of a symmetric variant's sampled state (the reduction relies on the field's renaming there),
    the checks fail on some variant: the rules no longer commute with the symmetry, or a state
    and its image get different verdicts. Most fields are relied on."""
    symmetric = [n for n in VARIANTS if (sys_ := _system(n)) is not None and sys_.symmetries()]
    for name in symmetric:
        _images(name)  # the right images, before any renaming is made wrong
    relied, missed = [], []
    for record, field, kind in FIELDS:
        if not _holds_ids(kind):
            continue
        with monkeypatch.context() as m:
            m.setattr(renamer.Renamer, renamer.KIND_METHODS[record.__name__], _forgetting(record, field))
            moved = [n for n in symmetric if _moved(n)]
            if moved:
                relied.append(f"{record.__name__}.{field}")
                if not any(_caught(n) for n in moved):
                    missed.append(f"{record.__name__}.{field}")
    assert missed == []
    assert len(relied) >= 25, relied


@functools.cache
def _images(name: str) -> tuple[tuple[Permutation, tuple[State, ...]], ...]:
    """Each symmetry of variant ``name`` with the images of its sampled states."""
    system = _system(name)
    assert system is not None
    return tuple((g, tuple(renamer.Renamer(g).state(s) for s in _sample(name))) for g in system.symmetries())


def _moved(name: str) -> list[tuple[Any, tuple[State, ...]]]:
    """The renamer's (now wrong) renaming of each symmetry of variant ``name``, with the sampled
    states whose image it changes, where there are some."""
    out = []
    for g, images in _images(name):
        wrong = renamer.Renamer(g).state
        moved = tuple(s for s, image in zip(_sample(name), images) if wrong(s) != image)
        if moved:
            out.append((wrong, moved))
    return out


def _caught(name: str) -> bool:
    """A renaming now wrong is caught on variant ``name``, on the sampled states whose image it
    changes: the rules do not commute with it (or reach a state the model refuses), or a state
    and its image get different verdicts."""
    system = _system(name)
    assert system is not None
    props = _all_properties(system.cfg)
    for wrong, moved in _moved(name):
        try:
            if equivariance_failures(system, moved, wrong):
                return True
            if asymmetric_properties(system, props, moved, [wrong]) - set(NOT_SYMMETRIC):  # type: ignore[list-item]
                return True
        except Exception:  # a state the model refuses to step from
            return True
    return False


def test_a_context_field_declared_as_holding_no_id_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default run's instance of the check above: the controller context's live brokers."""
    _images("spare")
    monkeypatch.setattr(renamer.Renamer, "ctx", _forgetting(state.Ctx, "live"))
    assert _caught("spare")
