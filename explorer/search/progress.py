"""The one-line progress display the engines write while they search.

Example
-------
>>> import io
>>> p = Progress(io.StringIO(), force=True, interval=0)
>>> p.update(2, 10, 40, 1000.0)
>>> p.stream.getvalue().strip()
'depth 2  frontier 10  distinct 40  1,000 states/s'

On a stream that is not a terminal (a log file, ``nohup``, CI) it writes a whole line every
``log_every`` seconds instead (60 by default, ``KAFKA_MC_PROGRESS_EVERY`` to change it), with
the time since the start and the process's memory, so a long run's log shows how it went:

>>> q = Progress(io.StringIO(), log_every=0)
>>> q.update(3, 5, 60, 900.0); q.update(4, 2, 70, 950.0); q.close()
>>> print(q.stream.getvalue())  # doctest: +ELLIPSIS
depth 3  frontier 5  distinct 60  900 states/s  (... s, ... MB)
depth 4  frontier 2  distinct 70  950 states/s  (... s, ... MB)
<BLANKLINE>

:meth:`note` writes a line of its own (a proof obligation done, an entry started): on a
terminal it replaces the live line, elsewhere it is always written.
"""

from __future__ import annotations

import math
import os
import resource
import sys
import time
from typing import TextIO

__all__ = ["PROGRESS_EVERY_ENV", "Progress", "eta", "log_every_from_env", "memory_mb"]

#: seconds between two progress lines off a terminal (default 60)
PROGRESS_EVERY_ENV = "KAFKA_MC_PROGRESS_EVERY"


def log_every_from_env(default: float = 60.0) -> float:
    """``KAFKA_MC_PROGRESS_EVERY`` as seconds (``default`` when unset); ValueError naming it
    when it is not a finite number >= 0.

    >>> os.environ.pop(PROGRESS_EVERY_ENV, None) and None; log_every_from_env()
    60.0
    """
    raw = os.environ.get(PROGRESS_EVERY_ENV)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{PROGRESS_EVERY_ENV}={raw!r}: a number of seconds >= 0")
    return value


def memory_mb() -> float:
    """This process's resident memory in MB (its peak where /proc is missing).

    >>> memory_mb() > 0
    True
    """
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def eta(distinct: int, rate: float, expected: int | None) -> str:
    """The progress line's estimate of the time left, when the state count to expect is known
    (a previous run's): the share done and the seconds left at the current rate.

    >>> eta(500, 100.0, 2000), eta(2500, 100.0, 2000), eta(5, 100.0, None)
    ('  25% of ~2,000, ETA 15 s', '  past the ~2,000 expected', '')
    >>> eta(1000, 10.0, 100_000)
    '  1% of ~100,000, ETA 2.8 h'
    """
    if not expected or rate <= 0:
        return ""
    if distinct > expected:
        return f"  past the ~{expected:,} expected"
    left = (expected - distinct) / rate
    when = (
        f"{left:.0f} s" if left < 120 else f"{left / 60:.0f} min" if left < 7200 else f"{left / 3600:.1f} h"
    )
    return f"  {distinct / expected:.0%} of ~{expected:,}, ETA {when}"


class Progress:
    """A one-line progress display on a stream (stderr by default).

    On a terminal (or with ``force=True``) it rewrites one line at most every ``interval``
    seconds and clears it when done. Elsewhere (``log_every`` not None) it appends a whole
    line every ``log_every`` seconds (by default ``KAFKA_MC_PROGRESS_EVERY``, else 60), the
    first after ``log_every`` seconds, so short runs write nothing; ``log_every=None`` keeps it
    silent there.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        interval: float = 0.5,
        force: bool = False,
        log_every: float | None = -1.0,
    ):
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.tty = force or bool(getattr(self.stream, "isatty", lambda: False)())
        if log_every is not None and log_every < 0:  # the default: the environment's, else 60 s
            log_every = log_every_from_env()
        self.log_every = None if self.tty else log_every
        self._t0 = time.monotonic()
        self.enabled = self.tty or self.log_every is not None
        self._last = -1e18 if self.tty else time.monotonic()
        self._shown = False
        #: the distinct states the search is expected to meet (a previous run's count), for an ETA
        self.expected: int | None = None

    def show(self, line: str, force: bool = False) -> None:
        """Replace the progress line with ``line`` (rate-limited unless ``force``)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not self.tty:
            assert self.log_every is not None
            if now - self._last >= self.log_every:
                self._last = now
                self.stream.write(f"{line}  ({now - self._t0:,.0f} s, {memory_mb():,.0f} MB)\n")
                self.stream.flush()
            return
        if not force and now - self._last < self.interval:
            return
        self._last = now
        self.stream.write("\r" + line.ljust(78)[:78])
        self.stream.flush()
        self._shown = True

    def note(self, line: str) -> None:
        """Write ``line`` now: as the live line on a terminal, as a log line elsewhere."""
        if not self.enabled:
            return
        if self.tty:
            self.show(line, force=True)
            return
        self.stream.write(f"{line}  ({time.monotonic() - self._t0:,.0f} s, {memory_mb():,.0f} MB)\n")
        self.stream.flush()

    def update(self, depth: int, frontier: int, distinct: int, rate: float, force: bool = False) -> None:
        """Show the current depth, frontier size, distinct states and states/s."""
        if self.enabled:
            self.show(
                f"depth {depth}  frontier {frontier:,}  distinct {distinct:,}  {rate:,.0f} states/s"
                + eta(distinct, rate, self.expected),
                force,
            )

    def close(self) -> None:
        """Erase the progress line (on a terminal)."""
        if self.tty and self._shown:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()
