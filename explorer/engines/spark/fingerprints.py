"""Fingerprints for the ``spark`` engine: :func:`explorer.encoding.fingerprint`, faster.

Example
-------
>>> from explorer.encoding import fingerprint
>>> state_fingerprint((1, (2, None))) == fingerprint((1, (2, None)))
True
"""

from __future__ import annotations

import dataclasses
from typing import Any

from explorer import encoding, speedups
from explorer.encoding import fingerprint
from explorer.engines.base import UntrustedResultError

__all__ = ["FingerprintCollisionError", "check_fingerprint", "state_fingerprint"]


class FingerprintCollisionError(UntrustedResultError):
    """Two different states share a 64-bit fingerprint, or a stored path no longer replays."""


_ENC_CACHE: dict[int, tuple[Any, bytes]] = {}
_ENC_CACHE_LIMIT = 200_000
#: how each type is encoded: 0 other (explorer.encoding), 1 tuple/record, 2 frozen dataclass,
#: 3 int-like (int, bool, IntEnum: encoded as the int), 4 None
_SHAPE: dict[type, int] = {int: 3, bool: 3, type(None): 4, tuple: 1}
_SMALL: dict[int, bytes] = {}
for _n in range(-128, 512):
    _b = bytearray(b"i")
    encoding._varint((_n << 1) if _n >= 0 else ((-_n << 1) - 1), _b)
    _SMALL[_n] = bytes(_b)
_SELF_CHECKS = [500]  # calls left whose encoding is compared with explorer.encoding.encode
_FAST_OK = [True]


def _shape(tp: type) -> int:
    if issubclass(tp, tuple):
        k = 1
    elif dataclasses.is_dataclass(tp) and tp.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        k = 2
    elif issubclass(tp, int):
        k = 3
    else:
        k = 0
    _SHAPE[tp] = k
    return k


def _enc_into(v: Any, out: bytearray, top: bool = False) -> None:
    """Append ``encoding.encode(v)`` to ``out``; sub-records are cached by identity."""
    tp = type(v)
    k = _SHAPE.get(tp)
    if k is None:
        k = _shape(tp)
    if k == 3:
        b = _SMALL.get(v)
        if b is None:
            encoding._enc_int(int(v), out)
        else:
            out += b
        return
    if k == 4:
        out.append(0x4E)
        return
    if k == 0:
        out += encoding.encode(v)
        return
    if not top:
        hit = _ENC_CACHE.get(id(v))
        if hit is not None and hit[0] is v:
            out += hit[1]
            return
        start = len(out)
    if k == 1:
        out.append(0x74)  # 't'
        items = v
    else:
        out.append(0x64)  # 'd'
        items = [getattr(v, f.name) for f in dataclasses.fields(v)]
    n = len(items)
    if n < 128:
        out.append(n)
    else:
        encoding._varint(n, out)
    get, small, cache_get = _SHAPE.get, _SMALL, _ENC_CACHE.get
    for x in items:
        tx = type(x)
        kx = get(tx)
        if kx == 3:
            b = small.get(x)
            if b is not None:
                out += b
                continue
        elif kx == 4:
            out.append(0x4E)
            continue
        elif kx == 1 or kx == 2:
            hit = cache_get(id(x))
            if hit is not None and hit[0] is x:
                out += hit[1]
                continue
        _enc_into(x, out)
    if not top:
        if len(_ENC_CACHE) >= _ENC_CACHE_LIMIT:
            _ENC_CACHE.clear()
        _ENC_CACHE[id(v)] = (v, bytes(out[start:]))


def state_fingerprint(state: Any) -> int:
    """The 64-bit fingerprint of a state: equal to :func:`explorer.encoding.fingerprint`.

    Successor states share most of their sub-records with their parent, so the
    encodings of sub-records are cached by identity (holding a reference, so an id is
    never reused while cached). The first calls in each process are compared with
    ``explorer.encoding``; on any difference the plain function is used from then on.
    With the C accelerator (:mod:`explorer.speedups`) the whole encoding and the hash
    run in C instead (about 10x faster: 1.6 µs a controller-ref state against 15.7 µs,
    ``benchmarks/bench_speedups.py``), with the same check of the first calls.

    >>> from explorer.encoding import fingerprint
    >>> s = ((1, 2), (3, (4, None)), True)
    >>> state_fingerprint(s) == fingerprint(s)
    True
    """
    if not _FAST_OK[0]:
        return fingerprint(state)
    if speedups.ACTIVE:
        if _SELF_CHECKS[0] <= 0:
            return speedups.fingerprint(state)
        data = speedups.encode(state)
    else:
        out = bytearray()
        _enc_into(state, out, True)
        data = bytes(out)
    if _SELF_CHECKS[0] > 0:
        _SELF_CHECKS[0] -= 1
        if data != encoding.encode(state):
            _FAST_OK[0] = False
            _ENC_CACHE.clear()
            return fingerprint(state)
    return speedups.fingerprint_bytes(data)


#: what :func:`check_fingerprint` pairs a state with before hashing it
_CHECK_SALT = 0x6B6D6331


def check_fingerprint(state: Any) -> int:
    """A second 64-bit hash of a state, independent of its fingerprint.

    It is the fingerprint of ``(salt, state)``: a different BLAKE2b input, so two
    different states sharing a fingerprint differ here but for odds of 2^-64. The
    spark engine sends it with each candidate, so the driver can tell a state
    discovered by two partitions from two states that collide.

    >>> check_fingerprint((1, 2)) == check_fingerprint((1, 2)) != check_fingerprint((2, 1))
    True
    """
    if speedups.ACTIVE:
        return speedups.fingerprint((_CHECK_SALT, state))
    return fingerprint((_CHECK_SALT, state))
