"""Where partial-order reduction could reduce at all: a census of sampled states.

An ample (stubborn, persistent) set ``T`` smaller than all enabled actions of a state ``s``
must satisfy two conditions that can be checked at ``s`` itself, whatever footprints a model
declares:

- **C1 at length one**: every enabled action outside ``T`` is independent of every action in
  ``T`` at ``s`` (the two orders lead to the same state, neither disables the other). So ``T``
  is a union of connected components of the *actual dependence graph* of ``s``: the enabled
  actions, with an edge between two that do not commute at ``s`` or of which one disables
  the other.
- **C2**: every action of ``T`` is invisible: it changes nothing an undecided property reads
  (:attr:`explorer.core.Property.reads`, through the system's ``por_footprints()``).

A state where no component consists of invisible actions only, or where the graph is
connected, is fully expanded by *every* sound ample-set reduction, not only by the one
``--reduce por`` implements. The census classifies sampled states accordingly and also
asks the real chooser (:class:`explorer.search.reduction.AmpleSets`) whether it reduces
there, which separates "no reduction exists here" from "the declaration is too coarse to
find it". The components are only a necessary condition: a state counted as a
``candidate`` may still have no sound ample set (later actions outside it may conflict).

Example
-------
>>> from tests.toys import Grid  # two independent counters, each counting to 2
>>> c = census(Grid(2), [], bfs_states(Grid(2), 100))
>>> c.states, c.multi, c.connected
(9, 4, 0)
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from explorer.core import Property
from explorer.search.reduction import AmpleSets, reason_off

__all__ = ["Census", "bfs_states", "census", "dependence_components", "optimistic_states", "walk_states"]


@dataclass
class Census:
    """The census of sampled states (see the module docstring).

    ``states`` sampled; ``multi`` with two or more enabled actions; of those: ``connected``
    (the actual dependence graph is connected), ``all_visible`` (not connected, but every
    component holds a visible action), ``candidate`` (some component smaller than all
    consists of invisible actions only: a sound reduction is not ruled out) and
    ``reduced`` (the declared footprints found a proper ample set). ``transitions`` and
    ``invisible`` count enabled actions; ``invisible_kinds`` / ``visible_kinds`` by kind;
    ``visibility`` is False when the system declares no footprints (then every action
    counts as visible, as the reduction itself treats it). ``off`` is why ``--reduce por``
    would not run with these properties at all (``eventually`` properties, no footprints):
    then nothing counts as ``reduced``.
    """

    states: int = 0
    multi: int = 0
    connected: int = 0
    all_visible: int = 0
    candidate: int = 0
    reduced: int = 0
    transitions: int = 0
    invisible: int = 0
    visibility: bool = True
    off: str | None = None
    invisible_kinds: Counter = field(default_factory=Counter)
    visible_kinds: Counter = field(default_factory=Counter)
    candidate_kinds: Counter = field(default_factory=Counter)

    def lines(self) -> list[str]:
        """The census as readable lines.

        >>> Census(states=3, multi=2, connected=1, all_visible=1).lines()[1]
        'with 2+ enabled actions: 2; connected dependence graph: 1; every component visible: 1; candidates: 0; reduced by the declaration: 0'
        """
        vis = "" if self.visibility else " (no footprints declared: every action counts as visible)"
        out = [
            f"states sampled: {self.states}; enabled actions: {self.transitions}, "
            f"invisible: {self.invisible}{vis}",
            f"with 2+ enabled actions: {self.multi}; connected dependence graph: {self.connected}; "
            f"every component visible: {self.all_visible}; candidates: {self.candidate}; "
            f"reduced by the declaration: {self.reduced}",
        ]
        if self.off:
            out.append(f"reduce por would be off for this run: {self.off}")
        if self.visible_kinds:
            out.append(
                "visible by kind: " + ", ".join(f"{k} {n}" for k, n in self.visible_kinds.most_common())
            )
        if self.invisible_kinds:
            out.append(
                "invisible by kind: " + ", ".join(f"{k} {n}" for k, n in self.invisible_kinds.most_common())
            )
        if self.candidate_kinds:
            out.append(
                "smallest invisible components: "
                + ", ".join(f"{'+'.join(k)} {n}" for k, n in self.candidate_kinds.most_common(8))
            )
        return out


def dependence_components(system: Any, succ: list[tuple[Any, Any]]) -> list[list[int]]:
    """The connected components (indices into ``succ``) of the actual dependence graph of the
    state whose enabled ``(action, next_state)`` pairs are ``succ``.

    >>> class Two:
    ...     def successors(self, s):
    ...         return [(("inc", i), s[:i] + (s[i] + 1,) + s[i + 1:]) for i in (0, 1) if s[i] < 2]
    >>> dependence_components(Two(), list(Two().successors((0, 0))))
    [[0], [1]]
    """
    n = len(succ)
    after = [dict(system.successors(t)) for _, t in succ]
    parent = list(range(n))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i in range(n):
        for j in range(i + 1, n):
            u = after[i].get(succ[j][0])
            v = after[j].get(succ[i][0])
            if u is None or v is None or u != v:
                parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values())


def census(system: Any, properties: Iterable[Property], states: Iterable[Any]) -> Census:
    """Classify ``states`` of ``system`` for partial-order reduction under ``properties``.

    See the module docstring for the example and the meaning of each count.
    """
    props = list(properties)
    out = Census(visibility=hasattr(system, "por_footprints"), off=reason_off(system, props))
    ample = AmpleSets(system, props) if out.visibility else None
    for s in states:
        succ = list(system.successors(s))
        out.states += 1
        out.transitions += len(succ)
        visible = []
        for a, t in succ:
            v = True if ample is None else ample._visible(a, ample.fp.changed_locs(s, t))
            visible.append(v)
            kind = type(a).__name__
            if v:
                out.visible_kinds[kind] += 1
            else:
                out.invisible += 1
                out.invisible_kinds[kind] += 1
        if len(succ) < 2:
            continue
        out.multi += 1
        comps = dependence_components(system, succ)
        if len(comps) == 1:
            out.connected += 1
            continue
        quiet = [c for c in comps if not any(visible[i] for i in c)]
        if not quiet:
            out.all_visible += 1
            continue
        out.candidate += 1
        best = min(quiet, key=len)
        out.candidate_kinds[tuple(sorted(type(succ[i][0]).__name__ for i in best))] += 1
        if ample is not None and out.off is None and ample._ample(s, succ) is not None:
            out.reduced += 1
    return out


def bfs_states(system: Any, limit: int) -> list[Any]:
    """The first ``limit`` distinct states of ``system`` in breadth-first order.

    >>> class Cycle:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("inc", (s + 1) % 4)]
    >>> bfs_states(Cycle(), 10)
    [0, 1, 2, 3]
    """
    seen: dict[Any, None] = {}
    for s in system.init_states():
        if len(seen) < limit:
            seen.setdefault(s)
    queue = list(seen)
    i = 0
    while i < len(queue) and len(seen) < limit:
        for _, t in system.successors(queue[i]):
            if t not in seen:
                seen[t] = None
                queue.append(t)
                if len(seen) >= limit:
                    break
        i += 1
    return list(seen)


def walk_states(system: Any, walks: int, seed: int, max_steps: int = 10_000) -> Iterator[Any]:
    """The states along ``walks`` seeded random walks from the first initial state (each to a
    state without successors, or ``max_steps``): they reach the deep levels a breadth-first
    prefix does not.

    >>> class Line:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("inc", s + 1)] if s < 3 else []
    >>> list(walk_states(Line(), 1, seed=1))
    [0, 1, 2, 3]
    """
    rng = random.Random(seed)
    first = next(iter(system.init_states()))
    for _ in range(walks):
        s = first
        for _ in range(max_steps):
            yield s
            succ = list(system.successors(s))
            if not succ:
                break
            s = rng.choice(succ)[1]


def optimistic_states(system: Any, limit: int = 10_000_000) -> tuple[int, bool]:
    """An indication, not a bound, of what a perfect dependency declaration could remove when no
    property makes a step visible: a breadth-first search that follows at each state only the
    smallest component of its actual dependence graph (C1 checked at length one only, so it is
    *unsound*: it may miss states a sound reduction must reach), with the cycle proviso of
    ``--reduce por``. Returns the states it reached and whether it completed within ``limit``.

    >>> class Two:  # two independent counters, each counting to 2
    ...     def init_states(self): return [(0, 0)]
    ...     def successors(self, s):
    ...         return [(("inc", i), s[:i] + (s[i] + 1,) + s[i + 1:]) for i in (0, 1) if s[i] < 2]
    >>> optimistic_states(Two())
    (5, True)
    """
    seen = set(system.init_states())
    level = list(seen)
    while level and len(seen) < limit:
        nxt: list[Any] = []
        here: set[Any] = set()
        for s in level:
            succ = list(system.successors(s))
            chosen = succ
            if len(succ) > 1:
                comps = dependence_components(system, succ)
                if len(comps) > 1:
                    chosen = [succ[i] for i in min(comps, key=len)]
                    if any(t in seen and t not in here for _, t in chosen):
                        chosen = succ  # the cycle proviso
            for _, t in chosen:
                if t not in seen:
                    seen.add(t)
                    here.add(t)
                    nxt.append(t)
        level = nxt
    return len(seen), not level
