"""The ``symbolic`` engine: z3 proofs of a proof target, behind :func:`explorer.api.check`.

The harness it runs (symbolic values, path exploration, obligations, targets) is
:mod:`explorer.symbolic`, which the proof modules of ``invariants/`` import; this module
only adapts :func:`explorer.symbolic.check_symbolic` to the one engine signature.

Example
-------
>>> o = CheckOptions(engine="symbolic", engine_options={"only": ["overflow_wheel_parameters"]})
>>> run("timing-wheel", [], o).properties["overflow_wheel_parameters"]["status"]
'held'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from explorer.core import CheckResult, Property
from explorer.engines.base import CheckOptions
from explorer.engines.options import SymbolicOptions
from explorer.symbolic import check_symbolic

__all__ = ["run"]


def run(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    """Prove the obligations of a proof target.

    Parameters
    ----------
    system:
        The proof target: a name of :func:`explorer.symbolic.list_targets` or
        ``package.module:factory`` (the obligations are the target's, so
        ``properties`` is ignored).
    options:
        ``config`` holds the target's bounds (keyword arguments of its factory),
        ``max_seconds`` the time budget (None: none), ``engine_options["only"]`` the
        names of the obligations to run (None: all).
    """
    only = SymbolicOptions.of(options.engine_options).only
    return check_symbolic(
        str(system),
        config=dict(options.config or {}),
        timeout_s=options.max_seconds,
        only=only,
        progress=options.progress,
    )
