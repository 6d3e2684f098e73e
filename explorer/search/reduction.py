"""Partial-order reduction for the exhaustive search (``--reduce por``): ample sets computed
as stubborn sets over the system's declared action footprints, with a breadth-first cycle
proviso. ``docs/reduction.md`` gives the conditions and why the reduced search reaches a
violation of every ``always``, ``transition`` and ``reachable`` property and every deadlock
the full search reaches.

A system supports the reduction when it has ``por_footprints()``, returning an object with

- ``class_of(action)``: the action's class (one actor's steps of one kind);
- ``footprint(s, action, t)``: the enabled action's footprint, with a ``conflicts`` test;
- ``dependent_classes(footprint)``: every class some action of which may depend on it;
- ``enabling_classes(s, cls)``: for a class with no enabled action in ``s``, classes one of
  which must act before it can be (empty when it never can);
- ``changed_locs(s, t)``: the locations (tuples whose first element is their kind) a step
  changed;
- optionally ``changes_any(s, t, kinds)``: whether the step changed a location of one of
  ``kinds`` (a frozenset), which decides visibility before any footprint is computed (else
  the kinds of ``changed_locs`` do);
- ``guard_disabled(name)``: action kinds never enabled where guard ``name`` holds.

Properties say what they read in :attr:`explorer.core.Property.reads`; a property that does
not is read-everything, which makes every step visible (and so turns the reduction off).

Example
-------
>>> from tests.toys import Grid  # two independent counters that declare no footprints
>>> reason_off(Grid(2), [])
'the system declares no action footprints (por_footprints)'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from explorer.core import Property, PropertyKind

__all__ = ["REDUCTIONS", "AmpleSets", "por_setup", "reason_off"]

#: the ``--reduce`` choices
REDUCTIONS = ("none", "por", "symmetry")


def reason_off(system: Any, properties: Iterable[Property]) -> str | None:
    """Why partial-order reduction cannot run on ``system`` with ``properties`` (None: it can).

    ``eventually`` properties are checked on the explored graph's cycles, which the reduction
    does not preserve, so their presence turns it off for the run (the result says so).

    >>> reason_off(object(), [])
    'the system declares no action footprints (por_footprints)'
    """
    if not hasattr(system, "por_footprints"):
        return "the system declares no action footprints (por_footprints)"
    live = [p.name for p in properties if p.kind is PropertyKind.EVENTUALLY]
    if live:
        return f"eventually properties ({', '.join(live)}) need the full graph"
    return None


class AmpleSets:
    """Chooses, for each expanded state, the successors the reduced search follows.

    ``settled`` names properties already decided (violated or witnessed): they no longer
    make any step visible. Counters: ``reduced`` states expanded with a proper ample set,
    ``full`` states fully expanded; of those, ``single`` with one enabled action or one class,
    ``visible`` with every enabled action visible (so no proper ample set exists, C2),
    ``proviso`` because of the cycle proviso (the rest: no smaller stubborn set was found).
    """

    def __init__(self, system: Any, properties: Iterable[Property]) -> None:
        self.fp = system.por_footprints()
        self._changes_any: Callable[[Any, Any, frozenset[str]], bool] | None = getattr(
            self.fp, "changes_any", None
        )
        self._reads_of: dict[str, frozenset[str]] = {}
        self.props = [p for p in properties if p.kind is not PropertyKind.EVENTUALLY]
        self.settled: set[str] = set()
        self._level = -1
        self._this_level: set[Any] = set()
        self._from = 0  # how much of the engine's level_new is in _this_level
        self.reduced = self.full = self.proviso = self.single = self.visible = 0
        self._decided = 0
        self._refresh()

    def _refresh(self) -> None:
        """The union of what the undecided properties read (``None``: everything)."""
        plain: set[str] = set()
        everything = False
        guarded: dict[str, set[str]] = {}
        for p in self.props:
            if p.name in self.settled:
                continue
            if p.reads is None:
                everything = True
                break
            guards = [r[1:] for r in p.reads if r.startswith("@")]
            kinds = {r for r in p.reads if not r.startswith("@")}
            if guards:
                for g in guards:
                    guarded.setdefault(g, set()).update(kinds)
            else:
                plain.update(kinds)
        self._plain: frozenset[str] | None = None if everything else frozenset(plain)
        self._guarded = [(frozenset(k), self.fp.guard_disabled(g)) for g, k in guarded.items()]
        self._reads_of = {}

    def decided(self, found: dict[str, Any], witnesses: dict[str, Any]) -> None:
        """Settle the properties violated (``found``) or witnessed so far (cheap when none is new)."""
        if len(found) + len(witnesses) != self._decided:
            self._decided = len(found) + len(witnesses)
            self.settle([*found, *witnesses])

    def settle(self, names: Iterable[str]) -> None:
        """Properties ``names`` are decided: they no longer constrain the reduction."""
        new = set(names) - self.settled
        if new:
            self.settled |= new
            self._refresh()

    def _visible(self, a: Any, changed: set[tuple]) -> bool:
        """The step (``action``, changing locations ``changed``) may change the verdict of an
        undecided property."""
        return self._visible_kinds(a, {loc[0] for loc in changed})

    def _visible_kinds(self, a: Any, kinds: AbstractSet[str]) -> bool:
        """The step (``action``, changing locations of the kinds ``kinds``) may change the
        verdict of an undecided property."""
        if self._plain is None:
            return True
        if kinds & self._plain:
            return True
        kind = type(a).__name__
        return any(kinds & read and kind not in exempt for read, exempt in self._guarded)

    def _step_visible(self, s: Any, a: Any, t: Any) -> bool:
        """Whether the enabled step ``a`` from ``s`` to ``t`` is visible (as :meth:`_visible`),
        through the footprints' ``changes_any`` where they have it."""
        if self._plain is None:
            return True
        if self._changes_any is None:
            return self._visible(a, self.fp.changed_locs(s, t))
        kind = type(a).__name__
        read = self._reads_of.get(kind)
        if read is None:
            # what the undecided properties read, for a step of this kind: the plain reads and
            # the guarded ones whose guard does not exempt the kind
            got = set(self._plain)
            for kinds, exempt in self._guarded:
                if kind not in exempt:
                    got |= kinds
            read = self._reads_of[kind] = frozenset(got)
        return bool(read) and self._changes_any(s, t, read)

    def successors(
        self,
        s: Any,
        succ: list[tuple[Any, Any]],
        depth: int,
        visited: Any,
        level_new: list[Any] | None = None,
    ) -> list[tuple[Any, Any]]:
        """The successors of ``s`` (at BFS ``depth``) the reduced search follows: an ample subset
        of ``succ``, or all of them. ``visited`` holds every state seen so far; ``level_new``,
        when the engine keeps it, the states first seen in this level so far, in order (the
        next frontier): then they are hashed into a set only when the proviso needs it,
        instead of every successor on every call."""
        if depth != self._level:
            self._level = depth
            self._this_level = set()
            self._from = 0
        chosen = self._ample(s, succ)
        if chosen is not None:
            # cycle proviso: every ample successor must be new or found in this level (one
            # level deeper than s); a successor at s's level or above closes a possible cycle
            seen_here = self._this_level
            if level_new is not None and self._from < len(level_new):
                seen_here.update(level_new[self._from :])
                self._from = len(level_new)
            for _, t in chosen:
                if t in visited and t not in seen_here:
                    self.proviso += 1
                    chosen = None
                    break
        if chosen is None:
            self.full += 1
            chosen = succ
        else:
            self.reduced += 1
        if level_new is None:
            for _, t in chosen:
                if t not in visited:
                    self._this_level.add(t)
        return chosen

    def _ample(self, s: Any, succ: list[tuple[Any, Any]]) -> list[tuple[Any, Any]] | None:
        """The smallest stubborn set's enabled actions that are all invisible, or None."""
        total = len(succ)
        if total <= 1:
            self.single += 1
            return None
        # C2 first: a proper ample set holds invisible actions only, so a state whose enabled
        # actions are all visible is fully expanded without growing any stubborn set (on the
        # controller's reference configurations, every state: docs/reduction.md's census).
        # The scan stops at the first invisible action; the others are decided when needed.
        visible: dict[int, bool] = {}
        for i, (a, t) in enumerate(succ):
            v = visible[i] = self._step_visible(s, a, t)
            if not v:
                break
        else:
            self.visible += 1
            return None
        fp = self.fp
        by_class: dict[Any, list[int]] = {}
        for i, (a, _) in enumerate(succ):
            by_class.setdefault(fp.class_of(a), []).append(i)
        if len(by_class) <= 1:
            self.single += 1
            return None
        deps: dict[int, frozenset] = {}
        enablers: dict[Any, Any] = {}
        best: list[int] | None = None
        for seed in sorted(by_class, key=lambda c: len(by_class[c])):
            got = self._closure(
                s, succ, seed, by_class, visible, deps, enablers, total if best is None else len(best)
            )
            if got is not None:
                best = got
                if len(best) == 1:
                    break
        if best is None:
            return None
        return [succ[i] for i in sorted(best)]

    def _closure(
        self,
        s: Any,
        succ: list[tuple[Any, Any]],
        seed: Any,
        by_class: dict[Any, list[int]],
        visible: dict[int, bool],
        deps: dict[int, frozenset],
        enablers: dict[Any, Any],
        limit: int,
    ) -> list[int] | None:
        """The enabled actions of the stubborn set grown from class ``seed``; None when it
        holds a visible action or reaches ``limit`` actions."""
        fp = self.fp
        members = {seed}
        stack = [seed]
        out: list[int] = []
        while stack:
            c = stack.pop()
            idxs = by_class.get(c)
            if idxs:
                out += idxs
                if len(out) >= limit:
                    return None
                for i in idxs:
                    v = visible.get(i)
                    if v is None:
                        a, t = succ[i]
                        v = visible[i] = self._step_visible(s, a, t)
                    if v:
                        return None
                    d = deps.get(i)
                    if d is None:
                        a, t = succ[i]
                        d = deps[i] = fp.dependent_classes(fp.footprint(s, a, t, fp.changed_locs(s, t)))
                    for x in d:
                        if x not in members:
                            members.add(x)
                            stack.append(x)
            else:
                e = enablers.get(c)
                if e is None:
                    e = enablers[c] = fp.enabling_classes(s, c)
                for x in e:
                    if x not in members:
                        members.add(x)
                        stack.append(x)
        return out


def por_setup(
    system: Any, properties: Iterable[Property], reduce: str
) -> tuple[AmpleSets | None, Callable[[AmpleSets | None], list[str]]]:
    """The ample-set chooser of a search run with ``reduce`` (None: every successor is
    followed) and the function giving the result's notes about it.

    >>> ample, notes = por_setup(object(), [], "por")
    >>> ample is None, notes(ample)
    (True, ['reduce por: off for this run: the system declares no action footprints (por_footprints)'])
    >>> por_setup(object(), [], "none")[1](None)
    []
    """
    if reduce not in REDUCTIONS:
        raise ValueError(f"unknown reduction {reduce!r} (available: {', '.join(REDUCTIONS)})")
    if reduce != "por":  # none, or symmetry (explorer.search.symmetry)
        return None, lambda _: []
    props = list(properties)
    why = reason_off(system, props)
    if why is not None:
        return None, lambda _: [f"reduce por: off for this run: {why}"]
    undeclared = [p.name for p in props if p.reads is None and p.kind is not PropertyKind.EVENTUALLY]

    def notes(ample: AmpleSets | None) -> list[str]:
        if ample is None:  # pragma: no cover - set up above
            return []
        out = [
            f"reduce por: {ample.reduced} states expanded with an ample set, {ample.full} fully "
            f"({ample.single} with one enabled action or class, {ample.visible} with every enabled "
            f"action visible to an undecided property, {ample.proviso} by the cycle proviso, "
            f"{ample.full - ample.single - ample.visible - ample.proviso} with no smaller stubborn "
            "set); coverage counts every enabled action"
        ]
        if undeclared:
            out.append(
                "reduce por: properties that do not declare what they read make every step visible "
                f"until decided: {', '.join(undeclared)}"
            )
        return out

    return AmpleSets(system, props), notes
