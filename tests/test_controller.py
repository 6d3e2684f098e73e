"""Tests of the controller model (model/controller/, invariants/controller.py)."""

from __future__ import annotations

import pytest

import invariants.controller as spec
from explorer.config import ConfigError, load_config
from explorer.engines.bfs import check_bfs
from invariants.mutants.controller import ControllerConfig  # with the test-only mutant key
from model.controller import ControllerSystem
from model.controller.actions import Deliver
from model.controller.messages import LeaderAndIsrPartitionState, LeaderAndIsrRequest

SMALL = "configs/controller-small.toml"
REF = "configs/controller-ref.toml"
TWO = [
    "brokers=2",
    "replication_factor=2",
    "max_crashes=1",
    "max_restarts=1",
    "max_session_expiries=1",
]

SMALL_STATES = 74


def run(path: str | None, overrides: list[str], only: str | None = None, keep_going: bool = False):
    c = load_config(ControllerConfig, path, overrides)
    props = spec.properties(c)
    if only is not None:
        props = [p for p in props if p.name == only]
    return check_bfs(spec.build(c), props, model="controller", config=c, keep_going=keep_going)


def test_small_golden() -> None:
    r = run(SMALL, [], keep_going=True)
    assert r.exit_reason.value == "complete"
    assert r.violations == []
    assert r.distinct_states == SMALL_STATES
    assert "failover" in r.witnesses


def test_records_entry_golden() -> None:
    """The release entry controller-records (controller-small with one record, unclean election
    off): 2,048 states, every property held, the record acknowledged and still in the log."""
    r = run(SMALL, ["max_records=1"])
    assert r.exit_reason.value == "complete"
    assert r.violations == []
    assert r.distinct_states == 2048
    assert {"failover", "acked_record"} <= set(r.witnesses)


def test_settled_initial_state() -> None:
    sys = ControllerSystem(ControllerConfig(brokers=3, replication_factor=2))
    s = sys.init_states()[0]
    assert s.zk.controller is not None and s.zk.controller[0] == 0
    assert s.zk.epoch == 1 and s.zk.epoch_version == 1
    assert s.zk.parts[0].leader == 0 and s.zk.parts[0].isr == (0, 1)
    assert all(n.pending is None and not n.events for n in s.nodes)
    assert all(n.active_id == 0 for n in s.nodes)
    assert s.nodes[1].reps[0].leader == 0 and s.nodes[1].reps[0].epoch == 0


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["replication_factor=4"], "replication_factor"),
        (["assignment=[[0, 0]]"], "assignment"),
        (["assignment=[[0, 7]]"], "assignment"),
        (["unclean_topics=[3]"], "unclean_topics"),
        (["elector=nope"], "elector"),
        (["mutant=bogus"], "mutant"),
        (["brokers=0"], "brokers"),
    ],
)
def test_config_errors(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(ControllerConfig, None, overrides)


# Each variant brings back an older design and breaks the named property; the shortest
# counterexample length is pinned.
VARIANTS = [
    (
        "zk_writes_fenced",
        [*TWO, "zk_write_fencing=partition-version", "session_expiry_handling=queued"],
        13,
    ),
    ("brokers_reject_stale_broker_epoch", [*TWO, "broker_epoch=false"], 9),
    ("no_acked_record_lost", [*TWO, "unclean_leader_election=true", "max_records=1"], 13),
    ("controller_znode_valid", [*TWO, "session_expiry_handling=queued"], 10),
]


@pytest.mark.slow  # 2.2 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("prop, overrides, length", VARIANTS)
def test_variant_breaks_property(prop: str, overrides: list[str], length: int) -> None:
    r = run(None, overrides, only=prop)
    assert [(v.property, v.length) for v in r.violations] == [(prop, length)]


@pytest.mark.slow
@pytest.mark.parametrize(
    "overrides",
    [
        TWO,
        # the release entry controller-queued-expiry's bounds: 1,051,835 states, about 45 CPU-s
        pytest.param(
            [*TWO, "session_expiry_handling=queued", "zk_write_fencing=controller-epoch"],
            marks=pytest.mark.heavy,
            id="queued",
        ),
    ],
)
def test_fixed_design_holds_fencing(overrides: list[str]) -> None:
    r = run(None, overrides, only="zk_writes_fenced")
    assert r.exit_reason.value == "complete" and r.violations == []


@pytest.mark.slow
def test_legacy_elector_deposes_controller() -> None:
    r = run(None, [*TWO, "elector=legacy"], only="controller_znode_removed_by_owner")
    assert [(v.property, v.length) for v in r.violations] == [("controller_znode_removed_by_owner", 18)]
    r = run(None, [*TWO, "elector=legacy"], only="controller_znode_valid")
    assert [(v.property, v.length) for v in r.violations] == [("controller_znode_valid", 15)]


@pytest.mark.slow
def test_high_watermark_truncation_loses_acked_record() -> None:
    ov = [
        "brokers=3",
        "replication_factor=3",
        "max_crashes=2",
        "max_restarts=0",
        "max_session_expiries=0",
        "max_records=1",
        "send_update_metadata=false",
        "follower_truncation=high-watermark",
    ]
    r = run(None, ov, only="no_acked_record_lost")
    assert [(v.property, v.length) for v in r.violations] == [("no_acked_record_lost", 20)]


MUTANTS = [
    ("no-epoch-bump", "one_controller_per_epoch"),
    ("no-epoch-bump", "controller_epoch_won_once"),
    ("epoch-reset", "controller_epoch_monotonic"),
    ("no-leader-epoch-bump", "leader_epoch_monotonic"),
    ("skip-replica-init", "valid_transitions"),
    ("failover-keeps-old-epoch", "controller_znode_valid"),
]


@pytest.mark.slow  # 2.7 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("mutant, prop", MUTANTS)
def test_mutant_breaks_property(mutant: str, prop: str) -> None:
    r = run(SMALL, [f"mutant={mutant}", "max_session_expiries=1"], only=prop)
    assert [v.property for v in r.violations] == [prop]
    r0 = run(SMALL, ["max_session_expiries=1"], only=prop)
    assert r0.violations == []


def test_mutant_leader_outside_isr() -> None:
    ov = ["mutant=leader-outside-isr", "max_session_expiries=1", "session_expiry_handling=queued"]
    r = run(SMALL, ov, only="leader_in_isr")
    assert [(v.property, v.length) for v in r.violations] == [("leader_in_isr", 5)]


def _stale_delivery(mutant: str):
    c = ControllerConfig(brokers=2, mutant=mutant)
    sys = spec.build(c)
    s = sys.init_states()[0]
    n1 = s.nodes[1]._replace(seen_epoch=5)
    msg = LeaderAndIsrRequest(1, n1.bepoch, (LeaderAndIsrPartitionState(0, 1, 7, (0, 1), 3),))
    chans = (*s.chans[:1], (msg,), *s.chans[2:])  # channel 0 -> 1
    s = s._replace(nodes=(s.nodes[0], n1), chans=chans)
    for a, t in sys.successors(s):
        if isinstance(a, Deliver):
            return s, a, t
    raise AssertionError("no delivery")


def test_stale_controller_epoch_crafted() -> None:
    s, a, t = _stale_delivery("none")
    assert spec.brokers_reject_stale_controller_epoch(s, a, t)
    assert t.nodes[1] == s.nodes[1]
    s, a, t = _stale_delivery("no-controller-epoch-check")
    assert not spec.brokers_reject_stale_controller_epoch(s, a, t)
    assert t.nodes[1].reps[0].leader == 1


def test_one_leader_per_epoch_crafted() -> None:
    sys = ControllerSystem(ControllerConfig(brokers=2))
    s = sys.init_states()[0]
    r = s.nodes[1].reps[0]._replace(leader=1, epoch=s.nodes[0].reps[0].epoch)
    bad = s._replace(nodes=(s.nodes[0], s.nodes[1]._replace(reps=(r,))))
    assert spec.one_leader_per_epoch(s) and not spec.one_leader_per_epoch(bad)


def test_isr_nonempty_subset_crafted() -> None:
    sys = ControllerSystem(ControllerConfig(brokers=3))
    check = spec.isr_valid(sys)
    s = sys.init_states()[0]
    z = s.zk.parts[0]
    assert check(s)
    assert not check(s._replace(zk=s.zk._replace(parts=(z._replace(isr=()),))))
    assert not check(s._replace(zk=s.zk._replace(parts=(z._replace(isr=(0, 2)),))))


def test_cold_start_elects_one_controller() -> None:
    r = run(None, ["brokers=2", "start=cold", "max_crashes=0", "max_restarts=0", "max_session_expiries=0"])
    assert r.exit_reason.value == "complete" and r.violations == []


def test_action_strings() -> None:
    sys = ControllerSystem(ControllerConfig(brokers=2))
    s = sys.init_states()[0]
    texts = [str(a) for a, _ in sys.successors(s)]
    assert "broker 0: crashes" in texts
    assert any("ZooKeeper session 1 expires (server side)" in x for x in texts)


@pytest.mark.slow
@pytest.mark.heavy
def test_ref_golden() -> None:
    """controller-ref explored completely (about 8 minutes): every property holds and
    every witness of the configuration is reached."""
    r = run(REF, [], keep_going=True)
    assert r.exit_reason.value == "complete"
    assert r.violations == []
    assert r.distinct_states == REF_STATES
    assert r.max_depth == 51
    assert set(r.witnesses) == {
        "failover",
        "expiry_with_write_in_flight",
        "partition_offline_and_back",
        "acked_record",
    }


REF_STATES = 5_049_748  # 6,525,279 before 273d784's three fidelity fixes
