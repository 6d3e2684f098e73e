"""KAFKA-4229: after a session expiry, the controller's new session finds the ``/controller``
node it created itself and never becomes controller.

``ZookeeperLeaderElector``'s ``handleNewSession`` (Kafka 0.8 to 0.10) resigned and called
``elect``; but the ``/controller`` create the ZooKeeper client (I0Itec ZkClient) retried in the
new session had already made ``/controller`` this broker's: ``elect`` read its own id and
returned ``amILeader`` without ``onControllerFailover``, so ``/controller`` names a broker that
runs no controller, and no other broker ever tries (seed 000: 115-123). The model's 0.8
controller (``kafka_version = "0.8"``, ``model/controller/v08.py``) is that design; the bug
selects it. Kafka 0.11's controller rewrite (KAFKA-5028, then the 1.1 ``KafkaZkClient``)
removed this path.
"""

from __future__ import annotations

from model.controller.bugs import register
from model.controller.config import KafkaVersion

register(
    "KAFKA-4229",
    versions="0.8 to 0.10",
    doc="a controller's new session finds its own /controller and runs no controller",
    fixed_by="the single-threaded controller (KAFKA-5028, 0.11) and KafkaZkClient's election (1.1)",
    family=("KAFKA-1387",),
    implies={"kafka_version": KafkaVersion.KAFKA_0_8},
)
