"""What every exhaustive engine reports the same way: the deadlock property, the
per-property table of a result, the odds that fingerprints collided, and the one place an
exhaustive :class:`~explorer.core.CheckResult` is assembled (:func:`exhaustive_result`).

Example
-------
>>> DEADLOCK_PROPERTY.name, DEADLOCK_PROPERTY.kind.value
('deadlock', 'deadlock')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from explorer.core import (
    CheckResult,
    ExitReason,
    LevelStats,
    Property,
    PropertyKind,
    TraceStep,
    Violation,
    config_to_dict,
)
from explorer.explain import explain_violations
from explorer.mypyc_compat import mypyc_attr
from explorer.search.coverage import Coverage, coverage_of, declared_labels

__all__ = [
    "DEADLOCK_PROPERTY",
    "Explored",
    "Finding",
    "RunLabels",
    "Sampled",
    "collision_odds",
    "exhaustive_result",
    "explored_fields",
    "not_run_result",
    "property_table",
    "sampled_result",
    "unwitnessed",
]


DEADLOCK_PROPERTY = Property(
    "deadlock", PropertyKind.DEADLOCK, lambda s: True, "every non-terminal state has a successor"
)
"""The property a deadlock violates (a state with no successor that is not terminal)."""


def collision_odds(n: int) -> float:
    """The probability that ``n`` distinct states hold a 64-bit fingerprint collision.

    As TLC reports it: about ``n**2 / 2**65``.

    >>> collision_odds(2**16)
    1.1641532182693481e-10
    """
    return n * n / 2.0**65


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
    sampled: bool = False,
) -> dict[str, dict[str, Any]]:
    """The result's per-property table: status, states or transitions evaluated, vacuity,
    witness length (shared by every engine but the symbolic one). A ``sampled`` search (simulate,
    hypothesis) checks no ``eventually`` property and counts no ``reachable`` evaluation.

    >>> from explorer.core import always
    >>> t = property_table([always("p", lambda s: True, "doc")], [], complete=True, distinct=4,
    ...                    transitions=6, applied={}, witness_lengths={})
    >>> t["p"]["status"], t["p"]["evaluated"]
    ('held', 4)
    >>> from explorer.core import reachable
    >>> t = property_table([reachable("r", lambda s: False, "doc"), DEADLOCK_PROPERTY], [], complete=True,
    ...                    distinct=4, transitions=6, applied={}, witness_lengths={})
    >>> t["r"]["status"], t["r"]["evaluated"], t["deadlock"]["evaluated"]
    ('unknown', 4, 4)
    """
    table: dict[str, dict[str, Any]] = {}
    violated = {v.property for v in violations}
    for p in props:
        if p.kind is PropertyKind.EVENTUALLY:
            status = (live_status or {}).get(p.name, "unknown" if not (complete or sampled) else "unchecked")
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
        elif p.kind is PropertyKind.REACHABLE and status != "witnessed" and not sampled:
            # checked on every state reached (a witnessed one only until its witness, in an
            # order the engines do not share: no count)
            entry["evaluated"] = distinct
        elif p.kind is PropertyKind.DEADLOCK and complete:
            entry["evaluated"] = distinct  # every state expanded, its successors counted
        if p.name in applied:
            entry["non_vacuous"] = applied[p.name]
            if not applied[p.name]:
                entry["vacuous"] = True
        if p.name in witness_lengths:
            entry["witness_length"] = witness_lengths[p.name]
        table[p.name] = entry
    return table


#: a property found violated: the property, the message, the trace that shows it
Finding = tuple[Property, str, list[TraceStep]]


class RunLabels(Protocol):
    """What a result copies from the run's options (an :class:`explorer.engines.CheckOptions`)."""

    @property
    def engine(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def config(self) -> Any: ...
    @property
    def keep_going(self) -> bool: ...
    @property
    def deadlock(self) -> bool: ...


@dataclass
class Explored:
    """What an exhaustive search counted, for :func:`exhaustive_result`: how it ended (``reason``,
    ``budget``), its levels, the transitions generated, coverage and labels, its seconds, the
    distinct states, and which property's ``applies`` ever held."""

    reason: ExitReason
    budget: str | None
    levels: list[LevelStats]
    generated: int
    coverage: Coverage
    labels: dict[Any, int]
    seconds: float
    distinct: int
    applied: dict[str, bool]


def explored_fields(explored: Explored) -> dict[str, Any]:
    """``explored``'s fields by name, what an ``Outcome`` (an :class:`Explored` with more) is
    built from: ``vars(explored)``, which a mypyc build's instance (no ``__dict__``) does not have.

    >>> from explorer.core import ExitReason
    >>> x = Explored(ExitReason.COMPLETE, None, [], 0, None, {}, 0.0, 1, {})  # type: ignore[arg-type]
    >>> explored_fields(x)["distinct"], len(explored_fields(x))
    (1, 9)
    """
    return {f.name: getattr(explored, f.name) for f in fields(explored)}


def unwitnessed(props: Iterable[Property], witnessed: Iterable[str]) -> list[Violation]:
    """The violations of the ``reachable`` properties without a witness (after a complete search).

    >>> from explorer.core import reachable
    >>> [v.message for v in unwitnessed([reachable("r", lambda s: False, "doc")], [])]
    ['r: no reachable state is a witness']
    """
    seen = set(witnessed)
    return [
        Violation(p.name, p.kind.value, p.doc, f"{p.name}: no reachable state is a witness", 0, [])
        for p in props
        if p.kind is PropertyKind.REACHABLE and p.name not in seen
    ]


def exhaustive_result(
    system: Any,
    props: Iterable[Property],
    found: list[Finding],
    explored: Explored,
    options: RunLabels,
    witness_lengths: dict[str, int],
    live: Callable[[], dict[str, Violation | None]] | None = None,
    notes: list[str] | None = None,
) -> CheckResult:
    """The :class:`CheckResult` of an exhaustive search (bfs, its fingerprint and ``--workers``
    searches, spark), from the properties it ``found`` violated (traced, in the order it met them) and the
    length of each ``reachable`` property's witness.

    The search was complete if it explored every state (no budget or interrupt) and did not
    stop at a violation; then every ``reachable`` property without a witness is a violation
    and ``live`` (the ``eventually`` properties decided on the graph: name -> violation or
    None) is asked. Then the property table (:func:`property_table`, with the deadlock
    property when ``options.deadlock``), the deepest level that found a state, the
    witnesses' lengths and the coverage section (labels for a system with
    ``successors_labelled``).

    >>> from explorer.core import always
    >>> from types import SimpleNamespace as O
    >>> o = O(engine="bfs", model="m", config=None, keep_going=False, deadlock=False)
    >>> e = Explored(ExitReason.COMPLETE, None, [LevelStats(0, 1, 1, 1, 0.0), LevelStats(1, 3, 6, 3, 0.0)],
    ...              7, Coverage(), {}, 0.5, 4, {})
    >>> r = exhaustive_result(None, [always("p", lambda s: True, "doc")], [], e, o, {})
    >>> r.distinct_states, r.max_depth, r.properties["p"]["evaluated"], r.states_per_second
    (4, 1, 4, 8.0)
    """
    props = list(props)
    violations = [Violation.of(*f) for f in found]
    complete = explored.reason is ExitReason.COMPLETE and (options.keep_going or not found)
    live_status: dict[str, str] = {}
    if complete:
        violations += unwitnessed(props, witness_lengths)
        for name, lv in (live() if live is not None else {}).items():
            live_status[name] = "held" if lv is None else "violated"
            if lv is not None:
                violations.append(lv)
    explain_violations(system, props, violations)
    levels = explored.levels
    table = property_table(
        [*props, *([DEADLOCK_PROPERTY] if options.deadlock else [])],
        violations,
        complete=complete,
        distinct=explored.distinct,
        transitions=explored.generated - levels[0].generated,
        applied=explored.applied,
        witness_lengths=witness_lengths,
        live_status=live_status,
    )
    return _assemble(
        system,
        options,
        ExitReason.VIOLATION if violations else explored.reason,
        explored.budget,
        (explored.distinct, explored.generated, max((lv.depth for lv in levels if lv.new_states), default=0)),
        explored.seconds,
        violations,
        table,
        {k: v["witness_length"] for k, v in table.items() if "witness_length" in v},
        levels,
        coverage_of(
            explored.coverage, _declared(system), _labels(system, explored.labels), declared_labels(system)
        ),
        notes,
    )


def _declared(system: Any) -> Any:
    return system.action_kinds() if hasattr(system, "action_kinds") else None


def _labels(system: Any, labels: dict[Any, int] | None) -> dict[Any, int] | None:
    return labels if hasattr(system, "successors_labelled") else None


def _assemble(
    system: Any,
    options: Any,
    reason: ExitReason,
    budget: str | None,
    counts: tuple[int, int, int],
    seconds: float,
    violations: list[Violation],
    table: dict[str, dict[str, Any]],
    witnesses: dict[str, int],
    levels: list[LevelStats],
    coverage: dict[str, Any],
    notes: list[str] | None,
) -> CheckResult:
    """The one place a search's :class:`CheckResult` is constructed; ``counts``: distinct
    states, generated states, depth."""
    distinct, generated, depth = counts
    return CheckResult(
        model=options.model,
        config=config_to_dict(options.config),
        engine=options.engine,
        exit_reason=reason,
        distinct_states=distinct,
        generated_states=generated,
        max_depth=depth,
        seconds=seconds,
        states_per_second=distinct / seconds if seconds > 0 else 0.0,
        violations=violations,
        witnesses=witnesses,
        properties=table,
        levels=list(levels),
        coverage=coverage,
        budget=budget,
        notes=list(notes or []),
    )


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass
class Sampled:
    """What a sampling engine's walks saw, for :func:`sampled_result`: the states stood on,
    coverage (with ``labels``, None without ``successors_labelled``) and steps taken by
    kind, the steps and the longest walk, each ``reachable`` property's first witness
    length, how often each ``applies`` held, and the states and transitions checked."""

    visited: set[Any] = field(default_factory=set)
    cov: Coverage = field(default_factory=Coverage)
    taken: dict[str, int] = field(default_factory=dict)
    steps: int = 0
    longest: int = 0
    witnesses: dict[str, int] = field(default_factory=dict)
    applies: dict[str, int] = field(default_factory=dict)
    always_evaluated: int = 0
    trans_evaluated: int = 0
    labels: dict[Any, int] | None = None


def sampled_result(
    system: Any,
    props: Iterable[Property],
    found: list[Finding],
    seen: Sampled,
    options: RunLabels,
    end: tuple[ExitReason, str | None, float],
    engine_coverage: dict[str, Any],
    notes: list[str],
    levels: list[LevelStats] | None = None,
) -> CheckResult:
    """The :class:`CheckResult` of a sampling engine (simulate, hypothesis): the states its walks
    visited, the steps they took (as ``generated_states``), the longest walk (as ``max_depth``),
    the property table (nothing is shown to hold; ``eventually`` properties are unchecked), and
    the coverage section with ``taken`` (steps taken per action kind) and the engine's own
    section under its name (``engine_coverage``); ``end``: the exit reason, budget and seconds
    (a violation found makes the reason ``violation``, without a budget). The ``notes`` end
    with one per ``eventually`` property, unchecked.

    >>> from types import SimpleNamespace as O
    >>> o = O(engine="simulate", model="m", config=None, keep_going=False, deadlock=True)
    >>> seen = Sampled(visited={1, 2, 3, 4, 5}, taken={"Step": 9}, steps=9, longest=4)
    >>> r = sampled_result(None, [], [], seen, o, (ExitReason.BUDGET_EXHAUSTED, "max_seconds", 2.0), {"seed": 1}, [])
    >>> r.states_per_second, r.coverage["taken"], r.coverage["simulate"], r.properties["deadlock"]["status"]
    (2.5, {'Step': 9}, {'seed': 1}, 'unknown')
    """
    props, (reason, budget, seconds) = list(props), end
    if found:
        reason, budget = ExitReason.VIOLATION, None
    violations = [Violation.of(*f) for f in found]
    explain_violations(system, props, violations)
    unchecked = [p.name for p in props if p.kind is PropertyKind.EVENTUALLY]
    notes = [*notes, *(f"{n}: eventually-properties are not checked by this engine" for n in unchecked)]
    table = property_table(
        [*props, *([DEADLOCK_PROPERTY] if options.deadlock else [])],
        violations,
        complete=False,
        distinct=seen.always_evaluated,
        transitions=seen.trans_evaluated,
        applied={n: c > 0 for n, c in seen.applies.items()},
        witness_lengths=seen.witnesses,
        sampled=True,
    )
    cov = coverage_of(seen.cov, _declared(system), seen.labels, declared_labels(system))
    cov["taken"] = dict(sorted(seen.taken.items()))
    cov[options.engine] = engine_coverage
    counts = (len(seen.visited), seen.steps, seen.longest)
    witnesses = dict(sorted(seen.witnesses.items()))
    return _assemble(
        system,
        options,
        reason,
        budget,
        counts,
        seconds,
        violations,
        table,
        witnesses,
        levels or [],
        cov,
        notes,
    )


def not_run_result(model: str, engine: str, note: str) -> CheckResult:
    """The placeholder result of a check that never ran (a release interrupted before it).

    >>> r = not_run_result("controller", "bfs", "not run")
    >>> r.exit_reason.value, r.distinct_states, r.notes
    ('interrupted', 0, ['not run'])
    """
    return CheckResult(
        model=model,
        config={},
        engine=engine,
        exit_reason=ExitReason.INTERRUPTED,
        distinct_states=0,
        generated_states=0,
        max_depth=0,
        seconds=0.0,
        states_per_second=0.0,
        notes=[note],
    )
