"""What runs on the executors of the ``spark`` engine: one partition's part of a level.

A level is :func:`step_partition`: the partition's frontier (:func:`frontier_of`:
its winners, picked from the blocks sent to it with the level's sorted keys),
successors, transition checks, coverage, fingerprints, the drop of states already
visited (:func:`seen_before`, this worker's copy of the visited set), the checks of
the fresh candidates, and their packed blocks (:func:`pack_block`: one kept in the
partition, or one per owner partition);
:func:`truncated_partition` recounts a level up to the state where ``bfs`` would have
stopped. Counters travel as :class:`Acc`; the system and properties as a broadcast
:class:`Job`; the level's parameters as a :class:`LevelCtx`.

Example
-------
>>> a, b = Acc(generated=2, events={"p": (0, 3, 0, 1, 0)}), Acc(generated=1, events={"p": (0, 1, 0, 1, 0)})
>>> a.merge(b)
>>> a.generated, a.events["p"]
(3, (0, 1, 0, 1, 0))
"""

from __future__ import annotations

import bisect
import functools
import gc
import pickle
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.core import Property, action_kind, render_state
from explorer.engines.spark.fingerprints import FingerprintCollisionError, check_fingerprint
from explorer.search import label_counting
from explorer.search.live_graph import LiveRecorder
from explorer.search.monitor import CheckTables
from explorer.search.statepack import dumps_states, loads_states

__all__ = [
    "IDX_BITS",
    "IDX_MASK",
    "PHASE_DEADLOCK",
    "PHASE_STATE",
    "PHASE_TRANSITION",
    "Acc",
    "Inline",
    "Job",
    "LevelCtx",
    "SummaryParam",
    "check_deadlock",
    "check_state",
    "cloudpickle_dumps",
    "collision_error",
    "dumps",
    "expand_ranked",
    "frontier_of",
    "move_cuts",
    "pack_block",
    "partition_of",
    "pending_applies",
    "record_event",
    "run_applies",
    "seen_before",
    "step_partition",
    "truncated_partition",
    "unpack_block",
]

#: bits of a key that hold the successor index (the rest hold the parent's rank)
IDX_BITS = 20
IDX_MASK = (1 << IDX_BITS) - 1
#: the phase of an event key: a transition, a new state, a deadlock
PHASE_TRANSITION, PHASE_STATE, PHASE_DEADLOCK = 0, 1, 2


@dataclass
class Job:
    """What executors need: the system, the properties and the fingerprint function."""

    system: Any
    props: list[Property]
    fp: Callable[[Any], int]
    deadlock: bool
    partitions: int
    #: the symmetry reduction's representative function (None: states kept as they are)
    canon: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        c = CheckTables(self.props)
        self.always, self.trans, self.reach, self.live = c.always, c.trans, c.reach, c.live
        self.trans_by_type = c.trans_by_type
        self.trans_table = c.trans_by_type.table
        self.applies_state, self.applies_trans = c.applies_state, c.applies_trans
        self.deadlock_index = len(self.props)
        self.check_fp = check_fingerprint
        self.is_terminal = getattr(self.system, "is_terminal", None)

    def __getstate__(self) -> dict[str, Any]:
        keep = ("system", "props", "fp", "deadlock", "partitions", "canon")
        return {k: self.__dict__[k] for k in keep}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self.__post_init__()


@dataclass
class Acc:
    """Counters of (part of) a level; events are the smallest key per property.

    An event key is ``(level, rank, successor index, phase, property index)``; a
    witness key ``(level, rank, successor index)``; level -1 holds initial states.
    """

    generated: int = 0
    enabled: dict[str, int] = field(default_factory=dict)
    new_by: dict[str, int] = field(default_factory=dict)
    applies: dict[str, int] = field(default_factory=dict)
    labels: dict[Any, int] = field(default_factory=dict)  #: coverage labels (``successors_labelled``)
    events: dict[str, tuple[int, int, int, int, int]] = field(default_factory=dict)
    witnesses: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    def merge(self, o: Acc) -> None:
        self.generated += o.generated
        for mine, theirs in (
            (self.enabled, o.enabled),
            (self.new_by, o.new_by),
            (self.applies, o.applies),
            (self.labels, o.labels),
        ):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        for name, key in o.events.items():
            if name not in self.events or key < self.events[name]:
                self.events[name] = key
        for name, wkey in o.witnesses.items():
            if name not in self.witnesses or wkey < self.witnesses[name]:
                self.witnesses[name] = wkey


_JOB_CACHE: dict[int, tuple[bytes, Job]] = {}


def _load_job(job_b: Any) -> Job:
    """The job of a broadcast (cloudpickled bytes), unpickled once per Python worker."""
    blob = job_b.value
    hit = _JOB_CACHE.get(id(blob))
    if hit is not None and hit[0] is blob:
        return hit[1]
    job: Job = pickle.loads(blob)
    _JOB_CACHE.clear()
    _JOB_CACHE[id(blob)] = (blob, job)
    return job


def record_event(acc: Acc, name: str, key: tuple[int, int, int, int, int]) -> None:
    old = acc.events.get(name)
    if old is None or key < old:
        acc.events[name] = key


def pending_applies(items: list[tuple[str, Any]], done: frozenset[str]) -> list[tuple[str, Any]]:
    """The ``applies`` predicates still to evaluate (each only until it first holds)."""
    return [item for item in items if item[0] not in done]


def run_applies(acc: Acc, pending: list[tuple[str, Any]], *args: Any) -> None:
    for item in list(pending):
        if item[1](*args):
            acc.applies[item[0]] = 1
            pending.remove(item)


def check_state(
    job: Job, acc: Acc, t: Any, level: int, r: int, i: int, pend: list[tuple[str, Any]], reach: list[Any]
) -> None:
    """The checks ``bfs`` makes on a state when it is first seen. ``pend`` and ``reach`` are
    the ``applies`` and ``reachable`` checks still to make, each dropped once it held: the
    callers check states in key order, so a witness met first has the smallest key."""
    for pidx, name, chk in job.always:
        if not chk(t):
            record_event(acc, name, (level, r, i, PHASE_STATE, pidx))
    if pend:
        run_applies(acc, pend, t)
    if reach:
        for item in list(reach):
            if item[2](t):
                w = acc.witnesses.get(item[1])
                if w is None or (level, r, i) < w:
                    acc.witnesses[item[1]] = (level, r, i)
                reach.remove(item)


def check_transition(
    job: Job,
    acc: Acc,
    record: Callable[[str, Any], None],
    pend: list[tuple[str, Any]],
    s: Any,
    a: Any,
    t: Any,
    level: int,
    r: int,
    n: int,
) -> None:
    """The checks ``bfs`` makes on a transition (the ``n``-th successor of the state of rank ``r``):
    its violations go to ``record(name, key)``, the ``applies`` that held to ``acc``."""
    groups = job.trans_table.get(type(a))  # the groups a step of this action type runs
    if groups is None:
        groups = job.trans_by_type.for_type(type(a))
    for guard, checks in groups:
        if guard is None or guard(s, a, t):
            for pidx, name, chk in checks:
                if not chk(s, a, t):
                    record(name, (level, r, n, PHASE_TRANSITION, pidx))
    if pend:
        run_applies(acc, pend, s, a, t)


def check_deadlock(job: Job, acc: Acc, s: Any, level: int, r: int) -> None:
    """The check ``bfs`` makes on a state without successors (of rank ``r``): a deadlock
    unless the system calls it terminal."""
    if job.deadlock and not (job.is_terminal is not None and job.is_terminal(s)):
        record_event(acc, "deadlock", (level, r, 0, PHASE_DEADLOCK, job.deadlock_index))


def dumps(obj: Any) -> bytes:
    try:
        return pickle.dumps(obj, protocol=5)
    except (pickle.PicklingError, AttributeError, TypeError):
        from pyspark import cloudpickle

        return bytes(cloudpickle.dumps(obj, protocol=5))


def pack_block(keys: np.ndarray, states: list[Any]) -> bytes:
    """A block of fresh candidates for another partition: their keys and their states.

    The keys array is pickled as it is; the states are packed by
    :func:`explorer.search.statepack.dumps_states` (the C state packer: a few times
    faster than pickle, which cost as much as computing the successors), or the whole
    ``(keys, states)`` goes through (cloud)pickle when a state's class cannot be
    named. :func:`unpack_block` reads both.

    >>> keys, states = unpack_block(pack_block(np.array([7], dtype=np.uint64), [(1, None)]))
    >>> keys.tolist(), states
    ([7], [(1, None)])
    """
    try:
        return pickle.dumps((keys, dumps_states(states)), protocol=5)
    except (pickle.PicklingError, AttributeError, TypeError):
        return dumps((keys, states))


def unpack_block(payload: bytes) -> tuple[np.ndarray, list[Any]]:
    """The ``(keys, states)`` of a block :func:`pack_block` made."""
    keys, part = pickle.loads(payload)
    return keys, loads_states(part) if isinstance(part, bytes) else part


def cloudpickle_dumps(obj: Any) -> bytes:
    from pyspark import cloudpickle

    return bytes(cloudpickle.dumps(obj, protocol=5))


def _records(iterator: Iterable[Any]) -> Iterator[Any]:
    """Records of the state RDD, with the partition number dropped where present."""
    for rec in iterator:
        if isinstance(rec[0], int):
            yield rec[1]
        else:
            yield rec


@dataclass
class LevelCtx:
    """What a level's tasks need besides the job (small: broadcasts travel as handles).

    ``token`` names the run (worker caches are keyed by it); ``level_keys`` is the
    broadcast of the frontier's sorted keys (None at the first Spark level, whose
    blocks hold exactly the frontier, keyed by rank); ``deltas`` are the visited
    set's parts, ``(highest level, holder)`` in level order with disjoint level
    ranges, each holder's ``value`` being ``(fingerprints, levels, ...)`` of the states
    first seen at those levels (the first: every state the driver saw before the
    search moved to Spark). A holder is a broadcast, or an :class:`Inline` value
    carried in the task itself when it is small (no broadcast to make or fetch).
    """

    token: str
    level: int
    level_keys: Any
    deltas: list[tuple[int, Any]]
    done: frozenset[str]
    summaries: Any = None
    #: where the fresh candidates go: None, all kept by the partition that found them (one
    #: block, no shuffle); else per partition the fractions ``(head, tail)`` of its
    #: candidates, in rank order, sent to the previous and the next partition (a shuffle;
    #: ``levels.plan_moves``)
    moves: tuple[tuple[float, float], ...] | None = None


@dataclass(frozen=True)
class Inline:
    """A small level value carried inside the task's closure, read like a broadcast.

    >>> Inline(3).value
    3
    """

    value: Any


#: per Python worker: the run's visited set, ``token -> (sorted fps, their levels, highest level merged)``
_VISITED: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
#: per Python worker: live candidates a task produced, ``(token, level, partition) -> (keys, states)``
_LIVE: dict[tuple[str, int, int], tuple[np.ndarray, list[Any]]] = {}


def visited_upto(ctx: LevelCtx) -> tuple[np.ndarray, np.ndarray]:
    """This worker's copy of the visited set, with every delta of ``ctx`` merged in.

    The sorted fingerprints and, aligned, the level each was first seen at; a task
    of an older level (recomputed after a lost executor) masks the later levels out.
    """
    fps, lv, upto = _VISITED.get(ctx.token, (np.zeros(0, np.uint64), np.zeros(0, np.int32), -1))
    fresh = [(hi, d) for hi, d in ctx.deltas if hi > upto]
    if fresh:
        if ctx.token not in _VISITED:
            _VISITED.clear()  # an earlier run's set
        add = [d.value for _, d in fresh]
        dfps = np.concatenate([a[0] for a in add])
        dlv = np.concatenate([a[1] for a in add])
        # a part folded from several levels may hold some this copy already has
        keep = dlv > upto
        dfps, dlv = dfps[keep], dlv[keep]
        order = np.argsort(dfps, kind="stable")
        dfps, dlv = dfps[order], dlv[order]
        pos = np.searchsorted(fps, dfps)
        fps, lv = np.insert(fps, pos, dfps), np.insert(lv, pos, dlv)
        _VISITED[ctx.token] = (fps, lv, max(hi for hi, _ in fresh))
    return fps, lv


def seen_before(ctx: LevelCtx, fps: np.ndarray) -> np.ndarray:
    """A mask over ``fps``: which were first seen at level ``ctx.level`` or earlier."""
    vfps, vlv = visited_upto(ctx)
    if not len(vfps) or not len(fps):
        return np.zeros(len(fps), dtype=bool)
    pos = np.searchsorted(vfps, fps)
    np.minimum(pos, len(vfps) - 1, out=pos)
    return (vfps[pos] == fps) & (vlv[pos] <= ctx.level)


def frontier_of(ctx: LevelCtx, index: int, iterator: Iterable[Any]) -> tuple[list[int], list[Any]]:
    """The ranks and states of partition ``index``'s frontier, in rank order.

    The blocks are the fresh candidates every partition sent here (those whose
    fingerprint this partition owns), winners and states another partition
    discovered first alike; the level's sorted keys pick the winners and give their
    ranks. The block this worker made for itself is reused live (no unpacking)
    when Spark runs the partition here again; the others are unpacked.
    """
    key_parts: list[np.ndarray] = []
    states: list[Any] = []
    for tag, gen, payload in _records(iterator):
        if tag != "B":
            continue
        live = _LIVE.get((ctx.token, ctx.level, index)) if gen == index else None
        keys, part = live if live is not None else unpack_block(payload)
        key_parts.append(keys)
        states.extend(part)
    if not states:
        return [], []
    keys = np.concatenate(key_parts)
    if ctx.level_keys is None:
        order = np.argsort(keys, kind="stable")  # keys are ranks (the first Spark level)
        return keys[order].tolist(), [states[j] for j in order.tolist()]
    table = ctx.level_keys.value
    if not len(table):
        return [], []
    pos = np.searchsorted(table, keys)
    np.minimum(pos, len(table) - 1, out=pos)
    won = np.nonzero(table[pos] == keys)[0]
    won = won[np.argsort(pos[won], kind="stable")]
    return pos[won].tolist(), [states[j] for j in won.tolist()]


def step_partition(
    job_b: Any, ctx: LevelCtx, index: int, iterator: Iterable[Any]
) -> list[tuple[int, tuple[str, int, bytes]]]:
    """One partition's part of a level: expand its frontier, keep the fresh candidates.

    Successors are fingerprinted; those first seen at an earlier level (this
    worker's copy of the visited set) are dropped, the rest (the first of each
    state in this partition) are checked as new states and packed once: kept in
    this partition (no shuffle) or, the first or last of them in rank order when
    ``ctx.moves`` says so, sent to the previous or next partition (the shuffle that
    balances the partitions). Only their keys, fingerprints, check hashes and
    action kinds go to the driver (in the summary), which picks the winner of each
    fingerprint (the smallest key) and so the next frontier's ranks.
    """
    # states are immutable records: no reference cycles, so the cyclic collector
    # would only re-scan them (bfs pauses it as well). Every broadcast is read first:
    # PySpark's Broadcast.load ends in an unconditional gc.enable(), which would turn
    # the collector back on for the whole expansion (a third of the executor's CPU).
    read_broadcasts(job_b, ctx)
    paused = gc.isenabled()
    gc.disable()
    try:
        return _step(job_b, ctx, index, iterator)
    finally:
        freeze_survivors()
        if paused:
            gc.enable()


#: a reused Python worker's level tasks so far (see :func:`freeze_survivors`)
_TASKS = [0]
#: every this many tasks, the survivors are left unfrozen for one collection
UNFREEZE_EVERY = 32


def freeze_survivors() -> None:
    """Move every object alive at the end of a level task out of the collector's sight.

    PySpark's daemon runs a full ``gc.collect()`` after each task of a reused worker,
    and a worker keeps the live candidates of the blocks it made (``_LIVE``, millions
    of tuples on a wide level) and the model's tables: that collection traversed them
    all after every task (a quarter of the Python workers' CPU on controller-ref,
    sampled with py-spy). Frozen objects are still freed by reference counting (the
    states are immutable records without cycles); a cycle among them that dies later
    waits for the next unfrozen collection, every ``UNFREEZE_EVERY`` tasks.

    >>> import gc
    >>> freeze_survivors(); gc.get_freeze_count() > 0 or _TASKS[0] % UNFREEZE_EVERY == 0
    True
    >>> gc.unfreeze()
    """
    _TASKS[0] += 1
    if _TASKS[0] % UNFREEZE_EVERY == 0:
        gc.unfreeze()
    else:
        gc.freeze()


def read_broadcasts(job_b: Any, ctx: LevelCtx) -> None:
    """Load every broadcast value a level task reads (each is loaded once per Python worker).

    PySpark's ``Broadcast.load`` unpickles with the collector paused and then calls
    ``gc.enable()`` whatever the state before, so a first read in the middle of a task
    would switch the cyclic collector back on; :func:`step_partition` calls this before
    pausing it.
    """
    _load_job(job_b)
    if ctx.level_keys is not None:
        ctx.level_keys.value  # noqa: B018 - loads and caches the broadcast
    visited_upto(ctx)


def _step(
    job_b: Any, ctx: LevelCtx, index: int, iterator: Iterable[Any]
) -> list[tuple[int, tuple[str, int, bytes]]]:
    cpu0 = time.process_time()
    job = _load_job(job_b)
    level = ctx.level
    ranks, states = frontier_of(ctx, index, iterator)
    cpu_frontier = time.process_time()
    acc = Acc()
    fp_of = job.fp
    kind_ids: dict[str, int] = {}
    c_keys: list[int] = []
    c_fps: list[int] = []
    c_kind: list[int] = []
    c_states: list[Any] = []
    local: dict[Any, int] = {}  # successors seen in this partition at this level: their fingerprints
    local_fp: dict[int, Any] = {}

    def kind_id(kind: str) -> int:
        i = kind_ids.get(kind)
        if i is None:
            i = kind_ids[kind] = len(kind_ids)
        return i

    def candidate(key: int, t: Any, kind: str) -> bool:
        """The first of each successor in this partition is a candidate (checked once fresh)."""
        if t not in local:
            f = fp_of(t)
            other = local_fp.get(f)
            if other is not None:
                raise collision_error(f, other, t)
            local[t] = f
            local_fp[f] = t
            c_keys.append(key)
            c_fps.append(f)
            c_kind.append(kind_id(kind))
            c_states.append(t)
        return False

    live = live_recorder(job)
    expand_ranked(
        job, acc, level, ranks, states, ctx.done, [], candidate, None, live, kind_id, local.__getitem__
    )
    cpu_expand = time.process_time()
    local.clear()  # freed now (the closures keep the names)
    local_fp.clear()
    keys = np.array(c_keys, dtype=np.int64)
    fps = np.array(c_fps, dtype=np.uint64)
    fresh = np.nonzero(~seen_before(ctx, fps))[0]
    keys, fps = keys[fresh], fps[fresh]
    kind_arr = np.array(c_kind, dtype=np.int32)[fresh]
    new_states = [c_states[j] for j in fresh.tolist()]
    c_states.clear()
    # the checks bfs makes on a new state: on every fresh candidate (a state found by
    # several partitions is checked in each; the smallest event key is the winner's)
    pend_s, reach = pending_applies(job.applies_state, ctx.done), list(job.reach)
    check_hashes = np.zeros(len(new_states), dtype=np.uint64)
    check_of = job.check_fp
    for j, (k, t) in enumerate(zip(keys.tolist(), new_states)):
        check_state(job, acc, t, level, k >> IDX_BITS, k & IDX_MASK, pend_s, reach)
        check_hashes[j] = check_of(t)
    cpu_check = time.process_time()
    for old in [k for k in _LIVE if k[0] != ctx.token or k[1] <= level]:
        del _LIVE[old]
    # each fresh candidate is packed once: kept here, or (the first or last few, in rank
    # order, when the driver moves some) sent to the previous or next partition
    cuts = (0, len(keys)) if ctx.moves is None else move_cuts(keys, ctx.moves[index])
    blocks = []
    for q, lo, hi in ((index - 1, 0, cuts[0]), (index, cuts[0], cuts[1]), (index + 1, cuts[1], len(keys))):
        if hi <= lo:
            continue
        part = (keys[lo:hi], new_states[lo:hi])
        if q == index:
            _LIVE[(ctx.token, level + 1, index)] = part
        blocks.append((q, ("B", index, pack_block(*part))))
    edges = live.arrays() if live is not None else None
    nbytes = sum(len(b[1][2]) for b in blocks)
    cpu_end = time.process_time()
    phases = (
        cpu_frontier - cpu0,  # the frontier: blocks unpacked, winners picked
        cpu_expand - cpu_frontier,  # successors, transition checks, fingerprints
        cpu_check - cpu_expand,  # visited-set drop, state checks of the fresh candidates
        cpu_end - cpu_check,  # blocks packed (and edges, with eventually properties)
    )
    summary = (
        acc,
        keys,
        fps,
        check_hashes,
        kind_arr,
        list(kind_ids),
        cpu_end - cpu0,
        nbytes,
        edges,
        phases,
        cuts,
    )
    ctx.summaries.add({(level, index): summary})
    return blocks


def move_cuts(keys: np.ndarray, move: tuple[float, float]) -> tuple[int, int]:
    """Where a partition's fresh candidates (``keys`` ascending) are cut for ``move``:
    ``[0, head)`` go to the previous partition, ``[tail, len)`` to the next, the rest stay.
    A cut never separates the children of one parent: it is the parent boundary nearest
    to the fraction asked for.

    >>> keys = np.array([(0 << IDX_BITS) | 0, (0 << IDX_BITS) | 1, (3 << IDX_BITS) | 0, (5 << IDX_BITS) | 2])
    >>> move_cuts(keys, (0.0, 0.5)), move_cuts(keys, (0.0, 1.0)), move_cuts(keys, (0.5, 0.0))
    ((0, 2), (0, 0), (2, 4))
    >>> move_cuts(keys, (0.25, 0.0)), move_cuts(keys, (0.0, 0.75))  # ties: the cut that moves fewer
    ((0, 4), (0, 2))
    """
    n = len(keys)
    if not n:
        return 0, 0
    parent = keys >> IDX_BITS

    def align(i: int, prefer_left: bool) -> int:
        # the parent boundary nearest to i (a tie goes the way that moves fewer)
        if i <= 0 or i >= n:
            return min(max(i, 0), n)
        left = int(np.searchsorted(parent, parent[i], side="left"))
        right = int(np.searchsorted(parent, parent[i], side="right"))
        if i - left == right - i:
            return left if prefer_left else right
        return left if i - left < right - i else right

    head = align(round(move[0] * n), True) if move[0] > 0 else 0
    tail = align(n - round(move[1] * n), False) if move[1] > 0 else n
    return head, max(head, tail)


def live_recorder(job: Job) -> Any:
    """A recorder of goal/trigger bits and edges when the job has ``eventually`` properties."""
    if not job.live:
        return None
    return LiveRecorder(job.live, job.fp)


def collision_error(f: int, a: Any, b: Any) -> FingerprintCollisionError:
    return FingerprintCollisionError(
        f"fingerprint collision: two different states share fingerprint {f:016x} "
        f"({render_state(a)!r} and {render_state(b)!r}); the counts of this run are not exact"
    )


def truncated_partition(
    job_b: Any, ctx: LevelCtx, cut: int, new_keys_b: Any, index: int, iterator: Iterable[Any]
) -> Iterator[Acc]:
    """A level's counters over the frontier states of rank <= ``cut`` only (``bfs`` stopped there)."""
    job = _load_job(job_b)
    acc = Acc()
    ranks, states = frontier_of(ctx, index, iterator)
    k = bisect.bisect_right(ranks, cut)
    if k:
        new = set(new_keys_b.value.tolist())
        expand_ranked(
            job,
            acc,
            ctx.level,
            ranks[:k],
            states[:k],
            ctx.done,
            list(job.reach),
            lambda key, t, kind: key in new,
        )
    yield acc


def expand_ranked(
    job: Job,
    acc: Acc,
    level: int,
    ranks: Iterable[int],
    states: Iterable[Any],
    done: frozenset[str],
    reach: list[Any],
    new: Callable[[int, Any, str], bool],
    after: Callable[[int], bool] | None = None,
    live: LiveRecorder | None = None,
    kind_id: Callable[[str], int] | None = None,
    edge_fp: Callable[[Any], int] | None = None,
) -> None:
    """Expand ``states`` (of ``ranks``, ascending) as ``bfs`` does, counting into ``acc``: coverage
    by kind, the transition checks, each successor (its representative) handed to ``new(key,
    successor, kind)``, checked as a new state (:func:`check_state`, with ``reach`` the
    witnesses still sought) when that says so, deadlocks; ``after(rank)``, after each state,
    ends the expansion when true; ``live`` records the goal bits and the edges (targets'
    fingerprints by ``edge_fp``, default ``job.fp``; kinds numbered by ``kind_id``). Spark's
    level tasks (:func:`step_partition`), the driver's levels and :func:`truncated_partition`
    all run it."""
    enabled, new_by = acc.enabled, acc.new_by
    kinds: dict[type, str] = {}
    pend_s, pend_t = pending_applies(job.applies_state, done), pending_applies(job.applies_trans, done)
    record = functools.partial(record_event, acc)
    successors, fp_of, canon = (
        label_counting(job.system, acc.labels) or job.system.successors,
        job.fp,
        job.canon,
    )
    trans, target_fp = job.trans, edge_fp or fp_of
    for r, s in zip(ranks, states):
        n = 0
        if live is not None:
            fs = fp_of(s)
            live.state(fs, s)
        for a, t in successors(s):
            tp = type(a)
            kind = kinds.get(tp)
            if kind is None:
                kind = kinds[tp] = action_kind(a)
            enabled[kind] = enabled.get(kind, 0) + 1
            if trans:
                check_transition(job, acc, record, pend_t, s, a, t, level, r, n)
            if canon is not None:  # the checks saw t; the visited set keeps its representative
                t = canon(t)
            if new((r << IDX_BITS) | n, t, kind):
                new_by[kind] = new_by.get(kind, 0) + 1
                check_state(job, acc, t, level, r, n, pend_s, reach)
            if live is not None:
                assert kind_id is not None
                live.edge(fs, a, target_fp(t), kind_id(kind))
            n += 1
        if n > IDX_MASK:
            raise RuntimeError(f"a state has {n} successors; the spark engine handles at most {IDX_MASK}")
        acc.generated += n
        if n == 0:
            check_deadlock(job, acc, s, level, r)
        if after is not None and after(r):
            break


class SummaryParam:
    """Accumulates per-partition level summaries as ``{(level, partition): summary}``.

    A recomputed partition (after a lost executor) sends the same summary again, so
    merging by key is idempotent.
    """

    def zero(self, value: dict[Any, Any]) -> dict[Any, Any]:
        return {}

    def addInPlace(self, a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, Any]:
        a.update(b)
        return a


def partition_of(k: int) -> int:
    """The partition function: records are keyed by their partition number already."""
    return k
