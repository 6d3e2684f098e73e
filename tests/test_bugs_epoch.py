"""Two bug families of the controller epoch (``docs/bugs.md``), each stepped along its release
entry's counterexample: KAFKA-1096, the zombie controller that adopts the new epoch through
0.8.1's ``ControllerEpochListener`` (``model/controller/bugs/kafka_1096.py``), and KAFKA-6082,
the zombie's write that no ``/controller_epoch`` check fences (``kafka_6082.py``); and the
entries' claims of which violations are the bug's and which the variant's it implies."""

from __future__ import annotations

from pathlib import Path

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from explorer.suite import load_suite
from invariants.mutants.controller import ControllerConfig, build
from model.controller.config import ExpiryHandling, ZkWriteFencing
from model.controller.state import State

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "configs" / "release.toml"

#: bug-KAFKA-1096's counterexample (bfs's shortest, 18 steps), as the actions print
KAFKA_1096_TRACE = (
    "ZooKeeper: applies create /brokers/ids/<id> (ephemeral) from session 1 (broker 0)",
    "broker 0: controller processes Startup",
    "ZooKeeper: applies getData /controller and /controller_epoch from session 1 (broker 0)",
    "ZooKeeper: applies create /controller (ephemeral) from session 1 (broker 0)",
    "ZooKeeper: applies getData /controller_epoch from session 1 (broker 0)",
    "ZooKeeper: applies create /brokers/ids/<id> (ephemeral) from session 2 (broker 1)",
    "broker 1: controller processes Startup",
    "ZooKeeper: applies setData /controller_epoch from session 1 (broker 0)",
    "ZooKeeper: applies read context and register controller watches from session 1 (broker 0)",
    "ZooKeeper: applies write partition states from session 1 (broker 0)",
    "broker 0: controller processes ControllerEpochChange",
    "broker 0: ZooKeeper session 1 expires (server side)",
    "ZooKeeper: applies getData /controller and /controller_epoch from session 2 (broker 1)",
    "ZooKeeper: applies create /controller (ephemeral) from session 2 (broker 1)",
    "ZooKeeper: applies getData /controller_epoch from session 2 (broker 1)",
    "ZooKeeper: applies setData /controller_epoch from session 2 (broker 1)",
    "broker 0: notices its session expired, opens ZooKeeper session 3",
    "ZooKeeper: applies getData /controller_epoch from session 3 (broker 0)",
)

#: bug-KAFKA-6082's counterexample of zk_writes_fenced (12 steps)
KAFKA_6082_TRACE = (
    "ZooKeeper: applies create /brokers/ids/<id> (ephemeral) from session 1 (broker 0)",
    "broker 0: controller processes Startup",
    "ZooKeeper: applies getData /controller and /controller_epoch from session 1 (broker 0)",
    "ZooKeeper: applies multi(create /controller, setData /controller_epoch) from session 1 (broker 0)",
    "ZooKeeper: applies read context and register controller watches from session 1 (broker 0)",
    "ZooKeeper: applies create /brokers/ids/<id> (ephemeral) from session 2 (broker 1)",
    "broker 1: controller processes Startup",
    "broker 0: ZooKeeper session 1 expires (server side)",
    "ZooKeeper: applies getData /controller and /controller_epoch from session 2 (broker 1)",
    "ZooKeeper: applies multi(create /controller, setData /controller_epoch) from session 2 (broker 1)",
    "broker 0: notices its session expired, opens ZooKeeper session 3",
    "ZooKeeper: applies write partition states from session 3 (broker 0)",
)
#: the violations of bug-KAFKA-6082 that the epoch check closes (the others are the queued
#: expiry handling's own)
KAFKA_6082_OWN = {"zk_writes_fenced", "context_matches_zookeeper", "no_leaderless_partition_when_quiet"}


def _entry_config(name: str, drop_bug: bool = False, *extra: str) -> ControllerConfig:
    """The configuration of release entry ``name`` (without its ``bug`` when ``drop_bug``)."""
    e = next(e for e in load_suite(str(SUITE)) if e.name == name)
    overrides = [o for o in e.set if not (drop_bug and o.startswith("bug="))]
    path = str(SUITE.parent / e.config) if e.config else None
    return load_config(ControllerConfig, path, [*overrides, *extra])


def _walk(cfg: ControllerConfig, trace: tuple[str, ...]) -> list[State]:
    """The states along ``trace`` (each step the successor whose action prints as the line);
    fails naming the first line no successor matches."""
    system = build(cfg)
    states = [system.init_states()[0]]
    for i, line in enumerate(trace, 1):
        nxt = [t for a, t in system.successors(states[-1]) if str(a) == line]
        assert nxt, f"step {i}: no successor {line!r}"
        states.append(nxt[0])
    return states


def test_kafka_1096_zombie_adopts_the_new_epoch() -> None:
    """Along the entry's counterexample broker 0, its session expired, reads the epoch broker 1
    wrote through its own listener's event and sets it in its context: both act as controller at
    epoch 2. Without the bug (0.8.2: no listener) the event never exists."""
    states = _walk(_entry_config("bug-KAFKA-1096"), KAFKA_1096_TRACE)
    before, last = states[-2], states[-1]
    assert before.nodes[0].ctx.epoch == 1 and last.nodes[0].ctx.epoch == 2
    assert last.zk.epoch == 2 and last.nodes[1].ctx.epoch == 2
    assert not spec.one_controller_per_epoch(last)
    assert all(spec.one_controller_per_epoch(s) for s in states[:-1])
    with pytest.raises(AssertionError, match="step 11: no successor"):
        _walk(_entry_config("bug-KAFKA-1096", True, "kafka_version=0.8"), KAFKA_1096_TRACE)


@pytest.mark.slow
def test_kafka_1096_adds_only_its_property_to_0_8() -> None:
    """In bug-KAFKA-1096's configuration, Kafka 0.8 without the listener (0.8.2) holds
    ``one_controller_per_epoch`` and fails exactly the entry's other properties (0.8's own)."""
    cfg = _entry_config("bug-KAFKA-1096", True, "kafka_version=0.8")
    r = check_bfs(build(cfg), spec.properties(cfg), model="controller", config=cfg, keep_going=True)
    e = next(e for e in load_suite(str(SUITE)) if e.name == "bug-KAFKA-1096")
    assert sorted({v.property for v in r.violations}) == sorted(
        set(e.violates) - {"one_controller_per_epoch"}
    )


def test_kafka_6082_zombie_write_lands_unless_fenced() -> None:
    """The bug implies the unfenced write and the queued expiry handling; along the entry's
    counterexample broker 0's partition-state create, retried in its new session after broker 1
    won epoch 2, lands (``zk_writes_fenced`` fails on that step); with the epoch check (the fix,
    the queued handling kept) the same step leaves ZooKeeper as it was."""
    cfg = _entry_config("bug-KAFKA-6082")
    assert cfg.zk_write_fencing is ZkWriteFencing.PARTITION_VERSION
    assert cfg.session_expiry_handling is ExpiryHandling.QUEUED
    states = _walk(cfg, KAFKA_6082_TRACE)
    before, last = states[-2], states[-1]
    assert before.zk.epoch == 2 and before.zk.parts[0] is None and last.zk.parts[0].ctl_epoch == 1
    fixed = _walk(_entry_config("bug-KAFKA-6082", True, "session_expiry_handling=queued"), KAFKA_6082_TRACE)
    assert fixed[-1].zk == fixed[-2].zk and fixed[-2].zk.parts[0] is None


@pytest.mark.slow
def test_kafka_6082_epoch_check_closes_its_violations() -> None:
    """In bug-KAFKA-6082's configuration the epoch check alone (queued handling kept) holds
    ``zk_writes_fenced`` and the two quiet-state properties the zombie's writes break, and fails
    exactly the entry's other violations (the queued handling's retried election)."""
    cfg = _entry_config("bug-KAFKA-6082", True, "session_expiry_handling=queued")
    r = check_bfs(build(cfg), spec.properties(cfg), model="controller", config=cfg, keep_going=True)
    e = next(e for e in load_suite(str(SUITE)) if e.name == "bug-KAFKA-6082")
    assert set(e.violates) >= KAFKA_6082_OWN
    assert sorted({v.property for v in r.violations}) == sorted(set(e.violates) - KAFKA_6082_OWN)
