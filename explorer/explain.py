"""Why a violation fails, in the model's words: each property's ``explain`` (or, for a property
without one, the state fields its predicate read), run on the failing state or step.

A search reports a counterexample as a trace of rendered states (:class:`~explorer.core.TraceStep`);
:func:`explain_violations` replays each trace on the system (by action text and fingerprint, as
``replay`` does) to recover the real failing state, then asks :func:`explain_failure`. A
property's own ``explain`` (:attr:`explorer.core.Property.explain`) names the entities at
fault; without one, :func:`fields_read` runs the predicate on a recording view of the state
and lists the fields it read, with their values (the last ones read decided the verdict).

Example
-------
>>> from typing import NamedTuple
>>> from explorer.core import always
>>> class Tank(NamedTuple):
...     level: int
...     limit: int
...     name: str
>>> p = always("within", lambda s: s.level <= s.limit, "the level stays within the limit")
>>> explain_failure(p, (Tank(7, 5, "t1"),))
['the predicate read: level = 7, limit = 5']
>>> q = always("within", p.check, p.doc, explain=lambda s: f"tank {s.name} holds {s.level} over {s.limit}")
>>> explain_failure(q, (Tank(7, 5, "t1"),))
['tank t1 holds 7 over 5']
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from typing import Any

from explorer.core import Property, PropertyKind, Violation, describe
from explorer.encoding import fingerprint

__all__ = ["explain_end", "explain_failure", "explain_violations", "fields_read", "lines_of", "replay_path"]

#: how many of the fields read the generic explanation shows (the last ones: they decided)
MAX_FIELDS = 12
#: how long one value may be in a generic explanation before it is cut
MAX_VALUE = 160


def lines_of(got: Any) -> list[str]:
    """An ``explain`` function's answer as a list of non-empty lines (a string may hold several).

    >>> lines_of("a\\nb"), lines_of(["x", "", "y"]), lines_of(None)
    (['a', 'b'], ['x', 'y'], [])
    """
    if got is None:
        return []
    items = [got] if isinstance(got, str) else list(got)
    return [line for item in items for line in str(item).splitlines() if line.strip()]


def explain_failure(prop: Property, args: tuple[Any, ...]) -> list[str]:
    """Why ``prop`` fails on ``args`` (``(s,)``, or ``(s, action, s2)`` for a transition): its
    ``explain``, or, without one (or when it raises or says nothing), the fields its predicate
    read (:func:`fields_read`).

    >>> from explorer.core import transition
    >>> p = transition("up", lambda s, a, t: t >= s, "never decreases")
    >>> explain_failure(p, (3, "dec", 2))
    ['the step: dec', 'the predicate read: before = 3, after = 2']
    """
    if prop.explain is not None:
        try:
            got = lines_of(prop.explain(*args))
        except Exception as e:  # an explanation must never hide the violation it explains
            got = [f"(its explanation failed: {type(e).__name__}: {e})"]
        if got:
            return got
    if prop.kind is PropertyKind.DEADLOCK:
        return ["no action is enabled in the last state, and the system does not call it terminal"]
    return fields_read(prop.check, args)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 3] + "..."


class _Reads:
    """The fields a predicate read: path -> value, in the order first read."""

    def __init__(self) -> None:
        self.paths: dict[str, Any] = {}
        self.proxies: dict[int, Any] = {}  # id(value) -> its view (identity kept: ``s.zk is t.zk``)
        self.keep: list[Any] = []  # the values viewed, alive while their ids are keys

    def read(self, path: str, value: Any) -> None:
        if path not in self.paths:
            self.paths[path] = value

    def view(self, value: Any, path: str) -> Any:
        """``value`` as the predicate is to see it: a record or tuple as a recording view, a leaf as
        itself (recorded as read)."""
        if _words_itself(value) or (not isinstance(value, tuple) and not _is_dataclass(value)):
            self.read(path, value)
            return value
        got = self.proxies.get(id(value))
        if got is not None:
            return got
        if isinstance(value, tuple):
            got = _record_view(type(value))(value) if hasattr(value, "_fields") else _TupleView(value)
            got.__dict__.update(_reads=self, _path=path)
        else:
            got = _ObjectView(value)
            object.__setattr__(got, "_reads", self)
            object.__setattr__(got, "_path", path)
        self.proxies[id(value)] = got
        self.keep.append(value)
        return got


def _join(path: str, name: str) -> str:
    """A field's (or, ``[i]``, an element's) path below ``path``; ``before:`` and ``after:`` head
    the two states of a step.

    >>> _join("", "zk"), _join("zk", "epoch"), _join("nodes", "[1]"), _join("after:", "zk")
    ('zk', 'zk.epoch', 'nodes[1]', 'after: zk')
    """
    if not path:
        return name
    if path.endswith(":"):
        return f"{path} {name}"
    return f"{path}{name}" if name.startswith("[") else f"{path}.{name}"


def _is_dataclass(v: Any) -> bool:
    return dataclasses.is_dataclass(v) and not isinstance(v, type)


def _words_itself(v: Any) -> bool:
    """A record whose class words it (defines ``__str__``): read whole, as the model says it."""
    return (
        ((isinstance(v, tuple) and hasattr(v, "_fields")) or _is_dataclass(v))
        and type(v).__str__ is not object.__str__
        and type(v).__str__ is not tuple.__str__
    )


class _TupleView(tuple):  # type: ignore[type-arg]
    """A plain tuple that records what is read of it: an element by index or iteration, the
    whole tuple when it is compared, hashed, measured or searched."""

    def _whole(self) -> None:
        self.__dict__["_reads"].read(self.__dict__["_path"], tuple(tuple.__iter__(self)))

    def __getitem__(self, i: Any) -> Any:
        got = tuple.__getitem__(self, i)
        if isinstance(i, slice):
            self._whole()
            return got
        n = tuple.__len__(self)
        return self.__dict__["_reads"].view(got, _join(self.__dict__["_path"], f"[{i % n if n else i}]"))

    def __iter__(self) -> Any:
        items = tuple.__iter__(self)
        if all(not isinstance(x, tuple) and not _is_dataclass(x) for x in tuple.__iter__(self)):
            self._whole()  # a row of leaves read in turn: shown whole
            return items
        return (self[i] for i in range(tuple.__len__(self)))

    def __len__(self) -> int:
        self._whole()
        return tuple.__len__(self)

    def __contains__(self, x: object) -> bool:
        self._whole()
        return tuple.__contains__(self, x)

    def __eq__(self, other: object) -> bool:
        self._whole()
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self._whole()
        return tuple.__ne__(self, other)

    def __hash__(self) -> int:
        self._whole()
        return tuple.__hash__(self)

    def __bool__(self) -> bool:
        self._whole()
        return tuple.__len__(self) > 0


_VIEWS: dict[type, type] = {}


def _record_view(cls: type) -> type:
    """A recording subclass of the NamedTuple class ``cls``: each field read is recorded (and
    a record or tuple field handed on as a view), ``isinstance`` and ``match`` still see ``cls``."""
    got = _VIEWS.get(cls)
    if got is not None:
        return got

    def field(i: int, name: str) -> property:
        def get(self: Any) -> Any:
            d = self.__dict__
            return d["_reads"].view(tuple.__getitem__(self, i), _join(d["_path"], name))

        return property(get)

    ns: dict[str, Any] = {f: field(i, f) for i, f in enumerate(cls._fields)}  # type: ignore[attr-defined]

    def whole(self: Any) -> None:
        d = self.__dict__
        d["_reads"].read(d["_path"] or "state", tuple.__new__(cls, tuple.__iter__(self)))

    def eq(self: Any, other: object) -> bool:
        whole(self)
        return tuple.__eq__(self, other)

    def ne(self: Any, other: object) -> bool:
        whole(self)
        return tuple.__ne__(self, other)

    def hash_(self: Any) -> int:
        whole(self)
        return tuple.__hash__(self)

    def getitem(self: Any, i: Any) -> Any:
        if isinstance(i, slice):
            whole(self)
            return tuple.__getitem__(self, i)
        return getattr(self, cls._fields[i])  # type: ignore[attr-defined]

    ns.update(
        __eq__=eq,
        __ne__=ne,
        __hash__=hash_,
        __getitem__=getitem,
        __iter__=lambda self: (self[i] for i in range(len(cls._fields))),  # type: ignore[attr-defined]
        __new__=lambda sub, v: tuple.__new__(sub, tuple.__iter__(v)),
    )
    got = type(cls.__name__, (cls,), ns)
    _VIEWS[cls] = got
    return got


class _ObjectView:
    """A dataclass state seen through its attributes (each read recorded)."""

    def __getattr__(self, name: str) -> Any:
        target = object.__getattribute__(self, "_target")
        reads, path = object.__getattribute__(self, "_reads"), object.__getattribute__(self, "_path")
        return reads.view(getattr(target, name), _join(path, name))

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)

    def __eq__(self, other: object) -> bool:
        target = object.__getattribute__(self, "_target")
        object.__getattribute__(self, "_reads").read(
            object.__getattribute__(self, "_path") or "state", target
        )
        return bool(
            target == (object.__getattribute__(other, "_target") if isinstance(other, _ObjectView) else other)
        )

    def __hash__(self) -> int:
        return hash(object.__getattribute__(self, "_target"))


def _show(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return value.name
    return _cut(describe(value))


def fields_read(check: Any, args: tuple[Any, ...]) -> list[str]:
    """The state fields ``check`` read on ``args`` (a state, or a step ``(s, action, s2)``: its
    two states' fields as ``before`` and ``after``), with their values, for a property that
    does not explain itself. The last :data:`MAX_FIELDS` read are shown: the predicate returns
    at the first entity at fault, so they are the ones that decided. Where the predicate cannot
    be watched (it gives another verdict on the recording view, or raises there), the state
    itself is shown.

    >>> from typing import NamedTuple
    >>> class S(NamedTuple):
    ...     xs: tuple[int, ...]
    ...     n: int
    >>> fields_read(lambda s: all(x < s.n for x in s.xs), (S((1, 5), 3),))
    ['the predicate read: xs = (1, 5), n = 3']
    >>> fields_read(lambda s, a, t: t.n >= s.n, (S((), 3), "drop", S((), 2)))
    ['the step: drop', 'the predicate read: after: n = 2, before: n = 3']
    """
    step = len(args) == 3
    reads = _Reads()
    if step:
        viewed: tuple[Any, ...] = (reads.view(args[0], "before:"), args[1], reads.view(args[2], "after:"))
    else:
        viewed = (reads.view(args[0], ""),)
    head = [f"the step: {args[1]}"] if step else []
    try:
        same = bool(check(*viewed)) == bool(check(*args))
    except Exception:
        same = False
    if not same or not reads.paths:
        if step:
            return [*head, f"before: {_cut(describe(args[0]))}", f"after: {_cut(describe(args[2]))}"]
        return [f"the state: {_cut(describe(args[0]))}"]
    items = list(reads.paths.items())
    shown = items[-MAX_FIELDS:]
    words = ", ".join(f"{p.rstrip(':')} = {_show(v)}" for p, v in shown)
    more = f" (and {len(items) - len(shown)} read before)" if len(items) > len(shown) else ""
    return [*head, f"the predicate read: {words}{more}"]


def replay_path(system: Any, steps: Iterable[Any]) -> tuple[list[Any], list[Any]] | None:
    """The states and actions of a counterexample's steps (each a :class:`~explorer.core.TraceStep`
    or its dict), re-executed on ``system`` by action text and fingerprint; None where it does
    not replay.

    >>> class Two:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("inc", s + 1)] if s < 2 else []
    >>> from explorer.search.traces import trace_steps
    >>> replay_path(Two(), trace_steps([0, 1, 2], ["inc", "inc"]))
    ([0, 1, 2], ['inc', 'inc'])
    """
    steps = [s if isinstance(s, dict) else dataclasses.asdict(s) for s in steps]
    if not steps:
        return None
    fp0 = steps[0]["fingerprint"]
    current = next((s for s in system.init_states() if f"{fingerprint(s):016x}" == fp0), None)
    if current is None:
        return None
    states, actions = [current], []
    for st in steps[1:]:
        got = next(
            (
                (a, t)
                for a, t in system.successors(current)
                if str(a) == st["action"] and f"{fingerprint(t):016x}" == st["fingerprint"]
            ),
            None,
        )
        if got is None:
            return None
        actions.append(got[0])
        current = got[1]
        states.append(current)
    return states, actions


def _explain_one(system: Any, prop: Property | None, v: Violation) -> list[str]:
    if v.kind == PropertyKind.REACHABLE.value and not v.trace:
        return [f"no state the search reached is a witness ({v.doc})"]
    if prop is None or not v.trace:
        return []
    path = replay_path(system, v.trace)
    if path is None:
        return ["(the counterexample did not replay here, so it is not explained)"]
    states, actions = path
    if prop.kind is PropertyKind.EVENTUALLY:
        at = states[v.loop_start] if v.loop_start is not None else states[-1]
        if prop.explain is not None:
            got = explain_failure(prop, (at,))
            return [
                ("where the behaviour cycles: " if v.loop_start is not None else "where it ends: ") + got[0],
                *got[1:],
            ]
        return []
    return explain_end(prop, states, actions)


def explain_end(prop: Property | None, states: list[Any], actions: list[Any]) -> list[str]:
    """Why a path that ends in a failure of ``prop`` fails there (None: a deadlock): its last
    step for a ``transition`` property, its last state otherwise.

    >>> from explorer.core import transition
    >>> p = transition("up", lambda s, a, t: t >= s, "never decreases", explain=lambda s, a, t: f"{s} -> {t}")
    >>> explain_end(p, [0, 3, 2], ["inc", "dec"]), explain_end(None, [0], [])[0][:20]
    (['3 -> 2'], 'no action is enabled')
    """
    if prop is None:
        prop = Property("deadlock", PropertyKind.DEADLOCK, lambda s: True, "")
    if prop.kind is PropertyKind.TRANSITION and actions:
        return explain_failure(prop, (states[-2], actions[-1], states[-1]))
    return explain_failure(prop, (states[-1],))


def explain_violations(system: Any, props: Iterable[Property], violations: list[Violation]) -> None:
    """Give each violation without one its explanation (in place): its trace replayed on
    ``system``, then its property's :func:`explain_failure` on the failing state or step; an
    unreached witness says so. A property not among ``props`` (the deadlock one) is explained
    as a deadlock.

    >>> from explorer.core import always
    >>> from explorer.search.traces import trace_steps
    >>> class Up:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("inc", s + 1)]
    >>> p = always("small", lambda s: s < 2, "stays small", explain=lambda s: f"the counter is {s}")
    >>> v = Violation.of(p, "small does not hold", trace_steps([0, 1, 2], ["inc", "inc"]))
    >>> explain_violations(Up(), [p], [v]); v.explanation
    ['the counter is 2']
    """
    by_name = {p.name: p for p in props}
    for v in violations:
        if v.explanation:
            continue
        prop = by_name.get(v.property)
        if prop is None and v.kind == PropertyKind.DEADLOCK.value:
            prop = Property(v.property, PropertyKind.DEADLOCK, lambda s: True, v.doc)
        try:
            v.explanation = _explain_one(system, prop, v)
        except Exception as e:  # replaying calls the model: never lose the result over it
            v.explanation = [f"(no explanation: {type(e).__name__}: {e})"]
