"""The ``spark`` engine's result, assembled exactly as ``check_bfs`` assembles its own.

:func:`assemble_result` turns the driver's search (events, witnesses, counters, the
level files) into a :class:`~explorer.core.CheckResult`; counterexamples are rebuilt
from the level files (:func:`explorer.engines.spark.levels.rebuild_path`).

Example
-------
>>> _KindName("Elect").kind
'Elect'
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from explorer.core import CheckResult, ExitReason, Property, PropertyKind, Violation
from explorer.engines.spark.levels import LevelStore, rebuild_path
from explorer.engines.spark.liveness import check_eventually
from explorer.engines.spark.partitions import IDX_BITS, PHASE_DEADLOCK, PHASE_STATE, PHASE_TRANSITION
from explorer.search import (
    DEADLOCK_PROPERTY,
    collision_odds,
    exhaustive_result,
    trace_step,
)
from explorer.search.symmetry import build_trace_symmetric

__all__ = ["assemble_result"]


def _symmetric_trace(job: Any, p: Property, path: list[tuple[Any, Any]], last_is_step: bool) -> list[Any]:
    """The real trace of a symmetry-reduced run's path of representatives (the last step, for a
    transition property, the real step that the property rejects)."""
    reps = [s for _, s in (path[:-1] if last_is_step else path)]
    parents = {s: (reps[k - 1] if k else None) for k, s in enumerate(reps)}
    fails = None
    if p.kind is PropertyKind.TRANSITION:
        chk, guard = p.check, p.guard
        fails = lambda s, a, t: (guard is None or guard(s, a, t)) and not chk(s, a, t)  # noqa: E731
    extra = path[-1] if last_is_step else None
    return build_trace_symmetric(job.system, parents, reps[-1], job.canon, extra, fails)


def assemble_result(
    search: Any,
    store: LevelStore,
    model: str,
    config: Any,
    seconds: float,
    local_frontier: int,
) -> CheckResult:
    """Assemble the CheckResult exactly as ``check_bfs`` does."""
    props, job = search.props, search.job
    deadlock_prop = DEADLOCK_PROPERTY
    by_name = {p.name: p for p in props}
    by_name["deadlock"] = deadlock_prop
    violations: list[Violation] = []
    for name, key in sorted(search.found.items(), key=lambda kv: kv[1]):
        p = by_name[name]
        level, r, i, phase, _ = key
        if level < 0:  # an initial state
            path = rebuild_path(job, store, 0, r)
        elif phase == PHASE_STATE:
            keys, _ = store.get(level + 1)
            rank = int(np.searchsorted(keys, (r << IDX_BITS) | i))
            path = rebuild_path(job, store, level + 1, rank)
        else:
            path = rebuild_path(job, store, level, r)
            if phase == PHASE_TRANSITION:
                succ = list(job.system.successors(path[-1][1]))
                path.append(succ[i])
        if job.canon is not None:  # representatives on the path: a real trace to their orbits
            trace = _symmetric_trace(job, p, path, phase == PHASE_TRANSITION)
        else:
            trace = [trace_step(n, path[n - 1][1] if n else None, a, s) for n, (a, s) in enumerate(path)]
        message = "no successor (deadlock)" if phase == PHASE_DEADLOCK else f"{name} does not hold"
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
    live_status: dict[str, str] = {}
    if job.live and complete:
        checked = check_eventually(
            job, job.live, store, search.o["run_dir"], search.kind_names, search.keep_going
        )
        for name, lv in checked.items():
            live_status[name] = "held" if lv is None else "violated"
            if lv is not None:
                violations.append(lv)
        store.forget()
    if violations:
        reason = ExitReason.VIOLATION

    applied = {p.name: p.name in search.total.applies for p in props if p.applies is not None}

    notes = list(search.o.get("symmetry_notes", []))
    odds = collision_odds(search.distinct)
    notes.append(
        f"fingerprint collision odds {odds:.1e} ({search.distinct:,} distinct states, 64-bit fingerprints, "
        "about n^2/2^65)"
    )
    st = search.spark
    waited = (
        f", {search.waited_levels} of them while the Spark session was starting"
        if search.waited_levels
        else ""
    )
    if st is None:
        why = f"frontiers below {local_frontier:,}"
        if search.waited_levels:
            why = f"the last {search.waited_levels} while the Spark session was starting"
        notes.append(f"spark: all {search.driver_levels} levels ran in the driver ({why})")
    else:
        notes.append(
            f"spark: {search.driver_levels} levels in the driver{waited}, {st.levels_run} on Spark "
            f"({st.sc.master}, {st.partitions} partitions, "
            + (
                f"reliable checkpoints every {search.o['checkpoint_every']} levels)"
                if st.checkpointing
                else "no reliable checkpoints: give a checkpoint directory on shared storage)"
            )
        )
        if st.profile:
            cpu = sum(x["executor_cpu"] for x in st.profile)
            fixed = sorted(x["job_seconds"] + x["driver_seconds"] for x in st.profile)
            notes.insert(
                len(notes) - 1,  # the levels note stays the last
                f"spark: {cpu:.1f} s of executor CPU in level tasks, "
                f"{sum(x['block_bytes'] for x in st.profile) / 2**20:.1f} MiB of pickled frontier blocks, "
                f"{sum(x['summary_bytes'] for x in st.profile) / 2**20:.1f} MiB of candidate records to the driver; "
                f"fastest level {fixed[0]:.3f} s (profile per level: spark-profile.json in the run directory)",
            )
    cov = types.SimpleNamespace(
        enabled=dict(search.total.enabled),
        new=dict(search.total.new_by),
        sample={k: _KindName(k) for k in search.total.enabled},
    )
    return exhaustive_result(
        search.system,
        props,
        violations,
        engine="spark",
        model=model,
        config=config,
        reason=reason,
        budget=search.budget,
        complete=complete,
        deadlock=job.deadlock,
        distinct=search.distinct,
        generated=search.generated,
        init_generated=search.init_generated,
        levels=search.levels,
        seconds=seconds,
        applied=applied,
        witness_lengths={n: w[0] + 1 for n, w in search.witnesses.items()},
        coverage=cov,  # type: ignore[arg-type]
        labels=dict(search.total.labels) if hasattr(search.system, "successors_labelled") else None,
        live_status=live_status,
        notes=notes,
    )


class _KindName:
    """Stands for an action of a kind when coverage is counted by kind name."""

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = kind
