"""Engines and contracts of kafka-mc; this package knows no Kafka.

Models register themselves in ``invariants.MODELS`` (a name → :class:`ModelSpec`
mapping); the CLI reads that registry. The public API is :func:`check` with one
:class:`CheckOptions`; ``docs/architecture.md`` describes the layers.
"""

from explorer.api import CheckOptions, check
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
from explorer.engines.bfs import check_bfs

__all__ = [
    "Action",
    "CheckOptions",
    "CheckResult",
    "ExitReason",
    "ModelSpec",
    "Property",
    "PropertyKind",
    "TransitionSystem",
    "always",
    "check",
    "check_bfs",
    "encode",
    "eventually",
    "fingerprint",
    "reachable",
    "transition",
]
