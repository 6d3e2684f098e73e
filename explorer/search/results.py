"""What every exhaustive engine reports the same way: the deadlock property, the
per-property table of a result, the odds that fingerprints collided, and the one place an
exhaustive :class:`~explorer.core.CheckResult` is assembled (:func:`exhaustive_result`).

Example
-------
>>> DEADLOCK_PROPERTY.name, DEADLOCK_PROPERTY.kind.value
('deadlock', 'deadlock')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from explorer.core import (
    CheckResult,
    ExitReason,
    LevelStats,
    Property,
    PropertyKind,
    Violation,
    config_to_dict,
)
from explorer.search.coverage import Coverage, coverage_of, declared_labels

__all__ = [
    "DEADLOCK_PROPERTY",
    "collision_odds",
    "exhaustive_result",
    "not_run_result",
    "property_table",
    "sampled_result",
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
) -> dict[str, dict[str, Any]]:
    """The result's per-property table: status, states or transitions evaluated, vacuity,
    witness length (shared by the exhaustive engines: bfs, its ``--workers`` search, spark).

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
        elif p.kind is PropertyKind.REACHABLE and status != "witnessed":
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


def exhaustive_result(
    system: Any,
    props: Iterable[Property],
    violations: list[Violation],
    *,
    engine: str,
    model: str,
    config: Any,
    reason: ExitReason,
    budget: str | None,
    complete: bool,
    deadlock: bool,
    distinct: int,
    generated: int,
    init_generated: int,
    levels: list[LevelStats],
    seconds: float,
    applied: dict[str, bool],
    witness_lengths: dict[str, int],
    coverage: Coverage,
    labels: dict[Any, int] | None,
    live_status: dict[str, str] | None = None,
    notes: list[str] | None = None,
) -> CheckResult:
    """The :class:`CheckResult` of an exhaustive search (bfs, its fingerprint and ``--workers``
    searches, spark): the property table (:func:`property_table`, with the deadlock property
    when ``deadlock``), the deepest level that found a state, the witnesses' lengths, the
    coverage section (with ``labels`` only for a system with ``successors_labelled``).

    >>> from explorer.core import always
    >>> r = exhaustive_result(
    ...     None, [always("p", lambda s: True, "doc")], [], engine="bfs", model="m", config=None,
    ...     reason=ExitReason.COMPLETE, budget=None, complete=True, deadlock=False, distinct=4,
    ...     generated=7, init_generated=1, levels=[LevelStats(0, 1, 1, 1, 0.0), LevelStats(1, 3, 6, 3, 0.0)],
    ...     seconds=0.5, applied={}, witness_lengths={}, coverage=Coverage(), labels=None)
    >>> r.distinct_states, r.max_depth, r.properties["p"]["evaluated"], r.states_per_second
    (4, 1, 4, 8.0)
    """
    props = list(props)
    table = property_table(
        [*props, *([DEADLOCK_PROPERTY] if deadlock else [])],
        violations,
        complete=complete,
        distinct=distinct,
        transitions=generated - init_generated,
        applied=applied,
        witness_lengths=witness_lengths,
        live_status=live_status,
    )
    declared = system.action_kinds() if hasattr(system, "action_kinds") else None
    return CheckResult(
        model=model,
        config=config_to_dict(config),
        engine=engine,
        exit_reason=reason,
        distinct_states=distinct,
        generated_states=generated,
        max_depth=max((lv.depth for lv in levels if lv.new_states), default=0),
        seconds=seconds,
        states_per_second=distinct / seconds if seconds > 0 else 0.0,
        violations=violations,
        witnesses={k: v["witness_length"] for k, v in table.items() if "witness_length" in v},
        properties=table,
        levels=levels,
        coverage=coverage_of(coverage, declared, labels, declared_labels(system)),
        budget=budget,
        notes=list(notes or []),
    )


def sampled_result(
    system: Any,
    violations: list[Violation],
    *,
    engine: str,
    model: str,
    config: Any,
    reason: ExitReason,
    budget: str | None,
    distinct: int,
    steps: int,
    longest: int,
    seconds: float,
    witnesses: dict[str, int],
    properties: dict[str, dict[str, Any]],
    coverage: Coverage,
    labels: dict[Any, int] | None,
    taken: dict[str, int],
    engine_coverage: dict[str, Any],
    levels: list[LevelStats] | None = None,
    notes: list[str] | None = None,
) -> CheckResult:
    """The :class:`CheckResult` of a sampling engine (simulate, hypothesis): the states its walks
    visited, the steps they took (as ``generated_states``), the longest walk (as ``max_depth``),
    and the coverage section with ``taken`` (steps taken per action kind) and the engine's own
    section under its name (``engine_coverage``).

    >>> r = sampled_result(
    ...     None, [], engine="simulate", model="m", config=None, reason=ExitReason.BUDGET_EXHAUSTED,
    ...     budget="max_seconds", distinct=5, steps=9, longest=4, seconds=2.0, witnesses={},
    ...     properties={}, coverage=Coverage(), labels=None, taken={"Step": 9}, engine_coverage={"seed": 1})
    >>> r.states_per_second, r.coverage["taken"], r.coverage["simulate"]
    (2.5, {'Step': 9}, {'seed': 1})
    """
    declared = system.action_kinds() if hasattr(system, "action_kinds") else None
    cov = coverage_of(coverage, declared, labels, declared_labels(system))
    cov["taken"] = dict(sorted(taken.items()))
    cov[engine] = engine_coverage
    return CheckResult(
        model=model,
        config=config_to_dict(config),
        engine=engine,
        exit_reason=reason,
        distinct_states=distinct,
        generated_states=steps,
        max_depth=longest,
        seconds=seconds,
        states_per_second=distinct / seconds if seconds > 0 else 0.0,
        violations=violations,
        witnesses=dict(sorted(witnesses.items())),
        properties=properties,
        levels=list(levels or []),
        coverage=cov,
        budget=budget,
        notes=list(notes or []),
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
