"""What runs on the executors of the ``spark`` engine: one partition's part of a level.

A level is :func:`expand_partition` (map side: successors of the partition's frontier,
transition checks, coverage, one block of candidates per target partition), one
shuffle, then :func:`merge_partition` (reduce side: drop visited fingerprints, keep the
smallest key per fingerprint, check the new states); :func:`truncated_partition`
recounts a level up to the state where ``bfs`` would have stopped. Counters travel as
:class:`Acc`; the system and properties as a broadcast :class:`Job`.

Example
-------
>>> a, b = Acc(generated=2, events={"p": (0, 3, 0, 1, 0)}), Acc(generated=1, events={"p": (0, 1, 0, 1, 0)})
>>> a.merge(b)
>>> a.generated, a.events["p"]
(3, (0, 1, 0, 1, 0))
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.core import Property, PropertyKind, action_kind, render_state
from explorer.engines.spark.fingerprints import FingerprintCollisionError
from explorer.search import label_counting

__all__ = [
    "IDX_BITS",
    "IDX_MASK",
    "PHASE_DEADLOCK",
    "PHASE_STATE",
    "PHASE_TRANSITION",
    "Acc",
    "Job",
    "SummaryParam",
    "check_state",
    "cloudpickle_dumps",
    "collision_error",
    "dumps",
    "expand_partition",
    "merge_partition",
    "partition_of",
    "pending_applies",
    "run_applies",
    "truncated_partition",
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

    def __post_init__(self) -> None:
        self.always = [
            (i, p.name, p.check) for i, p in enumerate(self.props) if p.kind is PropertyKind.ALWAYS
        ]
        self.trans = [
            (i, p.name, p.check) for i, p in enumerate(self.props) if p.kind is PropertyKind.TRANSITION
        ]
        self.reach = [(p.name, p.check) for p in self.props if p.kind is PropertyKind.REACHABLE]
        self.applies_state = [
            (p.name, p.applies) for p in self.props if p.kind is PropertyKind.ALWAYS and p.applies is not None
        ]
        self.applies_trans = [
            (p.name, p.applies)
            for p in self.props
            if p.kind is PropertyKind.TRANSITION and p.applies is not None
        ]
        self.deadlock_index = len(self.props)
        self.is_terminal = getattr(self.system, "is_terminal", None)

    def __getstate__(self) -> dict[str, Any]:
        keep = ("system", "props", "fp", "deadlock", "partitions")
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


def check_state(job: Job, acc: Acc, t: Any, level: int, r: int, i: int, pend: list[tuple[str, Any]]) -> None:
    """The checks ``bfs`` makes on a state when it is first seen."""
    for pidx, name, chk in job.always:
        if not chk(t):
            record_event(acc, name, (level, r, i, PHASE_STATE, pidx))
    if pend:
        run_applies(acc, pend, t)
    for name, chk in job.reach:
        if chk(t):
            w = acc.witnesses.get(name)
            if w is None or (level, r, i) < w:
                acc.witnesses[name] = (level, r, i)


def dumps(obj: Any) -> bytes:
    try:
        return pickle.dumps(obj, protocol=5)
    except (pickle.PicklingError, AttributeError, TypeError):
        from pyspark import cloudpickle

        return bytes(cloudpickle.dumps(obj, protocol=5))


def cloudpickle_dumps(obj: Any) -> bytes:
    from pyspark import cloudpickle

    return bytes(cloudpickle.dumps(obj, protocol=5))


def _records(iterator: Iterable[Any]) -> Iterator[tuple[str, Any]]:
    """Records of the state RDD, with the partition number dropped where present."""
    for rec in iterator:
        if isinstance(rec[0], int):
            yield rec[1]
        else:
            yield rec


def _frontier_ranks(keys: np.ndarray, level_keys: Any) -> np.ndarray:
    if level_keys is None:
        return keys  # keys are ranks already (the first Spark level)
    return np.searchsorted(level_keys.value, keys)


def expand_partition(
    job_b: Any, level: int, level_keys: Any, done: frozenset[str], index: int, iterator: Iterable[Any]
) -> Iterator[tuple[int, tuple[str, Any]]]:
    """Map side of a level: successors of the partition's frontier, one block per target."""
    job = _load_job(job_b)
    block = None
    for tag, payload in _records(iterator):
        if tag == "F":
            block = payload
    acc = Acc()
    nparts = job.partitions
    if block is not None:
        keys, _fps, states = pickle.loads(block)
        ranks = _frontier_ranks(keys, level_keys).tolist()
        successors, fp_of = label_counting(job.system, acc.labels) or job.system.successors, job.fp
        trans, pend_t = job.trans, pending_applies(job.applies_trans, done)
        enabled = acc.enabled
        kinds: dict[type, str] = {}
        kind_ids: dict[str, int] = {}
        out_keys: list[list[int]] = [[] for _ in range(nparts)]
        out_fps: list[list[int]] = [[] for _ in range(nparts)]
        out_kind: list[list[int]] = [[] for _ in range(nparts)]
        out_states: list[list[Any]] = [[] for _ in range(nparts)]
        local: dict[Any, None] = {}  # successors seen in this partition at this level
        local_fp: dict[int, Any] = {}
        generated = 0
        for r, s in zip(ranks, states):
            n = 0
            for a, t in successors(s):
                tp = type(a)
                kind = kinds.get(tp)
                if kind is None:
                    kind = kinds[tp] = action_kind(a)
                    if kind not in kind_ids:
                        kind_ids[kind] = len(kind_ids)
                enabled[kind] = enabled.get(kind, 0) + 1
                if trans:
                    for pidx, name, chk in trans:
                        if not chk(s, a, t):
                            record_event(acc, name, (level, r, n, PHASE_TRANSITION, pidx))
                    if pend_t:
                        run_applies(acc, pend_t, s, a, t)
                if t not in local:
                    f = fp_of(t)
                    other = local_fp.get(f)
                    if other is not None:
                        raise collision_error(f, other, t)
                    local[t] = None
                    local_fp[f] = t
                    q = f % nparts
                    out_keys[q].append((r << IDX_BITS) | n)
                    out_fps[q].append(f)
                    out_kind[q].append(kind_ids[kind])
                    out_states[q].append(t)
                n += 1
            if n > IDX_MASK:
                raise RuntimeError(f"a state has {n} successors; the spark engine handles at most {IDX_MASK}")
            generated += n
            if n == 0 and job.deadlock and not (job.is_terminal is not None and job.is_terminal(s)):
                record_event(acc, "deadlock", (level, r, 0, PHASE_DEADLOCK, job.deadlock_index))
        acc.generated = generated
        kind_table = list(kind_ids)
        for q in range(nparts):
            if out_keys[q]:
                blob = dumps(
                    (
                        np.array(out_keys[q], dtype=np.int64),
                        np.array(out_fps[q], dtype=np.uint64),
                        np.array(out_kind[q], dtype=np.int32),
                        kind_table,
                        out_states[q],
                    )
                )
                yield q, ("C", blob)
    yield index % nparts, ("A", acc)


def collision_error(f: int, a: Any, b: Any) -> FingerprintCollisionError:
    return FingerprintCollisionError(
        f"fingerprint collision: two different states share fingerprint {f:016x} "
        f"({render_state(a)!r} and {render_state(b)!r}); the counts of this run are not exact"
    )


def merge_partition(
    job_b: Any, level: int, done: frozenset[str], summaries: Any, index: int, iterator: Iterable[Any]
) -> Iterator[tuple[str, Any]]:
    """Reduce side of a level: dedup against the visited set, check new states."""
    job = _load_job(job_b)
    visited = np.zeros(0, dtype=np.uint64)
    acc = Acc()
    blocks = []
    for tag, payload in _records(iterator):
        if tag == "V":
            visited = pickle.loads(payload)
        elif tag == "C":
            blocks.append(pickle.loads(payload))
        elif tag == "A":
            acc.merge(payload)
    new_keys = np.zeros(0, dtype=np.int64)
    new_fps = np.zeros(0, dtype=np.uint64)
    new_states: list[Any] = []
    if blocks:
        keys = np.concatenate([b[0] for b in blocks])
        fps = np.concatenate([b[1] for b in blocks])
        kind_names: list[str] = []
        kind_pos: dict[str, int] = {}
        remapped = []
        for b in blocks:
            table = np.array([kind_pos.setdefault(k, len(kind_pos)) for k in b[3]], dtype=np.int32)
            remapped.append(table[b[2]] if len(b[2]) else b[2])
        kind_names = list(kind_pos)
        kinds = np.concatenate(remapped)
        states = [s for b in blocks for s in b[4]]
        if len(visited):
            pos = np.searchsorted(visited, fps)
            np.minimum(pos, len(visited) - 1, out=pos)
            fresh = np.nonzero(visited[pos] != fps)[0]
        else:
            fresh = np.arange(len(fps))
        order = fresh[np.lexsort((keys[fresh], fps[fresh]))]
        f = fps[order]
        first = np.ones(len(order), dtype=bool)
        first[1:] = f[1:] != f[:-1]
        if not first.all():  # the same fingerprint from several partitions: same state?
            head = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
            for d in np.nonzero(~first)[0].tolist():
                a, b = states[order[head[d]]], states[order[d]]
                if a != b:
                    raise collision_error(int(f[d]), a, b)
        win = order[first]
        win = win[np.argsort(keys[win], kind="stable")]
        new_keys, new_fps = keys[win], fps[win]
        new_by = acc.new_by
        pend_s = pending_applies(job.applies_state, done)
        for j, k, kid in zip(win.tolist(), new_keys.tolist(), kinds[win].tolist()):
            t = states[j]
            new_states.append(t)
            name = kind_names[kid]
            new_by[name] = new_by.get(name, 0) + 1
            check_state(job, acc, t, level, k >> IDX_BITS, k & IDX_MASK, pend_s)
        visited = np.sort(np.concatenate([visited, new_fps]), kind="stable")
    summaries.add({(level, index): (acc, new_keys, new_fps)})
    yield "S", None
    yield "F", dumps((new_keys, new_fps, new_states))
    yield "V", pickle.dumps(visited, protocol=5)


def truncated_partition(
    job_b: Any,
    level: int,
    level_keys: Any,
    done: frozenset[str],
    cut: int,
    new_keys_b: Any,
    index: int,
    iterator: Iterable[Any],
) -> Iterator[Acc]:
    """A level's counters over the frontier states of rank <= ``cut`` only (``bfs`` stopped there)."""
    job = _load_job(job_b)
    acc = Acc()
    block = None
    for tag, payload in _records(iterator):
        if tag == "F":
            block = payload
    if block is not None:
        keys, _fps, states = pickle.loads(block)
        ranks = _frontier_ranks(keys, level_keys).tolist()
        new = set(new_keys_b.value.tolist())
        enabled = acc.enabled
        kinds: dict[type, str] = {}
        pend_s, pend_t = pending_applies(job.applies_state, done), pending_applies(job.applies_trans, done)
        successors = label_counting(job.system, acc.labels) or job.system.successors
        for r, s in zip(ranks, states):
            if r > cut:
                break
            n = 0
            for a, t in successors(s):
                tp = type(a)
                kind = kinds.get(tp)
                if kind is None:
                    kind = kinds[tp] = action_kind(a)
                enabled[kind] = enabled.get(kind, 0) + 1
                for pidx, name, chk in job.trans:
                    if not chk(s, a, t):
                        record_event(acc, name, (level, r, n, PHASE_TRANSITION, pidx))
                if pend_t:
                    run_applies(acc, pend_t, s, a, t)
                if (r << IDX_BITS) | n in new:
                    acc.new_by[kind] = acc.new_by.get(kind, 0) + 1
                    check_state(job, acc, t, level, r, n, pend_s)
                n += 1
            acc.generated += n
            if n == 0 and job.deadlock and not (job.is_terminal is not None and job.is_terminal(s)):
                record_event(acc, "deadlock", (level, r, 0, PHASE_DEADLOCK, job.deadlock_index))
    yield acc


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
