"""The ``spark`` engine's levels on disk, and counterexample paths rebuilt from them.

Example
-------
>>> import tempfile
>>> store = LevelStore(Path(tempfile.mkdtemp()))
>>> store.add(0, np.array([0]), np.array([7], dtype=np.uint64), np.zeros(1, dtype=np.uint64))
>>> store.get(0)[1].tolist(), store.count
([7], 1)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from explorer.engines.spark.fingerprints import FingerprintCollisionError
from explorer.engines.spark.partitions import IDX_BITS, IDX_MASK, Acc, Job

__all__ = [
    "REBALANCE_AT",
    "REBALANCE_FROM",
    "LevelStore",
    "balanced",
    "next_shares",
    "pick_winners",
    "rebuild_path",
]

#: the largest partition's share of a frontier over the mean above which the next level's
#: fresh candidates are re-dealt by fingerprint (shuffled) rather than kept where found
REBALANCE_AT = 1.15
#: a frontier smaller than this is never re-dealt: its level is cheap whatever its balance,
#: and a level without a shuffle is one Spark stage (the fixed cost of deep, narrow levels)
REBALANCE_FROM = 2_000


class LevelStore:
    """Per-level arrays on disk: fingerprints and keys of the states first seen at a level.

    ``level-NNNNN.npz`` holds ``fps`` (uint64), ``parent_fps`` (uint64) and ``keys``
    (int64: parent rank << 20 | successor index; for level 0 the index of the state
    in ``init_states()``), in rank order.
    """

    def __init__(self, run_dir: Path):
        self.dir = run_dir
        self.count = 0
        self._cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def path(self, level: int) -> Path:
        return self.dir / f"level-{level:05d}.npz"

    def add(self, level: int, keys: np.ndarray, fps: np.ndarray, parent_fps: np.ndarray) -> None:
        tmp = self.dir / f".level-{level:05d}.tmp.npz"
        np.savez(tmp, keys=keys, fps=fps, parent_fps=parent_fps)
        os.replace(tmp, self.path(level))
        self.count = max(self.count, level + 1)
        self._cache.pop(level, None)

    def get(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        if level not in self._cache:
            with np.load(self.path(level)) as z:
                self._cache[level] = (z["keys"], z["fps"])
        return self._cache[level]

    def forget(self) -> None:
        self._cache.clear()


def rebuild_path(job: Job, store: LevelStore, level: int, rank: int) -> list[tuple[Any, Any]]:
    """Replay the stored path to state ``rank`` of ``level``: [(action, state), ...].

    Each step re-runs ``successors`` and compares the fingerprint with the stored one.
    """
    idx: list[int] = []
    fps: list[int] = []
    r = rank
    for lv in range(level, 0, -1):
        keys, lfps = store.get(lv)
        k = int(keys[r])
        idx.append(k & IDX_MASK)
        fps.append(int(lfps[r]))
        r = k >> IDX_BITS
    keys0, fps0 = store.get(0)
    init_index, fp0 = int(keys0[r]), int(fps0[r])
    idx.reverse()
    fps.reverse()
    inits = list(job.system.init_states())
    s = inits[init_index] if init_index < len(inits) else None
    if s is None or job.fp(s) != fp0:
        raise FingerprintCollisionError(
            f"trace rebuild: initial state {init_index} does not have the stored fingerprint {fp0:016x} "
            "(a fingerprint collision, or a non-deterministic model)"
        )
    path: list[tuple[Any, Any]] = [(None, s)]
    for step, (i, want) in enumerate(zip(idx, fps), start=1):
        succ = list(job.system.successors(s))
        got = job.fp(succ[i][1]) if i < len(succ) else None
        if got != want:
            shown = "no such successor" if got is None else f"fingerprint {got:016x}"
            raise FingerprintCollisionError(
                f"trace rebuild: step {step} (successor {i}) gives {shown}, the search stored {want:016x} "
                "(a fingerprint collision, or a non-deterministic model)"
            )
        a, s = succ[i]
        path.append((a, s))
    return path


def pick_winners(summaries: list[tuple[Any, ...]]) -> tuple[Acc, np.ndarray, np.ndarray]:
    """A level's counters and its new states from the partitions' summaries.

    Each summary holds a partition's fresh candidates (keys, fingerprints, check
    hashes, action kinds and the kind names). A state found by several partitions
    is new once, with the smallest key (its first discovery in ``bfs`` order); the
    same fingerprint with different check hashes is a collision. Returns the merged
    counters (``new_by`` counted on the winners) and the winners' keys and
    fingerprints in key order, which is the next frontier's rank order.

    >>> mk = lambda k, f, c: (Acc(), np.array(k, np.int64), np.array(f, np.uint64),
    ...                       np.array(c, np.uint64), np.zeros(len(k), np.int32), ["step"], 0.0, 0)
    >>> acc, keys, fps = pick_winners([mk([5, 9], [70, 80], [1, 2]), mk([3], [80], [2])])
    >>> keys.tolist(), fps.tolist(), acc.new_by
    ([3, 5], [80, 70], {'step': 2})
    >>> pick_winners([mk([5], [70], [1]), mk([3], [70], [4])])
    Traceback (most recent call last):
    ...
    explorer.engines.spark.fingerprints.FingerprintCollisionError: fingerprint collision: two different states share fingerprint 0000000000000046 (found by two partitions, their check hashes differ); the counts of this run are not exact
    """
    acc = Acc()
    for x in summaries:
        acc.merge(x[0])
    kind_pos: dict[str, int] = {}
    remapped = []
    for x in summaries:
        table = np.array([kind_pos.setdefault(k, len(kind_pos)) for k in x[5]], dtype=np.int32)
        remapped.append(table[x[4]] if len(x[4]) else x[4].astype(np.int32))
    keys = np.concatenate([x[1] for x in summaries])
    fps = np.concatenate([x[2] for x in summaries])
    checks = np.concatenate([x[3] for x in summaries])
    kinds = np.concatenate(remapped)
    order = np.lexsort((keys, fps))
    f = fps[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = f[1:] != f[:-1]
    if not first.all():  # one fingerprint from several partitions: the same state?
        head = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
        c = checks[order]
        bad = np.nonzero(~first & (c != c[head]))[0]
        if len(bad):
            raise FingerprintCollisionError(
                f"fingerprint collision: two different states share fingerprint {int(f[bad[0]]):016x} "
                "(found by two partitions, their check hashes differ); the counts of this run are not exact"
            )
    win = order[first]
    win = win[np.argsort(keys[win], kind="stable")]
    names = list(kind_pos)
    counts = np.bincount(kinds[win], minlength=len(names)) if len(win) else np.zeros(len(names), np.int64)
    for name, n in zip(names, counts.tolist()):
        if n:
            acc.new_by[name] = acc.new_by.get(name, 0) + n
    return acc, keys[win], fps[win]


def balanced(shares: list[int]) -> bool:
    """Whether a frontier dealt ``shares`` (states per partition) may keep its next level's
    candidates where they are found: it is smaller than :data:`REBALANCE_FROM` states, or
    its largest share is at most :data:`REBALANCE_AT` times the mean.

    >>> balanced([5000, 5200]), balanced([9000, 1000]), balanced([1, 0]), balanced([0, 0])
    (True, False, True, True)
    """
    total = sum(shares)
    return total < REBALANCE_FROM or max(shares) * len(shares) <= REBALANCE_AT * total


def next_shares(
    summaries: list[tuple[Any, ...]], keys: np.ndarray, fps: np.ndarray, partitions: int, route: str
) -> list[int]:
    """The next frontier's states per partition: with ``route == "owner"`` the partition
    owning each new state's fingerprint, else (``"local"``) the partition whose fresh
    candidate won (a key belongs to one partition: its parent's).

    >>> mk = lambda k: (None, np.array(k, np.int64))
    >>> next_shares([mk([1, 4]), mk([2, 3])], np.array([1, 2, 4]), np.array([5, 6, 7], np.uint64), 2, "local")
    [2, 1]
    >>> next_shares([], np.array([1, 2, 4]), np.array([5, 6, 7], np.uint64), 2, "owner")
    [1, 2]
    """
    if route == "owner":
        return np.bincount((fps % np.uint64(partitions)).astype(np.int64), minlength=partitions).tolist()
    return [int(np.isin(x[1], keys, assume_unique=True).sum()) for x in summaries]
