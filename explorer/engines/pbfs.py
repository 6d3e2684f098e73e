"""Multi-process ``bfs``: the same search and the same :class:`~explorer.core.CheckResult`.

:func:`check_pbfs` (``check_bfs(..., workers=N)``, ``kafka-mc check --workers N``) runs
the successor function, which is most of the time of the serial search, in ``N`` forked
worker processes, and keeps the bookkeeping of the search in the calling process (the
*driver*). The parts are chosen where the serial search's are
(:func:`explorer.engines.bfs.search`: the :class:`~explorer.search.monitor.PropertyMonitor`,
the reduction, the budgets, the visited set, a
:class:`~explorer.search.serial.Checkpointer`); with workers the visited set holds keys
(:class:`~explorer.search.visited.HashVisited`, Python's hashes, or with
``visited="fingerprints"`` :class:`~explorer.search.visited.FingerprintVisited`), and
:func:`with_workers` adds the expander, a pool of :class:`~explorer.search.pool.Expander`
processes, runs :func:`explorer.search.levels.level_synchronous` (how a level runs is told
there) and hands its outcome to :func:`~explorer.search.serial.finish`.

Counterexamples are rebuilt by replaying the chain of keys from an initial state through
``successors``; a key that no successor has raises :class:`HashCollisionError`. The engine
trusts 64-bit keys where the serial search compares states: the collision odds of the run
are in ``notes``.

Example
-------
>>> from tests.toys import Grid
>>> g = Grid(3, limit=3)
>>> r = check_pbfs(g, g.properties(), workers=2, serial_below=2)
>>> r.engine, r.distinct_states, r.violations[0].length
('bfs', 8, 3)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from explorer.core import CheckResult, Property
from explorer.engines.base import CheckOptions, UntrustedResultError
from explorer.engines.bfs import search
from explorer.engines.options import BfsOptions
from explorer.search import collision_odds, statepack
from explorer.search.levels import level_synchronous
from explorer.search.live_graph import GraphError
from explorer.search.monitor import PropertyMonitor
from explorer.search.pool import Expander, PoolStats, signed_fingerprint
from explorer.search.serial import Budgets, Checkpointer, finish
from explorer.search.symmetry import Canonicaliser
from explorer.search.visited import FingerprintVisited, ReplayMismatch

__all__ = ["HashCollisionError", "PbfsStats", "check_pbfs", "run", "with_workers"]

#: test-only: the level size from which ``kafka-mc check --workers N`` forks its workers
#: (``serial_below``), so that small runs exercise the worker processes
SERIAL_BELOW_ENV = "KAFKA_MC_SERIAL_BELOW"
#: what a run with workers measured about itself (``stats=``)
PbfsStats = PoolStats


class HashCollisionError(UntrustedResultError):
    """A trace could not be replayed: no successor has the recorded key (a collision)."""


def check_pbfs(
    system: Any, properties: Iterable[Property], *, workers: int = 2, **options: Any
) -> CheckResult:
    """The :func:`explorer.engines.bfs.check_bfs` search with ``workers`` processes; the same result
    (``options``: :func:`~explorer.engines.bfs.check_bfs`'s).

    ``batch`` parents go in one message; levels below ``serial_below`` states run in
    the driver. Pass a :class:`PbfsStats` as ``stats`` to get the run's load balance.
    ``visited="fingerprints"``: the driver keeps stable 64-bit fingerprints in a table
    and parent records on disk (about 16 B/state plus the level in hand) instead of a
    dict of hashes; the workers send fingerprints instead of Python hashes, and hold
    their frontier share and the level's candidates packed (``pack``, default: with
    fingerprints when the C state packer is built), about a fifth of their memory.
    ``checkpoint=DIR`` (fingerprints only) writes a snapshot at a level boundary every
    ``checkpoint_every`` seconds: the driver's bookkeeping, the table, and each worker's
    frontier share (dumped by the workers in parallel); ``resume=True`` continues the
    snapshot in ``DIR`` with new workers and gives the uninterrupted run's result.
    ``reduce="symmetry"``: the workers keep one representative per orbit (the serial
    reduced search's result); ``por`` is refused (:func:`explorer.engines.options.refusal`).

    >>> from tests.toys import Grid
    >>> r = check_pbfs(Grid(4), Grid(4).properties(), workers=2, serial_below=3)
    >>> r.exit_reason.value, r.distinct_states, r.witnesses
    ('complete', 25, {'corner': 8})
    """
    return search(system, properties, CheckOptions.of("bfs", {**options, "workers": workers}))


def run(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    """The ``bfs`` engine with ``options.workers`` processes, behind :func:`explorer.api.check`.

    >>> from tests.toys import Grid
    >>> run(Grid(3), Grid(3).properties(), CheckOptions(workers=2)).distinct_states
    16
    """
    if SERIAL_BELOW_ENV in os.environ:  # test-only: fork the workers on small levels too
        o = BfsOptions.of(options.engine_options)
        options = replace(options, engine_options=replace(o, serial_below=int(os.environ[SERIAL_BELOW_ENV])))
    return search(system, properties, options)


def with_workers(
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
    """The parts :func:`explorer.engines.bfs.search` chose, searched level by level with a pool
    of workers as the expander (keys: Python hashes, or fingerprints with that visited set;
    ``eventually`` properties: the graph the workers record in ``work``); the result."""
    o = BfsOptions.of(options.engine_options)
    lean = isinstance(visited, FingerprintVisited)
    pack = o.pack if o.pack is not None else lean and statepack.ACTIVE  # memory first where it is lean
    live_dir = None
    if monitor.live:
        assert work is not None
        live_dir = work / "live"
        live_dir.mkdir(exist_ok=True)
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
