"""Tests of explorer.search.statepack: the C state packer (``pack_states`` /
``unpack_states`` in explorer/_speedups.c) and its plain-pickle fallback.

Round trips of reachable states of every model keep every value's exact type, enum
members' identity and the sharing of sub-records; the fallback gives equal results; a
C-packed blob is refused (one line) without the C module; malformed blobs raise.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import os
import pickle
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import invariants
from explorer import speedups
from explorer.config import load_config
from explorer.search import codec, statepack
from explorer.search.statepack import dumps_states, loads_states

ROOT = Path(__file__).resolve().parent.parent

_c: Any
try:  # the C functions are tested directly whenever built, also under KAFKA_MC_PURE_PYTHON=1
    from explorer import _speedups as _c
except ImportError:
    _c = None
needs_c = pytest.mark.skipif(_c is None, reason="explorer._speedups is not built")
c_in_use = pytest.mark.skipif(
    not statepack.ACTIVE, reason=f"the C packer is not in use: {speedups.UNAVAILABLE_REASON}"
)


class Colour(enum.Enum):
    RED = 1
    BLUE = 2


class Level(enum.IntEnum):
    LOW = 1


class Pt(NamedTuple):
    x: Any
    y: Any = None


class Pt3(Pt):
    """A NamedTuple subclass without ``__slots__``: it has a ``__dict__``, so it goes as an atom."""


@dataclasses.dataclass(frozen=True)
class Box:
    v: int


def same(a: Any, b: Any, pairs: dict[int, Any], sources: dict[int, Any]) -> None:
    """Assert ``b`` is ``a`` rebuilt: equal, the same type at every level, enum members
    identical, and sharing kept (``pairs`` maps each container of ``a`` met so far to its
    image in ``b`` and ``sources`` back: one object of ``a`` has one image, two objects
    two images)."""
    assert type(a) is type(b), (a, b)
    assert a == b
    if isinstance(a, enum.Enum):
        assert a is b
    if isinstance(a, (tuple, frozenset)) and len(a):
        if id(a) in pairs:
            assert pairs[id(a)] is b, ("sharing lost", a)
            return
        assert sources.setdefault(id(b), a) is a, ("two objects became one", b)
        pairs[id(a)] = b
        if isinstance(a, tuple):
            for x, y in zip(a, b):
                same(x, y, pairs, sources)
        else:
            image = {y: y for y in b}
            for x in a:
                same(x, image[x], pairs, sources)


def check_round_trip(states: list[Any]) -> list[Any]:
    back = loads_states(dumps_states(states))
    assert len(back) == len(states)
    pairs: dict[int, Any] = {}
    sources: dict[int, Any] = {}
    for a, b in zip(states, back):
        same(a, b, pairs, sources)
    return back


@cache
def sample(name: str, config: str, n: int = 2000) -> list[Any]:
    """The first ``n`` states of ``config`` in BFS order (initial states first)."""
    spec = invariants.get_model(name)
    system = spec.build(load_config(spec.config_cls, str(ROOT / "configs" / config), []))
    front = list(system.init_states())
    out, seen = list(front), set(front)
    while front and len(out) < n:
        nxt = []
        for s in front:
            for _a, t in system.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
                    out.append(t)
        front = nxt
    return out[:n]


MODELS = [
    ("controller", "controller-ref.toml"),
    ("controller", "controller-admin.toml"),
    ("controller", "controller-0.8.toml"),
    ("timing-wheel", "timing-wheel-ref.toml"),
    ("simple-timing-wheel", "simple-timing-wheel-ref.toml"),
    ("purgatory", "purgatory-ref.toml"),
]


@pytest.mark.parametrize(("name", "config"), MODELS)
def test_reachable_states_round_trip(name: str, config: str) -> None:
    states = sample(name, config)
    assert len(states) > 100
    check_round_trip(states)
    blob = dumps_states(states)
    assert blob[:1] == (b"S" if statepack.ACTIVE else b"P")


@needs_c
def test_controller_states_are_packed_natively() -> None:
    """The controller's NamedTuples go in the class table, its enums in the atom table."""
    payload, atoms, classes = _c.pack_states(sample("controller", "controller-ref.toml"))
    names = {c.__name__ for c in classes}
    assert {"State", "Zk", "Node", "Rep"} <= names
    assert all(isinstance(a, enum.Enum) for a in atoms), atoms
    assert len(pickle.dumps(classes + atoms)) < len(payload) // 100


def test_sharing_between_states_is_kept() -> None:
    """Two states made by _replace share their untouched fields, before and after."""
    s = sample("controller", "controller-ref.toml")[-1]
    t = s._replace(**{s._fields[0]: s[1]})
    assert t[1] is s[1]
    a, b = check_round_trip([s, t])
    assert b[1] is a[1]
    for i in range(1, len(s)):
        if isinstance(s[i], tuple) and len(s[i]):
            assert a[i] is b[i], s._fields[i]


EDGE = [
    None,
    True,
    False,
    0,
    -1,
    2**63 - 1,
    -(2**63),
    2**63,
    -(2**200),
    1.5,
    "",
    "kafka",
    "ünïcødé ✓",
    "\ud800",  # a lone surrogate: not UTF-8, goes through pickle
    (),
    ((), ((),)),
    frozenset(),
    frozenset({1, "a", (2, 3), frozenset({None})}),
    Colour.RED,
    Level.LOW,
    Box(3),
    Pt(1, (Colour.BLUE, True)),
    Pt3(1, 2),
    [1, 2],
    {"k": (1,)},
    b"bytes",
]


def test_edge_values_round_trip() -> None:
    back = check_round_trip([*EDGE, tuple(EDGE)])
    assert back[EDGE.index(Colour.RED)] is Colour.RED
    assert type(back[1]) is bool and type(back[3]) is int


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.sampled_from(list(Colour)),
    lambda inner: (
        st.lists(inner, max_size=4).map(tuple)
        | st.builds(Pt, inner, inner)
        | st.frozensets(st.integers() | st.text(max_size=3), max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.slow  # 0.7 CPU-s in a loaded default run (2026-11-29)
@given(st.lists(values, max_size=6))
@settings(max_examples=80, deadline=None)
def test_random_values_round_trip(xs: list[Any]) -> None:
    check_round_trip(xs)
    shared = [x for x in xs for _ in range(2)]  # the same objects twice: back-references
    check_round_trip(shared)


def test_pure_python_fallback_gives_equal_results(monkeypatch: pytest.MonkeyPatch) -> None:
    states = sample("controller", "controller-ref.toml")[:300]
    c_blob = dumps_states(states)
    monkeypatch.setattr(statepack, "_PACKER", None)
    blob = dumps_states(states)
    assert blob[:1] == b"E"
    assert codec.decode(blob[1:]) == states
    check_round_trip(states)
    if c_blob[:1] == b"S":  # a C blob in a pure-Python process: one line saying why
        with pytest.raises(ValueError, match="packed by the C accelerator") as e:
            loads_states(c_blob)
        assert "\n" not in str(e.value)
    monkeypatch.undo()
    assert loads_states(blob) == states  # an encoded blob reads in either mode


def test_pure_python_env_turns_the_packer_off() -> None:
    code = (
        "from explorer.search import statepack as p; "
        "print(p.ACTIVE, p.dumps_states([(1, None)])[:1].decode())"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{speedups.PURE_ENV: "1"})
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "E"]


def test_deep_states_go_through_the_data_encoding() -> None:
    v: Any = None
    for _ in range(300):
        v = (v,)
    blob = dumps_states([v])
    assert blob[:1] == b"E" and loads_states(blob) == [v]


def test_bad_input_and_unknown_tags() -> None:
    with pytest.raises(TypeError, match="list"):
        dumps_states((1, 2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a state blob"):
        loads_states(b"")
    with pytest.raises(ValueError, match="not a state blob"):
        loads_states(b"Z123")
    with pytest.raises(ValueError, match="not a list"):
        loads_states(b"E" + codec.encode((1, 2)))
    with pytest.raises(ValueError, match="not a state blob"):  # a pickle is never read
        loads_states(b"P" + pickle.dumps([(1, 2)]))
    blob = b"E" + codec.encode([(1, 2)])
    for cut in range(1, len(blob)):
        with pytest.raises(ValueError, match="corrupt state blob"):
            loads_states(blob[:cut])


@c_in_use
def test_malformed_c_blobs_raise() -> None:
    blob = dumps_states(sample("controller", "controller-ref.toml")[:20] + EDGE)
    for cut in range(1, len(blob)):  # every truncation is refused
        with pytest.raises(ValueError):
            loads_states(blob[:cut])
    with pytest.raises(ValueError, match="trailing"):
        loads_states(blob + b"N")
    for i in range(5, len(blob), 7):  # a flipped byte: an error or some list, never a crash
        bad = bytearray(blob)
        bad[i] ^= 0x5A
        with contextlib.suppress(ValueError, TypeError):  # TypeError: an unhashable atom in a frozenset
            assert isinstance(loads_states(bytes(bad)), list)


@needs_c
def test_c_functions_check_their_arguments() -> None:
    pack, unpack = _c.pack_states, _c.unpack_states
    with pytest.raises(TypeError, match="list"):
        pack((1,))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a NamedTuple class"):
        unpack(b"\x00", [], [int])
    with pytest.raises(ValueError, match="not a NamedTuple class"):
        unpack(b"\x00", [], [Pt3])  # has a __dict__: tuple.__new__ would drop it
    with pytest.raises(ValueError, match="out of range"):
        unpack(b"\x01a\x00", [], [])
    with pytest.raises(ValueError, match="out of range"):
        unpack(b"\x01r\x00", [], [])
    with pytest.raises(ValueError, match="unknown tag"):
        unpack(b"\x01?", [], [])
    with pytest.raises(ValueError, match="count beyond"):
        unpack(b"\x05N", [], [])
    with pytest.raises(ValueError, match="too deep"):
        unpack(b"\x01" + b"(\x01" * 300 + b"N", [], [])

    def nest(levels: int) -> Any:
        v: Any = None
        for _ in range(levels):
            v = (v,)
        return v

    with pytest.raises(ValueError, match="deeper than 200"):
        pack([nest(201)])
    assert unpack(*pack([nest(200)])) == [nest(200)]  # the limit itself is fine


@needs_c
def test_no_reference_leaks() -> None:
    pack, unpack = _c.pack_states, _c.unpack_states
    marker, rec = Colour.BLUE, Pt(object(), (1,))
    xs = [rec, (marker, rec), frozenset({rec[1]})]
    before = [sys.getrefcount(x) for x in (marker, Pt, rec, rec[0], rec[1])]
    for _ in range(50):
        p = pack(xs)
        assert unpack(*p) == xs
        with pytest.raises(ValueError):
            unpack(p[0][:-1], p[1], p[2])
        del p
    after = [sys.getrefcount(x) for x in (marker, Pt, rec, rec[0], rec[1])]
    assert after == before


def test_spark_blocks_round_trip() -> None:
    """The spark engine's blocks: keys as they were, states packed (or cloudpickled when a
    state's class is local, which pickle cannot name)."""
    import numpy as np

    from explorer.engines.spark.partitions import pack_block, unpack_block

    states = sample("controller", "controller-ref.toml")[:500]
    keys = np.arange(len(states), dtype=np.int64) * 3
    k, back = unpack_block(pack_block(keys, states))
    assert k.dtype == keys.dtype and k.tolist() == keys.tolist()
    pairs: dict[int, Any] = {}
    sources: dict[int, Any] = {}
    for a, b in zip(states, back):
        same(a, b, pairs, sources)
    assert isinstance(pickle.loads(pack_block(keys, states))[1], bytes)

    class Local(NamedTuple):
        x: int

    k, back = unpack_block(pack_block(keys[:1], [Local(1)]))
    assert back == [Local(1)] and type(back[0]).__name__ == "Local"
