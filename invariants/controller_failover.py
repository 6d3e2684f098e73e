"""What a new controller must do with the brokers that died before it took over (issue 58's
bug zoo, the KAFKA-3143 / KAFKA-3096 family).

* ``no_dead_leader_when_quiet``: once the cluster is quiet, no partition (of a topic not queued
  for deletion) is led by a broker that is not up (live and registered): its leader is a live
  broker or -1. The controller moves a dead broker's replicas to OfflineReplica
  (``doRemoveReplicasFromIsr``, seed 002: out of the ISR unless it is the last member, leader -1
  when it led) when it handles the broker's failure (seed 001 ``onBrokerFailure``), and, since
  Kafka 2.3, when it starts (``replicaStateMachine.startup`` moves every offline replica to
  OfflineReplica, KAFKA-3143). The seeds' startup (seed 003: 30-35, Kafka 0.8 to 2.2) moves
  only the live replicas: when the last ISR member died while it was the controller, or before
  its failure was handled, the next controller's offline election finds no live ISR member and
  writes nothing, so the dead broker stays leader (KAFKA-3096: "leader is not set to -1"). The
  property is the guarantee of the configuration key ``offline_replicas_on_startup`` and is
  checked only with it.

  Its other half, a dead follower left in the ISR, is no safety property even in Kafka 2.3: a
  live leader shrinks the ISR itself (replica.lag.time.max.ms), and a follower whose session
  expired can still fetch and be added back by the leader before it dies, which no controller
  then sees (a broker must be registered to join the ISR only since Kafka 3.3, KAFKA-14140):
  with the key on, such a property fails on ``controller-small`` with a session expiry in 14
  steps.

>>> from model.controller import ControllerConfig, ControllerSystem
>>> cfg = ControllerConfig(brokers=2, offline_replicas_on_startup=True)
>>> sys = ControllerSystem(cfg)
>>> p = failover_properties(cfg, sys)[0]
>>> s = sys.init_states()[0]
>>> p.check(s)
True
>>> dead = s._replace(nodes=(s.nodes[0], s.nodes[1]._replace(alive=False, session=0)))
>>> p.check(dead)
True
>>> dead = s._replace(nodes=(s.nodes[0]._replace(alive=False, session=0), s.nodes[1]))
>>> p.check(dead), p.explain(dead)[1]
(False, 't0-0 is led by broker 0, which is not up (leader 0, ISR [0, 1])')
>>> failover_properties(ControllerConfig(brokers=2), sys)
[]
"""

from __future__ import annotations

from typing import Any

from explorer.core import Property, always
from invariants.controller_convergence import serving
from model.controller import ControllerConfig, ControllerSystem, State
from model.election import NO_LEADER

__all__ = ["failover_properties", "no_dead_leader_when_quiet"]


def _up(s: State, b: int) -> bool:
    """Broker ``b``'s process runs and ``/brokers/ids/<b>`` is owned by its current session."""
    n = s.nodes[b]
    reg = s.zk.brokers[b]
    return n.alive and reg is not None and reg[0] == n.session


def _dead_leaders(sys: ControllerSystem, s: State) -> list[int]:
    """The existing partitions of topics not queued for deletion whose ZooKeeper leader is a
    broker not up."""
    zk = s.zk
    ppt = sys.ppt
    return [
        p
        for p, z in enumerate(zk.parts)
        if z is not None
        and (p // ppt) not in zk.delete_topics
        and sys.present(zk, p)
        and z.leader != NO_LEADER
        and not _up(s, z.leader)
    ]


def no_dead_leader_when_quiet(sys: ControllerSystem) -> Any:
    """The check of ``no_dead_leader_when_quiet`` for ``sys``'s configuration."""

    def check(s: State) -> bool:
        """When quiet, no partition (of a topic not queued for deletion) is led by a broker not
        up: its leader is a live, registered broker or -1."""
        return not serving(s) or not _dead_leaders(sys, s)

    return check


def failover_properties(config: ControllerConfig, sys: ControllerSystem) -> list[Property]:
    """The properties of this module that ``config`` claims (see the module docstring)."""
    if not config.offline_replicas_on_startup:
        return []

    def explain(s: State) -> list[str]:
        lines = ["the cluster is quiet (no event, request, response or continuation in flight)"]
        for p in _dead_leaders(sys, s)[:4]:
            z = s.zk.parts[p]
            lines.append(
                f"t{p // sys.ppt}-{p % sys.ppt} is led by broker {z.leader}, which is not up "
                f"(leader {z.leader}, ISR {list(z.isr)})"
            )
        return lines

    return [
        always(
            "no_dead_leader_when_quiet",
            no_dead_leader_when_quiet(sys),
            "once quiet, no partition is led by a dead broker: a dead leader is replaced or set to -1, "
            "on its failure or, since Kafka 2.3, on the new controller's startup (seed 002 "
            "doRemoveReplicasFromIsr; KAFKA-3143, KAFKA-3096)",
            applies=serving,
            explain=explain,
        )
    ]
