"""Fidelity properties of the controller model: rules the seeds state about *how* Kafka writes
its state, beyond the guarantees of ``invariants/controller.py``.

ISR order (seed 002, line 1333: "这个时候获取的isr信息的顺序就是 分区创建时候分配好的AR顺序 ... 因为在
其他情况下 ISR的顺序跟AR的顺序并不一致"): only a new partition's ISR is in assignment order. Every
later write keeps the ISR's own order: an expanding replica is appended
(``Partition.maybeExpandIsr``: ``inSyncReplicas + replica``), a shrink, ``doRemoveReplicasFromIsr``,
an offline or controlled-shutdown election filter the current ISR in place, an unclean election
writes ``[leader]``, a reassignment or preferred election keeps it (``newLeader``). Rules that take
"the first ISR member" (seed 000's ``ControlledShutdownLeaderSelector``: ``newIsr.headOption``)
depend on that order.

Registering (in ``invariants/controller.py``'s ``properties``)::

    from invariants.controller_fidelity import fidelity_properties
    props += fidelity_properties(config, sys)
"""

from __future__ import annotations

from typing import Any

from explorer.core import Property, transition
from model.controller import ControllerSystem, State
from model.election import keep_members

__all__ = ["fidelity_properties", "isr_order_follows", "isr_order_kept"]


def isr_order_follows(old: tuple[int, ...] | None, new: tuple[int, ...], assignment: tuple[int, ...]) -> bool:
    """The order rule for one written ISR: a new partition's ISR (``old`` is ``None``) is in
    assignment order; otherwise the members kept from ``old`` come first, in ``old``'s order,
    and new members are appended after them.

    >>> isr_order_follows(None, (0, 2), (0, 1, 2)), isr_order_follows(None, (2, 0), (0, 1, 2))
    (True, False)
    >>> isr_order_follows((1, 2), (1, 2, 0), (0, 1, 2)), isr_order_follows((1, 2), (0, 1, 2), (0, 1, 2))
    (True, False)
    >>> isr_order_follows((2, 0, 1), (2, 1), (0, 1, 2)), isr_order_follows((2, 0, 1), (1, 2), (0, 1, 2))
    (True, False)
    """
    if old is None:
        return new == keep_members(assignment, new)
    kept = keep_members(old, new)
    return new[: len(kept)] == kept


def isr_order_kept(sys: ControllerSystem):
    """The transition property over every write of a partition state znode (by the controller or
    by a leader's ISR change)."""
    replicas = sys.cfg.replicas()

    def check(s: State, a: Any, t: State) -> bool:
        """Every ISR written to ZooKeeper follows Kafka's order: assignment order only when the
        partition is created, otherwise the previous ISR's order with new members appended
        (seed 002 line 1333)."""
        before = s.zk.parts
        after = t.zk.parts
        if before is after:
            return True
        ar = t.zk.ar
        for p, new in enumerate(after):
            old = before[p]
            if new is None or new is old:
                continue
            assignment = ar[p] if ar and ar[p] else replicas[p]
            if not isr_order_follows(None if old is None else old.isr, new.isr, assignment):
                return False
        return True

    return check


def _zk_changed(s: State, a: Any, t: State) -> bool:
    return t.zk is not s.zk


def fidelity_properties(config: Any, sys: ControllerSystem, guard: Any = None) -> list[Property]:
    """The fidelity properties for ``config`` (``sys`` is the system built from it); ``guard``
    (default: the ZooKeeper tree changed) lets ``invariants/controller.py`` pass its own
    ``zk_changed``, which ``tests/test_guards.py`` expects on every controller transition property.

    >>> from model.controller import ControllerConfig
    >>> [p.name for p in fidelity_properties(ControllerConfig(), ControllerSystem(ControllerConfig()))]
    ['isr_order_kept']
    """
    del config
    return [
        transition(
            "isr_order_kept",
            isr_order_kept(sys),
            "every ISR written keeps Kafka's order: assignment order only at creation, else the "
            "previous order with new members appended (seed 002: ISR 的顺序跟 AR 的顺序并不一致)",
            guard=_zk_changed if guard is None else guard,
        )
    ]
