"""Kafka's ``TopicDeletionManager`` as seed 001 describes it step by step: enqueue,
ineligible, ``resumeDeletions``, ``startReplicaDeletion``, StopReplica responses, retry,
``completeDeleteTopic``.
"""

from __future__ import annotations

from explorer.mypyc_compat import mypyc_attr
from explorer.speedups import set_item
from model.controller.base import Component, ControllerBase
from model.controller.continuations import (
    TopicZNodeDeleted,
)
from model.controller.messages import (
    DeleteTopicDeletions,
    DeleteTopicZNode,
    StopReplicaPartitions,
    StopReplicaRequest,
)
from model.controller.program import (
    CompleteDeleteTopic,
    FailReplicaDeletion,
    MoveToReplicaDeletionStarted,
    OfflineReplicas,
    OnTopicDeletion,
    ResumeDeletions,
    SendUpdateMetadataRequest,
)
from model.controller.state import D_DEL_RESUME, D_DELETED, D_DELETED_AFTER_RESUME
from model.state_machines import PartitionState, ReplicaState


@mypyc_attr(allow_interpreted_subclasses=True)
class TopicDeletionManager(Component):
    """Kafka's ``TopicDeletionManager`` (seed 001 step by step): enqueue, ineligible, retry, complete."""

    def rstate(self, c: ControllerBase, p: int, r: int) -> ReplicaState:
        return c.ctx.rstates[p][c.sys.rindex[p][r]]

    def topic_replicas(self, c: ControllerBase, t: int) -> list[tuple[int, int]]:
        """``replicasForTopic``: (partition, replica) of the topic's partitions in the context."""
        ctx = c.ctx
        return [
            (p, r)
            for p in c.topic_partitions(t)
            if ctx.pstates[p] != PartitionState.NonExistentPartition
            for r in ctx.ar[p]
        ]

    def process_topic_deletion(self, c: ControllerBase, topics: tuple[int, ...], rest: tuple) -> None:
        """``TopicDeletion``: unknown topics are cleared; with deletion disabled every entry is
        cleared; topics with a reassignment in progress are marked ineligible; the rest are
        enqueued (``enqueueTopicsForDeletion``) and ``resumeDeletions`` runs."""
        if self.kafka_controller.resigned(c, rest):
            return
        ctx = c.ctx
        cfg = c.sys.cfg
        ppt = c.sys.ppt
        known = tuple(t for t in topics if ctx.pstates[t * ppt] != PartitionState.NonExistentPartition)
        clear = tuple(t for t in topics if t not in known)
        if not cfg.delete_topic_enable:
            clear = topics
        if clear:
            c.send_zk(DeleteTopicDeletions(clear, c.fence(), ctx.epoch))
        if not cfg.delete_topic_enable or not known:
            self.kafka_controller.run(c, rest)
            return
        reassigning = {p // ppt for p, _ in ctx.reassigning}
        ineligible = tuple(sorted(set(ctx.ineligible) | {t for t in known if t in reassigning}))
        deleting = tuple(sorted(set(ctx.deleting) | set(known)))
        c.ctx = ctx._replace(deleting=deleting, ineligible=ineligible)
        self.kafka_controller.run(c, (ResumeDeletions(), *rest))

    def resume_deletions(self, c: ControllerBase) -> tuple:
        """``resumeDeletions``: complete, retry or start the deletion of each queued topic."""
        ctx = c.ctx
        complete: list = []
        retry: list = []
        eligible: list = []
        for t in ctx.deleting:
            states = [self.rstate(c, p, r) for p, r in self.topic_replicas(c, t)]
            started = ReplicaState.ReplicaDeletionStarted in states
            if all(st == ReplicaState.ReplicaDeletionSuccessful for st in states):
                complete.append(t)
                continue
            if not started and ReplicaState.ReplicaDeletionIneligible in states:
                retry.append(t)
            if t not in ctx.ineligible and not started:
                eligible.append(t)
        prog: list = [CompleteDeleteTopic(t) for t in complete]
        if retry:
            # retryDeletionForIneligibleReplicas: failed replicas -> OfflineReplica
            c.ctx = ctx._replace(ineligible=tuple(t for t in ctx.ineligible if t not in retry))
            for t in retry:
                by: dict[int, list[int]] = {}
                for p, r in self.topic_replicas(c, t):
                    if self.rstate(c, p, r) == ReplicaState.ReplicaDeletionIneligible:
                        by.setdefault(r, []).append(p)
                prog += [OfflineReplicas(b, tuple(ps)) for b, ps in sorted(by.items())]
        if eligible:
            # onTopicDeletion: UpdateMetadata, then onPartitionDeletion -> startReplicaDeletion
            prog.append(SendUpdateMetadataRequest())
            prog += [OnTopicDeletion(t) for t in eligible]
        return tuple(prog)

    def on_topic_deletion(self, c: ControllerBase, t: int) -> tuple:
        """``onTopicDeletion``: the topic's partitions -> OfflinePartition (seed 002: a partition
        goes offline when its topic is deleted and stays offline while the deletion runs, until
        ``completeDeleteTopic`` makes it NonExistentPartition), then ``onPartitionDeletion`` ->
        ``startReplicaDeletion``."""
        ctx = c.ctx
        if t in ctx.deleting:
            for p in c.topic_partitions(t):
                st = c.ctx.pstates[p]
                if st != PartitionState.NonExistentPartition and st != PartitionState.OfflinePartition:
                    c.set_pstate(p, PartitionState.OfflinePartition)
        return self.start_replica_deletion(c, t)

    def start_replica_deletion(self, c: ControllerBase, t: int) -> tuple:
        """``startReplicaDeletion``: dead replicas -> ReplicaDeletionIneligible (and the topic
        ineligible); live ones not yet deleted -> OfflineReplica -> ReplicaDeletionStarted."""
        ctx = c.ctx
        if t not in ctx.deleting:
            return ()
        live = c.live_broker_ids()
        dead = False
        by: dict[int, list[int]] = {}
        for p, r in self.topic_replicas(c, t):
            if r not in live:
                dead = True
                self.to_ineligible(c, p, r)
            elif self.rstate(c, p, r) != ReplicaState.ReplicaDeletionSuccessful:
                by.setdefault(r, []).append(p)
        if dead:
            c.ctx = c.ctx._replace(ineligible=tuple(sorted({*c.ctx.ineligible, t})))
        todo = tuple((b, tuple(ps)) for b, ps in sorted(by.items()))
        prog: list = [OfflineReplicas(b, ps) for b, ps in todo]
        if todo:
            prog.append(MoveToReplicaDeletionStarted(todo))
        return tuple(prog)

    def to_ineligible(self, c: ControllerBase, p: int, r: int) -> None:
        """-> ReplicaDeletionIneligible; Kafka logs and skips an invalid transition (recorded
        only with ``strict_deletion_transitions``)."""
        if (
            c.sys.cfg.strict_deletion_transitions
            or c.sys.valid_replica[(self.rstate(c, p, r), ReplicaState.ReplicaDeletionIneligible)]
        ):
            c.set_rstate(p, r, ReplicaState.ReplicaDeletionIneligible)

    def send_stop_replica_requests(
        self, c: ControllerBase, b: int, parts: tuple[int, ...], delete: bool, callback: bool
    ) -> None:
        """One StopReplica request to broker ``b`` for ``parts``."""
        e = c.ctx.live[b]
        if not e or not parts:
            return
        mask = 0
        for p in parts:
            mask |= 1 << p
        c.send_msg(
            b,
            StopReplicaRequest(c.ctx.epoch, e, StopReplicaPartitions(mask, delete, callback)),
        )

    def replica_deletion_started(self, c: ControllerBase, todo: tuple) -> None:
        """OfflineReplica -> ReplicaDeletionStarted: StopReplica(delete=true) with the
        deletion callback (the response queues TopicDeletionStopReplicaResponseReceived)."""
        for b, parts in todo:
            started = tuple(
                p
                for p in parts
                if self.rstate(c, p, b) == ReplicaState.OfflineReplica
                and c.set_rstate(p, b, ReplicaState.ReplicaDeletionStarted)
            )
            self.send_stop_replica_requests(c, b, started, True, True)

    def stop_replica_response(self, c: ControllerBase, b: int, mask: int, error: bool) -> None:
        """``TopicDeletionStopReplicaResponseReceived``: replicas still in
        ReplicaDeletionStarted -> Successful (then ``resumeDeletions``) or, on an error,
        ``failReplicaDeletion``. A response for a replica in another state (a previous
        deletion round or controller) is ignored."""
        parts = tuple(
            p
            for p in range(c.sys.np)
            if (mask >> p) & 1
            and self.rstate(c, p, b) == ReplicaState.ReplicaDeletionStarted
            and c.is_topic_queued_up_for_deletion(p)
        )
        if not parts:
            return
        if error:
            self.kafka_controller.run(c, (FailReplicaDeletion(((b, parts),)),))
            return
        self.complete_replica_deletion(c, b, parts)

    def complete_replica_deletion(self, c: ControllerBase, b: int, parts: tuple[int, ...]) -> None:
        """``completeReplicaDeletion``: the replicas -> ReplicaDeletionSuccessful, then
        ``resumeDeletions``."""
        for p in parts:
            c.set_rstate(p, b, ReplicaState.ReplicaDeletionSuccessful)
        self.kafka_controller.run(c, (ResumeDeletions(),))

    def fail_replica_deletion(self, c: ControllerBase, items: tuple) -> tuple:
        """``failReplicaDeletion``: replicas of queued topics -> ReplicaDeletionIneligible, the
        topics ineligible, then ``resumeDeletions``."""
        topics = set()
        for b, parts in items:
            for p in parts:
                if c.is_topic_queued_up_for_deletion(p):
                    self.to_ineligible(c, p, b)
                    topics.add(p // c.sys.ppt)
        if not topics:
            return ()
        c.ctx = c.ctx._replace(ineligible=tuple(sorted(set(c.ctx.ineligible) | topics)))
        return self.resume_deletions(c)

    def complete_delete_topic(self, c: ControllerBase, t: int, rest: tuple) -> bool:
        """``completeDeleteTopic``: replicas -> NonExistentReplica, partitions -> Offline ->
        NonExistentPartition, then the fenced ZooKeeper deletes; the context forgets the topic
        when they succeed."""
        ctx = c.ctx
        if t not in ctx.deleting:
            return False
        for p, r in self.topic_replicas(c, t):
            c.set_rstate(p, r, ReplicaState.NonExistentReplica)
        for p in c.topic_partitions(t):
            if c.ctx.pstates[p] != PartitionState.NonExistentPartition:
                if c.ctx.pstates[p] != PartitionState.OfflinePartition:
                    c.set_pstate(p, PartitionState.OfflinePartition)
                c.set_pstate(p, PartitionState.NonExistentPartition)
        c.ctx = c.ctx._replace(deleting=tuple(x for x in c.ctx.deleting if x != t))
        if c.sys.cfg.recursive_topic_deletion:
            # deleteRecursive: each partition's state znode first (a controller that dies
            # before the topic's znode leaves the topic half deleted: KAFKA-6650)
            for p in c.topic_partitions(t):
                c.send_zk(DeleteTopicZNode(t, c.fence(), ctx.epoch, p))
        c.send_zk(DeleteTopicZNode(t, c.fence(), ctx.epoch))
        c.park(TopicZNodeDeleted(t, rest=rest))
        return True

    def remove_topic(self, c: ControllerBase, t: int) -> tuple:
        """``controllerContext.removeTopic(t)``: the context's partition leadership without
        topic ``t``'s partitions."""
        leaders = c.ctx.leaders
        for p in c.topic_partitions(t):
            leaders = set_item(leaders, p, None)
        return leaders

    def delete_topic_done(self, c: ControllerBase, ok: bool, t: int, rest: tuple) -> None:
        if self.kafka_controller.write_failed(c, ok, rest):
            return
        ctx = c.ctx
        leaders = self.remove_topic(c, t)
        c.ctx = ctx._replace(leaders=leaders, ineligible=tuple(x for x in ctx.ineligible if x != t))
        if c.sys.cfg.recursive_topic_deletion:
            c.send_zk(DeleteTopicDeletions((t,), c.fence(), ctx.epoch))  # deleteTopicDeletions
        c.done |= D_DELETED
        if c.done & D_DEL_RESUME:
            c.done |= D_DELETED_AFTER_RESUME
        self.kafka_controller.run(c, rest)
