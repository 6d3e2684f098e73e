"""What each broker remembers (issue 35): the stale-epoch checks compare requests with what the
broker recorded, so a broker that stops recording passes them for ever. Two properties read it
from outside: ``brokers_record_accepted_epochs`` (an accepted request's controller epoch is
remembered) and ``broker_epoch_matches_registration`` (a broker knows its registration's epoch).
Each is shown failing on a broker that forgets, and holding on the model as written."""

from __future__ import annotations

from typing import Any

from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from explorer.speedups import set_item
from invariants import controller as spec
from invariants.controller import ControllerConfig
from model.controller import ControllerSystem, State
from model.controller.replica_manager import ReplicaManager
from model.controller.zookeeper import ZooKeeperServer

NAMES = ("brokers_record_accepted_epochs", "broker_epoch_matches_registration")
# a controller failover (a crash and a restart) so that a second controller epoch reaches brokers
FAILOVER: list[str] = []  # controller-small: a crash and a failover
EXPIRY = ["max_session_expiries=1", "max_crashes=0"]


class ForgetsControllerEpoch(ReplicaManager):
    """Applies requests but keeps the controller epoch it had seen before them."""

    def deliver(self, s: State, sender: int, d: int) -> tuple[Any, State]:
        before = s.nodes[d].seen_epoch
        act, t = super().deliver(s, sender, d)
        return act, t._replace(nodes=set_item(t.nodes, d, t.nodes[d]._replace(seen_epoch=before)))


class ForgetsBrokerEpoch(ZooKeeperServer):
    """Hands a re-registering broker its response but the broker keeps its first broker epoch."""

    def reply(self, s: State, b: int) -> tuple[Any, State]:
        before = s.nodes[b].bepoch
        act, t = super().reply(s, b)
        if before and t.nodes[b].bepoch != before:
            t = t._replace(nodes=set_item(t.nodes, b, t.nodes[b]._replace(bepoch=before)))
        return act, t


def _run(system: Any, cfg: ControllerConfig) -> Any:
    return check_bfs(system, [p for p in spec.properties(cfg) if p.name in NAMES], keep_going=True)


def test_both_hold_on_the_model_as_written() -> None:
    for extra in ([], ["max_restarts=1"], EXPIRY):
        cfg = load_config(ControllerConfig, "configs/controller-small.toml", [*FAILOVER, *extra])
        r = _run(spec.build(cfg), cfg)
        assert r.exit_reason.value == "complete" and r.violations == []


def test_a_broker_that_forgets_the_controller_epoch_is_caught() -> None:
    cfg = load_config(ControllerConfig, "configs/controller-small.toml", FAILOVER)
    r = _run(ControllerSystem(cfg, replica_manager=ForgetsControllerEpoch), cfg)
    assert [v.property for v in r.violations] == ["brokers_record_accepted_epochs"]


def test_a_broker_that_keeps_an_old_broker_epoch_is_caught() -> None:
    # a broker registers again under a new session after its expiry (a restart starts from 0)
    cfg = load_config(ControllerConfig, "configs/controller-small.toml", EXPIRY)
    r = _run(ControllerSystem(cfg, zookeeper=ForgetsBrokerEpoch), cfg)
    assert [v.property for v in r.violations] == ["broker_epoch_matches_registration"]
