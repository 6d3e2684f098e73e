"""What a simple-timing-wheel step does: its effects, declared by its action classes
(:func:`explorer.core.effects`), so that the properties (``invariants/simple_timing_wheel.py``)
select steps by what they do, never by their class: a new step that submits a task, or returns
from a graceful stop, is checked by every property about such steps without an edit there.

>>> from model.simple_timing_wheel.actions import Shutdown, Sleep, Submit
>>> does(Submit(0, 3), Effect.FIRES_TASK), does(Sleep(), Effect.FIRES_TASK), does(Shutdown(), Effect.STOP_RETURNS)
(True, False, True)
"""

from __future__ import annotations

import enum
from typing import Any

from explorer.core import effects_of

__all__ = ["Effect", "does"]


class Effect(enum.Enum):
    """One thing a step of the demo does. The value is its description; :attr:`fields` the
    fields an action declaring it must have (checked when it is declared)."""

    FIRES_TASK = "the trigger submits a due task to the executor: the task fires"
    STOP_RETURNS = "the caller's stop(false) returns"

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields of every action with this effect (``task``: the task fired, ``tick``: the
        tick it fires at).

        >>> Effect.FIRES_TASK.fields
        ('task', 'tick')
        """
        return {"FIRES_TASK": ("task", "tick")}.get(self.name, ())


def does(a: Any, effect: Effect) -> bool:
    """Whether step ``a`` has ``effect`` (its class declares it).

    >>> from model.simple_timing_wheel.actions import Submit
    >>> does(Submit(1, 2), Effect.STOP_RETURNS)
    False
    """
    return effect in effects_of(a)
