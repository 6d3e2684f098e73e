"""Shrinking a liveness counterexample: a lasso (a prefix, then a loop repeated forever).

An ``eventually`` / leads-to counterexample (:mod:`explorer.search.liveness`) is a lasso: the
prefix runs from an initial state to the loop's first state (``loop_start``) and the loop's steps
return to that state; or, without a loop, a behaviour that ends (its last state has no successor).
:func:`shrink_lasso` shortens it by delta debugging (:func:`explorer.search.shrinking.ddmin`),
first over the prefix's steps with the loop kept, then over the loop's with the prefix kept, until
neither shrinks. A candidate is replayed by action text from the initial state and accepted only
when it is still a counterexample as ``kafka-mc replay`` checks one, whole
(:func:`explorer.search.liveness.replay_lasso`): the loop closes on the state it starts from, Q holds
in none of its states, P holds at a step after which Q never holds, and the loop is weakly fair
(every fair action enabled in all of its states is taken in it). A shorter prefix must still reach
a state the (possibly different) loop returns to; a shorter loop must still be fair, so a step that
weak fairness demands is never dropped.

The configuration is not shrunk and no bounded search looks for a shorter lasso: a smaller
configuration's graph has other loops, and the ``bfs`` lasso is already built from shortest paths
(:func:`explorer.search.liveness.check_leads_to`). The result is 1-minimal in each part: dropping
any single prefix step or loop step breaks it.

Example
-------
>>> from explorer.core import leads_to
>>> class Spin:  # 0 -> 1 -> 2, then 2 detours through 3 (or spins); the goal 9 is never reached
...     def init_states(self): return [0]
...     def successors(self, s):
...         return {0: [("a", 1)], 1: [("b", 2)], 2: [("spin", 2), ("out", 3)], 3: [("in", 2)]}[s]
>>> p = leads_to("nine", lambda s: s == 0, lambda s: s == 9, "", fairness=[])
>>> got = shrink_lasso(Spin(), p, ["a", "b", "out", "in", "spin", "out", "in"], 4)
>>> got.actions, got.loop_start  # 7 steps, the loop from step 4 -> 4, the loop from step 2
(['a', 'b', 'out', 'in'], 2)
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from explorer.core import Property
from explorer.encoding import fingerprint
from explorer.search.liveness import replay_lasso
from explorer.search.shrinking import ShrinkError, ddmin

__all__ = ["Lasso", "lasso_holds", "shrink_lasso"]


@dataclass
class Lasso:
    """A replayed lasso: ``states`` (the initial state first), the action texts between them,
    ``loop_start`` (the step index of the loop's first state; None: the behaviour ends), and the
    lines :func:`replay_lasso` gave for it."""

    states: list[Any]
    actions: list[str]
    loop_start: int | None
    lines: list[str]


def _fp(s: Any) -> str:
    return f"{fingerprint(s):016x}"


def _replay(system: Any, actions: Sequence[str], init_fp: str | None) -> list[Any] | None:
    """The states of ``actions`` replayed by text from the initial state named by ``init_fp``
    (else the first); each step the first successor with the action's text. None: a step is not
    enabled."""
    inits = list(system.init_states())
    if init_fp is not None:
        inits.sort(key=lambda s: _fp(s) != init_fp)
    if not inits:
        return None
    states = [inits[0]]
    for text in actions:
        nxt = next((t for a, t in system.successors(states[-1]) if str(a) == text), None)
        if nxt is None:
            return None
        states.append(nxt)
    return states


def lasso_holds(
    system: Any, prop: Property, prefix: Sequence[str], loop: Sequence[str], init_fp: str | None = None
) -> Lasso | None:
    """The lasso of ``prefix`` then ``loop`` (action texts; an empty ``loop``: the behaviour
    ends after the prefix) when it replays and is a counterexample of ``prop`` checked whole as
    ``kafka-mc replay`` checks one (:func:`replay_lasso`), else None.

    >>> from explorer.core import leads_to
    >>> class Ring:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("next", (s + 1) % 2)]
    >>> p = leads_to("two", lambda s: s == 0, lambda s: s == 2, "", fairness=[])
    >>> lasso_holds(Ring(), p, [], ["next", "next"]).loop_start, lasso_holds(Ring(), p, [], ["next"])
    (0, None)
    """
    states = _replay(system, [*prefix, *loop], init_fp)
    if states is None:
        return None
    loop_start = len(prefix) if loop else None
    steps = [{"action": None, "fingerprint": _fp(states[0])}]
    steps += [{"action": a, "fingerprint": _fp(s)} for a, s in zip([*prefix, *loop], states[1:], strict=True)]
    ok, lines = replay_lasso(system, prop, states, steps, loop_start)
    return Lasso(states, [*prefix, *loop], loop_start, lines) if ok else None


def shrink_lasso(
    system: Any,
    prop: Property,
    actions: Sequence[str],
    loop_start: int | None,
    init_fp: str | None = None,
    max_seconds: float | None = None,
) -> Lasso:
    """A 1-minimal lasso of ``prop`` from the counterexample whose action texts are ``actions``
    (``loop_start``: the step index of its loop's first state, None: the behaviour ends).
    Raises ShrinkError when the given lasso is not a counterexample (it does not replay, the
    loop does not close or is not fair, Q holds in it, or P never holds before it).

    >>> from explorer.core import leads_to
    >>> class Ring:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("next", (s + 1) % 2)]
    >>> p = leads_to("two", lambda s: s == 0, lambda s: s == 2, "", fairness=[])
    >>> got = shrink_lasso(Ring(), p, ["next", "next", "next", "next"], 2)
    >>> got.actions, got.loop_start
    (['next', 'next'], 0)
    """
    acts = [str(a) for a in actions]
    cut = len(acts) if loop_start is None else loop_start
    prefix, loop = acts[:cut], acts[cut:]
    best = lasso_holds(system, prop, prefix, loop, init_fp)
    if best is None:
        raise ShrinkError(
            f"property {prop.name!r}: the lasso does not replay to a violation "
            "(kafka-mc replay checks it whole and says why)"
        )
    deadline = None if max_seconds is None else time.monotonic() + max_seconds

    def in_time() -> bool:
        return deadline is None or time.monotonic() < deadline

    def prefix_ok(cand: list[str], loop: list[str]) -> list[str] | None:
        return cand if in_time() and lasso_holds(system, prop, cand, loop, init_fp) else None

    def loop_ok(prefix: list[str], cand: list[str]) -> list[str] | None:
        good = bool(cand) and in_time() and lasso_holds(system, prop, prefix, cand, init_fp) is not None
        return cand if good else None

    while in_time():
        before = len(prefix) + len(loop)
        if prefix:
            prefix = ddmin(prefix, functools.partial(prefix_ok, loop=list(loop)))
        if loop:
            loop = ddmin(loop, functools.partial(loop_ok, list(prefix)))
        if len(prefix) + len(loop) == before:
            break
    got = lasso_holds(system, prop, prefix, loop, init_fp)
    assert got is not None  # every accepted candidate was checked whole
    return got
