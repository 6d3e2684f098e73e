"""The ``spark`` engine's result: its notes, and what it found handed to the one result builder.

:func:`assemble_result` makes the driver's search (the monitor's events and witnesses, the
counts of its :class:`~explorer.search.stopping.LevelBook`, the level files) an
:class:`~explorer.search.serial.Outcome` for :func:`explorer.search.serial.finish`, as
``bfs`` does: the level files are its visited set, counterexamples are replayed from them
(:meth:`explorer.engines.spark.levels.LevelStore.path`).

Example
-------
>>> _KindName("Elect").kind
'Elect'
"""

from __future__ import annotations

from typing import Any

from explorer.core import CheckResult
from explorer.engines.spark.liveness import check_eventually
from explorer.search import collision_odds
from explorer.search.coverage import Coverage
from explorer.search.results import explored_fields
from explorer.search.serial import Outcome, finish

__all__ = ["assemble_result"]


def assemble_result(search: Any, seconds: float, notes: list[str]) -> CheckResult:
    """Assemble the CheckResult exactly as ``check_bfs`` does (``notes``: the reduction's)."""
    props, job, store = search.props, search.job, search.store

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
    explored = search.book.explored(cov, dict(total.labels), seconds, search.distinct, applied)
    out = Outcome(**explored_fields(explored), monitor=search.monitor, visited=store, canon=job.canon)
    if job.live:
        out.decide_live = lambda: check_eventually(
            job, job.live, store, search.run_dir, search.kind_names, search.keep_going
        )
    return finish(search.system, out, search.options, notes, own_notes=True)


class _KindName:
    """Stands for an action of a kind when coverage is counted by kind name."""

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = kind
