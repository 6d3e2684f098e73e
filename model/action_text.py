"""``says`` and ``says_if``: an action's log line written once, as a template over its fields.

Every model's actions are ``NamedTuple`` records whose ``str`` reads like a log line; most of
those lines only put field values into fixed text, or pick one of two texts by a flag, so they
are written as a class decorator:

>>> from typing import NamedTuple
>>> @says("broker {broker}: crashes")
... class Crash(NamedTuple):
...     broker: int
>>> str(Crash(2))
'broker 2: crashes'
>>> @says_if("acquired", "op {op}: lock.tryLock() = {acquired}", "op {op}: lock busy ({acquired})")
... class TryLock(NamedTuple):
...     op: int
...     acquired: bool
>>> str(TryLock(1, True)), str(TryLock(1, False))
('op 1: lock.tryLock() = true', 'op 1: lock busy (false)')

Field values are shown as Java prints them (:func:`java`) unless the decorator is given
another ``shown``. A line that needs more than that keeps its own ``__str__``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["java", "says", "says_if", "thread_arrow"]

T = TypeVar("T", bound=type)


def java(value: object) -> str:
    """``value`` as Java's ``String.valueOf`` shows it: ``true``/``false``, ``null``, a tuple
    as a ``List`` (``[1, 2]``); anything else as ``str``.

    >>> java(True), java(None), java((1, 2)), java(3)
    ('true', 'null', '[1, 2]', '3')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, tuple):
        return str(list(value))
    return str(value)


def says_if(field: str, yes: str, no: str, shown: Callable[[Any], str] = java) -> Callable[[T], T]:
    """Class decorator: the record's ``str`` is the template ``yes`` when its ``field`` is true,
    else ``no``, each formatted with the record's fields (``{name}``: the field ``shown``)."""

    def decorate(cls: T) -> T:
        def __str__(self: Any) -> str:
            template = yes if getattr(self, field) else no
            return template.format_map({k: shown(v) for k, v in zip(self._fields, self)})

        __str__.__qualname__ = f"{cls.__qualname__}.__str__"
        cls.__str__ = __str__  # type: ignore[method-assign, assignment]
        return cls

    return decorate


def says(template: str, shown: Callable[[Any], str] = java) -> Callable[[T], T]:
    """Class decorator: the record's ``str`` is ``template`` formatted with its fields
    (``{name}``: the field ``shown``)."""
    return says_if("_fields", template, template, shown)


def thread_arrow(action: object) -> tuple[str, str, str]:
    """The report's sequence-diagram arrow of a step of a model of threads sharing memory: a
    self-arrow on the lifeline of the thread that takes it, named by its log line's head (the
    text before the first ``": "``, without an ``" at N ms"`` time stamp), labelled by the rest.

    >>> thread_arrow("reaper at 3 ms: DelayQueue yields wheel 0 bucket 1")
    ('reaper', 'reaper', 'at 3 ms: DelayQueue yields wheel 0 bucket 1')
    >>> thread_arrow("caller: lock.lock()"), thread_arrow("no head here")
    (('caller', 'caller', 'lock.lock()'), ('no head here', 'no head here', 'no head here'))
    """
    text = str(action)
    head, sep, rest = text.partition(": ")
    if not sep:
        return (text, text, text)
    actor, at, when = head.partition(" at ")
    return (actor, actor, f"at {when}: {rest}" if at else rest)
