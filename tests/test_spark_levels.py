"""The spark engine's level pieces that need no Spark: the visited copy, the frontier, the winners."""

from __future__ import annotations

import gc
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
from explorer.engines.spark.partitions import (
    _VISITED,
    IDX_BITS,
    Acc,
    Inline,
    Job,
    LevelCtx,
    frontier_of,
    pack_block,
    seen_before,
    step_partition,
)


@pytest.fixture(autouse=True)
def _unfreeze_after() -> Any:
    """A level task run in this process freezes the collector's survivors, as it does in a reused
    executor (``freeze_survivors``); unfreeze them after each test, so a later test in the same
    process starts with nothing frozen (``test_engine``'s collector test checks that count)."""
    yield
    gc.unfreeze()


@dataclass
class Held:
    """Stands for a broadcast: ``value`` is what the executors read."""

    value: Any


def _delta(fps: list[int], level: int, keys: list[int] | None = None) -> Held:
    a = np.array(fps, dtype=np.uint64)
    return Held((a, np.full(len(a), level, dtype=np.int32), np.array(keys or [], dtype=np.int64)))


def test_visited_copy_masks_later_levels_when_an_older_level_is_recomputed() -> None:
    deltas = [(0, _delta([10, 30], 0)), (1, _delta([20], 1)), (2, _delta([40], 2))]
    probe = np.array([10, 20, 30, 40, 50], dtype=np.uint64)
    late = LevelCtx("run-a", 2, None, deltas, frozenset())
    assert seen_before(late, probe).tolist() == [True, True, True, True, False]
    # the same worker, now recomputing level 1 after a lost executor: level 2 is not visited yet
    early = LevelCtx("run-a", 1, None, deltas[:2], frozenset())
    assert seen_before(early, probe).tolist() == [True, True, True, False, False]
    # another run never sees this run's states
    other = LevelCtx("run-b", 0, None, [(0, _delta([50], 0))], frozenset())
    assert seen_before(other, probe).tolist() == [False, False, False, False, True]


def _folded(fps: list[int], levels: list[int]) -> Held:
    return Held((np.array(fps, dtype=np.uint64), np.array(levels, dtype=np.int32)))


def test_visited_copy_takes_from_a_folded_part_only_the_levels_it_lacks() -> None:
    # levels 1-3 folded into one part after this worker had merged up to level 2
    _VISITED.clear()
    first = LevelCtx(
        "run-f", 2, None, [(0, _delta([10], 0)), (1, _delta([20], 1)), (2, _delta([30], 2))], frozenset()
    )
    probe = np.array([10, 20, 30, 40, 50], dtype=np.uint64)
    assert seen_before(first, probe).tolist() == [True, True, True, False, False]
    folded = [
        (0, _delta([10], 0)),
        (3, _folded([20, 30, 40], [1, 2, 3])),
        (4, Inline((np.array([50], np.uint64), np.array([4], np.int32)))),
    ]
    later = LevelCtx("run-f", 4, None, folded, frozenset())
    assert seen_before(later, probe).tolist() == [True] * 5
    vfps, vlv = _VISITED["run-f"][:2]
    assert vfps.tolist() == [10, 20, 30, 40, 50] and vlv.tolist() == [0, 1, 2, 3, 4]  # no state twice
    # a fresh worker (after a lost executor) rebuilds the same set from the folded parts
    _VISITED.clear()
    assert seen_before(LevelCtx("run-f", 3, None, folded, frozenset()), probe).tolist() == [
        True,
        True,
        True,
        True,
        False,
    ]
    assert _VISITED["run-f"][0].tolist() == [10, 20, 30, 40, 50]


def test_deltas_fold_narrow_levels_into_few_broadcasts() -> None:
    from explorer.engines.spark import deltas

    class Sc:
        made = 0

        def broadcast(self, value: Any) -> Held:
            Sc.made += 1
            return Held(value)

    d = deltas.Deltas(Sc())
    wide = deltas.INLINE_STATES + 1
    d.add(0, (np.arange(wide, dtype=np.uint64), np.zeros(wide, np.int32)))
    for lv in range(1, 41):
        keys = d.add(
            lv, (np.array([1000 + lv], np.uint64), np.array([lv], np.int32), np.array([lv], np.int64))
        )
        assert keys.value.tolist() == [lv]
    # 1 wide broadcast, then a fold every FOLD_AFTER narrow levels, each swallowing the last
    assert Sc.made == 1 + 40 // deltas.FOLD_AFTER
    assert len(d.parts) <= 2 + deltas.FOLD_AFTER
    his = [hi for hi, _ in d.parts]
    assert his == sorted(his) and his[-1] == 40
    fps = np.concatenate([h.value[0] for _, h in d.parts])
    lv = np.concatenate([h.value[1] for _, h in d.parts])
    assert len(fps) == wide + 40 and sorted(set(lv.tolist())) == list(range(41))


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


#: gc.isenabled() at each successors call of GcProbe (in this process)
_GC_SEEN: list[bool] = []


class GcProbe:
    """A counter 0..3 whose successors record whether the cyclic collector is on."""

    def init_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> list[tuple[str, int]]:
        _GC_SEEN.append(gc.isenabled())
        return [("inc", s + 1)] if s < 3 else []


def _executor_broadcast(tmp_path: Any, name: str, value: Any) -> Any:
    """``value`` as an executor sees a broadcast: PySpark's own class, loaded lazily from a file."""
    from pyspark.core.broadcast import Broadcast

    path = tmp_path / name
    path.write_bytes(pickle.dumps(value, protocol=5))
    return Broadcast(path=str(path))


def test_level_task_keeps_the_collector_paused_though_pyspark_broadcasts_enable_it(tmp_path: Any) -> None:
    # PySpark's Broadcast.load ends in gc.enable(); a task that read a broadcast after pausing
    # the collector expanded its whole frontier with it on (a third of the executor's CPU)
    class Sink:
        def add(self, x: Any) -> None:
            self.got = x

    job = Job(GcProbe(), [], state_fingerprint, True, 1)
    job_b = _executor_broadcast(tmp_path, "job", pickle.dumps(job, protocol=5))
    fps = np.array([state_fingerprint(0)], dtype=np.uint64)
    delta = _executor_broadcast(tmp_path, "delta", (fps, np.zeros(1, np.int32), np.zeros(0, np.int64)))
    ctx = LevelCtx("gc-probe", 0, None, [(0, delta)], frozenset(), Sink())
    _VISITED.pop("gc-probe", None)
    _GC_SEEN.clear()
    was = gc.isenabled()
    gc.enable()
    try:
        blocks = step_partition(job_b, ctx, 0, [("B", 1, pack_block(np.array([0], np.int64), [0]))])
        assert gc.isenabled()  # restored after the task
    finally:
        if not was:
            gc.disable()
    assert len(blocks) == 1 and _GC_SEEN == [False]
    (summary,) = ctx.summaries.got.values()
    assert len(summary[1]) == 1 and len(summary[9]) == 4  # one fresh candidate; CPU by phase


def test_a_level_task_leaves_its_survivors_out_of_the_collector_s_sight(tmp_path: Any) -> None:
    # PySpark's daemon calls gc.collect() after every task of a reused worker; the states a
    # worker keeps for its next task (the live block) must not be traversed by it each time
    from explorer.engines.spark import partitions

    class Sink:
        def add(self, x: Any) -> None:
            self.got = x

    job = Job(GcProbe(), [], state_fingerprint, True, 1)
    job_b = _executor_broadcast(tmp_path, "job", pickle.dumps(job, protocol=5))
    ctx = LevelCtx("freeze-probe", 0, None, [], frozenset(), Sink())
    partitions._TASKS[0] = 0  # not the task that unfreezes
    try:
        step_partition(job_b, ctx, 0, [("B", 1, pack_block(np.array([0], np.int64), [0]))])
        kept = [v for k, v in partitions._LIVE.items() if k[0] == "freeze-probe"]
        assert kept and gc.get_freeze_count() > 0
        tracked = gc.get_objects()
        assert not any(o is kept[0][1] for o in tracked)  # the kept states' list is frozen
        # every UNFREEZE_EVERY tasks one collection sees everything (cycles that died since)
        partitions._TASKS[0] = partitions.UNFREEZE_EVERY - 1
        step_partition(job_b, ctx, 0, [("B", 1, pack_block(np.array([0], np.int64), [0]))])
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
        for k in [k for k in partitions._LIVE if k[0] == "freeze-probe"]:
            del partitions._LIVE[k]


class Fan:
    """Each state n < 40 has the successors 2n + 1 and 2n + 2 (children of one parent)."""

    def init_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> list[tuple[str, int]]:
        return [("l", 2 * s + 1), ("r", 2 * s + 2)] if s < 40 else []


def test_a_level_task_sends_the_ends_of_its_rank_range_to_its_neighbours(tmp_path: Any) -> None:
    # partition 1 of 3 keeps the middle of its fresh candidates and sends its first ones
    # (whole parents) to partition 0 and its last ones to partition 2; the driver learns the cuts
    class Sink:
        def add(self, x: Any) -> None:
            self.got = x

    job = Job(Fan(), [], state_fingerprint, True, 3)
    job_b = _executor_broadcast(tmp_path, "job", pickle.dumps(job, protocol=5))
    ctx = LevelCtx("move-probe", 0, None, [], frozenset(), Sink(), ((0.0, 0.0), (0.25, 0.5), (0.0, 0.0)))
    frontier = [3, 4, 5, 6]  # ranks 0..3: eight fresh candidates, two per parent
    blocks = step_partition(job_b, ctx, 1, [("B", 1, pack_block(np.arange(4, dtype=np.int64), frontier))])
    (summary,) = ctx.summaries.got.values()
    assert summary[10] == (2, 4)
    sent = {q: unpack(payload) for q, (_, _, payload) in blocks}
    assert sorted(sent) == [0, 1, 2]
    assert sent[0] == [7, 8] and sent[1] == [9, 10] and sent[2] == [11, 12, 13, 14]


def unpack(payload: bytes) -> list[Any]:
    from explorer.engines.spark.partitions import unpack_block

    return list(unpack_block(payload)[1])


@pytest.mark.parametrize("seed", range(40))
def test_planned_moves_level_the_predicted_next_frontier(seed: int) -> None:
    # moving the planned fractions of each partition's predicted next frontier to its
    # neighbours gives every partition the mean (when no partition must send more than
    # it has); nothing moves while the prediction is within REBALANCE_AT of the mean
    import random

    from explorer.engines.spark.levels import REBALANCE_AT, REBALANCE_FROM, plan_moves

    rnd = random.Random(seed)
    parts = rnd.randint(2, 6)
    shares = [rnd.randint(0, 50_000) for _ in range(parts)]
    yields = [rnd.uniform(0.5, 1.5) for _ in range(parts)]
    moves = plan_moves(shares, yields)
    pred = [c * y for c, y in zip(shares, yields)]
    mean = sum(pred) / parts
    if sum(shares) < REBALANCE_FROM or max(pred) <= REBALANCE_AT * mean:
        assert moves is None
        return
    assert moves is not None and len(moves) == parts
    got = [0.0] * parts
    for p, (h, t) in enumerate(moves):
        assert h >= 0 and t >= 0 and h + t <= 1 + 1e-12
        assert (p > 0 or h == 0) and (p < parts - 1 or t == 0)
        got[p] += pred[p] * (1 - h - t)
        if h:
            got[p - 1] += pred[p] * h
        if t:
            got[p + 1] += pred[p] * t
    assert sum(got) == pytest.approx(sum(pred))
    if all(h < 1 and t < 1 and h + t < 1 for h, t in moves):
        assert got == pytest.approx([mean] * parts)
    else:  # a partition had to send all it had: the largest share still falls
        assert max(got) < max(pred)
