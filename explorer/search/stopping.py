"""Stopping a search on a signal (Ctrl-C, SIGTERM) with a complete partial result.

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
from collections.abc import Iterator
from typing import Any

__all__ = ["clear_stop", "polled", "request_stop", "stop_on_signals", "stop_requested"]


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
