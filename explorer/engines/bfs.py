"""The ``bfs`` engine: exhaustive, level-by-level breadth-first search, serially or with
``workers`` processes.

The search itself is :func:`explorer.search.serial.breadth_first`, or with ``workers``
above 1 :func:`explorer.search.levels.level_synchronous` with a pool of workers as the
expander (:mod:`explorer.search.pool`; :mod:`explorer.engines.pbfs`); :func:`search` only
chooses their parts from the options:

* ``visited="states"`` (default): every state and its parent in one dict, so the first
  trace found to any state is a shortest one; actions are not stored but recovered, when
  a trace is printed, by re-running ``successors`` on the parent;
* ``visited="fingerprints"`` (``--visited fingerprints``, :func:`check_lean`): 64-bit
  fingerprints in a table and 16-byte parent records on disk (about 16 bytes a state);
  a counterexample is replayed through ``successors``, each fingerprint checked (a
  mismatch is a collision: :class:`FingerprintCollisionError`); a level's new states stay
  in memory up to ``frontier_batch``, the rest go to disk; ``checkpoint=DIR`` writes a
  snapshot at a level boundary every ``checkpoint_every`` seconds and ``resume=True``
  continues it (:mod:`explorer.search.checkpoint`);
* ``reduce``: ``symmetry`` (one state per orbit) or ``por`` (ample sets, serially), with
  either set.

Each state is checked against the ``always`` and ``reachable`` properties when it is first
seen; every generated transition (including those to known states) against the
``transition`` properties; a state with no successor that the system does not call
terminal is a deadlock. ``eventually`` properties need the whole graph: the exact visited
set keeps its edges, the fingerprint one records them as fingerprints (26 bytes an edge, as
the ``--workers`` search does; refused with a checkpoint).

Example
-------
>>> from tests.toys import Grid
>>> g = Grid(3, limit=3)
>>> r = check_bfs(g, g.properties(), reduce="none", visited="states")
>>> r.exit_reason.value, r.distinct_states, r.violations[0].length
('violation', 8, 3)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from explorer.core import CheckResult, Property, PropertyKind
from explorer.engines.base import CheckOptions, ModelError, UntrustedResultError
from explorer.engines.options import DEFAULT_BATCH, DEFAULT_EVERY, BfsOptions, refusal
from explorer.search import por_setup, safeio
from explorer.search.checkpoint import CheckpointError, open_checkpoint
from explorer.search.monitor import PropertyMonitor
from explorer.search.serial import Budgets, Checkpointer, ModelErrorResult, breadth_first, finish
from explorer.search.symmetry import Canonicaliser, symmetry_setup
from explorer.search.visited import FingerprintVisited, HashVisited, ReplayMismatch, StateVisited

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_EVERY",
    "FingerprintCollisionError",
    "check_bfs",
    "check_lean",
    "run",
    "search",
]


#: test-only: the level size from which ``kafka-mc check --workers N`` forks its workers
#: (``serial_below``), so that small runs exercise the worker processes
SERIAL_BELOW_ENV = "KAFKA_MC_SERIAL_BELOW"


class FingerprintCollisionError(UntrustedResultError):
    """A counterexample does not replay: a 64-bit fingerprint collision (or a non-deterministic model)."""


class HashCollisionError(UntrustedResultError):
    """A ``--workers`` trace could not be replayed: no successor has the recorded key (a collision)."""


def check_bfs(system: Any, properties: Iterable[Property], **options: Any) -> CheckResult:
    """Explore every reachable state of ``system`` breadth first and check ``properties``.

    ``options``: those of :class:`~explorer.engines.base.CheckOptions` (``model``, ``config``,
    the budgets ``max_depth``, ``max_states``, ``max_seconds``, ``keep_going``, ``deadlock``,
    ``progress``, ``clock``, ``reduce``, ``workers``) and the engine's own
    (:class:`~explorer.engines.options.BfsOptions`: ``visited``, ``frontier_batch``,
    ``checkpoint``, ``checkpoint_every``, ``resume``, ``run_info``, and for the worker
    processes ``batch``, ``serial_below``, ``pack``, ``stats``).

    Stops at the first violation unless ``keep_going`` (``--continue``), in which case the
    shortest violation of every property is collected. Budgets end the search with exit
    reason ``budget_exhausted`` and the budget's name. With ``workers`` above 1 the search
    runs in worker processes (:func:`explorer.engines.pbfs.check_pbfs`). ``reduce="por"``
    follows only an ample subset of each state's successors (:mod:`explorer.search.reduction`);
    ``reduce="symmetry"`` keeps one state per orbit of the system's declared symmetries
    (:mod:`explorer.search.symmetry`). ``visited``, ``frontier_batch``, ``checkpoint``,
    ``checkpoint_every``, ``resume`` and ``run_info`` (what the command line named, for the
    checkpoint's manifest): see the module's docstring.
    """
    return run(system, properties, CheckOptions.of("bfs", options))


def check_lean(system: Any, properties: Iterable[Property], **kw: Any) -> CheckResult:
    """:func:`check_bfs` with the lean visited set (``visited="fingerprints"``): the same result
    but for timings and a note on the collision odds.

    >>> from tests.toys import Grid
    >>> g = Grid(3, limit=3)
    >>> r = check_lean(g, g.properties())
    >>> r.engine, r.distinct_states, r.violations[0].length
    ('bfs', 8, 3)
    """
    return check_bfs(system, properties, visited="fingerprints", **kw)


def run(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    """The ``bfs`` engine behind :func:`explorer.api.check`: the serial search, or with
    ``options.workers`` above 1 the worker processes' (:mod:`explorer.engines.pbfs`).

    >>> from tests.toys import Grid
    >>> run(Grid(3), Grid(3).properties(), CheckOptions(max_depth=2)).budget
    'max_depth'
    >>> run(Grid(3), [], CheckOptions(engine_options={"visited": "fingerprints"})).distinct_states
    16
    """
    if options.workers != 1 and SERIAL_BELOW_ENV in os.environ:  # test-only: fork the workers early
        o = BfsOptions.of(options.engine_options)
        options = replace(options, engine_options=replace(o, serial_below=int(os.environ[SERIAL_BELOW_ENV])))
    return search(system, properties, options)


def search(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    """Choose the parts from ``options`` (the one place for the serial search and the
    ``--workers`` one, which adds a pool of workers: :func:`_with_workers`), search, build
    the result."""
    o = BfsOptions.of(options.engine_options)
    workers = options.workers
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    props = list(properties)
    live = any(p.kind is PropertyKind.EVENTUALLY for p in props)
    checkpoint = o.checkpoint is not None
    why = refusal(
        "bfs",
        workers=workers,
        reduce=options.reduce,
        visited=o.visited,
        checkpoint=checkpoint,
        eventually=live,
    )
    if why is not None:
        raise (CheckpointError if checkpoint else ValueError)(why)
    monitor = PropertyMonitor(props, keep_going=options.keep_going, deadlock=options.deadlock)
    canon, sym_off = symmetry_setup(system, props, options.reduce)
    ample, por_notes = por_setup(system, props, options.reduce)
    budgets = Budgets(options.max_depth, options.max_states, options.max_seconds)
    # eventually properties: the serial search keeps every edge, as states with the exact set
    # and as fingerprint records with the lean one (as the workers do)
    lean = o.visited == "fingerprints"
    visited: Any = StateVisited() if workers == 1 else HashVisited(system, canon)
    folder = work = None
    try:
        layout = dict(frontier_batch=o.frontier_batch) if workers == 1 else dict(workers=workers)
        folder, snapshot = open_checkpoint(
            system, props, options, o, "lean" if workers == 1 else "pbfs", **layout
        )
        if lean or (live and workers > 1):  # the parent log, spilled levels, the workers' graph
            work = folder if folder is not None else Path(tempfile.mkdtemp(prefix="kafka-mc-bfs-"))
        if lean:
            resumed = (
                () if snapshot is None else (snapshot[1], snapshot[0]["known"], snapshot[0]["checks_left"])
            )
            visited = FingerprintVisited(work, system, canon, *resumed)  # type: ignore[arg-type]
        ck = Checkpointer(folder, o.checkpoint_every, snapshot) if folder is not None else None
        if workers > 1:
            return _with_workers(system, monitor, visited, canon, sym_off, options, budgets, ck, work)
        out = breadth_first(
            system,
            monitor,
            visited,
            budgets=budgets,
            canon=canon,
            ample=ample,
            work=work,
            frontier_batch=o.frontier_batch if lean else None,
            checkpointer=ck,
            progress=options.progress,
            clock=options.clock,
        )
        return finish(system, out, options, por_notes(ample) + sym_off)
    except ReplayMismatch as e:
        raise FingerprintCollisionError(f"counterexample replay failed: {e}") from None
    except ModelErrorResult as e:
        raise ModelError(e.line, e.result, e.trace) from None
    finally:
        visited.close()
        if work is not None and folder is None:
            shutil.rmtree(work, ignore_errors=True)


def _with_workers(
    system: Any,
    monitor: PropertyMonitor,
    visited: Any,
    canon: Canonicaliser | None,
    sym_off: list[str],
    options: CheckOptions,
    budgets: Budgets,
    checkpointer: Checkpointer | None,
    work: Path | None,
) -> CheckResult:
    """The parts :func:`search` chose, searched level by level with a pool
    of workers as the expander (keys: Python hashes, or fingerprints with that visited set;
    ``eventually`` properties: the graph the workers record in ``work``); the result."""
    from explorer.search import collision_odds, statepack
    from explorer.search.levels import level_synchronous
    from explorer.search.live_graph import GraphError
    from explorer.search.pool import Expander, signed_fingerprint

    o = BfsOptions.of(options.engine_options)
    lean = isinstance(visited, FingerprintVisited)
    pack = o.pack if o.pack is not None else lean and statepack.ACTIVE  # memory first where it is lean
    live_dir = None
    if monitor.live:
        assert work is not None
        live_dir = work / "live"
        safeio.make_dir(live_dir, exist_ok=True)  # a link there is refused, never written into
    key = signed_fingerprint if lean else hash
    exp = Expander(
        system, monitor.props, options.deadlock, o.batch, key, pack=pack, canon=canon, live_dir=live_dir
    )
    try:
        out = level_synchronous(
            system,
            monitor,
            visited,
            exp,
            workers=options.workers,
            serial_below=o.serial_below,
            budgets=budgets,
            checkpointer=checkpointer,
            progress=options.progress,
            clock=options.clock,
            stats=o.stats,
        )
        notes = [
            f"bfs with {options.workers} worker processes: states are told apart by 64-bit "
            f"{'fingerprints' if lean else 'hashes'}; collision odds about {collision_odds(out.distinct):.1e}",
            *sym_off,
        ]
        if canon is not None:
            notes.append(
                f"reduce symmetry: a group of {len(canon.perms) + 1} permutations, applied by each worker "
                "to the successors it generates; coverage counts the representatives' expansions"
            )
        return finish(system, out, options, notes, own_notes=True)
    except ReplayMismatch as e:
        raise HashCollisionError(f"trace replay: {e}") from None
    except GraphError as e:
        raise HashCollisionError(str(e)) from None
