"""The ``spark`` engine: the ``bfs`` search as Spark jobs, with the same answers.

The search is the one :func:`explorer.bfs.check_bfs` makes, level by level, and it
returns the same :class:`~explorer.core.CheckResult`: the same distinct and generated
counts, per-level frontiers, coverage, property statuses, and the same shortest
counterexamples (the very same traces: parents are chosen as ``bfs`` chooses them).

How a level runs
----------------
Every state of a BFS level has a *rank*, its position in the order in which ``bfs``
would have found it; a new state's *key* is ``(parent rank, successor index)`` of the
first transition (in that order) that reaches it, packed into one int64. States live
in ``P`` partitions by fingerprint modulo ``P``. One persisted RDD holds, per
partition, three records: a summary, the frontier block (keys, fingerprints, states)
and the visited block (a sorted ``uint64`` array of fingerprints). A level is

1. *expand* (map side): each partition runs ``successors`` on its frontier in rank
   order, checks ``transition`` properties, counts coverage, fingerprints every
   successor (:func:`explorer.encoding.fingerprint`), keeps the smallest key per
   fingerprint and sends one block of candidates to each partition;
2. one shuffle (``partitionBy`` with the identity on the partition number), then a
   partitioner-aware union with the previous level's RDD, so partition ``p`` sees its
   own visited set next to its candidates and the visited set is never shuffled;
3. *merge*: drop visited fingerprints, keep the smallest key per fingerprint, check
   ``always`` and ``reachable`` properties on the new states, append them to the
   visited set.

The driver collects each partition's summary (counters, the smallest event key per
property, the new keys and fingerprints), sorts the new keys into ranks (broadcast to
the next level), and writes ``level-NNNNN.npz`` (fingerprint, parent fingerprint and
key of every new state, in rank order) under the run directory. Counterexamples are
rebuilt from those files: the path of keys is followed back to an initial state and
then replayed forward through ``successors``, every step's fingerprint compared with
the stored one (a mismatch raises :class:`FingerprintCollisionError`).

When the first violation (without ``keep_going``) or ``max_states`` stops ``bfs``
in the middle of a level, the level is re-evaluated up to that state (a second small
job), so even the counts of a stopped search equal those of ``bfs``. ``max_seconds``
is checked between levels and cancels a running level at the deadline (counts then
stop at the last whole level).

Small levels run in the driver (``local_frontier``), exactly as ``bfs`` does, with
fingerprints; the search moves to Spark once a frontier reaches that size. The
persisted RDD is checkpointed reliably every ``checkpoint_every`` Spark levels, which
cuts its lineage; a lost executor's partitions are recomputed from the last
checkpoint.

Example
-------
>>> from tests.toys import Grid
>>> g = Grid(3, limit=3)
>>> r = check_spark(g, g.properties(), master="local[2]")  # doctest: +SKIP
>>> r.engine, r.distinct_states, r.violations[0].length  # doctest: +SKIP
('spark', 10, 3)
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import pickle
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from explorer import encoding, speedups
from explorer.bfs import Progress, coverage_of, declared_labels, label_counting
from explorer.core import (
    CheckResult,
    ExitReason,
    LevelStats,
    Property,
    PropertyKind,
    TraceStep,
    Violation,
    action_kind,
    config_to_dict,
    diff_states,
    render_state,
)
from explorer.encoding import fingerprint

__all__ = [
    "FingerprintCollisionError",
    "SparkSetupError",
    "check_java",
    "check_spark",
    "collision_odds",
    "probe_master",
    "spark_session",
    "state_fingerprint",
]

#: bits of a key that hold the successor index (the rest hold the parent's rank)
IDX_BITS = 20
IDX_MASK = (1 << IDX_BITS) - 1
#: the minimum Java major version Spark 4 runs on
JAVA_MAJOR = 17
_PHASE_TRANSITION, _PHASE_STATE, _PHASE_DEADLOCK = 0, 1, 2


class SparkSetupError(Exception):
    """Spark cannot be used (no Java 17, unreachable master, no executor): one line.

    The CLI prints it as a usage error (exit code 2).
    """


class FingerprintCollisionError(RuntimeError):
    """Two different states share a 64-bit fingerprint, or a stored path no longer replays."""


# --------------------------------------------------------------------------- setup checks


def _java_command() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def check_java(timeout: float = 20.0) -> int:
    """Return the major version of the Java Spark would start, or raise SparkSetupError.

    Spark uses ``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is set, else ``java`` on
    ``PATH``; Spark 4 needs Java 17 or newer.

    >>> check_java() >= 17  # doctest: +SKIP
    True
    """
    java = _java_command()
    where = "JAVA_HOME" if os.environ.get("JAVA_HOME") else "PATH"
    if java is None or not os.path.exists(java):
        raise SparkSetupError(
            f"Java {JAVA_MAJOR} is needed for the spark engine, but no java was found on {where}"
        )
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SparkSetupError(
            f"Java {JAVA_MAJOR} is needed for the spark engine; {java} -version failed ({e})"
        ) from None
    text = out.stderr + out.stdout
    m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if m is None:
        raise SparkSetupError(
            f"Java {JAVA_MAJOR} is needed for the spark engine; cannot read the version of {java}"
        )
    major = int(m.group(1))
    if major == 1 and m.group(2):
        major = int(m.group(2))
    if major < JAVA_MAJOR:
        raise SparkSetupError(
            f"Java {JAVA_MAJOR} or newer is needed for the spark engine, found Java {major} at {java}"
        )
    return major


def probe_master(master: str, timeout: float = 10.0) -> None:
    """Check that a ``spark://host:port`` master accepts connections (else SparkSetupError).

    Other masters (``local[...]``, ``yarn``, ``k8s://...``) are not probed. A list of
    standby masters (``spark://h1:7077,h2:7077``) needs one that answers.

    >>> probe_master("local[2]")
    >>> probe_master("spark://127.0.0.1:1", timeout=2)
    Traceback (most recent call last):
    ...
    explorer.spark.SparkSetupError: cannot reach Spark master spark://127.0.0.1:1 (127.0.0.1:1: connection refused)
    """
    if not master.startswith("spark://"):
        return
    errors = []
    for hostport in master[len("spark://") :].split(","):
        host, sep, port = hostport.rpartition(":")
        if not sep or not port.isdigit():
            raise SparkSetupError(f"bad Spark master {master}: expected spark://host:port")
        try:
            with socket.create_connection((host, int(port)), timeout=timeout):
                return
        except ConnectionRefusedError:
            errors.append(f"{hostport}: connection refused")
        except TimeoutError:
            errors.append(f"{hostport}: no answer within {timeout:g} s")
        except OSError as e:
            errors.append(f"{hostport}: {e.strerror or e}")
    raise SparkSetupError(f"cannot reach Spark master {master} ({'; '.join(errors)})")


def collision_odds(n: int) -> float:
    """The probability that ``n`` distinct states hold a 64-bit fingerprint collision.

    As TLC reports it: about ``n**2 / 2**65``.

    >>> collision_odds(2**16)
    1.1641532182693481e-10
    """
    return n * n / 2.0**65


# --------------------------------------------------------------------------- fingerprints

_ENC_CACHE: dict[int, tuple[Any, bytes]] = {}
_ENC_CACHE_LIMIT = 200_000
#: how each type is encoded: 0 other (explorer.encoding), 1 tuple/record, 2 frozen dataclass,
#: 3 int-like (int, bool, IntEnum: encoded as the int), 4 None
_SHAPE: dict[type, int] = {int: 3, bool: 3, type(None): 4, tuple: 1}
_SMALL: dict[int, bytes] = {}
for _n in range(-128, 512):
    _b = bytearray(b"i")
    encoding._varint((_n << 1) if _n >= 0 else ((-_n << 1) - 1), _b)
    _SMALL[_n] = bytes(_b)
_SELF_CHECKS = [500]  # calls left whose encoding is compared with explorer.encoding.encode
_FAST_OK = [True]


def _shape(tp: type) -> int:
    if issubclass(tp, tuple):
        k = 1
    elif dataclasses.is_dataclass(tp) and tp.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        k = 2
    elif issubclass(tp, int):
        k = 3
    else:
        k = 0
    _SHAPE[tp] = k
    return k


def _enc_into(v: Any, out: bytearray, top: bool = False) -> None:
    """Append ``encoding.encode(v)`` to ``out``; sub-records are cached by identity."""
    tp = type(v)
    k = _SHAPE.get(tp)
    if k is None:
        k = _shape(tp)
    if k == 3:
        b = _SMALL.get(v)
        if b is None:
            encoding._enc_int(int(v), out)
        else:
            out += b
        return
    if k == 4:
        out.append(0x4E)
        return
    if k == 0:
        out += encoding.encode(v)
        return
    if not top:
        hit = _ENC_CACHE.get(id(v))
        if hit is not None and hit[0] is v:
            out += hit[1]
            return
        start = len(out)
    if k == 1:
        out.append(0x74)  # 't'
        items = v
    else:
        out.append(0x64)  # 'd'
        items = [getattr(v, f.name) for f in dataclasses.fields(v)]
    n = len(items)
    if n < 128:
        out.append(n)
    else:
        encoding._varint(n, out)
    get, small, cache_get = _SHAPE.get, _SMALL, _ENC_CACHE.get
    for x in items:
        tx = type(x)
        kx = get(tx)
        if kx == 3:
            b = small.get(x)
            if b is not None:
                out += b
                continue
        elif kx == 4:
            out.append(0x4E)
            continue
        elif kx == 1 or kx == 2:
            hit = cache_get(id(x))
            if hit is not None and hit[0] is x:
                out += hit[1]
                continue
        _enc_into(x, out)
    if not top:
        if len(_ENC_CACHE) >= _ENC_CACHE_LIMIT:
            _ENC_CACHE.clear()
        _ENC_CACHE[id(v)] = (v, bytes(out[start:]))


def state_fingerprint(state: Any) -> int:
    """The 64-bit fingerprint of a state: equal to :func:`explorer.encoding.fingerprint`.

    Successor states share most of their sub-records with their parent, so the
    encodings of sub-records are cached by identity (holding a reference, so an id is
    never reused while cached). The first calls in each process are compared with
    ``explorer.encoding``; on any difference the plain function is used from then on.
    With the C accelerator (:mod:`explorer.speedups`) the whole encoding and the hash
    run in C instead (about 10x faster: 1.6 µs a controller-ref state against 15.7 µs,
    ``benchmarks/bench_speedups.py``), with the same check of the first calls.

    >>> from explorer.encoding import fingerprint
    >>> s = ((1, 2), (3, (4, None)), True)
    >>> state_fingerprint(s) == fingerprint(s)
    True
    """
    if not _FAST_OK[0]:
        return fingerprint(state)
    if speedups.ACTIVE:
        if _SELF_CHECKS[0] <= 0:
            return speedups.fingerprint(state)
        data = speedups.encode(state)
    else:
        out = bytearray()
        _enc_into(state, out, True)
        data = bytes(out)
    if _SELF_CHECKS[0] > 0:
        _SELF_CHECKS[0] -= 1
        if data != encoding.encode(state):
            _FAST_OK[0] = False
            _ENC_CACHE.clear()
            return fingerprint(state)
    return speedups.fingerprint_bytes(data)


# --------------------------------------------------------------------------- per-partition work


@dataclass
class _Job:
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
class _Acc:
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

    def merge(self, o: _Acc) -> None:
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


_JOB_CACHE: dict[int, tuple[bytes, _Job]] = {}


def _load_job(job_b: Any) -> _Job:
    """The job of a broadcast (cloudpickled bytes), unpickled once per Python worker."""
    blob = job_b.value
    hit = _JOB_CACHE.get(id(blob))
    if hit is not None and hit[0] is blob:
        return hit[1]
    job: _Job = pickle.loads(blob)
    _JOB_CACHE.clear()
    _JOB_CACHE[id(blob)] = (blob, job)
    return job


def _event(acc: _Acc, name: str, key: tuple[int, int, int, int, int]) -> None:
    old = acc.events.get(name)
    if old is None or key < old:
        acc.events[name] = key


def _pending(items: list[tuple[str, Any]], done: frozenset[str]) -> list[tuple[str, Any]]:
    """The ``applies`` predicates still to evaluate (each only until it first holds)."""
    return [item for item in items if item[0] not in done]


def _applies(acc: _Acc, pending: list[tuple[str, Any]], *args: Any) -> None:
    for item in list(pending):
        if item[1](*args):
            acc.applies[item[0]] = 1
            pending.remove(item)


def _check_state(
    job: _Job, acc: _Acc, t: Any, level: int, r: int, i: int, pend: list[tuple[str, Any]]
) -> None:
    """The checks ``bfs`` makes on a state when it is first seen."""
    for pidx, name, chk in job.always:
        if not chk(t):
            _event(acc, name, (level, r, i, _PHASE_STATE, pidx))
    if pend:
        _applies(acc, pend, t)
    for name, chk in job.reach:
        if chk(t):
            w = acc.witnesses.get(name)
            if w is None or (level, r, i) < w:
                acc.witnesses[name] = (level, r, i)


def _dumps(obj: Any) -> bytes:
    try:
        return pickle.dumps(obj, protocol=5)
    except (pickle.PicklingError, AttributeError, TypeError):
        from pyspark import cloudpickle

        return bytes(cloudpickle.dumps(obj, protocol=5))


def _cloudpickle(obj: Any) -> bytes:
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


def _expand_partition(
    job_b: Any, level: int, level_keys: Any, done: frozenset[str], index: int, iterator: Iterable[Any]
) -> Iterator[tuple[int, tuple[str, Any]]]:
    """Map side of a level: successors of the partition's frontier, one block per target."""
    job = _load_job(job_b)
    block = None
    for tag, payload in _records(iterator):
        if tag == "F":
            block = payload
    acc = _Acc()
    nparts = job.partitions
    if block is not None:
        keys, _fps, states = pickle.loads(block)
        ranks = _frontier_ranks(keys, level_keys).tolist()
        successors, fp_of = label_counting(job.system, acc.labels) or job.system.successors, job.fp
        trans, pend_t = job.trans, _pending(job.applies_trans, done)
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
                            _event(acc, name, (level, r, n, _PHASE_TRANSITION, pidx))
                    if pend_t:
                        _applies(acc, pend_t, s, a, t)
                if t not in local:
                    f = fp_of(t)
                    other = local_fp.get(f)
                    if other is not None:
                        raise _collision(f, other, t)
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
                _event(acc, "deadlock", (level, r, 0, _PHASE_DEADLOCK, job.deadlock_index))
        acc.generated = generated
        kind_table = list(kind_ids)
        for q in range(nparts):
            if out_keys[q]:
                blob = _dumps(
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


def _collision(f: int, a: Any, b: Any) -> FingerprintCollisionError:
    return FingerprintCollisionError(
        f"fingerprint collision: two different states share fingerprint {f:016x} "
        f"({render_state(a)!r} and {render_state(b)!r}); the counts of this run are not exact"
    )


def _merge_partition(
    job_b: Any, level: int, done: frozenset[str], summaries: Any, index: int, iterator: Iterable[Any]
) -> Iterator[tuple[str, Any]]:
    """Reduce side of a level: dedup against the visited set, check new states."""
    job = _load_job(job_b)
    visited = np.zeros(0, dtype=np.uint64)
    acc = _Acc()
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
                    raise _collision(int(f[d]), a, b)
        win = order[first]
        win = win[np.argsort(keys[win], kind="stable")]
        new_keys, new_fps = keys[win], fps[win]
        new_by = acc.new_by
        pend_s = _pending(job.applies_state, done)
        for j, k, kid in zip(win.tolist(), new_keys.tolist(), kinds[win].tolist()):
            t = states[j]
            new_states.append(t)
            name = kind_names[kid]
            new_by[name] = new_by.get(name, 0) + 1
            _check_state(job, acc, t, level, k >> IDX_BITS, k & IDX_MASK, pend_s)
        visited = np.sort(np.concatenate([visited, new_fps]), kind="stable")
    summaries.add({(level, index): (acc, new_keys, new_fps)})
    yield "S", None
    yield "F", _dumps((new_keys, new_fps, new_states))
    yield "V", pickle.dumps(visited, protocol=5)


def _truncated_partition(
    job_b: Any,
    level: int,
    level_keys: Any,
    done: frozenset[str],
    cut: int,
    new_keys_b: Any,
    index: int,
    iterator: Iterable[Any],
) -> Iterator[_Acc]:
    """A level's counters over the frontier states of rank <= ``cut`` only (``bfs`` stopped there)."""
    job = _load_job(job_b)
    acc = _Acc()
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
        pend_s, pend_t = _pending(job.applies_state, done), _pending(job.applies_trans, done)
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
                        _event(acc, name, (level, r, n, _PHASE_TRANSITION, pidx))
                if pend_t:
                    _applies(acc, pend_t, s, a, t)
                if (r << IDX_BITS) | n in new:
                    acc.new_by[kind] = acc.new_by.get(kind, 0) + 1
                    _check_state(job, acc, t, level, r, n, pend_s)
                n += 1
            acc.generated += n
            if n == 0 and job.deadlock and not (job.is_terminal is not None and job.is_terminal(s)):
                _event(acc, "deadlock", (level, r, 0, _PHASE_DEADLOCK, job.deadlock_index))
    yield acc


class _SummaryParam:
    """Accumulates per-partition level summaries as ``{(level, partition): summary}``.

    A recomputed partition (after a lost executor) sends the same summary again, so
    merging by key is idempotent.
    """

    def zero(self, value: dict[Any, Any]) -> dict[Any, Any]:
        return {}

    def addInPlace(self, a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, Any]:
        a.update(b)
        return a


def _partition_of(k: int) -> int:
    """The partition function: records are keyed by their partition number already."""
    return k


# --------------------------------------------------------------------------- the driver


class _LevelStore:
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


def _trace_step(i: int, prev: Any, action: Any, s: Any) -> TraceStep:
    return TraceStep(
        index=i,
        action=None if action is None else str(action),
        action_kind=None if action is None else action_kind(action),
        fingerprint=f"{encoding.fingerprint(s):016x}",
        state=render_state(s),
        changes=[] if prev is None else diff_states(prev, s),
    )


def _rebuild(job: _Job, store: _LevelStore, level: int, rank: int) -> list[tuple[Any, Any]]:
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


@dataclass
class _SparkState:
    sc: Any
    owned: Any  # the SparkSession we created (stopped at the end), or None
    job_b: Any
    partitions: int
    rdd: Any = None
    level_keys: Any = None  # broadcast of the current frontier's sorted keys (None: keys are ranks)
    broadcasts: list[tuple[int, Any]] = field(default_factory=list)
    levels_run: int = 0
    checkpointing: bool = False
    summaries: Any = None  # the accumulator of level summaries


def _executor_pythonpath(system: Any) -> str:
    paths: list[str] = [str(Path(__file__).resolve().parents[1]), os.getcwd()]
    mod = sys.modules.get(type(system).__module__)
    fname = getattr(mod, "__file__", None)
    if fname and mod is not None:
        root = Path(fname).resolve().parent
        for _ in range(mod.__name__.count(".")):
            root = root.parent
        paths.insert(0, str(root))
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p:
            paths.append(p)
    return os.pathsep.join(dict.fromkeys(paths))


def spark_session(
    master: str | None = "local[*]",
    *,
    app_name: str = "kafka-mc",
    conf: dict[str, str] | None = None,
    system: Any = None,
    executor_wait: float = 120.0,
) -> Any:
    """Start (or get) a SparkSession set up as the spark engine wants it.

    The UI and console progress are off, executors run this interpreter with this
    project (and ``system``'s package) on their path, old checkpoints are cleaned, and
    the log level is ERROR. For a ``spark://`` master it waits at most
    ``executor_wait`` seconds for a first executor (else SparkSetupError).
    ``master=None`` keeps the master given to ``spark-submit`` (or spark-defaults).

    >>> spark = spark_session("local[2]")  # doctest: +SKIP
    >>> check_spark(system, props, spark=spark)  # doctest: +SKIP
    """
    return _start_session(master, app_name, dict(conf or {}), system, executor_wait)


def _local_defaults(master: str | None) -> dict[str, str]:
    """Driver memory and SQL shuffle partitions for a local master (never Spark's 200)."""
    if master is None:
        return {}
    m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", master)
    if m is None:
        return {}
    cores = os.cpu_count() or 1 if m.group(1) in (None, "*") else int(m.group(1))
    if m.group(1) is None:
        cores = 1
    return {"spark.driver.memory": "2g", "spark.sql.shuffle.partitions": str(cores)}


def _start_session(
    master: str | None, app_name: str, conf: dict[str, str], system: Any, executor_wait: float
) -> Any:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.pyspark.python": sys.executable,
        "spark.executorEnv.PYTHONPATH": _executor_pythonpath(system),
        "spark.cleaner.referenceTracking.cleanCheckpoints": "true",
        "spark.network.timeout": "120s",
        **_local_defaults(master),
        **conf,
    }
    for k, v in settings.items():
        builder = builder.config(k, v)
    try:
        session = builder.getOrCreate()
    except Exception as e:  # the JVM did not start, or the master refused us
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SparkSetupError(f"cannot start Spark with master {master}: {first}") from None
    session.sparkContext.setLogLevel("ERROR")
    actual = str(session.sparkContext.master)
    if not actual.startswith("local"):
        deadline = time.monotonic() + executor_wait
        while session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() <= 1:
            if time.monotonic() > deadline:
                session.stop()
                raise SparkSetupError(
                    f"no Spark executor registered with {actual} within {executor_wait:g} s "
                    "(start a worker, or check that it has the cores and memory asked for)"
                )
            time.sleep(0.2)
    return session


def _union(a: Any, b: Any) -> Any:
    """Partitioner-aware union of two RDDs co-partitioned by ``_partition_of``.

    ``RDD.union`` would re-serialise both sides (an extra Python pass over the
    visited sets) because their serializers differ in batching only; the byte
    format is the same, so the JVM union is wrapped directly.
    """
    from pyspark import RDD

    rdd: Any = RDD(a._jrdd.union(b._jrdd), a.ctx, a.ctx.serializer)
    rdd.partitioner = a.partitioner
    if rdd.getNumPartitions() != a.getNumPartitions():  # pragma: no cover - a Spark change
        raise RuntimeError("spark engine: the union of co-partitioned RDDs is not partitioner-aware")
    return rdd


class _Search:
    """One run of the spark engine: the driver's side of the search."""

    def __init__(self, system: Any, props: list[Property], opts: dict[str, Any]):
        self.system = system
        self.props = props
        self.o = opts
        self.keep_going: bool = opts["keep_going"]
        # the module's ``state_fingerprint`` is looked up now (a test may monkeypatch it)
        self.job = _Job(system, props, state_fingerprint, opts["deadlock"], 1)
        self.found: dict[str, tuple[int, int, int, int, int]] = {}
        self.witnesses: dict[str, tuple[int, int, int]] = {}
        self.total = _Acc()
        self.levels: list[LevelStats] = []
        self.distinct = 0
        self.generated = 0
        self.init_generated = 0
        self.budget: str | None = None
        self.reason = ExitReason.COMPLETE
        self.stop = False
        self.depth = 0
        self.spark: _SparkState | None = None
        self.driver_levels = 0
        # driver-side search state (until the search moves to Spark)
        self.visited: set[Any] | None = set()  # states, as bfs keeps them
        self.visited_fps: set[int] | None = set()
        self.frontier: list[Any] = []
        self.frontier_size = 0
        self.frontier_fps = np.zeros(0, dtype=np.uint64)

    # ---- events
    def _take_events(self, acc: _Acc, cut: int | None = None) -> None:
        """Record the first event of each property not yet found (up to rank ``cut``)."""
        for name, key in sorted(acc.events.items(), key=lambda kv: kv[1]):
            if name in self.found or (cut is not None and key[1] > cut):
                continue
            self.found[name] = key
        for name, wkey in acc.witnesses.items():
            if name not in self.witnesses and (cut is None or wkey[1] <= cut):
                self.witnesses[name] = wkey

    # ---- level 0 and driver levels
    def init_level(self, store: _LevelStore, clock: Callable[[], float]) -> None:
        t0 = clock()
        job = self.job
        acc = _Acc()
        keys: list[int] = []
        fps: list[int] = []
        states: list[Any] = []
        pend_s = _pending(job.applies_state, frozenset())
        assert self.visited is not None
        for index, s in enumerate(self.system.init_states()):
            self.generated += 1
            if s in self.visited:
                continue
            f = self._new_fp(s)
            _check_state(job, acc, s, -1, len(states), 0, pend_s)
            keys.append(index)
            fps.append(f)
            states.append(s)
        self.init_generated = self.generated
        self.distinct = len(states)
        self.frontier, self.frontier_size = states, len(states)
        self.frontier_fps = np.array(fps, dtype=np.uint64)
        store.add(0, np.array(keys, dtype=np.int64), self.frontier_fps, np.zeros(len(fps), dtype=np.uint64))
        self._take_events(acc)
        if acc.events and not self.keep_going:
            self.stop = True
        self.total.merge(acc)
        self.levels.append(LevelStats(0, len(states), self.generated, len(states), clock() - t0))

    def driver_level(self, store: _LevelStore, clock: Callable[[], float], deadline: float | None) -> None:
        """Expand one level in this process, exactly as ``bfs`` does (mid-level stops included)."""
        t0 = clock()
        job, level, visited, visited_fps = self.job, self.depth, self.visited, self.visited_fps
        assert visited is not None and visited_fps is not None
        acc = _Acc()
        enabled, new_by = acc.enabled, acc.new_by
        kinds: dict[type, str] = {}
        successors, fp_of = label_counting(self.system, acc.labels) or self.system.successors, job.fp
        new_keys: list[int] = []
        new_fps: list[int] = []
        nxt: list[Any] = []
        found_before = len(self.found)
        done = frozenset(self.total.applies)
        pend_s, pend_t = _pending(job.applies_state, done), _pending(job.applies_trans, done)
        max_states = self.o["max_states"]
        progress = self.o["progress"]
        start = self.o["start"]
        for r, s in enumerate(self.frontier):
            n = 0
            for a, t in successors(s):
                tp = type(a)
                kind = kinds.get(tp)
                if kind is None:
                    kind = kinds[tp] = action_kind(a)
                enabled[kind] = enabled.get(kind, 0) + 1
                if job.trans:
                    for pidx, name, chk in job.trans:
                        if not chk(s, a, t):
                            self._event_now(name, (level, r, n, _PHASE_TRANSITION, pidx))
                    if pend_t:
                        _applies(acc, pend_t, s, a, t)
                if t not in visited:
                    visited.add(t)
                    f = fp_of(t)
                    if f in visited_fps:
                        raise self._driver_collision(f, t)
                    visited_fps.add(f)
                    new_keys.append((r << IDX_BITS) | n)
                    new_fps.append(f)
                    nxt.append(t)
                    new_by[kind] = new_by.get(kind, 0) + 1
                    for pidx, name, chk in job.always:
                        if not chk(t):
                            self._event_now(name, (level, r, n, _PHASE_STATE, pidx))
                    if pend_s:
                        _applies(acc, pend_s, t)
                    for name, chk in job.reach:
                        if name not in self.witnesses and chk(t):
                            self.witnesses[name] = (level, r, n)
                n += 1
            acc.generated += n
            if n == 0 and job.deadlock and not (job.is_terminal is not None and job.is_terminal(s)):
                self._event_now("deadlock", (level, r, 0, _PHASE_DEADLOCK, job.deadlock_index))
            if len(self.found) > found_before and not self.keep_going:
                self.stop = True
                break
            if max_states is not None and self.distinct + len(nxt) >= max_states:
                self.budget, self.reason, self.stop = "max_states", ExitReason.BUDGET_EXHAUSTED, True
                break
            if (r & 255) == 0:
                now = clock()
                if deadline is not None and now >= deadline:
                    self.budget, self.reason, self.stop = "max_seconds", ExitReason.BUDGET_EXHAUSTED, True
                    break
                if progress is not None:
                    el = now - start
                    d = self.distinct + len(nxt)
                    progress.update(level + 1, self.frontier_size, d, d / el if el else 0.0)
        acc.events.clear()
        acc.witnesses.clear()
        self.total.merge(acc)
        keys = np.array(new_keys, dtype=np.int64)
        fps = np.array(new_fps, dtype=np.uint64)
        self._finish_level(store, level, acc.generated, keys, fps, clock() - t0)
        self.frontier, self.frontier_size = nxt, len(nxt)
        self.driver_levels += 1

    def _new_fp(self, s: Any) -> int:
        assert self.visited is not None and self.visited_fps is not None
        self.visited.add(s)
        f = self.job.fp(s)
        if f in self.visited_fps:
            raise self._driver_collision(f, s)
        self.visited_fps.add(f)
        return f

    def _driver_collision(self, f: int, t: Any) -> FingerprintCollisionError:
        assert self.visited is not None
        other = next((x for x in self.visited if x != t and self.job.fp(x) == f), None)
        return _collision(f, other, t)

    def _event_now(self, name: str, key: tuple[int, int, int, int, int]) -> None:
        if name not in self.found:
            self.found[name] = key

    def _finish_level(
        self, store: _LevelStore, level: int, generated: int, keys: np.ndarray, fps: np.ndarray, secs: float
    ) -> None:
        parent = self.frontier_fps[keys >> IDX_BITS] if len(keys) else np.zeros(0, dtype=np.uint64)
        store.add(level + 1, keys, fps, parent)
        self.generated += generated
        self.distinct += len(keys)
        if len(keys) or generated:
            self.levels.append(LevelStats(level + 1, len(keys), generated, len(keys), secs))
        self.frontier_fps = fps
        self.depth += 1

    # ---- Spark levels
    def to_spark(self) -> None:
        """Move the search to Spark: distribute the visited set and the frontier."""
        o = self.o
        spark = o["spark"]
        owned = None
        if spark is None:
            owned = spark = _start_session(
                o["master"], o["app_name"], o["spark_conf"], self.system, o["executor_wait"]
            )
        sc = getattr(spark, "sparkContext", spark)
        nparts = o["partitions"] or max(int(sc.defaultParallelism), 1)
        self.job.partitions = nparts
        st = _SparkState(sc=sc, owned=owned, job_b=sc.broadcast(_cloudpickle(self.job)), partitions=nparts)
        st.summaries = sc.accumulator({}, _SummaryParam())
        ckpt = o["checkpoint_dir"]
        if ckpt is None and str(sc.master).startswith("local"):
            ckpt = o["run_dir"] / "checkpoints"
        if ckpt is not None:
            sc.setCheckpointDir(str(ckpt))
            st.checkpointing = True
        assert self.visited_fps is not None
        visited = np.fromiter(self.visited_fps, dtype=np.uint64, count=len(self.visited_fps))
        self.visited = self.visited_fps = None
        vparts = visited % np.uint64(nparts)
        fparts = (self.frontier_fps % np.uint64(nparts)).tolist()
        fronts: list[tuple[list[int], list[int], list[Any]]] = [([], [], []) for _ in range(nparts)]
        for r, (q, f, s) in enumerate(zip(fparts, self.frontier_fps.tolist(), self.frontier)):
            fronts[q][0].append(r)
            fronts[q][1].append(f)
            fronts[q][2].append(s)
        recs: list[tuple[int, tuple[str, Any]]] = []
        for q in range(nparts):
            keys, fps, states = fronts[q]
            block = _dumps((np.array(keys, dtype=np.int64), np.array(fps, dtype=np.uint64), states))
            recs.append((q, ("S", None)))
            recs.append((q, ("F", block)))
            recs.append((q, ("V", pickle.dumps(np.sort(visited[vparts == q]), protocol=5))))
        self.frontier = []
        rdd = sc.parallelize(recs, nparts).partitionBy(nparts, _partition_of)
        st.rdd = rdd.persist(_storage_level())
        self.spark = st

    def spark_level(self, store: _LevelStore, clock: Callable[[], float], deadline: float | None) -> None:
        """One level as Spark jobs; on a stop inside the level, re-count it up to the stop."""
        st = self.spark
        assert st is not None
        t0 = clock()
        level, nparts, job_b = self.depth, st.partitions, st.job_b
        done = frozenset(self.total.applies)
        expand = functools.partial(_expand_partition, job_b, level, st.level_keys, done)
        merge = functools.partial(_merge_partition, job_b, level, done, st.summaries)
        cands = st.rdd.mapPartitionsWithIndex(expand).partitionBy(nparts, _partition_of)
        nxt = _union(st.rdd, cands).mapPartitionsWithIndex(merge, preservesPartitioning=True)
        nxt = nxt.persist(_storage_level())
        st.levels_run += 1
        checkpoint = st.checkpointing and st.levels_run % self.o["checkpoint_every"] == 0
        if checkpoint:
            nxt.checkpoint()
        # a JVM-side count materialises the level (no extra Python pass); the summaries
        # come back through the accumulator
        counted = self._run(st, lambda: nxt._jrdd.count(), deadline)
        summaries = None
        if counted is not None:
            got = st.summaries.value
            summaries = [got.pop((level, p)) for p in range(nparts)]
        if summaries is None:  # cancelled at the deadline
            nxt.unpersist()
            return
        acc = _Acc()
        for a, _, _ in summaries:
            acc.merge(a)
        all_keys = np.concatenate([s[1] for s in summaries])
        all_fps = np.concatenate([s[2] for s in summaries])
        order = np.argsort(all_keys, kind="stable")
        keys, fps = all_keys[order], all_fps[order]
        # where would bfs have stopped inside this level?
        cut, budget = None, None
        if acc.events and not self.keep_going:
            fresh = [k for n, k in acc.events.items() if n not in self.found]
            if fresh:
                cut = min(k[1] for k in fresh)
        max_states = self.o["max_states"]
        if max_states is not None and self.distinct + len(keys) >= max_states:
            need = max_states - self.distinct
            ms_cut = 0 if need <= 0 else int(keys[need - 1] >> IDX_BITS)
            if cut is None or ms_cut < cut:
                cut, budget = ms_cut, "max_states"
        if cut is not None and cut < self.frontier_size - 1:
            parent_rank = keys >> IDX_BITS
            keep = parent_rank <= cut
            keys, fps = keys[keep], fps[keep]
            new_b = st.sc.broadcast(keys)
            trunc = functools.partial(_truncated_partition, job_b, level, st.level_keys, done, cut, new_b)
            accs = self._run(st, lambda: st.rdd.mapPartitionsWithIndex(trunc).collect(), deadline)
            new_b.destroy()
            if accs is None:
                nxt.unpersist()
                return
            acc = _Acc()
            for a in accs:
                acc.merge(a)
        if cut is not None:
            self.stop = True
            if budget is not None:
                self.budget, self.reason = budget, ExitReason.BUDGET_EXHAUSTED
        self._take_events(acc, cut)
        acc.events.clear()
        acc.witnesses.clear()
        self.total.merge(acc)
        self._finish_level(store, level, acc.generated, keys, fps, clock() - t0)
        self.frontier_size = len(keys)
        old = st.rdd
        st.rdd = nxt
        if not self.stop and len(keys):
            st.level_keys = st.sc.broadcast(keys)
            st.broadcasts.append((self.depth, st.level_keys))
        if checkpoint and nxt.isCheckpointed():
            # lineage before this level is cut: drop the rank broadcasts it needed
            for lv, b in [x for x in st.broadcasts if x[0] < self.depth]:
                b.destroy()
                st.broadcasts.remove((lv, b))
        old.unpersist()

    def _run(self, st: _SparkState, action: Callable[[], Any], deadline: float | None) -> Any:
        """Run a Spark action; an executor's collision error is raised here as itself."""
        try:
            return self._run_bounded(st, action, deadline)
        except FingerprintCollisionError:
            raise
        except Exception as e:
            m = re.search(r"FingerprintCollisionError: (.*)", str(e))
            if m is not None:
                raise FingerprintCollisionError(m.group(1).strip()) from None
            raise

    def _run_bounded(self, st: _SparkState, action: Callable[[], Any], deadline: float | None) -> Any:
        """Run a Spark action, cancelled at the deadline (then None and the budget is set)."""
        if deadline is None:
            return action()
        clock = self.o["clock"]
        remaining = deadline - clock()
        group = f"kafka-mc-{id(self)}-{st.levels_run}"
        st.sc.setJobGroup(group, "kafka-mc spark engine level", interruptOnCancel=True)
        timer = threading.Timer(max(remaining, 0.0), st.sc.cancelJobGroup, args=(group,))
        timer.daemon = True
        timer.start()
        try:
            return action()
        except Exception:
            if clock() >= deadline - 0.05:
                self.budget, self.reason, self.stop = "max_seconds", ExitReason.BUDGET_EXHAUSTED, True
                return None
            raise
        finally:
            timer.cancel()

    def close(self) -> None:
        st = self.spark
        if st is None:
            return
        with contextlib.suppress(Exception):
            if st.rdd is not None:
                st.rdd.unpersist()
            for _, b in st.broadcasts:
                b.destroy()
            st.job_b.destroy()
        if st.owned is not None:
            with contextlib.suppress(Exception):
                st.owned.stop()


def _storage_level() -> Any:
    from pyspark import StorageLevel

    return StorageLevel.MEMORY_AND_DISK


def check_spark(
    system: Any,
    properties: Iterable[Property],
    *,
    model: str = "",
    config: Any = None,
    master: str | None = "local[*]",
    partitions: int | None = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    checkpoint_every: int = 8,
    run_dir: str | os.PathLike[str] | None = None,
    local_frontier: int = 10_000,
    max_depth: int | None = None,
    max_states: int | None = None,
    max_seconds: float | None = None,
    keep_going: bool = False,
    deadlock: bool = True,
    progress: Progress | None = None,
    spark: Any = None,
    spark_conf: dict[str, str] | None = None,
    connect_timeout: float = 10.0,
    executor_wait: float = 120.0,
    clock: Callable[[], float] = time.perf_counter,
) -> CheckResult:
    """Explore every reachable state of ``system`` with Spark and check ``properties``.

    Returns the :class:`~explorer.core.CheckResult` that :func:`explorer.bfs.check_bfs`
    returns for the same arguments (engine ``"spark"``; timings differ, and a
    ``max_seconds`` budget may stop at another point), plus notes on the fingerprint
    collision odds and where the levels ran.

    Parameters
    ----------
    master:
        The Spark master when a session has to be started (``local[*]``,
        ``spark://host:7077``, ...; None: the one ``spark-submit`` was given);
        ``spark`` passes an existing SparkSession (or SparkContext) instead, which is
        left running.
    partitions:
        Partitions of the state set (default: the cluster's default parallelism, i.e.
        its total cores).
    checkpoint_dir, checkpoint_every:
        Reliable checkpoints of the state RDD every ``checkpoint_every`` Spark levels
        (default: ``<run_dir>/checkpoints`` with a ``local`` master; on a cluster
        there is no default, as the directory must be shared storage such as
        ``hdfs://...`` or a network mount: without one, lost partitions are
        recomputed from the whole lineage).
    run_dir:
        Where ``level-NNNNN.npz`` files are written (default: a temporary directory,
        removed at the end); traces are rebuilt from them.
    local_frontier:
        Levels whose frontier has fewer states run in this process; 0 runs every
        level after the initial states on Spark.
    spark_conf:
        Extra Spark settings for a session started here.
    connect_timeout, executor_wait:
        Bounds for reaching a ``spark://`` master and for the first executor.

    Raises
    ------
    SparkSetupError
        No Java 17, an unreachable master, no executor: one line.
    FingerprintCollisionError
        Two different states met with the same fingerprint, or a trace did not replay.

    Examples
    --------
    >>> from explorer.core import always
    >>> class Ring:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("inc", (s + 1) % 4)]
    >>> r = check_spark(Ring(), [always("lt3", lambda s: s < 3, "")], local_frontier=0)  # doctest: +SKIP
    >>> r.exit_reason.value, r.distinct_states, r.violations[0].length  # doctest: +SKIP
    ('violation', 4, 3)
    """
    if checkpoint_every < 1:
        raise ValueError("checkpoint_every must be at least 1")
    if spark is None:
        check_java()
        if master is not None:
            probe_master(master, connect_timeout)
    props = list(properties)
    start = clock()
    own_run_dir = run_dir is None
    rdir = Path(tempfile.mkdtemp(prefix="kafka-mc-spark-")) if run_dir is None else Path(run_dir)
    rdir.mkdir(parents=True, exist_ok=True)
    opts = {
        "keep_going": keep_going,
        "deadlock": deadlock,
        "max_states": max_states,
        "progress": progress,
        "start": start,
        "spark": spark,
        "master": master,
        "app_name": f"kafka-mc {model}".strip(),
        "spark_conf": dict(spark_conf or {}),
        "executor_wait": executor_wait,
        "partitions": partitions,
        "checkpoint_dir": checkpoint_dir,
        "checkpoint_every": checkpoint_every,
        "clock": clock,
        "run_dir": rdir,
    }
    search = _Search(system, props, opts)
    store = _LevelStore(rdir)
    deadline = None if max_seconds is None else start + max_seconds
    try:
        try:
            search.init_level(store, clock)
            while search.frontier_size and not search.stop:
                if max_depth is not None and search.depth >= max_depth:
                    search.budget, search.reason = "max_depth", ExitReason.BUDGET_EXHAUSTED
                    break
                if deadline is not None and clock() >= deadline:
                    search.budget, search.reason = "max_seconds", ExitReason.BUDGET_EXHAUSTED
                    break
                if search.spark is None and search.frontier_size >= local_frontier:
                    search.to_spark()
                if search.spark is None:
                    search.driver_level(store, clock, deadline)
                else:
                    search.spark_level(store, clock, deadline)
                if progress is not None:
                    el = clock() - start
                    progress.update(
                        search.depth,
                        search.frontier_size,
                        search.distinct,
                        search.distinct / el if el else 0.0,
                    )
        except KeyboardInterrupt:
            search.reason, search.budget = ExitReason.INTERRUPTED, None
        finally:
            if progress is not None:
                progress.close()
            search.close()
        seconds = clock() - start
        return _result(search, store, model, config, seconds, local_frontier)
    finally:
        if own_run_dir:
            shutil.rmtree(rdir, ignore_errors=True)


def _result(
    search: _Search,
    store: _LevelStore,
    model: str,
    config: Any,
    seconds: float,
    local_frontier: int,
) -> CheckResult:
    """Assemble the CheckResult exactly as ``check_bfs`` does."""
    props, job = search.props, search.job
    deadlock_prop = Property(
        "deadlock",
        PropertyKind.DEADLOCK,
        lambda s: True,
        "every non-terminal state has a successor",
    )
    by_name = {p.name: p for p in props}
    by_name["deadlock"] = deadlock_prop
    violations: list[Violation] = []
    for name, key in sorted(search.found.items(), key=lambda kv: kv[1]):
        p = by_name[name]
        level, r, i, phase, _ = key
        if level < 0:  # an initial state
            path = _rebuild(job, store, 0, r)
        elif phase == _PHASE_STATE:
            keys, _ = store.get(level + 1)
            rank = int(np.searchsorted(keys, (r << IDX_BITS) | i))
            path = _rebuild(job, store, level + 1, rank)
        else:
            path = _rebuild(job, store, level, r)
            if phase == _PHASE_TRANSITION:
                succ = list(job.system.successors(path[-1][1]))
                path.append(succ[i])
        trace = []
        prev = None
        for n, (a, s) in enumerate(path):
            trace.append(_trace_step(n, prev, a, s))
            prev = s
        message = "no successor (deadlock)" if phase == _PHASE_DEADLOCK else f"{name} does not hold"
        violations.append(Violation(p.name, p.kind.value, p.doc, message, len(trace) - 1, trace))
    store.forget()
    reason = search.reason
    # every reachable state was explored: no budget or interrupt, and no early stop
    complete = reason is ExitReason.COMPLETE and (search.keep_going or not search.found)
    if violations:
        reason = ExitReason.VIOLATION
    reach_p = [p for p in props if p.kind is PropertyKind.REACHABLE]
    for p in reach_p:
        if complete and p.name not in search.witnesses:
            violations.append(
                Violation(p.name, p.kind.value, p.doc, f"{p.name}: no reachable state is a witness", 0, [])
            )
    if violations and complete:
        reason = ExitReason.VIOLATION

    levels = search.levels
    max_level = max((lv.depth for lv in levels if lv.new_states), default=0)
    applied = {p.name: p.name in search.total.applies for p in props if p.applies is not None}
    prop_table: dict[str, dict[str, Any]] = {}
    violated = {v.property for v in violations}
    for p in [*props, *([deadlock_prop] if job.deadlock else [])]:
        if p.kind is PropertyKind.EVENTUALLY:
            status = "unchecked" if complete else "unknown"
        elif p.name in violated:
            status = "violated" if p.kind is not PropertyKind.REACHABLE else "unreached"
        elif p.kind is PropertyKind.REACHABLE:
            status = "witnessed" if p.name in search.witnesses else "unknown"
        else:
            status = "held" if complete else "unknown"
        entry: dict[str, Any] = {"kind": p.kind.value, "doc": p.doc, "status": status}
        if p.kind is PropertyKind.ALWAYS:
            entry["evaluated"] = search.distinct
        elif p.kind is PropertyKind.TRANSITION:
            entry["evaluated"] = search.generated - search.init_generated
        if p.name in applied:
            entry["non_vacuous"] = applied[p.name]
            if not applied[p.name]:
                entry["vacuous"] = True
        if p.name in search.witnesses:
            entry["witness_length"] = search.witnesses[p.name][0] + 1
        prop_table[p.name] = entry

    unsupported = [p for p in props if p.kind is PropertyKind.EVENTUALLY]
    notes = [
        f"{p.name}: eventually-properties are checked by the bfs engine only (run it with --engine bfs)"
        for p in unsupported
    ]
    odds = collision_odds(search.distinct)
    notes.append(
        f"fingerprint collision odds {odds:.1e} ({search.distinct:,} distinct states, 64-bit fingerprints, "
        "about n^2/2^65)"
    )
    st = search.spark
    if st is None:
        notes.append(
            f"spark: all {search.driver_levels} levels ran in the driver (frontiers below {local_frontier:,})"
        )
    else:
        notes.append(
            f"spark: {search.driver_levels} levels in the driver, {st.levels_run} on Spark "
            f"({st.sc.master}, {st.partitions} partitions, "
            + (
                f"reliable checkpoints every {search.o['checkpoint_every']} levels)"
                if st.checkpointing
                else "no reliable checkpoints: give a checkpoint directory on shared storage)"
            )
        )
    declared = search.system.action_kinds() if hasattr(search.system, "action_kinds") else None
    cov = types.SimpleNamespace(
        enabled=dict(search.total.enabled),
        new=dict(search.total.new_by),
        sample={k: _KindName(k) for k in search.total.enabled},
    )
    return CheckResult(
        model=model,
        config=config_to_dict(config),
        engine="spark",
        exit_reason=reason,
        distinct_states=search.distinct,
        generated_states=search.generated,
        max_depth=max_level,
        seconds=seconds,
        states_per_second=search.distinct / seconds if seconds > 0 else 0.0,
        violations=violations,
        witnesses={k: v["witness_length"] for k, v in prop_table.items() if "witness_length" in v},
        properties=prop_table,
        levels=levels,
        coverage=coverage_of(
            cov,  # type: ignore[arg-type]
            declared,
            dict(search.total.labels) if hasattr(search.system, "successors_labelled") else None,
            declared_labels(search.system),
        ),
        budget=search.budget,
        notes=notes,
    )


class _KindName:
    """Stands for an action of a kind when coverage is counted by kind name."""

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = kind
