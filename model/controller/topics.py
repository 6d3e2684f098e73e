"""``TopicChange`` (``onNewTopicCreation``) and ``PartitionModifications``
(``onNewPartitionCreation``): seed 001's topic creation and partition expansion.
"""

from __future__ import annotations

from explorer.mypyc_compat import mypyc_attr
from model.controller.base import Component, ControllerBase
from model.controller.program import (
    NewReplicasOnline,
    OnNewPartitionCreation,
)
from model.state_machines import PartitionState, ReplicaState


@mypyc_attr(allow_interpreted_subclasses=True)
class TopicChanges(Component):
    """``TopicChange`` (``onNewTopicCreation``) and ``PartitionModifications`` (``onNewPartitionCreation``)."""

    def process_topic_change(
        self, c: ControllerBase, ntopics: int, rest: tuple, gone: tuple[int, ...] = ()
    ) -> None:
        """The topics read from ``/brokers/topics``: the ones the context lacks are new."""
        if self.kafka_controller.resigned(c, rest):
            return
        ctx = c.ctx
        sys = c.sys
        ppt = sys.ppt
        pst = ctx.pstates
        added = sys.added
        new = tuple(
            p
            for t in range(ntopics)
            if pst[t * ppt] == PartitionState.NonExistentPartition and t not in gone
            for p in range(t * ppt, (t + 1) * ppt)
            if p not in added
        )
        if not new:
            self.kafka_controller.run(c, rest)
            return
        self.kafka_controller.run(c, (OnNewPartitionCreation(new), NewReplicasOnline(new), *rest))

    def on_new_partition_creation(self, c: ControllerBase, parts: tuple[int, ...], rest: tuple) -> bool:
        """``onNewPartitionCreation``: partitions -> NewPartition, replicas -> NewReplica, then
        NewPartition -> OnlinePartition (``initializeLeaderAndIsrForPartitions``: a create of the
        partition state znodes, conditioned like every controller write; its LeaderAndIsr goes
        to the new ISR). ``rest`` starts with the replicas' NewReplica -> OnlineReplica."""
        for p in parts:
            c.set_pstate(p, PartitionState.NewPartition)
            for r in c.ctx.ar[p]:
                c.set_rstate(p, r, ReplicaState.NewReplica)
        init = tuple(p for p in parts if c.ctx.pstates[p] == PartitionState.NewPartition)
        return self.partition_state_machine.initialize_leader_and_isr_for_partitions(c, init, (), (), rest)

    def new_replicas_online(self, c: ControllerBase, parts: tuple[int, ...]) -> None:
        """``replicaStateMachine.handleStateChanges(replicasForPartition(newPartitions), OnlineReplica)``."""
        sys = c.sys
        batch: list = []
        for p in parts:
            for r in c.ctx.ar[p]:
                cur = c.ctx.rstates[p][sys.rindex[p][r]]
                if c.set_rstate(p, r, ReplicaState.OnlineReplica) and cur != ReplicaState.NewReplica:
                    z = c.ctx.leaders[p]
                    if z is not None:
                        batch.append((r, c.entry(p, z)))
        c.send_requests_to_brokers(tuple(batch))

    def process_partition_modifications(
        self, c: ControllerBase, t: int, present: tuple[bool, ...], rest: tuple
    ) -> None:
        """New partitions of topic ``t`` (in ZooKeeper, not in the context) are created with
        ``onNewPartitionCreation``, unless the topic is queued for deletion."""
        if self.kafka_controller.resigned(c, rest):
            return
        ctx = c.ctx
        if t in ctx.deleting:
            self.kafka_controller.run(
                c, rest
            )  # "Skipping adding partitions ... since it is currently being deleted"
            return
        new = tuple(
            p
            for p, here in zip(c.topic_partitions(t), present)
            if here and ctx.pstates[p] == PartitionState.NonExistentPartition
        )
        if not new:
            self.kafka_controller.run(c, rest)
            return
        self.kafka_controller.run(c, (OnNewPartitionCreation(new), NewReplicasOnline(new), *rest))
