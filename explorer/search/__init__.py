"""The search machinery the exhaustive engines share (bfs, its ``--workers`` search,
spark) and the simulation engines reuse: progress line, coverage counting and labels,
trace rebuilding, the property table, collision odds, and liveness on the explored graph.

It knows no engine: it imports only the contracts (:mod:`explorer.core`,
:mod:`explorer.encoding`), and every engine imports it.

Example
-------
>>> from explorer.search import collision_odds
>>> collision_odds(2**16) < 1e-9
True
"""

from __future__ import annotations

from explorer.search.coverage import Coverage, coverage_of, declared_labels, label_counting, nest_labels
from explorer.search.liveness import LivenessViolation, check_leads_to, check_liveness
from explorer.search.progress import Progress
from explorer.search.reduction import REDUCTIONS, AmpleSets, por_setup
from explorer.search.results import (
    DEADLOCK_PROPERTY,
    collision_odds,
    exhaustive_result,
    not_run_result,
    property_table,
    sampled_result,
)
from explorer.search.stopping import clear_stop, polled, request_stop, stop_on_signals, stop_requested
from explorer.search.traces import build_trace, cut_cycles, trace_step, trace_steps

__all__ = [
    "DEADLOCK_PROPERTY",
    "REDUCTIONS",
    "AmpleSets",
    "Coverage",
    "LivenessViolation",
    "Progress",
    "build_trace",
    "check_leads_to",
    "check_liveness",
    "clear_stop",
    "collision_odds",
    "coverage_of",
    "cut_cycles",
    "declared_labels",
    "exhaustive_result",
    "label_counting",
    "nest_labels",
    "not_run_result",
    "polled",
    "por_setup",
    "property_table",
    "request_stop",
    "sampled_result",
    "stop_on_signals",
    "stop_requested",
    "trace_step",
    "trace_steps",
]
