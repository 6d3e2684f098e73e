"""``leader_elected_from_isr`` (issue 35): the guarantee "no leader outside the ISR while unclean
election is off" checked directly, at the election's ZooKeeper write, not only through its
consequence (a lost acknowledged record, which needs records and the right interleaving)."""

from __future__ import annotations

from typing import Any

import pytest

from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from invariants import controller as spec
from invariants.controller import ControllerConfig
from model.controller import ControllerSystem
from model.controller.base import ControllerBase
from model.controller.messages import S_OFFLINE
from model.controller.state_machines import PartitionStateMachine
from model.election import LeaderAndIsr, offline_partition_leader_election_strategy

# partition [1, 2] led by 1; broker 2 falls out of the ISR (crash) and comes back, then 1 crashes:
# the only live replica, 2, is not in the ISR
OUT_AND_BACK = [
    "brokers=3",
    "topics=1",
    "replication_factor=2",
    "assignment=[[1, 2]]",
    "max_crashes=2",
    "max_restarts=1",
    "max_session_expiries=0",
    "send_update_metadata=false",
]


class AlwaysUnclean(PartitionStateMachine):
    """An offline election that falls back to any live replica whatever the topic says."""

    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        if strategy == S_OFFLINE:
            return offline_partition_leader_election_strategy(c.ctx.ar[p], cur, live, True, False)
        return super().elect_leader_for_partition(c, strategy, p, cur, live, dyn)


def _only(cfg: ControllerConfig, *names: str) -> list[Any]:
    return [p for p in spec.properties(cfg) if p.name in names]


@pytest.mark.slow
def test_holds_on_the_model_as_written() -> None:
    cfg = load_config(ControllerConfig, None, OUT_AND_BACK)
    r = check_bfs(spec.build(cfg), _only(cfg, "leader_elected_from_isr", "leader_in_isr"), keep_going=True)
    assert r.exit_reason.value == "complete" and r.violations == []


@pytest.mark.slow  # over a CPU-second: the ci selection runs it
def test_an_election_outside_the_isr_is_caught_at_its_write() -> None:
    cfg = load_config(ControllerConfig, None, OUT_AND_BACK)
    system = ControllerSystem(cfg, partition_state_machine=AlwaysUnclean)
    r = check_bfs(system, _only(cfg, "leader_elected_from_isr", "leader_in_isr"), keep_going=True)
    # the unclean path writes ISR = [new leader], so the state-level property cannot see it
    assert [v.property for v in r.violations] == ["leader_elected_from_isr"]
    v = r.violations[0]
    assert "crash" in " ".join(str(s.action) for s in v.trace).lower()


@pytest.mark.slow
def test_unclean_topics_are_left_out() -> None:
    cfg = load_config(ControllerConfig, None, [*OUT_AND_BACK, "unclean_leader_election=true"])
    r = check_bfs(spec.build(cfg), _only(cfg, "leader_elected_from_isr"), keep_going=True)
    assert r.violations == [] and r.properties["leader_elected_from_isr"]["status"] == "held"
