"""What a controller step does: its effects, declared by each action class, and the way to ask
a step what it carries (the ZooKeeper request it applies, the controller request it delivers).

Properties, guards (``invariants/controller_guards.py``) and coverage (``coverage.py``) select
steps by effect, never by action class, so a new action (a plug-in fault, a network fault)
that declares, say, :attr:`Effect.APPLIES_ZK_REQUEST` is checked by every property about
applied ZooKeeper requests without any edit there. An action class declares its effects with
:func:`explorer.core.effects`; a fault declares them in its registration
(``@fault(Action, "max_...", effects=(Effect.DELIVERS_CONTROLLER_REQUEST,))``). Each effect
names the fields every action with it has (:attr:`Effect.fields`), so a property reads
``a.broker`` or ``a.session`` of any step with the effect; the request or message a step
carries is read through :func:`zk_request_of`, :func:`delivered_message_of`,
:func:`processed_event_of` and :func:`zk_response_of`.

>>> from model.controller.actions import Crash, Deliver, ZkServe
>>> from model.controller.messages import DeleteControllerPath, LeaderAndIsrRequest
>>> a = ZkServe(0, 1, DeleteControllerPath())
>>> does(a, Effect.APPLIES_ZK_REQUEST), zk_request_of(a) == DeleteControllerPath()
(True, True)
>>> zk_request_of(Crash(0)) is None, delivered_message_of(Deliver(0, 1, LeaderAndIsrRequest(2, 1, ()))).kafka_name
(True, 'LeaderAndIsr')
"""

from __future__ import annotations

import enum
from typing import Any

from explorer.core import EFFECTS_ATTR
from model.controller.messages import BROKER_REQUESTS

__all__ = [
    "CONTROLLER_STEPS",
    "Effect",
    "delivered_message_of",
    "does",
    "does_any",
    "processed_event_of",
    "zk_request_of",
    "zk_response_of",
]


class Effect(enum.Enum):
    """One thing a controller step does. The value is its description; :attr:`fields` the
    fields an action declaring it must have (checked when it is declared)."""

    PROCESSES_CONTROLLER_EVENT = "processes a controller event"
    APPLIES_ZK_REQUEST = "applies a ZooKeeper request"
    REPLIES_ZK_RESPONSE = "hands a broker a ZooKeeper response"
    DELIVERS_CONTROLLER_REQUEST = "applies a controller request at a broker"
    CRASHES_BROKER = "crashes a broker"
    RESTARTS_BROKER = "restarts a broker with a new session"
    EXPIRES_SESSION = "expires a ZooKeeper session (server side)"
    NOTICES_SESSION_EXPIRY = "a broker notices its session expired"
    PRODUCES = "appends a record at a leader"
    FETCHES = "a follower fetches from a leader"
    SHRINKS_ISR = "a leader shrinks an ISR"
    ADMIN_REQUEST = "an admin client's request (a ZooKeeper write, or ElectLeaders)"
    ADMIN_ELECTS_LEADERS = "an admin client sends ElectLeaders to the controller"
    FIRES_AUTO_REBALANCE = "the controller's scheduler fires the auto rebalance task"
    REQUESTS_CONTROLLED_SHUTDOWN = "a broker sends ControlledShutdownRequest"
    COMPLETES_SHUTDOWN = "a broker stops after its controlled shutdown"
    TIME_PASSES = "time passes (stuttering)"

    # an effect is its own member (identity is equality), so the C identity hash serves: ``Enum``'s
    # hash is a Python method, called for every ``effect in ...`` of every step
    __hash__ = object.__hash__

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields of every action with this effect (``req``: the ZooKeeper request applied,
        ``msg``: the controller request delivered, read through :func:`zk_request_of` and
        :func:`delivered_message_of`).

        >>> Effect.APPLIES_ZK_REQUEST.fields
        ('broker', 'session', 'req')
        """
        return _FIELDS.get(self, ())


_FIELDS: dict[Effect, tuple[str, ...]] = {
    Effect.PROCESSES_CONTROLLER_EVENT: ("broker", "event"),
    Effect.APPLIES_ZK_REQUEST: ("broker", "session", "req"),
    Effect.REPLIES_ZK_RESPONSE: ("broker", "resp"),
    Effect.DELIVERS_CONTROLLER_REQUEST: ("sender", "dest", "msg"),
    Effect.CRASHES_BROKER: ("broker",),
    Effect.RESTARTS_BROKER: ("broker", "session"),
    Effect.EXPIRES_SESSION: ("broker", "session"),
    Effect.NOTICES_SESSION_EXPIRY: ("broker", "session"),
    Effect.PRODUCES: ("broker", "partition"),
    Effect.FETCHES: ("broker", "partition", "leader"),
    Effect.SHRINKS_ISR: ("broker", "partition", "follower"),
    Effect.ADMIN_ELECTS_LEADERS: ("controller",),
    Effect.FIRES_AUTO_REBALANCE: ("broker",),
    Effect.REQUESTS_CONTROLLED_SHUTDOWN: ("broker", "controller"),
    Effect.COMPLETES_SHUTDOWN: ("broker", "session"),
}


_NONE: frozenset[Effect] = frozenset()


def does(a: Any, effect: Effect) -> bool:
    """Whether step ``a`` has ``effect`` (its class declares it).

    >>> from model.controller.actions import Crash
    >>> does(Crash(1), Effect.CRASHES_BROKER), does(Crash(1), Effect.RESTARTS_BROKER)
    (True, False)
    """
    return effect in getattr(type(a), EFFECTS_ATTR, _NONE)


#: the steps that run a controller's code: an event processed, or a ZooKeeper request applied
#: (whose response continues the parked controller)
CONTROLLER_STEPS = frozenset({Effect.PROCESSES_CONTROLLER_EVENT, Effect.APPLIES_ZK_REQUEST})


def does_any(a: Any, effects: frozenset[Effect]) -> bool:
    """Whether step ``a`` has one of ``effects``.

    >>> from model.controller.actions import Crash
    >>> does_any(Crash(1), CONTROLLER_STEPS)
    False
    """
    return not effects.isdisjoint(getattr(type(a), EFFECTS_ATTR, _NONE))


def zk_request_of(a: Any) -> Any:
    """The ZooKeeper request step ``a`` applies (:attr:`Effect.APPLIES_ZK_REQUEST`), or None.

    >>> from model.controller.actions import ZkServe
    >>> from model.controller.messages import DeleteControllerPath
    >>> zk_request_of(ZkServe(0, 1, DeleteControllerPath())).kafka_call
    'delete /controller'
    """
    return a.req if Effect.APPLIES_ZK_REQUEST in getattr(type(a), EFFECTS_ATTR, _NONE) else None


def zk_response_of(a: Any) -> Any:
    """The ZooKeeper response step ``a`` hands a broker (:attr:`Effect.REPLIES_ZK_RESPONSE`),
    or None.

    >>> from model.controller.actions import Crash
    >>> zk_response_of(Crash(0)) is None
    True
    """
    return a.resp if Effect.REPLIES_ZK_RESPONSE in getattr(type(a), EFFECTS_ATTR, _NONE) else None


def delivered_message_of(a: Any) -> Any:
    """The controller request (a ``BrokerRequest`` record) step ``a`` applies at broker
    ``a.dest`` (:attr:`Effect.DELIVERS_CONTROLLER_REQUEST`), or None.

    >>> from model.controller.actions import Deliver
    >>> from model.controller.messages import LeaderAndIsrRequest
    >>> delivered_message_of(Deliver(0, 1, LeaderAndIsrRequest(2, 1, ()))).controller_epoch
    2
    """
    if Effect.DELIVERS_CONTROLLER_REQUEST not in getattr(type(a), EFFECTS_ATTR, _NONE):
        return None
    return BROKER_REQUESTS.view(a.msg)


def processed_event_of(a: Any) -> Any:
    """The controller event step ``a`` processes (:attr:`Effect.PROCESSES_CONTROLLER_EVENT`),
    or None.

    >>> from model.controller.actions import ProcessEvent
    >>> from model.controller.events import ControllerChange
    >>> processed_event_of(ProcessEvent(0, ControllerChange(1))).kafka_name
    'ControllerChange'
    """
    return a.event if Effect.PROCESSES_CONTROLLER_EVENT in getattr(type(a), EFFECTS_ATTR, _NONE) else None
