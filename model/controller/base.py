"""The controller's working copy of one broker during a step (``ControllerBase``), the helpers
every handler uses (``sendRequestsToBrokers``, ``liveBrokerIds``, sending to ZooKeeper, parking a
continuation, the state machines' table checks), and the transition tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from explorer.mypyc_compat import mypyc_attr, trait
from explorer.speedups import set_item
from model.controller.cluster import Cluster
from model.controller.config import ZkWriteFencing
from model.controller.continuations import Parked
from model.controller.messages import (
    LEADER_DURING_DELETE,
    BrokerRequest,
    LeaderAndIsrPartitionState,
    LeaderAndIsrPartitionStateWithReplicas,
    LeaderAndIsrRequest,
    UpdateMetadataPayload,
    UpdateMetadataRequest,
)
from model.controller.state import Ctx, Node, PartZ, State
from model.election import ElectionOutcome
from model.state_machines import PartitionState, ReplicaState, StateMachine, TableVersion, is_valid_transition

VALID_PARTITION_TRANSITION = {
    (a, b): is_valid_transition(StateMachine.PARTITION, a, b) for a in PartitionState for b in PartitionState
}
# the later 2.x replica table (``replica_table = "later-2.x"``, the default): seed 001's
# startReplicaDeletion moves the replicas of dead brokers (OfflineReplica) to
# ReplicaDeletionIneligible, which the seeds' printed table lacks; only topic deletion attempts that
# edge, so the configurations without deletion see the same table. A controller checks the table of
# its configuration, ``Cluster.valid_replica``; this one is kept for the edge labels.
VALID_REPLICA_TRANSITION = {
    (a, b): is_valid_transition(StateMachine.REPLICA, a, b, TableVersion.KAFKA_LATER_2_X)
    for a in ReplicaState
    for b in ReplicaState
}
# coverage labels (``successors_labelled``) of state machine transitions, valid and invalid
_TABLES: tuple[dict[Any, bool], dict[Any, bool]] = (VALID_PARTITION_TRANSITION, VALID_REPLICA_TRANSITION)
SM_LABEL = {
    (m, a, b): (
        "state_machines" if ok else "invalid_transitions",
        ("partition", "replica")[m],
        f"{a.name}->{b.name}",
    )
    for m, valid in enumerate(_TABLES)
    for (a, b), ok in valid.items()
}
# the labels of replica transitions the printed table rejects but the later one allows
_PRINTED_INVALID: dict[tuple[int, int, int], tuple[str, str, str]] = {
    (1, a, b): ("invalid_transitions", "replica", f"{a.name}->{b.name}")
    for (a, b), ok in VALID_REPLICA_TRANSITION.items()
    if ok and not is_valid_transition(StateMachine.REPLICA, a, b, TableVersion.KAFKA_2_X)
}
ELECTION_OUTCOME_LABEL = {
    ElectionOutcome.CLEAN: "isr",
    ElectionOutcome.UNCLEAN: "unclean",
    ElectionOutcome.NONE: "none",
}


@mypyc_attr(allow_interpreted_subclasses=True)
class ControllerBase:
    """Mutable working copy of one broker's controller during a step, and the helpers every
    handler uses (``sendRequestsToBrokers``, ``liveBrokerIds``, the state machines' table checks)."""

    __slots__ = (
        "active_id",
        "chans",
        "ctx",
        "done",
        "events",
        "history",
        "invalid",
        "labels",
        "me",
        "n",
        "out_changed",
        "pending",
        "sys",
        "watch",
        "zk_out",
    )

    def __init__(self, sys: Cluster, s: State, me: int, n: Node) -> None:
        self.sys = sys
        self.me = me
        self.n = n
        self.zk_out = n.zk_out
        self.active_id = n.active_id
        # None unless this broker is the active controller; the handlers read it only then
        # Ctx | Any: mypy checks what is read of a Ctx, and a mypyc build (which checks a
        # declared type at run time) accepts the None of a broker that is not the controller
        self.ctx: Ctx | Any = n.ctx
        self.events = n.events
        self.pending = n.pending
        self.watch = n.watch
        self.chans = s.chans
        self.invalid = s.invalid
        self.history = s.history
        self.done = s.done
        self.labels: list[tuple[str, str, str]] = []  # coverage labels of this step

    def commit(self, s: State, **node_changes: Any) -> State:
        """The successor state: ``s`` with this working copy (and ``node_changes``) written back
        to its broker; the step's coverage labels are left on the system for
        ``successors_labelled``."""
        n = self.n._replace(
            zk_out=self.zk_out,
            active_id=self.active_id,
            ctx=self.ctx,
            events=self.events,
            pending=self.pending,
            watch=self.watch,
        )
        if node_changes:  # a subclass's extra fields; a call without them skips building a dict
            n = n._replace(**node_changes)
        self.sys._last_labels = tuple(self.labels)
        return s._replace(
            nodes=set_item(s.nodes, self.me, n),
            chans=self.chans,
            invalid=self.invalid,
            history=self.history,
            done=self.done,
        )

    def send_zk(self, req: tuple) -> None:
        self.zk_out = (*self.zk_out, req)

    def park(self, k: Parked) -> None:
        self.pending = k

    def record_invalid(self, machine: int, p: int, a: int, b: int) -> None:
        self.labels.append(_PRINTED_INVALID.get((machine, a, b)) or SM_LABEL[(machine, a, b)])
        if not self.invalid:
            self.invalid = (machine, p, int(a), int(b))

    def fence(self) -> int:
        if self.sys.cfg.zk_write_fencing is ZkWriteFencing.CONTROLLER_EPOCH:
            return self.ctx.epoch_version
        return -1

    def send_msg(self, dest: int, msg: BrokerRequest) -> None:
        i = self.me * self.sys.nb + dest
        q = self.chans[i]
        if type(msg) is UpdateMetadataRequest:
            for m in reversed(q):
                if type(m) is UpdateMetadataRequest:
                    if m == msg:
                        # the last UpdateMetadata queued is this very request: applying it again
                        # changes nothing (only UpdateMetadata writes the metadata cache)
                        return
                    break
        self.chans = set_item(self.chans, i, (*q, msg))

    def live_broker_ids(self) -> tuple[int, ...]:
        """``liveBrokerIds``: live brokers that are not shutting down."""
        ctx = self.ctx
        if ctx.shutting:
            return tuple(b for b, e in enumerate(ctx.live) if e and b not in ctx.shutting)
        return tuple(b for b, e in enumerate(ctx.live) if e)

    def live_or_shutting_down(self) -> tuple[int, ...]:
        """``liveOrShuttingDownBrokerIds``: the live brokers, shutting down or not."""
        return tuple(b for b, e in enumerate(self.ctx.live) if e)

    def unclean(self, p: int, dyn: tuple) -> bool:
        """Whether partition ``p``'s topic allows unclean leader election: by configuration, or
        dynamically (``dyn``: the topics ``/config/topics`` enables it for, as last read)."""
        return self.sys.cfg.unclean(p) or (p // self.sys.ppt) in dyn

    def set_live_brokers(self, brokers_and_epochs: Iterable[tuple[int, int]]) -> None:
        """``controllerContext.addLiveBrokersAndEpochs`` and ``removeLiveBrokers``: each broker of
        ``brokers_and_epochs`` gets its epoch in the context's live brokers (0: no longer live)."""
        live = self.ctx.live
        for b, e in brokers_and_epochs:
            live = set_item(live, b, e)
        self.ctx = self.ctx._replace(live=live)

    def entry(self, p: int, z: PartZ) -> tuple:
        """One partition's LeaderAndIsr entry (with the assignment when admin workflows are on)."""
        if self.sys.admin:
            return LeaderAndIsrPartitionStateWithReplicas(
                p, z.leader, z.leader_epoch, z.isr, z.version, self.ctx.ar[p]
            )
        return LeaderAndIsrPartitionState(p, z.leader, z.leader_epoch, z.isr, z.version)

    def is_topic_queued_up_for_deletion(self, p: int) -> bool:
        """``isTopicQueuedUpForDeletion(p.topic)``."""
        return (p // self.sys.ppt) in self.ctx.deleting

    def send_update_metadata_request(self, partitions: tuple[int, ...] | None = None) -> None:
        """``sendUpdateMetadataRequest(liveOrShuttingDownBrokerIds, partitions)``: to every live
        broker, the live brokers and the states of ``partitions`` (``None``, Kafka's empty set:
        every partition the context has a state of) as the context has them."""
        if not self.sys.cfg.send_update_metadata:
            return
        ctx = self.ctx
        leaders = ctx.leaders
        states = []
        for p in range(len(leaders)) if partitions is None else partitions:
            z = leaders[p]
            if z is not None:
                leader = (
                    LEADER_DURING_DELETE
                    if ctx.deleting and self.is_topic_queued_up_for_deletion(p)
                    else z.leader
                )
                states.append((p, leader, z.leader_epoch, z.isr))
        payload = UpdateMetadataPayload(tuple(b for b, e in enumerate(ctx.live) if e), tuple(states))
        for b, e in enumerate(ctx.live):
            if e:
                self.send_msg(b, UpdateMetadataRequest(ctx.epoch, e, payload))

    def send_requests_to_brokers(self, batch: tuple) -> None:
        """``sendRequestsToBrokers``: one LeaderAndIsr per broker, then UpdateMetadata."""
        if not batch:
            return
        ctx = self.ctx
        dests: dict[int, list] = {}
        for dest, entry in batch:
            if dest >= 0:  # brokerIds.filter(_ >= 0)
                dests.setdefault(dest, []).append(entry)
        for dest in sorted(dests):
            e = ctx.live[dest]
            if e:
                self.send_msg(dest, LeaderAndIsrRequest(ctx.epoch, e, tuple(dests[dest])))
        # addLeaderAndIsrRequestForBrokers: UpdateMetadata of these partitions to every live broker
        self.send_update_metadata_request(tuple(sorted({entry[0] for _, entry in batch})))

    def put_partition_leadership_info(self, p: int, z: PartZ) -> None:
        """``controllerContext.putPartitionLeadershipInfo(p, z)``: the context's leader, ISR and
        zkVersion of partition ``p`` are ``z`` (after a write or a read of its state znode)."""
        self.ctx = self.ctx._replace(leaders=set_item(self.ctx.leaders, p, z))

    def set_pstate(self, p: int, target: PartitionState) -> bool:
        ctx = self.ctx
        cur = ctx.pstates[p]
        if not VALID_PARTITION_TRANSITION[(cur, target)]:
            self.record_invalid(0, p, cur, target)
            return False
        self.ctx = ctx._replace(pstates=set_item(ctx.pstates, p, target))
        self.labels.append(SM_LABEL[(0, cur, target)])
        return True

    def set_rstate(self, p: int, r: int, target: ReplicaState) -> bool:
        ctx = self.ctx
        i = self.sys.rindex[p][r]
        row = ctx.rstates[p]
        cur = row[i]
        if not self.sys.valid_replica[(cur, target)]:
            self.record_invalid(1, p, cur, target)
            return False
        if cur is not target:  # a transition to the same state leaves the context as it is
            self.ctx = ctx._replace(rstates=set_item(ctx.rstates, p, set_item(row, i, target)))
        self.labels.append(SM_LABEL[(1, cur, target)])
        return True

    def record_election(self, strategy: str, outcome: str) -> None:
        """Coverage: an election of ``strategy`` ended with ``outcome`` (isr, unclean, none)."""
        self.labels.append(("elections", strategy, outcome))

    def enqueue(self, ev: tuple[int, int]) -> None:
        if ev not in self.events:
            self.events = (*self.events, ev)

    def topic_partitions(self, t: int) -> range:
        ppt = self.sys.ppt
        return range(t * ppt, (t + 1) * ppt)


@trait  # KafkaController(ElectRules, Component): mypyc compiles a second base only if a trait
@mypyc_attr(allow_interpreted_subclasses=True)
class Component:
    """One of the controller's components (``KafkaController``, ``PartitionStateMachine``,
    ``ReplicaStateMachine``, ``BrokerLifecycle``, ``TopicChanges``, ``TopicDeletionManager``,
    ``AdminWorkflows``, ``ZookeeperLeaderElector``): one instance per system, holding no state of its own; each method takes
    the controller of the broker taking the step (``c``, a :class:`ControllerBase`) and reaches
    the other components through the attributes :meth:`wire` sets. A variant or a mutant of a
    component is a subclass of it handed to ``ControllerSystem`` as a seam. A trait for mypyc:
    compiled code would ignore a subclass's override of :meth:`wire`."""

    kafka_controller: Any
    partition_state_machine: Any
    replica_state_machine: Any
    broker_lifecycle: Any
    topic_changes: Any
    topic_deletion_manager: Any
    admin_workflows: Any
    zookeeper_leader_elector: Any

    def wire(self, components: dict[str, Component]) -> None:
        """Let this component call the others (``components``: attribute name -> instance)."""
        for name, component in components.items():
            setattr(self, name, component)
