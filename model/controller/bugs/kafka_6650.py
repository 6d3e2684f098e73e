"""KAFKA-6650 (with KAFKA-6652): a new controller cannot finish the deletion of a topic an
earlier controller half deleted.

``completeDeleteTopic`` deletes the topic's znodes one synchronous request at a time
(``deleteTopicZNode`` is ``deleteRecursive``: each partition's state znode, then
``/brokers/topics/<t>``; then ``deleteTopicDeletions``). A controller that dies between them
leaves a topic still queued under ``/admin/delete_topics`` whose assignment is in ZooKeeper but
some of whose partitions have no state znode. The next controller resumes the deletion:
``startReplicaDeletion`` moves the live replicas to OfflineReplica, but the OfflineReplica
transition only handled the partitions with leadership info (``removeReplicasFromIsr`` of
``partitionLeadershipInfo.contains``); a replica of a partition without it stayed where it was,
its move to ReplicaDeletionStarted was an invalid transition Kafka only logged, no
StopReplica(delete) went out, and the deletion never completed. KAFKA-6652 (PR 4769) logged the
failed attempts; KAFKA-6650 (PR 4825, Kafka 2.0) moves those replicas to OfflineReplica too.

The model deletes a topic's znodes in one step unless ``recursive_topic_deletion`` is on, so the
bug implies that key; its seam is the OfflineReplica transition without the replicas that have
no leadership info.
"""

from __future__ import annotations

from model.controller.base import ControllerBase
from model.controller.bugs import bug
from model.controller.state_machines import ReplicaStateMachine


@bug(
    "KAFKA-6650",
    versions="0.8.2 to 1.1",
    doc="a replica of a half-deleted topic's partition without a state znode never goes OfflineReplica: "
    "the deletion never completes",
    fixed_by="KAFKA-6650 (OfflineReplica for replicas without leadership info, PR 4825, Kafka 2.0)",
    family=("KAFKA-6652",),
    implies={"recursive_topic_deletion": True},
)
class Kafka6650(ReplicaStateMachine):
    """The OfflineReplica transition leaves a replica without leadership info as it was."""

    def offline_without_leadership_info(self, c: ControllerBase, p: int, b: int) -> None:
        """Nothing: only the partitions with leadership info go OfflineReplica (the bug)."""
