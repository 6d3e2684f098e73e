"""The one-line progress display the engines write while they search.

Example
-------
>>> import io
>>> p = Progress(io.StringIO(), force=True, interval=0)
>>> p.update(2, 10, 40, 1000.0)
>>> p.stream.getvalue().strip()
'depth 2  frontier 10  distinct 40  1,000 states/s'
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """A one-line progress display on a stream (stderr by default).

    It writes only when the stream is a terminal (or ``force=True``), at most every
    ``interval`` seconds, and clears its line when done.
    """

    def __init__(self, stream: TextIO | None = None, interval: float = 0.5, force: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.enabled = force or bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = -1e18
        self._shown = False

    def show(self, line: str, force: bool = False) -> None:
        """Replace the progress line with ``line`` (rate-limited unless ``force``)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        self.stream.write("\r" + line.ljust(78)[:78])
        self.stream.flush()
        self._shown = True

    def update(self, depth: int, frontier: int, distinct: int, rate: float, force: bool = False) -> None:
        """Show the current depth, frontier size, distinct states and states/s."""
        if self.enabled:
            self.show(
                f"depth {depth}  frontier {frontier:,}  distinct {distinct:,}  {rate:,.0f} states/s", force
            )

    def close(self) -> None:
        """Erase the progress line."""
        if self.enabled and self._shown:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()
