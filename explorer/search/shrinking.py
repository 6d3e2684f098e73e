"""The primitives every counterexample shrinker uses: replaying action texts to a violation,
delta debugging and the step minimiser. :mod:`explorer.search.shrink_hypothesis` is
Hypothesis as a shrinker (and the whole step pipeline for a fixed system, which the
``hypothesis`` engine runs on a failure it found); :mod:`explorer.shrink` (``kafka-mc
shrink``) adds the configuration, the trace files and the CLI on top.

A trace is replayed by action *text* (``str(action)``): each step must be enabled in turn,
and the replay is cut at the first state or step that violates the property.

Example
-------
>>> from explorer.core import always
>>> class Line:
...     def init_states(self): return [0]
...     def successors(self, s): return [("up", s + 1), ("down", s - 1)]
>>> checker = Checker(Line(), [always("below_2", lambda s: s < 2, "")], "below_2")
>>> [str(a) for a in replay_actions(Line(), checker, ["up", "down", "up", "up", "up"])[1]]  # cut
['up', 'down', 'up', 'up']
>>> minimise_steps(Line(), checker, ["up", "down", "up", "up", "up"])
['up', 'up']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from explorer.core import Property
from explorer.encoding import fingerprint

__all__ = [
    "SHRINKABLE",
    "Checker",
    "ShrinkError",
    "config_size",
    "ddmin",
    "minimise_steps",
    "replay_actions",
]

#: the property kinds a trace can be shrunk for
SHRINKABLE = ("always", "transition", "deadlock")


class ShrinkError(Exception):
    """A trace or target that cannot be shrunk: one line saying why."""


class Checker:
    """Decides whether a state / step violates the target property (``"deadlock"`` for the
    built-in deadlock check)."""

    def __init__(self, system: Any, props: list[Property], name: str):
        self.system = system
        self.name = name
        self.props = props
        if name == "deadlock":
            self.kind = "deadlock"
            self.prop: Property | None = None
        else:
            prop = next((p for p in props if p.name == name), None)
            if prop is None:
                raise ShrinkError(f"property {name!r} is not defined by this model")
            if prop.kind.value not in SHRINKABLE:
                raise ShrinkError(
                    f"property {name!r} is {prop.kind.value}: only {', '.join(SHRINKABLE)} shrink"
                )
            self.kind, self.prop = prop.kind.value, prop
        term = getattr(system, "is_terminal", None)
        self.is_terminal: Callable[[Any], bool] = term if term is not None else (lambda s: False)

    def state_bad(self, s: Any, succ: list[tuple[Any, Any]] | None) -> bool:
        if self.kind == "always":
            assert self.prop is not None
            return not self.prop.check(s)
        if self.kind == "deadlock":
            return succ is not None and not succ and not self.is_terminal(s)
        return False

    def step_bad(self, s: Any, a: Any, t: Any) -> bool:
        if self.kind == "transition":
            assert self.prop is not None
            return not self.prop.check(s, a, t)
        return False


def replay_actions(
    system: Any, checker: Checker, actions: Sequence[str], init_fp: str | None = None
) -> tuple[list[Any], list[Any]] | None:
    """Replay action texts from an initial state; return (states, actions) cut at the
    first violation of the checker's property, or None (a step not enabled, or no
    violation). The initial state with fingerprint ``init_fp`` is tried first, then
    the others in order."""
    inits = list(system.init_states())
    if init_fp is not None:
        inits.sort(key=lambda s: f"{fingerprint(s):016x}" != init_fp)  # stable: the named one first
    for s0 in inits:
        got = _replay_from(system, checker, s0, actions)
        if got is not None:
            return got
    return None


def _replay_from(
    system: Any, checker: Checker, s: Any, actions: Sequence[str]
) -> tuple[list[Any], list[Any]] | None:
    states: list[Any] = [s]
    acts: list[Any] = []
    need_succ = checker.kind == "deadlock"
    succ = list(system.successors(s))
    if checker.state_bad(s, succ if need_succ else None):
        return states, acts
    for text in actions:
        same = [(a, t) for a, t in succ if str(a) == text]
        if not same:
            return None
        # prefer a same-text successor that shows the violation
        pick = next(
            (
                (a, t)
                for a, t in same
                if checker.step_bad(s, a, t) or (checker.kind == "always" and checker.state_bad(t, None))
            ),
            same[0],
        )
        a, t = pick
        states.append(t)
        acts.append(a)
        if checker.step_bad(s, a, t):
            return states, acts
        s = t
        succ = list(system.successors(s))
        if checker.state_bad(s, succ if need_succ else None):
            return states, acts
    return None


def ddmin(items: list[Any], test: Callable[[list[Any]], list[Any] | None]) -> list[Any]:
    """Delta debugging: a 1-minimal sublist of ``items`` for which ``test`` succeeds.

    ``test(candidate)`` returns None when the candidate does not fail, else the
    (possibly shorter) list to continue from. ``test(items)`` must succeed.

    >>> ddmin(list(range(10)), lambda xs: xs if {3, 7} <= set(xs) else None)
    [3, 7]
    """
    n = 2
    while len(items) >= 2:
        chunk = -(-len(items) // n)
        reduced = False
        for i in range(0, len(items), chunk):
            candidate = items[:i] + items[i + chunk :]
            got = test(candidate)
            if got is not None and len(got) < len(items):
                items = got
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if n >= len(items):
                break
            n = min(len(items), 2 * n)
    if len(items) == 1:
        got = test([])
        if got is not None:
            items = got
    return items


def config_size(values: dict[str, Any]) -> int:
    """The size of a configuration: its ints plus its lists' lengths (bools count nothing).

    >>> config_size({"brokers": 3, "delays": [1, 5], "flag": True})
    5
    """
    return sum(
        (v if isinstance(v, int) and not isinstance(v, bool) else len(v) if isinstance(v, list) else 0)
        for v in values.values()
    )


def minimise_steps(
    system: Any,
    checker: Checker,
    actions: list[str],
    init_fp: str | None = None,
    kinds: Sequence[Any] = (),
    faults: set[str] | frozenset[str] = frozenset(),
    deadline: float | None = None,
) -> list[str]:
    """A 1-minimal sub-sequence of ``actions`` that still replays to a violation: fault steps
    (``kinds[i] in faults``) are tried for removal first, then ddmin. ``deadline`` is a
    ``time.monotonic()`` after which no candidate is tried.

    >>> from explorer.core import always
    >>> class Up:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("up", s + 1), ("stay", s)]
    >>> c = Checker(Up(), [always("below_2", lambda s: s < 2, "")], "below_2")
    >>> minimise_steps(Up(), c, ["stay", "up", "stay", "up"])
    ['up', 'up']
    """

    def test(candidate: list[str]) -> list[str] | None:
        if deadline is not None and time.monotonic() > deadline:
            return None
        r = replay_actions(system, checker, candidate, init_fp)
        return None if r is None else [str(a) for a in r[1]]

    kinds = list(kinds)
    i = len(actions) - 1
    while i >= 0 and faults:
        if i < len(kinds) and kinds[i] in faults:
            r = test(actions[:i] + actions[i + 1 :])
            if r is not None:
                actions = r
                kinds = kinds[:i] + kinds[i + 1 :]
        i -= 1
    return ddmin(actions, test)
