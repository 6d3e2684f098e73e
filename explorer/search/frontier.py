"""A BFS level's states: the first ones in memory, the rest on disk.

:class:`LevelQueue` collects the new states of one level in order. The engine appends
to :attr:`LevelQueue.tail`, a plain list (the hot path stays a list append), and calls
:meth:`LevelQueue.spill` after an expanded state once the tail holds
:attr:`LevelQueue.threshold` states. The first ``limit`` states of the level stay in
memory (the *head*); every later ``chunk`` states are written to a file in the run's
folder. Reading the level back (:meth:`LevelQueue.batches`) yields the head, then the
files' batches in order (each file deleted once read), then the tail. So memory holds at
most ``limit + chunk`` states of a level, whatever its width, and a level of ``W`` states
writes only its ``W - limit`` last ones to disk (a level below ``limit`` never does).

States are packed a batch at a time (:mod:`explorer.search.statepack`: data only, never a
pickle, since a checkpoint's frontier files may come from another machine), so the
sub-records a batch's states share are written once and stay shared when read back.

Example
-------
>>> import tempfile
>>> q = LevelQueue(Path(tempfile.mkdtemp()), 1, limit=2, chunk=2)
>>> for s in range(7):
...     q.tail.append(s)
...     if len(q.tail) >= q.threshold:
...         q.spill()
>>> len(q), len(q.files), [list(b) for b in q.batches()]
(7, 2, [[0, 1], [2, 3], [4, 5], [6]])
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from explorer.search import safeio
from explorer.search.codec import UnsafeFileError
from explorer.search.iopath import naming
from explorer.search.statepack import dumps_states, loads_states

__all__ = ["LevelQueue", "read_batch"]

#: states per batch file
CHUNK = 10_000


def read_batch(path: Path) -> list[Any]:
    """The states of one batch file (``ValueError`` naming the file if it is not one)."""
    try:
        return loads_states(Path(path).read_bytes())
    except ValueError as e:
        raise UnsafeFileError(f"{path}: {e}") from None


class LevelQueue:
    """The states of level ``depth``: the in-memory head, spilled batch files, the tail."""

    def __init__(
        self,
        folder: Path,
        depth: int,
        limit: int,
        files: list[Path] | None = None,
        size: int = 0,
        chunk: int = CHUNK,
    ):
        self.folder = Path(folder)
        self.depth = depth
        self.limit = max(1, limit)
        self.chunk = max(1, min(chunk, self.limit))
        self.head: list[Any] = []
        self.files: list[Path] = list(files or [])
        self.tail: list[Any] = []
        self._spilled = size  # states in the files (not counting persisted copies)
        self._copies: list[Path] = []  # files written by persist() of states kept in memory
        self._written = 0

    def __len__(self) -> int:
        return len(self.head) + self._spilled + len(self.tail)

    @property
    def threshold(self) -> int:
        """The tail's length at which :meth:`spill` is due."""
        return self.chunk if self.head or self.files else self.limit

    def _write(self, states: list[Any], sync: bool = False) -> Path:
        path = self.folder / f"L{self.depth:06d}-{self._written:06d}.bin"
        self._written += 1
        with naming(path), safeio.create(path) as f:  # a link at the name replaced, not written through
            f.write(dumps_states(states))
            if sync:
                f.flush()
                os.fsync(f.fileno())
        return path

    def spill(self) -> None:
        """The first time: the tail becomes the head (kept in memory); later: the tail goes
        to a new file. Either way the engine continues with a new, empty :attr:`tail`."""
        if not self.head and not self.files:
            self.head = self.tail
        else:
            self.files.append(self._write(self.tail))
            self._spilled += len(self.tail)
        self.tail = []

    def persist(self) -> list[Path]:
        """Every state on disk (head and tail written too, but kept in memory), synced: the
        files that hold the whole level, in order (for a snapshot)."""
        for p in self.files:
            with open(p, "rb") as f:
                os.fsync(f.fileno())
        head = [self._write(self.head, sync=True)] if self.head else []
        tail = [self._write(self.tail, sync=True)] if self.tail else []
        self._copies = head + tail
        return head + self.files + tail

    def batches(self) -> Iterator[list[Any]]:
        """The level's states batch by batch, in order; each file is deleted once read."""
        for p in self._copies:
            os.unlink(p)
        self._copies = []
        if self.head:
            head, self.head = self.head, []
            yield head
        for p in self.files:
            states = read_batch(p)
            os.unlink(p)
            yield states
        if self.tail:
            yield self.tail

    def discard(self) -> None:
        """Delete the files not read (a search that stopped in the middle)."""
        for p in [*self.files, *self._copies]:
            if p.exists():
                p.unlink()
