"""The lean ``bfs`` (``--visited fingerprints``): the same search and the same result, in
about 16 bytes a state, with checkpoints.

:func:`check_lean` makes exactly the search of :func:`explorer.engines.bfs.check_bfs`
(same order, same checks, same :class:`~explorer.core.CheckResult` but for timings), but
keeps no state object once it is expanded:

* the visited set is a :class:`~explorer.search.visited.FingerprintTable` of 64-bit
  fingerprints (:func:`explorer.encoding.fingerprint`: stable across processes and runs);
* per state index, a 16-byte record (parent index, successor index, fingerprint) goes to
  a file (:class:`~explorer.search.visited.ParentLog`); a counterexample is replayed from
  it through ``successors``, each fingerprint checked (a mismatch is a collision:
  :class:`FingerprintCollisionError`);
* a level's new states stay in memory up to ``frontier_batch`` states, then go to disk in batch
  files (:class:`~explorer.search.frontier.LevelQueue`).

With ``checkpoint=DIR`` a snapshot is written at a level boundary whenever
``checkpoint_every`` seconds have passed since the last one
(:mod:`explorer.search.checkpoint`); ``resume=True`` continues from the folder's last
snapshot and gives the result the uninterrupted run gives. ``eventually`` properties need
the whole state graph: with them the search is the plain ``bfs`` (and a checkpoint is
refused). Where the two differ: the lean search trusts 64-bit fingerprints where ``bfs``
compares states (the collision odds are in ``notes``).

Example
-------
>>> from tests.toys import Grid
>>> g = Grid(3, limit=3)
>>> r = check_lean(g, g.properties())
>>> r.engine, r.distinct_states, r.violations[0].length
('bfs', 8, 3)
"""

from __future__ import annotations

import gc
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from explorer import encoding
from explorer.core import (
    CheckResult,
    ExitReason,
    LevelStats,
    Property,
    PropertyKind,
    Violation,
    config_to_dict,
    transition_groups,
)
from explorer.engines.base import CheckOptions, UntrustedResultError
from explorer.engines.bfs import _Found, check_bfs, model_error_of
from explorer.search import (
    DEADLOCK_PROPERTY,
    Coverage,
    Progress,
    build_trace,
    collision_odds,
    exhaustive_result,
    label_counting,
    polled,
    safeload,
    stop_requested,
)
from explorer.search.checkpoint import (
    CheckpointError,
    crash_point,
    open_checkpoint,
    write_snapshot,
)
from explorer.search.frontier import LevelQueue
from explorer.search.visited import NO_PARENT, ParentLog, ReplayMismatch, new_table, replay_path

__all__ = ["DEFAULT_BATCH", "FingerprintCollisionError", "check_lean", "run"]

#: states of a level kept in memory before the rest goes to disk (``--frontier-batch``)
DEFAULT_BATCH = 50_000
#: seconds between two checkpoints (``--checkpoint-every``)
DEFAULT_EVERY = 600.0
#: parent records buffered before they are appended to the file
_LOG_FLUSH = 1 << 19
#: the first new states whose C fingerprint is compared with explorer.encoding's
_SELF_CHECKS = 256
#: the options a checkpoint records (a resumed run takes them from there)
OPTION_KEYS = (
    "max_depth",
    "max_states",
    "max_seconds",
    "keep_going",
    "deadlock",
    "frontier_batch",
    "checkpoint_every",
)


class FingerprintCollisionError(UntrustedResultError):
    """A counterexample does not replay: a 64-bit fingerprint collision (or a non-deterministic model)."""


def _successor_order(system: Any) -> Callable[[Any], Iterable[tuple[Any, Any]]]:
    """``successors`` in the order the search enumerates them (labelled if the system labels)."""
    labelled = getattr(system, "successors_labelled", None)
    if labelled is None:
        return system.successors  # type: ignore[no-any-return]
    return lambda s: ((a, t) for a, t, _ in labelled(s))


def check_lean(
    system: Any,
    properties: Iterable[Property],
    *,
    model: str = "",
    config: Any = None,
    max_depth: int | None = None,
    max_states: int | None = None,
    max_seconds: float | None = None,
    keep_going: bool = False,
    deadlock: bool = True,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.perf_counter,
    frontier_batch: int = DEFAULT_BATCH,
    checkpoint: str | Path | None = None,
    checkpoint_every: float = DEFAULT_EVERY,
    resume: bool = False,
    run_info: dict[str, Any] | None = None,
) -> CheckResult:
    """The ``bfs`` search with the lean visited set: the result :func:`check_bfs` gives.

    ``frontier_batch``: states of a level held in memory (the rest on disk). ``checkpoint``: a
    folder for snapshots, every ``checkpoint_every`` seconds at a level boundary;
    ``resume``: continue the snapshot in ``checkpoint`` (the options must be the ones it
    was started with; ``run_info``, what the command line named, goes in its manifest).
    """
    props = list(properties)
    options: dict[str, Any] = {
        "max_depth": max_depth,
        "max_states": max_states,
        "max_seconds": max_seconds,
        "keep_going": keep_going,
        "deadlock": deadlock,
        "frontier_batch": frontier_batch,
        "checkpoint_every": checkpoint_every,
    }
    if any(p.kind is PropertyKind.EVENTUALLY for p in props):
        if checkpoint is not None:
            raise CheckpointError(
                "--checkpoint: eventually properties need the whole state graph (plain bfs)"
            )
        return check_bfs(
            system,
            props,
            model=model,
            config=config,
            max_depth=max_depth,
            max_states=max_states,
            max_seconds=max_seconds,
            keep_going=keep_going,
            deadlock=deadlock,
            progress=progress,
            clock=clock,
        )
    folder, snapshot = open_checkpoint(
        checkpoint,
        resume=resume,
        system=system,
        checks=[p.check for p in props],
        model=model,
        config=config_to_dict(config),
        options=options,
        layout="lean",
        run_info=run_info,
    )
    work = folder if folder is not None else Path(tempfile.mkdtemp(prefix="kafka-mc-lean-"))
    try:
        return _Search(
            system, props, model, config, options, progress, clock, work, folder is not None, snapshot
        ).run()
    finally:
        if folder is None:
            shutil.rmtree(work, ignore_errors=True)


class _Search:
    """One lean search: its state is all in attributes, so that a snapshot can hold it."""

    def __init__(
        self,
        system: Any,
        props: list[Property],
        model: str,
        config: Any,
        options: dict[str, Any],
        progress: Progress | None,
        clock: Callable[[], float],
        work: Path,
        persistent: bool,
        snapshot: tuple[dict[str, Any], Any, list[Path]] | None,
    ):
        self.system, self.props, self.model, self.config = system, props, model, config
        self.o, self.progress, self.clock, self.work, self.persistent = (
            options,
            progress,
            clock,
            work,
            persistent,
        )
        self.snapshot = snapshot

    def run(self) -> CheckResult:
        system, props, o, clock, work = self.system, self.props, self.o, self.clock, self.work
        max_depth, max_states, max_seconds = o["max_depth"], o["max_states"], o["max_seconds"]
        keep_going, deadlock_on, batch = o["keep_going"], o["deadlock"], o["frontier_batch"]
        progress = self.progress
        always_p = [p for p in props if p.kind is PropertyKind.ALWAYS]
        trans_p = [p for p in props if p.kind is PropertyKind.TRANSITION]
        reach_p = [p for p in props if p.kind is PropertyKind.REACHABLE]
        by_name = {p.name: p for p in props}
        state_checks = [(p, p.check) for p in always_p]
        trans_groups = transition_groups(trans_p)
        trans_failed: list[tuple[int, Property]] = []
        pending_reach = [(p, p.check) for p in reach_p]
        applied: dict[str, bool] = {p.name: False for p in props if p.applies is not None}
        applies_state = [(p.name, p.applies) for p in always_p if p.applies is not None]
        applies_trans = [(p.name, p.applies) for p in trans_p if p.applies is not None]
        is_terminal = getattr(system, "is_terminal", None)
        label_counts: dict[Any, int] = {}
        successors = label_counting(system, label_counts) or system.successors
        labelled = hasattr(system, "successors_labelled")
        found: dict[str, _Found] = {}
        found_at: dict[str, int] = {}  # property -> index of the state the violation is at
        witnesses: dict[str, int] = {}
        cov = Coverage()
        levels: list[LevelStats] = []
        generated = known = depth = 0
        checks_left = _SELF_CHECKS
        budget: str | None = None
        reason = ExitReason.COMPLETE
        stop = False
        elapsed_before = 0.0
        seq = 0
        frontier_dir = work / "frontier"
        frontier_dir.mkdir(exist_ok=True)
        for stale in frontier_dir.iterdir():
            stale.unlink()

        if self.snapshot is not None:  # resume: every counter as the snapshot left it
            st, table, files = self.snapshot
            log = ParentLog(work / "parents.bin", resume_count=st["known"])
            generated, known, depth, levels = st["generated"], st["known"], st["depth"], st["levels"]
            cov.enabled.update(st["enabled"])
            cov.new.update(st["new"])
            cov.sample.update(st["sample"])
            label_counts.update(st["label_counts"])
            for name, (idx, s, a, t, msg) in st["found"].items():
                p = by_name[name] if name != DEADLOCK_PROPERTY.name else DEADLOCK_PROPERTY
                found[name], found_at[name] = _Found(p, s, a, t, msg), idx
            witnesses.update(st["witnesses"])
            applied.update(st["applied"])
            pending_reach = [x for x in pending_reach if x[0].name in st["pending_reach"]]
            applies_state = [x for x in applies_state if x[0] in st["applies_state"]]
            applies_trans = [x for x in applies_trans if x[0] in st["applies_trans"]]
            checks_left, elapsed_before, seq = st["checks_left"], st["elapsed"], st["seq"]
            linked = []
            for k, f in enumerate(files):
                dst = frontier_dir / f"R{k:06d}.pkl"
                dst.hardlink_to(f)
                linked.append(dst)
            frontier = LevelQueue(frontier_dir, depth, batch, linked, st["frontier_size"])
        else:
            table = new_table()
            log = ParentLog(work / "parents.bin")
            frontier = LevelQueue(frontier_dir, 0, batch)
        add_state = table.add_state
        log_buf = log.buf
        enabled, new_by, sample = cov.enabled, cov.new, cov.sample
        start = clock() - elapsed_before
        deadline = None if max_seconds is None else start + max_seconds
        last_snapshot = clock()
        every = o["checkpoint_every"]

        def record(p: Property, f: _Found, idx: int) -> None:
            nonlocal stop
            if p.name not in found:
                found[p.name], found_at[p.name] = f, idx
                if not keep_going:
                    stop = True

        def check_state(s: Any, idx: int) -> None:
            for p, chk in state_checks:
                if not chk(s):
                    record(p, _Found(p, s, message=f"{p.name} does not hold"), idx)
            if applies_state:
                for entry in list(applies_state):
                    if entry[1](s):
                        applied[entry[0]] = True
                        applies_state.remove(entry)
            if pending_reach:
                for item in list(pending_reach):
                    if item[1](s):
                        witnesses[item[0].name] = idx
                        pending_reach.remove(item)

        def self_check(t: Any, fp: int) -> None:
            if encoding.fingerprint(t) != fp:
                raise FingerprintCollisionError(
                    "the C fingerprint differs from explorer.encoding's: rebuild explorer/_speedups.c "
                    f"or set KAFKA_MC_PURE_PYTHON=1 (state {t!r:.120})"
                )

        def take_snapshot() -> None:
            nonlocal seq
            seq += 1
            log.flush(sync=True)
            files = frontier.persist()
            state = {
                "generated": generated,
                "known": known,
                "depth": depth,
                "levels": levels,
                "enabled": dict(enabled),
                "new": dict(new_by),
                "sample": dict(sample),
                "label_counts": dict(label_counts),
                "found": {n: (found_at[n], f.state, f.action, f.target, f.message) for n, f in found.items()},
                "witnesses": dict(witnesses),
                "applied": dict(applied),
                "pending_reach": [p.name for p, _ in pending_reach],
                "applies_state": [n for n, _ in applies_state],
                "applies_trans": [n for n, _ in applies_trans],
                "checks_left": checks_left,
                "elapsed": clock() - start,
                "seq": seq,
                "frontier_size": len(frontier),
            }
            write_snapshot(work, seq, state, table, files)

        model_error: tuple[Exception, Any, Any, int] | None = None
        error_index = -1
        s = a = None
        n = level_generated = before = count = rank = 0
        in_level = False
        nq = frontier
        t0 = clock()
        if self.snapshot is None:
            try:
                for k, s0 in enumerate(system.init_states()):
                    generated += 1
                    fp = add_state(s0)
                    if fp is not None:
                        log.append(NO_PARENT, k, fp)
                        known += 1
                        frontier.tail.append(s0)
                        check_state(s0, known - 1)
            except Exception as e:
                model_error, stop, reason = (e, None, None, 0), True, ExitReason.INTERRUPTED
            levels.append(LevelStats(0, len(frontier), generated, known, clock() - t0))
        gc_was_enabled = gc.isenabled()
        gc.disable()
        polling = polled()
        try:
            polling.__enter__()
            while len(frontier) and not stop:
                if self.persistent and clock() - last_snapshot >= every:
                    take_snapshot()
                    last_snapshot = clock()
                if max_depth is not None and depth >= max_depth:
                    budget, reason = "max_depth", ExitReason.BUDGET_EXHAUSTED
                    break
                t0 = clock()
                nq = LevelQueue(frontier_dir, depth + 1, batch)
                tail, cap = nq.tail, nq.threshold
                level_generated = n = 0
                before, in_level = known, True
                rank = known - len(frontier)  # index of the level's first state
                count = -1
                for states in frontier.batches():
                    for s in states:
                        count += 1
                        plink = (rank + count) << 32
                        n = 0
                        for a, t in successors(s):
                            n += 1
                            tp = type(a)
                            c = enabled.get(tp)
                            if c is None:
                                enabled[tp] = 1
                                new_by[tp] = 0
                                sample[tp] = a
                            else:
                                enabled[tp] = c + 1
                            if trans_groups:
                                for guard, checks in trans_groups:
                                    if guard is None or guard(s, a, t):
                                        for i, p, chk in checks:
                                            if not chk(s, a, t):
                                                trans_failed.append((i, p))
                                if trans_failed:
                                    for _, p in sorted(trans_failed, key=lambda x: x[0]):
                                        record(p, _Found(p, s, a, t, f"{p.name} does not hold"), rank + count)
                                    trans_failed.clear()
                                if applies_trans:
                                    for item in list(applies_trans):
                                        if item[1](s, a, t):
                                            applied[item[0]] = True
                                            applies_trans.remove(item)
                            fp = add_state(t)
                            if fp is not None:
                                log_buf.append(plink | (n - 1))
                                log_buf.append(fp)
                                known += 1
                                tail.append(t)
                                new_by[tp] += 1
                                if checks_left:
                                    checks_left -= 1
                                    self_check(t, fp)
                                if state_checks or applies_state or pending_reach:
                                    check_state(t, known - 1)
                        level_generated += n
                        if n == 0 and deadlock_on and not (is_terminal is not None and is_terminal(s)):
                            record(
                                DEADLOCK_PROPERTY,
                                _Found(DEADLOCK_PROPERTY, s, message="no successor (deadlock)"),
                                rank + count,
                            )
                        if len(tail) >= cap:
                            nq.spill()
                            tail, cap = nq.tail, nq.threshold
                        if len(log_buf) >= _LOG_FLUSH:
                            log.flush()
                        if stop:
                            break
                        if max_states is not None and known >= max_states:
                            budget, reason = "max_states", ExitReason.BUDGET_EXHAUSTED
                            stop = True
                            break
                        if (count & 255) == 0:
                            crash_point("state")
                            now = clock()
                            if deadline is not None and now >= deadline:
                                budget, reason = "max_seconds", ExitReason.BUDGET_EXHAUSTED
                                stop = True
                                break
                            if stop_requested() is not None:
                                budget, reason = None, ExitReason.INTERRUPTED
                                stop = True
                                break
                            if progress is not None:
                                el = now - start
                                progress.update(depth + 1, len(frontier), known, known / el if el else 0.0)
                    if stop:
                        break
                generated += level_generated
                in_level = False
                if len(nq) or level_generated:
                    levels.append(LevelStats(depth + 1, len(nq), level_generated, len(nq), clock() - t0))
                if stop:
                    frontier.discard()
                frontier = nq
                depth += 1
        except KeyboardInterrupt:
            reason, budget = ExitReason.INTERRUPTED, None
        except Exception as e:
            if isinstance(e, (UntrustedResultError, OSError, safeload.UnsafePickleError)):
                raise  # not the model's: the engine's own (or a crafted checkpoint file)
            model_error, reason, budget = (e, s, a if n else None, n), ExitReason.INTERRUPTED, None
            error_index = rank + count
        finally:
            polling.__exit__(None, None, None)
            if in_level:
                generated += level_generated + n
                levels.append(
                    LevelStats(depth + 1, len(nq), level_generated + n, known - before, clock() - t0)
                )
            frontier.discard()
            nq.discard()
            if gc_was_enabled:
                gc.enable()
            if progress is not None:
                progress.close()
        log.flush()
        return self._result(
            found,
            found_at,
            witnesses,
            pending_reach,
            applied,
            levels,
            generated,
            known,
            cov,
            label_counts,
            labelled,
            reason,
            budget,
            clock() - start,
            log,
            model_error,
            error_index,
            depth,
        )

    def _path(self, log: ParentLog, index: int) -> list[Any]:
        """The replayed states from an initial state to the state ``index``."""
        try:
            return replay_path(self.system.init_states, _successor_order(self.system), log, index)
        except ReplayMismatch as e:
            raise FingerprintCollisionError(f"counterexample replay failed: {e}") from None

    def _result(
        self,
        found: dict[str, _Found],
        found_at: dict[str, int],
        witnesses: dict[str, int],
        pending_reach: list[Any],
        applied: dict[str, bool],
        levels: list[LevelStats],
        generated: int,
        known: int,
        cov: Coverage,
        label_counts: dict[Any, int],
        labelled: bool,
        reason: ExitReason,
        budget: str | None,
        seconds: float,
        log: ParentLog,
        model_error: Any,
        error_index: int,
        depth: int,
    ) -> CheckResult:
        system, props, o = self.system, self.props, self.o
        violations: list[Violation] = []
        for name, f in found.items():
            path = self._path(log, found_at[name])
            extra = (f.action, f.target) if f.action is not None else None
            trace = build_trace(system, _chain(path), path[-1], extra)
            violations.append(
                Violation(f.prop.name, f.prop.kind.value, f.prop.doc, f.message, len(trace) - 1, trace)
            )
        complete = reason is ExitReason.COMPLETE and (o["keep_going"] or not found)
        if violations:
            reason = ExitReason.VIOLATION
        for p, _ in pending_reach:
            if complete:
                violations.append(
                    Violation(
                        p.name, p.kind.value, p.doc, f"{p.name}: no reachable state is a witness", 0, []
                    )
                )
        if violations:
            reason = ExitReason.VIOLATION
        result = exhaustive_result(
            system,
            props,
            violations,
            engine="bfs",
            model=self.model,
            config=self.config,
            reason=reason,
            budget=budget,
            complete=complete,
            deadlock=o["deadlock"],
            distinct=known,
            generated=generated,
            init_generated=levels[0].generated,
            levels=levels,
            seconds=seconds,
            applied=applied,
            witness_lengths={n: len(self._path(log, i)) - 1 for n, i in witnesses.items()},
            coverage=cov,
            labels=label_counts if labelled else None,
            live_status={},
            notes=[f"visited set: 64-bit fingerprints; collision odds {collision_odds(known):.1e}"],
        )
        if model_error is not None:
            parents = _chain(self._path(log, error_index)) if model_error[1] is not None else {}
            log.close()
            raise model_error_of(system, parents, model_error, depth, result)
        log.close()
        return result


def _chain(path: list[Any]) -> dict[Any, Any]:
    """The parent links of one path of states, for :func:`explorer.search.build_trace`."""
    return {s: (path[i - 1] if i else None) for i, s in enumerate(path)}


def run(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    """The lean ``bfs`` behind :func:`explorer.api.check` (``engine_options["visited"]``
    is ``"fingerprints"``; its other keys: ``frontier_batch``, ``checkpoint``, ``checkpoint_every``,
    ``resume``, ``run_info``).

    >>> from tests.toys import Grid
    >>> run(Grid(3), [], CheckOptions(engine_options={"visited": "fingerprints"})).distinct_states
    16
    """
    extra = {k: v for k, v in options.engine_options.items() if k != "visited"}
    return check_lean(
        system,
        properties,
        model=options.model,
        config=options.config,
        max_depth=options.max_depth,
        max_states=options.max_states,
        max_seconds=options.max_seconds,
        keep_going=options.keep_going,
        deadlock=options.deadlock,
        progress=options.progress,
        **extra,
    )
