"""Tests of explorer.speedups: the C accelerator (explorer/_speedups.c) against the
pure-Python reference, and the fallbacks themselves.

The C-against-Python comparisons run whenever ``explorer._speedups`` is built, also
under ``KAFKA_MC_PURE_PYTHON=1`` (they configure and call the C module directly); they
are skipped, saying so, only when it is not built.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import encoding, speedups
from explorer.encoding import EncodingError

ROOT = Path(__file__).resolve().parent.parent

_c: ModuleType | None
try:
    from explorer import _speedups as _c
except ImportError:
    _c = None
else:
    _c._configure(encoding.encode, speedups._set_item_py)  # as explorer.speedups does

needs_c = pytest.mark.skipif(
    _c is None,
    reason="explorer._speedups is not built (python3 setup.py build_ext --inplace); "
    "the pure-Python fallbacks are tested alone",
)


def c() -> ModuleType:
    assert _c is not None
    return _c


# --------------------------------------------------------------------------- values


class Colour(enum.IntEnum):
    RED = 1
    GREEN = 2
    HUGE = 2**80


class Flags(enum.IntFlag):
    A = 1
    B = 4


class Mode(enum.Enum):
    ON = "on"
    OFF = None
    PAIR = (1, -2)
    BIG = -(2**70)


class Weird(int):
    """An int subclass whose ``int()`` is not its value: encoded as ``int(v)``."""

    def __int__(self) -> int:
        return 7


class Backwards(tuple):
    """A tuple subclass that iterates in reverse: encoded as it iterates."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        return reversed(tuple(super().__iter__()))


class Rec(NamedTuple):
    a: Any
    b: Any = None


class Sub(Rec):
    """A subclass of a NamedTuple record (has a ``__dict__``)."""


@dataclasses.dataclass(frozen=True)
class Box:
    x: Any
    y: Any


@dataclasses.dataclass
class Loose:  # not frozen: no canonical encoding
    x: int


leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.integers(min_value=-(2**64) - 3, max_value=2**64 + 3),
    st.sampled_from([-(2**63) - 1, -(2**63), 2**63 - 1, 2**63, 2**64 - 1, 2**64, -64, -65, 63, 64]),
    st.sampled_from([*list(Colour), Flags.A | Flags.B, Flags.B, *list(Mode)]),
    st.integers(-(2**70), 2**70).map(Weird),
    st.text(max_size=20),
)

values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6).map(tuple),
        st.tuples(inner, inner).map(lambda t: Rec(*t)),
        st.tuples(inner, inner).map(lambda t: Sub(*t)),
        st.tuples(inner, inner).map(lambda t: Box(*t)),
        st.lists(inner, max_size=4).map(Backwards),
    ),
    max_leaves=40,
)


# --------------------------------------------------------------------------- encode / fingerprint


@needs_c
@pytest.mark.slow  # 400 examples, about 2 CPU-s
@settings(max_examples=400, deadline=None)
@given(values)
def test_c_encode_equals_pure(v: Any) -> None:
    assert c().encode(v) == encoding.encode(v)
    assert c().fingerprint(v) == encoding.fingerprint(v)


@needs_c
@pytest.mark.parametrize(
    "v",
    [
        0,
        -1,
        True,
        False,
        None,
        "",
        "héllo ✓",
        (),
        tuple(range(-300, 300)),
        tuple(range(200)),  # a length needing a two-byte varint
        "x" * 300,
        2**1000,
        -(2**1000) + 1,
        Colour.HUGE,
        Weird(5),
        Backwards((1, 2, (3,))),
        Rec(Box(Mode.PAIR, Rec(1)), Sub(Colour.RED, "s")),
        tuple(Box(i, (i,)) for i in range(50)),
    ],
)
def test_c_encode_examples(v: Any) -> None:
    assert c().encode(v) == encoding.encode(v)
    assert c().fingerprint(v) == encoding.fingerprint(v)


@needs_c
@pytest.mark.parametrize("v", [1.5, [1], {1: 2}, {3}, Loose(1), (1, (2, [3])), b"x", Rec(1, 2.0)])
def test_c_encode_rejects_what_pure_rejects(v: Any) -> None:
    with pytest.raises(EncodingError) as pure:
        encoding.encode(v)
    with pytest.raises(EncodingError) as fast:
        c().encode(v)
    assert str(fast.value) == str(pure.value)
    with pytest.raises(EncodingError):
        c().fingerprint(v)


@needs_c
def test_c_encode_errors_like_pure() -> None:
    for fn in (encoding.encode, c().encode):
        with pytest.raises(UnicodeEncodeError):
            fn(("ok", "\ud800"))
    deep: Any = ()
    for _ in range(100_000):
        deep = (deep,)
    with pytest.raises(RecursionError):
        c().encode(deep)


@needs_c
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=1000))
def test_c_fingerprint_bytes_is_blake2b(data: bytes) -> None:
    assert c().fingerprint_bytes(data) == encoding.fingerprint_bytes(data)


@needs_c
def test_c_fingerprint_bytes_block_boundaries() -> None:
    for n in [0, 1, 111, 127, 128, 129, 255, 256, 257, 383, 384, 385, 4096, 100_003]:
        data = bytes((i * 7 + n) % 256 for i in range(n))
        assert c().fingerprint_bytes(data) == encoding.fingerprint_bytes(data), n
        assert c().fingerprint_bytes(bytearray(data)) == encoding.fingerprint_bytes(data), n
    assert f"{c().fingerprint(()):016x}" == "205b1de19a8321c9"  # explorer.encoding's doctest


def test_active_functions_equal_reference() -> None:
    """Whichever implementation is active, it gives explorer.encoding's results."""
    for v in [(), (1, None, True), Rec(Box(Mode.ON, 2**70), (Colour.GREEN, "s"))]:
        assert speedups.encode(v) == encoding.encode(v)
        assert speedups.fingerprint(v) == encoding.fingerprint(v)
        assert speedups.fingerprint_bytes(b"ab") == encoding.fingerprint_bytes(b"ab")


# --------------------------------------------------------------------------- _replace


class Wide(NamedTuple):
    f0: Any
    f1: Any
    f2: Any = 0
    f3: Any = ()
    f4: Any = None
    f5: Any = 5
    f6: Any = -1
    f7: Any = "x"


FIELDS = Wide._fields
ORIGINAL_REPLACE = Wide._replace  # the generated one, before any install below


def fresh_class(name: str) -> type:
    """A new NamedTuple class like Wide, with the generated ``_replace``."""
    return NamedTuple(name, [(f, Any) for f in FIELDS])  # type: ignore[misc]


def implementations() -> list[tuple[str, Callable[[type], Any]]]:
    out: list[tuple[str, Callable[[type], Any]]] = [("python", speedups._fast_replace_py)]
    if _c is not None:
        out.append(("c", lambda cls: c().FastReplace(cls, cls._replace)))
    return out


@pytest.mark.slow  # 2.3 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("impl", [name for name, _ in implementations()])
@settings(max_examples=200, deadline=None)
@given(
    items=st.lists(leaves, min_size=8, max_size=8),
    changes=st.dictionaries(st.sampled_from(FIELDS), leaves, max_size=8),
)
def test_fast_replace_equals_original(impl: str, items: list[Any], changes: dict[str, Any]) -> None:
    make = dict(implementations())[impl]
    cls = fresh_class(f"W_{impl}")
    cls._replace = make(cls)  # type: ignore[attr-defined]
    rec, ref = cls(*items), Wide(*items)
    got, want = rec._replace(**changes), ORIGINAL_REPLACE(ref, **changes)
    assert type(got) is cls
    assert tuple(got) == tuple(want)
    assert cls._replace(rec, **changes) == got  # through the class, the record first
    bound = rec._replace  # a bound method, called later
    assert bound(**changes) == got


@pytest.mark.parametrize("impl", [name for name, _ in implementations()])
def test_fast_replace_errors_like_original(impl: str) -> None:
    cls = fresh_class(f"E_{impl}")
    cls._replace = dict(implementations())[impl](cls)  # type: ignore[attr-defined]
    rec, ref = cls(*range(8)), Wide(*range(8))
    for bad in [{"nope": 1}, {"f1": 2, "zz": 3, "f0": 1, "aa": 4}, {"_fields": 1}]:
        with pytest.raises(ValueError) as want:
            ORIGINAL_REPLACE(ref, **bad)
        with pytest.raises(ValueError) as got:
            rec._replace(**bad)
        assert str(got.value) == str(want.value)
        assert str(got.value).startswith("Got unexpected field names: [")
    with pytest.raises(TypeError):
        rec._replace(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        cls._replace()
    assert rec._replace() == rec and type(rec._replace()) is cls
    assert rec._replace(**{"f" + "1": "non-interned name"}).f1 == "non-interned name"


def test_install_fast_replace_keeps_semantics_and_type() -> None:
    cls = fresh_class("Installed")
    generated = cls._replace
    assert speedups.install_fast_replace(cls) is cls
    assert speedups.install_fast_replace(cls) is cls  # twice: still the generated original
    assert cls._replace.__wrapped__ is generated  # type: ignore[attr-defined]

    class Derived(cls):  # type: ignore[valid-type, misc]
        pass

    d = Derived(*range(8))._replace(f3=(1,))
    assert type(d) is Derived and d.f3 == (1,) and d.f7 == 7
    assert Sub(1, 2)._replace(b=3) == Sub(1, 3) and type(Sub(1, 2)._replace(b=3)) is Sub
    with pytest.raises(TypeError):
        speedups.install_fast_replace(tuple)
    with pytest.raises(TypeError):
        speedups.install_fast_replace(int)


def test_model_records_have_fast_replace() -> None:
    from model import controller as m
    from model.controller.state import Ctx, PartZ, Rep

    s = m.ControllerSystem(m.ControllerConfig(brokers=3, replication_factor=2)).init_states()[0]
    n = s.nodes[0]  # broker 0 controls: it has a Ctx
    records = {m.State: s, m.Zk: s.zk, m.Node: n, Ctx: n.ctx, Rep: n.reps[0], PartZ: s.zk.parts[0]}
    for cls, rec in records.items():
        fast = cls.__dict__["_replace"]
        assert fast.__wrapped__.__module__ == "collections"  # the generated one, kept
        assert type(fast).__name__ == ("FastReplace" if speedups.ACTIVE else "function")
        for name in cls._fields:
            value = ("new", name)
            got, want = rec._replace(**{name: value}), fast.__wrapped__(rec, **{name: value})
            assert type(got) is cls and got == want
    import model.controller.zookeeper as zookeeper

    assert zookeeper.set_item is speedups.set_item  # the name the model's steps call


def _plain(v: Any) -> Any:
    """``v`` with every tuple (records included) rebuilt as a plain tuple: no memo anywhere."""
    return tuple(_plain(x) for x in v) if isinstance(v, tuple) else v


@needs_c
def test_memo_hash_gives_tuple_hash_and_encoding() -> None:
    """Records with a remembered hash and encoding (``install_memo_hash``: the controller's
    state records) hash and encode as plain tuples do, on the first call (remembered then)
    and on later ones (from the memo), for states that share records with their parent."""
    from model import controller as m

    system = m.ControllerSystem(m.ControllerConfig(brokers=3, replication_factor=2))
    states, frontier = list(system.init_states()), list(system.init_states())
    for _ in range(3):
        frontier = [t for s in frontier for _, t in system.successors(s)]
        states += frontier
    assert len(states) > 50
    for s in states + states:  # the second round reads the memo (or re-fills it)
        plain = _plain(s)
        assert hash(s) == hash(plain) and hash(s.nodes[1]) == hash(plain[1][1])
        assert c().encode(s) == encoding.encode(plain) == encoding.encode(s)
        assert c().fingerprint(s) == encoding.fingerprint(plain)


CONTROLLER_CONFIGS = sorted((ROOT / "configs").glob("controller-*.toml"))


@pytest.mark.slow  # 13.7 CPU-s loaded: 14 configurations, 1,500 states and their successors each
@needs_c
@pytest.mark.parametrize("path", CONTROLLER_CONFIGS, ids=lambda p: p.stem)
def test_memo_hash_equals_the_reference_on_every_controller_configuration(path: Path) -> None:
    """Every controller configuration (the reference ones among them): on its first 1,500 states
    in breadth-first order and every successor of theirs, the remembered hash is tuple's hash of
    the same value as plain tuples, and the C fingerprint (encodings from the memo) is the pure
    reference's (``explorer.encoding``), so neither visited set can tell the memo is there."""
    from explorer.config import load_config
    from model.controller import ControllerConfig, ControllerSystem

    system = ControllerSystem(load_config(ControllerConfig, path))
    seen = set(system.init_states())
    queue = list(seen)
    i = 0
    while i < min(len(queue), 1500):
        s, i = queue[i], i + 1
        kids = [t for _, t in system.successors(s)]
        for t in (s, *kids):
            plain = _plain(t)
            assert hash(t) == hash(plain)
            assert c().fingerprint(t) == encoding.fingerprint(plain)
        for t in kids:
            if t not in seen:
                seen.add(t)
                queue.append(t)
    assert len(queue) >= 74  # controller-small has 74 states in all


@needs_c
def test_memo_hash_refuses_an_overridden_hash() -> None:
    class Own(NamedTuple):
        a: int

        def __hash__(self) -> int:
            return 7

    with pytest.raises(TypeError, match="overrides"):
        c().memo_hash(Own)
    with pytest.raises(TypeError):
        c().memo_hash(int)
    assert hash(Own(1)) == 7


# --------------------------------------------------------------------------- set_item


def slicing(t: tuple, i: int, v: Any) -> tuple:
    return (*t[:i], v, *t[i + 1 :])


@pytest.mark.slow  # 1.5 CPU-s in a loaded default run (2026-11-29)
@settings(max_examples=300, deadline=None)
@given(st.lists(leaves, min_size=1, max_size=12).map(tuple), st.data())
def test_set_item_equals_slicing(t: tuple, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(t) - 1))
    fns = [speedups.set_item, speedups._set_item_py] + ([c().set_item] if _c is not None else [])
    for fn in fns:
        for j in {0, i, len(t) - 1}:
            got = fn(t, j, "new")
            assert got == slicing(t, j, "new") and type(got) is tuple
        # outside the fast path: indexes out of range, negative, huge, bool; a NamedTuple
        for j in [-1, -len(t), -len(t) - 5, len(t), len(t) + 3, 2**70, -(2**70), True]:
            assert fn(t, j, "new") == slicing(t, j, "new")
        r = Rec(*t[:2]) if len(t) >= 2 else Rec(t[0])
        assert fn(r, 1, "x") == slicing(r, 1, "x") and type(fn(r, 1, "x")) is tuple


def test_set_item_errors_like_slicing() -> None:
    for fn in [speedups.set_item, speedups._set_item_py]:
        with pytest.raises(TypeError):
            fn((1, 2), "1", 0)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            fn(5, 0, 0)  # type: ignore[arg-type]
        assert fn([1, 2, 3], 1, 9) == (1, 9, 3)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- reference counts


@pytest.mark.slow  # over a CPU-second: the ci selection runs it
@needs_c
def test_c_reference_counts_stay_stable() -> None:
    """A million calls of each C function leave every object's reference count as it was
    (a leaked result or a missing INCREF would show on the sentinel or the class)."""
    m = c()
    sentinel = object()
    t = (1, sentinel, 3)
    cls = fresh_class("Counted")
    cls._replace = m.FastReplace(cls, cls._replace)  # type: ignore[attr-defined]
    rec = cls(*([sentinel] * 8))
    box = Box(sentinel_int := 2**100, "s")
    big = (sentinel_int, "text", Colour.GREEN, Weird(3), None, True)
    before = [sys.getrefcount(x) for x in (sentinel, cls, sentinel_int, box, rec)]
    for _ in range(1_000_000):
        m.set_item(t, 1, sentinel)
        m.set_item(t, 0, sentinel)
        rec._replace(f0=sentinel, f7=1)
    for _ in range(300_000):
        m.encode(big)
        m.fingerprint(box)
        m.set_item(t, 7, sentinel)  # the Python fallback path
    for _ in range(100_000):
        with contextlib.suppress(ValueError):
            rec._replace(f0=sentinel, bad=sentinel)
        with contextlib.suppress(EncodingError):
            m.encode((sentinel_int, [sentinel]))
    after = [sys.getrefcount(x) for x in (sentinel, cls, sentinel_int, box, rec)]
    assert after == before


# --------------------------------------------------------------------------- record constructors


class Made(NamedTuple):
    a: int
    b: tuple = ()
    c: Any = None


def _fresh_made() -> type:
    """A new NamedTuple class like :class:`Made` (each test installs on its own)."""
    import collections

    return collections.namedtuple("Made", ["a", "b", "c"], defaults=((), None))


CALLS: list[tuple[tuple, dict[str, Any]]] = [
    ((1,), {}),
    ((1, (2,)), {}),
    ((1, (2,), 3), {}),
    ((), {"a": 1}),
    ((1,), {"c": 3}),
    ((), {"c": 3, "a": 1, "b": (4,)}),
    ((1,), {"b": 2}),
    # refused alike: too few, too many, twice, unknown, a name built at run time
    ((), {}),
    ((1, 2, 3, 4), {}),
    ((1,), {"a": 2}),
    ((1,), {"d": 2}),
    ((1,), {"".join(["c"]): 3}),
]


def _outcome(make: Callable[[], Any]) -> tuple[str, Any]:
    try:
        r = make()
    except TypeError as e:
        return ("TypeError", str(e))
    return (type(r).__name__, tuple(r))


@needs_c
@pytest.mark.parametrize("args, kwargs", CALLS)
def test_fast_new_builds_what_the_generated_new_builds(args: tuple, kwargs: dict[str, Any]) -> None:
    plain, fast = _fresh_made(), _fresh_made()
    assert speedups.install_fast_new(fast) is fast
    assert _outcome(lambda: fast(*args, **kwargs)) == _outcome(lambda: plain(*args, **kwargs))
    assert type(fast(1)) is fast


@needs_c
def test_fast_new_of_a_record_omits_its_missing_optional_fields() -> None:
    from model.records import Record

    class Ping(Record, code=7):
        __slots__ = ()
        target: int
        tries: int = 0
        note: str = ""

    class Pong(Record, code=8):
        __slots__ = ()

    generated = Ping.__dict__["__new__"]
    for args, kwargs in [((2,), {}), ((2, 1), {}), ((2, 1, "x"), {}), ((), {"target": 2, "tries": 1})]:
        got, want = Ping(*args, **kwargs), generated(Ping, *args, **kwargs)
        assert (type(got), tuple(got)) == (Ping, tuple(want))
    assert tuple(Ping(2)) == (7, 2) and Ping(2).tries == 0 and Ping(2) == (7, 2)
    assert tuple(Ping(2, note="x")) == (7, 2)  # as the generated one: the first missing ends it
    assert Pong() is Pong() and tuple(Pong()) == (8,)
    with pytest.raises(TypeError):
        Ping()
    with pytest.raises(TypeError):
        Pong(1)


@needs_c
def test_fast_new_honours_subclasses_and_a_new_assigned_later() -> None:
    cls = _fresh_made()
    speedups.install_fast_new(cls)

    class Derived(cls):  # type: ignore[valid-type, misc]
        __slots__ = ()

    assert type(Derived(1)) is Derived and tuple(Derived(1)) == (1, (), None)
    import pickle

    assert pickle.loads(pickle.dumps(Made(1))) == Made(1)
    cls.__new__ = lambda k, *a, **kw: tuple.__new__(k, ("replaced", 0, 0))  # type: ignore[method-assign]
    assert tuple(cls(1)) == ("replaced", 0, 0)
    with pytest.raises(TypeError):
        speedups.install_fast_new(tuple)
    with pytest.raises(TypeError):
        speedups.install_fast_new(int)


@needs_c
def test_the_models_records_are_built_in_c() -> None:
    from model.controller import actions, events, state

    built = [state.PartZ, state.State, actions.ZkServe, actions.Crash, events.BrokerChange]
    assert all(type(k).__name__ == "type" for k in built)
    assert actions.Crash(1) == actions.Crash.__dict__["__new__"](actions.Crash, 1)
    assert events.BrokerChange() is events.BrokerChange()


@pytest.mark.slow  # a million calls: the ci selection runs it
@needs_c
def test_fast_new_reference_counts_stay_stable() -> None:
    cls = _fresh_made()
    speedups.install_fast_new(cls)
    sentinel = object()
    before = [sys.getrefcount(x) for x in (sentinel, cls)]
    for _ in range(300_000):
        cls(sentinel)
        cls(sentinel, b=sentinel)
        with contextlib.suppress(TypeError):
            cls(sentinel, a=sentinel)
        with contextlib.suppress(TypeError):
            cls(sentinel, sentinel, sentinel, sentinel)
    assert [sys.getrefcount(x) for x in (sentinel, cls)] == before


# --------------------------------------------------------------------------- the switch and the model


def run_python(code: str, pure: bool) -> Any:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(speedups.PURE_ENV, None)
    if pure:
        env[speedups.PURE_ENV] = "1"
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(p.stdout.strip().splitlines()[-1])


EXPLORE = """
import json
from explorer import speedups
from explorer.engines.bfs import check_bfs
from explorer.config import load_config
from explorer.engines.spark import state_fingerprint
from explorer.encoding import fingerprint
import invariants.controller as spec
from model.controller import ControllerConfig
from model.controller.zookeeper import set_item as _set
c = load_config(ControllerConfig, "configs/controller-small.toml", [])
r = check_bfs(spec.build(c), spec.properties(c), keep_going=True)
system = spec.build(c)
seen, frontier = set(), list(system.init_states())
while frontier:
    s = frontier.pop()
    if s in seen:
        continue
    seen.add(s)
    frontier.extend(t for _, t in system.successors(s))
fps = sorted(state_fingerprint(s) for s in seen)
assert fps == sorted(fingerprint(s) for s in seen)
print(json.dumps({"active": speedups.ACTIVE, "set": _set.__module__, "states": r.distinct_states,
                  "fps": hash(tuple(fps)), "n": len(fps)}))
"""


@pytest.mark.slow  # over 1.3 CPU-s in the CI of session 17
def test_pure_switch_and_same_exploration() -> None:
    """KAFKA_MC_PURE_PYTHON=1 turns the C module off; both explore the same states with the
    same fingerprints (controller-small, golden count 74)."""
    pure = run_python(EXPLORE, pure=True)
    assert pure["active"] is False and pure["set"] == "explorer.speedups"
    default = run_python(EXPLORE, pure=False)
    assert default["active"] is (_c is not None)
    assert default["set"] == ("explorer._speedups" if _c is not None else "explorer.speedups")
    assert pure["states"] == default["states"] == pure["n"] == default["n"] == 74
    assert pure["fps"] == default["fps"]
