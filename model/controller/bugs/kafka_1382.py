"""KAFKA-1382 (with KAFKA-3042): a partition leader's ISR updates fail forever on a stale
zkVersion.

A leader changes its partition's ISR with a conditional ZooKeeper write on the zkVersion it
caches (``Partition.updateIsr``: ``ZkUtils.conditionalUpdatePersistentPath`` at
``zkVersion``), and takes the new ISR and version only when the write succeeds; otherwise it
logs "Cached zkVersion [v] not equal to that in zookeeper, skip updating ISR" and keeps both.
When the connection is lost after the server applied the write, ZkClient's
``retryUntilConnected`` resends it, and the copy meets BadVersion, since the first copy
already bumped the version: the leader keeps the old ISR and the old zkVersion while
ZooKeeper holds the new ones at its own leader epoch, and every later ISR change it tries
fails the same way until a LeaderAndIsr brings a newer version (the log line repeated for
ever that KAFKA-1382 and, for its later causes, KAFKA-3042 report). Fixed in Kafka 0.8.2 by
``ReplicationUtils.updateLeaderAndIsr``'s ``checkLeaderAndIsrZkData``: on BadVersion the writer
reads the znode and, when it holds the leader, leader epoch, ISR and controller epoch it wrote,
takes the write as done at the stored version (``ZooKeeperServer.check_retried``). The bug is
the client's checks without that one, in the 0.8 controller it shipped with (it implies
``kafka_version = "0.8"``; the leader's write is the same in 0.8.2 and 2.x).
"""

from __future__ import annotations

from typing import Any

from model.controller.bugs import bug
from model.controller.config import KafkaVersion
from model.controller.responses import IsrUpdated
from model.controller.state import Zk
from model.controller.zookeeper import ZooKeeperServer


@bug(
    "KAFKA-1382",
    versions="0.8.0 to 0.8.1.1",
    doc="a leader's retried ISR write meets BadVersion: its cached ISR and zkVersion stay stale for good",
    fixed_by="KAFKA-1382 (ReplicationUtils.checkLeaderAndIsrZkData, Kafka 0.8.2)",
    family=("KAFKA-3042",),
    implies={"kafka_version": KafkaVersion.KAFKA_0_8},
)
class Kafka1382(ZooKeeperServer):
    """The client's checks on a retried write without ``checkLeaderAndIsrZkData``."""

    def check_retried(self, zk: Zk, b: int, sess: int, req: Any, resp: Any) -> Any:
        """A leader's ISR write that failed stays failed (the bug); the other checks as before."""
        if type(resp) is IsrUpdated:
            return resp
        return super().check_retried(zk, b, sess, req, resp)
