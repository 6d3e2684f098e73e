"""Incremental property checking (issue 56): an ``always`` property is evaluated on a new state
only when a part of the state it reads differs from the state's parent.

States are immutable records with structural sharing: a step rebuilds the records on the path
to what it changed and keeps every other one, so ``child.zk is parent.zk`` tells, for the price
of a pointer comparison, that ZooKeeper's tree is the parent's. A :class:`Slicer` names the
parts ("slices") of a ``NamedTuple`` state two levels deep and says, as a bit mask, which of
them are not the parent's objects:

* a field holding a record (``zk``): one slice per field of that record (``zk.epoch``);
* a field holding a tuple of records of one class (``nodes``): one slice per field of the
  class, over every element (``nodes[].ctx``: some broker's context is another object);
* any other field (``chans``, ``acked``): one slice, itself.

A property declares the slices its ``check`` reads in :attr:`explorer.core.Property.slices` (a
whole field's name stands for all of its slices); the search then skips it on a child none of
whose declared slices changed: the check reads the same objects, so gives the parent's verdict,
which held (a parent's violation was already recorded, and only the first counts). A property
that declares no slices (or names one the state does not have) is evaluated on every state, so
any property works. Identity is conservative: an equal value rebuilt as a new object counts as
changed, which costs an evaluation, never a verdict.

The mask is computed by the C accelerator ``explorer._incremental`` when it was built (it is
optional: ``setup.py``; without it, or with ``KAFKA_MC_PURE_PYTHON=1``, the same mask in pure
Python). ``tests/test_incremental.py`` checks that every declared property reads nothing
outside its slices (tracing its reads on reachable states) and that the search's counts and
first violations are the full checking's.

>>> from typing import NamedTuple
>>> class Node(NamedTuple):
...     up: bool
...     epoch: int
>>> class S(NamedTuple):
...     nodes: tuple[Node, ...]
...     count: int
>>> s = S((Node(True, 1), Node(True, 1)), 0)
>>> sl = Slicer.of(s)
>>> t = s._replace(nodes=(s.nodes[0], s.nodes[1]._replace(epoch=2)))
>>> sl.names(sl.changed(s, t)), sl.names(sl.changed(s, s._replace(count=1)))
(['nodes[].epoch'], ['count'])
>>> sl.mask(["nodes[].up"]) & sl.changed(s, t)
0
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

__all__ = ["ACTIVE", "ALWAYS_BIT", "MAX_SLICES", "Slicer", "slice_of_path"]

#: slices a state may have (one bit each of a 64-bit mask; the top bit is :data:`ALWAYS_BIT`)
MAX_SLICES = 63
#: set in every mask :meth:`Slicer.changed` returns, and in the mask of a property without
#: slices: such a property is evaluated on every state
ALWAYS_BIT = 1 << MAX_SLICES

_LEAF, _RECORD, _ROWS = 0, 1, 2


def _load() -> ModuleType | None:
    if os.environ.get("KAFKA_MC_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        # not ``from explorer import _incremental``: compiled by mypyc, that leaves the local unbound
        return importlib.import_module("explorer._incremental")
    except ImportError:
        return None


_C = _load()
#: "C" when the accelerator computes the masks, else "python"
ACTIVE = "C" if _C is not None else "python"


def _is_record(v: Any) -> bool:
    return isinstance(v, tuple) and hasattr(type(v), "_fields")


class Slicer:
    """The slices of one ``NamedTuple`` state class, laid out from a sample state, and the mask
    of those that differ (by identity) between two states.

    >>> from typing import NamedTuple
    >>> class Z(NamedTuple):
    ...     epoch: int
    ...     owner: int
    >>> class S(NamedTuple):
    ...     zk: Z
    ...     log: tuple[int, ...]
    >>> sl = Slicer.of(S(Z(1, 0), ()))
    >>> sl.slices
    ('zk.epoch', 'zk.owner', 'log')
    >>> s = S(Z(1, 0), ())
    >>> sl.names(sl.changed(s, s._replace(zk=s.zk._replace(owner=2))))
    ['zk.owner']
    """

    def __init__(self, cls: type, layout: list[tuple[int, int, tuple[int, ...]]], slices: list[str]):
        self.cls = cls
        #: per field of the state: (kind, its bit or -1, the bits of its sub-fields)
        self.layout = layout
        #: the slice names, in bit order
        self.slices = tuple(slices)
        self._bit = {name: 1 << i for i, name in enumerate(slices)}
        # a whole field's name stands for all of its slices
        fields: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
        for f, (kind, bit, subs) in zip(fields, layout, strict=True):
            self._bit[f] = (1 << bit) if kind == _LEAF else sum(1 << b for b in subs)
        self._all = [(1 << bit) if kind == _LEAF else sum(1 << b for b in subs) for kind, bit, subs in layout]
        self._subbits = [tuple(1 << b for b in subs) for _, _, subs in layout]
        self._code = bytes(x for kind, bit, subs in layout for x in (kind, max(bit, 0), len(subs), *subs))
        self._c: Callable[[Any, Any, bytes], int] | None = None if _C is None else _C.changed_mask

    @classmethod
    def of(cls, sample: Any) -> Slicer | None:
        """The slicer of ``sample``'s class, or None when it is not a ``NamedTuple`` (or would
        have more than :data:`MAX_SLICES` slices even with every field whole).

        >>> Slicer.of((1, 2)) is None, Slicer.of(3) is None
        (True, True)
        """
        if not _is_record(sample):
            return None
        fields: tuple[str, ...] = type(sample)._fields
        layout: list[tuple[int, int, tuple[int, ...]]] = []
        slices: list[str] = []
        room = MAX_SLICES - len(fields)  # each field needs at least one bit
        if room < 0:
            return None
        for f, v in zip(fields, sample, strict=True):
            sub: tuple[str, ...] = ()
            kind = _LEAF
            if _is_record(v):
                kind, sub = _RECORD, tuple(f"{f}.{g}" for g in type(v)._fields)
            elif isinstance(v, tuple) and v and _is_record(v[0]) and all(type(x) is type(v[0]) for x in v):
                kind, sub = _ROWS, tuple(f"{f}[].{g}" for g in type(v[0])._fields)
            if kind != _LEAF and len(sub) - 1 <= room:
                room -= len(sub) - 1
                layout.append((kind, -1, tuple(range(len(slices), len(slices) + len(sub)))))
                slices += sub
            else:
                layout.append((_LEAF, len(slices), ()))
                slices.append(f)
        return cls(type(sample), layout, slices)

    def mask(self, names: Iterable[str] | None) -> int:
        """The mask of the slices ``names`` (a field's name: all of its slices); every bit
        (:data:`ALWAYS_BIT` included) when ``names`` is None or names a slice this state lacks."""
        if names is None:
            return -1
        m = 0
        for n in names:
            b = self._bit.get(n)
            if b is None:
                return -1
            m |= b
        return m

    def masker(self) -> Callable[[Any, Any], int]:
        """:meth:`changed` as one callable for the hot loop: the C accelerator's ``Masker`` (no
        Python frame; it remembers its last step, so a second question about the same ``(s, t)``
        costs a comparison), or this bound method without it.

        >>> from typing import NamedTuple
        >>> class S(NamedTuple):
        ...     a: int
        ...     b: int
        >>> sl = Slicer.of(S(0, 0)); changed = sl.masker(); s = S(0, 0)
        >>> t = s._replace(b=1)
        >>> sl.names(changed(s, t)), changed(s, t) == sl.changed_py(s, t), sl.names(changed(t, t))
        (['b'], True, [])
        """
        make = getattr(_C, "Masker", None) if self._c is not None else None
        return self.changed if make is None else make(self._code)  # type: ignore[no-any-return]

    def names(self, mask: int) -> list[str]:
        """The slices of ``mask``, in bit order (:data:`ALWAYS_BIT` left out)."""
        return [n for i, n in enumerate(self.slices) if mask >> i & 1]

    def changed(self, s: Any, t: Any) -> int:
        """The slices of ``t`` that are not ``s``'s objects, with :data:`ALWAYS_BIT` set (``s`` and
        ``t`` are of this slicer's class)."""
        if self._c is not None:
            return self._c(s, t, self._code)
        return self.changed_py(s, t)

    def changed_py(self, s: Any, t: Any) -> int:
        """:meth:`changed` in pure Python (the C accelerator's reference)."""
        m = ALWAYS_BIT
        if type(s) is not type(t) or len(s) != len(t):
            return m | sum(self._all)
        for (kind, _, _), whole, bits, x, y in zip(self.layout, self._all, self._subbits, s, t, strict=True):
            if x is y:
                continue
            if kind == _LEAF:
                m |= whole
            elif kind == _RECORD:
                if (
                    type(x) is not type(y)
                    or not isinstance(x, tuple)
                    or len(x) != len(bits)
                    or len(y) != len(bits)
                ):
                    m |= whole
                    continue
                for b, u, v in zip(bits, x, y, strict=True):
                    if u is not v:
                        m |= b
            else:
                if not isinstance(x, tuple) or not isinstance(y, tuple) or len(x) != len(y):
                    m |= whole
                    continue
                for r, q in zip(x, y, strict=True):
                    if r is q:
                        continue
                    if (
                        type(r) is not type(q)
                        or not isinstance(r, tuple)
                        or len(r) != len(bits)
                        or len(q) != len(bits)
                    ):
                        m |= whole
                        break
                    for b, u, v in zip(bits, r, q, strict=True):
                        if u is not v:
                            m |= b
        return m


def slice_of_path(path: str) -> str:
    """The slice a read recorded by :func:`explorer.explain.fields_read`'s view falls in, at
    the granularity of :class:`Slicer` (an element's index becomes ``[]``; below two levels the
    path is cut; a path through a field the slicer keeps whole is cut by the caller).

    >>> slice_of_path("nodes[1].ctx.live"), slice_of_path("zk.parts[0]"), slice_of_path("acked[2]")
    ('nodes[].ctx', 'zk.parts', 'acked')
    >>> slice_of_path("state"), slice_of_path("nodes")
    ('state', 'nodes')
    """
    head, _, rest = path.partition(".")
    field = head.split("[", 1)[0]
    if "[" in head:
        if not rest:
            return field
        return f"{field}[].{rest.split('.', 1)[0].split('[', 1)[0]}"
    if not rest:
        return field
    return f"{field}.{rest.split('.', 1)[0].split('[', 1)[0]}"


def slices_read(check: Callable[[Any], Any], s: Any, slicer: Slicer) -> set[str]:
    """The slices of ``s`` that ``check(s)`` reads, traced through the recording view of
    :func:`explorer.explain.fields_read` (a read of the whole state: ``"state"``); what a
    property's :attr:`~explorer.core.Property.slices` must cover.

    >>> from typing import NamedTuple
    >>> class S(NamedTuple):
    ...     a: tuple[int, ...]
    ...     b: int
    >>> s = S((1, 2), 3)
    >>> sorted(slices_read(lambda s: s.a[0] < s.b, s, Slicer.of(s)))
    ['a', 'b']
    """
    from explorer.explain import _Reads  # the recording view (a private helper of explain)

    reads = _Reads()
    check(reads.view(s, ""))
    known = set(slicer.slices)
    got = set()
    for path in reads.paths:
        name = slice_of_path(path)
        if name not in known and name != "state":
            name = name.split(".", 1)[0].split("[", 1)[0]  # a field the slicer keeps whole
        got.add(name)
    return got
