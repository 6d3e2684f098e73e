"""The convergence properties (invariants/controller_convergence.py): what epoch fencing
hides. Each holds on the small configurations and is shown able to fail by a named mutant
(invariants/mutants/controller.py) or by the older design that has the bug."""

from __future__ import annotations

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.core import PropertyKind, TraceStep
from explorer.encoding import fingerprint
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
    "metadata_cache_matches_zookeeper",
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


#: TWO without the live broker's session expiry: the bounce mutants' bounds in the default run
#: (3,481 states where TWO has 443,880)
TWO_NO_EXPIRY = [*TWO, "max_session_expiries=0"]


@pytest.mark.parametrize(
    "overrides",
    [[], ["max_session_expiries=1"], pytest.param(TWO, marks=pytest.mark.slow, id="two")],
)
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
        (None, [*TWO_NO_EXPIRY, "mutant=bounce-off-by-one"], "broker_views_match_zookeeper", 8),
        (None, [*TWO_NO_EXPIRY, "mutant=bounce-off-by-one"], "context_matches_zookeeper", 8),
        # the same on TWO, whose fixed search has 443,880 states (about 13 CPU seconds each)
        pytest.param(
            None,
            [*TWO, "mutant=bounce-off-by-one"],
            "broker_views_match_zookeeper",
            8,
            marks=pytest.mark.slow,
        ),
        pytest.param(
            None, [*TWO, "mutant=bounce-off-by-one"], "context_matches_zookeeper", 7, marks=pytest.mark.slow
        ),
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


FENCE_LESS_THAN = [*TWO, "session_expiry_handling=queued", "mutant=fence-less-than"]


def holds_on_the_same_steps(path: str | None, overrides: list[str], prop: str, trace: list[TraceStep]) -> int:
    """How many of a mutant's counterexample steps the model of ``overrides`` (no mutant) takes,
    step by step, keeping ``prop`` on every state or step: it stops where a step is not
    enabled without the mutant (the mutant's path is not the model's) and never ends where the
    mutant's did. The cheap half of "the mutant breaks it, the model does not"; the whole
    search of the bounds without the mutant is a heavy test."""
    c = load_config(ControllerConfig, path, overrides)
    system = spec.build(c)
    (p,) = [p for p in spec.properties(c) if p.name == prop]
    (s,) = [s for s in system.init_states() if f"{fingerprint(s):016x}" == trace[0].fingerprint]
    for taken, step in enumerate(trace[1:]):
        nexts = [(a, t) for a, t in system.successors(s) if str(a) == step.action]
        if not nexts:
            return taken
        ((a, t),) = nexts
        assert p.check(s, a, t) if p.kind is PropertyKind.TRANSITION else p.check(t), step.action
        s = t
    assert f"{fingerprint(s):016x}" != trace[-1].fingerprint
    return len(trace) - 1


def test_fence_compared_with_less_than_lets_a_stale_write_land() -> None:
    """``<`` instead of ``!=`` on the epoch's zkVersion: a stale controller's write retried in its
    new session (the older client) lands, which zk_writes_fenced sees (13 steps). The same steps
    taken by the model without the mutant keep every write fenced: the last one, the stale
    write, is rejected. The whole search of these bounds without the mutant (1,051,835 states)
    is ``test_controller.py::test_fixed_design_holds_fencing``, a heavy test."""
    r = run(None, FENCE_LESS_THAN, only="zk_writes_fenced")
    assert [(v.property, v.length) for v in r.violations] == [("zk_writes_fenced", 13)]
    assert (
        holds_on_the_same_steps(None, FENCE_LESS_THAN[:-1], "zk_writes_fenced", r.violations[0].trace) == 13
    )


# -- what a deposed controller does (fencing makes it harmless; no quiet state shows it) ---------

QUEUED_TWO = [*TWO, "session_expiry_handling=queued"]
"""The release entry ``controller-queued-expiry``: a stale controller's requests are retried in
its new session, so it reads, writes and resigns after a newer controller took over."""


def test_resigned_controller_sends_nothing_can_fail() -> None:
    """A resignation that leaves the channels open: the queued LeaderAndIsr still goes out."""
    ov = ["max_session_expiries=1"]
    r = run(SMALL, [*ov, "mutant=resign-keeps-channels"], only="resigned_controller_sends_nothing")
    assert [(v.property, v.length) for v in r.violations] == [("resigned_controller_sends_nothing", 8)]
    assert run(SMALL, ov, only="resigned_controller_sends_nothing").violations == []


def test_no_write_over_newer_controller_state_crafted() -> None:
    """A controller at epoch 1 sends a write conditioned on the state znode's current version,
    which a controller at epoch 2 wrote: the property fails; at epoch 2 (or on an older version,
    which the server will reject anyway) it holds."""
    from invariants.controller_convergence import no_write_over_newer_controller_state as prop
    from model.controller.messages import S_OFFLINE, UpdateLeaderAndIsr

    s = spec.build(ControllerConfig(brokers=2)).init_states()[0]
    z = s.zk.parts[0]._replace(ctl_epoch=2)
    s = s._replace(zk=s.zk._replace(parts=(z,)))

    def sent(ctl_epoch: int, version: int):
        req = UpdateLeaderAndIsr(((0, z._replace(version=version)),), 1, ctl_epoch, False, S_OFFLINE)
        n = s.nodes[0]
        return s._replace(nodes=(n._replace(zk_out=(*n.zk_out, req)), s.nodes[1]))

    assert not prop(sent(1, z.version))
    assert prop(sent(2, z.version))
    assert prop(sent(1, z.version - 1))
    assert prop(s)


def test_context_only_while_active_is_not_checked_for_the_08_elector() -> None:
    names = {p.name for p in spec.properties(ControllerConfig(brokers=2, elector="legacy"))}
    assert "context_only_while_active" not in names
    assert "context_only_while_active" in {p.name for p in spec.properties(ControllerConfig(brokers=2))}


DEPOSED = [
    ("ignores-newer-controller-state", "no_write_over_newer_controller_state", 15, 15),
    ("no-resign-on-controller-moved", "context_only_while_active", 14, 14),
    ("resign-keeps-channels", "resigned_controller_sends_nothing", 9, 8),
]


@pytest.mark.slow  # 2.3 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("mutant, prop, length, followed", DEPOSED)
def test_deposed_controller_properties_fail_on_queued_expiry(
    mutant: str, prop: str, length: int, followed: int
) -> None:
    """The fencing-hidden mutants, killed on the ``controller-queued-expiry`` entry's bounds;
    the model without the mutant takes the same steps keeping the property, or (a resigned
    controller's channels closed) cannot take the last one (the whole search without the
    mutants is the heavy test below)."""
    r = run(None, [*QUEUED_TWO, f"mutant={mutant}"], only=prop)
    assert [(v.property, v.length) for v in r.violations] == [(prop, length)]
    assert holds_on_the_same_steps(None, QUEUED_TWO, prop, r.violations[0].trace) == followed


@pytest.mark.slow
@pytest.mark.heavy
def test_deposed_controller_properties_hold_on_queued_expiry() -> None:
    """The bounds above searched in full without a mutant (1,306,955 states, about 45 CPU
    seconds; the release entry ``controller-queued-expiry`` checks them with every property)."""
    props = {p for _, p, _, _ in DEPOSED}
    c = load_config(ControllerConfig, None, QUEUED_TWO)
    r = check_bfs(
        spec.build(c), [p for p in spec.properties(c) if p.name in props], config=c, keep_going=True
    )
    assert r.exit_reason.value == "complete" and r.violations == []
    assert {n for n, v in r.properties.items() if v["status"] == "held"} >= props


# -- the brokers' metadata caches and the ISR in the context -------------------------------------

METADATA = ["brokers=3", "topics=2", "assignment=[[0, 1], [1]]"]
"""The release entry ``controller-metadata`` without its restart: broker 2 holds no replica and
topic 1 lives on broker 1 alone, so only the UpdateMetadata of onBrokerFailure / onBrokerStartup
tell the brokers about broker 2 and about the partitions they do not host."""


@pytest.mark.parametrize(
    "mutant, length",
    [("no-um-on-broker-failure", 4), ("no-um-on-broker-startup", 0)],
)
def test_metadata_cache_matches_zookeeper_can_fail(mutant: str, length: int) -> None:
    """Without onBrokerFailure's UpdateMetadata the brokers keep a dead broker alive in their
    caches; without onBrokerStartup's, a broker with no replica never learns the metadata (the
    settled start already shows it: length 0)."""
    prop = "metadata_cache_matches_zookeeper"
    r = run(SMALL, [*METADATA, f"mutant={mutant}"], only=prop)
    assert [(v.property, v.length) for v in r.violations] == [(prop, length)]
    r = run(SMALL, METADATA)
    assert r.exit_reason.value == "complete" and r.violations == []


def test_metadata_cache_filled_by_update_metadata() -> None:
    """Every live broker's cache holds the settled cluster; a crash empties it; without
    UpdateMetadata the property is not checked and the caches stay empty."""
    from invariants.controller_convergence import metadata_cache_matches_zookeeper

    sys_ = spec.build(load_config(ControllerConfig, SMALL, METADATA))
    s = sys_.init_states()[0]
    check = metadata_cache_matches_zookeeper(sys_)
    assert check(s)
    assert all(n.mc_live == (0, 1, 2) for n in s.nodes)
    assert all(n.mc_parts == ((0, 0, (0, 1)), (1, 0, (1,))) for n in s.nodes)
    stale = s.nodes[2]._replace(mc_parts=((0, 0, (0, 1)), None))
    assert not check(s._replace(nodes=(*s.nodes[:2], stale)))
    _, t = sys_.brokers.crash(s, 2)
    assert t.nodes[2].mc_live == () and t.nodes[2].mc_parts == ()
    off = load_config(ControllerConfig, SMALL, ["send_update_metadata=false"])
    assert "metadata_cache_matches_zookeeper" not in {p.name for p in spec.properties(off)}
    assert all(n.mc_parts == () for n in spec.build(off).init_states()[0].nodes)


def test_isr_change_keeps_cached_state_is_seen_by_the_context() -> None:
    """The context's ISR and zkVersion are compared with ZooKeeper's: a controller that does not
    take the states its IsrChangeNotification read keeps a stale ISR (the settled start already
    has a leader's ISR expansion)."""
    prop = "context_matches_zookeeper"
    r = run(SMALL, ["mutant=isr-change-keeps-cached-state"], only=prop)
    assert [(v.property, v.length) for v in r.violations] == [(prop, 0)]


def test_isr_change_notifications_are_sequential() -> None:
    """One /isr_change_notification child per ISR change, named by the zkVersion it wrote; the
    controller deletes only the children it read, so a change landing after its read survives
    (one entry per partition lost it)."""
    from model.controller.messages import DeleteIsrChangeNotifications

    sys_ = spec.build(ControllerConfig(brokers=2))
    s = sys_.init_states()[0]
    n0 = s.nodes[0]
    delete = DeleteIsrChangeNotifications(((0, 1),), n0.ctx.epoch_version, n0.ctx.epoch)
    s = s._replace(
        zk=s.zk._replace(isr_changes=((0, 1), (0, 2))),
        nodes=(n0._replace(zk_out=(delete,)), s.nodes[1]),
    )
    _, t = sys_.zookeeper.serve(s, 0)
    assert t.zk.isr_changes == ((0, 2),)


@pytest.mark.slow  # 5.5 CPU-s in a loaded default run (2026-11-29)
def test_unclean_enable_without_an_election_leaves_a_partition_leaderless(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``no_leaderless_partition_when_quiet`` counts a live assigned replica once the topic allows
    unclean election: it fails when ``TopicUncleanLeaderElectionEnable`` triggers no
    ``triggerOnlinePartitionStateChange(topic)`` (the fresh measure's survivor ``admin.py:100``,
    its handler dropped), and holds on the same configuration as written."""
    from model.controller.admin import AdminWorkflows
    from model.controller.events import TopicUncleanLeaderElectionEnable

    # two crashes and a restart: the follower dies (the ISR shrinks to the leader), comes back
    # outside the ISR, the leader dies: only an unclean election gives the partition a leader
    path, only = SMALL, "no_leaderless_partition_when_quiet"
    keys = ["max_unclean_enables=1", "max_crashes=2", "max_restarts=1"]
    assert not run(path, keys, only).violations
    real = AdminWorkflows.admin_event

    def forgets_the_topic(self: AdminWorkflows, c: object, ev: object) -> None:
        if type(ev) is not TopicUncleanLeaderElectionEnable:
            real(self, c, ev)  # type: ignore[arg-type]

    monkeypatch.setattr(AdminWorkflows, "admin_event", forgets_the_topic)
    bad = run(path, keys, only)
    assert [(v.property, v.length) for v in bad.violations] == [(only, 17)]
    assert any(st.action_kind == "AdminEnableUnclean" for st in bad.violations[0].trace)
