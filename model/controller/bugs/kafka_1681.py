"""KAFKA-1681: a newly elected controller does not resume the deletions pending in ZooKeeper.

A topic queued under ``/admin/delete_topics`` whose deletion the previous controller had not
finished stays queued forever after a failover: the new controller read the queue into its
``TopicDeletionManager`` but did not start the deletion thread's work until some other
trigger (a broker starting, a StopReplica response) resumed it, and none came. Fixed in
Kafka 0.8.2 (``onControllerFailover`` resumes the deletions: ``deleteTopicManager.start()``,
2.x ``topicDeletionManager.tryTopicDeletion()``). The bug is ``onControllerFailover``'s admin
steps without that resume.
"""

from __future__ import annotations

from model.controller.base import ControllerBase
from model.controller.bugs import bug
from model.controller.controller import KafkaController
from model.controller.program import ResumeDeletions


@bug(
    "KAFKA-1681",
    versions="0.8.1",
    doc="a new controller leaves the pending topic deletions queued: they never complete",
    fixed_by="KAFKA-1681 (onControllerFailover resumes the deletions, Kafka 0.8.2)",
)
class Kafka1681(KafkaController):
    """``onControllerFailover`` without ``tryTopicDeletion``."""

    def on_controller_failover_admin(self, c: ControllerBase, admin: tuple) -> tuple:
        """The admin steps after startup, less the deletions' resume (the bug)."""
        prog = super().on_controller_failover_admin(c, admin)
        return tuple(op for op in prog if type(op) is not ResumeDeletions)
