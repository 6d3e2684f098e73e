"""The guards of the controller's transition properties (``Property.guard``): where each is
false its properties hold by construction, so the engines skip them there.

Most are :class:`~explorer.core.ActionGuard` values of effects (``model/controller/effects.py``),
decided by what the step's action class declares it does, so a new action with the effect is
guarded like the others: the engines look them up once per action type instead of calling them
on every step (:class:`~explorer.core.TransitionChecks`). ``zk_changed`` reads the states and is called per
step. ``tests/test_guards.py`` checks each against its properties on every step of small
configurations.

Example
-------
>>> from model.controller import ControllerConfig, ControllerSystem
>>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
>>> controller_stepped(s, None, s), zk_changed(s, None, s._replace(zk=s.zk._replace(epoch=9)))
(False, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explorer.core import ActionGuard
from model.controller import State
from model.controller.effects import CONTROLLER_STEPS, Effect, processed_event_of
from model.controller.events import AutoPreferredReplicaLeaderElection, ReplicaLeaderElection

__all__ = [
    "controller_stepped",
    "delivers",
    "fetches",
    "gated",
    "processes_admin_unclean_election",
    "processes_auto_rebalance",
    "produces_or_fetches",
    "zk_changed",
]


def zk_changed(s: State, a: Any, t: State) -> bool:
    """The step changed ZooKeeper's tree: the guard of the transition properties about
    ZooKeeper, which hold on every step that shares its parent's ``Zk`` record (most do).

    >>> from model.controller import ControllerConfig, ControllerSystem
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> zk_changed(s, None, s), zk_changed(s, None, s._replace(zk=s.zk._replace(epoch=9)))
    (False, True)
    """
    return t.zk is not s.zk


def _auto_rebalance_event(s: State, a: Any, t: State) -> bool:
    return type(processed_event_of(a)) is AutoPreferredReplicaLeaderElection


def _admin_unclean_election_event(s: State, a: Any, t: State) -> bool:
    return type(processed_event_of(a)) is ReplicaLeaderElection


#: the step is a controller request's delivery (guard and ``applies`` of the broker-side
#: properties: they hold on every other step)
delivers = ActionGuard(Effect.DELIVERS_CONTROLLER_REQUEST)
#: the step was a controller's: an event processed or a ZooKeeper request served (whose reply
#: continues a parked controller), the only steps that change a controller context's state
#: machines (a crash or an expiry drops the context whole)
controller_stepped = ActionGuard(*CONTROLLER_STEPS)
#: the controller processed the auto-rebalance task's event
processes_auto_rebalance = ActionGuard(Effect.PROCESSES_CONTROLLER_EVENT, then=_auto_rebalance_event)
#: the controller processed an admin unclean election (ElectLeaders, ElectionType.UNCLEAN)
processes_admin_unclean_election = ActionGuard(
    Effect.PROCESSES_CONTROLLER_EVENT, then=_admin_unclean_election_event
)
#: a broker ends its controlled shutdown and stops
completes_shutdown = ActionGuard(Effect.COMPLETES_SHUTDOWN)
#: a record appended or fetched (the high-watermark properties)
produces_or_fetches = ActionGuard(Effect.PRODUCES, Effect.FETCHES)
#: a follower fetched (the truncation property)
fetches = ActionGuard(Effect.FETCHES)


def gated(gate: Callable[[Any], bool]) -> Callable[[Callable[[Any], bool]], Callable[[Any], bool]]:
    """A decorator: the state check ``body`` made one that holds wherever ``gate`` does not
    (``not gate(s) or body(s)``), carrying ``gate`` and ``body`` as attributes, which the serial
    search's monitor reads (``PropertyMonitor.check_child``): it evaluates a run of consecutive
    properties sharing one gate as a group, the gate once a state and the bodies only where it
    holds (the seven "once quiet" properties of ``controller_convergence.py`` share ``serving``,
    which holds on about one state in a thousand of controller-ref). Every other caller sees a
    plain check of the same verdict; the check keeps ``body``'s name, so a module-level one
    pickles by name.

    >>> @gated(lambda s: s > 0)
    ... def small(s):
    ...     "below ten when positive"
    ...     return s < 10
    >>> small(-50), small(5), small(50), small.gate(-50), small.__name__
    (True, True, False, False, 'small')
    """

    def wrap(body: Callable[[Any], bool]) -> Callable[[Any], bool]:
        def check(s: Any) -> bool:
            return not gate(s) or body(s)

        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(check, attr, getattr(body, attr, None))
        check.gate = gate  # type: ignore[attr-defined]
        check.body = body  # type: ignore[attr-defined]
        return check

    return wrap
