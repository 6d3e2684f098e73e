"""``Cluster``: what the configuration fixes for a whole run (brokers, partitions, replica
slots, which workflows are on), the initial states, and the helpers every actor's step uses
(watch firing, committing a controller's working copy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explorer.mypyc_compat import mypyc_attr
from model.controller.config import ControllerConfig, Elector, ExpiryHandling, ReplicaTable, ZkResponses
from model.controller.messages import RegisterBroker
from model.controller.state import FRESH_PROCESS, Ctx, Node, Rep, State, Zk
from model.state_machines import PartitionState, ReplicaState, StateMachine, TableVersion, is_valid_transition

#: the ReplicaStateMachine table of each ``replica_table`` value (``model/state_machines.py``)
REPLICA_TABLE_VERSION = {
    ReplicaTable.LATER_2X: TableVersion.KAFKA_LATER_2_X,
    ReplicaTable.PRINTED: TableVersion.KAFKA_2_X,
}
_REPLICA_VALID = {
    table: {
        (a, b): is_valid_transition(StateMachine.REPLICA, a, b, version)
        for a in ReplicaState
        for b in ReplicaState
    }
    for table, version in REPLICA_TABLE_VERSION.items()
}


@mypyc_attr(allow_interpreted_subclasses=True)
class Cluster:
    """The static layout the configuration gives (brokers, partitions, replica slots, which
    workflows are on) and the helpers every actor's step uses."""

    #: the controller class a step runs (``KafkaController``, or the seam the system was given)
    controller_cls: Callable[..., Any]
    #: the actors (``ControllerSystem`` builds them; typed loosely here, which they import)
    zookeeper: Any
    replica_manager: Any
    brokers: Any
    kafka_controller: Any

    def __init__(self, cfg: ControllerConfig) -> None:
        self.cfg = cfg
        self.nb = cfg.brokers
        self.np = cfg.partitions
        self.replicas = cfg.replicas()
        self.admin = cfg.admin
        self.targets = cfg.targets()
        # replica slots: the assignment, plus the reassignment targets of reassigned partitions
        self.slots = tuple(
            reps + tuple(r for r in self.targets[p] if r not in reps) if p < cfg.max_reassignments else reps
            for p, reps in enumerate(self.replicas)
        )
        self.parts_of = tuple(tuple(p for p in range(self.np) if b in self.slots[p]) for b in range(self.nb))
        self.rindex = tuple({r: i for i, r in enumerate(reps)} for reps in self.slots)
        self.legacy = cfg.elector is Elector.LEGACY
        #: ``(from, to) -> valid`` of the configured ReplicaStateMachine table (``replica_table``)
        self.valid_replica: dict[tuple[ReplicaState, ReplicaState], bool] = _REPLICA_VALID[cfg.replica_table]
        self.merged = cfg.zk_responses is ZkResponses.MERGED
        self.queued = self.legacy or cfg.session_expiry_handling is ExpiryHandling.QUEUED
        self.ppt = cfg.partitions_per_topic
        self.later = cfg.topics_created_later
        self.topics_at_start = cfg.topics - cfg.topics_created_later
        # the partitions an admin adds after start (the last ``partitions_added_later`` of a topic)
        first_added = self.ppt - cfg.partitions_added_later
        self.added = frozenset(p for p in range(self.np) if p % self.ppt >= first_added)
        # partitions that may be absent from a controller's context (topic creation, expansion,
        # deletion): replicasOnBrokers skips them
        self.maybe_absent = bool(self.later or self.added or cfg.max_topic_deletions)
        self._empty_rep = Rep(-1, -1, (), 0, (), 0, (), False)
        self._init: State | None = None
        self._last_labels: tuple[Any, ...] = ()  # the coverage labels of the step just computed

    def empty_ctx(self, epoch: int, version: int) -> Ctx:
        """A fresh controller context right after winning an election."""
        return Ctx(
            epoch,
            version,
            (0,) * self.nb,
            (None,) * self.np,
            (PartitionState.NonExistentPartition,) * self.np,
            tuple((ReplicaState.NonExistentReplica,) * len(r) for r in self.slots),
            self.replicas,
        )

    def present(self, zk: Zk, p: int) -> bool:
        """Partition ``p`` exists in ZooKeeper (its topic created and not deleted, and the
        partition not one still to be added).

        >>> from model.controller import ControllerSystem, ControllerConfig
        >>> sys = ControllerSystem(ControllerConfig(partitions_per_topic=2, partitions_added_later=1))
        >>> z = sys.init_states()[0].zk
        >>> sys.present(z, 0), sys.present(z, 1)
        (True, False)
        """
        t = p // self.ppt
        if t >= self.topics_at_start + zk.created or t in zk.gone:
            return False
        return p not in self.added or t < zk.expanded

    def cold_state(self) -> State:
        """Every broker just started: session ``b + 1`` open, registration request queued."""
        nodes = tuple(
            Node(
                alive=True,
                session=b + 1,
                expired=False,
                zk_out=(RegisterBroker(True),),
                reps=(self._empty_rep,) * self.np,
                **FRESH_PROCESS,
            )
            for b in range(self.nb)
        )
        zk = Zk(
            None,
            0,
            0,
            (None,) * self.nb,
            (None,) * self.np,
            (),
            self.nb + 1,
            (0,) * self.nb,
            ar=self.replicas,
        )
        return State(zk, nodes, ((),) * (self.nb * self.nb), (), 0, 0, 0, 0, (), 0)

    @staticmethod
    def session_live(n: Node) -> bool:
        """The server still holds the broker's current session."""
        return n.session != 0 and not n.expired


@mypyc_attr(allow_interpreted_subclasses=True)
class Actor:
    """One actor of the system (the ZooKeeper server, the brokers' replica managers, the broker
    processes): it reads its system's layout and reaches the other actors through ``system``.
    A variant or a mutant of an actor is a subclass of it handed to ``ControllerSystem``."""

    def __init__(self, system: Cluster) -> None:
        self.system = system
        self.cfg = system.cfg
        self.nb = system.nb
        self.np = system.np
        self.ppt = system.ppt
        self.admin = system.admin
        self.later = system.later
        self.topics_at_start = system.topics_at_start
        self.merged = system.merged
        self.queued = system.queued
        self.legacy = system.legacy
        self.parts_of = system.parts_of
        self.empty_rep = system._empty_rep
