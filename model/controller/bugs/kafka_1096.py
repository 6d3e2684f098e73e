"""KAFKA-1096: a controller out of a long pause adopts the new controller's epoch.

Kafka 0.8.0 and 0.8.1 constructed every broker's ``KafkaController`` with a
``ControllerEpochListener`` on ``/controller_epoch`` (``registerControllerChangedListener``):
each data change ran ``readControllerEpochFromZookeeper`` under the controller lock, which set
``controllerContext.epoch`` and ``epochZkVersion`` to what the znode held *then*. A controller
whose session expired while it was paused (a long GC) still had its listener's event queued
(its own increment of the epoch fires it); when it ran, the ZkClient retried its read in the new
session and read the epoch the *new* controller had written. Until its ``handleNewSession``
(queued behind) resigned, the old controller acted with the new epoch: two controllers shared
one epoch, the brokers accepted the zombie's requests, and the epoch no longer told them apart.
Fixed in 0.8.2 (commit 62f2087): the listener is gone; ``onControllerFailover`` reads the
epoch itself and ``onControllerResignation`` resets it.

The variant (implies ``kafka_version = "0.8"``): every live broker with a live session watches
``/controller_epoch`` (the listener is registered in the constructor, re-installed by ZkClient in
a new session); an ``incrementControllerEpoch`` that lands queues ``ControllerEpochChange`` at
each, the writer included. Processing it reads ``/controller_epoch`` and, on a broker acting as
controller, sets its context's epoch and zkVersion. The model's 0.8 failover keeps 0.8.2's
fresh read of the epoch (0.8.1 incremented the listener's value, which is the znode's unless
the listener's event is still queued; then the conditional increment fails, the broker resigns
and elects again: a longer path to the same election), and a broker that is not the controller
holds no context for the listener to set.
"""

from __future__ import annotations

from typing import Any

from explorer.speedups import set_item
from model.controller.base import ControllerBase
from model.controller.bugs import bug
from model.controller.config import KafkaVersion
from model.controller.continuations import ControllerEpochListenerRead
from model.controller.controller import KafkaController
from model.controller.events import ControllerEpochChange, ControllerEvent
from model.controller.messages import IncrementControllerEpoch, ReadControllerEpoch
from model.controller.state import State
from model.controller.zookeeper import ZooKeeperServer


class Kafka1096ZooKeeper(ZooKeeperServer):
    """The server with every broker's ``ControllerEpochListener`` watching ``/controller_epoch``."""

    def apply(self, s: State, b: int) -> tuple[Any, State, Any]:
        """The request applied; an epoch increment that lands fires the epoch watch of every
        live broker with a live session (the writer's own included), once per queue."""
        act, t, resp = super().apply(s, b)
        if type(act.req) is IncrementControllerEpoch and t.zk.epoch_version != s.zk.epoch_version:
            ev = ControllerEpochChange()
            nodes = t.nodes
            for i, n in enumerate(nodes):
                if n.alive and n.session != 0 and not n.expired and ev not in n.events:
                    nodes = set_item(nodes, i, n._replace(events=(*n.events, ev)))
            t = t._replace(nodes=nodes)
        return act, t, resp


@bug(
    "KAFKA-1096",
    versions="0.8.0 to 0.8.1",
    doc="a controller out of a long pause adopts the new controller's epoch from /controller_epoch",
    fixed_by="KAFKA-1096 (ControllerEpochListener removed; the failover reads the epoch, Kafka 0.8.2)",
    implies={"kafka_version": KafkaVersion.KAFKA_0_8},
    also=(Kafka1096ZooKeeper,),
)
class Kafka1096(KafkaController):
    """The controller with 0.8.1's ``ControllerEpochListener``."""

    def process_event(self, c: ControllerBase, ev: ControllerEvent) -> None:
        """``ControllerEpochChange``: ``readControllerEpochFromZookeeper`` (a read of
        ``/controller_epoch``); the other events as before."""
        if type(ev) is ControllerEpochChange:
            c.send_zk(ReadControllerEpoch())
            c.park(ControllerEpochListenerRead())
            return
        super().process_event(c, ev)

    def resume(self, c: ControllerBase, resp: Any) -> None:
        """The listener's read answered: ``controllerContext.epoch = epochData._1``,
        ``epochZkVersion = epochData._2.getVersion`` on a broker acting as controller (the bug)."""
        k = c.pending
        if type(k) is not ControllerEpochListenerRead:
            super().resume(c, resp)
            return
        c.pending = None
        if c.ctx is not None:
            c.ctx = c.ctx._replace(epoch=resp.epoch, epoch_version=resp.epoch_zk_version)
        self.run(c, k.rest)
