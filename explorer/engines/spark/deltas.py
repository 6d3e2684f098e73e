"""The visited set's deltas as the spark engine's level tasks receive them, and the
persisted level RDDs.

A level's new fingerprints (with their levels and the level's sorted keys) are the part
of the visited set each Python worker merges into its copy (``partitions.visited_upto``);
:class:`Deltas` decides which travel as broadcasts and which inside the tasks.

Example
-------
>>> d = Deltas(None)
>>> d.add(3, (np.array([9], np.uint64), np.array([3], np.int32), np.array([4], np.int64))).value.tolist()
[4]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from explorer.engines.spark.partitions import Inline

__all__ = ["FOLD_AFTER", "FOLD_STATES", "INLINE_STATES", "Deltas", "KeysOf", "persist", "storage_level"]


class KeysOf:
    """The sorted keys of a level, read from the level's delta broadcast (its third item)."""

    def __init__(self, delta: Any):
        self.delta = delta

    @property
    def value(self) -> np.ndarray:
        keys: np.ndarray = self.delta.value[2]
        return keys


#: a delta of at most this many states travels inside the tasks (no broadcast)
INLINE_STATES = 2048
#: this many trailing inline deltas are folded into one broadcast, together with the
#: small parts before them (up to ``FOLD_STATES`` states in all)
FOLD_AFTER = 8
FOLD_STATES = 1 << 16


class Deltas:
    """The visited set's parts as the level tasks receive them: ``(highest level, holder)``.

    A level's delta is ``(fingerprints, levels, keys)``. A wide one is a broadcast; a
    narrow one (``INLINE_STATES``) travels inside the level's tasks as an
    :class:`~explorer.engines.spark.partitions.Inline`, so a narrow level makes no
    broadcast and the tasks fetch none. Every ``FOLD_AFTER`` inline parts are folded,
    with the small parts just before them, into one broadcast, so the list the tasks
    carry stays short however deep the search goes. A worker's copy merges only the
    parts above the highest level it has (``partitions.visited_upto``). Folded parts
    are not destroyed before the end: a recomputed older level still reads them.

    >>> d = Deltas(None)
    >>> h = d.add(1, (np.array([5], np.uint64), np.array([1], np.int32), np.array([0], np.int64)))
    >>> [hi for hi, _ in d.parts], h.value.tolist()
    ([1], [0])
    """

    def __init__(self, sc: Any):
        self.sc = sc
        self.parts: list[tuple[int, Any]] = []
        #: per part: its fingerprints and levels while it is small enough to fold, else None
        self.small: list[tuple[np.ndarray, np.ndarray] | None] = []
        self.made: list[Any] = []  # every broadcast made here (destroyed at the end)

    def add(self, hi: int, value: tuple[np.ndarray, ...]) -> Any:
        """Add the delta of the levels up to ``hi``; returns a holder of its keys
        (``value[2]``) for the next level's tasks, when it has them."""
        n = len(value[0])
        if n <= INLINE_STATES:
            holder: Any = Inline(value)
            keys: Any = Inline(value[2]) if len(value) > 2 else None
        else:
            holder = self._broadcast(value)
            keys = KeysOf(holder) if len(value) > 2 else None
        self.parts.append((hi, holder))
        self.small.append((value[0], value[1]) if n <= FOLD_STATES else None)
        self._fold()
        return keys

    def _broadcast(self, value: Any) -> Any:
        b = self.sc.broadcast(value)
        self.made.append(b)
        return b

    def _fold(self) -> None:
        inline = 0
        for _, h in reversed(self.parts):
            if not isinstance(h, Inline):
                break
            inline += 1
        if inline < FOLD_AFTER:
            return
        start, total = len(self.parts), 0
        while start > 0:
            sm = self.small[start - 1]
            if sm is None or total + len(sm[0]) > FOLD_STATES:
                break
            total += len(sm[0])
            start -= 1
        if len(self.parts) - start < 2:
            return
        run = [x for x in self.small[start:] if x is not None]
        fps = np.concatenate([x[0] for x in run])
        lv = np.concatenate([x[1] for x in run])
        hi = self.parts[-1][0]
        del self.parts[start:], self.small[start:]
        self.parts.append((hi, self._broadcast((fps, lv))))
        self.small.append((fps, lv) if len(fps) <= FOLD_STATES else None)


def storage_level() -> Any:
    from pyspark import StorageLevel

    return StorageLevel.MEMORY_AND_DISK


def persist(rdd: Any, jlevel: Any) -> Any:
    """``rdd.persist(MEMORY_AND_DISK)`` with the JVM's storage level made once per run
    (PySpark builds a new one on every call: a few Py4J round trips per level)."""
    rdd.is_cached = True
    rdd._jrdd.persist(jlevel)
    return rdd
