"""The convergence properties (invariants/controller_convergence.py): what epoch fencing
hides. Each holds on the small configurations and is shown able to fail by a named mutant
(invariants/mutants/controller.py) or by the older design that has the bug."""

from __future__ import annotations

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from invariants.controller_convergence import quiet, serving
from invariants.mutants.controller import ControllerConfig

SMALL = "configs/controller-small.toml"
TWO = ["brokers=2", "replication_factor=2", "max_crashes=1", "max_restarts=1", "max_session_expiries=1"]
CONVERGENCE = (
    "controller_converges",
    "broker_views_match_zookeeper",
    "context_matches_zookeeper",
    "replica_states_match_liveness",
    "no_leaderless_partition_when_quiet",
    "no_dead_broker_in_written_isr",
)


def run(path: str | None, overrides: list[str], only: str | None = None):
    c = load_config(ControllerConfig, path, overrides)
    props = [p for p in spec.properties(c) if only is None or p.name == only]
    return check_bfs(spec.build(c), props, model="controller", config=c, keep_going=only is None)


def test_quiet_reads_every_queue() -> None:
    s = spec.build(ControllerConfig(brokers=2)).init_states()[0]
    assert quiet(s) and serving(s)
    n0, n1 = s.nodes
    assert not quiet(s._replace(nodes=(n0._replace(events=((3, -1),)), n1)))
    assert not quiet(s._replace(nodes=(n0._replace(zk_out=((10,),)), n1)))
    assert not quiet(s._replace(nodes=(n0, n1._replace(expired=True))))
    # a dead broker whose session the server still holds: its expiry is still to come
    assert not quiet(s._replace(nodes=(n0, n1._replace(alive=False))))
    assert quiet(s._replace(nodes=(n0, n1._replace(alive=False, expired=True))))
    assert not serving(
        s._replace(nodes=(n0._replace(alive=False, expired=True), n1._replace(alive=False, expired=True)))
    )


@pytest.mark.parametrize("overrides", [[], ["max_session_expiries=1"], TWO])
def test_convergence_holds(overrides: list[str]) -> None:
    path = None if overrides is TWO else SMALL
    r = run(path, overrides)
    assert r.exit_reason.value == "complete"
    assert r.violations == []
    names = {p.name for p in spec.properties(load_config(ControllerConfig, path, overrides))}
    assert set(CONVERGENCE) <= names


@pytest.mark.parametrize(
    "path, overrides, prop, length",
    [
        (
            SMALL,
            ["max_session_expiries=1", "mutant=offline-election-keeps-dead-isr"],
            "no_dead_broker_in_written_isr",
            7,
        ),
        (SMALL, ["mutant=failover-dead-leader-online"], "no_leaderless_partition_when_quiet", 8),
        (SMALL, ["mutant=no-offline-replicas-on-broker-failure"], "replica_states_match_liveness", 5),
        (None, [*TWO, "mutant=bounce-off-by-one"], "broker_views_match_zookeeper", 8),
        (None, [*TWO, "mutant=bounce-off-by-one"], "context_matches_zookeeper", 7),
        # the older client (before KAFKA-7235's clear-and-put Expire): a registration retried in
        # the new session leaves /controller owned by a broker that has resigned; no controller
        (SMALL, ["max_session_expiries=1", "session_expiry_handling=queued"], "controller_converges", 13),
    ],
)
def test_each_convergence_property_can_fail(
    path: str | None, overrides: list[str], prop: str, length: int
) -> None:
    r = run(path, overrides, only=prop)
    assert [(v.property, v.length) for v in r.violations] == [(prop, length)]
    fixed = [o for o in overrides if not o.startswith("mutant=") and o != "session_expiry_handling=queued"]
    assert run(path, fixed, only=prop).violations == []


def test_fence_compared_with_less_than_lets_a_stale_write_land() -> None:
    """``<`` instead of ``!=`` on the epoch's zkVersion: a stale controller's write retried in its
    new session (the older client) lands, which zk_writes_fenced sees."""
    ov = [*TWO, "session_expiry_handling=queued"]
    r = run(None, [*ov, "mutant=fence-less-than"], only="zk_writes_fenced")
    assert [v.property for v in r.violations] == ["zk_writes_fenced"]
    assert run(None, ov, only="zk_writes_fenced").violations == []
