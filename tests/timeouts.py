"""A wall-clock bound for tests that start external processes (Spark)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Raise TimeoutError in the main thread if the block runs longer than ``seconds``.

    >>> with time_limit(5):
    ...     pass
    """

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"test ran longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
