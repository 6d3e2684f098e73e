"""Each engine's own options as a frozen dataclass that checks itself, and the one place that
says which parts of a search combine (:func:`refusal`).

``CheckOptions.engine_options`` (the CLI, the release suite and the Python API all fill it)
may be a plain mapping or the engine's dataclass; the engine reads it through
:func:`engine_options`, so an unknown key or a bad value is the same one-line ``ValueError``
whoever built it.

Example
-------
>>> BfsOptions.of({"visited": "fingerprints", "frontier_batch": 100}).frontier_batch
100
>>> BfsOptions.of({"visted": "fingerprints"})
Traceback (most recent call last):
...
ValueError: bfs engine option 'visted': unknown (did you mean 'visited'?); known: batch, checkpoint, checkpoint_every, frontier_batch, pack, resume, run_info, serial_below, stats, visited
>>> refusal("bfs", workers=2, reduce="por")  # doctest: +ELLIPSIS
'--reduce por needs one process: ...'
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "BfsOptions",
    "HypothesisOptions",
    "SimulateOptions",
    "SparkOptions",
    "SymbolicOptions",
    "engine_options",
    "refusal",
]

#: states of a level kept in memory before the rest goes to disk (``--frontier-batch``)
DEFAULT_BATCH = 50_000
#: seconds between two checkpoints of the bfs engine (``--checkpoint-every``)
DEFAULT_EVERY = 600.0

T = TypeVar("T", bound="_Options")

#: the engines that sample runs instead of exhausting the state graph
SAMPLING_ENGINES = ("simulate", "hypothesis")


def refusal(
    engine: str,
    *,
    workers: int = 1,
    reduce: str = "none",
    visited: str = "states",
    checkpoint: bool = False,
    eventually: bool = False,
    max_depth: int | None = None,
    max_states: int | None = None,
) -> str | None:
    """Why this combination of engine and parts cannot give a sound answer (one line naming
    the flags), or None when it can. The one place these rules live: the CLI, the release
    suite, :func:`explorer.api.check` and the engines ask it.

    >>> refusal("bfs", workers=2, reduce="symmetry") is None
    True
    >>> refusal("simulate", reduce="symmetry")
    '--reduce symmetry applies to the exhaustive engines (bfs, spark), not to --engine simulate (a sampling or proving engine explores no state graph to reduce)'
    >>> refusal("hypothesis", max_states=10)
    '--max-states applies to exhaustive engines, not to --engine hypothesis'
    """
    if engine in SAMPLING_ENGINES:  # a walk has no levels to count nor a state set to bound
        for flag, value in (("--max-depth", max_depth), ("--max-states", max_states)):
            if value is not None:
                return f"{flag} applies to exhaustive engines, not to --engine {engine}"
    if workers != 1 and engine != "bfs":
        return f"--workers applies to --engine bfs only, not to --engine {engine}"
    if reduce == "por" and engine == "spark":
        return (
            "--reduce por needs one process: its cycle proviso asks, for each ample successor, whether "
            "it was met before this level, and Spark's tasks do not hold the visited set"
        )
    if reduce != "none" and engine not in ("bfs", "spark"):
        return (
            f"--reduce {reduce} applies to the exhaustive engines (bfs, spark), not to --engine {engine} "
            "(a sampling or proving engine explores no state graph to reduce)"
        )
    if reduce == "por" and workers != 1:
        return (
            "--reduce por needs one process: its cycle proviso asks, for each ample successor, whether "
            "it was met before this level, and the worker processes do not hold the visited set"
        )
    if checkpoint and eventually:
        return (
            "--checkpoint: eventually properties need the whole state graph, which a checkpoint does not keep"
        )
    if checkpoint and visited != "fingerprints":
        return "--checkpoint needs --visited fingerprints (the states are not saved)"
    return None


def _finite(name: str, value: Any, *, low: float = 0.0, strict: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name}: a finite number, got {value!r}")
    if value < low or (strict and value == low):
        raise ValueError(f"{name}: must be {'above' if strict else 'at least'} {low:g}, got {value!r}")


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: a positive whole number, got {value!r}")


@dataclass(frozen=True)
class _Options:
    """What every engine's options do: built from a mapping, naming a bad key in one line."""

    ENGINE = ""

    @classmethod
    def of(cls: type[T], given: Mapping[str, Any] | _Options | None) -> T:
        """The options ``given`` (a mapping of keyword options, or already this type), checked."""
        if isinstance(given, cls):
            return given
        if isinstance(given, _Options):
            raise ValueError(f"{cls.ENGINE} engine: given the options of the {given.ENGINE} engine")
        known = [f.name for f in dataclasses.fields(cls)]
        for key in given or {}:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(
                    f"{cls.ENGINE} engine option {key!r}: unknown{hint}; known: {', '.join(sorted(known))}"
                )
        return cls(**dict(given or {}))

    def kwargs(self) -> dict[str, Any]:
        """The options as the engine function's keyword arguments (those set)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class BfsOptions(_Options):
    """The ``bfs`` engine's own options (serial, and with ``--workers`` the worker processes').

    ``visited``: ``states`` (exact) or ``fingerprints`` (64-bit, parent records on disk);
    ``frontier_batch``: states of a level held in memory (serial fingerprints search);
    ``checkpoint``, ``checkpoint_every`` (seconds), ``resume``, ``run_info``: snapshots;
    ``batch``, ``serial_below``, ``pack``, ``stats``: the worker processes' tuning and figures.

    >>> BfsOptions(checkpoint_every=float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: checkpoint_every: a finite number, got nan
    """

    ENGINE = "bfs"
    visited: str = "states"
    frontier_batch: int = DEFAULT_BATCH
    checkpoint: str | Path | None = None
    checkpoint_every: float = DEFAULT_EVERY
    resume: bool = False
    run_info: dict[str, Any] | None = None
    batch: int = 512
    serial_below: int = 2000
    pack: bool | None = None
    stats: Any = None

    def __post_init__(self) -> None:
        if self.visited not in ("states", "fingerprints"):
            raise ValueError(f"visited: 'states' or 'fingerprints', got {self.visited!r}")
        _positive_int("frontier_batch", self.frontier_batch)
        _finite("checkpoint_every", self.checkpoint_every)
        _positive_int("batch", self.batch)
        _positive_int("serial_below", self.serial_below)
        if self.resume and self.checkpoint is None:
            raise ValueError("resume needs the checkpoint folder")


@dataclass(frozen=True)
class SimulateOptions(_Options):
    """The ``simulate`` engine's options: ``seed``, ``walks``, ``depth`` (steps per walk),
    ``weights`` and ``fault_probabilities`` (by action kind), ``swarm``, ``cut_loops``."""

    ENGINE = "simulate"
    seed: int = 0
    walks: int = 100
    depth: int = 50
    weights: Mapping[str, float] | None = None
    fault_probabilities: Mapping[str, float] | None = None
    swarm: bool = False
    cut_loops: bool = True

    def __post_init__(self) -> None:
        _positive_int("walks", self.walks)
        _positive_int("depth", self.depth)
        for kind, w in (self.weights or {}).items():
            _finite(f"weight of {kind}", w)
        for kind, p in (self.fault_probabilities or {}).items():
            _finite(f"probability of {kind}", p)
            if p > 1:
                raise ValueError(f"probability of {kind}: at most 1, got {p!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed: expected an integer, got {self.seed!r}")
        for name, by_kind in (("weights", self.weights), ("fault_probabilities", self.fault_probabilities)):
            for kind in by_kind or {}:
                if not isinstance(kind, str):
                    raise ValueError(f"{name}: keys are action kinds (str), got {kind!r}")


#: the settings profiles of the ``hypothesis`` engine (``explorer.engines.hypo.PROFILES``)
HYPOTHESIS_PROFILES = ("quick", "thorough")


@dataclass(frozen=True)
class HypothesisOptions(_Options):
    """The ``hypothesis`` engine's options: ``profile``, ``seed``, ``max_examples``,
    ``stateful_step_count``, ``database`` (a folder, an example database, or False: none),
    ``phases`` (Hypothesis's phases to run; None: all but its own shrinking),
    ``shrink_seconds`` (kafka-mc's shrinker's time for a failure found).

    >>> HypothesisOptions(database=3)
    Traceback (most recent call last):
    ...
    ValueError: database: expected a directory, an ExampleDatabase or False, got 3
    """

    ENGINE = "hypothesis"
    profile: str = "quick"
    seed: int | None = None
    max_examples: int | None = None
    stateful_step_count: int | None = None
    database: Any = None
    phases: Any = None
    shrink_seconds: float = 30.0

    def __post_init__(self) -> None:
        if self.profile not in HYPOTHESIS_PROFILES:
            raise ValueError(
                f"profile: unknown profile {self.profile!r} (known: {', '.join(HYPOTHESIS_PROFILES)})"
            )
        if self.max_examples is not None:
            _positive_int("max_examples", self.max_examples)
        if self.stateful_step_count is not None:
            _positive_int("stateful_step_count", self.stateful_step_count)
        folder_or_db: tuple[type, ...] = (str, os.PathLike)
        loaded = sys.modules.get("hypothesis.database")  # no ExampleDatabase exists before it loads
        if loaded is not None:
            folder_or_db += (loaded.ExampleDatabase,)
        if not (self.database is None or self.database is False or isinstance(self.database, folder_or_db)):
            raise ValueError(
                f"database: expected a directory, an ExampleDatabase or False, got {self.database!r}"
            )
        _finite("shrink_seconds", self.shrink_seconds, strict=True)


@dataclass(frozen=True)
class SparkOptions(_Options):
    """The ``spark`` engine's options (see :func:`explorer.engines.spark.check_spark`)."""

    ENGINE = "spark"
    master: str | None = "local[*]"
    partitions: int | None = None
    checkpoint_dir: str | Path | None = None
    checkpoint_every: int = 8
    run_dir: str | Path | None = None
    local_frontier: int = 10_000
    spark: Any = None
    spark_conf: dict[str, str] | None = None
    connect_timeout: float = 10.0
    executor_wait: float = 120.0

    def __post_init__(self) -> None:
        if self.partitions is not None:
            _positive_int("partitions", self.partitions)
        _positive_int("checkpoint_every", self.checkpoint_every)
        if (
            isinstance(self.local_frontier, bool)
            or not isinstance(self.local_frontier, int)
            or self.local_frontier < 0
        ):
            raise ValueError(f"local_frontier: 0 or more, got {self.local_frontier!r}")
        _finite("connect_timeout", self.connect_timeout, strict=True)
        _finite("executor_wait", self.executor_wait, strict=True)


@dataclass(frozen=True)
class SymbolicOptions(_Options):
    """The ``symbolic`` engine's options: ``only``, the obligations to run (None: all)."""

    ENGINE = "symbolic"
    only: list[str] | None = field(default=None)


#: engine name -> its options type
OPTION_TYPES: dict[str, type[_Options]] = {
    "bfs": BfsOptions,
    "simulate": SimulateOptions,
    "hypothesis": HypothesisOptions,
    "spark": SparkOptions,
    "symbolic": SymbolicOptions,
}


def engine_options(engine: str, given: Mapping[str, Any] | _Options | None) -> Any:
    """The ``engine``'s options from ``given`` (a mapping or the options type), checked.

    >>> engine_options("simulate", {"walks": 3}).walks
    3
    """
    return OPTION_TYPES[engine].of(given)
