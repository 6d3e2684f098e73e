"""Properties found by a probe of plausible one-line controller mistakes (issue 35,
``docs/mutation.md``, "A probe of plausible mistakes"): each reads what Kafka writes or sends at
the step where it does so, named after the Kafka method that guarantees it.

* ``controlled_shutdown_isr_excludes_shutting_down`` (transition): a controlled-shutdown
  election writes the ISR it read minus the brokers shutting down (seed 002
  ``leaderForControlledShutdown``: ``newIsr = isr.filter(replica =>
  !shuttingDownBrokers.contains(replica))``), so no producer with acks=all waits on a broker
  that is leaving.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from explorer.core import Property, transition
from invariants.controller_guards import zk_changed
from model.controller import ControllerSystem, State
from model.controller.actions import ZkServe
from model.controller.messages import S_CONTROLLED_SHUTDOWN, UpdateLeaderAndIsr

__all__ = ["controlled_shutdown_isr_excludes_shutting_down", "observed_properties"]


def _landed(s: State, a: Any, t: State, strategy: int) -> list[tuple[int, Any, Any]]:
    """The partition-state writes of ``strategy`` that the step ``a`` (a ZooKeeper server step)
    landed: (partition, state before, state after)."""
    if type(a) is not ZkServe or type(a.req) is not UpdateLeaderAndIsr or a.req.strategy != strategy:
        return []
    before, after = s.zk.parts, t.zk.parts
    if before is after:
        return []
    return [(p, before[p], after[p]) for p, _ in a.req.writes if after[p] is not before[p]]


def controlled_shutdown_isr_excludes_shutting_down(s: State, a: Any, t: State) -> bool:
    """A controlled-shutdown election that lands writes the ISR it read without the brokers the
    writing controller counts as shutting down, in the ISR's order (seed 002
    ``leaderForControlledShutdown``).

    >>> from model.controller import ControllerConfig
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> controlled_shutdown_isr_excludes_shutting_down(s, None, s)
    True
    """
    landed = _landed(s, a, t, S_CONTROLLED_SHUTDOWN)
    if not landed:
        return True
    ctx = s.nodes[a.broker].ctx
    if ctx is None:
        return True
    shutting = ctx.shutting
    for _, old, new in landed:
        if old is None or new is None:
            continue
        if new.isr != tuple(r for r in old.isr if r not in shutting):
            return False
    return True


def observed_properties(config: Any, sys: ControllerSystem) -> list[Property]:
    """The probe's properties that apply to ``config`` (``sys`` is the system built from it).

    >>> from model.controller import ControllerConfig
    >>> c = ControllerConfig(max_controlled_shutdowns=1)
    >>> [p.name for p in observed_properties(c, ControllerSystem(c))]
    ['controlled_shutdown_isr_excludes_shutting_down']
    """
    props: list[Property] = []
    if config.max_controlled_shutdowns:
        props.append(
            transition(
                "controlled_shutdown_isr_excludes_shutting_down",
                controlled_shutdown_isr_excludes_shutting_down,
                "a controlled-shutdown election writes the ISR it read minus the shutting-down brokers "
                "(seed 002 leaderForControlledShutdown: newIsr = isr.filter(!shuttingDownBrokers))",
                guard=zk_changed,
            )
        )
    # each reads every broker and partition alike: the same verdict under every renaming
    return [dataclasses.replace(p, symmetric=True) for p in props]
