"""KAFKA-1387 (with KAFKA-1029): after a session expiry, the broker's re-registration meets the
``/brokers/ids/<id>`` its own new session already created, and loops forever.

Kafka 0.8's ``KafkaHealthcheck`` re-registers on every ``handleNewSession`` with
``ZkUtils.createEphemeralPathExpectConflictHandleZKBug`` (0.8.1 ``registerBrokerInZk``): on
NodeExists it reads the node, and when the stored data are not what this call wrote (the
registration carries a fresh timestamp) but name the same broker (the checker), it decides
"I wrote this conflicted ephemeral node a while back in a different session" (the ZooKeeper
bug of KAFKA-1029: an expired session's ephemeral lingering), sleeps and retries, until the
node goes away. When the node was in fact created by its *current* session it never goes
away: the loop runs forever on ZkClient's event thread, so no listener of that broker (its
controller's, its elector's) runs again. The node of its own session comes from I0Itec
ZkClient's ``retryUntilConnected``: the registration create in flight when the session expired
is retried in the new session and lands there first, then ``handleNewSession``'s register()
meets it (the JIRA's trigger is the same with two new sessions queued). Fixed in 0.9 by
``ZKCheckedEphemeral`` (the node's ephemeral owner is the current session: created), which
2.x's ``KafkaZkClient.checkedEphemeralCreate`` keeps: the model's ``RegisterBroker`` of the
same session succeeds.

The bug is the server's answer to a ``handleNewSession`` registration (``RegisterBroker(False)``,
the legacy client's) that meets its own session's node: NodeExists, read, back off, retry,
forever, which the model states as the request staying at the head of the session, served
again and again with nothing changed: every later request of the broker waits behind it, so
the broker's next ZooKeeper-bound controller work parks for good (the event thread stuck).
The startup registration's own retry (``RegisterBroker(True)``, the same call, the same data)
still succeeds, as ``createEphemeralPathExpectConflict``'s equal-data check makes it. A
``handleNewSession`` registration resent after a lost response (``max_zk_connection_losses``)
would also find equal data in Kafka; the model cannot tell that copy apart, so the bug is
meant without connection losses. The model's legacy client sends the re-registration at the
notice (``Brokers.notice_expiry``), ahead of the requests of the controller's own
``handleNewSession``; Kafka 0.8 subscribed the controller's listener first (``KafkaServer.startup``:
``kafkaController.startup()`` before ``kafkaHealthcheck.startup()``), so there the broker would
elect (and may fail over) before the loop starts and then go deaf to every watch; here the loop
also holds back its election. Either way its controller event queue never drains.
"""

from __future__ import annotations

from typing import Any

from model.controller.actions import ZkServe
from model.controller.bugs import bug
from model.controller.config import KafkaVersion
from model.controller.messages import REQUESTS, RegisterBroker
from model.controller.state import State
from model.controller.zookeeper import ZooKeeperServer


def registration_loops(s: State, b: int) -> bool:
    """Broker ``b``'s head request is a ``handleNewSession`` registration whose node its own
    current session already holds: 0.8's ``createEphemeralPathExpectConflictHandleZKBug`` loop.

    >>> from model.controller import ControllerConfig, ControllerSystem
    >>> registration_loops(ControllerSystem(ControllerConfig()).init_states()[0], 0)
    False
    """
    n = s.nodes[b]
    if not n.zk_out:
        return False
    req = n.zk_out[0]
    if type(req) is tuple:
        req = REQUESTS.view(req)
    reg = s.zk.brokers[b]
    return type(req) is RegisterBroker and not req.reelect and reg is not None and reg[0] == n.session


@bug(
    "KAFKA-1387",
    versions="0.8.0 to 0.8.2",
    doc="a re-registration meets the node its own new session created and backs off forever",
    fixed_by="KAFKA-1387 (ZKCheckedEphemeral: a node owned by the current session is created, Kafka 0.9)",
    family=("KAFKA-1029", "KAFKA-7165"),
    implies={"kafka_version": KafkaVersion.KAFKA_0_8},
)
class Kafka1387(ZooKeeperServer):
    """The server's answer to 0.8's ``createEphemeralPathExpectConflictHandleZKBug`` registration
    that meets its own session's node: no answer the loop accepts, ever."""

    def apply(self, s: State, b: int) -> tuple[Any, State, Any]:
        """``registerBrokerInZk`` meeting its own session's node: NodeExists, the data read, not
        this call's but this broker's, back off and retry (the request stays, nothing changes);
        otherwise the server's own step."""
        if registration_loops(s, b):
            req = s.nodes[b].zk_out[0]
            if type(req) is tuple:
                req = REQUESTS.view(req)
            return ZkServe(b, s.nodes[b].session, req), s, None
        return super().apply(s, b)
