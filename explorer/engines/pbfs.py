"""Multi-process ``bfs``: the same search and the same :class:`~explorer.core.CheckResult`.

:func:`check_pbfs` (``check_bfs(..., workers=N)``, ``kafka-mc check --workers N``) runs
the successor function, which is most of the time of :func:`explorer.engines.bfs.check_bfs`, in
``N`` forked worker processes, and keeps the bookkeeping of the search in the calling
process (the *driver*).

How a level runs
----------------
Every state of a level has a *rank*, its position in the order in which ``bfs`` finds
it. States never move between processes: each worker owns, as live objects, the
frontier states it generated itself, and expands them in rank order. For every
successor it sends the driver its key, Python's ``hash(state)`` (the same in every
forked process), and a small action-type id, in numpy batches of ``batch`` parents.
The driver merges the workers' streams in rank order and deduplicates exactly as
``bfs`` does (the first transition in rank order to reach a state makes its parent),
holding only ``hash -> parent hash``. At the end of the level it tells each worker which
of its successors are new and their ranks; the worker keeps those as its next frontier
and checks the ``always`` and ``reachable`` properties (and ``applies``) on them.
``transition`` properties and deadlocks are checked while expanding. Every event is
reported with its position ``(parent rank, successor index, phase, property index)``,
so the driver keeps, per property, the one ``bfs`` would have met first.

When the search stops in the middle of a level (the first violation without
``keep_going``, ``max_states``, ``max_seconds`` or an interrupt), the driver cuts the
level after the same parent ``bfs`` stops at: counts and coverage come from the
per-parent data it holds, and the workers recount the coverage labels of their parents
up to the cut. Small levels (below ``serial_below`` states) run in the driver itself
with the same code; the workers are forked when the frontier first reaches that size
and take the states of rank ``i mod N``. From then on a worker's share is the share of
new states it discovers.

Counterexamples are rebuilt by replaying the chain of hashes from an initial state
through ``successors`` and handed to :func:`explorer.search.build_trace`; a hash that no
successor has raises :class:`HashCollisionError`. The engine trusts 64-bit hashes where
``bfs`` compares states: the collision odds of the run are in ``notes``. For ``eventually``
properties each process writes, level by level, the goal/trigger bits of the states it
expands and its edges as fingerprint records; after a complete search the driver decides
them on that graph (:mod:`explorer.search.live_graph`, as the spark engine does).

Example
-------
>>> from tests.toys import Grid
>>> g = Grid(3, limit=3)
>>> r = check_pbfs(g, g.properties(), workers=2, serial_below=2)
>>> r.engine, r.distinct_states, r.violations[0].length
('bfs', 8, 3)
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from explorer import speedups
from explorer.core import (
    CheckResult,
    ExitReason,
    LevelStats,
    Property,
    PropertyKind,
)
from explorer.engines.base import CheckOptions
from explorer.engines.options import BfsOptions, refusal
from explorer.engines.pbfs_replay import (
    HashCollisionError,
    _chain,
    _check_live,
    _LeanVisited,
    _ordered_successors,
    _replay,
)
from explorer.engines.pbfs_workers import AFTER, Expander, LocalPool, ProcessPool, usage
from explorer.search import (
    DEADLOCK_PROPERTY,
    Coverage,
    collision_odds,
    exhaustive_result,
    polled,
    statepack,
    stop_requested,
)
from explorer.search.checkpoint import CheckpointError, crash_point, open_checkpoint, write_snapshot
from explorer.search.results import Explored, Finding
from explorer.search.symmetry import path_trace, symmetry_setup
from explorer.search.visited import NO_PARENT

__all__ = ["HashCollisionError", "PbfsStats", "check_pbfs", "run"]

#: test-only: the level size from which ``kafka-mc check --workers N`` forks its workers
#: (``serial_below``), so that small runs exercise the worker processes
SERIAL_BELOW_ENV = "KAFKA_MC_SERIAL_BELOW"
_INF = (1 << 63, 0, 0, 0)
_TWO63, _TWO64 = 1 << 63, 1 << 64
_MASK = _TWO64 - 1
#: the cut reason of a level stopped by a signal (not a budget)
_INTERRUPTED = "interrupted"


@dataclass
class PbfsStats:
    """What a :func:`check_pbfs` run measured about itself (pass one in to get it filled).

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


def _signed_fingerprint(state: Any) -> int:
    """:func:`explorer.encoding.fingerprint` as a signed int64 (the key numpy arrays carry).

    >>> from explorer.encoding import fingerprint
    >>> _signed_fingerprint((1, 2)) & _MASK == fingerprint((1, 2))
    True
    """
    f = speedups.fingerprint(state)
    return f - _TWO64 if f >= _TWO63 else f


def check_pbfs(
    system: Any, properties: Iterable[Property], *, workers: int = 2, **options: Any
) -> CheckResult:
    """The :func:`explorer.engines.bfs.check_bfs` search with ``workers`` processes; the same result
    (``options``: :func:`~explorer.engines.bfs.check_bfs`'s).

    ``batch`` parents go in one message; levels below ``serial_below`` states run in
    the driver. Pass a :class:`PbfsStats` as ``stats`` to get the run's load balance.
    ``visited="fingerprints"``: the driver keeps stable 64-bit fingerprints in a table
    and parent records on disk (about 16 B/state plus the level in hand) instead of a
    dict of hashes; the workers send fingerprints instead of Python hashes, and hold
    their frontier share and the level's candidates packed (``pack``, default: with
    fingerprints when the C state packer is built), about a fifth of their memory.
    ``checkpoint=DIR`` (fingerprints only) writes a snapshot at a level boundary every
    ``checkpoint_every`` seconds: the driver's bookkeeping, the table, and each worker's
    frontier share (dumped by the workers in parallel); ``resume=True`` continues the
    snapshot in ``DIR`` with new workers and gives the uninterrupted run's result.
    ``reduce="symmetry"``: the workers keep one representative per orbit (the serial
    reduced search's result); ``por`` is refused (:func:`explorer.engines.options.refusal`).

    >>> from tests.toys import Grid
    >>> r = check_pbfs(Grid(4), Grid(4).properties(), workers=2, serial_below=3)
    >>> r.exit_reason.value, r.distinct_states, r.witnesses
    ('complete', 25, {'corner': 8})
    """
    return _search(system, properties, CheckOptions.of("bfs", {**options, "workers": workers}))


def run(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    """The ``bfs`` engine with ``options.workers`` processes, behind :func:`explorer.api.check`.

    >>> from tests.toys import Grid
    >>> run(Grid(3), Grid(3).properties(), CheckOptions(workers=2)).distinct_states
    16
    """
    if SERIAL_BELOW_ENV in os.environ:  # test-only: fork the workers on small levels too
        o = BfsOptions.of(options.engine_options)
        options = replace(options, engine_options=replace(o, serial_below=int(os.environ[SERIAL_BELOW_ENV])))
    return _search(system, properties, options)


def _search(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    o = BfsOptions.of(options.engine_options)
    workers, keep_going, deadlock, clock = (
        options.workers,
        options.keep_going,
        options.deadlock,
        options.clock,
    )
    max_depth, max_states, max_seconds = options.max_depth, options.max_states, options.max_seconds
    progress, batch, serial_below, pack = options.progress, o.batch, o.serial_below, o.pack
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    props = list(properties)
    live = any(p.kind is PropertyKind.EVENTUALLY for p in props)
    checkpoint = o.checkpoint is not None
    why = refusal(
        "bfs",
        workers=workers,
        reduce=options.reduce,
        visited=o.visited,
        checkpoint=checkpoint,
        eventually=live,
    )
    if why is not None:
        raise (CheckpointError if checkpoint else ValueError)(why)
    # batch and serial_below are tuning: they do not change the result
    folder, snapshot = open_checkpoint(system, props, options, o, "pbfs", workers=workers)
    st = o.stats if o.stats is not None else PbfsStats()
    st.workers = workers
    cpu0, _ = usage()
    start = clock() - (snapshot[0]["elapsed"] if snapshot is not None else 0.0)
    deadline = None if max_seconds is None else start + max_seconds
    deadlock_prop = DEADLOCK_PROPERTY
    all_props = [*props, deadlock_prop]
    by_name = {p.name: p for p in all_props}
    applied: dict[str, bool] = {p.name: False for p in props if p.applies is not None}
    found: dict[str, tuple[Any, ...]] = {}  # name -> event (key, name, kind, data)
    witnesses: dict[str, int] = {}  # name -> hash
    if snapshot is not None:
        lean: _LeanVisited | None = _LeanVisited(folder, snapshot[0]["known"], snapshot[1])
    elif o.visited == "fingerprints":
        lean = _LeanVisited(folder)
    else:
        lean = None
    seen: Any = {} if lean is None else lean
    key: Callable[[Any], int] = hash if lean is None else _signed_fingerprint
    levels: list[LevelStats] = []
    generated = 0
    budget: str | None = None
    reason = ExitReason.COMPLETE
    # coverage by global type id
    type_samples: list[tuple[tuple[int, int, int], Any]] = []  # gid -> (key, sample action)
    type_index: dict[type, int] = {}
    enabled = np.zeros(0, dtype=np.int64)
    new_by = np.zeros(0, dtype=np.int64)
    label_base: dict[Any, int] = {}

    if pack is None:  # memory first where the visited set is lean, and where packing is fast (C)
        pack = lean is not None and statepack.ACTIVE
    canon, sym_off = symmetry_setup(system, props, options.reduce)
    # eventually properties: the workers write the graph's records here, level by level
    live_tmp = tempfile.TemporaryDirectory(prefix="kafka-mc-live-") if live else None
    live_dir = Path(live_tmp.name) if live_tmp is not None else None
    exp = Expander(system, props, deadlock, batch, key, pack=pack, canon=canon, live_dir=live_dir)
    st.packed = pack
    pool: LocalPool | ProcessPool = LocalPool(exp)
    gmaps: list[list[int]] = [[]]  # per worker: local type id -> global type id
    owner: list[int] = []
    frontier_hashes: list[int] = []

    def handle(ev: tuple[Any, ...]) -> None:
        _, name, kind, data = ev
        if kind == "a":
            applied[name] = True
        elif kind == "w":
            witnesses.setdefault(name, data)
        elif name not in found:
            found[name] = ev

    depth = 0
    merge_seconds = 0.0
    seq = 0
    polling = polled()
    polling.__enter__()  # the first signal sets a flag, read where the budgets are
    t0 = clock()
    init_events: list[tuple[Any, ...]] = []
    init_states: list[Any] = []
    if snapshot is not None:  # resume: the driver's bookkeeping as the snapshot left it
        snap, _, files = snapshot
        generated, depth, levels, seq = snap["generated"], snap["depth"], snap["levels"], snap["seq"]
        found.update(snap["found"])
        witnesses.update(snap["witnesses"])
        applied.update(snap["applied"])
        type_index.update(snap["type_index"])
        type_samples.extend(snap["type_samples"])
        enabled = np.array(snap["enabled"], dtype=np.int64)
        new_by = np.array(snap["new_by"], dtype=np.int64)
        frontier_hashes, owner = snap["frontier"].tolist(), snap["owner"].tolist()
        merge_seconds = snap["merge_seconds"]
        try:
            if snap["forked"]:  # fresh workers, each loading its share
                pool = ProcessPool(exp, workers)
                gmaps = [[] for _ in range(workers)]
                label_base = dict(snap["labels"])
                st.forked_at_depth = snap["forked_at_depth"]
            else:
                exp.labels.update(snap["labels"])
            pool.load(files)
        except BaseException:
            polling.__exit__(None, None, None)
            pool.close()
            raise
    for j, s in enumerate(system.init_states() if snapshot is None else ()):
        generated += 1
        if canon is not None:
            s = canon(s)
        h = key(s)
        if lean is not None:
            new = lean.table.add(h & _MASK)
            if new:
                lean.log.append(NO_PARENT, j, h & _MASK)
        else:
            new = h not in seen
            if new:
                seen[h] = None
        if new:
            init_states.append(s)
            frontier_hashes.append(h)
            exp.level[h] = (s, -1, j)
    if snapshot is None:
        init_events = exp.accept(np.array(frontier_hashes, dtype=np.int64), np.arange(len(frontier_hashes)))
        for ev in sorted(init_events, key=lambda e: e[0]):
            handle(ev)
        owner = [0] * len(frontier_hashes)
        levels.append(LevelStats(0, len(frontier_hashes), generated, len(frontier_hashes), clock() - t0))
    stop = bool(found) and not keep_going
    cut: int | None = None
    last_snapshot = clock()

    def take_snapshot() -> None:
        """Write a snapshot at this level boundary (the workers dump their shares)."""
        nonlocal seq
        assert lean is not None and folder is not None and lean.removed == 0
        seq += 1
        lean.log.flush(sync=True)
        paths = [folder / "frontier" / f"W{i}.bin" for i in range(pool.n)]
        pool.dump(paths)
        labels = dict(label_base)
        for d in pool.labels(None):
            for k, v in d.items():
                labels[k] = labels.get(k, 0) + v
        state = {
            "known": len(lean.table),
            "generated": generated,
            "depth": depth,
            "levels": levels,
            "found": dict(found),
            "witnesses": dict(witnesses),
            "applied": dict(applied),
            "type_index": dict(type_index),
            "type_samples": list(type_samples),
            "enabled": enabled.tolist(),
            "new_by": new_by.tolist(),
            "frontier": np.array(frontier_hashes, dtype=np.int64),
            "owner": np.array(owner, dtype=np.int32),
            "labels": labels,
            "forked": isinstance(pool, ProcessPool),
            "forked_at_depth": st.forked_at_depth,
            "merge_seconds": merge_seconds,
            "elapsed": clock() - start,
            "seq": seq,
        }
        write_snapshot(folder, seq, state, lean.table, paths)
        for path in paths:
            path.unlink()

    try:
        while frontier_hashes and not stop:
            if folder is not None and clock() - last_snapshot >= o.checkpoint_every:
                take_snapshot()
                last_snapshot = clock()
            if max_depth is not None and depth >= max_depth:
                budget, reason = "max_depth", ExitReason.BUDGET_EXHAUSTED
                break
            if isinstance(pool, LocalPool) and workers > 1 and len(frontier_hashes) >= serial_below:
                pool = ProcessPool(exp, workers)
                gmaps = [list(gmaps[0]) for _ in range(workers)]
                label_base = dict(exp.labels)
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
            if lean is not None:  # the level's states have the indices base .. base + L - 1
                base, add, lbuf = len(lean) - L, lean.table.add, lean.log.buf
                if len(lbuf) >= 1 << 21:
                    lean.log.flush()
            tm = clock()
            for pos in range(L):
                w = owner[pos]
                cur = cursors[w]
                if cur is None or cur[3] >= len(cur[0]):
                    msg = pool.next_batch(w)
                    assert msg is not None, "pbfs: a worker ended its level early"
                    R, C, H, T, evs, new_types = msg
                    if new_types:
                        g = gmaps[w]
                        for tid, a, (r, j) in new_types:
                            tp = type(a)
                            gid = type_index.get(tp)
                            if gid is None:
                                gid = type_index[tp] = len(type_index)
                                type_samples.append(((depth, r, j), a))
                            elif (depth, r, j) < type_samples[gid][0]:
                                type_samples[gid] = ((depth, r, j), a)
                            while len(g) <= tid:
                                g.append(-1)
                            g[tid] = gid
                        gmap_arr[w] = np.array(g, dtype=np.int64)
                    if evs:
                        events.extend(evs)
                        if not keep_going:
                            stop_rank = min([stop_rank, *(e[0][0] for e in evs if e[2] in "tsd")])
                    newidx: list[int] = []
                    batches.append((R, C, gmap_arr[w][T] if len(T) else T, newidx))
                    cur = cursors[w] = [R.tolist(), C.tolist(), H.tolist(), 0, 0, newidx]
                _, Cl, Hl, pi, off, newidx = cur
                n = Cl[pi]
                ph = frontier_hashes[pos]
                mine = per_worker_new[w]
                if lean is not None:
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
                if max_states is not None and len(seen) >= max_states:
                    cut, cut_budget = pos, "max_states"
                    break
                if (pos & 255) == 0:
                    crash_point("state")
                    now = clock()
                    if deadline is not None and now >= deadline:
                        cut, cut_budget = pos, "max_seconds"
                        break
                    if stop_requested() is not None:  # Ctrl-C or SIGTERM: cut the level here
                        cut, cut_budget = pos, _INTERRUPTED
                        break
                    if progress is not None:
                        el = now - start
                        progress.update(depth + 1, L, len(seen), len(seen) / el if el else 0.0)
            merge_seconds += clock() - tm
            pool.finish_level(abort=cut is not None)
            # the new states: each to the worker that generated it; check always/reachable there
            per_worker = [
                (
                    np.array([new_hashes[i] for i in idx], dtype=np.int64),
                    np.array(idx, dtype=np.int64),
                )
                for idx in per_worker_new
            ]
            events.extend(pool.accept(per_worker))
            if not keep_going:
                viol = [e[0][0] for e in events if e[2] in "tsd"]
                if viol and (cut is None or min(viol) <= cut):
                    cut, cut_budget = min(viol), None
            limit = _INF if cut is None else (cut, AFTER + 1, 0, 0)
            for ev in sorted(events, key=lambda e: e[0]):
                if ev[0] <= limit:
                    handle(ev)
            # counts of the level (up to the cut)
            level_generated = 0
            n_types = len(type_index)
            if len(enabled) < n_types:
                enabled = np.concatenate([enabled, np.zeros(n_types - len(enabled), dtype=np.int64)])
                new_by = np.concatenate([new_by, np.zeros(n_types - len(new_by), dtype=np.int64)])
            for R, C, G, newidx in batches:
                mask = np.zeros(len(G), dtype=bool)
                mask[newidx] = True
                if cut is not None:
                    upto = R <= cut  # noqa: SIM300 (a numpy mask)
                    keep = np.repeat(upto, C)
                    G, mask = G[keep], mask[keep]
                    C = C[upto]
                level_generated += int(C.sum())
                enabled += np.bincount(G, minlength=n_types)[:n_types]
                new_by += np.bincount(G[mask], minlength=n_types)[:n_types]
            if cut is not None:
                stop = True
                if cut_budget == _INTERRUPTED:
                    budget, reason = None, ExitReason.INTERRUPTED
                elif cut_budget is not None:
                    budget, reason = cut_budget, ExitReason.BUDGET_EXHAUSTED
                n_new = next((i for i, pr in enumerate(new_prank) if pr > cut), len(new_prank))
                if lean is not None:
                    lean.removed += len(new_hashes) - n_new
                else:
                    for h in new_hashes[n_new:]:
                        del seen[h]
                del new_hashes[n_new:], new_owner[n_new:]
            generated += level_generated
            if new_hashes or level_generated:
                levels.append(
                    LevelStats(depth + 1, len(new_hashes), level_generated, len(new_hashes), clock() - t0)
                )
            frontier_hashes, owner = new_hashes, new_owner
            depth += 1
    except KeyboardInterrupt:
        reason, budget, stop = ExitReason.INTERRUPTED, None, True
        cut = None
        with contextlib.suppress(Exception):
            pool.finish_level(abort=True)
    except BaseException:
        polling.__exit__(None, None, None)
        pool.close()  # no orphan workers, whatever failed
        if lean is not None:
            lean.close()
        if progress is not None:
            progress.close()
        raise
    try:
        label_list = pool.labels(cut if stop else None)
        for npar, nsucc, cpu, rss, waited in pool.stats():
            st.worker_waited.append(waited)
            st.parents.append(npar)
            st.successors.append(nsucc)
            st.worker_cpu.append(cpu)
            st.worker_rss_kb.append(rss)
    finally:
        polling.__exit__(None, None, None)
        pool.close()
        if progress is not None:
            progress.close()
    if isinstance(pool, LocalPool):
        st.parents, st.successors = [exp.n_parents], [exp.n_successors]
    label_counts = dict(label_base)
    for d in label_list:
        for k, v in d.items():
            label_counts[k] = label_counts.get(k, 0) + v

    seconds = clock() - start
    cpu1, rss = usage()
    st.driver_cpu, st.driver_rss_kb, st.driver_merge_seconds, st.wall = (
        cpu1 - cpu0,
        rss,
        merge_seconds,
        seconds,
    )
    found_violations: list[Finding] = []
    for name, ev in found.items():
        p = by_name[name]
        kind, data = ev[2], ev[3]
        where, extra_index = (data[0], data[1]) if kind == "t" else (data, None)
        states = (
            lean.path(system, where, canon)
            if lean is not None
            else _replay(system, _chain(seen, where), canon)
        )
        extra = None if extra_index is None else list(_ordered_successors(system)(states[-1]))[extra_index]
        message = "no successor (deadlock)" if kind == "d" else f"{name} does not hold"
        found_violations.append((p, message, path_trace(system, states, canon, extra, p)))
    live_check = None
    if live_dir is not None:
        live_check = lambda: _check_live(system, props, keep_going, key, seen, lean, live_dir)  # noqa: E731
    witness_lengths = {
        n: lean.depth(w) if lean is not None else len(_chain(seen, w)) - 1 for n, w in witnesses.items()
    }
    cov = Coverage()
    for gid, (_, sample) in enumerate(type_samples):
        if gid < len(enabled) and enabled[gid]:
            tp = type(sample)
            cov.enabled[tp] = int(enabled[gid])
            cov.new[tp] = int(new_by[gid])
            cov.sample[tp] = sample
    notes = [
        f"bfs with {workers} worker processes: states are told apart by 64-bit "
        f"{'hashes' if lean is None else 'fingerprints'}; collision odds about {collision_odds(len(seen)):.1e}",
        *sym_off,
    ]
    if canon is not None:
        notes.append(
            f"reduce symmetry: a group of {len(canon.perms) + 1} permutations, applied by each worker "
            "to the successors it generates; coverage counts the representatives' expansions"
        )
    counted = (reason, budget, levels, generated, cov, label_counts, seconds, len(seen), applied)
    try:
        return exhaustive_result(
            system, props, found_violations, Explored(*counted), options, witness_lengths, live_check, notes
        )
    finally:
        if live_tmp is not None:
            live_tmp.cleanup()
        if lean is not None:
            lean.close()
