"""A reassignment to a broker that is down must be refused (issue 35: "reassignment to a dead
broker" was a scenario no entry checked). ``reassignment_rejected`` is a witness: some
reassignment is removed from /admin/reassign_partitions unfinished. A controller that skips
``initiateReassignReplicasForTopicPartition``'s checks never refuses one, and an entry that
requires its witnesses (controller-admin-reassign) fails."""

from __future__ import annotations

from typing import Any

import pytest

from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from invariants import controller as spec
from invariants.controller import ControllerConfig
from model.controller import ControllerSystem
from model.controller.admin import AdminWorkflows
from model.controller.base import ControllerBase

pytestmark = pytest.mark.slow  # two searches of about 16 CPU-seconds each

# controller-admin-reassign's bounds without liveness (three brokers, one crash, one reassignment)
SMALL = [
    "brokers=3",
    "topics=1",
    "replication_factor=2",
    "max_crashes=1",
    "max_restarts=0",
    "max_session_expiries=0",
    "send_update_metadata=false",
    "max_reassignments=1",
]


class SkipsReassignmentChecks(AdminWorkflows):
    """Starts every reassignment as onPartitionReassignment, without the initiation checks."""

    def on_partition_reassignment(self, c: ControllerBase, p: int, mode: int, rest: tuple) -> bool:
        return super().on_partition_reassignment(c, p, 1 if mode == 0 else mode, rest)


def _status(system: Any, cfg: ControllerConfig) -> str:
    props = [p for p in spec.properties(cfg) if p.name == "reassignment_rejected"]
    r = check_bfs(system, props, keep_going=True)
    assert r.exit_reason.value != "budget_exhausted"
    return str(r.properties["reassignment_rejected"]["status"])


def test_a_reassignment_to_a_down_broker_is_refused() -> None:
    cfg = load_config(ControllerConfig, None, SMALL)
    assert _status(spec.build(cfg), cfg) == "witnessed"


def test_a_controller_that_skips_the_checks_never_refuses() -> None:
    cfg = load_config(ControllerConfig, None, SMALL)
    assert _status(ControllerSystem(cfg, admin_workflows=SkipsReassignmentChecks), cfg) == "unreached"
