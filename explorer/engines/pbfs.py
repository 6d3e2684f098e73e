"""Multi-process ``bfs``: the same search and the same :class:`~explorer.core.CheckResult`.

:func:`check_pbfs` (``check_bfs(..., workers=N)``, ``kafka-mc check --workers N``) runs
the successor function, which is most of the time of the serial search, in ``N`` forked
worker processes, and keeps the bookkeeping of the search in the calling process (the
*driver*). The engine is the ``bfs`` one: :func:`explorer.engines.bfs.search` chooses the
parts for either loop (the monitor, the reduction, the budgets, the visited set, a
checkpointer); with workers the visited set holds keys
(:class:`~explorer.search.visited.HashVisited`, Python's hashes, or with
``visited="fingerprints"`` :class:`~explorer.search.visited.FingerprintVisited`), the
expander is a pool of :class:`~explorer.search.pool.Expander` processes, and the loop
:func:`explorer.search.levels.level_synchronous` (how a level runs is told there). This
module names the entry point for Python callers.

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

from collections.abc import Iterable
from typing import Any

from explorer.core import CheckResult, Property
from explorer.engines.base import CheckOptions
from explorer.engines.bfs import SERIAL_BELOW_ENV, HashCollisionError, run, search
from explorer.search.pool import PoolStats

__all__ = ["SERIAL_BELOW_ENV", "HashCollisionError", "PbfsStats", "check_pbfs", "run"]

#: what a run with workers measured about itself (``stats=``)
PbfsStats = PoolStats


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
