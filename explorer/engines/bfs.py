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
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from explorer.core import (
    CheckResult,
    ExitReason,
    LevelStats,
    Property,
    PropertyKind,
    Violation,
    render_state,
    transition_groups,
)
from explorer.engines.base import CheckOptions, ModelError
from explorer.search import (
    DEADLOCK_PROPERTY,
    Coverage,
    Progress,
    build_trace,
    check_liveness,
    exhaustive_result,
    label_counting,
    polled,
    por_setup,
    stop_requested,
)
from explorer.search.symmetry import build_trace_symmetric, symmetry_notes, symmetry_setup

__all__ = ["check_bfs", "run"]


@dataclass
class _Found:
    prop: Property
    state: Any
    action: Any = None
    target: Any = None
    message: str = ""


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
    reduce: str = "none",
) -> CheckResult:
    """Explore every reachable state of ``system`` breadth first and check ``properties``.

    Stops at the first violation unless ``keep_going`` (``--continue``), in which
    case the shortest violation of every property is collected. Budgets end the
    search with exit reason ``budget_exhausted`` and the budget's name. The search with
    worker processes (``--workers``) is :func:`explorer.engines.pbfs.check_pbfs`.
    ``reduce="por"`` follows only an ample subset of each state's successors
    (:mod:`explorer.search.reduction`); ``reduce="symmetry"`` keeps one state per orbit of
    the system's declared symmetries (:mod:`explorer.search.symmetry`).
    """
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
    #: (exception, the state being expanded or None, the last action taken from it, its transitions so far)
    model_error: tuple[Exception, Any, Any, int] | None = None
    canon, sym_off = symmetry_setup(system, props, reduce)
    t0 = clock()
    try:
        for s in system.init_states():
            generated += 1
            if canon is not None:
                s = canon(s)
            if s not in parents:
                parents[s] = None
                frontier.append(s)
                check_state(s)
    except Exception as e:  # the model's own code raised: reported with the partial result
        model_error, stop, reason = (e, None, None, 0), True, ExitReason.INTERRUPTED
    levels.append(LevelStats(0, len(frontier), generated, len(parents), clock() - t0))
    depth = 0
    setdefault = parents.setdefault
    known = len(parents)
    # States are immutable tuples: the search makes no reference cycles, so the cyclic
    # collector only re-scans the ever-growing visited set (measured: 35-45% of the time
    # on controller-ref, with the same peak memory without it). Paused for the search.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    frozen = False
    nxt: list[Any] = []
    level_generated = n = before = 0
    in_level = False
    s = a = None
    polling = polled()
    ample, por_notes = por_setup(system, props, reduce)
    try:
        polling.__enter__()
        while frontier and not stop:
            if max_depth is not None and depth >= max_depth:
                budget, reason = "max_depth", ExitReason.BUDGET_EXHAUSTED
                break
            t0 = clock()
            nxt = []
            level_generated = n = 0
            before, in_level = len(parents), True
            for count, s in enumerate(frontier):
                n = 0
                succ = successors(s)
                if ample is not None:
                    ample.decided(found, witnesses)
                    succ = ample.successors(s, list(succ), depth, parents, nxt)
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
                    if canon is not None and t not in parents:
                        # the orbit's representative stands for t (a state already in the
                        # visited set is a representative: no need to look for another)
                        t = canon(t)
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
                    if stop_requested() is not None:  # Ctrl-C or SIGTERM: stop between two states
                        budget, reason = None, ExitReason.INTERRUPTED
                        stop = True
                        break
                    if progress is not None:
                        el = now - start
                        progress.update(
                            depth + 1, len(frontier), len(parents), len(parents) / el if el else 0.0
                        )
            generated += level_generated
            in_level = False
            if nxt or level_generated:
                levels.append(LevelStats(depth + 1, len(nxt), level_generated, len(nxt), clock() - t0))
            frontier = nxt
            depth += 1
    except KeyboardInterrupt:  # a second signal, or nobody polling: stopped wherever it was
        reason, budget = ExitReason.INTERRUPTED, None
    except Exception as e:  # the model's own code raised: reported with the partial result
        model_error, reason, budget = (e, s, a if n else None, n), ExitReason.INTERRUPTED, None
    finally:
        polling.__exit__(None, None, None)
        if in_level:  # the level cut short: its new states counted from the visited set, so
            # the levels add up to distinct_states even when it stopped in the middle of a state
            generated += level_generated + n
            levels.append(
                LevelStats(depth + 1, len(nxt), level_generated + n, len(parents) - before, clock() - t0)
            )
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
    sym_notes = sym_off + symmetry_notes(canon)

    def trace_to(end: Any, extra: tuple[Any, Any] | None = None, prop: Property | None = None) -> list[Any]:
        if canon is None:
            return build_trace(system, parents, end, extra)
        fails = None
        if prop is not None and prop.kind is PropertyKind.TRANSITION:
            chk, guard = prop.check, prop.guard
            fails = lambda s, a, t: (guard is None or guard(s, a, t)) and not chk(s, a, t)  # noqa: E731
        return build_trace_symmetric(system, parents, end, canon, extra, fails)

    violations: list[Violation] = []
    for f in found.values():
        extra = (f.action, f.target) if f.action is not None else None
        trace = trace_to(f.state, extra, f.prop)
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
            lv = check_liveness(system, p, edges, parents)
            if lv is None:
                live_status[p.name] = "held"
            else:
                live_status[p.name] = "violated"
                violations.append(lv)
                if not keep_going:
                    break
    if violations:
        reason = ExitReason.VIOLATION

    result = exhaustive_result(
        system,
        props,
        violations,
        engine="bfs",
        model=model,
        config=config,
        reason=reason,
        budget=budget,
        complete=complete,
        deadlock=deadlock,
        distinct=len(parents),
        generated=generated,
        init_generated=levels[0].generated,
        levels=levels,
        seconds=seconds,
        applied=applied,
        witness_lengths={n: len(trace_to(w)) - 1 for n, w in witnesses.items()},
        coverage=cov,
        labels=label_counts if labelled else None,
        live_status=live_status,
        notes=por_notes(ample) + sym_notes,
    )
    if frozen:
        gc.unfreeze()  # the states die with this frame (by reference counts, not the collector)
    if model_error is not None:
        raise model_error_of(system, parents, model_error, depth, result, canon)
    return result


def model_error_of(
    system: Any,
    parents: dict[Any, Any],
    err: tuple[Exception, Any, Any, int],
    depth: int,
    result: CheckResult,
    canon: Any = None,
) -> ModelError:
    """The :class:`ModelError` of a search whose system raised: one line naming the exception,
    the state whose expansion raised and the last action taken from it; the trace to that
    state; the partial result (exit reason ``interrupted``, the error in its notes)."""
    e, state, action, n = err
    what = type(e).__name__ + (f": {str(e).splitlines()[0]}" if str(e).strip() else "")
    if state is None or state not in parents:
        line = f"the system raised {what} in init_states or on an initial state"
        trace: list[Any] = []
    else:
        try:
            shown = render_state(state)
        except Exception:  # pragma: no cover - a state render_state cannot walk
            shown = state
        text = shown if isinstance(shown, str) else repr(shown)
        text = text if len(text) <= 160 else text[:157] + "..."
        after = f"after {n} transitions, the last {action}" if n else "before its first transition"
        line = f"the system raised {what} expanding a state at depth {depth} ({after}): {text}"
        try:
            trace = (
                build_trace(system, parents, state)
                if canon is None
                else build_trace_symmetric(system, parents, state, canon)
            )
        except Exception:  # pragma: no cover - an ancestor's successors raised this time
            trace = []
    result.exit_reason = ExitReason.INTERRUPTED
    result.notes.append(f"model error: {line}")
    return ModelError(line, result, trace)


def run(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    """The ``bfs`` engine behind :func:`explorer.api.check` (``options.workers`` is 1).

    >>> from tests.toys import Grid
    >>> run(Grid(3), Grid(3).properties(), CheckOptions(max_depth=2)).budget
    'max_depth'
    """
    return check_bfs(
        system,
        properties,
        model=options.model,
        config=options.config,
        max_depth=options.max_depth,
        max_states=options.max_states,
        max_seconds=options.max_seconds,
        keep_going=options.keep_going,
        deadlock=options.deadlock,
        progress=options.progress,
        reduce=options.reduce,
        **{k: v for k, v in options.engine_options.items() if k != "visited"},  # "states": this engine
    )
