"""A BFS level's states, in memory up to a batch and on disk beyond it.

:class:`LevelQueue` collects the new states of one level in order. The engine appends
to :attr:`LevelQueue.tail`, a plain list (the hot path stays a list append), and calls
:meth:`LevelQueue.spill_if_full` after each expanded state: a full tail (``batch``
states) is pickled to a file in the run's folder and emptied. Reading the level back
(:meth:`LevelQueue.batches`) yields the files' batches in order, each file deleted once
read, then the tail. So memory holds one batch being written and one being read,
whatever the width of the level. A level below ``batch`` states never touches the disk.

States are pickled (protocol 5) a batch at a time, so the sub-records a batch's states
share are written once and stay shared when read back.

Example
-------
>>> import tempfile
>>> q = LevelQueue(Path(tempfile.mkdtemp()), 1, batch=2)
>>> for s in range(5):
...     q.tail.append(s)
...     q.spill_if_full()
>>> len(q), len(q.files), [list(b) for b in q.batches()]
(5, 2, [[0, 1], [2, 3], [4]])
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["LevelQueue"]


class LevelQueue:
    """The states of level ``depth``: spilled batch files, then the in-memory ``tail``."""

    def __init__(self, folder: Path, depth: int, batch: int, files: list[Path] | None = None, size: int = 0):
        self.folder = Path(folder)
        self.depth = depth
        self.batch = max(1, batch)
        self.files: list[Path] = list(files or [])
        self.tail: list[Any] = []
        self._spilled = size  # states in the files (not counting a persisted tail)
        self._persisted_tail = False  # the last file is a copy of the tail

    def __len__(self) -> int:
        return self._spilled + len(self.tail)

    def _write(self, states: list[Any], sync: bool = False) -> Path:
        path = self.folder / f"L{self.depth:06d}-{len(self.files):06d}.pkl"
        with open(path, "wb") as f:
            pickle.dump(states, f, protocol=5)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        self.files.append(path)
        return path

    def spill_if_full(self) -> None:
        """Write the tail to a new file when it holds ``batch`` states."""
        if len(self.tail) >= self.batch:
            self.spill()

    def spill(self) -> None:
        """Write the tail to a new file and empty it (the same list object)."""
        self._write(self.tail)
        self._spilled += len(self.tail)
        self.tail.clear()

    def persist(self) -> list[Path]:
        """Every state on disk (the tail too, without dropping it from memory), synced:
        the files that hold the whole level, in order (for a snapshot)."""
        for p in self.files:
            with open(p, "rb") as f:
                os.fsync(f.fileno())
        if self.tail:
            self._write(self.tail, sync=True)
            self._persisted_tail = True
        return list(self.files)

    def batches(self) -> Iterator[list[Any]]:
        """The level's states batch by batch, in order; each file is deleted once read."""
        tail_on_disk = self._persisted_tail
        files = self.files[:-1] if tail_on_disk else self.files
        for p in files:
            with open(p, "rb") as f:
                states = pickle.load(f)
            os.unlink(p)
            yield states
        if tail_on_disk:
            os.unlink(self.files[-1])
        if self.tail:
            yield self.tail

    def discard(self) -> None:
        """Delete the files not read (a search that stopped in the middle)."""
        for p in self.files:
            if p.exists():
                p.unlink()
