"""A controller request delivered twice: Kafka's ``RequestSendThread`` sends the head request
of a broker's queue and, if the connection fails before the response arrives, reconnects and
sends it again (``isSendSuccessful = false; backoff()``), so the broker may apply a request it
already applied. The model's step: the broker applies the head request of the channel, its
response is lost (no response callback runs) and the request stays at the head, to be delivered
again: the network's lost response on the controller channels (``network.py``). Bounded by
``max_duplicate_deliveries``.

>>> from model.controller import ControllerConfig, ControllerSystem
>>> sys = ControllerSystem(ControllerConfig(max_duplicate_deliveries=1, start="cold"))
>>> "DuplicateDelivery" in sys.action_kinds()
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from model.controller.actions import Deliver
from model.controller.effects import Effect
from model.controller.faults import fault
from model.controller.messages import BROKER_REQUESTS
from model.controller.network import CONTROLLER_CHANNELS
from model.controller.state import State


class DuplicateDelivery(NamedTuple):
    """A broker applies the head request of a controller's channel, whose response is then lost
    to a connection reset: the controller will send it again."""

    sender: int
    dest: int
    msg: tuple

    def __str__(self) -> str:
        first = str(Deliver(self.sender, self.dest, BROKER_REQUESTS.view(self.msg))).replace(
            " receives ", " receives again ", 1
        )
        return f"{first}; the response is lost and the request will be resent"

    def arrow(self) -> tuple[str, str, str]:
        """The sequence-diagram arrow: controller to broker, the request's name."""
        deliver = str(Deliver(self.sender, self.dest, BROKER_REQUESTS.view(self.msg)))
        name = deliver.split(" receives ", 1)[1].split(" from ", 1)[0]
        return f"broker {self.sender}", f"broker {self.dest}", f"{name} (resent after a reset)"


@fault(DuplicateDelivery, "max_duplicate_deliveries", effects=(Effect.DELIVERS_CONTROLLER_REQUEST,))
def duplicate_deliveries(system: Any, s: State) -> Iterator[tuple[Any, State]]:
    """The network's lost response on the controller channels (``network.py``): each channel
    whose head request could be delivered may deliver it without consuming it."""
    nb = system.nb
    for i, _, t in CONTROLLER_CHANNELS.lose_response(system, s):
        sender, d = divmod(i, nb)
        yield DuplicateDelivery(sender, d, s.chans[i][0]), t
