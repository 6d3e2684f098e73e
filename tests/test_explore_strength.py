"""The restarted-broker finding of issue 58 (item 3), which the release's random walks rarely
reach, made exhaustive: ``controller-serve-before-registration`` (Kafka 0.8's startup, a broker
serving requests before it registers) finds ``broker_views_match_zookeeper`` at its pinned
length, and ``controller-serve-after-registration`` (Kafka 2.x's, the default) holds in the same
configuration. ``benchmarks/explore_strength.py`` measures how often the walks find it, and
how often they find a planted mutant; the release's own exploration, with its configured seed,
must find that mutant."""

from __future__ import annotations

from pathlib import Path

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.core import CheckResult
from explorer.engines.bfs import check_bfs
from explorer.engines.simulate import check_simulate
from explorer.suite import SuiteEntry, load_suite
from invariants.mutants.controller import ControllerConfig, build

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "configs" / "release.toml"
BEFORE = "controller-serve-before-registration"
AFTER = "controller-serve-after-registration"


def _entries() -> dict[str, SuiteEntry]:
    return {e.name: e for e in load_suite(str(SUITE))}


def _run(e: SuiteEntry) -> CheckResult:
    """The entry's serial bfs run, every property checked (to the end, as the release does for
    an entry that expects violations)."""
    c = load_config(ControllerConfig, str(SUITE.parent / e.config) if e.config else None, list(e.set))
    return check_bfs(build(c), spec.properties(c), model="controller", config=c, keep_going=True)


def test_the_two_entries_differ_only_in_serve_before_registration() -> None:
    """The violation entry is the hold entry plus ``serve_before_registration=true``, with the
    shortest counterexample pinned, both exhaustive."""
    entries = _entries()
    before, after = entries[BEFORE], entries[AFTER]
    assert [*after.set, "serve_before_registration=true"] == list(before.set)
    assert (before.engine, after.engine) == ("bfs", "bfs")
    assert (before.expect, after.expect) == ("violation", "hold")
    assert list(before.violates) == ["broker_views_match_zookeeper"]
    assert before.violates_at == {"broker_views_match_zookeeper": 27}


@pytest.mark.slow
def test_a_broker_serving_before_it_registers_keeps_a_stopped_replica() -> None:
    """Topic 0 created after start, broker 1's controlled shutdown and crash before the controller
    acts: the restarted process applies the old incarnation's LeaderAndIsr and StopReplica, keeps
    leader -1 at the current leader epoch, and drops the later LeaderAndIsr as stale (27 steps,
    252,720 states; about 15 s)."""
    r = _run(_entries()[BEFORE])
    assert (r.exit_reason.value, r.distinct_states) == ("violation", 252720)
    assert sorted((v.property, v.length) for v in r.violations) == [("broker_views_match_zookeeper", 27)]
    (v,) = r.violations
    actions = [str(s.action) for s in v.trace]
    restart = next(i for i, a in enumerate(actions) if a.startswith("broker 1: restarts"))
    registered = next(i for i, a in enumerate(actions) if "create /brokers/ids" in a)
    applied = [i for i, a in enumerate(actions) if a.startswith("broker 1: receives")]
    # the old incarnation's LeaderAndIsr and StopReplica applied between restart and registration
    assert [actions[i].split(" from ")[0] for i in applied if restart < i < registered] == [
        "broker 1: receives LeaderAndIsr",
        "broker 1: receives StopReplica(delete=false)",
    ]


@pytest.mark.slow
def test_a_broker_serving_only_once_registered_holds() -> None:
    """Kafka 2.x's startup (the default): the same configuration holds every property and
    reaches every witness (196,412 states; about 12 s)."""
    r = _run(_entries()[AFTER])
    assert (r.exit_reason.value, r.violations, r.distinct_states) == ("complete", [], 196412)
    assert {"failover", "topic_created_online", "controlled_shutdown_done"} <= set(r.witnesses)


@pytest.mark.slow
def test_the_release_exploration_finds_a_planted_mutant() -> None:
    """``controller-explore`` with its own configuration, seed and budget (every property
    checked, stopping at the first violation, as the release runs it) finds the planted mutant
    ``controlled-shutdown-ignores-broker-epoch`` (a ControlledShutdownRequest of a broker's
    previous incarnation acted on), which no exhaustive entry reaches: 10 of 10 seeds found it
    within 900 walks at depth 250 (docs/figures.md, 2026-11-29); seed 0 does at walk 146 (about 8 s)."""
    e = _entries()["controller-explore"]
    assert (e.engine, e.expect) == ("simulate", "explore")
    path = str(SUITE.parent / e.config) if e.config else None
    clean = load_config(ControllerConfig, path, list(e.set))
    c = load_config(ControllerConfig, path, [*e.set, "mutant=controlled-shutdown-ignores-broker-epoch"])
    r = check_simulate(build(c), spec.properties(clean), model="controller", config=c, **e.explore)
    assert r.exit_reason.value == "violation"
    assert [v.property for v in r.violations] == ["broker_views_match_zookeeper"]
