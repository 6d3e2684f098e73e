"""What every engine shares: the options of a run, the one signature, the errors.

An engine is a function ``run(system, properties, options) -> CheckResult``
(:class:`Engine`); :mod:`explorer.engines` registers each by name and
:func:`explorer.api.check` calls the one ``options.engine`` names.

Example
-------
>>> o = CheckOptions(max_states=100, keep_going=True)
>>> o.engine, o.max_states, o.engine_options
('bfs', 100, {})
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from explorer.core import CheckResult, Property
from explorer.engines.options import engine_options, refusal
from explorer.search import Progress

__all__ = [
    "CheckOptions",
    "Engine",
    "EngineSetupError",
    "ModelError",
    "UntrustedResultError",
]


@dataclass(frozen=True)
class CheckOptions:
    """How to run a check: the engine, its budgets and switches, and the result's labels.

    Attributes
    ----------
    engine:
        The registered engine's name (``bfs``, ``spark``, ``simulate``, ``hypothesis``,
        ``symbolic``; see :data:`explorer.engines.ENGINES`).
    max_depth, max_states, max_seconds:
        Budgets (None: unbounded); the first two apply to the exhaustive engines.
    keep_going:
        Collect the shortest violation of every property (``--continue``) instead of
        stopping at the first.
    deadlock:
        Report states without successors that the system does not call terminal.
    workers:
        Processes of the ``bfs`` engine (``--workers``; 1 is the serial search).
    progress:
        Where the progress line goes (None: no progress line).
    model, config:
        The model's name and configuration, copied into the result.
    reduce:
        State-space reduction of the exhaustive search: ``none`` (default), ``symmetry``
        (one state per orbit) or ``por`` (partial-order reduction, serial ``bfs`` only;
        ``docs/reduction.md``); :func:`explorer.engines.options.refusal` says what combines.
    engine_options:
        The engine's own options: a mapping of its keyword options or its options type
        (:mod:`explorer.engines.options`: ``BfsOptions``, ``SimulateOptions``,
        ``HypothesisOptions``, ``SparkOptions``, ``SymbolicOptions``), checked by the engine.
    clock:
        The clock the exhaustive engines time their budgets and levels with (a test's stands in).
    """

    engine: str = "bfs"
    max_depth: int | None = None
    max_states: int | None = None
    max_seconds: float | None = None
    keep_going: bool = False
    deadlock: bool = True
    workers: int = 1
    progress: Progress | None = None
    model: str = ""
    config: Any = None
    reduce: str = "none"
    engine_options: Mapping[str, Any] | Any = field(default_factory=dict)
    clock: Callable[[], float] = time.perf_counter

    @classmethod
    def of(cls, engine: str, given: Mapping[str, Any]) -> CheckOptions:
        """The options of a call ``check_...(system, properties, **given)``: the common options
        by name, the others the engine's own, checked by its options type.

        >>> o = CheckOptions.of("bfs", {"max_states": 5, "visited": "fingerprints"})
        >>> o.max_states, o.engine_options.visited
        (5, 'fingerprints')
        """
        names = {f.name for f in dataclasses.fields(cls)} - {"engine", "engine_options"}
        own = {k: v for k, v in given.items() if k not in names}
        common = {k: v for k, v in given.items() if k in names}
        return cls(engine=engine, engine_options=engine_options(engine, own), **common)

    def refusal(self, **parts: Any) -> str | None:
        """Why this engine cannot run with these options and ``parts`` (the engine's own:
        ``visited``, ``checkpoint``, ``eventually``), or None: :func:`~explorer.engines.options.refusal`
        asked about the engine, its workers, reduction and budgets.

        >>> CheckOptions(engine="simulate", max_depth=3).refusal()
        '--max-depth applies to exhaustive engines, not to --engine simulate'
        """
        w, r, depth, states = self.workers, self.reduce, self.max_depth, self.max_states
        return refusal(self.engine, workers=w, reduce=r, max_depth=depth, max_states=states, **parts)


class Engine(Protocol):
    """The one signature of an engine (a module's ``run`` function)."""

    def __call__(self, system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
        """Explore ``system``, check ``properties``, return the result."""
        ...


class EngineSetupError(Exception):
    """The engine cannot run here (e.g. no Java 17 for Spark): one line; a usage error."""


class UntrustedResultError(RuntimeError):
    """The engine cannot give a trustworthy answer (e.g. a fingerprint or hash collision)."""


class ModelError(RuntimeError):
    """The system raised during a search (its ``init_states``, ``successors`` or a property).

    ``message`` is one line naming the exception, the state and the last action; ``result``
    is the partial result of the search so far; ``trace`` the steps (``TraceStep``) from an
    initial state to the state whose expansion raised (empty when ``init_states`` raised).
    """

    def __init__(self, message: str, result: CheckResult | None = None, trace: list[Any] | None = None):
        super().__init__(message)
        self.message = message
        self.result = result
        self.trace = trace or []
