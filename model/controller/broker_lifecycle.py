"""``BrokerChange``: new, dead and bounced brokers (KIP-380 broker epochs), ``onBrokerStartup``
and ``onBrokerFailure`` (seed 001).
"""

from __future__ import annotations

from typing import ClassVar

from explorer.mypyc_compat import mypyc_attr
from explorer.speedups import set_item
from model.controller.base import Component, ControllerBase
from model.controller.program import (
    AddLiveBrokersAndEpochs,
    FailReplicaDeletion,
    OfflineReplicas,
    OnBrokerFailure,
    OnBrokerStartup,
    OnPartitionReassignment,
    RemoveLiveBrokers,
    ResumeDeletionForTopics,
    SendUpdateMetadataRequest,
    TriggerOnlinePartitionStateChange,
)
from model.controller.state import D_DEL_RESUME, PartZ
from model.election import NO_LEADER
from model.state_machines import PartitionState


@mypyc_attr(allow_interpreted_subclasses=True)
class BrokerLifecycle(Component):
    """``BrokerChange``: ``onBrokerStartup``, ``onBrokerFailure`` (and a bounced broker as both)."""

    #: Kafka 2.x's ``processBrokerChange`` removes the dead brokers from the live set only after
    #: ``onBrokerStartup(new)`` and the bounced brokers' handling, right before
    #: ``onBrokerFailure(dead)``: an election ``onBrokerStartup`` triggers still counts them live
    #: (0.8's ``BrokerChangeListener`` sets ``liveBrokers`` to the brokers read, at once)
    dead_removed_late: ClassVar[bool] = True

    def process_broker_change(self, c: ControllerBase, cur: tuple[int, ...], rest: tuple) -> None:
        if self.kafka_controller.resigned(c, rest):
            return
        ctx = c.ctx
        live = ctx.live
        new = tuple(b for b in range(c.sys.nb) if cur[b] and not live[b])
        dead = tuple(b for b in range(c.sys.nb) if live[b] and not cur[b])
        bounced = self.bounced_brokers(c, cur, live) if c.sys.cfg.broker_epoch else ()
        nl = live
        for b in new:
            nl = set_item(nl, b, cur[b])
        late = self.dead_removed_late
        if not late:
            for b in dead:
                nl = set_item(nl, b, 0)
        # 2.x: addLiveBrokers(new) now; removeLiveBrokers(dead) only after onBrokerStartup(new)
        # and the bounced brokers' handling, right before onBrokerFailure(dead) (a
        # RemoveLiveBrokers step below)
        if nl is not live:  # a broker added (or removed early)
            c.ctx = ctx._replace(live=nl)
        if c.sys.admin:
            # controllerChannelManager.removeBroker for dead and bounced brokers: the queued
            # requests to the old incarnation are dropped (admin configurations only: before
            # StopReplica callbacks, the broker epoch check rejected them with the same effect)
            base = c.me * c.sys.nb
            for b in (*dead, *bounced):
                if c.chans[base + b]:
                    c.chans = set_item(c.chans, base + b, ())
        prog: tuple = ()
        if new:
            prog += (OnBrokerStartup(new),)
        if bounced:
            prog += (
                RemoveLiveBrokers(bounced),
                OnBrokerFailure(bounced),
                AddLiveBrokersAndEpochs(tuple((b, cur[b]) for b in bounced)),
                OnBrokerStartup(bounced),
            )
        if dead:
            prog += (RemoveLiveBrokers(dead), OnBrokerFailure(dead)) if late else (OnBrokerFailure(dead),)
        self.kafka_controller.run(c, prog + rest)

    def bounced_brokers(
        self, c: ControllerBase, cur: tuple[int, ...], live: tuple[int, ...]
    ) -> tuple[int, ...]:
        """``processBrokerChange``'s ``bouncedBrokerIds`` (KIP-380): brokers live before and now
        whose registration epoch grew (``curBrokerIdAndEpochs(id) > liveBrokerIdAndEpochs(id)``)."""
        return tuple(b for b in range(c.sys.nb) if live[b] and cur[b] and cur[b] > live[b])

    def on_broker_startup(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        """``onBrokerStartup``: UpdateMetadata to all, replicas -> Online, trigger elections."""
        c.send_update_metadata_request()
        c.send_requests_to_brokers(self.replica_state_machine.replicas_to_online(c, brokers))
        prog: tuple = (TriggerOnlinePartitionStateChange(),)
        ctx = c.ctx
        if ctx.reassigning:  # restart the reassignments with new replicas on the new brokers
            restart = [p for p, rar in ctx.reassigning if any(b in rar for b in brokers)]
            prog += tuple(OnPartitionReassignment(p, 1) for p in restart)
        if ctx.deleting:
            prog += self.resume_deletion_for_brokers(c, brokers)
        return prog

    def resume_deletion_for_brokers(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        """``onBrokerStartup``'s ``resumeDeletionForTopics``: the topics queued for deletion with
        a replica on a new broker are eligible again (the program step that resumes them)."""
        sys = c.sys
        ctx = c.ctx
        topics = tuple(
            sorted(
                {
                    p // sys.ppt
                    for b in brokers
                    for p in sys.parts_of[b]
                    if c.is_topic_queued_up_for_deletion(p) and b in ctx.ar[p]
                }
            )
        )
        if not topics:
            return ()
        c.done |= D_DEL_RESUME
        return (ResumeDeletionForTopics(topics),)

    def leader_lost(self, c: ControllerBase, z: PartZ, brokers: tuple[int, ...]) -> bool:
        """``onBrokerFailure``'s test for a partition to go OfflinePartition (``brokers``: the
        failed ones): 2.x ``partitionsWithOfflineLeader``, no live leader (-1 included)."""
        return z.leader == NO_LEADER or not c.ctx.live[z.leader]

    def on_broker_failure(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        """``onBrokerFailure`` / ``onReplicasBecomeOffline``."""
        ctx = c.ctx
        if ctx.shutting:
            c.ctx = ctx = ctx._replace(shutting=tuple(b for b in ctx.shutting if b not in brokers))
        without_leader = []
        for p, z in enumerate(ctx.leaders):
            if z is not None and self.leader_lost(c, z, brokers):
                if ctx.deleting and c.is_topic_queued_up_for_deletion(p):
                    continue
                without_leader.append(p)
        for p in without_leader:
            c.set_pstate(p, PartitionState.OfflinePartition)
            c.history |= 2 << p
        prog: tuple = (TriggerOnlinePartitionStateChange(),)
        if ctx.deleting:
            sys = c.sys
            for b in brokers:
                mine = [
                    p
                    for p in sys.parts_of[b]
                    if b in ctx.ar[p] and ctx.pstates[p] != PartitionState.NonExistentPartition
                ]
                keep = tuple(p for p in mine if not c.is_topic_queued_up_for_deletion(p))
                dele = tuple(p for p in mine if c.is_topic_queued_up_for_deletion(p))
                prog += (OfflineReplicas(b, keep),)
                if dele:
                    prog += (FailReplicaDeletion(((b, dele),)),)
        else:
            prog += tuple(OfflineReplicas(b) for b in brokers)
        if not without_leader:
            prog += (SendUpdateMetadataRequest(),)
        return prog
