"""The controller's other admin workflows: partition reassignment (AR/RAR/OAR, seed 001),
preferred replica election (admin and auto-rebalance, seed 002), controlled shutdown, and
dynamic enabling of unclean election.
"""

from __future__ import annotations

from typing import Any

from explorer.mypyc_compat import mypyc_attr
from explorer.speedups import set_item
from model.controller.base import Component, ControllerBase
from model.controller.continuations import (
    AssignmentWritten,
    PartitionModificationsRead,
    PartitionReassignmentRead,
    PreferredReplicaElectionRead,
    ReassignmentPartitionStateRead,
    TopicDeletionRead,
)
from model.controller.events import (
    AutoPreferredReplicaLeaderElection,
    ControlledShutdown,
    ControllerEvent,
    PartitionModifications,
    PartitionReassignment,
    PartitionReassignmentIsrChange,
    PreferredReplicaLeaderElection,
    ReplicaLeaderElection,
    TopicDeletion,
    TopicDeletionStopReplicaResponseError,
    TopicDeletionStopReplicaResponseReceived,
    TopicUncleanLeaderElectionEnable,
)
from model.controller.messages import (
    S_ADMIN_UNCLEAN,
    S_CONTROLLED_SHUTDOWN,
    S_EPOCH,
    S_PREFERRED,
    S_REASSIGN,
    GetPartitionReassignment,
    GetPreferredReplicaElection,
    GetReplicaAssignmentForTopic,
    GetTopicDeletions,
    GetTopicPartitionStates,
    RemovePartitionsFromReassignment,
    SetReplicaAssignment,
)
from model.controller.program import (
    ControlledShutdownRespond,
    ElectLeaderForPartitions,
    OfflineReplicas,
    OnPartitionReassignment,
    RemovePartitionsFromPreferredReplicaElection,
    ResumeDeletionForTopics,
    SendStopReplica,
    StopOldReplicasOfReassignedPartition,
    TriggerOnlinePartitionStateChange,
)
from model.controller.state import D_AUTO, D_PICKED_UP, D_REASSIGNED, D_RESUMED
from model.election import (
    NO_LEADER,
    ControlledShutdownAction,
    controlled_shutdown_partition_action,
)
from model.state_machines import PartitionState, ReplicaState


@mypyc_attr(allow_interpreted_subclasses=True)
class AdminWorkflows(Component):
    """Partition reassignment (AR/RAR/OAR), preferred replica election (admin and auto-rebalance),
    controlled shutdown, dynamic unclean election: the controller's admin event handlers."""

    def admin_event(self, c: ControllerBase, ev: ControllerEvent) -> None:
        """The admin-workflow events of an active controller: each reads what it needs from
        ZooKeeper and parks its continuation (``continuations.py``) or runs its steps
        (``program.py``)."""
        match ev:
            case TopicDeletion():
                c.send_zk(GetTopicDeletions())
                c.park(TopicDeletionRead())
            case TopicDeletionStopReplicaResponseReceived() | TopicDeletionStopReplicaResponseError():
                self.topic_deletion_manager.stop_replica_response(c, ev.replica_id, ev.partitions, ev.error)
            case PartitionModifications(topic=topic):
                c.send_zk(GetReplicaAssignmentForTopic(topic))
                c.park(PartitionModificationsRead(topic))
            case PartitionReassignment():
                c.send_zk(GetPartitionReassignment())
                c.park(PartitionReassignmentRead())
            case PartitionReassignmentIsrChange(partition=partition):
                if any(p == partition for p, _ in c.ctx.reassigning):
                    self.kafka_controller.run(c, (OnPartitionReassignment(partition, 2),))
            case PreferredReplicaLeaderElection():
                c.send_zk(GetPreferredReplicaElection())
                c.park(PreferredReplicaElectionRead())
            case AutoPreferredReplicaLeaderElection():
                self.check_and_trigger_auto_leader_rebalance(c)
            case ControlledShutdown(broker=broker, broker_epoch=broker_epoch):
                self.do_controlled_shutdown(c, broker, broker_epoch)
            case TopicUncleanLeaderElectionEnable(topic=topic):
                # TopicUncleanLeaderElectionEnable: triggerOnlinePartitionStateChange(topic)
                self.kafka_controller.run(c, (TriggerOnlinePartitionStateChange(topic),))
            case ReplicaLeaderElection():
                self.process_replica_leader_election_unclean(c)

    def process_replica_leader_election_unclean(self, c: ControllerBase) -> None:
        """``ReplicaLeaderElection(partitions, ElectionType.UNCLEAN, AdminClientTriggered)``: of the
        known partitions not queued for deletion, those without a live leader are elected with
        ``OfflinePartitionLeaderElectionStrategy(allowUnclean = true)`` (seed 002: allowUnclean
        ignores the topic's unclean.leader.election.enable; a partition with a live ISR member
        still elects cleanly); the others already have a valid leader."""
        ctx = c.ctx
        elect = []
        for p, z in enumerate(ctx.leaders):
            if z is None or ctx.pstates[p] == PartitionState.NonExistentPartition:
                continue
            if c.is_topic_queued_up_for_deletion(p):
                continue
            if z.leader == NO_LEADER or not ctx.live[z.leader] or z.leader in ctx.shutting:
                elect.append(p)
        if elect:
            self.kafka_controller.run(c, (ElectLeaderForPartitions(S_ADMIN_UNCLEAN, tuple(elect)),))

    def process_partition_reassignment(self, c: ControllerBase, entries: tuple, rest: tuple) -> None:
        """``PartitionReassignment``: partitions not already being reassigned are added to
        ``partitionsBeingReassigned`` and ``maybeTriggerPartitionReassignment`` runs."""
        if self.kafka_controller.resigned(c, rest):
            return
        ctx = c.ctx
        current = {p for p, _ in ctx.reassigning}
        new = tuple(
            (p, rar)
            for p, rar in entries
            if p not in current and ctx.pstates[p] != PartitionState.NonExistentPartition
        )
        if not new:
            self.kafka_controller.run(c, rest)
            return
        c.ctx = ctx._replace(reassigning=tuple(sorted((*ctx.reassigning, *new))))
        self.kafka_controller.run(c, (*(OnPartitionReassignment(p, 0) for p, _ in new), *rest))

    def rar(self, c: ControllerBase, p: int) -> tuple[int, ...] | None:
        for q, rar in c.ctx.reassigning:
            if q == p:
                return rar
        return None

    def reassign_remove(self, c: ControllerBase, p: int, completed: bool) -> None:
        """``removePartitionsFromReassignedPartitions``: update the znode (fenced)."""
        ctx = c.ctx
        c.ctx = ctx._replace(reassigning=tuple(e for e in ctx.reassigning if e[0] != p))
        c.send_zk(RemovePartitionsFromReassignment((p,), c.fence(), ctx.epoch, completed))

    def reassignment_refused(self, c: ControllerBase, p: int, rar: tuple[int, ...]) -> bool:
        """Whether ``maybeTriggerPartitionReassignment`` refuses partition ``p``'s reassignment to
        ``rar`` (removes it from ``/admin/reassign_partitions`` unstarted): its topic is queued
        for deletion, or ``rar`` already is its assignment (seed 001). A new replica's broker being
        down is no reason since Kafka 0.10.1: the reassignment waits for it to join the ISR
        (KAFKA-4214, whose variant brings back the refusal: ``bugs/kafka_4214.py``)."""
        return c.is_topic_queued_up_for_deletion(p) or rar == c.ctx.ar[p]

    def on_partition_reassignment(self, c: ControllerBase, p: int, mode: int, rest: tuple) -> bool:
        """mode 0: ``initiateReassignReplicasForTopicPartition`` (checks, then
        ``onPartitionReassignment``); 1: ``onPartitionReassignment``; 2:
        ``PartitionReassignmentIsrChange`` (continue only once RAR is in the ISR)."""
        rar = self.rar(c, p)
        if rar is None:
            return False
        if mode == 0 and self.reassignment_refused(c, p, rar):
            self.reassign_remove(c, p, False)
            return False
        # areReplicasInIsr reads the partition state from ZooKeeper
        c.send_zk(GetTopicPartitionStates((p,)))
        c.park(ReassignmentPartitionStateRead(p, mode, rest=rest))
        return True

    def reassign_parts(self, c: ControllerBase, resp: Any, p: int, mode: int, rest: tuple) -> None:
        if self.kafka_controller.resigned(c, rest):
            return
        ctx = c.ctx
        rar = self.rar(c, p)
        z = resp.states[0][1]
        if rar is None or z is None or self.partition_state_machine.written_by_newer_controller(c, z):
            self.kafka_controller.run(c, rest)
            return
        caught_up = all(r in z.isr for r in rar)
        if not caught_up:
            if mode == 2:
                self.kafka_controller.run(c, rest)
                return
            # 1. AR = OAR + RAR in ZooKeeper (and in the context once written)
            new_ar = rar + tuple(r for r in ctx.ar[p] if r not in rar)
            c.send_zk(SetReplicaAssignment(p, new_ar, c.fence(), ctx.epoch))
            c.park(AssignmentWritten(p, 1, new_ar, rest=rest))
            return
        # 5. RAR -> OnlineReplica; 6. AR = RAR in memory; 7. move the leader if required
        old = tuple(r for r in ctx.ar[p] if r not in rar)
        for r in rar:
            c.set_rstate(p, r, ReplicaState.OnlineReplica)
        self.update_partition_replica_assignment(c, p, rar)
        live = c.live_broker_ids()
        strategy = S_REASSIGN if (z.leader not in rar or z.leader not in live) else S_EPOCH
        self.kafka_controller.run(
            c, (ElectLeaderForPartitions(strategy, (p,)), StopOldReplicasOfReassignedPartition(p, old), *rest)
        )

    def update_partition_replica_assignment(
        self, c: ControllerBase, p: int, replicas: tuple[int, ...]
    ) -> None:
        """``controllerContext.updatePartitionReplicaAssignment`` (step 6 of a reassignment: AR =
        RAR in memory)."""
        c.ctx = c.ctx._replace(ar=set_item(c.ctx.ar, p, replicas))

    def assign_written(
        self, c: ControllerBase, ok: bool, p: int, phase: int, new_ar: tuple[int, ...], rest: tuple
    ) -> None:
        if self.kafka_controller.write_failed(c, ok, rest):
            return
        ctx = c.ctx
        if phase == 1:
            # 2. leader epoch + 1, LeaderAndIsr to OAR + RAR; 3. RAR - OAR -> NewReplica
            old = ctx.ar[p]
            c.ctx = ctx._replace(ar=set_item(ctx.ar, p, new_ar))
            for r in new_ar:
                if r not in old:
                    c.set_rstate(p, r, ReplicaState.NewReplica)
            self.kafka_controller.run(c, (ElectLeaderForPartitions(S_EPOCH, (p,)), *rest))
            return
        # 11. remove the partition from /admin/reassign_partitions; 12. UpdateMetadata; resume
        # the deletion of its topic
        self.reassign_remove(c, p, True)
        c.send_update_metadata_request((p,))
        c.done |= D_REASSIGNED
        if c.done & D_PICKED_UP:
            c.done |= D_RESUMED
        t = p // c.sys.ppt
        self.kafka_controller.run(
            c, (*((ResumeDeletionForTopics((t,)),) if t in c.ctx.deleting else ()), *rest)
        )

    def reassign_stop_old(self, c: ControllerBase, p: int, old: tuple[int, ...], rest: tuple) -> bool:
        """8-9. OAR - RAR -> OfflineReplica (out of the ISR) -> ReplicaDeletionStarted ->
        Successful -> NonExistentReplica (StopReplica(delete=true), no callback); 10. AR = RAR
        in ZooKeeper."""
        if self.rar(c, p) is None:
            return False
        if old:
            prog: tuple[tuple, ...] = tuple(OfflineReplicas(b, (p,)) for b in old)
            prog += (SendStopReplica(-1, (p,), old), StopOldReplicasOfReassignedPartition(p, ()))
            self.kafka_controller.run(c, (*prog, *rest))
            return True
        ctx = c.ctx
        c.send_zk(SetReplicaAssignment(p, ctx.ar[p], c.fence(), ctx.epoch))
        c.park(AssignmentWritten(p, 2, ctx.ar[p], rest=rest))
        return True

    def process_preferred_replica_leader_election(
        self, c: ControllerBase, parts: tuple[int, ...], rest: tuple
    ) -> None:
        """``PreferredReplicaLeaderElection``: elect the pending partitions with the preferred
        replica strategy, then delete the znode."""
        if c.ctx is None or not parts:
            self.kafka_controller.run(c, rest)
            return
        pending = self.pending_preferred(c, parts)
        prog: tuple = (ElectLeaderForPartitions(S_PREFERRED, pending),) if pending else ()
        self.kafka_controller.run(c, (*prog, RemovePartitionsFromPreferredReplicaElection(), *rest))

    def check_and_trigger_auto_leader_rebalance(self, c: ControllerBase) -> None:
        """``checkAndTriggerAutoLeaderRebalance``: for each preferred broker whose imbalance
        ratio (partitions it should lead but does not / partitions it should lead) exceeds
        ``leader.imbalance.per.broker.percentage``, a preferred election of the candidates."""
        sys = c.sys
        ctx = c.ctx
        live = c.live_broker_ids()
        pct = sys.cfg.leader_imbalance_per_broker_percentage
        by: dict[int, list[int]] = {}
        for p in range(sys.np):
            if ctx.pstates[p] == PartitionState.NonExistentPartition or c.is_topic_queued_up_for_deletion(p):
                continue
            by.setdefault(ctx.ar[p][0], []).append(p)
        cands: list[int] = []
        for b in sorted(by):
            parts = by[b]
            off = [p for p in parts if (z := ctx.leaders[p]) is not None and z.leader != b]
            if len(off) * 100 > pct * len(parts):
                cands += [
                    p
                    for p in off
                    if b in live and not ctx.reassigning and not c.is_topic_queued_up_for_deletion(p)
                ]
        if cands:
            c.done |= D_AUTO
            self.kafka_controller.run(c, (ElectLeaderForPartitions(S_PREFERRED, tuple(sorted(cands))),))

    def do_controlled_shutdown(self, c: ControllerBase, b: int, epoch: int) -> None:
        """``doControlledShutdown``: add to ``shuttingDownBrokerIds``; elect new leaders for the
        partitions it leads (ControlledShutdown strategy; single-replica partitions skipped);
        StopReplica(delete=false) and OfflineReplica for those it follows; respond.

        ``epoch`` is the request's broker epoch. With broker epochs (KIP-380,
        Kafka 2.2's ``doControlledShutdown(id, brokerEpoch)``) a request from an older epoch
        than the controller's cached one is refused (``StaleBrokerEpochException``): it was
        sent by an incarnation of the broker that has since restarted, and acting on it would
        shut down the new one's replicas (found by the release suite's ``controller-explore``
        entry: a request queued before a crash and processed after the restart)."""
        ctx = c.ctx
        if not ctx.live[b]:
            return  # BrokerNotAvailableException
        if c.sys.cfg.broker_epoch and epoch and epoch < ctx.live[b]:
            return  # StaleBrokerEpochException: the old incarnation is gone, nobody reads the answer
        if b not in ctx.shutting:
            c.ctx = ctx = ctx._replace(shutting=tuple(sorted((*ctx.shutting, b))))
        led: list[int] = []
        followed: list[int] = []
        for p in c.sys.parts_of[b]:
            if b not in ctx.ar[p] or ctx.pstates[p] == PartitionState.NonExistentPartition:
                continue
            z = ctx.leaders[p]
            act = controlled_shutdown_partition_action(
                ctx.ar[p],
                z.leader if z is not None else NO_LEADER,
                b,
                z is not None,
                c.is_topic_queued_up_for_deletion(p),
            )
            if act == ControlledShutdownAction.ELECT_LEADER:
                led.append(p)
            elif act == ControlledShutdownAction.OFFLINE_FOLLOWER:
                followed.append(p)
        prog: list = []
        if led:
            prog.append(ElectLeaderForPartitions(S_CONTROLLED_SHUTDOWN, tuple(led)))
        if followed:
            prog += [SendStopReplica(b, tuple(followed), False), OfflineReplicas(b, tuple(followed))]
        prog.append(ControlledShutdownRespond(b))
        self.kafka_controller.run(c, tuple(prog))

    def pending_preferred(self, c: ControllerBase, parts: tuple[int, ...]) -> tuple[int, ...]:
        """``fetchPendingPreferredReplicaElections`` (seed 002): drop partitions whose topic is
        gone or whose leader already is the preferred replica, and those queued for deletion."""
        ctx = c.ctx
        out = []
        for p in parts:
            if ctx.pstates[p] == PartitionState.NonExistentPartition:
                continue  # topicDeleted
            z = ctx.leaders[p]
            if z is not None and z.leader == ctx.ar[p][0]:
                continue  # successful
            if c.is_topic_queued_up_for_deletion(p):
                continue
            out.append(p)
        return tuple(out)
