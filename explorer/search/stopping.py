"""Stopping a search: on a signal (Ctrl-C, SIGTERM) with a complete partial result, or on a
budget (:class:`Budgets`), and the book (:class:`LevelBook`) a level-by-level search keeps of
its levels and of why it ended.

The front ends install :func:`stop_on_signals` around a command: the first SIGINT or
SIGTERM sets a flag, which an engine that declares it polls (:func:`polled`) reads
where it already checks its budgets (every 256 states in ``bfs``), so it stops between
two states and returns a self-consistent result with exit reason ``interrupted``. Where
no engine polls (front-end code, engines that stop on ``KeyboardInterrupt``), and at a
second signal (a model stuck in its own code), the handler raises ``KeyboardInterrupt``.

Example
-------
>>> stop_requested() is None
True
>>> request_stop("SIGTERM"); stop_requested()
'SIGTERM'
>>> clear_stop(); stop_requested() is None
True
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Sized
from dataclasses import dataclass, field
from typing import Any

from explorer.core import ExitReason, LevelStats
from explorer.search.coverage import Coverage
from explorer.search.results import Explored

__all__ = [
    "INTERRUPTED",
    "NO_BUDGETS",
    "Budgets",
    "LevelBook",
    "clear_stop",
    "polled",
    "request_stop",
    "stop_on_signals",
    "stop_requested",
]

#: the cut reason of a level stopped by a signal (not a budget)
INTERRUPTED = "interrupted"


class _State:
    requested: str | None = None
    polling: int = 0


_STATE = _State()


def stop_requested() -> str | None:
    """The name of the signal that asked the search to stop (``SIGINT``, ``SIGTERM``), or None."""
    return _STATE.requested


def request_stop(name: str) -> None:
    """Ask every polling engine to stop (as the first signal does)."""
    if _STATE.requested is None:
        _STATE.requested = name


def clear_stop() -> None:
    """Forget an earlier stop request (a new command starts)."""
    _STATE.requested = None


@contextlib.contextmanager
def polled() -> Iterator[None]:
    """Within it, the running engine polls :func:`stop_requested`: the first signal only
    sets the flag instead of raising ``KeyboardInterrupt``."""
    _STATE.polling += 1
    try:
        yield
    finally:
        _STATE.polling -= 1


def _handler(signum: int, frame: Any) -> None:
    first = _STATE.requested is None
    request_stop(signal.Signals(signum).name)
    if not first or _STATE.polling == 0:
        raise KeyboardInterrupt


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGINT and SIGTERM stop the search (see the module doc); the previous handlers are
    restored on exit. Outside the main thread it does nothing (Python allows handlers there only)."""
    clear_stop()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, _handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


@dataclass(frozen=True)
class Budgets:
    """When a search stops before it is complete (None: no bound)."""

    max_depth: int | None = None
    max_states: int | None = None
    max_seconds: float | None = None


#: no budget at all: a search runs until it is complete
NO_BUDGETS = Budgets()


@dataclass
class LevelBook:
    """What a level-by-level search counts between its levels, and why it ended: the
    bookkeeping of the serial search, of ``--workers``' driver and of the spark engine alike.

    ``start`` is the search's start on its clock (a resumed search's: earlier by the
    time already spent); :meth:`explored` hands the counts to the result builder.

    >>> b = LevelBook(Budgets(max_depth=1), start=0.0)
    >>> b.initial(2, 2, 0.1); b.out_of_budget(), b.level_done(3, 5, 0.2), b.out_of_budget()
    (False, None, True)
    >>> b.generated, b.depth, [lv.frontier for lv in b.levels], b.budget
    (7, 1, [2, 3], 'max_depth')
    """

    budgets: Budgets
    start: float
    levels: list[LevelStats] = field(default_factory=list)
    generated: int = 0
    depth: int = 0
    budget: str | None = None
    reason: ExitReason = ExitReason.COMPLETE

    @property
    def deadline(self) -> float | None:
        """When ``max_seconds`` ends the search (None: never)."""
        s = self.budgets.max_seconds
        return None if s is None else self.start + s

    def exhausted(self, budget: str) -> None:
        """The search ends on ``budget`` (``max_depth``, ``max_states``, ``max_seconds``)."""
        self.budget, self.reason = budget, ExitReason.BUDGET_EXHAUSTED

    def interrupted(self) -> None:
        """The search ends on a signal (Ctrl-C, SIGTERM)."""
        self.budget, self.reason = None, ExitReason.INTERRUPTED

    def cut(self, why: str | None) -> None:
        """A level was cut: on a budget's name, on :data:`INTERRUPTED`, or (None) on a violation."""
        if why == INTERRUPTED:
            self.interrupted()
        elif why is not None:
            self.exhausted(why)

    def out_of_budget(self, now: float | None = None) -> bool:
        """Before a level: whether ``max_depth`` (and, given the time ``now``, ``max_seconds``)
        ends the search here, the budget noted."""
        if self.budgets.max_depth is not None and self.depth >= self.budgets.max_depth:
            self.exhausted("max_depth")
            return True
        deadline = self.deadline
        if now is not None and deadline is not None and now >= deadline:
            self.exhausted("max_seconds")
            return True
        return False

    def poll(
        self,
        known: int,
        rank: int,
        level: Sized,
        clock: Callable[[], float],
        progress: Any = None,
        crash: Callable[[str], None] | None = None,
    ) -> str | None:
        """After the state of ``rank`` in a level of ``len(level)`` states, ``known`` states seen:
        what stops the search there, a budget's name or :data:`INTERRUPTED` (None: go on). The
        clock, the signal flag, ``crash`` (the tests' crash points) and the ``progress`` line are
        read every 256 states; the caller notes the reason (:meth:`cut`). The one budget check
        inside a level of the serial search, ``--workers``' driver and spark's driver levels.

        >>> b = LevelBook(Budgets(max_states=10, max_seconds=5.0), start=0.0)
        >>> b.poll(9, 1, [], lambda: 9.0), b.poll(10, 1, [], lambda: 9.0), b.poll(9, 256, [], lambda: 9.0)
        (None, 'max_states', 'max_seconds')
        """
        max_states = self.budgets.max_states
        if max_states is not None and known >= max_states:
            return "max_states"
        if rank & 255:
            return None
        if crash is not None:
            crash("state")
        now = clock()
        deadline = self.deadline
        if deadline is not None and now >= deadline:
            return "max_seconds"
        if stop_requested() is not None:  # Ctrl-C or SIGTERM: stop between two states
            return INTERRUPTED
        if progress is not None:
            el = now - self.start
            progress.update(self.depth + 1, len(level), known, known / el if el else 0.0)
        return None

    def initial(self, new: int, generated: int, seconds: float) -> None:
        """Level 0: ``generated`` initial states, ``new`` of them distinct."""
        self.generated += generated
        self.levels.append(LevelStats(0, new, generated, new, seconds))

    def level_done(self, new: int, generated: int, seconds: float) -> None:
        """The level expanded from depth :attr:`depth`: ``new`` states first seen, ``generated``
        transitions (a level with neither is not listed)."""
        self.generated += generated
        if new or generated:
            self.levels.append(LevelStats(self.depth + 1, new, generated, new, seconds))
        self.depth += 1

    def explored(
        self,
        coverage: Coverage,
        labels: dict[Any, int],
        seconds: float,
        distinct: int,
        applied: dict[str, bool],
    ) -> Explored:
        """What the result builder needs of the search (:func:`explorer.search.results.exhaustive_result`)."""
        return Explored(
            self.reason,
            self.budget,
            self.levels,
            self.generated,
            coverage,
            labels,
            seconds,
            distinct,
            applied,
        )
