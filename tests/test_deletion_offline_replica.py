"""The OfflineReplica transition for a topic queued for deletion (issue 58, docs/fidelity.md's
ReplicaStateMachine and topic deletion table).

Kafka 2.x's ``ReplicaStateMachine`` sends the LeaderAndIsr with the shrunk ISR to the other
replicas only ``if (!isTopicQueuedUpForDeletion(partition.topic))``. The model used to send it
for a topic being deleted too: on ``controller-admin`` broker 1's replica's removal reached
broker 0 after its StopReplica(delete=true) and recreated the deleted replica there, and the
topic's deletion still completed in ZooKeeper. Kafka 0.8.1's transition, whose recipients (the
leader only) ``kafka_version = "0.8"`` follows, has no such check.
"""

from __future__ import annotations

import pytest

from explorer.config import load_config
from explorer.core import Property, always
from explorer.engines.bfs import check_bfs
from model.controller import ControllerConfig, ControllerSystem, State
from model.controller.state import PartZ

ADMIN = "configs/controller-admin.toml"


@pytest.mark.parametrize("version", ["2.x", "0.8"])
def test_offline_replica_sends_nothing_for_a_topic_queued_for_deletion(version: str) -> None:
    """Broker 1's replica of partition 0 -> OfflineReplica (leader 0, ISR shrunk to [0]): no
    request for it once topic 0 is queued for deletion (2.x), the LeaderAndIsr to the other
    replica otherwise; 0.8 sends it to the leader either way. Partition 1 (topic 1, not being
    deleted) is unaffected."""
    sys = ControllerSystem(load_config(ControllerConfig, ADMIN, [f"kafka_version={version}"]))
    s = sys.init_states()[0]
    rsm = sys.kafka_controller.replica_state_machine
    shrunk = ((0, PartZ(0, 1, (0,), 1, 2)),)
    c = sys.controller_cls(sys, s, 0, s.nodes[0])
    assert [r for r, _ in rsm.offline_replica_requests(c, 1, shrunk)] == [0]
    c.ctx = c.ctx._replace(deleting=(0,))  # topic 0 queued for deletion
    sent = [r for r, _ in rsm.offline_replica_requests(c, 1, shrunk)]
    assert sent == ([] if version == "2.x" else [0])
    assert [r for r, _ in rsm.offline_replica_requests(c, 1, ((1, PartZ(-1, 1, (1,), 1, 2)),))] == [-1]


def deleted_replicas_stay_deleted(sys: ControllerSystem) -> Property:
    """Once a topic is deleted (``/brokers/topics/<t>`` removed, every replica's StopReplica with
    delete = true having succeeded), no broker holds a replica of its partitions again."""
    ppt = sys.ppt

    def check(s: State) -> bool:
        return all(
            n.reps[p].epoch < 0 and not n.reps[p].log
            for t in s.zk.gone
            for p in range(t * ppt, (t + 1) * ppt)
            for n in s.nodes
        )

    return always("deleted_replicas_stay_deleted", check, "a deleted topic's replicas are not recreated")


@pytest.mark.slow  # controller-admin without liveness: 17,671 states, 1.2-1.4 CPU-s
def test_deleted_replica_not_recreated_on_controller_admin() -> None:
    """Searched in full, ``controller-admin`` never recreates a deleted topic's replica on a
    broker (the model before the fix did, in 28 steps: 18,858 states searched)."""
    c = load_config(ControllerConfig, ADMIN, ["liveness=false"])
    sys = ControllerSystem(c)
    r = check_bfs(sys, [deleted_replicas_stay_deleted(sys)], model="controller", config=c)
    assert r.exit_reason.value == "complete"
    assert r.violations == []
