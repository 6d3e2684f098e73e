"""The property monitor of a search: which property failed first where, which ``reachable``
property has a witness, which ``applies`` condition ever held, and the violations a search
reports at its end.

One :class:`PropertyMonitor` per search. The search hands it every new state
(:meth:`PropertyMonitor.check_state`), every transition (its groups of transition checks,
run inlined by the loop) and every state without successors (:meth:`~PropertyMonitor.check_deadlock`), each with the
place ``at`` where its visited set finds the state again (the state itself, or its index);
it keeps the first violation of each property (the search stops at the first unless
``keep_going``) and the first witness of each ``reachable`` property.

Example
-------
>>> from explorer.core import always, reachable
>>> m = PropertyMonitor([always("small", lambda s: s < 2, "doc"), reachable("one", lambda s: s == 1, "doc")])
>>> m.check_state(0, 0); m.check_state(1, 1); m.stop
False
>>> m.check_state(2, 2); m.stop, sorted(m.found), m.witnesses
(True, ['small'], {'one': 1})
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from explorer.core import Property, PropertyKind, TransitionChecks, transition_groups
from explorer.search.incremental import Slicer
from explorer.search.results import DEADLOCK_PROPERTY, Finding

__all__ = ["CheckTables", "Found", "PropertyMonitor"]


@dataclass
class Found:
    """The first violation of one property: the state (and for a transition property the
    step from it) and ``at``, where the visited set finds that state again. A search that
    does not hold the states (``--workers``) gives the step as its index among the
    state's successors (``successor``)."""

    prop: Property
    state: Any
    action: Any = None
    target: Any = None
    message: str = ""
    at: Any = None
    successor: int | None = None


class CheckTables:
    """The checks of a search's properties as the expanders that report events by position
    run them (the ``--workers`` :class:`~explorer.search.pool.Expander`, spark's tasks): each
    check with the property's index (an event's tie-break) and name.

    >>> from explorer.core import always, reachable, transition
    >>> t = CheckTables([always("a", bool, ""), reachable("r", bool, ""), transition("t", bool, "")])
    >>> [(i, n) for i, n, _ in t.always], [(i, n) for i, n, _ in t.reach], [[i for i, _, _ in c] for _, c in t.trans]
    ([(0, 'a')], [(1, 'r')], [[2]])
    """

    def __init__(self, props: Iterable[Property]):
        props = list(props)
        self.always = [(i, p.name, p.check) for i, p in enumerate(props) if p.kind is PropertyKind.ALWAYS]
        #: transition checks grouped by guard, as bfs runs them: a group only where its guard holds
        self.trans = [
            (guard, [(i, p.name, chk) for i, p, chk in checks]) for guard, checks in transition_groups(props)
        ]
        #: the same, looked up per action type (:class:`~explorer.core.TransitionChecks`)
        self.trans_by_type = TransitionChecks(self.trans)
        self.reach = [(i, p.name, p.check) for i, p in enumerate(props) if p.kind is PropertyKind.REACHABLE]
        self.live = [p for p in props if p.kind is PropertyKind.EVENTUALLY]
        #: ``(name, applies)``, each evaluated only until it first holds
        self.applies_state = [
            (p.name, p.applies) for p in props if p.kind is PropertyKind.ALWAYS and p.applies is not None
        ]
        self.applies_trans = [
            (p.name, p.applies) for p in props if p.kind is PropertyKind.TRANSITION and p.applies is not None
        ]


class PropertyMonitor:
    """The ``always``, ``transition``, ``reachable`` and deadlock checks of one search, and
    what they found. ``eventually`` properties are only listed (:attr:`live`): they are
    decided on the whole graph after the search (:mod:`explorer.search.liveness`).

    The transition checks run inlined in the search loop (:mod:`explorer.search.serial`, the
    hottest code of the tool) over :attr:`trans_by_type` (the groups of :attr:`trans_groups` a
    step of that action type evaluates); what they find goes through
    :meth:`record`.

    >>> m = PropertyMonitor([], keep_going=True)
    >>> m.check_deadlock(7, "at-7", None); m.found["deadlock"].at, m.stop
    ('at-7', False)
    """

    #: :meth:`check_child` skips the properties whose slices a step left alone (off with
    #: ``KAFKA_MC_FULL_CHECK=1``: every property on every state, as :meth:`check_state`)
    incremental: bool = os.environ.get("KAFKA_MC_FULL_CHECK", "") in ("", "0")

    def __init__(self, props: Iterable[Property], *, keep_going: bool = False, deadlock: bool = True):
        self.props = list(props)
        self.keep_going, self.deadlock = keep_going, deadlock
        always_p = [p for p in self.props if p.kind is PropertyKind.ALWAYS]
        trans_p = [p for p in self.props if p.kind is PropertyKind.TRANSITION]
        self.live = [p for p in self.props if p.kind is PropertyKind.EVENTUALLY]
        self.by_name = {p.name: p for p in self.props}
        self.state_checks = [(p, p.check) for p in always_p]
        #: transition checks grouped by guard: a group runs only where its guard holds
        self.trans_groups = transition_groups(trans_p)
        #: the same, looked up per action type: the groups a step of that type evaluates
        self.trans_by_type = TransitionChecks(self.trans_groups)
        self.pending_reach = [(p, p.check) for p in self.props if p.kind is PropertyKind.REACHABLE]
        #: vacuity: each ``applies`` is evaluated only until it first holds (then dropped)
        self.applied: dict[str, bool] = {p.name: False for p in self.props if p.applies is not None}
        self.applies_state = [(p.name, p.applies) for p in always_p if p.applies is not None]
        self.applies_trans = [(p.name, p.applies) for p in trans_p if p.applies is not None]
        self.found: dict[str, Found] = {}
        #: reachable property -> where its first witness is
        self.witnesses: dict[str, Any] = {}
        #: a violation was found and the search is not to go on
        self.stop = False
        self._inc: Any = None
        self._tm: Any = None
        self._sl: tuple[Slicer | None, Any] | None = None

    def record(self, f: Found) -> None:
        """Keep ``f`` if it is its property's first violation."""
        if f.prop.name not in self.found:
            self.found[f.prop.name] = f
            if not self.keep_going:
                self.stop = True

    def prop(self, name: str) -> Property:
        """The property named ``name`` (the deadlock one too)."""
        return self.by_name[name] if name != DEADLOCK_PROPERTY.name else DEADLOCK_PROPERTY

    def event(self, name: str, kind: str, at: Any, successor: int | None = None) -> None:
        """What a worker reported (:mod:`explorer.search.pool`), in the order of the serial
        search: ``kind`` ``"a"`` an ``applies`` held, ``"w"`` a witness at ``at``, ``"s"`` a
        state, ``"t"`` the ``successor``-th step from a state, ``"d"`` a deadlock, violated."""
        if kind == "a":
            self.applied[name] = True
        elif kind == "w":
            self.witnesses.setdefault(name, at)
        else:
            message = "no successor (deadlock)" if kind == "d" else f"{name} does not hold"
            self.record(Found(self.prop(name), None, message=message, at=at, successor=successor))

    def take(self, events: Iterable[tuple[Any, str, str, Any]], upto: Any = None) -> None:
        """Events reported by position, ``(position, name, kind, at)`` (for a transition ``at`` is
        ``(at, successor)``), handed to :meth:`event` in the serial search's order, those after
        position ``upto`` dropped (a level cut there). The ``--workers`` driver and spark's do so.

        >>> m = PropertyMonitor([], keep_going=True)
        >>> dl = "deadlock"
        >>> m.take([((2, 0), dl, "d", "late"), ((1, 5), dl, "d", "early"), ((3, 0), dl, "d", "cut")], (2, 9))
        >>> m.found["deadlock"].at
        'early'
        """
        for pos, name, kind, at in sorted(events, key=lambda e: e[0]):
            if upto is None or pos <= upto:
                self.event(name, kind, *(at if kind == "t" else (at,)))

    def relocate(self, where: Callable[[Any], Any]) -> None:
        """Every ``at`` of a violation and a witness mapped through ``where`` (keys to indices)."""
        for f in self.found.values():
            f.at = where(f.at)
        self.witnesses = {n: where(at) for n, at in self.witnesses.items()}

    def check_state(self, s: Any, at: Any) -> None:
        """Check a state met for the first time (``always``, ``applies``, ``reachable``)."""
        for p, chk in self.state_checks:
            if not chk(s):
                self.record(Found(p, s, message=f"{p.name} does not hold", at=at))
        if self.applies_state:
            for entry in list(self.applies_state):
                if entry[1](s):
                    self.applied[entry[0]] = True
                    self.applies_state.remove(entry)
        if self.pending_reach:
            for item in list(self.pending_reach):
                if item[1](s):
                    self.witnesses[item[0].name] = at
                    self.pending_reach.remove(item)

    def check_child(self, t: Any, at: Any, parent: Any) -> None:
        """:meth:`check_state` for ``t``, a successor of ``parent`` (a state this monitor
        checked): each ``always`` property that declares its slices
        (:attr:`~explorer.core.Property.slices`) is skipped where none of them changed, as its
        verdict is then ``parent``'s (:mod:`explorer.search.incremental`), and consecutive
        properties whose checks share a gate (a check with attributes ``gate`` and ``body`` holds
        where ``not gate(s) or body(s)``: the controller's ``invariants.controller_guards.gated``)
        are evaluated as a group, the gate once; the same findings as :meth:`check_state`, in its
        order. ``incremental = False`` turns it off.

        >>> from typing import NamedTuple
        >>> from dataclasses import replace
        >>> from explorer.core import always
        >>> class S(NamedTuple):
        ...     a: int
        ...     b: int
        >>> calls = []
        >>> p = replace(always("a_small", lambda s: calls.append(s) or s.a < 2, "a stays below 2"), slices=frozenset({"a"}))
        >>> m = PropertyMonitor([p], keep_going=True)
        >>> s0 = S(0, 0); m.check_state(s0, 0); m.check_child(s0._replace(b=1), 1, s0); len(calls)
        1
        >>> m.check_child(S(5, 0), 2, s0); m.found["a_small"].at, len(calls)
        (2, 2)
        """
        inc = self._inc
        if inc is None:
            inc = self._inc = self._incremental(t)
        if inc is False or type(t) is not type(parent):
            self.check_state(t, at)
            return
        changed, plans, plan_of = inc
        ch = changed(parent, t)
        plan = plans.get(ch)
        if plan is None:
            plan = plan_of(ch)
        for p, chk, group in plan:
            if group is None:
                if not chk(t):
                    self.record(Found(p, t, message=f"{p.name} does not hold", at=at))
            elif chk(t):  # the group's gate holds: its bodies decide
                for q, body in group:
                    if not body(t):
                        self.record(Found(q, t, message=f"{q.name} does not hold", at=at))
        if self.applies_state or self.pending_reach:
            self._check_rest(t, at)

    #: the most plans :meth:`check_child` keeps (one per distinct mask of changed slices met;
    #: controller-ref meets a few hundred)
    max_plans = 1 << 14

    def _incremental(self, sample: Any) -> Any:
        """``(changed, plans, plan_of)`` for states like ``sample``, or False (no property declares
        slices, or the state is not a record): ``changed(s, t)`` the slicer's mask of a step,
        ``plan_of(mask)`` the properties to evaluate on a state whose changed slices are
        ``mask``, kept in ``plans`` by mask: ``(property, check, None)`` for one evaluated alone,
        ``(None, gate, [(property, body), ...])`` for a run of consecutive properties whose checks
        share a gate (their ``gate`` attribute: each holds where the gate does not, else where
        its ``body`` does), in property order, so findings are recorded in :meth:`check_state`'s order."""
        if not self.incremental or not any(p.slices is not None for p, _ in self.state_checks):
            return False
        slicer, changed = self._slicer(sample)
        if slicer is None:
            return False
        checks = [(p, chk, slicer.mask(p.slices)) for p, chk in self.state_checks]
        plans: dict[int, list[tuple[Any, Any, Any]]] = {}

        def plan_of(ch: int) -> list[tuple[Any, Any, Any]]:
            plan: list[tuple[Any, Any, Any]] = []
            for p, chk, mask in checks:
                if not mask & ch:
                    continue
                gate, body = getattr(chk, "gate", None), getattr(chk, "body", None)
                if gate is None or body is None:
                    plan.append((p, chk, None))
                elif plan and plan[-1][2] is not None and plan[-1][1] is gate:
                    plan[-1][2].append((p, body))
                else:
                    plan.append((None, gate, [(p, body)]))
            if len(plans) < self.max_plans:
                plans[ch] = plan
            return plan

        return changed, plans, plan_of

    def _slicer(self, sample: Any) -> tuple[Slicer | None, Any]:
        """The slicer of states like ``sample`` (None: not a record) and its mask function, one
        for the state checks and the transition checks alike (``Slicer.masker``: the C one
        remembers the last step, which the search asks of both in turn)."""
        got = self._sl
        if got is None:
            slicer = Slicer.of(sample)
            got = self._sl = (slicer, None if slicer is None else slicer.masker())
        return got

    def masked_transitions(self, sample: Any) -> tuple[dict[type, Any], Callable[[type], Any], Any]:
        """The serial search's transition checks with masks, for states like ``sample``:
        ``(table, for_type, changed)`` as :class:`~explorer.core.TransitionChecks`' ``table`` and
        ``for_type``, whose items are ``(index, property, check, mask)``, and ``changed(s, t)``
        (the slicer's mask of a step; None: no property declares slices, every mask is -1). A
        transition property that declares :attr:`~explorer.core.Property.slices` holds on a
        step that changes none of them, so the search skips it where ``mask & changed(s, t)``
        is 0.

        >>> from explorer.core import transition
        >>> m = PropertyMonitor([transition("up", lambda s, a, t: t >= s, "never down")])
        >>> table, for_type, changed = m.masked_transitions(0)
        >>> [(g, [(i, p.name, mask) for i, p, _, mask in items]) for g, items in for_type(str)], changed
        ([(None, [(0, 'up', -1)])], None)
        """
        got = self._tm
        if got is None:
            slicer, masker = self._slicer(sample) if self.incremental else (None, None)
            use = slicer is not None and any(
                p.slices is not None for _, items in self.trans_groups for _, p, _ in items
            )
            groups = [
                (g, [(i, p, chk, slicer.mask(p.slices) if use and slicer else -1) for i, p, chk in items])
                for g, items in self.trans_groups
            ]
            checks = TransitionChecks(groups)
            got = self._tm = (checks.table, checks.for_type, masker if use and slicer else None)
        return got

    def _check_rest(self, s: Any, at: Any) -> None:
        """The ``applies`` and ``reachable`` part of :meth:`check_state`."""
        if self.applies_state:
            for entry in list(self.applies_state):
                if entry[1](s):
                    self.applied[entry[0]] = True
                    self.applies_state.remove(entry)
        if self.pending_reach:
            for item in list(self.pending_reach):
                if item[1](s):
                    self.witnesses[item[0].name] = at
                    self.pending_reach.remove(item)

    def check_deadlock(self, s: Any, at: Any, is_terminal: Callable[[Any], bool] | None) -> None:
        """``s`` has no successor: a deadlock unless the system calls it terminal."""
        if self.deadlock and not (is_terminal is not None and is_terminal(s)):
            self.record(Found(DEADLOCK_PROPERTY, s, message="no successor (deadlock)", at=at))

    def findings(self, trace_of: Callable[[Found], list[Any]]) -> list[Finding]:
        """The violations found, in the order they were met, their traces from ``trace_of``."""
        return [(f.prop, f.message, trace_of(f)) for f in self.found.values()]

    def snapshot(self) -> dict[str, Any]:
        """What a checkpoint keeps of the monitor (plain values; :meth:`restore` reads it)."""
        return {
            "found": {
                n: (f.at, f.state, f.action, f.target, f.message, f.successor) for n, f in self.found.items()
            },
            "witnesses": dict(self.witnesses),
            "applied": dict(self.applied),
            "pending_reach": [p.name for p, _ in self.pending_reach],
            "applies_state": [n for n, _ in self.applies_state],
            "applies_trans": [n for n, _ in self.applies_trans],
        }

    def restore(self, st: dict[str, Any]) -> None:
        """The monitor as :meth:`snapshot` left it."""
        for name, (at, s, a, t, msg, *succ) in st["found"].items():
            self.found[name] = Found(self.prop(name), s, a, t, msg, at, *succ)
        self.witnesses.update(st["witnesses"])
        self.applied.update(st["applied"])
        self.pending_reach = [x for x in self.pending_reach if x[0].name in st["pending_reach"]]
        self.applies_state = [x for x in self.applies_state if x[0] in st["applies_state"]]
        self.applies_trans = [x for x in self.applies_trans if x[0] in st["applies_trans"]]
