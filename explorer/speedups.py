"""Optional C accelerators for the hot path, with pure-Python fallbacks.

The C module ``explorer._speedups`` (``explorer/_speedups.c``) is built by
``pip install -e .`` or ``python3 setup.py build_ext --inplace`` when a C compiler is
present; the install goes on without it otherwise. This module uses it when it
imports and ``KAFKA_MC_PURE_PYTHON`` is unset (or empty or ``0``); else the same
functions run in pure Python. Both give identical results:

* :func:`install_fast_replace` -- a faster ``_replace`` for a ``NamedTuple`` class;
* :func:`set_item` -- ``(*t[:i], v, *t[i + 1 :])``, a tuple with one item replaced;
* :func:`encode`, :func:`fingerprint`, :func:`fingerprint_bytes` -- exactly
  :mod:`explorer.encoding`'s functions (which stay the pure reference);
* :func:`fingerprint_table_class` -- the C set of 64-bit fingerprints (its pure-Python
  twin is :class:`explorer.search.visited.PyFingerprintTable`);
* :func:`state_packer` -- the C ``pack_states`` / ``unpack_states`` pair behind
  :mod:`explorer.search.statepack` (whose fallback is plain pickle);
* :func:`install_memo_hash` -- a record class whose instances remember their hash and their
  encoding (same values; a child state's hash or fingerprint then costs its new records only);
* :func:`install_fast_new` -- a record class whose calls build the instance in C (the same
  tuple its ``__new__`` builds, without that Python frame).

``ACTIVE`` tells which is in use.

>>> from typing import NamedTuple
>>> class P(NamedTuple):
...     x: int
...     y: int = 0
>>> _ = install_fast_replace(P)
>>> P(1, 2)._replace(y=5)
P(x=1, y=5)
>>> set_item((1, 2, 3), 1, "b")
(1, 'b', 3)
>>> encode((1, None, True)) == encoding.encode((1, None, True))
True
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from explorer import encoding

__all__ = [
    "ACTIVE",
    "PURE_ENV",
    "UNAVAILABLE_REASON",
    "encode",
    "fingerprint",
    "fingerprint_bytes",
    "fingerprint_table_class",
    "install_fast_new",
    "install_fast_replace",
    "install_memo_hash",
    "set_item",
    "state_packer",
]

#: the environment variable that forces the pure-Python fallbacks (``1``)
PURE_ENV = "KAFKA_MC_PURE_PYTHON"

T = TypeVar("T", bound=type)


def _set_item_py(t: tuple, i: int, v: Any) -> tuple:
    """Pure-Python :func:`set_item` (and the C version's path for unusual arguments)."""
    return (*t[:i], v, *t[i + 1 :])


def _fast_replace_py(cls: type) -> Callable[..., Any]:
    """A pure-Python ``_replace`` for ``cls``: about 1.5x faster than the generated one."""
    index = {name: i for i, name in enumerate(cls._fields)}  # type: ignore[attr-defined]
    new = tuple.__new__

    def _replace(self: Any, /, **kwds: Any) -> Any:
        t = list(self)
        try:
            for k, v in kwds.items():
                t[index[k]] = v
        except KeyError:
            raise ValueError(f"Got unexpected field names: {[k for k in kwds if k not in index]!r}") from None
        return new(type(self), t)

    _replace.__qualname__ = f"{cls.__qualname__}._replace"
    _replace.__doc__ = "Return a new record replacing specified fields with new values (explorer.speedups)."
    return _replace


def _load() -> tuple[ModuleType | None, str]:
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return None, f"{PURE_ENV}={os.environ[PURE_ENV]} is set"
    try:
        from explorer import _speedups
    except ImportError as e:
        return (
            None,
            f"explorer._speedups is not built ({e}); build it with `python3 setup.py build_ext --inplace`",
        )
    _speedups._configure(encoding.encode, _set_item_py)
    return _speedups, ""


_C, UNAVAILABLE_REASON = _load()

#: True when the C module is in use, False when the pure-Python fallbacks are
ACTIVE: bool = _C is not None

set_item: Callable[[tuple, int, Any], tuple]
encode: Callable[[Any], bytes]
fingerprint: Callable[[Any], int]
fingerprint_bytes: Callable[[bytes], int]
if _C is not None:
    set_item = _C.set_item
    encode = _C.encode
    fingerprint = _C.fingerprint
    fingerprint_bytes = _C.fingerprint_bytes
else:
    set_item = _set_item_py
    encode = encoding.encode
    fingerprint = encoding.fingerprint
    fingerprint_bytes = encoding.fingerprint_bytes

_ORIGINAL = "__wrapped__"


def fingerprint_table_class() -> Any:
    """The C ``FpTable`` class when the accelerator is in use, else None.

    >>> fingerprint_table_class() is None or fingerprint_table_class()(8).capacity == 8
    True
    """
    # None too with a module built before FpTable existed (rebuild it to get the C table)
    return None if _C is None else getattr(_C, "FpTable", None)


#: ``pack_states(states) -> (payload, atoms, classes)``, ``unpack_states(payload, atoms, classes)``
StatePacker = tuple[Callable[[list[Any]], tuple[bytes, list[Any], list[type]]], Callable[..., list[Any]]]


def state_packer() -> StatePacker | None:
    """The C ``(pack_states, unpack_states)`` when the accelerator is in use, else None.

    ``pack_states(states)`` gives ``(payload, atoms, classes)``, and
    ``unpack_states(payload, atoms, classes)`` the list back (see ``_speedups.c``).

    >>> p = state_packer()
    >>> p is None or p[1](*p[0]([(1, "a", None)])) == [(1, "a", None)]
    True
    """
    # None too with a module built before the packer existed (rebuild it to get it)
    if _C is None or not hasattr(_C, "pack_states"):
        return None
    return _C.pack_states, _C.unpack_states


def install_fast_replace(cls: T) -> T:
    """Give the ``NamedTuple`` class ``cls`` a faster ``_replace``; return ``cls``.

    Same behaviour as the generated method: keyword arguments name fields, an unknown
    name raises ``ValueError("Got unexpected field names: [...]")``, the result has the
    instance's own type. The original stays reachable as ``cls._replace.__wrapped__``;
    installing twice is harmless.

    >>> from typing import NamedTuple
    >>> class Q(NamedTuple):
    ...     a: int
    ...     b: tuple = ()
    >>> install_fast_replace(Q) is Q
    True
    >>> Q(1)._replace(b=(2,), a=0)
    Q(a=0, b=(2,))
    >>> Q(1)._replace(c=3)
    Traceback (most recent call last):
    ...
    ValueError: Got unexpected field names: ['c']
    """
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
        raise TypeError(f"install_fast_replace needs a NamedTuple class, not {cls!r}")
    original = cls.__dict__.get("_replace", getattr(cls, "_replace", None))
    original = getattr(original, _ORIGINAL, original)  # already installed: keep the generated one
    fast: Any
    if _C is not None:
        fast = _C.FastReplace(cls, original)
    else:
        fast = _fast_replace_py(cls)
        setattr(fast, _ORIGINAL, original)
    cls._replace = fast  # type: ignore[attr-defined]
    return cls


def install_memo_hash(cls: T) -> T:
    """Make the records of the ``NamedTuple`` class ``cls`` remember their hash and their
    encoding per object (in C; nothing without the accelerator); return ``cls``.

    The values are tuple's hash and :func:`encode`'s bytes, exactly: a state shares most of
    its records with its parent, so the search's hash of a generated state (the exact
    visited set) or its fingerprint then costs the records the step rebuilt, not the whole
    state. Two direct-mapped tables of 256 entries keyed by address, each holding a
    reference to the record it remembers, so at most that many records stay alive for it
    (small on purpose: what it saves is a parent's records hashed again for each of its
    successors; ``explorer/_speedups.c`` says why and what was measured).
    A class overriding tuple's hash, length or iteration is refused (``TypeError``).

    >>> from typing import NamedTuple
    >>> class R(NamedTuple):
    ...     a: int
    ...     b: tuple = ()
    >>> _ = install_memo_hash(R)
    >>> r = R(1, (2, 3))
    >>> hash(r) == hash((1, (2, 3))) and hash(r) == hash(r)
    True
    >>> encode((r, r)) == encoding.encode(((1, (2, 3)), (1, (2, 3))))
    True
    """
    if not (isinstance(cls, type) and issubclass(cls, tuple)):
        raise TypeError(f"install_memo_hash needs a NamedTuple class, not {cls!r}")
    memo = None if _C is None else getattr(_C, "memo_hash", None)
    if memo is not None:  # None too with a module built before memo_hash existed
        memo(cls)
    return cls


def install_fast_new(
    cls: T,
    *,
    prefix: tuple = (),
    fields: tuple[str, ...] | None = None,
    required: int | None = None,
    omit_optional: bool = False,
    single: Any = None,
) -> T:
    """Make a call of the record class ``cls`` build its instance in C (nothing without the
    accelerator); return ``cls``. ``cls.__new__`` itself is left as it is (``pickle``, the
    codecs and an explicit ``cls.__new__(cls, ...)`` are unchanged), and a ``__new__`` assigned
    later is honoured.

    Without arguments ``cls`` is a ``NamedTuple`` class (its ``_fields`` and defaults). For
    other record classes: the instance is ``prefix`` then the ``fields`` given, positionally
    or by name, of which the first ``required`` must be; with ``omit_optional`` the optional
    ones given up to the first missing one (a shorter tuple; a record without its optional
    fields), else their defaults. ``single``: every call without arguments returns it.
    Arguments the generated ``__new__`` would refuse take the ordinary call, which raises
    what it raises.

    >>> from typing import NamedTuple
    >>> class P(NamedTuple):
    ...     a: int
    ...     b: tuple = ()
    >>> install_fast_new(P) is P
    True
    >>> P(1), P(1, b=(2,)), P(a=3)
    (P(a=1, b=()), P(a=1, b=(2,)), P(a=3, b=()))
    >>> P()
    Traceback (most recent call last):
    ...
    TypeError: P.__new__() missing 1 required positional argument: 'a'
    """
    if not (isinstance(cls, type) and issubclass(cls, tuple) and cls is not tuple and type(cls) is type):
        raise TypeError(f"install_fast_new needs a tuple subclass whose metaclass is type, not {cls!r}")
    install = None if _C is None else getattr(_C, "fast_new", None)
    if install is None:  # None too with a module built before fast_new existed
        return cls
    original = cls.__dict__.get("__new__")
    if original is None:
        raise TypeError(f"install_fast_new: {cls.__name__} defines no __new__ of its own")
    defaults: tuple | None = None
    if fields is None:  # a NamedTuple class
        if not hasattr(cls, "_fields"):
            raise TypeError(f"install_fast_new: {cls.__name__} is not a NamedTuple class: name its fields")
        fields = tuple(cls._fields)  # type: ignore[attr-defined]
        fn = getattr(original, "__func__", original)
        defaults = tuple(getattr(fn, "__defaults__", None) or ())
        required = len(fields) - len(defaults)
    elif not omit_optional:
        raise TypeError("install_fast_new: give the defaults of optional fields through a NamedTuple class")
    install(
        cls,
        original,
        tuple(prefix),
        tuple(fields),
        len(fields) if required is None else required,
        defaults,
        single,
    )
    return cls
