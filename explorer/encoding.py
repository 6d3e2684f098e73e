"""Canonical byte encoding of model states and their 64-bit fingerprints.

A state is built only from ``None``, ``bool``, ``int``, :class:`enum.Enum` members,
tuples (including :class:`typing.NamedTuple` records) and frozen dataclasses. Its
encoding depends on nothing but the values, so it is identical in every process and
on every machine (``hash()`` of a ``str`` is salted per process and is never used).

Format (one tag byte, then the payload):

==========  =====================================================================
``N``       ``None``
``i``       an int as a zig-zag LEB128 varint; also a ``bool`` and an ``IntEnum``
            member, which Python treats as equal to the int (``True == 1``), so
            that equal states always have equal encodings
``e``       any other enum member: its value, encoded
``t``       a tuple or NamedTuple: a varint length, then each item
``d``       a dataclass: a varint field count, then each field's value in order
``s``       a str (allowed for action arguments, not recommended in states):
            varint byte length, then UTF-8
==========  =====================================================================

Examples
--------
>>> encode((1, None, True))
b't\\x03i\\x02Ni\\x02'
>>> fingerprint((1, 2)) == fingerprint((1, 2))
True
>>> f"{fingerprint(()):016x}"
'205b1de19a8321c9'
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Callable
from typing import Any

__all__ = ["EncodingError", "encode", "fingerprint", "fingerprint_bytes"]


class EncodingError(TypeError):
    """A value that has no canonical encoding (a dict, a set, a list, a float, ...)."""


def _varint(n: int, out: bytearray) -> None:
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def _enc(v: Any, out: bytearray) -> None:
    t = type(v)
    fn = _DISPATCH.get(t)
    if fn is not None:
        fn(v, out)
        return
    if isinstance(v, tuple):  # NamedTuple records and tuple subclasses
        _DISPATCH[t] = _enc_tuple
        _enc_tuple(v, out)
    elif isinstance(v, int):  # IntEnum / IntFlag members and other int subclasses
        _DISPATCH[t] = _enc_int_like
        _enc_int_like(v, out)
    elif isinstance(v, enum.Enum):
        _DISPATCH[t] = _enc_enum
        _enc_enum(v, out)
    elif dataclasses.is_dataclass(v) and not isinstance(v, type):
        if not t.__dataclass_params__.frozen:  # type: ignore[attr-defined]
            raise EncodingError(f"dataclass {t.__name__} is not frozen")
        names = tuple(f.name for f in dataclasses.fields(v))

        def enc_dc(x: Any, o: bytearray, _names: tuple[str, ...] = names) -> None:
            o.append(0x64)  # 'd'
            _varint(len(_names), o)
            for name in _names:
                _enc(getattr(x, name), o)

        _DISPATCH[t] = enc_dc
        enc_dc(v, out)
    else:
        raise EncodingError(f"cannot encode a {t.__name__} in a state: {v!r}")


def _enc_none(v: Any, out: bytearray) -> None:
    out.append(0x4E)  # 'N'


def _enc_bool(v: bool, out: bytearray) -> None:
    out += b"i\x02" if v else b"i\x00"  # equal to 1 / 0, so encoded as 1 / 0


def _enc_int_like(v: int, out: bytearray) -> None:
    _enc_int(int(v), out)


def _enc_int(v: int, out: bytearray) -> None:
    out.append(0x69)  # 'i'
    _varint((v << 1) if v >= 0 else ((-v << 1) - 1), out)


def _enc_enum(v: enum.Enum, out: bytearray) -> None:
    out.append(0x65)  # 'e'
    _enc(v.value, out)


def _enc_tuple(v: tuple[Any, ...], out: bytearray) -> None:
    out.append(0x74)  # 't'
    _varint(len(v), out)
    for item in v:
        _enc(item, out)


def _enc_str(v: str, out: bytearray) -> None:
    b = v.encode("utf-8")
    out.append(0x73)  # 's'
    _varint(len(b), out)
    out += b


_DISPATCH: dict[type, Callable[[Any, bytearray], None]] = {
    type(None): _enc_none,
    bool: _enc_bool,
    int: _enc_int,
    tuple: _enc_tuple,
    str: _enc_str,
}


def encode(value: Any) -> bytes:
    """Return the canonical byte encoding of ``value``.

    >>> encode(-1)
    b'i\\x01'
    """
    out = bytearray()
    _enc(value, out)
    return bytes(out)


def fingerprint_bytes(data: bytes) -> int:
    """Return the 64-bit fingerprint (BLAKE2b, 8-byte digest, little endian) of bytes.

    >>> fingerprint_bytes(b"") < 2**64
    True
    """
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def fingerprint(value: Any) -> int:
    """Return the 64-bit fingerprint of a state's canonical encoding.

    >>> fingerprint((1, 2)) == fingerprint_bytes(encode((1, 2)))
    True
    """
    return fingerprint_bytes(encode(value))
