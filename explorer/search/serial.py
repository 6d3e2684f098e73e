"""The one serial breadth-first search, composed of parts the engine chooses.

:func:`breadth_first` explores a system level by level: :class:`SerialLevels`, the in-process
expander of the one loop (:func:`explorer.search.loop.run_levels`). What varies is handed in:

* the visited set (:mod:`explorer.search.visited`): :class:`~explorer.search.visited.StateVisited`
  (every state and its parent, exact) or :class:`~explorer.search.visited.FingerprintVisited`
  (64-bit fingerprints and parent records on disk);
* the frontier (:class:`~explorer.search.frontier.LevelQueue`): in memory, or spilled to
  disk beyond ``frontier_batch`` states;
* the canonicaliser (:mod:`explorer.search.symmetry`: one state per orbit) and the
  successor filter (:mod:`explorer.search.reduction`: ample sets);
* the property monitor (:mod:`explorer.search.monitor`), the stopper (budgets and signals,
  :mod:`explorer.search.stopping`), a checkpointer (:class:`Checkpointer`), and the graph
  ``eventually`` properties need: with the exact visited set its edges, with fingerprints its
  records as fingerprints (:class:`~explorer.search.live_graph.LiveRecorder`, 26 bytes an edge,
  written to the work folder level by level and decided after the search as ``--workers`` does).

:func:`finish` turns what the search found into the :class:`~explorer.core.CheckResult`
(traces, liveness, the result builder :func:`explorer.search.results.exhaustive_result`).

Example
-------
>>> from tests.toys import Grid
>>> from explorer.search.visited import StateVisited
>>> g = Grid(3, limit=3)
>>> out = breadth_first(g, PropertyMonitor(g.properties(), keep_going=True), StateVisited())
>>> from explorer.engines import CheckOptions
>>> r = finish(g, out, CheckOptions(keep_going=True))
>>> r.exit_reason.value, r.distinct_states, [v.property for v in r.violations]
('violation', 16, ['sum_below_limit'])
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from explorer import speedups
from explorer.core import CheckResult, ExitReason, LevelStats, action_kind, render_state
from explorer.search import codec, safeio, teardown
from explorer.search.checkpoint import crash_point, write_snapshot
from explorer.search.coverage import Coverage, label_counting
from explorer.search.frontier import LevelQueue
from explorer.search.liveness import check_liveness
from explorer.search.loop import run_levels
from explorer.search.monitor import Found, PropertyMonitor
from explorer.search.progress import Progress
from explorer.search.reduction import AmpleSets
from explorer.search.results import Explored, RunLabels, exhaustive_result, explored_fields
from explorer.search.stopping import NO_BUDGETS, Budgets, LevelBook, polled
from explorer.search.symmetry import Canonicaliser, path_trace, symmetry_notes
from explorer.search.visited import ReplayMismatch, ordered_successors

__all__ = ["Budgets", "Checkpointer", "ModelRaised", "Outcome", "SerialLevels", "breadth_first", "finish"]


@dataclass
class ModelRaised:
    """The system's own code raised: the exception, where (``at`` of the state being
    expanded, None in ``init_states``), the last action taken from it and how many."""

    #: an ``Exception`` (annotated Any: a mypyc-compiled dataclass resolves its annotations in
    #: the module's globals, where the builtin name is not, and fails at import with KeyError)
    error: Any
    state: Any
    at: Any
    action: Any
    taken: int
    depth: int


@dataclass
class Outcome(Explored):
    """What one :func:`breadth_first` run leaves for :func:`finish`: what it counted, and the
    parts it searched with."""

    monitor: PropertyMonitor
    visited: Any
    canon: Canonicaliser | None = None
    ample: AmpleSets | None = None
    edges: dict[Any, list[tuple[Any, Any]]] | None = None
    model_error: ModelRaised | None = None
    #: the search froze the collector's objects (:func:`finish` unfreezes them)
    frozen: bool = False
    #: decides the ``eventually`` properties after a complete search, where the search kept
    #: no ``edges`` (the workers' recorded graph): name -> violation or None
    decide_live: Callable[[], dict[str, Any]] | None = None


class Checkpointer:
    """Snapshots of a search with the fingerprint visited set, every ``every`` seconds at a
    level boundary, into ``folder`` (:mod:`explorer.search.checkpoint`); ``snapshot`` is the
    one a resumed run continues from."""

    def __init__(self, folder: Path, every: float, snapshot: tuple[dict[str, Any], Any, list[Path]] | None):
        self.folder, self.every, self.snapshot = folder, every, snapshot
        self.seq = snapshot[0]["seq"] if snapshot is not None else 0

    def write(self, state: dict[str, Any], visited: Any, frontier: Callable[[], list[Path]]) -> None:
        """One consistent snapshot: the parent log synced, the frontier persisted (the files
        ``frontier()`` writes), then the counters and the table written and switched to
        atomically."""
        self.seq += 1
        visited.flush(sync=True)
        write_snapshot(self.folder, self.seq, {**state, "seq": self.seq}, visited.table, frontier())


def breadth_first(
    system: Any,
    monitor: PropertyMonitor,
    visited: Any,
    *,
    budgets: Budgets = NO_BUDGETS,
    canon: Canonicaliser | None = None,
    ample: AmpleSets | None = None,
    work: Path | None = None,
    frontier_batch: int | None = None,
    checkpointer: Checkpointer | None = None,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Outcome:
    """Explore ``system`` level by level from its initial states; every part as given.

    A state is checked by the ``monitor`` when it is first seen, every generated transition
    (also to a known state) as it is generated; the first transition in breadth-first
    order to reach a state makes its parent, so every path kept is a shortest one.
    ``frontier_batch`` states of a level stay in memory (None: all), the rest go to batch
    files in ``work``. With ``eventually`` properties (``monitor.live``) every edge is kept:
    with the exact visited set as states, else as fingerprint records in ``work``.
    """
    search = SerialLevels(
        system, monitor, visited, budgets, canon, ample, work, frontier_batch, checkpointer, progress, clock
    )
    run_levels(search, search.book, monitor)
    return search.outcome()


class SerialLevels:
    """The serial search as the :class:`~explorer.search.loop.LevelExpander` of the one loop:
    every level expanded in this process, each successor merged against the visited set as it
    is generated (:func:`breadth_first` tells the parts). The model's own exceptions end the
    search with a partial result (:class:`ModelRaised`)."""

    def __init__(
        self,
        system: Any,
        monitor: PropertyMonitor,
        visited: Any,
        budgets: Budgets,
        canon: Canonicaliser | None,
        ample: AmpleSets | None,
        work: Path | None,
        frontier_batch: int | None,
        checkpointer: Checkpointer | None,
        progress: Progress | None,
        clock: Callable[[], float],
    ):
        self.system, self.monitor, self.visited, self.canon, self.ample = (
            system,
            monitor,
            visited,
            canon,
            ample,
        )
        self.checkpointer, self.progress, self.clock = checkpointer, progress, clock
        self.keeps = keeps = visited.keeps_states
        self.edges: dict[Any, list[tuple[Any, Any]]] | None = {} if monitor.live and keeps else None
        self.own_work = work is None and (frontier_batch is not None or bool(monitor.live and not keeps))
        if self.own_work:
            work = Path(tempfile.mkdtemp(prefix="kafka-mc-frontier-"))
        self.work = work
        #: without the states: the graph ``eventually`` properties need, as fingerprint records
        self.live: Any = None
        self.live_dir = (work / "live") if work is not None else Path(".")
        self.kind_ids: dict[type, int] = {}
        self.kind_names: list[str] = []
        if monitor.live and not keeps:
            from explorer.search.live_graph import LiveRecorder  # numpy, only for such a search

            self.live = LiveRecorder(monitor.live, speedups.fingerprint)
            safeio.make_dir(self.live_dir, exist_ok=True)
            for stale in self.live_dir.iterdir():
                safeio.remove(stale)
        self.frontier_dir = frontier_dir = (work / "frontier") if work is not None else Path(".")
        if work is not None:  # a link for the folder is refused; one in it removed, not followed
            safeio.make_dir(frontier_dir, exist_ok=True)
            for stale in frontier_dir.iterdir():
                safeio.remove(stale)
        self.limit = limit = sys.maxsize if frontier_batch is None else frontier_batch
        self.label_counts: dict[Any, int] = {}
        self.successors = label_counting(system, self.label_counts) or system.successors
        self.cov = cov = Coverage()
        snap = checkpointer.snapshot if checkpointer is not None else None
        self.book = book = LevelBook(budgets, clock() - (snap[0]["elapsed"] if snap is not None else 0.0))
        if snap is not None:  # resume: every counter as the snapshot left it
            st, _, files = snap
            book.generated, book.depth, book.levels = st["generated"], st["depth"], st["levels"]
            cov.enabled.update(st["enabled"])
            cov.new.update(st["new"])
            cov.sample.update(st["sample"])
            self.label_counts.update(st["label_counts"])
            monitor.restore(st)
            linked = []
            for k, f in enumerate(files):
                dst = frontier_dir / f"R{k:06d}.bin"
                safeio.hard_link(f, dst)
                linked.append(dst)
            self.frontier = LevelQueue(frontier_dir, book.depth, limit, linked, st["frontier_size"])
        else:
            self.frontier = LevelQueue(frontier_dir, 0, limit)
        self.nq = self.frontier
        self.known = len(visited)
        self.last_snapshot = clock()
        self.model_error: ModelRaised | None = None
        #: the state being expanded, its rank in the level, its last action and how many it took
        self.s: Any = None
        self.a: Any = None
        self.rank = self.count = self.n = 0
        self.gc_was_enabled = gc.isenabled()
        self.frozen = self.released = False
        self.polling = polled()
        if snap is None:  # the initial states, before the search pauses the collector
            t0, generated = clock(), 0
            try:
                for k, s in enumerate(system.init_states()):
                    generated += 1
                    if canon is not None:
                        s = canon(s)
                    if visited.add_initial(s, k):
                        self.known += 1
                        self.frontier.tail.append(s)
                        monitor.check_state(s, s if keeps else self.known - 1)
                    self.s = s
            except Exception as e:  # the model's own code raised: reported with the partial result
                self.model_error = ModelRaised(e, None, None, None, 0, 0)
                book.interrupted()
                monitor.stop = True
            book.initial(len(self.frontier), generated, clock() - t0)

    def initial(self) -> None:
        """The collector paused and signals polled for the search (the initial states are in).

        States are immutable tuples: the search makes no reference cycles, so the cyclic
        collector only re-scans the ever-growing visited set (measured: 35-45% of the time on
        controller-ref, with the same peak memory without it)."""
        gc.disable()
        self.polling.__enter__()

    def pending(self) -> int:
        """The states of the next level."""
        return len(self.frontier)

    def between(self) -> None:
        """A checkpoint, when one is due."""
        checkpointer, clock = self.checkpointer, self.clock
        if checkpointer is None or clock() - self.last_snapshot < checkpointer.every:
            return
        book, cov = self.book, self.cov
        state = {
            "generated": book.generated,
            "known": self.known,
            "depth": book.depth,
            "levels": book.levels,
            "enabled": dict(cov.enabled),
            "new": dict(cov.new),
            "sample": dict(cov.sample),
            "label_counts": dict(self.label_counts),
            **self.monitor.snapshot(),
            "checks_left": self.visited.checks_left,
            "elapsed": clock() - book.start,
            "frontier_size": len(self.frontier),
        }
        try:
            checkpointer.write(state, self.visited, self.frontier.persist)
        except Exception as e:
            self._raised(e)
        self.last_snapshot = clock()

    def _raised(self, e: Exception) -> None:
        """The model's code raised ``e`` (re-raised if it is the search's own): the search ends
        with what it found, the error kept for :func:`finish`."""
        if isinstance(e, (ReplayMismatch, OSError, codec.UnsafeFileError, codec.NotDataError)):
            raise e  # not the model's: the search's own (or a crafted checkpoint file)
        s, n = self.s, self.n
        at = None if s is None else (s if self.keeps else self.rank + self.count)
        self.model_error = ModelRaised(e, s, at, self.a if n else None, n, self.book.depth)
        self.book.interrupted()
        self.monitor.stop = True

    def expand_level(self) -> None:
        """One level: each state's successors checked and merged in breadth-first order, the
        level cut after the state where a violation, a budget or a signal stops the search."""
        monitor, visited, canon, ample, clock = self.monitor, self.visited, self.canon, self.ample, self.clock
        book, frontier, keeps, edges, progress = (
            self.book,
            self.frontier,
            self.keeps,
            self.edges,
            self.progress,
        )
        successors, is_terminal = self.successors, getattr(self.system, "is_terminal", None)
        enabled, new_by, sample = self.cov.enabled, self.cov.new, self.cov.sample
        check_child, record = monitor.check_child, monitor.record
        trans_groups, applies_trans = bool(monitor.trans_groups), monitor.applies_trans
        # the transition checks with masks (incremental checking): built on the first step
        trans_table: dict[type, Any] | None = None
        trans_for: Callable[[type], Any] = monitor.trans_by_type.for_type
        changed: Callable[[Any, Any], int] | None = None
        trans_failed: list[tuple[int, Any]] = []
        add = visited.add
        # the exact set's insert inlined (one hash of t; measured: 5% of controller-ref's time
        # went to the call and its link argument)
        setdefault = visited.parents.setdefault if keeps else None
        parents_len: Callable[[], int] = visited.parents.__len__ if keeps else int
        poll, crash = book.poll, crash_point if self.checkpointer is not None else None
        max_states = book.budgets.max_states  # poll is called only where it may stop the search
        if max_states is None:
            max_states = sys.maxsize
        known = self.known
        s, a = self.s, self.a
        depth = book.depth
        live, fp, kind_ids, kind_names = self.live, speedups.fingerprint, self.kind_ids, self.kind_names
        ks = 0
        t0 = clock()
        nq = self.nq = LevelQueue(self.frontier_dir, depth + 1, self.limit)
        tail, cap = nq.tail, nq.threshold
        level_generated = n = 0
        before, done = known, False
        rank = known - len(frontier)  # index of the level's first state
        count = -1
        try:
            for states in frontier.batches():
                for s in states:
                    count += 1
                    at_s = s if keeps else rank + count  # where the visited set finds s
                    plink = (rank + count) << 32
                    n = 0
                    succ = successors(s)
                    order = None
                    if live is not None:
                        ks = fp(s)
                        live.state(ks, s)
                    if ample is not None:
                        ample.decided(monitor.found, monitor.witnesses)
                        full = list(succ)
                        succ = ample.successors(s, full, depth, visited, tail if keeps else None)
                        if not keeps and succ is not full:  # the log names a successor by its index
                            pos = {id(p): i for i, p in enumerate(full)}
                            # typed list[tuple[Any, Any]], mypyc would unbox each pair and re-box it
                            # as a new tuple (a new id): iterate it as plain objects
                            order = [pos[id(p)] for p in cast("list[Any]", succ)]
                    if edges is not None:
                        succ = edges[s] = list(succ)
                    for a, t in succ:
                        n += 1
                        tp = type(a)
                        c = enabled.get(tp)
                        if c is None:
                            enabled[tp] = 1
                            new_by[tp] = 0
                            sample[tp] = a
                        else:
                            enabled[tp] = c + 1
                        if trans_groups:  # the transition checks, inlined: the hottest loop
                            if trans_table is None:
                                trans_table, trans_for, changed = monitor.masked_transitions(s)
                            groups = trans_table.get(tp)  # the groups a step of this type runs
                            if groups is None:
                                groups = trans_for(tp)
                            # the slices the step changed: a check whose slices it left alone holds
                            ch = changed(s, t) if changed is not None and groups else -1
                            for guard, checks in groups:
                                if guard is None or guard(s, a, t):
                                    for i, p, chk, mask in checks:
                                        if mask & ch and not chk(s, a, t):
                                            trans_failed.append((i, p))
                            if trans_failed:  # recorded in property order, whatever the grouping
                                for _, p in sorted(trans_failed, key=lambda x: x[0]):
                                    record(Found(p, s, a, t, f"{p.name} does not hold", at_s))
                                trans_failed.clear()
                            if applies_trans:
                                for item in list(applies_trans):
                                    if item[1](s, a, t):
                                        monitor.applied[item[0]] = True
                                        applies_trans.remove(item)
                        if canon is not None and (not keeps or t not in visited):
                            # the orbit's representative stands for t (a state already in the
                            # visited set is a representative: no need to look for another)
                            t = canon(t)
                        if live is not None:
                            tid = kind_ids.get(tp)
                            if tid is None:
                                tid = kind_ids[tp] = len(kind_names)
                                kind_names.append(action_kind(a))
                            live.edge(ks, a, fp(t), tid)
                        if setdefault is not None:
                            setdefault(t, s)
                            new = parents_len() != known
                        else:
                            new = add(t, s, plink | (n - 1 if order is None else order[n - 1]))
                        if new:
                            known += 1
                            tail.append(t)
                            new_by[tp] += 1
                            check_child(t, t if keeps else known - 1, s)
                    level_generated += n
                    if n == 0:
                        monitor.check_deadlock(s, at_s, is_terminal)
                    if len(tail) >= cap:
                        nq.spill()
                        tail, cap = nq.tail, nq.threshold
                    if monitor.stop:
                        break
                    if known < max_states and count & 255:
                        continue
                    why = poll(known, count, frontier, clock, progress, crash)
                    if why is not None:
                        book.cut(why)
                        monitor.stop = True
                        break
                if monitor.stop:
                    break
            done = True
        except Exception as e:
            self.s, self.a, self.n, self.rank, self.count = s, a, n, rank, count
            self._raised(e)
        finally:
            self.s, self.a, self.n, self.rank, self.count, self.known = s, a, n, rank, count, known
            if not done:  # the level cut short: its new states counted from the visited set, so
                # the levels add up to distinct_states even when it stopped in the middle of a state
                book.generated += level_generated + n
                book.levels.append(
                    LevelStats(depth + 1, len(nq), level_generated + n, known - before, clock() - t0)
                )
        if done:
            if live is not None:  # the level's graph records to a file of their own
                safeio.write_atomic(
                    self.live_dir / f"edges-{depth:06d}.npz", self._live_records(), sync=False
                )
            book.level_done(len(nq), level_generated, clock() - t0)
            if monitor.stop:
                frontier.discard()
            self.frontier = nq

    def done(self) -> None:
        """Nothing to finish: :meth:`outcome` releases the parts."""

    def interrupted(self) -> None:
        """A second signal, or nobody polling: stopped wherever it was (the level counted)."""

    def close(self) -> None:
        """The search failed: its parts released, the collector back on (nothing frozen)."""
        self._release(handled=False)

    def _release(self, handled: bool) -> None:
        """The frontier files and the work folder removed, signals no longer polled, the
        progress line closed, the collector back on; a search that ended as it should
        (``handled``) freezes its objects first."""
        if self.released:
            return
        self.released = True
        self.polling.__exit__(None, None, None)
        self.frontier.discard()
        self.nq.discard()
        if self.own_work and self.work is not None:
            import shutil

            shutil.rmtree(self.work, ignore_errors=True)
        if self.gc_was_enabled:
            # The search's objects go to the permanent generation first: re-enabled over the
            # millions of objects made while it was paused, the collector's first passes took
            # 2.6 s after 1M states of controller-ref, and more while the result was built.
            # Unfrozen by finish() once the result is built.
            if handled and gc.get_freeze_count() == 0:  # not when an exception leaves the search
                gc.freeze()
                self.frozen = True
            gc.enable()
        if self.progress is not None:
            self.progress.close()

    def outcome(self) -> Outcome:
        """What the search found, for :func:`finish`."""
        self._release(handled=True)
        visited, monitor, book = self.visited, self.monitor, self.book
        visited.flush()
        if self.model_error is not None:
            self.model_error.depth = book.depth
        counted = book.explored(
            self.cov, self.label_counts, self.clock() - book.start, len(visited), monitor.applied
        )
        parts = {
            "monitor": monitor,
            "visited": visited,
            "canon": self.canon,
            "ample": self.ample,
            "edges": self.edges,
        }
        decide = self._decide_live if self.live is not None else None
        return Outcome(
            **explored_fields(counted),
            **parts,
            model_error=self.model_error,
            frozen=self.frozen,
            decide_live=decide,
        )

    def _live_records(self) -> bytes:
        """The graph records of the level just expanded, as an ``.npz`` file's bytes (then cleared)."""
        import io

        import numpy as np

        buf = io.BytesIO()
        np.savez(buf, **self.live.records(self.kind_names))
        self.live.clear()
        return buf.getvalue()

    def _decide_live(self) -> dict[str, Any]:
        """The ``eventually`` properties decided on the recorded graph (as the ``--workers``
        search decides them: :func:`explorer.search.live_graph.check_eventually`)."""
        import numpy as np

        from explorer.search.live_graph import FingerprintGraph, check_eventually

        keys, parent = self.visited.bfs_graph()
        parts = []
        for path in sorted(self.live_dir.glob("edges-*.npz")):
            with np.load(path) as z:
                parts.append({k: z[k] for k in z.files})
        graph = FingerprintGraph(keys, parent, parts)
        m = self.monitor
        return check_eventually(
            self.system, m.live, graph, speedups.fingerprint, m.keep_going, action_fp=speedups.fingerprint
        )


class ModelErrorResult(Exception):
    """Raised by :func:`finish` when the system raised during the search: ``line`` names the
    exception and the state, ``result`` is the partial result, ``trace`` the steps to the state."""

    def __init__(self, line: str, result: CheckResult, trace: list[Any]):
        super().__init__(line)
        self.line, self.result, self.trace = line, result, trace


def finish(
    system: Any, out: Outcome, options: RunLabels, notes: list[str] | None = None, own_notes: bool = False
) -> CheckResult:
    """The :class:`CheckResult` of a :func:`breadth_first` (or
    :func:`explorer.search.levels.level_synchronous`) run: each violation's shortest trace
    (replayed through the visited set and, with symmetry, mapped back to real states), the
    unwitnessed ``reachable`` properties and the ``eventually`` ones decided on the graph of a
    complete search. ``notes`` come after the visited set's and before the reduction's
    (``own_notes``: they are all the notes). Raises :class:`ModelErrorResult` if the system
    raised."""
    try:
        return _result(system, out, options, notes, own_notes)
    finally:
        # a process that ends after this search keeps it, frozen, until it exits
        # (explorer.search.teardown); else the states die with the search (by reference
        # counts, not the collector)
        if not teardown.keep(out) and out.frozen:
            gc.unfreeze()
            out.frozen = False
        out.visited.close()


class _Tracer:
    """The traces and the liveness decisions of a finished search (for :func:`_result`)."""

    def __init__(self, system: Any, out: Outcome):
        self.system, self.out = system, out

    def trace_to(
        self, at: Any, extra: tuple[Any, Any] | None = None, prop: Any = None, k: int | None = None
    ) -> list[Any]:
        """The steps from an initial state to ``at`` (then ``extra``, or the ``k``-th successor)."""
        system, out = self.system, self.out
        path = out.visited.path(at)
        if k is not None:  # the k-th step from the last state
            extra = next(x for i, x in enumerate(ordered_successors(system)(path[-1])) if i == k)
        return path_trace(system, path, out.canon, extra, prop)

    def finding(self, f: Any) -> list[Any]:
        """The trace of one finding of the monitor."""
        return self.trace_to(
            f.at, (f.action, f.target) if f.action is not None else None, f.prop, f.successor
        )

    def live(self) -> dict[str, Any]:
        """The ``eventually`` properties decided on the recorded edges."""
        out, m = self.out, self.out.monitor
        decided: dict[str, Any] = {}
        assert out.edges is not None
        for p in m.live:
            decided[p.name] = lv = check_liveness(self.system, p, out.edges, out.visited.parents)
            if lv is not None and not m.keep_going:
                break
        return decided


def _result(
    system: Any, out: Outcome, options: RunLabels, notes: list[str] | None, own_notes: bool
) -> CheckResult:
    m, visited = out.monitor, out.visited
    # a class, not closures: compiled, closures share one environment that holds them (a
    # cycle: the visited set would live until the collector's next full pass)
    tracer = _Tracer(system, out)
    found = m.findings(tracer.finding)
    witness_lengths = {n: len(visited.path(at)) - 1 for n, at in m.witnesses.items()}
    if not own_notes:
        notes = visited.notes() + list(notes or []) + symmetry_notes(out.canon)
    decide = out.decide_live if out.decide_live is not None else tracer.live
    result = exhaustive_result(
        system, m.props, found, out, options, witness_lengths, decide if m.live else None, notes
    )
    err = out.model_error
    if err is not None:
        line, trace = _model_error_line(system, visited, err, tracer.trace_to)
        result.exit_reason = ExitReason.INTERRUPTED
        result.notes.append(f"model error: {line}")
        raise ModelErrorResult(line, result, trace)
    return result


def _model_error_line(
    system: Any, visited: Any, err: ModelRaised, trace_to: Callable[[Any], list[Any]]
) -> tuple[str, list[Any]]:
    """One line naming the exception, the state whose expansion raised and the last action
    taken from it; and the trace to that state."""
    e = err.error
    what = type(e).__name__ + (f": {str(e).splitlines()[0]}" if str(e).strip() else "")
    if err.state is None or err.at is None:
        return f"the system raised {what} in init_states or on an initial state", []
    try:
        shown = render_state(err.state)
    except Exception:  # pragma: no cover - a state render_state cannot walk
        shown = err.state
    text = shown if isinstance(shown, str) else repr(shown)
    text = text if len(text) <= 160 else text[:157] + "..."
    after = (
        f"after {err.taken} transitions, the last {err.action}"
        if err.taken
        else "before its first transition"
    )
    line = f"the system raised {what} expanding a state at depth {err.depth} ({after}): {text}"
    try:
        trace = trace_to(err.at)
    except Exception:  # pragma: no cover - an ancestor's successors raised this time
        trace = []
    return line, trace
