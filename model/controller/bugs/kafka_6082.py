"""KAFKA-6082: a deposed controller's ZooKeeper writes land, fenced by nothing but the
partition's zkVersion.

Until Kafka 2.1 the controller's writes (``updateLeaderAndIsr``, ``createTopicPartitionStates``,
the admin znodes) were conditioned on the written znode's own version only. With the single
event thread an old controller whose session expired goes on with the events queued before its
expiry handling (the ZooKeeper client reconnects at once and retries the in-flight requests in
the new session): its writes land after the new controller read its context, which no longer
matches ZooKeeper, and a partition the zombie took offline is never elected again. PR 5101
(2.1.0) wraps every controller write in a ``multi`` with a check of ``/controller_epoch``'s
zkVersion (``checkControllerEpochZkVersion``), so a deposed controller's write fails
(``ControllerMovedException``).

The bug is two variant keys the model has: ``zk_write_fencing = partition-version`` (the write
without the epoch check) and ``session_expiry_handling = queued`` (the expiry handling of the
versions that had it: the client reconnects at once, in-flight requests go to the new session
and ``Expire`` waits behind the queued events; 2.2's clear-and-put, KAFKA-7235, leaves no
zombie to write).
"""

from __future__ import annotations

from model.controller.bugs import register
from model.controller.config import ExpiryHandling, ZkWriteFencing

register(
    "KAFKA-6082",
    versions="0.11 to 2.0 (0.8's writes alike: the partition's zkVersion only)",
    doc="a deposed controller's ZooKeeper writes land: no check of /controller_epoch's zkVersion",
    fixed_by="KAFKA-6082 (PR 5101: multi with the controller epoch zkVersion check, Kafka 2.1.0)",
    implies={
        "zk_write_fencing": ZkWriteFencing.PARTITION_VERSION,
        "session_expiry_handling": ExpiryHandling.QUEUED,
    },
)
