"""KAFKA-13407: a broker wins the election, believes it is already elected and runs no
controller: ``/controller`` names it and no broker is the controller, for good.

Kafka's ``elect`` (2.x and every later ZooKeeper-mode release: seed 004) reads
``/controller`` first and, finding any id there, returns ("Broker <id> has been elected as the
controller, so stopping the election process"), even when the id is its own and it runs no
controller. Its reporters met it restarting the ZooKeeper leader: a broker's session was
expired, but ZooKeeper kept the session's ephemerals (``/controller`` with this broker's id:
ZOOKEEPER-2985, ``faults/orphaned_session.py``); the broker resigned on the expiry
(``Expire``), registered again in its new session (Kafka 2.2's KAFKA-7165 workaround re-creates
``/brokers/ids/<id>``) and re-elected: ``elect`` read its own id and returned. The other brokers
read the same id and wait, and no watch fires again, since the orphaned ``/controller`` is
never deleted. The proposed fix (apache/kafka PR 11476, "Always start controller when broker
wins election", not merged: 3.x's ``elect`` still returns) starts the controller when the id
read is its own and its context does not hold ``/controller_epoch``: the model's key
``start_controller_when_already_elected``.

The model's ``elect`` is Kafka's, so the bug needs no seam: it is its trigger, ZooKeeper
keeping an expired session's ephemerals (``max_orphaned_sessions = 1``), which the bug implies;
its entry's fixed twin sets that key and the fix (``bug-KAFKA-13407-fixed``).
"""

from __future__ import annotations

from model.controller.bugs import register

register(
    "KAFKA-13407",
    versions="2.x and 3.x (ZooKeeper mode; the proposed fix was never merged)",
    doc="elect reads its own id in the /controller its expired session left and starts no controller",
    fixed_by="apache/kafka PR 11476 (start_controller_when_already_elected; not merged upstream)",
    family=("KAFKA-7165",),
    implies={"max_orphaned_sessions": 1},
)
