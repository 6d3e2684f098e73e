"""The ``spark`` engine's levels on disk, and counterexample paths rebuilt from them.

Example
-------
>>> import tempfile
>>> store = LevelStore(Path(tempfile.mkdtemp()), None)
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
from explorer.engines.spark.partitions import IDX_BITS, IDX_MASK, PHASE_STATE, Acc, Job

__all__ = [
    "REBALANCE_AT",
    "REBALANCE_FROM",
    "LevelStore",
    "Moves",
    "next_shares",
    "pick_winners",
    "plan_moves",
    "rebuild_path",
]

#: the largest partition's predicted share of the next frontier over the mean above which
#: some of a level's fresh candidates move to a neighbouring partition (a shuffle) rather
#: than all staying where found: at a wide level, a shuffle costs about what 3% of
#: imbalance does
REBALANCE_AT = 1.03
#: a frontier smaller than this never moves candidates: its level is cheap whatever its
#: balance, and a level without a shuffle is one Spark stage (the fixed cost of deep, narrow levels)
REBALANCE_FROM = 2_000

#: per partition, the fractions of its fresh candidates that go to the previous and to the
#: next partition: ``(head, tail)``
Moves = tuple[tuple[float, float], ...]


class LevelStore:
    """Per-level arrays on disk: fingerprints and keys of the states first seen at a level.

    ``level-NNNNN.npz`` holds ``fps`` (uint64), ``parent_fps`` (uint64) and ``keys``
    (int64: parent rank << 20 | successor index; for level 0 the index of the state
    in ``init_states()``), in rank order.

    For the result builder (:func:`explorer.search.serial.finish`) it is the visited set:
    :meth:`path` replays the path to the place of an event or a witness (``job``'s system).
    """

    def __init__(self, run_dir: Path, job: Job | None):
        self.dir = run_dir
        self.job = job
        self.count = 0
        self._cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def file(self, level: int) -> Path:
        """The file of ``level``."""
        return self.dir / f"level-{level:05d}.npz"

    def add(self, level: int, keys: np.ndarray, fps: np.ndarray, parent_fps: np.ndarray) -> None:
        tmp = self.dir / f".level-{level:05d}.tmp.npz"
        np.savez(tmp, keys=keys, fps=fps, parent_fps=parent_fps)
        os.replace(tmp, self.file(level))
        self.count = max(self.count, level + 1)
        self._cache.pop(level, None)

    def get(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        if level not in self._cache:
            with np.load(self.file(level)) as z:
                self._cache[level] = (z["keys"], z["fps"])
        return self._cache[level]

    def forget(self) -> None:
        self._cache.clear()

    def path(self, at: tuple[int, ...]) -> list[Any]:
        """The states (representatives, with symmetry) from an initial one to the state of the
        event key ``(level, rank, successor index, phase, property)`` or witness key ``(level,
        rank, successor index)``: the new state of a state event or witness, else the expanded
        one (level -1: the initial state of that index)."""
        assert self.job is not None
        level, r, i = at[:3]
        if level < 0:
            where = (0, r)
        elif len(at) == 3 or at[3] == PHASE_STATE:
            keys, _ = self.get(level + 1)
            where = (level + 1, int(np.searchsorted(keys, (r << IDX_BITS) | i)))
        else:
            where = (level, r)
        return [s for _, s in rebuild_path(self.job, self, *where)]

    def close(self) -> None:
        """The level files stay (the run directory is the caller's); their cache goes."""
        self.forget()


def rebuild_path(job: Job, store: LevelStore, level: int, rank: int) -> list[tuple[Any, Any]]:
    """Replay the stored path to state ``rank`` of ``level``: [(action, state), ...].

    Each step re-runs ``successors`` and compares the fingerprint with the stored one (with
    symmetry, of the successor's representative: the path holds representatives, which
    :func:`explorer.search.symmetry.build_trace_symmetric` maps back to real states).
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
    rep = (
        (lambda x: x) if job.canon is None else job.canon
    )  # the symmetry-reduced search keeps representatives
    s = rep(inits[init_index]) if init_index < len(inits) else None
    if s is None or job.fp(s) != fp0:
        raise FingerprintCollisionError(
            f"trace rebuild: initial state {init_index} does not have the stored fingerprint {fp0:016x} "
            "(a fingerprint collision, or a non-deterministic model)"
        )
    path: list[tuple[Any, Any]] = [(None, s)]
    for step, (i, want) in enumerate(zip(idx, fps), start=1):
        succ = list(job.system.successors(s))
        got = job.fp(rep(succ[i][1])) if i < len(succ) else None
        if got != want:
            shown = "no such successor" if got is None else f"fingerprint {got:016x}"
            raise FingerprintCollisionError(
                f"trace rebuild: step {step} (successor {i}) gives {shown}, the search stored {want:016x} "
                "(a fingerprint collision, or a non-deterministic model)"
            )
        a, s = succ[i][0], rep(succ[i][1])
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


def plan_moves(shares: list[int], yields: list[float] | None = None) -> Moves | None:
    """Which fresh candidates of the coming level should change partition, or None (all stay).

    Partitions hold contiguous rank ranges of the frontier, in partition order, and a
    partition's fresh candidates come out in rank order, so the frontier each keeps
    stays one contiguous range, and the children of neighbouring states (most of the
    states found twice in a level) stay together. ``shares`` are the frontier's states per
    partition and ``yields`` the new states each partition's candidates gave per frontier
    state at the previous level (they drift apart: a state found by two partitions is
    the lower one's). The next frontier predicted per partition, ``share * yield``, is
    levelled along the chain: partition ``p`` sends the last candidates of its range to
    ``p + 1`` or the first to ``p - 1``, a fraction ``(head, tail)`` of its own each, whole
    parents at a time. Nothing moves while the predicted largest share is at most
    :data:`REBALANCE_AT` times the mean, or the frontier is under :data:`REBALANCE_FROM` states.

    >>> plan_moves([5000, 5100]) is None, plan_moves([1, 0]) is None
    (True, True)
    >>> plan_moves([9000, 3000])
    ((0.0, 0.3333333333333333), (0.0, 0.0))
    >>> plan_moves([5000, 5000], [1.3, 1.0])  # partition 0 has been winning more
    ((0.0, 0.11538461538461539), (0.0, 0.0))
    >>> plan_moves([0, 0, 6000])  # one level moves one step along the chain
    ((0.0, 0.0), (0.0, 0.0), (0.6666666666666666, 0.0))
    """
    total = sum(shares)
    parts = len(shares)
    if parts < 2 or total < REBALANCE_FROM:
        return None
    if yields is None or len(yields) != parts:
        ys = [1.0] * parts
    else:
        known = [y for y, c in zip(yields, shares) if c and y > 0]
        fill = sum(known) / len(known) if known else 1.0
        ys = [y if y > 0 else fill for y in yields]
    pred = [c * y for c, y in zip(shares, ys)]
    mean = sum(pred) / parts
    if mean <= 0 or max(pred) <= REBALANCE_AT * mean:
        return None
    head = [0.0] * parts
    tail = [0.0] * parts
    before = 0.0
    for p in range(parts - 1):
        before += pred[p]
        flow = before - (p + 1) * mean  # from p to p + 1 (negative: from p + 1 to p)
        if flow > 0 and pred[p] > 0:
            tail[p] = min(1.0, flow / pred[p])
        elif flow < 0 and pred[p + 1] > 0:
            head[p + 1] = min(1.0, -flow / pred[p + 1])
    moves = []
    for h, t in zip(head, tail):
        if h + t > 1.0:
            h, t = h / (h + t), t / (h + t)
        moves.append((h, t))
    return tuple(moves)


def next_shares(
    summaries: list[tuple[Any, ...]], keys: np.ndarray, shares: list[int]
) -> tuple[list[int], list[float]]:
    """The next frontier's states per partition, and each partition's yield.

    A summary's candidates ``[0, head)`` went to the partition before it, ``[tail, len)``
    to the one after it (:func:`move_cuts`, ``summary[10]``), the rest stayed; a new state
    is the winning candidate of ``keys``. The yield of a partition is the new states its
    candidates gave per state of its frontier (``shares``; 0.0 for an empty one).

    >>> mk = lambda k, cut: (None, np.array(k, np.int64)) + (None,) * 8 + (cut,)
    >>> next_shares([mk([1, 4], (0, 2)), mk([2, 3], (0, 2))], np.array([1, 2, 4]), [2, 1])
    ([2, 1], [1.0, 1.0])
    >>> next_shares([mk([1, 4], (0, 1)), mk([2, 3], (0, 2))], np.array([1, 2, 4]), [2, 1])
    ([1, 2], [1.0, 1.0])
    """
    nxt = [0] * len(summaries)
    yields = []
    for p, x in enumerate(summaries):
        won = np.isin(x[1], keys, assume_unique=True)
        head, tail = x[10]
        if head:
            nxt[p - 1] += int(won[:head].sum())
        nxt[p] += int(won[head:tail].sum())
        if tail < len(won):
            nxt[p + 1] += int(won[tail:].sum())
        yields.append(float(won.sum()) / shares[p] if shares[p] else 0.0)
    return nxt, yields
