"""Named records that are tuples: a model's messages, program steps and parked continuations
as one class each, with named fields and a ``__match_args__`` (dispatch with ``match``), whose
instances *are* the tuple the model encoded before (its kind's code first), so states compare,
hash, encode and fingerprint exactly as they did.

A :class:`Record` subclass names its kind's ``code`` in the class statement and its fields by
annotation; a field with a default is optional and trailing, and an instance built without it
is the shorter tuple (``Step(1)`` is ``(code, 1)``, ``Step()`` is ``(code,)``)::

    class Trigger(Record, code=3):
        __slots__ = ()
        topic: int = -1

The code never leaves the class: the model builds ``Trigger(t)`` and matches ``Trigger(t)``.
Instances are rebuilt by the explorer's codecs and the C packer with ``tuple.__new__`` (the
class keeps ``__slots__ = ()`` and ``_fields``, so both take it for a NamedTuple), and pickled
through :func:`_rebuild`. A plain tuple of the same items (an older checkpoint, a mutant that
writes ``(code, ...)``) is read as its record with :meth:`RecordFamily.view`.

>>> class Ping(Record, code=7):
...     __slots__ = ()
...     target: int
...     tries: int = 0
>>> Ping(2), Ping(2, 1), Ping(2) == (7, 2), Ping(2).tries
(Ping(target=2), Ping(target=2, tries=1), True, 0)
>>> match Ping(2):
...     case Ping(target, tries): print(target, tries)
2 0
"""

from __future__ import annotations

import inspect
from operator import itemgetter
from typing import Any, ClassVar

from explorer.speedups import install_fast_new

try:  # the C descriptor NamedTuple's fields use: reads an item as fast as indexing does
    from collections import _tuplegetter  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - another Python implementation

    def _tuplegetter(i: int, doc: str) -> Any:
        return property(itemgetter(i), doc=doc)


__all__ = ["Record", "RecordFamily"]


def _rebuild(cls: type, items: tuple) -> Any:
    """An instance of record class ``cls`` holding ``items`` (pickle's way back)."""
    return tuple.__new__(cls, items)


def _optional(i: int, default: Any) -> property:
    return property(lambda self: self[i] if len(self) > i else default)


_ABSENT: Any = object()


def field_types(cls: type, names: list[str]) -> tuple[str, ...]:
    """The annotations of ``cls``'s fields ``names``, as written (a module with
    ``from __future__ import annotations`` keeps them as strings)."""
    ann = inspect.get_annotations(cls)
    return tuple(
        a if isinstance(a, str) else getattr(a, "__name__", repr(a)) for a in (ann[n] for n in names)
    )


def check_slots(cls: type) -> None:
    """A record class must say ``__slots__ = ()`` (as ``NamedTuple`` does for its classes): an
    instance is then its tuple, which the C packer and the codecs require, and no metaclass is
    needed to add it (a metaclass would make every ``isinstance``, so every ``match``, slower)."""
    if cls.__dict__.get("__slots__", None) != ():
        raise TypeError(f"record class {cls.__name__} must set __slots__ = ()")


def declare_fields(cls: type, code: int) -> list[str]:
    """Register record class ``cls`` (of any record family: ``Record``, the controller's events
    and continuations) under ``code``: check its ``__slots__``, set ``cls.code``, set
    ``cls._field_types`` from its annotations unless the class declares its own, and return the
    names of its fields (its annotations not starting with ``_``), in order.

    >>> class Probe:
    ...     __slots__ = ()
    ...     broker: int
    >>> declare_fields(Probe, 99), Probe.code, Probe._field_types
    (['broker'], 99, ('int',))
    """
    check_slots(cls)
    cls.code = code  # type: ignore[attr-defined]
    names = [n for n in inspect.get_annotations(cls) if not n.startswith("_")]
    if "_field_types" not in cls.__dict__:
        cls._field_types = field_types(cls, names)  # type: ignore[attr-defined]
    return names


def make_new(cls: type, params: str, body: list[str]) -> Any:
    """A ``__new__`` for record class ``cls`` with the signature ``(cls, params)`` and ``body``
    (which may use ``_C``, the class's code, ``_tnew``, ``tuple.__new__``, and ``_ABSENT``),
    compiled like ``NamedTuple``'s: a call costs no more than building the tuple."""
    ns = {"_C": cls.code, "_tnew": tuple.__new__, "_ABSENT": _ABSENT}  # type: ignore[attr-defined]
    src = f"def __new__(cls{', ' if params else ''}{params}):\n" + "".join(f"    {line}\n" for line in body)
    exec(src, ns)
    fn = ns["__new__"]
    fn.__qualname__ = f"{cls.__qualname__}.__new__"
    return fn


def _flat_new(cls: type, names: list[str], required: int) -> Any:
    """``__new__`` of a flat record: ``(code, *fields)``, the optional ones only when given;
    a record without fields is one shared instance."""
    if not names:
        single: Any = tuple.__new__(cls, (cls.code,))  # type: ignore[attr-defined]
        return lambda cls: single
    req, opt = names[:required], names[required:]
    params = ", ".join([*req, *(f"{n}=_ABSENT" for n in opt)])
    body = []
    for i, n in enumerate(opt):
        body.append(
            f"if {n} is _ABSENT: return _tnew(cls, (_C, {''.join(f'{x}, ' for x in [*req, *opt[:i]])}))"
        )
    body.append(f"return _tnew(cls, (_C, {''.join(f'{x}, ' for x in names)}))")
    return make_new(cls, params, body)


class Record(tuple):
    """A named record that is the tuple ``(code, field, ...)`` (see the module docstring)."""

    __slots__ = ()
    #: the kind's code: item 0 of every instance (class attribute only)
    code: ClassVar[int] = -1
    #: the names of the items, the code's first (what the codecs look for)
    _fields: ClassVar[tuple[str, ...]] = ("code",)
    _required: ClassVar[int] = 0
    #: each field's annotation as written (what it holds: ``model/controller/ids.py``)
    _field_types: ClassVar[tuple[str, ...]] = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, code: int | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if code is None:
            return
        names = declare_fields(cls, code)
        required = 0
        for i, name in enumerate(names, 1):
            if name in cls.__dict__:
                setattr(cls, name, _optional(i, cls.__dict__[name]))
            else:
                if required < i - 1:
                    raise TypeError(
                        f"{cls.__name__}: field {name} without a default after one with a default"
                    )
                required = i
                setattr(cls, name, _tuplegetter(i, f"{cls.__name__}.{name}"))
        cls._fields = ("code", *names)
        cls._required = required
        cls.__match_args__ = tuple(names)  # type: ignore[misc]
        cls.__new__ = _flat_new(cls, names, required)  # type: ignore[method-assign]
        # and a call builds it in C (explorer._speedups; the same tuple, without the frame)
        if names:
            install_fast_new(cls, prefix=(code,), fields=tuple(names), required=required, omit_optional=True)
        else:
            install_fast_new(cls, fields=(), omit_optional=True, single=cls.__new__(cls))

    def __new__(cls, *fields: Any) -> Any:
        """(Each record class gets its own, with its fields' names: ``_flat_new``.)"""
        raise TypeError(f"{cls.__name__} names no code: it is not a record class")

    def __reduce__(self) -> tuple:
        return (_rebuild, (type(self), tuple(self)))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}("
            + ", ".join(f"{k}={v!r}" for k, v in zip(self._fields[1:], self[1:]))
            + ")"
        )

    __str__ = __repr__


class RecordFamily:
    """The record classes of one family (the steps, the continuations), by code.

    >>> class A(Record, code=0):
    ...     __slots__ = ()
    >>> fam = RecordFamily([A])
    >>> type(fam.view((0,))) is A and fam.view(A()) == (0,)
    True
    """

    __slots__ = ("by_code", "classes")

    def __init__(self, classes: list[type[Record]]) -> None:
        self.classes = frozenset(classes)
        self.by_code: dict[int, type[Record]] = {}
        for c in classes:
            if c.code in self.by_code:
                raise ValueError(f"{c.__name__} and {self.by_code[c.code].__name__} share code {c.code}")
            self.by_code[c.code] = c

    def view(self, t: tuple) -> Any:
        """``t`` as its record: itself when it is one, else its items in the class its code names."""
        if type(t) in self.classes:
            return t
        return tuple.__new__(self.by_code[t[0]], t)
