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

from typing import Any

import numpy as np

from explorer.core import CheckResult, TraceStep, Violation
from explorer.engines.spark.levels import LevelStore, rebuild_path
from explorer.engines.spark.liveness import check_eventually
from explorer.engines.spark.partitions import IDX_BITS, PHASE_STATE, PHASE_TRANSITION
from explorer.search import collision_odds, exhaustive_result, trace_step
from explorer.search.coverage import Coverage
from explorer.search.monitor import Found
from explorer.search.results import Explored
from explorer.search.symmetry import path_trace

__all__ = ["assemble_result"]


def assemble_result(search: Any, store: LevelStore, seconds: float, notes: list[str]) -> CheckResult:
    """Assemble the CheckResult exactly as ``check_bfs`` does (``notes``: the reduction's)."""
    props, job = search.props, search.job

    def trace_of(f: Found) -> list[TraceStep]:
        """The trace to a violation, rebuilt from the level files along its event key."""
        level, r, i, phase, _ = f.at
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
            step = phase == PHASE_TRANSITION
            reps = [s for _, s in (path[:-1] if step else path)]
            return path_trace(job.system, reps, job.canon, path[-1] if step else None, f.prop)
        return [trace_step(n, path[n - 1][1] if n else None, a, s) for n, (a, s) in enumerate(path)]

    # the monitor met the events in key order (levels in turn, each level's in key order)
    found = search.monitor.findings(trace_of)
    store.forget()

    def live() -> dict[str, Violation | None]:
        checked = check_eventually(job, job.live, store, search.run_dir, search.kind_names, search.keep_going)
        store.forget()
        return checked

    notes = list(notes)
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
        why = f"frontiers below {search.o.local_frontier:,}"
        if search.waited_levels:
            why = f"the last {search.waited_levels} while the Spark session was starting"
        notes.append(f"spark: all {search.driver_levels} levels ran in the driver ({why})")
    else:
        notes.append(
            f"spark: {search.driver_levels} levels in the driver{waited}, {st.levels_run} on Spark "
            f"({st.sc.master}, {st.partitions} partitions, "
            + (
                f"reliable checkpoints every {search.o.checkpoint_every} levels)"
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
    total = search.total
    # counted by kind name: each name stands for its kind's actions
    cov = Coverage(dict(total.enabled), dict(total.new_by), {k: _KindName(k) for k in total.enabled})  # type: ignore[arg-type]
    applied = {p.name: p.name in total.applies for p in props if p.applies is not None}
    explored = Explored(
        search.reason,
        search.budget,
        search.levels,
        search.generated,
        cov,
        dict(total.labels),
        seconds,
        search.distinct,
        applied,
    )
    witness_lengths = {n: w[0] + 1 for n, w in search.monitor.witnesses.items()}
    live_check = live if job.live else None
    return exhaustive_result(
        search.system, props, found, explored, search.options, witness_lengths, live_check, notes
    )


class _KindName:
    """Stands for an action of a kind when coverage is counted by kind name."""

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = kind
