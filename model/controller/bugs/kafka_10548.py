"""KAFKA-10548: replicas stay in ReplicaDeletionStarted when their broker fails right after the
deletion started.

The controller moves a deleted topic's live replicas to ReplicaDeletionStarted and sends them
StopReplica(delete = true); a replica leaves that state only by the StopReplica response
(ReplicaDeletionSuccessful or, on an error, ReplicaDeletionIneligible). When the broker dies
before it answers, the request is dropped with the channel, no response ever comes, and unless
the broker failure itself fails those replicas' deletion (``failReplicaDeletion`` from
``onReplicasBecomeOffline``) the topic's deletion is stuck for good (the JIRA and LinkedIn's
hotfix, linkedin/kafka PR 337). The bug is ``onBrokerFailure`` without ``failReplicaDeletion``
for the failed brokers' replicas of topics queued for deletion.
"""

from __future__ import annotations

from model.controller.base import ControllerBase
from model.controller.broker_lifecycle import BrokerLifecycle
from model.controller.bugs import bug
from model.controller.program import FailReplicaDeletion


@bug(
    "KAFKA-10548",
    versions="2.x (the deletion paths where a broker failure does not fail the replicas' deletion)",
    doc="a broker failing after its replicas' deletion started leaves them in ReplicaDeletionStarted",
    fixed_by="linkedin/kafka PR 337 (resume deletion on broker failure); upstream: failReplicaDeletion in onReplicasBecomeOffline",
)
class Kafka10548(BrokerLifecycle):
    """``onBrokerFailure`` that does not fail the deletions of the failed brokers' replicas."""

    def on_broker_failure(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        """The failure's program without ``failReplicaDeletion`` (the bug)."""
        prog = super().on_broker_failure(c, brokers)
        return tuple(op for op in prog if type(op) is not FailReplicaDeletion)
