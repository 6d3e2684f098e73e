"""``ControllerSystem.successors`` writes the network's ordinary steps out (``ZK_SESSIONS.steps``,
``CONTROLLER_CHANNELS.steps``: no generator layers on the hottest path) and hands a merged
ZooKeeper response straight to ``ZooKeeperServer.receive``; both must stay what the network
layer (``network.py``) and ``reply`` define, step for step and in order."""

from __future__ import annotations

from typing import Any

from explorer.config import load_config
from model.controller import ControllerConfig, ControllerSystem
from model.controller.actions import Deliver, ZkReply, ZkServe
from model.controller.network import CONTROLLER_CHANNELS, ZK_SESSIONS
from model.controller.state import State
from model.controller.zookeeper import ZooKeeperServer


def _sample(system: ControllerSystem, limit: int) -> list[State]:
    seen = dict.fromkeys(system.init_states())
    frontier = list(seen)
    while frontier and len(seen) < limit:
        nxt = []
        for s in frontier:
            for _a, t in system.successors(s):
                if t not in seen:
                    seen[t] = None
                    nxt.append(t)
        frontier = nxt
    return list(seen)[:limit]


class _QueuesResponses(ZooKeeperServer):
    """The server with ``reply`` overridden (as a variant may): every response is queued and
    taken off again by ``reply``, the way before ``receive``."""

    def reply(self, s: State, b: int) -> tuple[Any, State]:
        return super().reply(s, b)


def test_network_steps_written_out_are_the_links_steps() -> None:
    for extra in ([], ["send_update_metadata=true"], ["zk_responses=separate"]):
        cfg = load_config(ControllerConfig, "configs/controller-ref.toml", extra)
        system = ControllerSystem(cfg)
        for s in _sample(system, 1_500):
            mine = [(a, t) for a, t in system.successors(s) if type(a) in (ZkServe, ZkReply, Deliver)]
            links = [*ZK_SESSIONS.steps(system, s), *CONTROLLER_CHANNELS.steps(system, s)]
            assert mine == links


def test_merged_response_received_as_reply_would() -> None:
    cfg = load_config(ControllerConfig, "configs/controller-ref.toml")
    direct, queued = ControllerSystem(cfg), ControllerSystem(cfg, zookeeper=_QueuesResponses)
    assert direct.zookeeper.receives_merged and not queued.zookeeper.receives_merged
    for s in _sample(direct, 3_000):
        assert list(direct.successors(s)) == list(queued.successors(s))
