"""What a purgatory step does: its effects, declared by its action classes
(:func:`explorer.core.effects`), so that the properties (``invariants/purgatory.py``) select
steps by what they do, never by their class: a new step that ends a traversal of a key's
watchers, or purges a key, is checked by every property about such steps without an edit there.

>>> from model.purgatory.actions import CheckAndCompleteDone, PurgeKey
>>> does(CheckAndCompleteDone("fetch", 0, 1), Effect.ENDS_WATCHER_TRAVERSAL), does(PurgeKey(0, 1), Effect.PURGES_KEY)
(True, True)
"""

from __future__ import annotations

import enum
from typing import Any

from explorer.core import effects_of

__all__ = ["Effect", "does"]


class Effect(enum.Enum):
    """One thing a step of the purgatory does. The value is its description; :attr:`fields`
    the fields an action declaring it must have (checked when it is declared)."""

    ENDS_WATCHER_TRAVERSAL = "a thread's checkAndComplete finds no next watcher of a key: the traversal ends"
    PURGES_KEY = "the purge removes a key's completed operations from its watchers"

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields of every action with this effect (``who``: the thread, ``key``: the key
        whose watchers were traversed or purged).

        >>> Effect.ENDS_WATCHER_TRAVERSAL.fields, Effect.PURGES_KEY.fields
        (('who', 'key'), ('key',))
        """
        return {"ENDS_WATCHER_TRAVERSAL": ("who", "key"), "PURGES_KEY": ("key",)}[self.name]


def does(a: Any, effect: Effect) -> bool:
    """Whether step ``a`` has ``effect`` (its class declares it).

    >>> from model.purgatory.actions import PurgeKey
    >>> does(PurgeKey(0, 1), Effect.ENDS_WATCHER_TRAVERSAL)
    False
    """
    return effect in effects_of(a)
