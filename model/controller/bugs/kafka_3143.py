"""KAFKA-3143 (with KAFKA-3096): a new controller leaves the replicas of dead brokers as they
were: a hard-killed follower stays in the ISR, and a dead last ISR member stays leader.

A broker's replicas leave the ISR only through the OfflineReplica transition
(``doRemoveReplicasFromIsr``, seed 002: leader -1 when the removed replica led), which
``onBrokerFailure`` runs when the controller sees the broker go. A broker that died while it
was itself the controller, or before the controller handled its failure, is never seen going by
the next controller: its ``replicaStateMachine.startup`` (seed 003: 30-35; seed 000: 697-713)
marks the dead replicas ReplicaDeletionIneligible and moves only the live ones to
OnlineReplica, and the offline election finds no live ISR member for a partition whose last
ISR member died, so it writes nothing. The dead follower stays in ZooKeeper's ISR (until the
leader shrinks it, replica.lag.time.max.ms later) and the dead leader stays leader instead of -1
(KAFKA-3096, "leader is not set to -1 when it is shutdown if followers are down"). Kafka 0.8 to
2.2 shipped it; Kafka 2.3 fixed it (PR 5041, Manikumar Reddy: ``startup`` also moves
``onlineAndOfflineReplicas``' offline replicas to OfflineReplica).

The model's default startup is the seeds' (the bug); the key ``offline_replicas_on_startup``
brings Kafka 2.3's, and with it the guarantee ``dead_replicas_offline_when_quiet``
(``invariants/controller_failover.py``). The bug implies the key and takes the fix away again,
so its entry and the fixed twin check the same properties.
"""

from __future__ import annotations

from model.controller.base import ControllerBase
from model.controller.bugs import bug
from model.controller.state_machines import ReplicaStateMachine


@bug(
    "KAFKA-3143",
    versions="0.8 to 2.2",
    doc="a new controller leaves dead brokers' replicas in the ISR, and a dead last ISR member as leader",
    fixed_by="KAFKA-3143 (replicaStateMachine.startup moves offline replicas to OfflineReplica, Kafka 2.3)",
    family=("KAFKA-3096",),
    implies={"offline_replicas_on_startup": True},
)
class Kafka3143(ReplicaStateMachine):
    """``replicaStateMachine.startup`` without the OfflineReplica batch (the seeds' startup)."""

    def offline_replicas_on_startup(self, c: ControllerBase) -> tuple:
        """No dead replica goes OfflineReplica at startup (the bug)."""
        return ()
