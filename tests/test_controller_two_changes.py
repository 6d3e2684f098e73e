"""Two fault-driven controller changes (issue 20): the ``second_controller_failover`` witness
and the ``controller-two-changes`` release configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.core import CheckResult
from explorer.engines.bfs import check_bfs
from invariants.mutants.controller import ControllerConfig, build

ROOT = Path(__file__).resolve().parent.parent
ONE_BROKER = [
    "brokers=1",
    "replication_factor=1",
    "max_crashes=0",
    "max_restarts=0",
    "max_session_expiries=2",
    "max_controller_epoch=3",
    "send_update_metadata=false",
]


def _run(sets: list[str], path: Path | None = None) -> CheckResult:
    c = load_config(ControllerConfig, path, sets)
    return check_bfs(build(c), spec.properties(c), keep_going=True)


def test_the_witness_needs_two_expiries_and_room_for_two_epochs() -> None:
    names = lambda sets: {p.name for p in spec.properties(load_config(ControllerConfig, None, sets))}  # noqa: E731
    assert "second_controller_failover" in names(ONE_BROKER)
    assert "second_controller_failover" not in names([*ONE_BROKER, "max_session_expiries=1"])
    assert "second_controller_failover" not in names([*ONE_BROKER, "max_controller_epoch=2"])


def test_two_expiries_of_one_broker_fail_over_twice() -> None:
    """A lone broker loses its session twice; each time it resigns and is elected again, at
    epochs 2 and 3: the witness is reached in 13 steps."""
    r = _run(ONE_BROKER)
    assert r.distinct_states == 43
    assert r.witnesses["second_controller_failover"] == 13


def test_the_witness_fails_when_the_epoch_never_rises() -> None:
    """The ``no-epoch-bump`` mutant writes the epoch it read: no failover at a new epoch, so a
    complete search reports the witness unreached (a violation)."""
    r = _run([*ONE_BROKER, "mutant=no-epoch-bump"])
    missing = {v.property: v.message for v in r.violations}
    assert "no reachable state is a witness" in missing["second_controller_failover"]


@pytest.mark.slow
def test_controller_two_changes_golden() -> None:
    """configs/controller-two-changes.toml: every property holds, both failover witnesses are
    reached (10 steps to epoch 3, more to a completed second failover)."""
    r = _run([], ROOT / "configs" / "controller-two-changes.toml")
    assert r.violations == []
    assert r.distinct_states == 227_469
    assert {"failover", "second_controller_failover"} <= set(r.witnesses)
