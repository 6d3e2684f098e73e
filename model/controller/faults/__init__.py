"""Bounded faults added to the controller model as plug-ins: one module of this package per
fault, holding its action (a ``NamedTuple`` whose ``str`` reads like a log line) and the rule
that enables it, registered with :func:`fault`. Nothing else is edited to add one: the
system runs every registered rule whose budget (a ``ControllerConfig`` key) is above 0, after
its own actions; the action kinds, the fault kinds, the fair kinds and the budget spent so far
(``State.spent``) are derived from the registry.

A rule is a generator ``enabled(system, s)`` of ``(action, successor)`` pairs, written against
the actors' methods as the built-in rules are; it does not count its budget (the registry
counts each step it yields in ``State.spent`` and stops offering the rule once the budget is
spent). The registration declares what the fault's steps do (``effects=``, members of
``model.controller.effects.Effect``), so every property, guard and coverage table that selects
steps with such an effect sees the fault's steps too.

>>> from model.controller import ControllerConfig
>>> active_rules(ControllerConfig())  # every fault's budget is 0 by default
()
>>> all(r.kind == r.action.__name__ and hasattr(ControllerConfig, r.budget) for r in rules())
True
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from explorer.core import effects as declare_effects
from explorer.core import effects_of
from model.controller.state import State

__all__ = ["FaultRule", "active_rules", "fault", "rules", "spent", "successors"]

Enabled = Callable[[Any, State], Iterator[tuple[Any, State]]]


@dataclass(frozen=True)
class FaultRule:
    """One registered fault: its action class, the config key bounding how often it fires,
    whether it is weakly fair in the liveness properties (faults are not, as a rule), and the
    generator of its enabled steps. What its steps do is its action class's effects
    (:attr:`effects`)."""

    action: type
    budget: str
    enabled: Enabled
    fair: bool = False

    @property
    def kind(self) -> str:
        """The action kind (its class name), as ``action_kinds()`` lists it."""
        return self.action.__name__

    @property
    def effects(self) -> frozenset[Any]:
        """What the fault's steps do: the effects its action class declares."""
        return effects_of(self.action)


_REGISTRY: dict[str, FaultRule] = {}


def fault(
    action: type, budget: str, *, fair: bool = False, effects: tuple[Any, ...] = ()
) -> Callable[[Enabled], Enabled]:
    """Register the decorated generator as the rule enabling ``action``, bounded by the config
    key ``budget``; ``effects`` (``model.controller.effects.Effect`` members) are declared on
    ``action`` (:func:`explorer.core.effects`): what each of its steps does."""

    def register(enabled: Enabled) -> Enabled:
        if effects:
            declare_effects(*effects)(action)
        rule = FaultRule(action, budget, enabled, fair)
        old = _REGISTRY.get(rule.kind)
        if old is not None and old.enabled is not enabled:
            raise ValueError(f"fault {rule.kind} registered twice")
        _REGISTRY[rule.kind] = rule
        return enabled

    return register


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


def rules() -> tuple[FaultRule, ...]:
    """Every registered fault, by kind name (the order of ``State.spent``)."""
    return tuple(_REGISTRY[k] for k in sorted(_REGISTRY))


def active_rules(cfg: Any) -> tuple[FaultRule, ...]:
    """The faults a configuration enables (budget above 0), in registry order."""
    return tuple(r for r in rules() if getattr(cfg, r.budget) > 0)


def spent(s: State, rule: FaultRule) -> int:
    """How often ``rule`` has fired on the path to ``s``."""
    i = rules().index(rule)
    return s.spent[i] if i < len(s.spent) else 0


def successors(system: Any, s: State, active: tuple[FaultRule, ...]) -> Iterator[tuple[Any, State]]:
    """The steps of the ``active`` faults whose budget is not spent, each counted in
    ``State.spent``."""
    every = rules()
    for rule in active:
        i = every.index(rule)
        used = s.spent[i] if i < len(s.spent) else 0
        if used >= getattr(system.cfg, rule.budget):
            continue
        for a, t in rule.enabled(system, s):
            counts = list(t.spent) + [0] * (len(every) - len(t.spent))
            counts[i] = used + 1
            yield a, t._replace(spent=tuple(counts))


_discover()
