"""The engines, one module each, registered by name in :data:`ENGINES`.

Every engine has the one signature :class:`~explorer.engines.base.Engine`:
``run(system, properties, options) -> CheckResult``. ``bfs`` (serial, and with
``options.workers`` above 1 the worker processes) is loaded eagerly; the others load their module
(and its heavy imports: pyspark, hypothesis, z3) on first use.

Example
-------
>>> sorted(ENGINES)
['bfs', 'hypothesis', 'simulate', 'spark', 'symbolic']
>>> from tests.toys import Grid
>>> ENGINES["bfs"](Grid(2), [], CheckOptions()).distinct_states
9
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from explorer.core import CheckResult, Property
from explorer.engines import bfs
from explorer.engines.base import CheckOptions, Engine, EngineSetupError, UntrustedResultError

__all__ = ["ENGINES", "CheckOptions", "Engine", "EngineSetupError", "UntrustedResultError", "get_engine"]


def _spark(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    from explorer.engines import spark

    return spark.run(system, properties, options)


def _simulate(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    from explorer.engines import simulate

    return simulate.run(system, properties, options)


def _hypothesis(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    from explorer.engines import hypo

    return hypo.run(system, properties, options)


def _symbolic(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    from explorer.engines import symbolic

    return symbolic.run(system, properties, options)


#: engine name -> engine (the ``--engine`` choices; ``symbolic`` runs proof targets)
ENGINES: dict[str, Engine] = {
    "bfs": bfs.run,
    "spark": _spark,
    "simulate": _simulate,
    "hypothesis": _hypothesis,
    "symbolic": _symbolic,
}


def get_engine(name: str) -> Engine:
    """The engine registered as ``name``; ValueError (one line) naming the known ones.

    >>> get_engine("dfs")
    Traceback (most recent call last):
    ...
    ValueError: unknown engine 'dfs' (available: bfs, spark, simulate, hypothesis, symbolic)
    """
    engine = ENGINES.get(name)
    if engine is None:
        raise ValueError(f"unknown engine {name!r} (available: {', '.join(ENGINES)})")
    return engine
