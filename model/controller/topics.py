"""``TopicChange`` (``onNewTopicCreation``) and ``PartitionModifications``
(``onNewPartitionCreation``): seed 001's topic creation and partition expansion.
"""

from __future__ import annotations

from model.controller.broker_lifecycle import BrokerLifecycle
from model.controller.program import O_NEW_PARTITIONS, O_NEW_REPLICAS_ONLINE
from model.state_machines import PartitionState, ReplicaState


class TopicChanges(BrokerLifecycle):
    """``TopicChange`` (``onNewTopicCreation``) and ``PartitionModifications`` (``onNewPartitionCreation``)."""

    __slots__ = ()

    def process_topic_change(self, ntopics: int, rest: tuple, gone: tuple[int, ...] = ()) -> None:
        """The topics read from ``/brokers/topics``: the ones the context lacks are new."""
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        sys = self.sys
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
            self.run(rest)
            return
        self.run(((O_NEW_PARTITIONS, new), (O_NEW_REPLICAS_ONLINE, new), *rest))

    def on_new_partition_creation(self, parts: tuple[int, ...], rest: tuple) -> bool:
        """``onNewPartitionCreation``: partitions -> NewPartition, replicas -> NewReplica, then
        NewPartition -> OnlinePartition (``initializeLeaderAndIsrForPartitions``: a create of the
        partition state znodes, conditioned like every controller write; its LeaderAndIsr goes
        to the new ISR). ``rest`` starts with the replicas' NewReplica -> OnlineReplica."""
        for p in parts:
            self.set_pstate(p, PartitionState.NewPartition)
            for r in self.ctx.ar[p]:
                self.set_rstate(p, r, ReplicaState.NewReplica)
        init = tuple(p for p in parts if self.ctx.pstates[p] == PartitionState.NewPartition)
        return self.initialize_leader_and_isr_for_partitions(init, (), (), rest)

    def new_replicas_online(self, parts: tuple[int, ...]) -> None:
        """``replicaStateMachine.handleStateChanges(replicasForPartition(newPartitions), OnlineReplica)``."""
        sys = self.sys
        batch: list = []
        for p in parts:
            for r in self.ctx.ar[p]:
                cur = self.ctx.rstates[p][sys.rindex[p][r]]
                if self.set_rstate(p, r, ReplicaState.OnlineReplica) and cur != ReplicaState.NewReplica:
                    z = self.ctx.leaders[p]
                    if z is not None:
                        batch.append((r, self.entry(p, z)))
        self.send_requests_to_brokers(tuple(batch))

    def process_partition_modifications(self, t: int, present: tuple[bool, ...], rest: tuple) -> None:
        """New partitions of topic ``t`` (in ZooKeeper, not in the context) are created with
        ``onNewPartitionCreation``, unless the topic is queued for deletion."""
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        if t in ctx.deleting:
            self.run(rest)  # "Skipping adding partitions ... since it is currently being deleted"
            return
        new = tuple(
            p
            for p, here in zip(self.topic_partitions(t), present)
            if here and ctx.pstates[p] == PartitionState.NonExistentPartition
        )
        if not new:
            self.run(rest)
            return
        self.run(((O_NEW_PARTITIONS, new), (O_NEW_REPLICAS_ONLINE, new), *rest))
