"""``kafka_version = "0.8"``: seed 000's controller as a whole (model/controller/v08.py).

The key and what it implies, the 0.8 failover stepped request by request against seed 000's
``onControllerFailover``, a trace on which 0.8 and 2.x send different requests, the release
configuration's violations (each a known 0.8 weakness), and the report naming the variant."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import invariants.controller as spec
from explorer.cli import main
from explorer.config import ConfigError, describe_keys, load_config
from explorer.engines.bfs import check_bfs
from invariants.controller_convergence import broker_views_match_zookeeper, serving
from invariants.mutants.controller import ControllerConfig, build
from model.controller import Elector, KafkaVersion, State
from model.controller.actions import FAULT_KINDS, Crash, Deliver, SessionExpire, ZkServe
from model.controller.config import FollowerTruncation, LeaderSelectors, ReplicaTable, ZkWriteFencing
from model.controller.controller import KafkaController
from model.controller.events import IsrChangeNotification, TopicUncleanLeaderElectionEnable
from model.controller.messages import (
    REQUEST_NAMES,
    S_PREFERRED,
)
from model.controller.program import (
    ElectLeaderForPartitions,
    OnPartitionReassignment,
    RemovePartitionsFromPreferredReplicaElection,
    ResumeDeletions,
    SendUpdateMetadataRequest,
    TriggerOnlinePartitionStateChange,
)
from model.controller.state import PartZ
from model.controller.v08 import KafkaController08

ROOT = Path(__file__).resolve().parents[1]
CONFIG_08 = str(ROOT / "configs" / "controller-0.8.toml")

# -- the key -----------------------------------------------------------------------------------

IMPLIED_0_8 = {
    "elector": Elector.LEGACY,
    "leader_selectors": LeaderSelectors.KAFKA_0_8,
    "replica_table": ReplicaTable.PRINTED,
    "zk_write_fencing": ZkWriteFencing.PARTITION_VERSION,
    "broker_epoch": False,
    "follower_truncation": FollowerTruncation.HIGH_WATERMARK,
    "session_expiry_handling": "queued",
    "serve_before_registration": True,
}
CONTRADICTIONS = [
    ("elector", "modern"),
    ("leader_selectors", "2.x"),
    ("replica_table", "later-2.x"),
    ("zk_write_fencing", "controller-epoch"),
    ("broker_epoch", "true"),
    ("follower_truncation", "leader-epoch"),
    ("session_expiry_handling", "clear-and-put"),
    ("serve_before_registration", "false"),
]


def test_default_is_2x_with_the_2x_choices() -> None:
    c = ControllerConfig()
    assert c.kafka_version is KafkaVersion.KAFKA_2_X
    assert (c.elector, c.leader_selectors, c.replica_table) == (
        Elector.MODERN,
        LeaderSelectors.KAFKA_2_X,
        ReplicaTable.LATER_2X,
    )
    assert c.zk_write_fencing is ZkWriteFencing.CONTROLLER_EPOCH and c.broker_epoch is True
    assert type(build(c).kafka_controller) is KafkaController


@pytest.mark.parametrize("how", ["--set", "toml", "python"])
def test_0_8_implies_every_finer_key(how: str, tmp_path: Path) -> None:
    if how == "--set":
        c = load_config(ControllerConfig, None, ["kafka_version=0.8"])  # a TOML number, read as text
    elif how == "toml":
        f = tmp_path / "c.toml"
        f.write_text('kafka_version = "0.8"\n')
        c = load_config(ControllerConfig, f)
    else:
        c = ControllerConfig(kafka_version="0.8")
    assert c.kafka_version is KafkaVersion.KAFKA_0_8
    for name, value in IMPLIED_0_8.items():
        assert getattr(c, name) == value, name
    assert type(build(c).kafka_controller) is KafkaController08


def test_0_8_accepts_the_same_choices_and_2x_leaves_keys_free() -> None:
    same = [f"{k}={v.value if hasattr(v, 'value') else str(v).lower()}" for k, v in IMPLIED_0_8.items()]
    assert load_config(ControllerConfig, None, ["kafka_version=0.8", *same]).elector is Elector.LEGACY
    c = load_config(ControllerConfig, None, ["kafka_version=2.x", "elector=legacy", "leader_selectors=0.8"])
    assert c.elector is Elector.LEGACY and c.replica_table is ReplicaTable.LATER_2X
    assert type(build(c).kafka_controller) is KafkaController  # the finer keys alone: the 2.x handlers


@pytest.mark.parametrize("name, value", CONTRADICTIONS)
def test_0_8_rejects_a_contradicting_key(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=f"^{name}: .* contradicts kafka_version = 0.8"):
        load_config(ControllerConfig, None, ["kafka_version=0.8", f"{name}={value}"])


def test_0_8_rejects_what_0_8_lacks_and_bad_versions() -> None:
    with pytest.raises(ConfigError, match=r"^max_admin_unclean_elections: kafka_version 0\.8 has no"):
        ControllerConfig(kafka_version="0.8", max_admin_unclean_elections=1)
    with pytest.raises(ConfigError, match=r"^kafka_version: expected one of 2\.x, 0\.8, got '0\.9'"):
        load_config(ControllerConfig, None, ["kafka_version=0.9"])


def test_cli_contradiction_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code = main(
        ["check", "controller", "--set", "kafka_version=0.8", "--set", "elector=modern", "--json", str(out)]
    )
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err
    assert (
        lines[0] == "kafka-mc: error: elector: modern contradicts kafka_version = 0.8 (which implies legacy)"
    )
    assert not out.exists()


def test_models_table_shows_both_defaults() -> None:
    rows = {r[0]: r for r in describe_keys(ControllerConfig)}
    assert rows["elector"][2] == "modern (kafka_version 0.8: legacy)"
    assert rows["broker_epoch"][2] == "true (kafka_version 0.8: false)"
    assert rows["kafka_version"][1] == "one of 2.x, 0.8" and rows["kafka_version"][2] == "2.x"


def test_a_mutant_runs_over_the_0_8_controller() -> None:
    sys = build(ControllerConfig(brokers=2, kafka_version="0.8", mutant="no-epoch-bump"))
    mro = type(sys.kafka_controller).__mro__
    assert mro[1] is KafkaController08 and mro[2].__name__ == "NoEpochBump"


# -- stepping the 0.8 controller ----------------------------------------------------------------


def _apply(sys: Any, s: State, pick: Callable[[Any], bool]) -> State:
    """The successor of ``s`` by the first action ``pick`` accepts."""
    return next(t for a, t in sys.successors(s) if pick(a))


def _quiet(sys: Any, s: State) -> list[tuple[Any, State, State]]:
    """The fixed fault-free schedule (the first enabled action that is no fault, repeatedly)
    until quiet: the ``(action, before, after)`` steps."""
    steps = []
    for _ in range(1000):
        nxt = next(((a, t) for a, t in sys.successors(s) if not isinstance(a, FAULT_KINDS)), None)
        if nxt is None:
            return steps
        steps.append((nxt[0], s, nxt[1]))
        s = nxt[1]
    raise AssertionError("no quiet state")  # pragma: no cover


def _sent(sys: Any, steps: list[tuple[Any, State, State]], sender: int) -> list[tuple[str, int]]:
    """The controller requests ``sender`` enqueued, in order: (message kind, destination)."""
    out = []
    nb = sys.nb
    for a, s, t in steps:
        if isinstance(a, Deliver):
            continue  # a delivery only takes the head of a channel
        for d in range(nb):
            before, after = s.chans[sender * nb + d], t.chans[sender * nb + d]
            if after != before:
                out += [(m.kafka_name, d) for m in after[len(before) :]]
    return out


def _failover(version: str) -> tuple[Any, list[tuple[Any, State, State]]]:
    """Three brokers, one partition on all three, led by broker 0, which is the controller:
    broker 0 crashes and its session expires; broker 1 takes over."""
    sys = build(ControllerConfig(brokers=3, replication_factor=3, kafka_version=version))
    s = sys.init_states()[0]
    assert s.zk.controller[0] == 0 and s.zk.parts[0].leader == 0
    s = _apply(sys, s, lambda a: isinstance(a, Crash) and a.broker == 0)
    s = _apply(sys, s, lambda a: isinstance(a, SessionExpire) and a.broker == 0)
    return sys, _quiet(sys, s)


def test_0_8_failover_sends_what_seed_000_prints() -> None:
    """Seed 000: ``elect`` (111-153: getControllerID, createEphemeralPath) ->
    ``onControllerFailover`` (238-281): readControllerEpochFromZookeeper,
    incrementControllerEpoch, registerListeners + initializeControllerContext,
    replicaStateMachine.startup() (LeaderAndIsr to every live replica, 670-680, 893-914),
    partitionStateMachine.startup() (the offline partition elected by
    OfflinePartitionLeaderSelector: read, conditional write, 561-616, 969-1027), and only then
    UpdateMetadata. The 2.x failover (seed 004) sends UpdateMetadata first."""
    sys, steps = _failover("0.8")
    zk = [REQUEST_NAMES[a.req[0]] for a, _, _ in steps if isinstance(a, ZkServe) and a.broker == 1]
    assert zk == [
        "getData /controller and /controller_epoch",
        "create /controller (ephemeral)",
        "getData /controller_epoch",
        "setData /controller_epoch",
        "read context and register controller watches",
        "getData partition states",
        "write partition states",
    ]
    sent = _sent(sys, steps, 1)
    # replicaStateMachine.startup(): the current leader and ISR to the live replicas, first; then
    # the election's. Each batch's UpdateMetadata follows its LeaderAndIsr in every channel
    # (sendRequestsToBrokers sends leaderAndIsrRequestMap, then updateMetadataRequestMap).
    assert [m for m in sent if m[0] == "LeaderAndIsr"] == [("LeaderAndIsr", 1), ("LeaderAndIsr", 2)] * 2
    for d in (1, 2):
        assert next(name for name, to in sent if to == d) == "LeaderAndIsr"
    end = steps[-1][2]
    z = end.zk.parts[0]
    assert (end.zk.controller[0], end.zk.epoch, z.leader, z.leader_epoch, z.isr) == (1, 2, 1, 1, (1, 2))
    assert all(n.reps[0].leader == 1 for b, n in enumerate(end.nodes) if b)
    # 2.x: UpdateMetadata to the live brokers before the state machines start
    sys2, steps2 = _failover("2.x")
    sent2 = _sent(sys2, steps2, 1)
    assert sent2[0] == ("UpdateMetadata", 1) and sent2.index(("UpdateMetadata", 2)) < sent2.index(
        ("LeaderAndIsr", 2)
    )


def test_0_8_cold_start_creates_the_partition_state_unfenced() -> None:
    """A cold start (broker 1 not yet registered): seed 000's ``elect`` and
    ``onControllerFailover``, then NewPartition -> OnlinePartition by
    ``initializeLeaderAndIsrForPartition`` (502-548): the first live assigned replica leads,
    ISR = the live assigned replicas, ``createPersistentPath`` with no controller-epoch check
    (2.x conditions it on /controller_epoch's zkVersion, KAFKA-6082)."""
    writes = {}
    for version in ("0.8", "2.x"):
        sys = build(ControllerConfig(brokers=2, start="cold", kafka_version=version))
        steps = _quiet(sys, sys.init_states()[0])
        zk = [a.req for a, _, _ in steps if isinstance(a, ZkServe) and a.broker == 0]
        if version == "0.8":
            assert [REQUEST_NAMES[q[0]] for q in zk[1:7]] == [
                "getData /controller and /controller_epoch",
                "create /controller (ephemeral)",
                "getData /controller_epoch",
                "setData /controller_epoch",
                "read context and register controller watches",
                "write partition states",
            ]
        write = next(q for q in zk if REQUEST_NAMES[q[0]] == "write partition states")
        writes[version] = write
        first = "LeaderAndIsr" if version == "0.8" else "UpdateMetadata"  # 2.x: UM before the machines
        assert _sent(sys, steps, 0)[0] == (first, 0)
    _, parts, fence, _, create, _ = writes["0.8"]
    assert create and parts[0][0] == 0 and (parts[0][1].leader, parts[0][1].isr) == (0, (0,))
    assert fence == -1 and writes["2.x"][2] == 1


def test_0_8_failover_order_after_the_replica_state_machine() -> None:
    """Seed 000 238-281: partitionStateMachine.startup(), maybeTriggerPartitionReassignment,
    maybeTriggerPreferredReplicaElection, sendUpdateMetadataRequest, deleteTopicManager.start();
    2.x (seed 004) resumes deletions before the preferred election and sends no UpdateMetadata
    here (it did before the state machines started)."""
    admin = (
        OnPartitionReassignment(0, 0),
        ResumeDeletions(),
        ElectLeaderForPartitions(S_PREFERRED, (0,)),
        RemovePartitionsFromPreferredReplicaElection(),
    )

    def order(version: str, **kw: Any) -> list[type]:
        sys = build(ControllerConfig(brokers=2, max_preferred_elections=1, kafka_version=version, **kw))
        s = sys.init_states()[0]
        w = sys.controller_cls(sys, s, 0, s.nodes[0])
        return [type(op) for op in sys.kafka_controller.failover_after_replica_startup(w, admin)]

    assert order("0.8") == [
        TriggerOnlinePartitionStateChange,
        OnPartitionReassignment,
        ElectLeaderForPartitions,
        RemovePartitionsFromPreferredReplicaElection,
        SendUpdateMetadataRequest,
        ResumeDeletions,
    ]
    assert order("2.x") == [
        TriggerOnlinePartitionStateChange,
        OnPartitionReassignment,
        ResumeDeletions,
        ElectLeaderForPartitions,
        RemovePartitionsFromPreferredReplicaElection,
    ]
    assert order("2.x", elector="legacy") == [
        TriggerOnlinePartitionStateChange,
        SendUpdateMetadataRequest,
        *order("2.x")[1:],
    ]


def _follower_dies(version: str) -> tuple[list[str], list[tuple[str, int]], State]:
    """Three brokers, one partition on all three led by broker 0 (the controller); follower 2
    crashes and its session expires; the controller handles it (no UpdateMetadata modelled)."""
    sys = build(
        ControllerConfig(brokers=3, replication_factor=3, send_update_metadata=False, kafka_version=version)
    )
    s = sys.init_states()[0]
    s = _apply(sys, s, lambda a: isinstance(a, Crash) and a.broker == 2)
    s = _apply(sys, s, lambda a: isinstance(a, SessionExpire) and a.broker == 2)
    steps = _quiet(sys, s)
    return [str(a) for a, _, _ in steps], _sent(sys, steps, 0), steps[-1][2]


def test_0_8_and_2x_differ_on_the_same_trace() -> None:
    """The same steps (follower 2 dies; BrokerChange; onBrokerFailure; OfflineReplica removes it
    from the ISR): 2.x sends the shrunk ISR to every other replica (0 and 1), 0.8 to the leader
    only (seed 000 transition [4], 801-803), so follower 1 keeps the old leader epoch."""
    trace_2x, sent_2x, end_2x = _follower_dies("2.x")
    trace_08, sent_08, end_08 = _follower_dies("0.8")
    only_2x = "broker 1: receives LeaderAndIsr from controller 0 (controller epoch 1, broker epoch 1)"
    assert [a for a in trace_2x if a != only_2x] == trace_08 and only_2x in trace_2x
    assert "broker 0: controller processes BrokerChange" in trace_08
    assert end_2x.zk.parts[0] == end_08.zk.parts[0] and end_08.zk.parts[0].isr == (0, 1)
    assert sent_2x == [("LeaderAndIsr", 0), ("LeaderAndIsr", 1)]
    assert sent_08 == [("LeaderAndIsr", 0)]
    assert end_2x.nodes[1].reps[0].epoch == end_2x.zk.parts[0].leader_epoch == 1
    assert end_08.nodes[1].reps[0].epoch == 0
    # once quiet, follower 1's view (leader epoch 0) is not ZooKeeper's (1): a 0.8 finding
    views_2x = broker_views_match_zookeeper(build(ControllerConfig(brokers=3, replication_factor=3)))
    views_08 = broker_views_match_zookeeper(
        build(ControllerConfig(brokers=3, replication_factor=3, kafka_version="0.8"))
    )
    assert serving(end_2x) and serving(end_08)
    assert views_2x(end_2x) and not views_08(end_08)


def test_0_8_on_broker_failure_takes_partitions_led_by_the_failed_brokers() -> None:
    """Seed 001: 180 (找到 Leader 在该 Broker 上所有 Partition): a partition already without a
    leader (-1) is not one of them; 2.x takes every partition without a live leader."""
    for version, lost in (("2.x", True), ("0.8", False)):
        sys = build(ControllerConfig(brokers=3, replication_factor=3, kafka_version=version))
        s = sys.init_states()[0]
        w = sys.controller_cls(sys, s, 0, s.nodes[0])
        w.ctx = w.ctx._replace(live=(1, 1, 0))  # broker 2 failed
        lifecycle, rsm = sys.kafka_controller.broker_lifecycle, sys.kafka_controller.replica_state_machine
        assert lifecycle.leader_lost(w, PartZ(-1, 3, (1,), 1, 4), (2,)) is lost
        assert lifecycle.leader_lost(w, PartZ(2, 3, (2,), 1, 4), (2,)) is True
        recipients = rsm.offline_replica_recipients(w, 0, 2, PartZ(0, 1, (0, 1), 1, 2))
        assert recipients == ((0, 1) if version == "2.x" else (0,))


def test_0_8_drops_the_listeners_it_lacks() -> None:
    """0.8 watches no /isr_change_notification and has no TopicUncleanLeaderElectionEnable event:
    the controller handles neither (the 2.x controller reads the notifications)."""
    for version, reads in (("2.x", True), ("0.8", False)):
        sys = build(ControllerConfig(brokers=2, max_unclean_enables=1, kafka_version=version))
        s = sys.init_states()[0]
        w = sys.controller_cls(sys, s, 0, s.nodes[0])
        sys.kafka_controller.process_event(w, IsrChangeNotification())
        assert (w.pending is not None) is reads
        w = sys.controller_cls(sys, s, 0, s.nodes[0])
        sys.kafka_controller.process_event(w, TopicUncleanLeaderElectionEnable(0))
        assert w.zk_out == s.nodes[0].zk_out


# -- the release configuration --------------------------------------------------------------------

VIOLATED_0_8 = [
    "broker_views_match_zookeeper",
    "brokers_reject_stale_broker_epoch",
    "context_matches_zookeeper",
    "controller_converges",
    "controller_znode_removed_by_owner",
    "controller_znode_valid",
    "no_leaderless_partition_when_quiet",
    "zk_writes_fenced",
]
#: distinct states of configs/controller-0.8.toml (exhaustive, every violation collected)
STATES_0_8 = 347_930


def test_release_entry_runs_the_0_8_config() -> None:
    import tomllib

    suite = tomllib.loads((ROOT / "configs" / "release.toml").read_text())
    entry = next(e for e in suite["check"] if e["name"] == "controller-0.8")
    assert entry["config"] == "controller-0.8.toml" and entry["expect"] == "violation"
    assert sorted(entry["violates"]) == VIOLATED_0_8
    assert load_config(ControllerConfig, CONFIG_08).kafka_version is KafkaVersion.KAFKA_0_8


@pytest.mark.slow
def test_0_8_config_golden_and_its_violations() -> None:
    """The release configuration: every violation is one of 0.8's (docs/fidelity.md), the other
    properties hold, every witness is reached."""
    c = load_config(ControllerConfig, CONFIG_08)
    r = check_bfs(build(c), spec.properties(c), model="controller", config=c, keep_going=True)
    assert r.exit_reason.value == "violation" and r.distinct_states == STATES_0_8
    assert sorted({v.property for v in r.violations}) == VIOLATED_0_8
    lengths = {v.property: v.length for v in r.violations}
    assert lengths["context_matches_zookeeper"] == 7 and lengths["zk_writes_fenced"] == 15
    assert all(p["status"] == "witnessed" for p in r.properties.values() if p["kind"] == "reachable")


def test_small_0_8_violations_and_2x_holds() -> None:
    """A fast bounce (crash, expiry, restart before the controller reads /brokers/ids) goes
    unseen without broker epochs (0.8): the restarted broker never gets its LeaderAndIsr. 2.x
    (KIP-380) sees it."""
    base = ["brokers=2", "replication_factor=2", "max_crashes=1", "max_restarts=1", "max_session_expiries=0"]
    runs = {}
    for version in ("2.x", "0.8"):
        c = load_config(ControllerConfig, None, [*base, f"kafka_version={version}"])
        props = [p for p in spec.properties(c) if p.kind != "reachable"]
        runs[version] = check_bfs(build(c), props, model="controller", config=c, keep_going=True)
    assert runs["2.x"].violations == [] and runs["2.x"].distinct_states == 3344
    assert runs["0.8"].distinct_states == 713
    assert [(v.property, v.length) for v in runs["0.8"].violations] == [
        # KAFKA-1367 (fixed in 0.9 by /isr_change_notification): the brokers' metadata keeps
        # the ISR the 0.8 controller last wrote, not the one the leader expanded it to
        ("metadata_cache_matches_zookeeper", 0),
        ("broker_views_match_zookeeper", 8),
        ("context_matches_zookeeper", 8),
    ]


def test_report_names_the_0_8_variant(tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text(
        "[[check]]\n"
        'name = "controller-0.8-tiny"\n'
        'model = "controller"\n'
        f'config = "{CONFIG_08}"\n'
        'set = ["max_restarts=0", "max_session_expiries=0"]\n'
        'expect = "hold"\n'
    )
    code = main(["release", "--suite", str(suite), "--report-dir", str(tmp_path / "r"), "--quiet"])
    assert code == 0
    latest = tmp_path / "r" / "latest"
    assert (  # as a configuration file spells it (Python's name was KAFKA_0_8)
        "<code>kafka_version = &quot;0.8&quot;</code>"
        in (latest / "entries" / "controller-0.8-tiny.html").read_text()
    )
    assert "<td><code>controller.kafka_version</code></td><td>0.8</td>" in (latest / "index.html").read_text()
    doc = json.loads((latest / "report.json").read_text())
    assert doc["entries"][0]["variants"]["kafka_version"] == "0.8"
