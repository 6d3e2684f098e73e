"""The driver of the ``spark`` engine: the :class:`SparkExpander` the one level-synchronous
loop (:func:`explorer.search.loop.run_levels`) drives, its levels in the driver or on Spark,
and the result assembled exactly as ``bfs`` assembles it.

Example
-------
>>> from tests.toys import Grid
>>> r = check_spark(Grid(3), Grid(3).properties(), local_frontier=0)  # doctest: +SKIP
>>> r.exit_reason.value, r.distinct_states  # doctest: +SKIP
('complete', 16)
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from explorer.core import (
    CheckResult,
    Property,
)
from explorer.engines.base import CheckOptions
from explorer.engines.options import SparkOptions, refusal
from explorer.engines.spark.deltas import Deltas, persist, storage_level
from explorer.engines.spark.fingerprints import FingerprintCollisionError, state_fingerprint
from explorer.engines.spark.levels import LevelStore, next_shares, pick_winners, plan_moves
from explorer.engines.spark.liveness import write_edges
from explorer.engines.spark.partitions import (
    IDX_BITS,
    PHASE_DEADLOCK,
    PHASE_STATE,
    PHASE_TRANSITION,
    Acc,
    Job,
    LevelCtx,
    SummaryParam,
    check_state,
    cloudpickle_dumps,
    collision_error,
    expand_ranked,
    live_recorder,
    pack_block,
    partition_of,
    pending_applies,
    step_partition,
    truncated_partition,
)
from explorer.engines.spark.result import assemble_result
from explorer.engines.spark.session import (
    SessionStarter,
    SparkSetupError,
    check_java,
    check_spark_conf,
    probe_master,
)
from explorer.search.loop import run_levels
from explorer.search.monitor import PropertyMonitor
from explorer.search.stopping import Budgets, LevelBook
from explorer.search.symmetry import symmetry_setup

__all__ = ["SparkExpander", "check_spark", "run"]


@dataclass
class _SparkState:
    sc: Any
    owned: Any  # the SparkSession we created (stopped at the end), or None
    job_b: Any
    partitions: int
    token: str = ""  # names this run in the workers' caches
    rdd: Any = None
    level_keys: Any = None  # holder of the current frontier's sorted keys (None: keys are ranks)
    broadcasts: list[tuple[int, Any]] = field(default_factory=list)
    deltas: Deltas | None = None  # the visited set's parts, as the level tasks receive them
    jlevel: Any = None  # the JVM's StorageLevel of persisted levels (made once)
    levels_run: int = 0
    checkpointing: bool = False
    summaries: Any = None  # the accumulator of level summaries
    profile: list[dict[str, Any]] = field(default_factory=list)  # per Spark level: costs measured
    shares: list[int] = field(default_factory=list)  # the current frontier's states per partition
    yields: list[float] | None = None  # new states per frontier state, per partition, last level


#: after every successor index (a cut's bound on event keys)
_LAST = 1 << 62
#: the monitor's kind of event (:meth:`PropertyMonitor.event`) of each phase of an event key
_EVENT_KIND = {PHASE_TRANSITION: "t", PHASE_STATE: "s", PHASE_DEADLOCK: "d"}

#: a run that will probably move to Spark starts the session in the background at a
#: frontier of ``local_frontier / START_EARLY`` states ...
START_EARLY = 4
#: ... and, while it is not up, the driver goes on expanding levels up to a frontier of
#: ``local_frontier * WAIT_UPTO`` states (then it waits for it)
WAIT_UPTO = 8


class SparkExpander:
    """One run of the spark engine: the expander :func:`~explorer.search.loop.run_levels`
    drives. Small levels expand in the driver; once a frontier reaches ``local_frontier``
    states the frontier and the visited set move to Spark, partitioned by fingerprint, and a
    level is one Spark job. Either way a level ends in :meth:`_merge`: its events to the
    monitor, its counts to the :class:`~explorer.search.stopping.LevelBook`, its states to the
    level files."""

    def __init__(self, system: Any, props: list[Property], options: CheckOptions, run_dir: Path, canon: Any):
        self.system = system
        self.props = props
        self.options, self.o = options, SparkOptions.of(options.engine_options)
        self.run_dir, self.start = run_dir, options.clock()
        self.app_name = f"kafka-mc {options.model}".strip()
        self.keep_going: bool = options.keep_going
        # the module's ``state_fingerprint`` is looked up now (a test may monkeypatch it)
        self.job = Job(system, props, state_fingerprint, options.deadlock, 1, canon)
        #: the levels on disk: the parent links of the visited set, for traces
        self.store = LevelStore(run_dir, self.job)
        #: the first violation of each property and witness, at their event keys (``Acc``)
        self.monitor = PropertyMonitor(props, keep_going=options.keep_going, deadlock=options.deadlock)
        self.total = Acc()
        #: the levels, transitions, depth and why the search ended, as ``--workers`` keeps them
        self.book = LevelBook(Budgets(options.max_depth, options.max_states, options.max_seconds), self.start)
        self.distinct = 0
        self.spark: _SparkState | None = None
        self.starter: SessionStarter | None = None
        self.waited_levels = 0  # levels run in the driver because the session was still starting
        self.driver_levels = 0
        self.kind_names: list[str] = []  # action kinds of the edge files (eventually properties)
        # driver-side search state (until the search moves to Spark)
        self.visited: set[Any] | None = set()  # states, as bfs keeps them
        self.visited_fps: set[int] | None = set()
        self.frontier: list[Any] = []
        self.frontier_size = 0
        self.frontier_fps = np.zeros(0, dtype=np.uint64)

    # ---- events
    def _take_events(self, acc: Acc, cut: int | None = None) -> None:
        """Hand the monitor a level's events and witnesses (up to rank ``cut``) in key order,
        the order ``bfs`` meets them: it keeps the first of each property."""
        events: list[tuple[Any, str, str, Any]] = [
            (k, n, _EVENT_KIND[k[3]], (k, k[2]) if k[3] == PHASE_TRANSITION else k)
            for n, k in acc.events.items()
        ]
        events += [(k, n, "w", k) for n, k in acc.witnesses.items()]
        if events:  # the keys of one level: bounded by (level, cut, after every successor)
            self.monitor.take(events, None if cut is None else (events[0][0][0], cut, _LAST))

    # ---- level 0 and driver levels
    def initial(self) -> None:
        """Level 0: the initial states (their representatives), checked."""
        clock = self.options.clock
        t0 = clock()
        job = self.job
        acc = Acc()
        keys: list[int] = []
        fps: list[int] = []
        states: list[Any] = []
        pend_s, reach = pending_applies(job.applies_state, frozenset()), list(job.reach)
        assert self.visited is not None
        generated = 0
        for index, s in enumerate(self.system.init_states()):
            generated += 1
            if job.canon is not None:
                s = job.canon(s)
            if s in self.visited:
                continue
            f = self._new_fp(s)
            check_state(job, acc, s, -1, len(states), 0, pend_s, reach)
            keys.append(index)
            fps.append(f)
            states.append(s)
        self.distinct = len(states)
        self.frontier, self.frontier_size = states, len(states)
        self.frontier_fps = np.array(fps, dtype=np.uint64)
        self.store.add(
            0, np.array(keys, dtype=np.int64), self.frontier_fps, np.zeros(len(fps), dtype=np.uint64)
        )
        self._take_events(acc)
        self.total.merge(acc)
        self.book.initial(len(states), generated, clock() - t0)

    def driver_level(self) -> None:
        """Expand one level in this process, exactly as ``bfs`` does (mid-level stops included),
        with the checks the Spark tasks make (:func:`expand_ranked`)."""
        clock, book = self.options.clock, self.book
        t0 = clock()
        job, level, visited = self.job, book.depth, self.visited
        assert visited is not None
        acc = Acc()
        new_keys: list[int] = []
        new_fps: list[int] = []
        nxt: list[Any] = []

        def new(key: int, t: Any, kind: str) -> bool:
            if t in visited:
                return False
            new_keys.append(key)
            new_fps.append(self._new_fp(t))
            nxt.append(t)
            return True

        def after(r: int) -> bool:
            """Whether ``bfs`` stops after the state of rank ``r`` (the budget noted)."""
            if acc.events and not self.keep_going:
                return True
            why = book.poll(self.distinct + len(nxt), r, self.frontier, clock, self.options.progress)
            book.cut(why)
            return why is not None

        reach = [x for x in job.reach if x[1] not in self.monitor.witnesses]
        live = live_recorder(job)
        ranks = range(len(self.frontier))
        done = frozenset(self.total.applies)
        expand_ranked(job, acc, level, ranks, self.frontier, done, reach, new, after, live, self._kind_id)
        if live is not None:
            arrays = live.arrays()
            write_edges(self.run_dir, level, [arrays], [arrays[5]])
        keys, fps = np.array(new_keys, dtype=np.int64), np.array(new_fps, dtype=np.uint64)
        self._merge(acc, keys, fps, None, self.book.budget, t0)
        self.frontier = nxt
        self.driver_levels += 1

    # ---- the expander run_levels drives
    def pending(self) -> int:
        """The states of the next level."""
        return self.frontier_size

    def between(self) -> None:
        """Nothing to do between levels: a move to Spark waits for the budgets' verdict."""

    def expand_level(self) -> None:
        """One level, in the driver or as a Spark job; the search moves to Spark first once the
        frontier is wide enough (the session started in the background before that)."""
        local_frontier = self.o.local_frontier
        self.start_early(local_frontier)
        if self.moves_now(local_frontier):
            self.to_spark()
        if self.spark is None:
            self.driver_level()
        else:
            self.spark_level()
        progress = self.options.progress
        if progress is not None:
            el = self.options.clock() - self.start
            progress.update(
                self.book.depth, self.frontier_size, self.distinct, self.distinct / el if el else 0.0
            )

    def interrupted(self) -> None:
        """A signal: the level's Spark job is left to :meth:`close`."""

    def _kind_id(self, kind: str) -> int:
        if kind not in self.kind_names:
            self.kind_names.append(kind)
        return self.kind_names.index(kind)

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
        return collision_error(f, other, t)

    def _merge(
        self, acc: Acc, keys: np.ndarray, fps: np.ndarray, cut: int | None, budget: str | None, t0: float
    ) -> None:
        """The end of a level, in the driver or on Spark: its events (up to the parent of rank
        ``cut``, where ``bfs`` stopped) to the monitor, its counters to the run's, its new states
        (``keys``, ``fps``: in rank order) to the level files and the book; ``budget`` ended it."""
        level = self.book.depth
        if budget is not None:
            self.book.exhausted(budget)
        if cut is not None or budget is not None:
            self.monitor.stop = True
        self._take_events(acc, cut)
        acc.events.clear()
        acc.witnesses.clear()
        self.total.merge(acc)
        parent = self.frontier_fps[keys >> IDX_BITS] if len(keys) else np.zeros(0, dtype=np.uint64)
        self.store.add(level + 1, keys, fps, parent)
        self.distinct += len(keys)
        self.book.level_done(len(keys), acc.generated, self.options.clock() - t0)
        self.frontier_fps, self.frontier_size = fps, len(keys)

    # ---- Spark levels
    def to_spark(self) -> None:
        """Move the search to Spark: distribute the visited set and the frontier."""
        o = self.o
        spark = o.spark
        owned = None
        if spark is None:
            if self.starter is None:
                self.starter = SessionStarter(o, self.app_name, self.system)
            owned = spark = self.starter.get()
            self.starter = None
        sc = getattr(spark, "sparkContext", spark)
        nparts = o.partitions or max(int(sc.defaultParallelism), 1)
        self.job.partitions = nparts
        st = _SparkState(
            sc=sc,
            owned=owned,
            job_b=sc.broadcast(cloudpickle_dumps(self.job)),
            partitions=nparts,
            token=uuid.uuid4().hex,
        )
        st.summaries = sc.accumulator({}, SummaryParam())
        ckpt = o.checkpoint_dir
        if ckpt is None and str(sc.master).startswith("local"):
            ckpt = self.run_dir / "checkpoints"
        if ckpt is not None:
            sc.setCheckpointDir(str(ckpt))
            st.checkpointing = True
        assert self.visited_fps is not None
        # every state seen so far, tagged with its level, is the first delta of the visited set
        first = [self.store.get(lv)[1] for lv in range(self.book.depth + 1)]
        tags = [np.full(len(f), lv, dtype=np.int32) for lv, f in enumerate(first)]
        st.deltas = Deltas(sc)
        st.deltas.add(self.book.depth, (np.concatenate(first), np.concatenate(tags)))
        st.jlevel = sc._getJavaStorageLevel(storage_level())
        self.visited = self.visited_fps = None
        # contiguous rank ranges: neighbouring states (siblings, whose children are often
        # the same states) start in the same partition, and a partition's frontier stays
        # one range (levels.plan_moves)
        fparts = (
            np.arange(len(self.frontier), dtype=np.int64) * nparts // max(len(self.frontier), 1)
        ).tolist()
        fronts: list[tuple[list[int], list[Any]]] = [([], []) for _ in range(nparts)]
        for r, (q, s) in enumerate(zip(fparts, self.frontier)):
            fronts[q][0].append(r)
            fronts[q][1].append(s)
        recs = [
            (q, ("B", -1, pack_block(np.array(fronts[q][0], dtype=np.int64), fronts[q][1])))
            for q in range(nparts)
        ]
        self.frontier = []
        st.shares = [len(f[0]) for f in fronts]
        rdd = sc.parallelize(recs, nparts).partitionBy(nparts, partition_of)
        st.rdd = persist(rdd, st.jlevel)
        self.spark = st

    def spark_level(self) -> None:
        """One level as one Spark job (fresh candidates shuffled to their owners, pickled
        once); on a stop inside the level, re-count it up to the stop."""
        st = self.spark
        assert st is not None
        clock = self.options.clock
        t0 = clock()
        level, nparts, job_b, front = self.book.depth, st.partitions, st.job_b, self.frontier_size
        done = frozenset(self.total.applies)
        # the fresh candidates stay in the partition that found them (no shuffle) while
        # the next frontier is predicted balanced; else a few at the ends of the
        # partitions' rank ranges move to the neighbouring partition (a shuffle)
        shares = st.shares
        moves = plan_moves(shares, st.yields)
        route = "local" if moves is None else "move"
        assert st.deltas is not None
        ctx = LevelCtx(st.token, level, st.level_keys, list(st.deltas.parts), done, st.summaries, moves)
        step = functools.partial(step_partition, job_b, ctx)
        if moves is None:
            nxt = st.rdd.mapPartitionsWithIndex(step, preservesPartitioning=True)
        else:
            nxt = st.rdd.mapPartitionsWithIndex(step).partitionBy(nparts, partition_of)
        nxt = persist(nxt, st.jlevel)
        st.levels_run += 1
        checkpoint = st.checkpointing and st.levels_run % self.o.checkpoint_every == 0
        if checkpoint:
            nxt.checkpoint()
        # a JVM-side count materialises the level (no extra Python pass); the summaries
        # come back through the accumulator
        counted = self._run(st, lambda: nxt._jrdd.count())
        summaries = None
        if counted is not None:
            got = st.summaries.value
            summaries = [got.pop((level, p)) for p in range(nparts)]
        if summaries is None:  # cancelled at the deadline
            nxt.unpersist()
            return
        t_job = clock()
        acc, keys, fps = pick_winners(summaries)
        st.shares, st.yields = next_shares(summaries, keys, shares)
        if self.job.live:
            parts = [x[8] for x in summaries]
            ids = [np.array([self._kind_id(k) for k in x[5]], dtype=np.int32) for x in summaries]
            kinds = [t[e[5]] if len(e[5]) else e[5] for t, e in zip(ids, parts)]
            write_edges(self.run_dir, level, parts, kinds)
        # where would bfs have stopped inside this level?
        cut, budget = None, None
        if acc.events and not self.keep_going:
            fresh = [k for n, k in acc.events.items() if n not in self.monitor.found]
            if fresh:
                cut = min(k[1] for k in fresh)
        max_states = self.options.max_states
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
            trunc = functools.partial(truncated_partition, job_b, ctx, cut, new_b)
            accs = self._run(st, lambda: st.rdd.mapPartitionsWithIndex(trunc).collect())
            new_b.destroy()
            if accs is None:
                nxt.unpersist()
                return
            acc = Acc()
            for a in accs:
                acc.merge(a)
        self._merge(acc, keys, fps, cut, budget, t0)
        old = st.rdd
        st.rdd = nxt
        if not self.monitor.stop and len(keys):
            # one part: the next frontier's keys (its ranks) and its fingerprints (the
            # visited set's delta); the keys are read from the part's value
            st.level_keys = st.deltas.add(
                level + 1, (fps, np.full(len(fps), level + 1, dtype=np.int32), keys)
            )
            st.broadcasts.append((self.book.depth, st.level_keys))
        if checkpoint and nxt.isCheckpointed():
            # lineage before this level is cut: the rank tables it needed are no longer read
            st.broadcasts = [x for x in st.broadcasts if x[0] >= self.book.depth]
        old.unpersist()
        cpu = [x[6] for x in summaries]
        st.profile.append(
            {
                "level": level,
                "frontier": front,
                "new": len(keys),
                "candidates": int(sum(len(x[1]) for x in summaries)),
                "route": route,
                "moves": moves,
                "frontier_shares": shares,
                "executor_cpu": float(sum(cpu)),
                "max_partition_cpu": float(max(cpu)),
                # executor CPU by phase (partitions.step_partition): frontier, expand, check, pack
                "executor_phases": [float(sum(x[9][i] for x in summaries)) for i in range(4)],
                "block_bytes": int(sum(x[7] for x in summaries)),
                "summary_bytes": int(
                    sum(x[1].nbytes + x[2].nbytes + x[3].nbytes + x[4].nbytes for x in summaries)
                ),
                "job_seconds": t_job - t0,
                "driver_seconds": clock() - t_job,
            }
        )

    def _run(self, st: _SparkState, action: Callable[[], Any]) -> Any:
        """Run a Spark action; an executor's collision error is raised here as itself."""
        try:
            return self._run_bounded(st, action)
        except FingerprintCollisionError:
            raise
        except Exception as e:
            m = re.search(r"FingerprintCollisionError: (.*)", str(e))
            if m is not None:
                raise FingerprintCollisionError(m.group(1).strip()) from None
            raise

    def _run_bounded(self, st: _SparkState, action: Callable[[], Any]) -> Any:
        """Run a Spark action, cancelled at the deadline (then None and the budget is set)."""
        deadline = self.book.deadline
        if deadline is None:
            return action()
        clock = self.options.clock
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
                self.book.exhausted("max_seconds")
                self.monitor.stop = True
                return None
            raise
        finally:
            timer.cancel()

    def start_early(self, local_frontier: int) -> None:
        """Start the session in the background once the frontier nears ``local_frontier``."""
        idle = self.spark is None and self.starter is None and self.o.spark is None
        if idle and self.frontier_size * START_EARLY >= local_frontier:
            self.starter = SessionStarter(self.o, self.app_name, self.system)

    def moves_now(self, local_frontier: int) -> bool:
        """Whether the search moves to Spark before the next level: the frontier has
        ``local_frontier`` states and the session is up (or the frontier has outgrown
        the wait)."""
        if self.spark is not None or self.frontier_size < local_frontier:
            return False
        starting = self.starter
        if starting is None or starting.ready() or self.frontier_size >= local_frontier * WAIT_UPTO:
            return True
        self.waited_levels += 1  # one more level in the driver while the session starts
        return False

    def done(self) -> None:
        """The search ended in the driver with a session started: if the search reached
        ``local_frontier`` (where, without the background start, it would have needed the
        session) wait for it, raise a failed start, and stop it; else leave it to stop
        itself once up (:meth:`SessionStarter.abandon`)."""
        starting, self.starter = self.starter, None
        if starting is None:
            return
        if not self.waited_levels:  # never needed: not waited for
            starting.abandon()
            return
        try:
            session = starting.get()
        except SparkSetupError:
            if self.waited_levels:
                raise
            return
        if session is not None:
            with contextlib.suppress(Exception):
                session.stop()

    def close(self) -> None:
        """The progress line ended, the session's start abandoned or the session stopped, the
        persisted levels and broadcasts released (again: nothing)."""
        if self.options.progress is not None:
            self.options.progress.close()
        if self.starter is not None:  # the search was interrupted before it moved to Spark
            self.starter.abandon()
            self.starter = None
        st = self.spark
        if st is None:
            return
        with contextlib.suppress(Exception):
            if st.rdd is not None:
                st.rdd.unpersist()
            if st.deltas is not None:
                for b in st.deltas.made:
                    b.destroy()
            st.job_b.destroy()
        if st.owned is not None:
            with contextlib.suppress(Exception):
                st.owned.stop()


def check_spark(system: Any, properties: Iterable[Property], **options: Any) -> CheckResult:
    """Explore every reachable state of ``system`` with Spark and check ``properties``.

    Returns the :class:`~explorer.core.CheckResult` that :func:`explorer.engines.bfs.check_bfs`
    returns for the same arguments (engine ``"spark"``; timings differ, and a
    ``max_seconds`` budget may stop at another point), plus notes on the fingerprint
    collision odds and where the levels ran.

    ``options``: those of :class:`~explorer.engines.base.CheckOptions` (``model``, ``config``,
    the budgets, ``keep_going``, ``deadlock``, ``progress``, ``clock``, ``reduce``) and the
    engine's own (:class:`~explorer.engines.options.SparkOptions`):

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
        level after the initial states on Spark. A session started here is started
        in the background at a frontier of ``local_frontier / START_EARLY`` states, and
        while it is starting this process goes on expanding levels (up to a frontier
        of ``local_frontier * WAIT_UPTO``): where the levels run varies, the answer does not.
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
    return run(system, properties, CheckOptions.of("spark", options))


def run(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    """The ``spark`` engine behind :func:`explorer.api.check` (:func:`check_spark`).

    >>> from tests.toys import Grid
    >>> run(Grid(3), [], CheckOptions(engine="spark", engine_options={"master": "local[1]"}))  # doctest: +SKIP
    """
    o = SparkOptions.of(options.engine_options)
    if o.spark is None:
        check_spark_conf(dict(o.spark_conf or {}))
        check_java()
        if o.master is not None:
            probe_master(o.master, o.connect_timeout)
    props = list(properties)
    why = refusal("spark", workers=options.workers, reduce=options.reduce)
    if why is not None:
        raise ValueError(why)
    canon, sym_notes = symmetry_setup(system, props, options.reduce)
    if canon is not None:
        sym_notes.append(
            f"reduce symmetry: a group of {len(canon.perms) + 1} permutations, applied in the driver and "
            "the Spark tasks to every successor; coverage counts the representatives' expansions"
        )
    clock = options.clock
    own_run_dir = o.run_dir is None
    rdir = Path(tempfile.mkdtemp(prefix="kafka-mc-spark-")) if o.run_dir is None else Path(o.run_dir)
    rdir.mkdir(parents=True, exist_ok=True)
    search = SparkExpander(system, props, options, rdir, canon)
    try:
        run_levels(search, search.book, search.monitor, clock)
        search.close()
        seconds = clock() - search.start
        if search.spark is not None and search.spark.profile:
            (rdir / "spark-profile.json").write_text(json.dumps(search.spark.profile, indent=1))
        return assemble_result(search, seconds, sym_notes)
    finally:
        if own_run_dir:
            shutil.rmtree(rdir, ignore_errors=True)
