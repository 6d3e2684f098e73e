"""The expander of the level-synchronous search (:mod:`explorer.search.levels`): a pool of
forked workers, or one expander in the driver.

An :class:`Expander` holds what one process owns of the search: its share of the
frontier (live state objects), its label counts, the property checks it still runs. It
expands its frontier in rank order and reports, per batch of parents, the successors'
keys and action-type ids and every event (a failed check, an ``applies`` that held, a
witness, a deadlock) with its position in ``bfs``'s order; it keeps the successors the
driver says are new as its next frontier. :class:`LocalPool` runs one expander in the
driver (small levels); :class:`ProcessPool` forks ``n`` workers that each run one and
talk to the driver through queues. Both have the same interface, so the driver's
merge does not know which it has.

Example
-------
>>> from tests.toys import Grid
>>> exp = Expander(Grid(2), Grid(2).properties(), deadlock=True, batch=8)
>>> exp.level[hash((0, 0))] = ((0, 0), -1, 0)
>>> exp.accept(np.array([hash((0, 0))]), np.array([0]))
[]
>>> [len(msg[2]) for msg in exp.expand_level()]  # one batch: the hashes of two successors
[2]
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing as mp
import os
import queue as queue_mod
import resource
import signal
import struct
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from explorer import speedups
from explorer.core import Property, PropertyKind, action_kind
from explorer.search import codec, label_counting, safeio
from explorer.search.iopath import naming
from explorer.search.live_graph import LiveRecorder
from explorer.search.monitor import CheckTables
from explorer.search.statepack import dumps_states, loads_states

__all__ = [
    "AFTER",
    "Expander",
    "LocalPool",
    "PackedStates",
    "PoolStats",
    "ProcessPool",
    "dump_share",
    "iter_share",
    "load_share",
    "load_share_as",
    "signed_fingerprint",
    "usage",
]

#: successor index of a deadlock event (after every real successor of its parent)
AFTER = 1 << 62
#: states per chunk of a dumped share (one blob of a whole share would hold a back-reference
#: table entry for every object of every state at once)
_DUMP_CHUNK = 10_000
#: the first bytes of a dumped share, with the format's version
_SHARE_MAGIC = b"KMCSHARE1\n"
_LEN8 = struct.Struct("<Q")
_TWO63, _TWO64 = 1 << 63, 1 << 64


@dataclass
class PoolStats:
    """What a run with a pool of workers measured about itself (pass one in to get it filled).

    ``parents`` and ``successors`` are per worker; CPU seconds are user + system time;
    ``driver_merge_seconds`` is the wall time the driver spent deduplicating.
    """

    workers: int = 0
    forked_at_depth: int | None = None
    parents: list[int] = field(default_factory=list)
    successors: list[int] = field(default_factory=list)
    worker_cpu: list[float] = field(default_factory=list)
    worker_rss_kb: list[int] = field(default_factory=list)
    worker_waited: list[float] = field(default_factory=list)  # seconds idle, waiting for the driver
    driver_cpu: float = 0.0
    driver_rss_kb: int = 0
    driver_merge_seconds: float = 0.0
    wall: float = 0.0
    packed: bool = False  #: the workers held their states packed (``pack``)


def signed_fingerprint(state: Any) -> int:
    """:func:`explorer.encoding.fingerprint` as a signed int64 (the key numpy arrays carry).

    >>> from explorer.encoding import fingerprint
    >>> signed_fingerprint((1, 2)) & (_TWO64 - 1) == fingerprint((1, 2))
    True
    """
    f = speedups.fingerprint(state)
    return f - _TWO64 if f >= _TWO63 else f


class PackedStates:
    """A read-only list of states kept as packed blobs of ``chunk`` states each
    (:func:`explorer.search.statepack.dumps_states`): about 170 bytes a controller state
    against about 930 as live objects. Indexing and slicing unpack the blobs they touch.

    >>> p = PackedStates([(i, None) for i in range(5)], chunk=2)
    >>> len(p), p[3], p[1:4], p[::2], list(p)[-1]
    (5, (3, None), [(1, None), (2, None), (3, None)], [(0, None), (2, None), (4, None)], (4, None))
    """

    def __init__(self, states: Any = (), chunk: int = 512):
        self.chunk = chunk
        self.blobs: list[bytes] = []
        self.n = 0
        buf: list[Any] = []
        for s in states:
            buf.append(s)
            if len(buf) == chunk:
                self.blobs.append(dumps_states(buf))
                self.n += chunk
                buf = []
        if buf:
            self.blobs.append(dumps_states(buf))
            self.n += len(buf)

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[Any]:
        for b in self.blobs:
            yield from loads_states(b)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(self.n)
            if step != 1:
                return list(self)[i]
            if stop <= start:
                return []
            first, last = start // self.chunk, (stop - 1) // self.chunk
            out: list[Any] = []
            for b in range(first, last + 1):
                out.extend(loads_states(self.blobs[b]))
            return out[start - first * self.chunk : stop - first * self.chunk]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return loads_states(self.blobs[i // self.chunk])[i % self.chunk]


def dump_share(path: Path, frontier: list[Any], ranks: list[int]) -> int:
    """Write one process's frontier share (its states and their ranks) to ``path``, synced;
    the number of states. A file already there (or a link) is unlinked first, never written
    through (:func:`explorer.search.safeio.create`): it may be a hard link into a snapshot. The file is data only (:mod:`explorer.search.codec`
    and :mod:`explorer.search.statepack`, never a pickle): the share count, then per chunk
    its packed states and its ranks, each prefixed by its length.

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "W0.bin"
    >>> dump_share(f, [(0, 1), (1, 0)], [0, 3]), load_share(f)
    (2, ([(0, 1), (1, 0)], [0, 3]))
    """
    path = Path(path)
    with naming(path), safeio.create(path) as fh:
        fh.write(_SHARE_MAGIC + _LEN8.pack(len(frontier)))
        for i in range(0, len(frontier), _DUMP_CHUNK):
            for blob in (
                dumps_states(list(frontier[i : i + _DUMP_CHUNK])),
                codec.encode(np.asarray(ranks[i : i + _DUMP_CHUNK], dtype=np.int64)),
            ):
                fh.write(_LEN8.pack(len(blob)))
                fh.write(blob)
        fh.flush()
        os.fsync(fh.fileno())
    return len(frontier)


def iter_share(path: Path) -> Iterator[tuple[list[Any], list[int]]]:
    """The chunks of the frontier share :func:`dump_share` wrote, in order: (states, ranks);
    ``ValueError`` naming the file for anything else."""

    def bad(why: str) -> codec.UnsafeFileError:
        return codec.UnsafeFileError(f"{path}: not a frontier share of kafka-mc ({why})")

    with open(path, "rb") as fh:

        def block() -> bytes:
            head = fh.read(_LEN8.size)
            if len(head) < _LEN8.size:
                raise bad("truncated")
            (k,) = _LEN8.unpack(head)
            data = fh.read(k)
            if len(data) != k:
                raise bad("truncated")
            return data

        if fh.read(len(_SHARE_MAGIC)) != _SHARE_MAGIC:
            raise bad("no header")
        head = fh.read(_LEN8.size)
        if len(head) < _LEN8.size:
            raise bad("truncated")
        (n,) = _LEN8.unpack(head)
        got = 0
        while got < n:
            try:
                states = loads_states(block())
                rs = codec.decode(block())
            except ValueError as e:
                raise bad(str(e)) from None
            if not isinstance(rs, np.ndarray) or len(rs) != len(states) or not states:
                raise bad("a chunk's ranks are not its states'")
            got += len(states)
            yield states, rs.tolist()


def load_share(path: Path) -> tuple[list[Any], list[int]]:
    """The frontier share :func:`dump_share` wrote: (states, ranks)."""
    frontier: list[Any] = []
    ranks: list[int] = []
    for states, rs in iter_share(path):
        frontier.extend(states)
        ranks.extend(rs)
    return frontier, ranks


def load_share_as(path: Path, pack: bool, chunk: int) -> tuple[Any, list[int]]:
    """The share at ``path`` as an expander holds its frontier: live states, or with ``pack``
    a :class:`PackedStates` packed chunk by chunk as the file is read, so that a resumed
    level never holds more than one chunk of live states (unpickling a whole share first
    took a worker to twice its memory at the widest level of a 10^8-state run).

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "W0.bin"
    >>> _ = dump_share(f, [(i, None) for i in range(5)], [0, 2, 4, 6, 8])
    >>> packed, ranks = load_share_as(f, True, 2)
    >>> list(packed), ranks
    ([(0, None), (1, None), (2, None), (3, None), (4, None)], [0, 2, 4, 6, 8])
    """
    if not pack:
        return load_share(path)
    ranks: list[int] = []

    def states() -> Iterator[Any]:
        for part, rs in iter_share(path):
            ranks.extend(rs)
            yield from part

    return PackedStates(states(), chunk), ranks


class Expander:
    """The search state one process owns: its frontier states (live objects) and counters.

    Runs in the driver for small levels and in each forked worker afterwards.
    """

    def __init__(
        self,
        system: Any,
        props: list[Property],
        deadlock: bool,
        batch: int,
        key: Callable[[Any], int] = hash,
        pack: bool = False,
        canon: Callable[[Any], Any] | None = None,
        live_dir: Path | None = None,
    ):
        self.system = system
        #: ``eventually`` properties: every expanded state's goal/trigger bits and every edge
        #: go to a file in ``live_dir`` per level (:mod:`explorer.search.live_graph`)
        live = [p for p in props if p.kind is PropertyKind.EVENTUALLY]
        self.live_dir = live_dir if live else None
        self.live = LiveRecorder(live, speedups.fingerprint) if self.live_dir is not None else None
        self.kind_names: list[str] = []  # local type id -> action kind (the edges' kinds)
        self._live_files = 0
        #: the symmetry reduction's representative of a successor (None: kept as it is)
        self.canon = canon
        self.batch = batch
        #: hold the frontier and the level's candidates packed (PackedStates, blobs per
        #: batch) rather than as live objects: a fifth of the memory, some CPU
        self.pack = pack
        self.blobs: list[bytes] = []  # the level's candidates, one packed blob per batch
        #: a state's 64-bit key: Python's hash (the same in forked processes), or with
        #: ``--visited fingerprints`` the stable fingerprint as a signed int64
        self.key = key
        self.labels: dict[Any, int] = {}
        self.succ = label_counting(system, self.labels) or system.successors
        self.labelled = getattr(system, "successors_labelled", None)
        self.is_terminal = getattr(system, "is_terminal", None)
        self.deadlock = deadlock
        checks = CheckTables(props)
        self.trans, self.state, self.reach = checks.trans_by_type, checks.always, checks.reach
        self.applies_state, self.applies_trans = checks.applies_state, checks.applies_trans
        self.frontier: Any = []  # a list of states, or PackedStates
        self.ranks: list[int] = []
        # hash -> (state, parent rank, index), or packed: (blob, position, parent rank, index)
        self.level: dict[int, tuple[Any, ...]] = {}
        # the level last expanded, and the label counts before each of its batches (for a cut)
        self.expanded: tuple[list[Any], list[int]] = ([], [])
        self.snapshots: list[tuple[int, dict[Any, int]]] = []  # (index of the batch's first parent, counts)
        self.type_ids: dict[type, int] = {}
        self.n_parents = 0
        self.n_successors = 0
        self.waited = 0.0  #: seconds a worker waited for the driver

    def expand_level(self) -> Iterator[tuple[Any, ...]]:
        """Expand the frontier in rank order; yield one message per batch of parents.

        A message is ``(ranks, counts, hashes, type ids, events, new types)``.
        """
        frontier, ranks = self.frontier, self.ranks
        self.expanded = (frontier, ranks)
        self.snapshots = []
        level: dict[int, tuple[Any, ...]] = {}
        blobs: list[bytes] = []
        self.level, self.blobs = level, blobs
        pack = self.pack
        succ = self.succ
        type_ids = self.type_ids
        applies_trans = self.applies_trans
        trans = self.trans
        trans_table = trans.table
        key, canon, live = self.key, self.canon, self.live
        for start in range(0, len(frontier), self.batch):
            R = ranks[start : start + self.batch]
            if self.labelled is not None:
                self.snapshots.append((start, dict(self.labels)))
            C: list[int] = []
            H: list[int] = []
            T: list[int] = []
            events: list[tuple[Any, ...]] = []
            new_types: list[tuple[int, Any, tuple[int, int]]] = []
            fresh: list[int] = []  # hashes first met in this batch (packed at its end)
            for s, r in zip(frontier[start : start + self.batch], R):
                n = 0
                if live is not None:
                    ks = key(s)
                    live.state(ks, s)
                for a, t in succ(s):
                    tp = type(a)
                    tid = type_ids.get(tp)
                    if tid is None:
                        tid = type_ids[tp] = len(type_ids)
                        new_types.append((tid, a, (r, n)))
                        self.kind_names.append(action_kind(a))
                    rep = t if canon is None else canon(t)  # checks see t, the visited set rep
                    h = key(rep)
                    H.append(h)
                    if live is not None:
                        live.edge(ks, a, h, tid)
                    T.append(tid)
                    if trans.count:
                        groups = trans_table.get(tp)  # the groups a step of this type runs
                        if groups is None:
                            groups = trans.for_type(tp)
                        for guard, items in groups:
                            if guard is not None and not guard(s, a, t):
                                continue
                            for item in items:
                                if not item[2](s, a, t):
                                    # one report per process is enough: stop checking it here
                                    trans.drop(item)
                                    events.append(((r, n, 0, item[0]), item[1], "t", (key(s), n)))
                        if applies_trans:
                            for ap in list(applies_trans):
                                if ap[1](s, a, t):
                                    applies_trans.remove(ap)
                                    events.append(((r, n, 0, -1), ap[0], "a", None))
                    if h not in level:
                        level[h] = (rep, r, n)
                        if pack:
                            fresh.append(h)
                    n += 1
                C.append(n)
                if n == 0 and self.deadlock and not (self.is_terminal is not None and self.is_terminal(s)):
                    self.deadlock = False
                    events.append(((r, AFTER, 2, 0), "deadlock", "d", key(s)))
            if fresh:
                bid = len(blobs)
                blobs.append(dumps_states([level[h][0] for h in fresh]))
                for i, h in enumerate(fresh):
                    e = level[h]
                    level[h] = (bid, i, e[1], e[2])
            self.n_parents += len(C)
            self.n_successors += len(H)
            if live is not None and start + self.batch >= len(frontier):
                self._write_live()  # before the last message: the driver may not ask for more
            yield (
                np.array(R, dtype=np.int64),
                np.array(C, dtype=np.int64),
                np.array(H, dtype=np.int64),
                np.array(T, dtype=np.int32),
                events,
                new_types,
            )

    def _write_live(self) -> None:
        """The level's graph records to a file of their own (read after the search)."""
        assert self.live is not None and self.live_dir is not None
        self._live_files += 1
        path = self.live_dir / f"edges-{os.getpid()}-{self._live_files:06d}.npz"
        np.savez(path, **self.live.records(self.kind_names))  # type: ignore[arg-type]
        self.live.clear()

    def accept(self, hashes: np.ndarray, ranks: np.ndarray) -> list[tuple[Any, ...]]:
        """Keep the new states (hashes, in rank order) as the next frontier and check them.

        The level's entries are consumed one by one, so with ``pack`` no more than a blob
        of candidates and a chunk of the new frontier are live objects at a time.
        """
        level, blobs = self.level, self.blobs
        self.level, self.blobs = {}, []
        self.ranks = ranks.tolist()
        events: list[tuple[Any, ...]] = []

        def checked() -> Iterator[Any]:
            reach, applies_state = self.reach, self.applies_state
            unpacked: tuple[int, list[Any]] = (-1, [])  # the blob in hand (entries come in batch order)
            for h in hashes.tolist():
                e = level.pop(h)
                if len(e) == 3:
                    t = e[0]
                else:
                    if e[0] != unpacked[0]:
                        unpacked = (e[0], loads_states(blobs[e[0]]))
                        blobs[e[0]] = b""  # read once: free it
                    t = unpacked[1][e[1]]
                r, j = e[-2], e[-1]
                for item in self.state:
                    if not item[2](t):
                        self.state = [x for x in self.state if x is not item]
                        events.append(((r, j, 1, item[0]), item[1], "s", h))
                if applies_state:
                    for ap in list(applies_state):
                        if ap[1](t):
                            applies_state.remove(ap)
                            events.append(((r, j, 1, -1), ap[0], "a", None))
                if reach:
                    for ritem in list(reach):
                        if ritem[2](t):
                            reach.remove(ritem)
                            events.append(((r, j, 1, ritem[0]), ritem[1], "w", h))
                yield t
            level.clear()  # the candidates that were not new
            blobs.clear()

        self.frontier = PackedStates(checked(), self.batch) if self.pack else list(checked())
        return events

    def label_counts(self, cut: int | None) -> dict[Any, int]:
        """Label counts so far, or (``cut``) those of the last level's parents up to rank ``cut``."""
        if cut is None or self.labelled is None:
            return dict(self.labels)
        frontier, ranks = self.expanded
        # the last batch that starts at or before the cut: its snapshot, then recount up to the cut
        start, counts = next(
            ((i, c) for i, c in reversed(self.snapshots) if ranks[i] <= cut), (0, dict(self.labels))
        )
        if not self.snapshots or ranks[start] > cut:
            return dict(self.snapshots[0][1]) if self.snapshots else dict(self.labels)
        counts = dict(counts)
        for s, r in zip(frontier[start:], ranks[start:]):
            if r > cut:
                break
            for _, _, labels in self.labelled(s):
                for lb in labels:
                    counts[lb] = counts.get(lb, 0) + 1
        return counts


def usage() -> tuple[float, int]:
    """This process's CPU seconds (user + system) and peak RSS (KiB)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def die_with_parent(parent: int) -> None:
    """Have the kernel send SIGKILL to this process when its parent ends (Linux
    ``prctl(PR_SET_PDEATHSIG)``); elsewhere, or if the parent is already gone, exit now
    when the parent is not ``parent`` any more."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the driver died before the prctl took effect
        os._exit(1)


def _serve(exp: Expander, cmd: str, args: tuple[Any, ...]) -> Any:
    """One expander's answer to a request of the driver (in a worker, or in the driver):
    ``accept`` the new states (their events), ``labels`` up to a cut, ``stats``, ``dump``
    its frontier share to a file or ``load`` one (its size)."""
    if cmd == "accept":
        return exp.accept(*args)
    if cmd == "labels":
        return exp.label_counts(*args)
    if cmd == "stats":
        return (exp.n_parents, exp.n_successors, *usage(), exp.waited)
    if cmd == "dump":
        return dump_share(args[0], exp.frontier, exp.ranks)
    assert cmd == "load", cmd
    exp.frontier, exp.ranks = load_share_as(args[0], exp.pack, exp.batch)
    return len(exp.frontier)


def _worker_main(i: int, exp: Expander, inq: Any, outq: Any, driver: int) -> None:
    """A forked worker's loop: expand a level, answer requests, until told to stop."""
    # the driver handles Ctrl-C and SIGTERM (sent to the whole process group too) and tells
    # us to stop; if the driver dies, whatever kills it, the kernel kills us
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with_parent(driver)
    gc.disable()  # as in bfs: immutable states make no cycles; the collector would only re-scan them
    try:
        while True:
            t0 = time.perf_counter()
            cmd, *args = inq.get()
            exp.waited += time.perf_counter() - t0
            if cmd == "expand":
                for batch in exp.expand_level():
                    outq.put((i, "batch", batch))
                    if not inq.empty() and inq.get()[0] == "abort":
                        break
                outq.put((i, "end", None))
            elif cmd == "stop":
                break
            elif cmd != "abort":  # "abort" after the level ended: nothing to do
                outq.put((i, cmd, _serve(exp, cmd, tuple(args))))
    except BaseException:  # pragma: no cover - reported to the driver, which raises
        outq.put((i, "error", traceback.format_exc()))
    finally:
        outq.close()
        outq.join_thread()


class LocalPool:
    """One expander in the driver (small levels): the same interface as :class:`ProcessPool`."""

    n = 1

    def __init__(self, exp: Expander):
        self.exp = exp
        self.gen: Iterator[tuple[Any, ...]] | None = None

    def start_level(self) -> None:
        """Start expanding the frontier."""
        self.gen = self.exp.expand_level()

    def next_batch(self, w: int) -> tuple[Any, ...] | None:
        """The next batch of the level (None: the level is done)."""
        assert self.gen is not None
        return next(self.gen, None)

    def finish_level(self, abort: bool) -> None:
        """The level is merged (or cut: ``abort``)."""
        self.gen = None

    def call(self, cmd: str, args: list[tuple[Any, ...]] | None = None) -> list[Any]:
        """The expander's answer to ``cmd`` (``args``: per process) in a list of one."""
        return [_serve(self.exp, cmd, args[0] if args else ())]

    def close(self) -> None:
        """Nothing to stop."""


class ProcessPool:
    """``n`` forked workers, each with a share of the local expander's frontier (the states
    of rank ``i mod n``); ``call("load", ...)`` gives them shares from files instead."""

    def __init__(self, exp: Expander, n: int):
        ctx = mp.get_context("fork")
        self.n = n
        self.outq = ctx.Queue()
        self.inqs = [ctx.Queue() for _ in range(n)]
        self.pending: list[deque[tuple[str, Any]]] = [deque() for _ in range(n)]
        self.procs: list[Any] = []
        self.ended = [True] * n
        frontier, ranks, labels = exp.frontier, exp.ranks, dict(exp.labels)
        try:
            for i in range(n):
                # the child inherits exp as it is now; give it its share and fresh counters
                exp.frontier, exp.ranks = frontier[i::n], ranks[i::n]
                exp.labels.clear()
                p = ctx.Process(
                    target=_worker_main, args=(i, exp, self.inqs[i], self.outq, os.getpid()), daemon=True
                )
                p.start()
                self.procs.append(p)
        except BaseException:
            self.close()
            raise
        finally:
            exp.frontier, exp.ranks = frontier, ranks
            exp.labels.update(labels)

    def _recv(self, w: int) -> tuple[str, Any]:
        while not self.pending[w]:
            try:
                i, kind, payload = self.outq.get(timeout=0.5)
            except queue_mod.Empty:
                dead = [i for i, p in enumerate(self.procs) if p.exitcode is not None]
                if dead:
                    code = self.procs[dead[0]].exitcode
                    raise RuntimeError(f"pbfs: worker {dead[0]} died (exit code {code})") from None
                continue
            if kind == "error":
                last = str(payload).strip().splitlines()[-1] if str(payload).strip() else ""
                if last.startswith("explorer.search.codec.UnsafeFileError: "):
                    # a crafted frontier share of a checkpoint: refused, in one line
                    raise codec.UnsafeFileError(last.split(": ", 1)[1])
                raise RuntimeError(f"pbfs: worker {i} failed:\n{payload}")
            self.pending[i].append((kind, payload))
        return self.pending[w].popleft()

    def _expect(self, w: int, kind: str) -> Any:
        while True:
            k, payload = self._recv(w)
            if k == kind:
                return payload
            # leftovers of an aborted level ("batch", "end") are dropped

    def start_level(self) -> None:
        self.ended = [False] * self.n
        for q in self.inqs:
            q.put(("expand",))

    def next_batch(self, w: int) -> tuple[Any, ...] | None:
        if self.ended[w]:
            return None
        kind, payload = self._recv(w)
        if kind == "end":
            self.ended[w] = True
            return None
        assert kind == "batch", kind
        return payload  # type: ignore[no-any-return]

    def finish_level(self, abort: bool) -> None:
        for w in range(self.n):
            if not self.ended[w]:
                if abort:
                    self.inqs[w].put(("abort",))
                self._expect(w, "end")
                self.ended[w] = True

    def call(self, cmd: str, args: list[tuple[Any, ...]] | None = None) -> list[Any]:
        """Each worker's answer to ``cmd`` (``args``: per worker), in worker order."""
        for w, q in enumerate(self.inqs):
            q.put((cmd, *(args[w] if args else ())))
        return [self._expect(w, cmd) for w in range(self.n)]

    def close(self) -> None:
        for q in self.inqs:
            with contextlib.suppress(Exception):
                q.put(("stop",))
        for p in self.procs:
            p.join(timeout=5)
            if p.exitcode is None:
                p.terminate()
                p.join(timeout=5)
            if p.exitcode is None:  # pragma: no cover
                p.kill()
                p.join()
        for q in [*self.inqs, self.outq]:
            q.close()
            q.cancel_join_thread()
