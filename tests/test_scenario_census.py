"""The scenario census (``benchmarks/scenario_census.py``): the release entries reach issue 35's
item-3 scenarios, and the census names a scenario that no entry it ran reaches."""

from __future__ import annotations

import pytest

from benchmarks.scenario_census import main


def test_the_small_entries_reach_each_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    """A partition created with a replica down (controller-topic-creation), a refused election
    write (both) and a failover while a partition has no live replica (the rf=1 entry)."""
    assert main(["--entries", "controller-topic-creation,controller-symmetric-partitions"]) == 0
    out = capsys.readouterr().out
    creation, partitions, last = out.splitlines()
    assert creation.startswith("controller-topic-creation") and "554" in creation
    assert "create_with_replica_down 11" in creation and "election_write_version_conflict 7" in creation
    assert "failover_with_partition_without_live_replica 6" in partitions
    assert last == "reached by no entry: none"


def test_a_scenario_no_entry_reaches_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    """controller-small (one topic, two brokers, both replicas) creates no partition and never
    fails over with a partition down."""
    assert main(["--entries", "controller-small"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == (
        "reached by no entry: create_with_replica_down, failover_with_partition_without_live_replica"
    )
