"""Engines and contracts of kafka-mc; this package knows no Kafka.

Models register themselves in ``invariants.MODELS`` (a name → :class:`ModelSpec`
mapping); the CLI reads that registry.
"""

from explorer.bfs import check_bfs
from explorer.core import (
    Action,
    CheckResult,
    ExitReason,
    ModelSpec,
    Property,
    PropertyKind,
    TransitionSystem,
    always,
    eventually,
    reachable,
    transition,
)
from explorer.encoding import encode, fingerprint

__all__ = [
    "Action",
    "CheckResult",
    "ExitReason",
    "ModelSpec",
    "Property",
    "PropertyKind",
    "TransitionSystem",
    "always",
    "check_bfs",
    "encode",
    "eventually",
    "fingerprint",
    "reachable",
    "transition",
]
