"""Kafka 0.8's ``ZookeeperLeaderElector`` (seed 000: 67-199), the controller election of the
legacy elector (``elector = "legacy"``, implied by ``kafka_version = "0.8"``): read
``/controller``; if none, create it (an ephemeral: NodeExists when another broker won); the
winner then reads ``/controller_epoch`` and increments it conditioned on the version it read
(``onControllerFailover``'s ``readControllerEpochFromZookeeper`` and
``incrementControllerEpoch``), and a lost increment (``ControllerMovedException``) resigns and
deletes ``/controller``. The 2.x election (one ``multi``) is ``KafkaController``'s.
"""

from __future__ import annotations

from model.controller.base import Component, ControllerBase
from model.controller.continuations import (
    LegacyControllerCreated,
    LegacyControllerRead,
    LegacyEpochIncremented,
    LegacyEpochRead,
    Parked,
)
from model.controller.messages import (
    Q_CREATE_CTL,
    Q_DELETE_CTL,
    Q_INC_EPOCH,
    Q_READ_CTL,
    Q_READ_EPOCH,
    CreateControllerPath,
    DeleteControllerPath,
    GetControllerIdAndEpoch,
    IncrementControllerEpoch,
    ReadControllerEpoch,
)
from model.controller.program import (
    OnControllerFailover,
)


class ZookeeperLeaderElector(Component):
    """``ZookeeperLeaderElector.elect`` and its continuations (see the module docstring)."""

    def elect(self, c: ControllerBase, rest: tuple) -> None:
        """``elect``: read ``/controller`` (``rest`` runs after the election)."""
        c.send_zk(GetControllerIdAndEpoch(Q_READ_CTL))
        c.park(LegacyControllerRead(rest=rest))

    def resume(self, c: ControllerBase, k: Parked, resp: tuple) -> None:
        """Continue the election parked as ``k`` with ZooKeeper's response ``resp``."""
        run = self.kafka_controller.run
        rest = k.rest
        match k:
            case LegacyControllerRead():
                ctl = resp[1]
                c.active_id = ctl
                if ctl != -1:
                    run(c, rest)
                    return
                c.send_zk(CreateControllerPath(Q_CREATE_CTL))
                c.park(LegacyControllerCreated(rest=rest))
            case LegacyControllerCreated():
                if resp[1]:
                    c.active_id = c.me
                    # 0.8 onControllerFailover: readControllerEpochFromZookeeper; incrementControllerEpoch
                    c.send_zk(ReadControllerEpoch(Q_READ_EPOCH))
                    c.park(LegacyEpochRead(rest=rest))
                else:
                    c.active_id = resp[2]
                    run(c, rest)
            case LegacyEpochRead():
                epoch = self.kafka_controller.next_controller_epoch(c, resp[1])
                c.send_zk(IncrementControllerEpoch(Q_INC_EPOCH, epoch, resp[2]))
                c.park(LegacyEpochIncremented(rest=rest))
            case LegacyEpochIncremented():
                if resp[1]:
                    c.ctx = c.sys.empty_ctx(resp[2], resp[3])
                    run(c, (OnControllerFailover(), *rest))
                else:
                    # ControllerMovedException inside elect -> resign(): leaderId = -1; deletePath
                    c.active_id = -1
                    c.send_zk(DeleteControllerPath(Q_DELETE_CTL))
                    run(c, rest)
            case _:  # pragma: no cover
                raise AssertionError(f"unknown continuation {k!r} for response {resp!r}")
