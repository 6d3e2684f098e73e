"""KAFKA-7165: after a session expiry, the broker's re-registration meets ``/brokers/ids/<id>``
left by its expired session and fails: the broker is out of the cluster for good.

``KafkaZkClient.registerBroker`` (Kafka 1.1 to 2.1) creates the node with
``checkedEphemeralCreate``: on NodeExists it reads the node and succeeds only when its
ephemeral owner is the current session (KAFKA-1387's check); otherwise "Error while creating
ephemeral at /brokers/ids/<id>, node already exists and owner '<old>' does not match current
session '<new>'" and NodeExists is thrown. When ZooKeeper kept the expired session's ephemerals
(ZOOKEEPER-2985; a ZooKeeper leader restart: ``faults/orphaned_session.py``), the new session's
``RegisterBrokerAndReelect`` fails on it, nothing retries, and the broker never registers again
(the controller counts it alive by the stale node meanwhile). Fixed in Kafka 2.2 (apache/kafka
PR 5575): when the owner is the session this client registered with last
(``shouldReCreateEphemeralZNode``), the node is deleted and created again in the new session,
which the model's ``ZooKeeperServer.recreates_registration`` does. The bug is that check
answering no.
"""

from __future__ import annotations

from model.controller.bugs import bug
from model.controller.state import Node
from model.controller.zookeeper import ZooKeeperServer


@bug(
    "KAFKA-7165",
    versions="1.1 to 2.1",
    doc="a re-registration meets its expired session's /brokers/ids/<id> and fails for good",
    fixed_by="KAFKA-7165 (delete and re-create the node of the session registered last, Kafka 2.2)",
    family=("KAFKA-1387",),
)
class Kafka7165(ZooKeeperServer):
    """``checkedEphemeralCreate`` before 2.2: a node owned by another session is NodeExists."""

    def recreates_registration(self, n: Node, reg: tuple[int, int]) -> bool:
        """Never (the bug): only the current session's own node counts as created."""
        del n, reg
        return False
