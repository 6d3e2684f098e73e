"""The level-synchronous search: the serial search's parts with a pool of workers as expander.

:func:`level_synchronous` is what ``bfs --workers N`` runs. It composes the parts of the
serial search (:mod:`explorer.search.serial`): a visited set over the states' keys
(:class:`~explorer.search.visited.HashVisited`, or the
:class:`~explorer.search.visited.FingerprintVisited` table and parent log), the
:class:`~explorer.search.monitor.PropertyMonitor`, the :class:`~explorer.search.serial.Budgets`
and signals, a :class:`~explorer.search.serial.Checkpointer`, and leaves an
:class:`~explorer.search.serial.Outcome` for :func:`~explorer.search.serial.finish`, the one
result builder. What differs is the expander: an :class:`~explorer.search.pool.Expander` run
in the driver for small levels, then by ``workers`` forked processes
(:mod:`explorer.search.pool`), and so the loop works a level at a time.

How a level runs
----------------
Every state of a level has a *rank*, its position in the order in which the serial search
finds it. States never move between processes: each worker owns, as live objects, the
frontier states it generated itself, and expands them in rank order. For every successor
it sends the driver its key (Python's ``hash``, the same in every forked process, or with
fingerprints the stable 64-bit fingerprint) and a small action-type id, in numpy batches.
The driver merges the workers' streams in rank order and deduplicates exactly as the serial
search does (the first transition in rank order to reach a state makes its parent). At the
end of the level it tells each worker which of its successors are new and their ranks; the
worker keeps those as its next frontier and checks the ``always`` and ``reachable``
properties (and ``applies``) on them. ``transition`` properties and deadlocks are checked
while expanding. Every event is reported with its position ``(parent rank, successor index,
phase, property index)`` and handed to the monitor in that order, so it keeps, per property,
the one the serial search meets first.

When the search stops in the middle of a level (the first violation without
``keep_going``, ``max_states``, ``max_seconds`` or an interrupt), the driver cuts the level
after the same parent the serial search stops at: counts and coverage come from the
per-parent data it holds, and the workers recount the coverage labels of their parents up
to the cut. The workers are forked when the frontier first reaches ``serial_below`` states
and take the states of rank ``i mod N``; from then on a worker's share is the share of new
states it discovers. For ``eventually`` properties each process writes, level by level, the
goal/trigger bits of the states it expands and its edges as fingerprint records; after a
complete search they are decided on that graph (:mod:`explorer.search.live_graph`).

Example
-------
>>> from tests.toys import Grid
>>> from explorer.engines import CheckOptions
>>> from explorer.search.serial import finish
>>> g = Grid(3, limit=3)
>>> m = PropertyMonitor(g.properties(), keep_going=True)
>>> out = level_synchronous(g, m, HashVisited(g), Expander(g, m.props, True, 8), workers=2, serial_below=2)
>>> r = finish(g, out, CheckOptions(keep_going=True))
>>> r.distinct_states, [(v.property, v.length) for v in r.violations]
(16, [('sum_below_limit', 3)])
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from explorer import speedups
from explorer.search import safeio
from explorer.search.checkpoint import crash_point
from explorer.search.coverage import Coverage
from explorer.search.live_graph import FingerprintGraph, check_eventually
from explorer.search.loop import run_levels
from explorer.search.monitor import PropertyMonitor
from explorer.search.pool import AFTER, Expander, LocalPool, PoolStats, ProcessPool, usage
from explorer.search.progress import Progress
from explorer.search.results import explored_fields
from explorer.search.serial import Checkpointer, Outcome
from explorer.search.stopping import Budgets, LevelBook, polled
from explorer.search.visited import NO_PARENT, FingerprintVisited, HashVisited

__all__ = ["PoolLevels", "level_synchronous"]

_MASK = (1 << 64) - 1


class _Coverage:
    """Coverage by global action-type id (numpy counters), from the workers' local type ids."""

    def __init__(self, st: dict[str, Any] | None = None):
        st = st or {"type_index": {}, "type_samples": [], "enabled": [], "new_by": []}
        self.type_index: dict[type, int] = dict(st["type_index"])
        #: gid -> (position of the first sample, the sample action)
        self.type_samples: list[tuple[tuple[int, int, int], Any]] = list(st["type_samples"])
        self.enabled = np.array(st["enabled"], dtype=np.int64)
        self.new_by = np.array(st["new_by"], dtype=np.int64)

    def snapshot(self) -> dict[str, Any]:
        """What a checkpoint keeps (read back by the constructor)."""
        return {
            "type_index": dict(self.type_index),
            "type_samples": list(self.type_samples),
            "enabled": self.enabled.tolist(),
            "new_by": self.new_by.tolist(),
        }

    def map_types(self, g: list[int], new_types: list[tuple[int, Any, tuple[int, int]]], depth: int) -> None:
        """Give a worker's new local type ids (in its map ``g``) their global ids."""
        for tid, a, (r, j) in new_types:
            tp = type(a)
            gid = self.type_index.get(tp)
            if gid is None:
                gid = self.type_index[tp] = len(self.type_index)
                self.type_samples.append(((depth, r, j), a))
            elif (depth, r, j) < self.type_samples[gid][0]:
                self.type_samples[gid] = ((depth, r, j), a)
            while len(g) <= tid:
                g.append(-1)
            g[tid] = gid

    def count(
        self, batches: list[tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]], cut: int | None
    ) -> int:
        """Count a level's transitions (up to the parent of rank ``cut``); how many."""
        n_types = len(self.type_index)
        grow = n_types - len(self.enabled)
        if grow > 0:
            self.enabled = np.concatenate([self.enabled, np.zeros(grow, dtype=np.int64)])
            self.new_by = np.concatenate([self.new_by, np.zeros(grow, dtype=np.int64)])
        generated = 0
        for R, C, G, newidx in batches:
            mask = np.zeros(len(G), dtype=bool)
            mask[newidx] = True
            if cut is not None:
                upto = R <= cut  # noqa: SIM300 (a numpy mask)
                keep = np.repeat(upto, C)
                G, mask = G[keep], mask[keep]
                C = C[upto]
            generated += int(C.sum())
            self.enabled += np.bincount(G, minlength=n_types)[:n_types]
            self.new_by += np.bincount(G[mask], minlength=n_types)[:n_types]
        return generated

    def coverage(self) -> Coverage:
        """The counts by action type."""
        cov = Coverage()
        for gid, (_, sample) in enumerate(self.type_samples):
            if gid < len(self.enabled) and self.enabled[gid]:
                tp = type(sample)
                cov.enabled[tp] = int(self.enabled[gid])
                cov.new[tp] = int(self.new_by[gid])
                cov.sample[tp] = sample
        return cov


def level_synchronous(
    system: Any,
    monitor: PropertyMonitor,
    visited: HashVisited | FingerprintVisited,
    exp: Expander,
    **parts: Any,
) -> Outcome:
    """Explore ``system`` level by level with ``exp`` as the expander, in the driver while a
    level has fewer than ``serial_below`` states, then in ``workers`` forked processes; the
    same counts, levels, violations and witnesses as :func:`explorer.search.serial.breadth_first`.
    ``parts``: those of :class:`PoolLevels` (``workers``, ``serial_below``, ``budgets``, ...)."""
    run = PoolLevels(system, monitor, visited, exp, **parts)
    run_levels(run, run.book, monitor)
    return run.outcome()


class PoolLevels:
    """The driver of ``bfs --workers``: the :class:`LevelExpander` whose levels the
    :class:`~explorer.search.pool.Expander` expands in the driver or in a pool of forked
    workers, merged here against the visited set in rank order (the module's doc tells how).

    ``visited`` holds keys (``exp.key``): Python hashes in a :class:`HashVisited`, or
    fingerprints in a :class:`FingerprintVisited`, whose places (``at``) the monitor gets as
    state indices at the end. ``stats`` gets the run's load balance."""

    def __init__(
        self,
        system: Any,
        monitor: PropertyMonitor,
        visited: HashVisited | FingerprintVisited,
        exp: Expander,
        *,
        workers: int,
        serial_below: int,
        budgets: Budgets | None = None,
        checkpointer: Checkpointer | None = None,
        progress: Progress | None = None,
        clock: Callable[[], float] = time.perf_counter,
        stats: PoolStats | None = None,
    ):
        self.system, self.monitor, self.visited, self.exp = system, monitor, visited, exp
        self.workers, self.serial_below = workers, serial_below
        self.checkpointer, self.progress, self.clock = checkpointer, progress, clock
        self.st = st = stats if stats is not None else PoolStats()
        st.workers = workers
        self.cpu0, _ = usage()
        self.snap = checkpointer.snapshot if checkpointer is not None else None
        self.start = clock() - (self.snap[0]["elapsed"] if self.snap is not None else 0.0)
        self.book = LevelBook(budgets if budgets is not None else Budgets(), self.start)
        self.cov = _Coverage(self.snap[0] if self.snap is not None else None)
        self.label_base: dict[Any, int] = {}
        self.pool: LocalPool | ProcessPool = LocalPool(exp)
        self.gmaps: list[list[int]] = [[]]  # per worker: local type id -> global type id
        self.owner: list[int] = []
        self.frontier_hashes: list[int] = []
        self.merge_seconds = 0.0
        self.cut: int | None = None
        self.last_snapshot = 0.0
        self.polling = polled()  # the first signal sets a flag, read where the budgets are
        self.closed = self.tallied = False

    def initial(self) -> None:
        """The initial states, or the driver's bookkeeping as the checkpoint left it."""
        system, monitor, visited, exp, clock = self.system, self.monitor, self.visited, self.exp, self.clock
        self.polling.__enter__()
        t0 = clock()
        if self.snap is not None:  # resume: the driver's bookkeeping as the snapshot left it
            snap, _, files = self.snap
            book = self.book
            book.generated, book.depth, book.levels = snap["generated"], snap["depth"], snap["levels"]
            monitor.restore(snap)
            self.frontier_hashes, self.owner = snap["frontier"].tolist(), snap["owner"].tolist()
            self.merge_seconds = snap["merge_seconds"]
            if snap["forked"]:  # fresh workers, each loading its share
                self.pool = ProcessPool(exp, self.workers)
                self.gmaps = [[] for _ in range(self.workers)]
                self.label_base = dict(snap["labels"])
                self.st.forked_at_depth = snap["forked_at_depth"]
            else:
                exp.labels.update(snap["labels"])
            self.pool.call("load", [(f,) for f in files])
        else:
            generated = 0
            frontier_hashes = self.frontier_hashes
            for j, s in enumerate(system.init_states()):
                generated += 1
                if exp.canon is not None:
                    s = exp.canon(s)
                h = exp.key(s)
                if isinstance(visited, FingerprintVisited):
                    new = visited.table.add(h & _MASK)
                    if new:
                        visited.log.append(NO_PARENT, j, h & _MASK)
                else:
                    new = visited.add_initial(h, j)
                if new:
                    frontier_hashes.append(h)
                    exp.level[h] = (s, -1, j)
            monitor.take(
                exp.accept(np.array(frontier_hashes, dtype=np.int64), np.arange(len(frontier_hashes)))
            )
            self.owner = [0] * len(frontier_hashes)
            self.book.initial(len(frontier_hashes), generated, clock() - t0)
        self.last_snapshot = clock()

    def pending(self) -> int:
        """The states of the next level."""
        return len(self.frontier_hashes)

    def _snapshot_state(self) -> dict[str, Any]:
        """The driver's bookkeeping at this level boundary (the workers dump their shares)."""
        visited, book, pool = self.visited, self.book, self.pool
        assert isinstance(visited, FingerprintVisited) and visited.removed == 0
        labels = _summed(self.label_base, pool.call("labels", [(None,)] * pool.n))
        return {
            "known": len(visited),
            "checks_left": visited.checks_left,
            "generated": book.generated,
            "depth": book.depth,
            "levels": book.levels,
            **self.monitor.snapshot(),
            **self.cov.snapshot(),
            "frontier": np.array(self.frontier_hashes, dtype=np.int64),
            "owner": np.array(self.owner, dtype=np.int32),
            "labels": labels,
            "forked": isinstance(pool, ProcessPool),
            "forked_at_depth": self.st.forked_at_depth,
            "merge_seconds": self.merge_seconds,
            "elapsed": self.clock() - self.start,
        }

    def _shares(self, dump: bool = False) -> list[Path]:
        """The files of each process's frontier share in the checkpoint (``dump``: written)."""
        assert self.checkpointer is not None
        frontier = self.checkpointer.folder / "frontier"
        safeio.make_dir(frontier, exist_ok=True)  # a link there is refused, never written into
        paths = [frontier / f"W{i}.bin" for i in range(self.pool.n)]
        if dump:
            self.pool.call("dump", [(p,) for p in paths])
        return paths

    def between(self) -> None:
        """A checkpoint, when one is due."""
        checkpointer, clock = self.checkpointer, self.clock
        if checkpointer is not None and clock() - self.last_snapshot >= checkpointer.every:
            checkpointer.write(self._snapshot_state(), self.visited, lambda: self._shares(dump=True))
            for path in self._shares():
                path.unlink()
            self.last_snapshot = clock()

    def expand_level(self) -> None:
        """One level: the workers forked first once it is wide enough; their successors merged in
        rank order, cut where the serial search stops."""
        monitor, visited, exp, book, clock, st = (
            self.monitor,
            self.visited,
            self.exp,
            self.book,
            self.clock,
            self.st,
        )
        workers, cov, progress = self.workers, self.cov, self.progress
        poll, max_states = book.poll, book.budgets.max_states
        if max_states is None:  # poll is called only where it may stop the search
            max_states = 1 << 63
        lean = isinstance(visited, FingerprintVisited)
        seen: Any = visited.parents if isinstance(visited, HashVisited) else None
        frontier_hashes, owner, pool, gmaps = self.frontier_hashes, self.owner, self.pool, self.gmaps
        depth = book.depth
        if isinstance(pool, LocalPool) and workers > 1 and len(frontier_hashes) >= self.serial_below:
            pool = self.pool = ProcessPool(exp, workers)
            gmaps = self.gmaps = [list(gmaps[0]) for _ in range(workers)]
            self.label_base = dict(exp.labels)
            owner = [r % workers for r in range(len(frontier_hashes))]
            st.forked_at_depth = depth
        t0 = clock()
        n_workers = pool.n
        gmap_arr = [np.array(g, dtype=np.int64) for g in gmaps]
        cursors: list[Any] = [None] * n_workers
        batches: list[tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]] = []
        events: list[tuple[Any, ...]] = []
        stop_rank = 1 << 63  # smallest rank of a violation seen (without keep_going)
        new_hashes: list[int] = []
        new_owner: list[int] = []
        new_prank: list[int] = []
        per_worker_new: list[list[int]] = [[] for _ in range(n_workers)]
        cut = None
        cut_budget: str | None = None
        pool.start_level()
        L = len(frontier_hashes)
        known = len(visited)
        if isinstance(visited, FingerprintVisited):  # the level's states: indices base .. base + L - 1
            base, add, lbuf = known - L, visited.table.add, visited.log.buf
            if len(lbuf) >= 1 << 21:
                visited.log.flush()
        tm = clock()
        for pos in range(L):
            w = owner[pos]
            cur = cursors[w]
            if cur is None or cur[3] >= len(cur[0]):
                msg = pool.next_batch(w)
                assert msg is not None, "--workers: a worker ended its level early"
                R, C, H, T, evs, new_types = msg
                if new_types:
                    cov.map_types(gmaps[w], new_types, depth)
                    gmap_arr[w] = np.array(gmaps[w], dtype=np.int64)
                if evs:
                    events.extend(evs)
                    if not monitor.keep_going:
                        stop_rank = min([stop_rank, *(e[0][0] for e in evs if e[2] in "tsd")])
                newidx: list[int] = []
                batches.append((R, C, gmap_arr[w][T] if len(T) else T, newidx))
                cur = cursors[w] = [R.tolist(), C.tolist(), H.tolist(), 0, 0, newidx]
            _, Cl, Hl, pi, off, newidx = cur
            n = Cl[pi]
            mine = per_worker_new[w]
            if lean:
                plink = (base + pos) << 32
                for k in range(off, off + n):
                    h = Hl[k]
                    if add(h & _MASK):
                        lbuf.append(plink | (k - off))
                        lbuf.append(h & _MASK)
                        newidx.append(k)
                        mine.append(len(new_hashes))
                        new_hashes.append(h)
                        new_owner.append(w)
                        new_prank.append(pos)
            else:
                ph = frontier_hashes[pos]
                for k in range(off, off + n):
                    h = Hl[k]
                    if h not in seen:
                        seen[h] = ph
                        newidx.append(k)
                        mine.append(len(new_hashes))
                        new_hashes.append(h)
                        new_owner.append(w)
                        new_prank.append(pos)
            cur[3] = pi + 1
            cur[4] = off + n
            if pos >= stop_rank:
                cut = pos
                break
            if known + len(new_hashes) < max_states and pos & 255:
                continue
            why = poll(known + len(new_hashes), pos, frontier_hashes, clock, progress, crash_point)
            if why is not None:
                cut, cut_budget = pos, why
                break
        self.merge_seconds += clock() - tm
        pool.finish_level(abort=cut is not None)
        # the new states: each to the worker that generated it; check always/reachable there
        per_worker = [
            (np.array([new_hashes[i] for i in idx], dtype=np.int64), np.array(idx, dtype=np.int64))
            for idx in per_worker_new
        ]
        events.extend(ev for evs in pool.call("accept", per_worker) for ev in evs)
        if not monitor.keep_going:
            viol = [e[0][0] for e in events if e[2] in "tsd"]
            if viol and (cut is None or min(viol) <= cut):
                cut, cut_budget = min(viol), None
        monitor.take(events, None if cut is None else (cut, AFTER + 1, 0, 0))
        level_generated = cov.count(batches, cut)
        if cut is not None:
            monitor.stop = True
            book.cut(cut_budget)
            n_new = next((i for i, pr in enumerate(new_prank) if pr > cut), len(new_prank))
            if isinstance(visited, FingerprintVisited):
                visited.removed += len(new_hashes) - n_new
            else:
                for h in new_hashes[n_new:]:
                    del seen[h]
            del new_hashes[n_new:], new_owner[n_new:]
        book.level_done(len(new_hashes), level_generated, clock() - t0)
        self.frontier_hashes, self.owner, self.cut = new_hashes, new_owner, cut

    def done(self) -> None:
        """Nothing to finish: :meth:`outcome` reads the workers."""

    def interrupted(self) -> None:
        """A signal in the middle of a level: the workers' level aborted."""
        self.cut = None
        with contextlib.suppress(Exception):
            self.pool.finish_level(abort=True)

    def close(self) -> None:
        """The workers ended, the signal flag no longer polled, the progress line closed; the
        visited set too when the search failed (else :func:`~explorer.search.serial.finish` does)."""
        if self.closed:
            return
        self.closed = True
        self.polling.__exit__(None, None, None)
        self.pool.close()  # no orphan workers, whatever failed
        if not self.tallied:
            self.visited.close()
        if self.progress is not None:
            self.progress.close()

    def outcome(self) -> Outcome:
        """What the search found, for the result builder; the workers' label counts and load read first."""
        monitor, visited, exp, pool, st = self.monitor, self.visited, self.exp, self.pool, self.st
        self.tallied = True
        try:
            cut = self.cut if monitor.stop else None
            label_counts = _summed(self.label_base, pool.call("labels", [(cut,)] * pool.n))
            if isinstance(pool, ProcessPool):
                rows = [list(col) for col in zip(*pool.call("stats"))]
                st.parents, st.successors, st.worker_cpu, st.worker_rss_kb, st.worker_waited = rows
            else:
                st.parents, st.successors = [exp.n_parents], [exp.n_successors]
        finally:
            self.close()
        seconds = self.clock() - self.start
        cpu1, st.driver_rss_kb = usage()
        st.driver_cpu, st.driver_merge_seconds, st.wall, st.packed = (
            cpu1 - self.cpu0,
            self.merge_seconds,
            seconds,
            exp.pack,
        )
        if isinstance(visited, FingerprintVisited):  # the monitor's places: indices, as serially
            monitor.relocate(visited.index_of)
        explored = self.book.explored(
            self.cov.coverage(), label_counts, seconds, len(visited), monitor.applied
        )
        out = Outcome(**explored_fields(explored), monitor=monitor, visited=visited, canon=exp.canon)  # type: ignore[arg-type]
        if exp.live_dir is not None:
            live_dir, system, key = exp.live_dir, self.system, exp.key
            out.decide_live = lambda: _decide_live(system, monitor, key, visited, live_dir)
        return out


def _summed(base: dict[Any, int], counts: list[dict[Any, int]]) -> dict[Any, int]:
    """The label counts ``base`` plus each process's ``counts``."""
    total = dict(base)
    for d in counts:
        for k, v in d.items():
            total[k] = total.get(k, 0) + v
    return total


def _decide_live(
    system: Any, monitor: PropertyMonitor, key: Callable[[Any], int], visited: Any, live_dir: Path
) -> dict[str, Any]:
    """The ``eventually`` properties decided on the graph the workers recorded: the states in
    the serial search's order with their parents (the visited set), the edges from
    ``live_dir`` (:func:`explorer.search.live_graph.check_eventually`)."""
    if isinstance(visited, FingerprintVisited):
        keys, parent = visited.bfs_graph()
    else:
        seen = visited.parents
        keys = np.array(list(seen), dtype=np.int64).view(np.uint64)
        index = {h: i for i, h in enumerate(seen)}
        parent = np.array([-1 if p is None else index[p] for p in seen.values()], dtype=np.int64)
    parts = []
    for path in sorted(live_dir.glob("edges-*.npz")):
        with np.load(path) as z:
            parts.append({k: z[k] for k in z.files})
    graph = FingerprintGraph(keys, parent, parts)
    return check_eventually(
        system, monitor.live, graph, key, monitor.keep_going, action_fp=speedups.fingerprint
    )
