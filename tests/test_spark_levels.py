"""The spark engine's level pieces that need no Spark: the visited copy, the frontier, the winners."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from explorer.engines.spark.fingerprints import (
    FingerprintCollisionError,
    check_fingerprint,
    state_fingerprint,
)
from explorer.engines.spark.levels import pick_winners
from explorer.engines.spark.partitions import IDX_BITS, Acc, LevelCtx, frontier_of, seen_before


@dataclass
class Held:
    """Stands for a broadcast: ``value`` is what the executors read."""

    value: Any


def _delta(fps: list[int], level: int, keys: list[int] | None = None) -> Held:
    a = np.array(fps, dtype=np.uint64)
    return Held((a, np.full(len(a), level, dtype=np.int32), np.array(keys or [], dtype=np.int64)))


def test_visited_copy_masks_later_levels_when_an_older_level_is_recomputed() -> None:
    deltas = [_delta([10, 30], 0), _delta([20], 1), _delta([40], 2)]
    probe = np.array([10, 20, 30, 40, 50], dtype=np.uint64)
    late = LevelCtx("run-a", 2, None, deltas, frozenset())
    assert seen_before(late, probe).tolist() == [True, True, True, True, False]
    # the same worker, now recomputing level 1 after a lost executor: level 2 is not visited yet
    early = LevelCtx("run-a", 1, None, deltas[:2], frozenset())
    assert seen_before(early, probe).tolist() == [True, True, True, False, False]
    # another run never sees this run's states
    other = LevelCtx("run-b", 0, None, [_delta([50], 0)], frozenset())
    assert seen_before(other, probe).tolist() == [False, False, False, False, True]


def test_frontier_keeps_the_winners_in_rank_order() -> None:
    k = lambda r, i: (r << IDX_BITS) | i  # noqa: E731
    # partition 1 received blocks from two generators; the driver's sorted keys pick winners
    block0 = pickle.dumps((np.array([k(0, 1), k(2, 0)], dtype=np.int64), ["a", "lost"]))
    block1 = pickle.dumps((np.array([k(1, 3)], dtype=np.int64), ["b"]))
    table = Held(np.array([k(0, 0), k(0, 1), k(1, 3), k(5, 0)], dtype=np.int64))
    ctx = LevelCtx("run-c", 4, table, [], frozenset())
    ranks, states = frontier_of(ctx, 1, [(1, ("B", 0, block1)), (1, ("B", 2, block0))])
    assert (ranks, states) == ([1, 2], ["a", "b"])


def _summary(keys: list[int], states: list[Any], fp: Any = state_fingerprint) -> tuple[Any, ...]:
    return (
        Acc(),
        np.array(keys, dtype=np.int64),
        np.array([fp(s) for s in states], dtype=np.uint64),
        np.array([check_fingerprint(s) for s in states], dtype=np.uint64),
        np.zeros(len(keys), dtype=np.int32),
        ["step"],
        0.0,
        0,
        None,
    )


def test_winner_is_the_first_discovery_across_partitions() -> None:
    acc, keys, fps = pick_winners([_summary([7, 9], ["x", "y"]), _summary([4], ["y"])])
    assert keys.tolist() == [4, 7] and fps.tolist() == [state_fingerprint("y"), state_fingerprint("x")]
    assert acc.new_by == {"step": 2}


def test_collision_across_partitions_is_detected_by_the_check_hash() -> None:
    same = lambda s: 99  # noqa: E731  two different states forced onto one fingerprint
    with pytest.raises(FingerprintCollisionError, match="fingerprint collision"):
        pick_winners([_summary([1], ["x"], same), _summary([2], ["y"], same)])
