"""Kafka 0.8's ``ZookeeperLeaderElector`` (seed 000: 67-199), the controller election of the
legacy elector (``elector = "legacy"``, implied by ``kafka_version = "0.8"``): read
``/controller``; if none, create it (an ephemeral: NodeExists when another broker won); the
winner then reads ``/controller_epoch`` and increments it conditioned on the version it read
(``onControllerFailover``'s ``readControllerEpochFromZookeeper`` and
``incrementControllerEpoch``), and a lost increment (``ControllerMovedException``) resigns and
deletes ``/controller``. The 2.x election (one ``multi``) is ``KafkaController``'s.
"""

from __future__ import annotations

from typing import Any

from explorer.mypyc_compat import mypyc_attr
from model.controller.base import Component, ControllerBase
from model.controller.continuations import (
    LegacyControllerCreated,
    LegacyControllerRead,
    LegacyEpochIncremented,
    LegacyEpochRead,
    Parked,
)
from model.controller.messages import (
    CreateControllerPath,
    DeleteControllerPath,
    GetControllerIdAndEpoch,
    IncrementControllerEpoch,
    ReadControllerEpoch,
)
from model.controller.program import (
    OnControllerFailover,
)


@mypyc_attr(allow_interpreted_subclasses=True)
class ZookeeperLeaderElector(Component):
    """``ZookeeperLeaderElector.elect`` and its continuations (see the module docstring)."""

    def elect(self, c: ControllerBase, rest: tuple) -> None:
        """``elect``: read ``/controller`` (``rest`` runs after the election)."""
        c.send_zk(GetControllerIdAndEpoch())
        c.park(LegacyControllerRead(rest=rest))

    def resume(self, c: ControllerBase, k: Parked, resp: Any) -> None:
        """Continue the election parked as ``k`` with ZooKeeper's response ``resp``."""
        run = self.kafka_controller.run
        rest = k.rest
        match k:
            case LegacyControllerRead():
                ctl = resp.controller_id
                c.active_id = ctl
                if ctl != -1:
                    run(c, rest)
                    return
                c.send_zk(CreateControllerPath())
                c.park(LegacyControllerCreated(rest=rest))
            case LegacyControllerCreated():
                if resp.ok:
                    c.active_id = c.me
                    # 0.8 onControllerFailover: readControllerEpochFromZookeeper; incrementControllerEpoch
                    c.send_zk(ReadControllerEpoch())
                    c.park(LegacyEpochRead(rest=rest))
                else:
                    c.active_id = resp.controller_id
                    run(c, rest)
            case LegacyEpochRead():
                epoch = self.kafka_controller.next_controller_epoch(c, resp.epoch)
                c.send_zk(IncrementControllerEpoch(epoch, resp.epoch_zk_version))
                c.park(LegacyEpochIncremented(rest=rest))
            case LegacyEpochIncremented():
                if resp.ok:
                    c.ctx = c.sys.empty_ctx(resp.epoch, resp.epoch_zk_version)
                    run(c, (OnControllerFailover(), *rest))
                else:
                    # ControllerMovedException inside elect -> resign(): leaderId = -1; deletePath
                    c.active_id = -1
                    c.send_zk(DeleteControllerPath())
                    run(c, rest)
            case _:  # pragma: no cover
                raise AssertionError(f"unknown continuation {k!r} for response {resp!r}")
