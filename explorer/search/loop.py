"""The one level-synchronous loop of the exhaustive searches, over a pluggable expander.

:func:`run_levels` drives a :class:`LevelExpander`: the serial search
(:class:`explorer.search.serial.SerialLevels`), ``--workers``' driver
(:class:`explorer.search.levels.PoolLevels`) and the spark engine
(:class:`explorer.engines.spark.driver.SparkExpander`) are its three expanders. The loop reads
the budgets between levels (:class:`~explorer.search.stopping.LevelBook`) and stops when the
:class:`~explorer.search.monitor.PropertyMonitor` says so; how a level is expanded, where its
states live and how its successors are merged against the visited set is the expander's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from explorer.search.monitor import PropertyMonitor
from explorer.search.stopping import LevelBook

__all__ = ["LevelExpander", "run_levels"]


class LevelExpander(Protocol):
    """The expander of a level-by-level search, as :func:`run_levels` drives it: it holds the
    frontier, expands it a level at a time and merges the successors against its visited set
    (the level's counts to the :class:`LevelBook`, its events to the :class:`PropertyMonitor`,
    which stops the search)."""

    def initial(self) -> None:
        """Level 0: the initial states (or a checkpoint's frontier), checked and noted."""
        ...

    def pending(self) -> int:
        """How many states the next level expands (0: the search is complete)."""
        ...

    def between(self) -> None:
        """At a level boundary, before the budgets are read (a checkpoint, a move to more processes)."""
        ...

    def expand_level(self) -> None:
        """Expand the frontier: the next frontier, its counts noted (:meth:`LevelBook.level_done`)."""
        ...

    def done(self) -> None:
        """The loop ended without a signal or an error (a complete search, a budget, a violation)."""
        ...

    def interrupted(self) -> None:
        """A signal ended the search in the middle of a level (the level's work dropped)."""
        ...

    def close(self) -> None:
        """Release what the expander holds (processes, sessions), whatever ended the search."""
        ...


def run_levels(
    exp: LevelExpander, book: LevelBook, monitor: PropertyMonitor, now: Callable[[], float] | None = None
) -> None:
    """The one level-synchronous loop: after ``exp.initial()``, ``exp`` expands level after level until its frontier is
    empty, the ``monitor`` stops the search, or a budget of ``book`` ends it (``max_seconds``
    read between levels when ``now`` is the clock), then ``exp.done()``. A signal arriving as
    ``KeyboardInterrupt`` ends it as interrupted; any other exception closes the expander and
    is raised (else closing it is the caller's, once it has read what it needs).

    >>> class Count:  # a chain of five states, one level each
    ...     n = 5
    ...     def initial(self): book.initial(1, 1, 0.0)
    ...     def pending(self): return self.n
    ...     def between(self): pass
    ...     def expand_level(self): self.n -= 1; book.level_done(1, 1, 0.0)
    ...     def done(self): pass
    ...     def interrupted(self): pass
    ...     def close(self): pass
    >>> from explorer.search.stopping import Budgets
    >>> book = LevelBook(Budgets(max_depth=3), start=0.0)
    >>> run_levels(Count(), book, PropertyMonitor([])); book.depth, book.budget
    (3, 'max_depth')
    """
    try:
        exp.initial()
        while exp.pending() and not monitor.stop:
            exp.between()
            if book.out_of_budget(None if now is None else now()):
                break
            exp.expand_level()
        exp.done()
    except KeyboardInterrupt:
        book.interrupted()
        monitor.stop = True
        exp.interrupted()
    except BaseException:
        exp.close()
        raise
