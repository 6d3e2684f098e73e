"""KAFKA-4214: a reassignment fails when the controller and a broker receiving a new replica
bounce together.

``initiateReassignReplicasForTopicPartition`` (Kafka 0.8.0 to 0.10.0, added by KAFKA-990) threw
"Only ... replicas out of the new set of replicas ... are alive. Failing partition
reassignment" unless every new replica's broker was live, and its ``catch`` removed the
partition from ``/admin/reassign_partitions``. A fresh request to a down broker was refused
untouched; but a new controller resumes the reassignments in progress through the same call
(``onControllerFailover`` -> ``initializePartitionReassignment`` ->
``initiatePartitionReassignment``), so one whose new replica's broker was down at the failover
was failed half-done: ``/brokers/topics`` keeps AR = OAR + RAR (step 1), the old replicas are
never stopped, the leader never moved, and nothing takes the reassignment up again when the
broker returns (found by the system test of KAFKA-4214's PR 1910, ``bounce_brokers``). Kafka
0.10.1 removed the check: the new controller watches the ISR of a partition whose new replicas
are down, and ``onBrokerStartup`` restarts the reassignment when they come back. The bug is
``maybeTriggerPartitionReassignment``'s refusal with 0.10.0's liveness check.
"""

from __future__ import annotations

from model.controller.admin import AdminWorkflows
from model.controller.base import ControllerBase
from model.controller.bugs import bug


@bug(
    "KAFKA-4214",
    versions="0.8.0 to 0.10.0",
    doc="a reassignment resumed by a new controller while a new replica's broker is down is failed half-done",
    fixed_by="KAFKA-4214 (Kafka 0.10.1: no liveness check on the new replicas)",
    family=("KAFKA-990",),
)
class Kafka4214(AdminWorkflows):
    """``initiateReassignReplicasForTopicPartition`` with ``aliveNewReplicas == newReplicas``."""

    def reassignment_refused(self, c: ControllerBase, p: int, rar: tuple[int, ...]) -> bool:
        """Today's refusals, and 0.10.0's: some broker of ``rar`` is not live (the bug)."""
        live = c.live_broker_ids()
        return super().reassignment_refused(c, p, rar) or any(r not in live for r in rar)
