"""What a reassignment must leave behind when it ends unfinished (issue 58's bug zoo, KAFKA-4214).

* ``reassignment_never_abandoned_midway``: when a partition's reassignment leaves
  ``/admin/reassign_partitions`` unfinished (``removePartitionsFromReassignedPartitions`` by a
  controller that did not complete it), the partition's assignment in ``/brokers/topics`` is
  the one it had before (OAR) or already its target (RAR), never the OAR + RAR of a
  reassignment under way (seed 001 分区副本迁移, step 1 writes AR = OAR + RAR and only step 10
  writes AR = RAR). Since Kafka 0.10.1 the controller refuses a reassignment only before it
  starts (its topic is queued for deletion, or RAR is already the assignment: seed 001); a
  refusal after step 1 leaves the partition with replicas nobody will remove, the old leader
  and old replicas in place, and the admin's request dropped. Kafka 0.8.0 to 0.10.0 refused
  also when a new replica's broker was down, and a new controller resumes the reassignments in
  progress through the same check, so a controller that failed over while the target broker was
  down failed the reassignment half-done (KAFKA-4214: "the controller and a broker receiving a
  new replica are bounced at the same time"). A partition of a topic queued for deletion is
  left out: 2.x drops its reassignment at a failover whatever its step, and the topic goes.
  OAR is the configuration's assignment: the model reassigns each partition once.

>>> from model.controller import ControllerConfig, ControllerSystem
>>> from model.controller.messages import RemovePartitionsFromReassignment
>>> from model.controller.actions import ZkServe
>>> cfg = ControllerConfig(brokers=3, max_reassignments=1)
>>> sys = ControllerSystem(cfg)
>>> (p,) = reassign_properties(cfg, sys)
>>> s = sys.init_states()[0]
>>> s = s._replace(zk=s.zk._replace(reassign=((0, (1, 2)),), reassigns=1))
>>> half = s._replace(zk=s.zk._replace(ar=((1, 2, 0),)))
>>> a = ZkServe(1, 2, RemovePartitionsFromReassignment((0,), 0, 1, False))
>>> p.check(s, a, s._replace(zk=s.zk._replace(reassign=())))
True
>>> p.check(half, a, half._replace(zk=half.zk._replace(reassign=())))
False
>>> p.explain(half, a, half._replace(zk=half.zk._replace(reassign=())))[1]
't0-0: the reassignment to [1, 2] is dropped unfinished with assignment [1, 2, 0] (it was [0, 1])'
>>> reassign_properties(ControllerConfig(), ControllerSystem(ControllerConfig()))
[]
"""

from __future__ import annotations

from typing import Any

from explorer.core import Property, transition
from invariants.controller_guards import zk_changed
from model.controller import ControllerConfig, ControllerSystem, State
from model.controller.effects import zk_request_of
from model.controller.messages import RemovePartitionsFromReassignment

__all__ = ["reassign_properties"]


def _dropped(s: State, a: Any, t: State) -> list[tuple[int, tuple[int, ...]]]:
    """(partition, RAR) of each reassignment the step removes from ``/admin/reassign_partitions``
    unfinished (a ``RemovePartitionsFromReassignment`` of a controller that did not complete it,
    landing)."""
    req = zk_request_of(a)
    if type(req) is not RemovePartitionsFromReassignment or req.completed or t.zk.reassign == s.zk.reassign:
        return []
    return [
        (p, rar) for p, rar in s.zk.reassign if p in req.partitions and all(q != p for q, _ in t.zk.reassign)
    ]


def _midway(sys: ControllerSystem, s: State, a: Any, t: State) -> list[tuple[int, tuple[int, ...]]]:
    """The dropped reassignments (of existing partitions of topics not queued for deletion)
    whose partition's assignment is neither its original one nor its target."""
    zk = t.zk
    return [
        (p, rar)
        for p, rar in _dropped(s, a, t)
        if sys.present(zk, p)
        and (p // sys.ppt) not in zk.delete_topics
        and zk.ar[p] not in (sys.replicas[p], rar)
    ]


def reassign_properties(config: ControllerConfig, sys: ControllerSystem) -> list[Property]:
    """The reassignment's end properties (with ``max_reassignments``; none without)."""
    if not config.max_reassignments:
        return []

    def check(s: State, a: Any, t: State) -> bool:
        """A reassignment dropped unfinished leaves its partition's assignment at OAR or RAR."""
        return not _midway(sys, s, a, t)

    def applies(s: State, a: Any, t: State) -> bool:
        """The step drops a reassignment unfinished."""
        return bool(_dropped(s, a, t))

    def explain(s: State, a: Any, t: State) -> list[str]:
        """Each reassignment dropped half-done, with the assignment it leaves."""
        return [
            f"the step: {a}",
            *(
                f"t{p // sys.ppt}-{p % sys.ppt}: the reassignment to {list(rar)} is dropped unfinished with "
                f"assignment {list(t.zk.ar[p])} (it was {list(sys.replicas[p])})"
                for p, rar in _midway(sys, s, a, t)
            ),
        ]

    return [
        transition(
            "reassignment_never_abandoned_midway",
            check,
            "a reassignment removed from /admin/reassign_partitions unfinished leaves its partition's "
            "assignment at OAR or RAR, never the OAR + RAR of one under way (seed 001 分区副本迁移; "
            "KAFKA-4214: 0.10.0 failed a reassignment resumed after a failover while a new replica's "
            "broker was down)",
            applies=applies,
            guard=zk_changed,
            explain=explain,
        )
    ]
