"""Lists of model states to bytes and back, faster than pickle (the spark engine's blocks).

:func:`dumps_states` packs a list of states with the C accelerator's ``pack_states``
(``explorer/_speedups.c``): None, bools, ints, strs, tuples, NamedTuples and frozensets
are written natively, a NamedTuple's class once per blob, and anything else (enum
members, big ints, floats, dataclasses, ...) goes by identity into an *atom* table that
is written with the class table, so an enum member comes back as the very same member.
A tuple, NamedTuple, frozenset or str met again (the same object) is written as a
back-reference and comes back as one shared object, like pickle's memo. Types are kept
exactly: a NamedTuple comes back as its class (rebuilt as ``tuple.__new__(cls, items)``,
its Python ``__new__`` not called), True stays True, not 1.

A blob is a tag byte and then:

* ``S`` (C): the header's length (4 bytes, little-endian), the header ``(classes, atoms)``
  in the data encoding of :mod:`explorer.search.codec` (each class as its module and
  qualified name), then the C payload;
* ``E`` (encoded): the list in that data encoding, what :func:`dumps_states` writes without
  the C module (not built, or ``KAFKA_MC_PURE_PYTHON=1``), when a class or atom is not
  data the encoding can name, or for a state nested deeper than 200 levels.

Neither is a pickle: a blob read from a file (a checkpoint's frontier) builds data only.

Without the C module an ``S`` blob cannot be read: every process of a cluster must use
the same mode.

>>> from urllib.parse import urlsplit  # a NamedTuple class pickle can name
>>> u = urlsplit("http://kafka:9092/x")
>>> back = loads_states(dumps_states([(u, 1), (u, 2), None]))
>>> back
[(SplitResult(scheme='http', netloc='kafka:9092', path='/x', query='', fragment=''), 1), \
(SplitResult(scheme='http', netloc='kafka:9092', path='/x', query='', fragment=''), 2), None]
>>> type(back[0][0]) is type(u) and back[0][0] is back[1][0]
True
"""

from __future__ import annotations

import struct
from typing import Any

from explorer.search import codec
from explorer.speedups import PURE_ENV, state_packer

__all__ = ["ACTIVE", "dumps_states", "loads_states"]

_TAG_C = b"S"
_TAG_ENCODED = b"E"
_LEN = struct.Struct("<I")

_PACKER = state_packer()
#: True when blobs are packed in C (tag ``S``), False when they are in the data encoding (``E``)
ACTIVE: bool = _PACKER is not None


def dumps_states(states: list[Any]) -> bytes:
    """``states`` (a list) as one blob for :func:`loads_states`.

    >>> loads_states(dumps_states([(1, True), frozenset({"x"})]))
    [(1, True), frozenset({'x'})]
    """
    if not isinstance(states, list):
        raise TypeError(f"dumps_states needs a list of states, not {type(states).__name__}")
    if _PACKER is not None:
        try:
            payload, atoms, classes = _PACKER[0](states)
            header = codec.encode((codec.class_names(classes), atoms))
        except ValueError:  # a state nested deeper than the packer goes: the encoding goes deeper
            header = None
        except TypeError:
            header = None  # an atom the encoding cannot write: let it say so below (NotDataError)
        if header is not None:
            return b"".join((_TAG_C, _LEN.pack(len(header)), header, payload))
    return _TAG_ENCODED + codec.encode(states)


def loads_states(blob: bytes | memoryview) -> list[Any]:
    """The list of states :func:`dumps_states` packed into ``blob``.

    ``ValueError`` for a blob it cannot decode (unknown tag, truncated, corrupt), and
    for a C-packed blob when this process runs without the C accelerator.

    >>> loads_states(b"?")
    Traceback (most recent call last):
    ...
    ValueError: not a state blob (tag b'?')
    """
    view = memoryview(blob)
    tag = bytes(view[:1])
    if tag == _TAG_ENCODED:
        try:
            states = codec.decode(view[1:])
        except codec.UnsafeFileError as e:
            raise ValueError(f"corrupt state blob: {e}") from None
        if not isinstance(states, list):
            raise ValueError("corrupt state blob: the encoded value is not a list")
        return states
    if tag != _TAG_C:
        raise ValueError(f"not a state blob (tag {tag!r})")
    if _PACKER is None:
        raise ValueError(
            "this state blob was packed by the C accelerator (explorer._speedups), which this process "
            f"does not use ({PURE_ENV} set or the module not built): run every process in one mode"
        )
    if len(view) < 1 + _LEN.size:
        raise ValueError("corrupt state blob: truncated header")
    (n,) = _LEN.unpack(view[1 : 1 + _LEN.size])
    start = 1 + _LEN.size
    if start + n > len(view):
        raise ValueError("corrupt state blob: truncated header")
    try:
        names, atoms = codec.decode(view[start : start + n])
        classes = [codec.find_class(m, q) for m, q in names]
    except codec.UnsafeFileError as e:
        raise ValueError(f"corrupt state blob: bad header ({e})") from None
    except (TypeError, ValueError):  # a header of the wrong shape
        raise ValueError("corrupt state blob: bad header") from None
    if not isinstance(atoms, list) or not all(issubclass(c, tuple) for c in classes):
        raise ValueError("corrupt state blob: bad header")
    return _PACKER[1](view[start + n :], atoms, classes)
