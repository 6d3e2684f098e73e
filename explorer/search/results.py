"""What every exhaustive engine reports the same way: the deadlock property, the
per-property table of a result, and the odds that fingerprints collided.

Example
-------
>>> DEADLOCK_PROPERTY.name, DEADLOCK_PROPERTY.kind.value
('deadlock', 'deadlock')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from explorer.core import Property, PropertyKind, Violation

__all__ = ["DEADLOCK_PROPERTY", "collision_odds", "property_table"]


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
