"""A ZooKeeper connection lost and re-established in the same session: the server applied the
head request of a broker's session, the connection drops before the response arrives, and the
client reconnects within the session timeout and resends every request that got
``CONNECTIONLOSS``, applied or not (KafkaZkClient's ``retryRequestsUntilConnected``; 0.8: I0Itec
``ZkClient.retryUntilConnected``). The session, its ephemerals and its watches stay. The model's
step is the network's lost response on the ZooKeeper client connections (``network.py``); what
the resent request then meets (NodeExists, BadVersion, NoNode where its first copy landed) is
answered by Kafka's own checks (``ZooKeeperServer.check_retried``). Bounded by
``max_zk_connection_losses``.

>>> from model.controller import ControllerConfig, ControllerSystem
>>> sys = ControllerSystem(ControllerConfig(max_zk_connection_losses=1, start="cold"))
>>> "ZkConnectionLoss" in sys.action_kinds()
True
>>> a = next(a for a, _ in sys.successors(sys.init_states()[0]) if type(a) is ZkConnectionLoss)
>>> str(a)  # doctest: +NORMALIZE_WHITESPACE
'ZooKeeper: applies create /brokers/ids/<id> (ephemeral) from session 1 (broker 0); the connection
 is lost before the response, broker 0 reconnects in session 1 and resends it'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from model.controller.actions import ZkServe
from model.controller.effects import Effect
from model.controller.faults import fault
from model.controller.network import ZK_SESSIONS
from model.controller.state import State


class ZkConnectionLoss(NamedTuple):
    """The ZooKeeper server applies the head request of a broker's session; the connection is
    then lost before the response arrives, and the broker resends it in the same session."""

    broker: int
    session: int
    req: Any  #: the ZooKeeper request applied (``messages.py``), still at the head of the session

    def __str__(self) -> str:
        served = str(ZkServe(self.broker, self.session, self.req))
        return (
            f"{served}; the connection is lost before the response, broker {self.broker} "
            f"reconnects in session {self.session} and resends it"
        )

    def arrow(self) -> tuple[str, str, str]:
        """The sequence-diagram arrow: broker to ZooKeeper, the request's name."""
        name = getattr(self.req, "kafka_call", type(self.req).__name__)
        return f"broker {self.broker}", "ZooKeeper", f"{name} (applied; connection lost, resent)"


@fault(ZkConnectionLoss, "max_zk_connection_losses", effects=(Effect.APPLIES_ZK_REQUEST,))
def zk_connection_losses(system: Any, s: State) -> Iterator[tuple[Any, State]]:
    """Each open session with a request in flight may lose its connection after the server
    applied the head request."""
    for b, a, t in ZK_SESSIONS.lose_response(system, s):
        yield ZkConnectionLoss(b, a.session, a.req), t
