"""Is a model's symmetry sound? A probe the release runs before it trusts a reduced search.

``--reduce symmetry`` explores one state per orbit of the permutations a system declares
(``symmetries()``). That is sound only when the model really is symmetric under them: each
permutation maps the successors of a state to the successors of its image, the properties it
is asked to keep give the same verdict on a state and its image, and the canonical state of an
orbit does not depend on which member the search met first. A renaming bug breaks one of those
and the reduced search silently explores less, so a property that fails in the full model may
hold in the reduced one: no verdict shows it. The release therefore runs this probe on the
first states of every entry that declares ``reduce = "symmetry"``, and an entry whose probe
fails does not pass (requirement ``reduce_sound``).

Example (a toy whose declared "symmetry" swaps two counters that do not behave alike):

>>> from explorer.core import always
>>> class Two:
...     def init_states(self): return [(0, 0)]
...     def successors(self, s):
...         return [("a", (s[0] + 1, s[1]))] if s[0] < 2 else [("b", (s[0], s[1] + 1))] if s[1] < 1 else []
...     def symmetries(self): return [lambda s: (s[1], s[0])]
>>> symmetry_problem(Two(), [always("p", lambda s: True, "")])
'the successors of state #0 (breadth-first) do not commute with permutation 1 of 1'
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from explorer.core import Property, PropertyKind
from explorer.search.symmetry import Canonicaliser

__all__ = ["symmetry_problem"]


def _sample(system: Any, states: int) -> list[Any]:
    """The first ``states`` reachable states, breadth-first."""
    init = list(system.init_states())
    seen = set(init)
    order = list(init)
    queue = deque(init)
    while queue and len(order) < states:
        for _, t in system.successors(queue.popleft()):
            if t not in seen:
                seen.add(t)
                order.append(t)
                queue.append(t)
    return order[:states]


def _verdict(p: Property, *args: Any) -> tuple[bool, ...]:
    """What a search sees of ``p`` on a state or a step: applies, check, trigger."""
    out = [p.applies(*args) if p.applies is not None else True]
    if p.kind is PropertyKind.TRANSITION and p.guard is not None and not p.guard(*args):
        out.append(True)  # where its guard is false the engines skip it: it holds
    else:
        out.append(bool(p.check(*args)))
    if p.trigger is not None:
        out.append(bool(p.trigger(*args)))
    return tuple(out)


def symmetry_problem(system: Any, properties: Iterable[Property], states: int = 300) -> str | None:
    """Why ``system``'s declared symmetry is unsound for ``properties``, judged on its first
    ``states`` states (breadth-first), or None when no sampled state shows a problem: for each
    declared permutation and sampled state, the images of its successors are the successors of
    its image, every property gives the same verdict on the state (or step) and its image, and
    both have one canonical state."""
    perms: list[Callable[[Any], Any]] = list(system.symmetries())
    if not perms:
        return None
    props = [p for p in properties if p.kind is not PropertyKind.DEADLOCK]  # no check to compare
    steps = [p for p in props if p.kind is PropertyKind.TRANSITION]
    others = [p for p in props if p.kind is not PropertyKind.TRANSITION]
    canon = Canonicaliser(perms)
    where = "permutation {} of " + str(len(perms))
    for i, s in enumerate(_sample(system, states)):
        succ = list(system.successors(s))
        for k, g in enumerate(perms, 1):
            gs = g(s)
            gsucc = list(system.successors(gs))
            if {g(t) for _, t in succ} != {t for _, t in gsucc}:
                return f"the successors of state #{i} (breadth-first) do not commute with {where.format(k)}"
            for p in others:
                if _verdict(p, s) != _verdict(p, gs):
                    return f"{p.name} judges state #{i} and its image under {where.format(k)} differently"
            for p in steps:
                mine = {(g(t), _verdict(p, s, a, t)) for a, t in succ}
                theirs = {(t, _verdict(p, gs, a, t)) for a, t in gsucc}
                if mine != theirs:
                    return f"{p.name} judges the steps of state #{i} and of its image under {where.format(k)} differently"
            if canon(s) != canon(gs):
                return f"state #{i} and its image under {where.format(k)} have different canonical states"
    return None
