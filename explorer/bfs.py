"""The ``bfs`` engine: exhaustive, level-by-level breadth-first search.

Visited states live in one dict mapping each state to its parent (None for an
initial state), so the first trace found to any state is a shortest one; actions are
not stored but recovered, when a trace is printed, by re-running ``successors`` on
the parent. Each state is checked against the ``always`` and ``reachable``
properties when it is first seen; every generated transition (including those to
known states) against the ``transition`` properties; a state with no successor
that the system does not call terminal is a deadlock.

Example
-------
>>> from explorer.core import always
>>> class Ring:
...     def init_states(self): return [0]
...     def successors(self, s): return [("inc", (s + 1) % 4)]
>>> r = check_bfs(Ring(), [always("lt3", lambda s: s < 3, "stays below 3")])
>>> r.exit_reason.value, r.distinct_states, r.violations[0].length
('violation', 4, 3)
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from explorer.core import (
    CheckResult,
    ExitReason,
    LevelStats,
    Property,
    PropertyKind,
    TraceStep,
    Violation,
    action_kind,
    config_to_dict,
    diff_states,
    render_state,
    transition_groups,
)
from explorer.encoding import fingerprint
from explorer.liveness import check_leads_to

__all__ = [
    "DEADLOCK_PROPERTY",
    "Progress",
    "build_trace",
    "check_bfs",
    "coverage_of",
    "declared_labels",
    "label_counting",
    "nest_labels",
    "property_table",
]


DEADLOCK_PROPERTY = Property(
    "deadlock", PropertyKind.DEADLOCK, lambda s: True, "every non-terminal state has a successor"
)
"""The property a deadlock violates (a state with no successor that is not terminal)."""


class Progress:
    """A one-line progress display on a stream (stderr by default).

    It writes only when the stream is a terminal (or ``force=True``), at most every
    ``interval`` seconds, and clears its line when done.
    """

    def __init__(self, stream: TextIO | None = None, interval: float = 0.5, force: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.enabled = force or bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = -1e18
        self._shown = False

    def show(self, line: str, force: bool = False) -> None:
        """Replace the progress line with ``line`` (rate-limited unless ``force``)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        self.stream.write("\r" + line.ljust(78)[:78])
        self.stream.flush()
        self._shown = True

    def update(self, depth: int, frontier: int, distinct: int, rate: float, force: bool = False) -> None:
        """Show the current depth, frontier size, distinct states and states/s."""
        if self.enabled:
            self.show(
                f"depth {depth}  frontier {frontier:,}  distinct {distinct:,}  {rate:,.0f} states/s", force
            )

    def close(self) -> None:
        """Erase the progress line."""
        if self.enabled and self._shown:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()


@dataclass
class _Found:
    prop: Property
    state: Any
    action: Any = None
    target: Any = None
    message: str = ""


@dataclass
class Coverage:
    """Raw per-action-type counters of an engine run (see :func:`coverage_of`)."""

    enabled: dict[type, int] = field(default_factory=dict)
    new: dict[type, int] = field(default_factory=dict)
    sample: dict[type, Any] = field(default_factory=dict)


def label_counting(system: Any, counts: dict[Any, int]) -> Callable[[Any], Iterator[tuple[Any, Any]]] | None:
    """``successors`` of a system that labels its transitions, counting the labels.

    A system may define ``successors_labelled(s)`` yielding ``(action, next_state,
    labels)``, ``labels`` a tuple of coverage labels (tuples of strings, the first
    naming a section: ``("state_machines", "partition", "NewPartition->OnlinePartition")``).
    The returned function yields ``(action, next_state)`` as ``successors`` does and adds
    one to ``counts[label]`` per label of every transition it yields; ``None`` when the
    system has no ``successors_labelled`` (engines then use ``successors`` unchanged).

    >>> class Lab:
    ...     def successors_labelled(self, s): return [("a", s + 1, (("sec", "x"),)), ("b", s, ())]
    >>> counts = {}
    >>> [a for a, _ in label_counting(Lab(), counts)(0)], counts
    (['a', 'b'], {('sec', 'x'): 1})
    >>> label_counting(object(), {}) is None
    True
    """
    labelled = getattr(system, "successors_labelled", None)
    if labelled is None:
        return None

    def successors(s: Any) -> Iterator[tuple[Any, Any]]:
        for a, t, labels in labelled(s):
            if labels:
                for lb in labels:
                    counts[lb] = counts.get(lb, 0) + 1
            yield a, t

    return successors


def nest_labels(counts: dict[Any, int], expected: Iterable[Any] = ()) -> dict[str, Any]:
    """Label counts as nested JSON: ``("a", "b", "c") -> n`` becomes ``{"a": {"b": {"c": n}}}``.

    Labels in ``expected`` (a system's ``coverage_labels()``) that were never counted
    appear with 0. Keys are sorted; elements are turned into strings.

    >>> nest_labels({("elections", "offline", "isr"): 3}, [("elections", "offline", "none")])
    {'elections': {'offline': {'isr': 3, 'none': 0}}}
    """
    merged: dict[tuple[str, ...], int] = {tuple(map(str, k)): 0 for k in expected}
    for k, n in counts.items():
        key = tuple(map(str, k))
        merged[key] = merged.get(key, 0) + n
    out: dict[str, Any] = {}
    for key in sorted(merged):
        node = out
        for part in key[:-1]:
            nxt = node.setdefault(part, {})
            if not isinstance(nxt, dict):  # a shorter label ended here: keep its count under ""
                nxt = node[part] = {"": nxt}
            node = nxt
        leaf = key[-1] if key else ""
        if isinstance(node.get(leaf), dict):
            node[leaf][""] = merged[key]
        else:
            node[leaf] = merged[key]
    return out


def coverage_of(
    cov: Coverage,
    declared: Iterable[str] | None,
    labels: dict[Any, int] | None = None,
    expected_labels: Iterable[Any] = (),
) -> dict[str, Any]:
    """Turn raw per-type counters into the JSON coverage section.

    With ``labels`` (the counts of a system with ``successors_labelled``), the section
    also has ``labels`` (:func:`nest_labels`) and ``labels_never_hit``: the expected
    labels never counted, each as its parts joined by ``/``.
    """
    actions: dict[str, dict[str, int]] = {}
    for tp, n in cov.enabled.items():
        name = action_kind(cov.sample[tp])
        entry = actions.setdefault(name, {"enabled": 0, "new_states": 0})
        entry["enabled"] += n
        entry["new_states"] += cov.new.get(tp, 0)
    out: dict[str, Any] = {"actions": dict(sorted(actions.items()))}
    if declared is not None:
        declared = list(declared)
        out["declared_action_kinds"] = declared
        out["never_enabled"] = [k for k in declared if k not in actions]
        out["undeclared"] = sorted(k for k in actions if k not in declared)
    if labels is not None:
        expected = list(expected_labels)
        out["labels"] = nest_labels(labels, expected)
        hit = {tuple(map(str, k)) for k, n in labels.items() if n}
        out["labels_never_hit"] = sorted(
            "/".join(map(str, k)) for k in expected if tuple(map(str, k)) not in hit
        )
    return out


def declared_labels(system: Any) -> list[Any]:
    """The labels a system declares it can produce (``coverage_labels()``), or []."""
    fn = getattr(system, "coverage_labels", None)
    return list(fn()) if fn is not None else []


def build_trace(
    system: Any, parents: dict[Any, Any], end: Any, extra: tuple[Any, Any] | None = None
) -> list[TraceStep]:
    """Rebuild the trace from an initial state to ``end`` (then ``extra``'s step).

    Actions are recovered by re-running ``successors`` on each parent and taking
    the first action that leads to the child.
    """
    path = [end]
    while (p := parents[path[-1]]) is not None:
        path.append(p)
    path.reverse()
    steps: list[TraceStep] = []
    prev = None
    for i, s in enumerate(path):
        act = None
        if prev is not None:
            act = next((a for a, t in system.successors(prev) if t == s), None)
            if act is None:  # pragma: no cover - would mean a non-deterministic model
                raise RuntimeError(f"step {i}: successor not reproduced; is the model deterministic?")
        steps.append(_step(i, prev, act, s))
        prev = s
    if extra is not None:
        a, t = extra
        steps.append(_step(len(path), prev, a, t))
    return steps


def _step(i: int, prev: Any, action: Any, s: Any) -> TraceStep:
    return TraceStep(
        index=i,
        action=None if action is None else str(action),
        action_kind=None if action is None else action_kind(action),
        fingerprint=f"{fingerprint(s):016x}",
        state=render_state(s),
        changes=[] if prev is None else diff_states(prev, s),
    )


def _check_liveness(
    system: Any, p: Property, edges: dict[Any, list[tuple[Any, Any]]], parents: dict[Any, Any]
) -> Violation | None:
    """Check one ``eventually`` property on the explored graph; a lasso Violation or None."""
    kinds = p.fairness
    if kinds is None and hasattr(system, "fair_action_kinds"):
        kinds = tuple(system.fair_action_kinds())
    fair_kinds = None if kinds is None else frozenset(kinds)

    def fair(a: Any) -> bool:
        return fair_kinds is None or action_kind(a) in fair_kinds

    lv = check_leads_to(edges, parents, goal=p.check, trigger=p.trigger, fair=fair)
    if lv is None:
        return None
    steps: list[TraceStep] = []
    prev = None
    for i, s in enumerate(lv.prefix):
        act = None
        if prev is not None:
            act = next(a for a, t in edges[prev] if t == s)
        steps.append(_step(i, prev, act, s))
        prev = s
    loop_start = len(steps) - 1 if lv.cycle else None
    for a, t in lv.cycle:
        steps.append(_step(len(steps), prev, a, t))
        prev = t
    what = "lasso: the steps after the loop start repeat forever" if lv.cycle else "the behaviour ends here"
    return Violation(p.name, p.kind.value, p.doc, f"{lv.reason} ({what})", len(steps) - 1, steps, loop_start)


def property_table(
    props: Iterable[Property],
    violations: list[Violation],
    *,
    complete: bool,
    distinct: int,
    transitions: int,
    applied: dict[str, bool],
    witness_lengths: dict[str, int],
    live_status: dict[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """The result's per-property table: status, states or transitions evaluated, vacuity,
    witness length (shared by the serial and the ``--workers`` search).

    >>> from explorer.core import always
    >>> t = property_table([always("p", lambda s: True, "doc")], [], complete=True, distinct=4,
    ...                    transitions=6, applied={}, witness_lengths={})
    >>> t["p"]["status"], t["p"]["evaluated"]
    ('held', 4)
    """
    table: dict[str, dict[str, Any]] = {}
    violated = {v.property for v in violations}
    for p in props:
        if p.kind is PropertyKind.EVENTUALLY:
            status = (live_status or {}).get(p.name, "unknown" if not complete else "unchecked")
        elif p.name in violated:
            status = "violated" if p.kind is not PropertyKind.REACHABLE else "unreached"
        elif p.kind is PropertyKind.REACHABLE:
            status = "witnessed" if p.name in witness_lengths else "unknown"
        else:
            status = "held" if complete else "unknown"
        entry: dict[str, Any] = {"kind": p.kind.value, "doc": p.doc, "status": status}
        if p.kind is PropertyKind.ALWAYS:
            entry["evaluated"] = distinct
        elif p.kind is PropertyKind.TRANSITION:
            entry["evaluated"] = transitions
        if p.name in applied:
            entry["non_vacuous"] = applied[p.name]
            if not applied[p.name]:
                entry["vacuous"] = True
        if p.name in witness_lengths:
            entry["witness_length"] = witness_lengths[p.name]
        table[p.name] = entry
    return table


def check_bfs(
    system: Any,
    properties: Iterable[Property],
    *,
    model: str = "",
    config: Any = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    max_seconds: float | None = None,
    keep_going: bool = False,
    deadlock: bool = True,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.perf_counter,
    workers: int = 1,
) -> CheckResult:
    """Explore every reachable state of ``system`` breadth first and check ``properties``.

    Stops at the first violation unless ``keep_going`` (``--continue``), in which
    case the shortest violation of every property is collected. Budgets end the
    search with exit reason ``budget_exhausted`` and the budget's name. With
    ``workers > 1`` the search runs in that many processes
    (:func:`explorer.pbfs.check_pbfs`) and gives the same result.
    """
    if workers != 1:
        from explorer.pbfs import check_pbfs

        return check_pbfs(
            system,
            properties,
            workers=workers,
            model=model,
            config=config,
            max_depth=max_depth,
            max_states=max_states,
            max_seconds=max_seconds,
            keep_going=keep_going,
            deadlock=deadlock,
            progress=progress,
            clock=clock,
        )
    props = list(properties)
    always_p = [p for p in props if p.kind is PropertyKind.ALWAYS]
    trans_p = [p for p in props if p.kind is PropertyKind.TRANSITION]
    reach_p = [p for p in props if p.kind is PropertyKind.REACHABLE]
    live_p = [p for p in props if p.kind is PropertyKind.EVENTUALLY]
    edges: dict[Any, list[tuple[Any, Any]]] | None = {} if live_p else None
    state_checks = [(p, p.check) for p in always_p]
    # transition checks grouped by guard: a group runs only where its guard holds
    trans_groups = transition_groups(trans_p)
    trans_failed: list[tuple[int, Property]] = []
    pending_reach = [(p, p.check) for p in reach_p]
    # vacuity: each ``applies`` is evaluated only until it first holds (then it is dropped)
    applied: dict[str, bool] = {p.name: False for p in props if p.applies is not None}
    applies_state = [(p.name, p.applies) for p in always_p if p.applies is not None]
    applies_trans = [(p.name, p.applies) for p in trans_p if p.applies is not None]

    is_terminal = getattr(system, "is_terminal", None)
    label_counts: dict[Any, int] = {}
    successors = label_counting(system, label_counts) or system.successors
    labelled = hasattr(system, "successors_labelled")
    found: dict[str, _Found] = {}
    witnesses: dict[str, Any] = {}
    parents: dict[Any, Any] = {}
    cov = Coverage()
    enabled, new_by, sample = cov.enabled, cov.new, cov.sample
    levels: list[LevelStats] = []
    generated = 0
    budget: str | None = None
    reason = ExitReason.COMPLETE
    start = clock()
    deadline = None if max_seconds is None else start + max_seconds
    stop = False

    def record(p: Property, f: _Found) -> None:
        nonlocal stop
        if p.name not in found:
            found[p.name] = f
            if not keep_going:
                stop = True

    def check_state(s: Any) -> None:
        for p, chk in state_checks:
            if not chk(s):
                record(p, _Found(p, s, message=f"{p.name} does not hold"))
        if applies_state:
            for entry in list(applies_state):
                if entry[1](s):
                    applied[entry[0]] = True
                    applies_state.remove(entry)
        if pending_reach:
            for item in list(pending_reach):
                if item[1](s):
                    witnesses[item[0].name] = s
                    pending_reach.remove(item)

    deadlock_prop = DEADLOCK_PROPERTY

    frontier: list[Any] = []
    t0 = clock()
    for s in system.init_states():
        generated += 1
        if s not in parents:
            parents[s] = None
            frontier.append(s)
            check_state(s)
    levels.append(LevelStats(0, len(frontier), generated, len(frontier), clock() - t0))
    depth = 0
    setdefault = parents.setdefault
    known = len(parents)
    # States are immutable tuples: the search makes no reference cycles, so the cyclic
    # collector only re-scans the ever-growing visited set (measured: 35-45% of the time
    # on controller-ref, with the same peak memory without it). Paused for the search.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    frozen = False
    try:
        while frontier and not stop:
            if max_depth is not None and depth >= max_depth:
                budget, reason = "max_depth", ExitReason.BUDGET_EXHAUSTED
                break
            t0 = clock()
            nxt: list[Any] = []
            level_generated = 0
            for count, s in enumerate(frontier):
                n = 0
                succ = successors(s)
                if edges is not None:
                    succ = edges[s] = list(succ)
                for a, t in succ:
                    n += 1
                    tp = type(a)
                    c = enabled.get(tp)
                    if c is None:
                        enabled[tp] = 1
                        new_by[tp] = 0
                        sample[tp] = a
                    else:
                        enabled[tp] = c + 1
                    if trans_groups:
                        for guard, checks in trans_groups:
                            if guard is None or guard(s, a, t):
                                for i, p, chk in checks:
                                    if not chk(s, a, t):
                                        trans_failed.append((i, p))
                        if trans_failed:  # recorded in property order, whatever the grouping
                            for _, p in sorted(trans_failed, key=lambda x: x[0]):
                                record(p, _Found(p, s, a, t, f"{p.name} does not hold"))
                            trans_failed.clear()
                        if applies_trans:
                            for item in list(applies_trans):
                                if item[1](s, a, t):
                                    applied[item[0]] = True
                                    applies_trans.remove(item)
                    # one hash of t (a lookup then an insert would hash it twice)
                    setdefault(t, s)
                    if len(parents) != known:
                        known += 1
                        nxt.append(t)
                        new_by[tp] += 1
                        check_state(t)
                level_generated += n
                if n == 0 and deadlock and not (is_terminal is not None and is_terminal(s)):
                    record(deadlock_prop, _Found(deadlock_prop, s, message="no successor (deadlock)"))
                if stop:
                    break
                if max_states is not None and len(parents) >= max_states:
                    budget, reason = "max_states", ExitReason.BUDGET_EXHAUSTED
                    stop = True
                    break
                if (count & 255) == 0:
                    now = clock()
                    if deadline is not None and now >= deadline:
                        budget, reason = "max_seconds", ExitReason.BUDGET_EXHAUSTED
                        stop = True
                        break
                    if progress is not None:
                        el = now - start
                        progress.update(
                            depth + 1, len(frontier), len(parents), len(parents) / el if el else 0.0
                        )
            generated += level_generated
            if nxt or level_generated:
                levels.append(LevelStats(depth + 1, len(nxt), level_generated, len(nxt), clock() - t0))
            frontier = nxt
            depth += 1
    except KeyboardInterrupt:
        reason, budget = ExitReason.INTERRUPTED, None
    finally:
        if gc_was_enabled:
            # The search's objects go to the permanent generation first: re-enabled over the
            # millions of objects made while it was paused, the collector's first passes took
            # 2.6 s after 1M states of controller-ref, and more while the result was built.
            # Unfrozen once the result is built.
            if gc.get_freeze_count() == 0:
                gc.freeze()
                frozen = True
            gc.enable()
        if progress is not None:
            progress.close()

    seconds = clock() - start
    violations: list[Violation] = []
    for f in found.values():
        extra = (f.action, f.target) if f.action is not None else None
        trace = build_trace(system, parents, f.state, extra)
        violations.append(
            Violation(f.prop.name, f.prop.kind.value, f.prop.doc, f.message, len(trace) - 1, trace)
        )
    # every reachable state was explored: no budget or interrupt, and no early stop
    complete = reason is ExitReason.COMPLETE and (keep_going or not found)
    if violations:
        reason = ExitReason.VIOLATION
    for p, _ in pending_reach:
        if complete:
            violations.append(
                Violation(p.name, p.kind.value, p.doc, f"{p.name}: no reachable state is a witness", 0, [])
            )
    live_status: dict[str, str] = {}
    if live_p and complete:
        assert edges is not None
        for frontier_state in frontier:  # states never expanded (none when complete)
            edges.setdefault(frontier_state, [])
        for p in live_p:
            lv = _check_liveness(system, p, edges, parents)
            if lv is None:
                live_status[p.name] = "held"
            else:
                live_status[p.name] = "violated"
                violations.append(lv)
                if not keep_going:
                    break
    if violations:
        reason = ExitReason.VIOLATION

    max_level = max((lv.depth for lv in levels if lv.new_states), default=0)
    prop_table = property_table(
        [*props, *([deadlock_prop] if deadlock else [])],
        violations,
        complete=complete,
        distinct=len(parents),
        transitions=generated - levels[0].generated,
        applied=applied,
        witness_lengths={n: len(build_trace(system, parents, w)) - 1 for n, w in witnesses.items()},
        live_status=live_status,
    )
    notes: list[str] = []
    declared = system.action_kinds() if hasattr(system, "action_kinds") else None
    result = CheckResult(
        model=model,
        config=config_to_dict(config),
        engine="bfs",
        exit_reason=reason,
        distinct_states=len(parents),
        generated_states=generated,
        max_depth=max_level,
        seconds=seconds,
        states_per_second=len(parents) / seconds if seconds > 0 else 0.0,
        violations=violations,
        witnesses={k: v["witness_length"] for k, v in prop_table.items() if "witness_length" in v},
        properties=prop_table,
        levels=levels,
        coverage=coverage_of(cov, declared, label_counts if labelled else None, declared_labels(system)),
        budget=budget,
        notes=notes,
    )
    if frozen:
        gc.unfreeze()  # the states die with this frame (by reference counts, not the collector)
    return result
