"""Engines and contracts of kafka-mc; this package knows no Kafka.

Models register themselves in ``invariants.MODELS`` (a name → :class:`ModelSpec`
mapping); the CLI reads that registry. The public API is :func:`check` with one
:class:`CheckOptions`; ``docs/architecture.md`` describes the layers.
"""

from __future__ import annotations

import importlib
from typing import Any

from explorer import native

native.install()  # first, before any compiled module loads: the pure model, or exactly the built one

#: public name -> the module that defines it; imported when first asked for, so that
#: ``import explorer.cli`` (the ``kafka-mc`` command) starts without the engines and a
#: Ctrl-C during start-up lands in code that handles it (``explorer._entry``)
_WHERE: dict[str, str] = {
    "CheckOptions": "explorer.api",
    "check": "explorer.api",
    **{
        name: "explorer.core"
        for name in (
            "Action",
            "CheckResult",
            "ExitReason",
            "ModelSpec",
            "Property",
            "PropertyKind",
            "TransitionSystem",
            "always",
            "eventually",
            "leads_to",
            "reachable",
            "transition",
        )
    },
    "encode": "explorer.encoding",
    "fingerprint": "explorer.encoding",
    "check_bfs": "explorer.engines.bfs",
}


def __getattr__(name: str) -> Any:
    """Load a public name on first use (PEP 562).

    >>> import explorer
    >>> explorer.always.__name__
    'always'
    """
    if name not in _WHERE:
        raise AttributeError(f"module 'explorer' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


__all__ = sorted(_WHERE)  # the public names, one list
