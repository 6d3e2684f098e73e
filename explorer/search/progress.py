"""The one-line progress display the engines write while they search.

Example
-------
>>> import io
>>> p = Progress(io.StringIO(), force=True, interval=0)
>>> p.update(2, 10, 40, 1000.0)
>>> p.stream.getvalue().strip()
'depth 2  frontier 10  distinct 40  1,000 states/s'

On a stream that is not a terminal (a log file, ``nohup``) it writes a whole line every
``log_every`` seconds instead, so a long run's log shows how it went:

>>> q = Progress(io.StringIO(), log_every=0)
>>> q.update(3, 5, 60, 900.0); q.update(4, 2, 70, 950.0); q.close()
>>> q.stream.getvalue().splitlines()
['depth 3  frontier 5  distinct 60  900 states/s', 'depth 4  frontier 2  distinct 70  950 states/s']
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """A one-line progress display on a stream (stderr by default).

    On a terminal (or with ``force=True``) it rewrites one line at most every ``interval``
    seconds and clears it when done. Elsewhere (``log_every`` not None) it appends a whole
    line every ``log_every`` seconds, the first after ``log_every`` seconds, so short runs
    write nothing; ``log_every=None`` keeps it silent there.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        interval: float = 0.5,
        force: bool = False,
        log_every: float | None = 60.0,
    ):
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.tty = force or bool(getattr(self.stream, "isatty", lambda: False)())
        self.log_every = None if self.tty else log_every
        self.enabled = self.tty or self.log_every is not None
        self._last = -1e18 if self.tty else time.monotonic()
        self._shown = False

    def show(self, line: str, force: bool = False) -> None:
        """Replace the progress line with ``line`` (rate-limited unless ``force``)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not self.tty:
            assert self.log_every is not None
            if now - self._last >= self.log_every:
                self._last = now
                self.stream.write(line + "\n")
                self.stream.flush()
            return
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
        """Erase the progress line (on a terminal)."""
        if self.tty and self._shown:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()
