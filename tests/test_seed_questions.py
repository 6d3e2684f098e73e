"""Seed 002's questions ("思考几个问题", answered at its end, lines 1346-1400), asked of the whole
controller model: each scenario is driven step by step through ZooKeeper, the controller's
events and the channels (faults where the question puts them, then every healing step until
the controller plane is quiet), and the answer is read from ZooKeeper and the brokers.

- Q2: a new topic's leader is not elected: the first live replica leads, the ISR is the live
  replicas (covered by the topic-creation configuration; here the settled start).
- Q3: every replica is down and a broker that was not in the ISR comes back: it leads only
  with unclean leader election; otherwise the partition stays leaderless.
- Q4: every replica is down and they come back one by one: with unclean election the first to
  come back leads; without, the first ISR member to come back does.
- Q5: a broker went down and its leadership moved; when it comes back it gets the leadership
  back only through the auto leader rebalance (PreferredReplicaPartitionLeaderElection).
"""

from __future__ import annotations

from typing import Any

import pytest

from model.controller import ControllerConfig, ControllerSystem
from model.controller.actions import AutoRebalanceTick, Crash, Restart, SessionExpire

#: the controller plane's healing steps, taken until none is enabled (``SessionExpire`` only
#: for a dead broker: its session times out; a live broker's expiry is a fault)
_HEALING = ("ProcessEvent", "ZkServe", "ZkReply", "Deliver", "SessionNotice", "Fetch", "ShutdownComplete")


def quiet(system: ControllerSystem, s: Any, limit: int = 2_000) -> Any:
    """``s`` after the first enabled healing step, again and again, until none is enabled."""
    for _ in range(limit):
        for a, t in system.successors(s):
            kind = type(a).__name__
            if kind in _HEALING or (isinstance(a, SessionExpire) and not s.nodes[a.broker].alive):
                s = t
                break
        else:
            return s
    raise AssertionError("the controller plane did not settle")


def take(system: ControllerSystem, s: Any, kind: type, broker: int) -> Any:
    """``s`` after the enabled action of type ``kind`` of ``broker`` (there must be one)."""
    got = [t for a, t in system.successors(s) if isinstance(a, kind) and getattr(a, "broker", None) == broker]
    assert got, f"no {kind.__name__} of broker {broker} enabled"
    return got[0]


def leader_isr(s: Any, p: int = 0) -> tuple[int, tuple[int, ...]]:
    """Partition ``p``'s leader and ISR in ZooKeeper."""
    z = s.zk.parts[p]
    return z.leader, z.isr


def system(**kw: Any) -> ControllerSystem:
    """Three brokers, one partition on brokers 0 and 1 (broker 2 holds none and can control)."""
    base: dict[str, Any] = dict(brokers=3, assignment=((0, 1),), max_crashes=2, max_restarts=2)
    base.update(kw)
    return ControllerSystem(ControllerConfig(**base))


def test_q2_the_settled_start_has_the_first_live_replica_leading() -> None:
    sys = system()
    s = sys.init_states()[0]
    assert leader_isr(s) == (0, (0, 1))


def no_live_leader(s: Any, p: int = 0) -> bool:
    """Partition ``p`` has no live leader: -1, or a dead broker's id that the controller did
    not rewrite (it died with the controller, and the next controller's failed election
    writes nothing)."""
    leader = s.zk.parts[p].leader
    return leader < 0 or not s.nodes[leader].alive


def both_down_follower_first(sys: ControllerSystem) -> Any:
    """Broker 1 (the follower) dies and leaves the ISR; then broker 0 (the leader, and the
    controller) dies: broker 2 takes over and finds no live ISR replica, so the partition has
    no live leader and its ISR keeps broker 0 (seed 002: 384-402, the ISR keeps its last member)."""
    s = quiet(sys, sys.init_states()[0])
    s = quiet(sys, take(sys, s, Crash, 1))
    assert leader_isr(s) == (0, (0,))
    s = quiet(sys, take(sys, s, Crash, 0))
    assert s.zk.controller[0] == 2
    assert no_live_leader(s) and leader_isr(s)[1] == (0,)
    return s


@pytest.mark.parametrize("unclean", [False, True])
def test_q3_a_replica_outside_the_isr_leads_only_with_unclean_election(unclean: bool) -> None:
    sys = system(unclean_leader_election=unclean)
    s = both_down_follower_first(sys)
    s = quiet(sys, take(sys, s, Restart, 1))
    if unclean:
        assert leader_isr(s) == (1, (1,))  # leaderForOffline, unclean: ISR = [leader]
        assert s.nodes[1].reps[0].leader == 1  # and broker 1 was told so
    else:
        assert no_live_leader(s) and leader_isr(s)[1] == (0,)  # no candidate: leaderless


@pytest.mark.parametrize("unclean", [False, True])
def test_q4_replicas_back_one_by_one(unclean: bool) -> None:
    """Broker 1 (not in the ISR) comes back first, then broker 0 (the ISR's last member)."""
    sys = system(unclean_leader_election=unclean)
    s = both_down_follower_first(sys)
    s = quiet(sys, take(sys, s, Restart, 1))
    s = quiet(sys, take(sys, s, Restart, 0))
    leader, isr = leader_isr(s)
    if unclean:
        assert leader == 1  # the first to come back leads (and may have lost records)
    else:
        assert leader == 0  # the first ISR member to come back, not the first broker
    assert leader in isr


@pytest.mark.parametrize("rebalance", [False, True])
def test_q5_leadership_returns_only_through_the_auto_rebalance(rebalance: bool) -> None:
    sys = system(auto_leader_rebalance=rebalance, max_crashes=1, max_restarts=1)
    s = quiet(sys, sys.init_states()[0])
    s = quiet(sys, take(sys, s, Crash, 0))
    assert leader_isr(s)[0] == 1  # the leadership moved to the other ISR replica
    s = quiet(sys, take(sys, s, Restart, 0))
    assert leader_isr(s)[0] == 1  # broker 0 is back (and fetches), but does not lead
    s = quiet(sys, s)
    assert 0 in leader_isr(s)[1]  # back in the ISR once it caught up
    if rebalance:
        controller = s.zk.controller[0]
        s = quiet(sys, take(sys, s, AutoRebalanceTick, controller))
        assert leader_isr(s)[0] == 0  # the preferred replica leads again
    else:
        assert not any(isinstance(a, AutoRebalanceTick) for a, _ in sys.successors(s))
        assert leader_isr(s)[0] == 1
