"""The kill matrix of a mutation run: each mutant's status from its cells (one per suite
entry), the score, and the matrix as text (``kafka-mc mutate``, :mod:`explorer.mutation.command`).

Example
-------
>>> score_of([{"status": "killed"}, {"status": "not covered"}])["score"]
0.5
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CRASHED",
    "EQUIVALENT",
    "KILLED",
    "NOT_COVERED",
    "NOT_RUN",
    "SURVIVED",
    "TIMEOUT",
    "format_matrix",
    "mutant_status",
    "score_of",
    "survivor_triage",
]

#: statuses of one mutant on one entry (and of a mutant overall)
KILLED, SURVIVED, TIMEOUT, CRASHED, EQUIVALENT, NOT_RUN, NOT_COVERED = (
    "killed",
    "survived",
    "timeout",
    "crashed",
    "equivalent",
    "not run",
    "not covered",  # no entry executes the statement the mutant changes
)


def mutant_status(cells: dict[str, dict[str, Any]], crash_kills: bool = False) -> str:
    """A mutant's overall status from its cells: killed by any entry, else crashed, timeout,
    survived (in that order).

    >>> mutant_status({"a": {"status": "survived"}, "b": {"status": "killed"}})
    'killed'
    >>> mutant_status({"a": {"status": "crashed"}}), mutant_status({"a": {"status": "crashed"}}, True)
    ('crashed', 'killed')
    """
    st = {c["status"] for c in cells.values()}
    if KILLED in st or (crash_kills and CRASHED in st):
        return KILLED
    for s in (CRASHED, TIMEOUT, SURVIVED):
        if s in st:
            return s
    return NOT_RUN


def score_of(mutants: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts per status and the score killed / (mutants not marked equivalent).

    >>> score_of([{"status": "killed"}, {"status": "survived"}, {"status": "equivalent"}])["score"]
    0.5
    """
    counts = {
        s: sum(1 for m in mutants if m["status"] == s)
        for s in (KILLED, SURVIVED, TIMEOUT, CRASHED, EQUIVALENT, NOT_COVERED)
    }
    considered = len(mutants) - counts[EQUIVALENT]
    return {
        **counts,
        "mutants": len(mutants),
        "considered": considered,
        "score": round(counts[KILLED] / considered, 4) if considered else None,
    }


def survivor_triage(doc: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The survivors of a run split by what they did to the state space: (those that moved
    some entry's distinct-state count from the baseline's: their behaviour changed and no
    property saw it, so a property or an entry is missing; those that left every count as the
    baseline's: most often equivalent, to be listed with a reason or shown otherwise).

    >>> doc = {"baseline": {"e": {"distinct_states": 10}}, "mutants": [
    ...     {"name": "a", "status": "survived", "cells": {"e": {"distinct_states": 12}}},
    ...     {"name": "b", "status": "survived", "cells": {"e": {"distinct_states": 10}}},
    ...     {"name": "c", "status": "killed", "cells": {"e": {"distinct_states": 3}}}]}
    >>> survivor_triage(doc)
    (['a'], ['b'])
    """
    base = {n: c.get("distinct_states") for n, c in (doc.get("baseline") or {}).items()}
    moved: list[str] = []
    same: list[str] = []
    for m in doc["mutants"]:
        if m["status"] != SURVIVED:
            continue
        counts = [
            (c.get("distinct_states"), base.get(n))
            for n, c in m["cells"].items()
            if c.get("distinct_states") is not None and base.get(n) is not None
        ]
        (moved if any(a != b for a, b in counts) else same).append(m["name"])
    return moved, same


def _cell_text(c: dict[str, Any] | None) -> str:
    if c is None:
        return "-"
    if c["status"] == NOT_RUN:
        return "-"
    if c["status"] == KILLED:
        n = c.get("length")
        return f"{c.get('property', '?')}" + (f" ({n})" if n is not None else "")
    return c["status"]


def format_matrix(doc: dict[str, Any]) -> str:
    """The kill matrix as a text table, then the score line."""
    names = [e["name"] for e in doc["entries"]]
    rows = [["mutant", "status", *names]]
    for m in doc["mutants"]:
        rows.append([m["name"], m["status"], *(_cell_text(m["cells"].get(n)) for n in names)])
    width = [min(max(len(r[i]) for r in rows), 44) for i in range(len(rows[0]))]
    lines = ["  ".join(x[:w].ljust(w) for x, w in zip(r, width)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in width))
    s = doc["score"]
    pct = "n/a" if s["score"] is None else f"{s['score']:.1%}"
    lines.append(
        f"mutation score {pct}: {s['killed']} killed of {s['considered']} non-equivalent mutants "
        f"({s['survived']} survived, {s.get(NOT_COVERED, 0)} not covered, {s['timeout']} timeout, "
        f"{s['crashed']} crashed, {s['equivalent']} equivalent)"
    )
    moved, same = survivor_triage(doc)
    if moved or same:
        lines.append(
            f"survivors: {len(moved)} moved some entry's state count (behaviour changed, no property "
            f"saw it), {len(same)} left every count as the baseline's (equivalent candidates)"
        )
    cov = doc.get("line_coverage")
    if cov and cov.get("statements"):
        missed = cov["statements"] - cov["executed"]
        why = (
            f"; of the {missed:,} never executed, {cov['explained']:,} have a reason"
            if "explained" in cov
            else ""
        )
        lines.append(
            f"statements of the mutated files the entries execute: {cov['executed']:,} of {cov['statements']:,} "
            f"({cov['fraction']:.1%}){why}"
        )
    return "\n".join(lines)
