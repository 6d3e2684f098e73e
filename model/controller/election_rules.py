"""Two rules of ``KafkaController.elect`` kept apart from the controller's event loop: the epoch a
new controller writes, and whether a broker that finds itself in ``/controller`` starts a
controller (KAFKA-13407's fix, apache/kafka PR 11476, behind a key).

>>> ElectRules().next_controller_epoch(None, 4)  # type: ignore[arg-type]
5
"""

from __future__ import annotations

from explorer.mypyc_compat import mypyc_attr
from model.controller.base import ControllerBase


@mypyc_attr(allow_interpreted_subclasses=True)
class ElectRules:
    """The election's rules a seam may override (0.8's controller overrides the epoch)."""

    def already_elected_starts_controller(self, c: ControllerBase, epoch: int, version: int) -> bool:
        """``elect`` read ``/controller`` naming this broker: Kafka returns ("has been elected as
        the controller, so stopping the election process", KAFKA-13407 when it runs none);
        with ``start_controller_when_already_elected`` (PR 11476) it starts the controller
        unless its context already holds ``/controller_epoch`` and its version."""
        if not c.sys.cfg.start_controller_when_already_elected:
            return False
        ctx = c.ctx
        return ctx is None or (ctx.epoch, ctx.epoch_version) != (epoch, version)

    def next_controller_epoch(self, c: ControllerBase, epoch: int) -> int:
        """The epoch a new controller writes: ``newControllerEpoch = curEpoch + 1`` (2.x
        ``registerControllerAndIncrementControllerEpoch``; 0.8 ``incrementControllerEpoch``)."""
        return epoch + 1
