"""Two bug families of the controller epoch (``docs/bugs.md``): KAFKA-1096, the zombie
controller that adopts the new epoch through 0.8.1's ``ControllerEpochListener``
(``model/controller/bugs/kafka_1096.py``), stepped along its counterexample; and the release
entries' claim that the bug alone adds its property to what ``kafka_version = "0.8"`` breaks."""

from __future__ import annotations

from pathlib import Path

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from explorer.suite import load_suite
from invariants.mutants.controller import ControllerConfig, build
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


def _entry_config(name: str, drop_bug: bool = False, *extra: str) -> ControllerConfig:
    """The configuration of release entry ``name`` (without its ``bug`` when ``drop_bug``)."""
    e = next(e for e in load_suite(str(SUITE)) if e.name == name)
    overrides = [o for o in e.set if not (drop_bug and o.startswith("bug="))]
    return load_config(ControllerConfig, str(SUITE.parent / e.config), [*overrides, *extra])


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
