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
from explorer.engines.spark.partitions import IDX_BITS, IDX_MASK, Job

__all__ = ["LevelStore", "rebuild_path"]


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
