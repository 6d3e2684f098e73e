"""A reassignment to a broker that is down waits for it (issue 35: "reassignment to a dead
broker" was a scenario no entry checked; issue 58: Kafka 0.10.1 on, KAFKA-4214's fix, where
0.8.0 to 0.10.0 refused it). ``reassignment_waits_for_down_broker`` is a witness: once quiet, a
controller's reassignment in progress has a new replica on a broker it counts dead. 0.10.0's
check (``bug = "KAFKA-4214"``) fails such a reassignment when a failover resumes it, so where
the only down new replica is the crashed controller's the witness is never reached, and an
entry that requires its witnesses (controller-admin-reassign) would fail."""

from __future__ import annotations

from typing import Any

import pytest

from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from invariants import controller as spec
from invariants.controller import ControllerConfig

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


# [1] -> [0] on two brokers: broker 0 is the controller and the new replica (bug-KAFKA-4214)
CONTROLLER_TARGET = [
    *(o for o in SMALL if not o.startswith(("brokers=", "replication_factor="))),
    "brokers=2",
    "replication_factor=1",
    "assignment=[[1]]",
    "reassignment=[[0]]",
    "max_controller_epoch=2",
    "offline_replicas_on_startup=true",
]


def _status(system: Any, cfg: ControllerConfig) -> str:
    props = [p for p in spec.properties(cfg) if p.name == "reassignment_waits_for_down_broker"]
    r = check_bfs(system, props, keep_going=True)
    assert r.exit_reason.value != "budget_exhausted"
    return str(r.properties["reassignment_waits_for_down_broker"]["status"])


@pytest.mark.slow  # about 16 CPU-seconds
def test_a_reassignment_to_a_down_broker_waits() -> None:
    cfg = load_config(ControllerConfig, None, SMALL)
    assert _status(spec.build(cfg), cfg) == "witnessed"


@pytest.mark.parametrize(("bug", "status"), [("none", "witnessed"), ("KAFKA-4214", "unreached")])
def test_a_failover_resumes_it_unless_kafka_4214(bug: str, status: str) -> None:
    """About 1,000 states each: the controller, also the new replica, crashes mid-way; the
    next controller waits for it, or (0.10.0) fails the reassignment."""
    cfg = load_config(ControllerConfig, None, [*CONTROLLER_TARGET, f"bug={bug}"])
    assert _status(spec.build(cfg), cfg) == status
