"""The controller model's named bugs: each a small override of one Kafka method.

Every mutant here is a subclass of one actor of the system, replacing one method: a
:class:`~model.controller.controller.KafkaController` (the controller of one broker), the
``ZooKeeperServer`` or the brokers' ``ReplicaManager``. :func:`mutant` registers it as the
system built with that class in the actor's seam (``ControllerSystem(cfg, controller=...)``,
``zookeeper=...``, ``replica_manager=...``); no mutant subclasses the system. The tests that show which property each
breaks are in ``tests/test_controller.py``, ``tests/test_controller_admin.py`` and
``tests/test_guards.py`` (and every property's, with its explanation, in ``tests/test_explanations.py``).

>>> from invariants.mutants.controller import MUTANTS, ControllerConfig
>>> type(MUTANTS.system("no-epoch-bump", ControllerConfig(brokers=2)).kafka_controller).__name__
'NoEpochBump'
>>> ControllerConfig(brokers=2, mutant="no-such-bug")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.config.ConfigError: mutant: expected one of none, no-epoch-bump, ..., got 'no-such-bug'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from explorer.config import ConfigError, key
from explorer.speedups import set_item
from invariants.mutants import Catalogue
from model.controller import ControllerConfig as ModelControllerConfig
from model.controller import ControllerSystem, Elector, Node, State, Zk, bugs
from model.controller.admin import AdminWorkflows
from model.controller.base import ControllerBase
from model.controller.broker import Brokers
from model.controller.broker_lifecycle import BrokerLifecycle
from model.controller.config import ByVersion
from model.controller.continuations import InitializeLeaderAndIsrWritten, RegisterController
from model.controller.controller import KafkaController
from model.controller.events import (
    EVENTS,
    ControllerEvent,
    Expire,
    PartitionReassignmentIsrChange,
    Reelect,
    Startup,
)
from model.controller.messages import (
    BROKER_REQUESTS,
    S_CONTROLLED_SHUTDOWN,
    S_INIT,
    S_OFFLINE,
    S_PREFERRED,
    S_REASSIGN,
    DeletePreferredReplicaElection,
    DeleteTopicZNode,
    GetControllerIdAndEpoch,
    LeaderAndIsrRequest,
    RegisterBroker,
    UpdateIsr,
    UpdateLeaderAndIsr,
)
from model.controller.program import (
    CompleteDeleteTopic,
    OfflineReplicas,
    OnPartitionReassignment,
    OnTopicDeletion,
    SendUpdateMetadataRequest,
    TriggerOnlinePartitionStateChange,
)
from model.controller.replica_manager import ReplicaManager
from model.controller.responses import ControllerRegistered, TopicPartitionStates
from model.controller.state import PartZ
from model.controller.state_machines import PartitionStateMachine, ReplicaStateMachine
from model.controller.system import SEAMS
from model.controller.topic_deletion import TopicDeletionManager
from model.controller.topics import TopicChanges
from model.controller.zookeeper import ZooKeeperServer
from model.election import (
    NO_LEADER,
    ElectionOutcome,
    ElectionResult,
    LeaderAndIsr,
    leader_for_controlled_shutdown,
    leader_for_preferred_replica,
    offline_partition_leader_election_strategy,
)
from model.state_machines import PartitionState, ReplicaState

__all__ = ["MUTANTS", "ControllerConfig", "build"]

MUTANTS = Catalogue("controller", ControllerSystem)
"""Every controller mutant by name (``none``: the model as written)."""


@dataclass(frozen=True)
class WithSeams:
    """Builds the controller system with some seams replaced (``ControllerSystem``'s keyword
    arguments; picklable, so that the parallel and Spark engines can ship the mutant)."""

    seams: tuple[tuple[str, type], ...]

    def __call__(self, cfg: ModelControllerConfig) -> ControllerSystem:
        return ControllerSystem(cfg, **dict(self.seams))


def seam_of(cls: type) -> str:
    """The seam a class replaces: the one whose default class it subclasses.

    >>> seam_of(ReplicaManager)
    'replica_manager'
    """
    return next(name for name, base in SEAMS.items() if issubclass(cls, base))


def mutant(name: str, doc: str, also: tuple[type, ...] = ()) -> Any:
    """Register a subclass of one of the system's seams (``SEAMS``: the controller of a step, a
    component such as ``PartitionStateMachine``, or an actor such as ``ZooKeeperServer``) as
    mutant ``name``: the system built with it, and the classes ``also`` names, in their seams."""

    def add(cls: type) -> type:
        MUTANTS.register(name, doc)(WithSeams(tuple((seam_of(c), c) for c in (cls, *also))))
        return cls

    return add


# -- ZooKeeper writes of the election -----------------------------------------------------------


@mutant("no-epoch-bump", "a new controller writes the controller epoch it read, not epoch + 1")
class NoEpochBump(KafkaController):
    def next_controller_epoch(self, c: ControllerBase, epoch: int) -> int:
        return epoch


@mutant("epoch-reset", "the 2.x election writes controller epoch 1 once the epoch read is 2 or more")
class EpochReset(KafkaController):
    def next_controller_epoch(self, c: ControllerBase, epoch: int) -> int:
        if epoch >= 2 and not c.sys.legacy:
            return 1
        return epoch + 1


@mutant(
    "failover-keeps-old-epoch", "a new controller fails over with the epoch (and zkVersion) before its win"
)
class FailoverKeepsOldEpoch(KafkaController):
    def resume(self, c: ControllerBase, resp: Any) -> None:
        if type(c.pending) is RegisterController and resp.ok:
            resp = ControllerRegistered(resp.ok, resp.epoch - 1, resp.epoch_zk_version - 1)
        super().resume(c, resp)


@mutant(
    "no-reelect-on-controller-gone", "deleting /controller (or its owner's expiry) fires no Reelect watch"
)
class NoReelectOnControllerGone(ZooKeeperServer):
    def fire_watches(self, nodes: list[Node], ev: ControllerEvent, who: str, skip: int = -1) -> None:
        if type(ev) is not Reelect:
            super().fire_watches(nodes, ev, who, skip)


# -- brokers ------------------------------------------------------------------------------------


@mutant("no-controller-epoch-check", "a broker applies controller requests of a stale controller epoch")
class NoControllerEpochCheck(ReplicaManager):
    def deliver(self, s: State, sender: int, d: int) -> tuple[Any, State]:
        # deliver as if the broker had seen no newer epoch, then restore what it had seen
        n = s.nodes[d]
        ctl_epoch = BROKER_REQUESTS.view(s.chans[sender * self.nb + d][0]).controller_epoch
        if ctl_epoch >= n.seen_epoch:
            return super().deliver(s, sender, d)
        lowered = s._replace(nodes=set_item(s.nodes, d, n._replace(seen_epoch=ctl_epoch)))
        act, t = super().deliver(lowered, sender, d)
        nd = t.nodes[d]
        return act, t._replace(nodes=set_item(t.nodes, d, nd._replace(seen_epoch=n.seen_epoch)))


@mutant(
    "skip-replica-init",
    "onControllerFailover leaves every replica NonExistentReplica (no initializeReplicaState)",
)
class SkipReplicaInit(ReplicaStateMachine):
    def initialize_replica_state(
        self, c: ControllerBase, slots: tuple[int, ...], assigned: tuple[int, ...], live: tuple[int, ...]
    ) -> tuple[ReplicaState, ...]:
        return (ReplicaState.NonExistentReplica,) * len(slots)


@mutant("no-election-on-broker-failure", "onBrokerFailure does not trigger the offline elections")
class NoElectionOnBrokerFailure(BrokerLifecycle):
    def on_broker_failure(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        prog = super().on_broker_failure(c, brokers)
        assert type(prog[0]) is TriggerOnlinePartitionStateChange
        return prog[1:]


# -- partition leader election --------------------------------------------------------------------


@mutant("no-leader-epoch-bump", "an election writes the new leader with the old leader epoch")
class NoLeaderEpochBump(PartitionStateMachine):
    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        res = super().elect_leader_for_partition(c, strategy, p, cur, live, dyn)
        lai = res.leader_and_isr
        if lai is None:
            return res
        return res._replace(leader_and_isr=lai._replace(leader_epoch=cur.leader_epoch))


@mutant("leader-outside-isr", "doRemoveReplicasFromIsr drops the (surviving) leader from the ISR it writes")
class LeaderOutsideIsr(ReplicaStateMachine):
    def remove_replica_from_isr(self, c: ControllerBase, cur: LeaderAndIsr, b: int) -> LeaderAndIsr | None:
        lai = super().remove_replica_from_isr(c, cur, b)
        if lai is None or cur.leader == b:
            return lai
        return lai._replace(isr=tuple(r for r in cur.isr if r != cur.leader) or lai.isr)


@mutant("empty-isr", "doRemoveReplicasFromIsr removes the ISR's last member too")
class EmptyIsr(ReplicaStateMachine):
    def remove_replica_from_isr(self, c: ControllerBase, cur: LeaderAndIsr, b: int) -> LeaderAndIsr | None:
        lai = super().remove_replica_from_isr(c, cur, b)
        if lai is None:
            return lai
        return lai._replace(isr=tuple(r for r in cur.isr if r != b))


@mutant(
    "preferred-any-isr-replica", "the preferred replica election elects any live ISR replica (offline rule)"
)
class PreferredAnyIsrReplica(PartitionStateMachine):
    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        if strategy == S_PREFERRED:
            return offline_partition_leader_election_strategy(c.ctx.ar[p], cur, live, False, False)
        return super().elect_leader_for_partition(c, strategy, p, cur, live, dyn)


class LiveBrokersIncludeShuttingDown(ControllerBase):
    """``liveBrokerIds`` without the shutting-down filter (half of ``cs-elects-shutting-down``)."""

    __slots__ = ()

    def live_broker_ids(self) -> tuple[int, ...]:
        return tuple(b for b, e in enumerate(self.ctx.live) if e)


@mutant(
    "cs-elects-shutting-down",
    "liveBrokerIds and the controlled-shutdown election include shutting-down brokers",
    also=(LiveBrokersIncludeShuttingDown,),
)
class CsElectsShuttingDown(PartitionStateMachine):
    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> ElectionResult:
        if strategy == S_CONTROLLED_SHUTDOWN:
            live_or_shutting = tuple(b for b, e in enumerate(c.ctx.live) if e)
            return leader_for_controlled_shutdown(c.ctx.ar[p], cur, live_or_shutting, ())
        return super().elect_leader_for_partition(c, strategy, p, cur, live, dyn)


# -- admin workflows ------------------------------------------------------------------------------


@mutant(
    "no-deletion-retry-on-startup",
    "onBrokerStartup does not resume the deletion of topics with replicas on it",
)
class NoDeletionRetryOnStartup(BrokerLifecycle):
    def resume_deletion_for_brokers(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        return ()


@mutant(
    "delete-keeps-topic-queued",
    "completeDeleteTopic deletes the topic's znodes but leaves it in topicsToBeDeleted "
    "(the controller never forgets it: marked_topic_eventually_deleted, not L2)",
)
class DeleteKeepsTopicQueued(TopicDeletionManager):
    def complete_delete_topic(self, c: ControllerBase, t: int, rest: tuple) -> bool:
        deleting = c.ctx.deleting
        done = super().complete_delete_topic(c, t, rest)
        if done:
            c.ctx = c.ctx._replace(deleting=deleting)
        return done


@mutant("no-resume-after-replica-deletion", "completeReplicaDeletion does not call resumeDeletions")
class NoResumeAfterReplicaDeletion(TopicDeletionManager):
    def complete_replica_deletion(self, c: ControllerBase, b: int, parts: tuple[int, ...]) -> None:
        for p in parts:
            c.set_rstate(p, b, ReplicaState.ReplicaDeletionSuccessful)
        self.kafka_controller.run(c, ())


@mutant("delete-keeps-partition-state", "deleting a topic's znodes leaves its partition state znodes behind")
class DeleteKeepsPartitionState(ZooKeeperServer):
    def admin_request(self, zk: Zk, req: Any) -> tuple[Zk, Any]:
        zk2, resp = super().admin_request(zk, req)
        if type(req) is DeleteTopicZNode and resp is not None and resp.ok:
            zk2 = zk2._replace(parts=zk.parts)
        return zk2, resp


@mutant(
    "preferred-znode-kept",
    "deleting /admin/preferred_replica_election leaves it in place (removePartitionsFromPreferredReplicaElection lost)",
)
class PreferredZnodeKept(ZooKeeperServer):
    def admin_request(self, zk: Zk, req: Any) -> tuple[Zk, Any]:
        zk2, resp = super().admin_request(zk, req)
        if type(req) is DeletePreferredReplicaElection:
            zk2 = zk2._replace(preferred=zk.preferred)
        return zk2, resp


@mutant(
    "rebalance-counts-deleted-topics",
    "the auto leader rebalance counts (and elects) partitions of topics queued for deletion",
)
class RebalanceCountsDeletedTopics(AdminWorkflows):
    def check_and_trigger_auto_leader_rebalance(self, c: ControllerBase) -> None:
        deleting = c.ctx.deleting
        c.ctx = c.ctx._replace(deleting=())
        try:
            super().check_and_trigger_auto_leader_rebalance(c)
        finally:
            if c.ctx is not None:
                c.ctx = c.ctx._replace(deleting=deleting)


@mutant(
    "no-reassign-isr-watch", "the controller gets no PartitionReassignmentIsrChange when RAR joins the ISR"
)
class NoReassignIsrWatch(ZooKeeperServer):
    def fire_watches(self, nodes: list[Node], ev: ControllerEvent, who: str, skip: int = -1) -> None:
        if type(ev) is not PartitionReassignmentIsrChange:
            super().fire_watches(nodes, ev, who, skip)


@mutant(
    "reassign-keeps-context",
    "removePartitionsFromReassignedPartitions updates /admin/reassign_partitions but leaves the "
    "partition in partitionsBeingReassigned (reassignment_eventually_finished, not L4)",
)
class ReassignKeepsContext(AdminWorkflows):
    def reassign_remove(self, c: ControllerBase, p: int, completed: bool) -> None:
        reassigning = c.ctx.reassigning
        super().reassign_remove(c, p, completed)
        c.ctx = c.ctx._replace(reassigning=reassigning)


@mutant(
    "reassign-keeps-old-replica",
    "step 6 of a reassignment keeps OAR - RAR in the assignment (AR = RAR + old)",
)
class ReassignKeepsOldReplica(AdminWorkflows):
    def update_partition_replica_assignment(
        self, c: ControllerBase, p: int, replicas: tuple[int, ...]
    ) -> None:
        old = tuple(r for r in c.ctx.ar[p] if r not in replicas)
        super().update_partition_replica_assignment(c, p, replicas + old)


@mutant(
    "controlled-shutdown-ignores-broker-epoch",
    "doControlledShutdown acts on a request from an older broker epoch (no KIP-380 check): a request "
    "queued before a crash shuts down the restarted broker's replicas",
)
class ControlledShutdownIgnoresBrokerEpoch(AdminWorkflows):
    def do_controlled_shutdown(self, c: ControllerBase, b: int, epoch: int) -> None:
        super().do_controlled_shutdown(c, b, c.ctx.live[b] if c.ctx.live[b] else epoch)


# -- mistakes that epoch fencing hides (issue 20): caught by the convergence properties -----------


@mutant(
    "no-resign-on-controller-moved",
    "a controller that reads that /controller moved to another broker does not resign (maybeResign)",
)
class NoResignOnControllerMoved(KafkaController):
    def update_active_controller_id(self, c: ControllerBase, ctl: int) -> None:
        c.active_id = ctl


@mutant(
    "no-offline-replicas-on-broker-failure",
    "onBrokerFailure does not move the dead broker's replicas to OfflineReplica (no ISR removal)",
)
class NoOfflineReplicasOnBrokerFailure(BrokerLifecycle):
    def on_broker_failure(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        return tuple(op for op in super().on_broker_failure(c, brokers) if type(op) is not OfflineReplicas)


@mutant(
    "offline-election-keeps-dead-isr", "the clean offline election keeps the whole old ISR, dead brokers too"
)
class OfflineElectionKeepsDeadIsr(PartitionStateMachine):
    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        res = super().elect_leader_for_partition(c, strategy, p, cur, live, dyn)
        lai = res.leader_and_isr
        if strategy != S_OFFLINE or lai is None or res.outcome != ElectionOutcome.CLEAN:
            return res
        return res._replace(leader_and_isr=lai._replace(isr=cur.isr))


@mutant(
    "failover-dead-leader-online",
    "initializePartitionState marks a partition OnlinePartition whenever it has a leader, live or not",
)
class FailoverDeadLeaderOnline(PartitionStateMachine):
    def initialize_partition_state(self, c: ControllerBase, z: Any, live: tuple[int, ...]) -> PartitionState:
        if z is not None and z.leader != NO_LEADER:
            return PartitionState.OnlinePartition
        return super().initialize_partition_state(c, z, live)


@mutant(
    "ignores-newer-controller-state",
    "an election or ISR removal goes on over a partition state written by a newer controller",
)
class IgnoresNewerControllerState(PartitionStateMachine):
    def written_by_newer_controller(self, c: ControllerBase, z: Any) -> bool:
        return False


@mutant(
    "bounce-off-by-one", "processBrokerChange sees a bounce only when the broker epoch grew by more than one"
)
class BounceOffByOne(BrokerLifecycle):
    def bounced_brokers(
        self, c: ControllerBase, cur: tuple[int, ...], live: tuple[int, ...]
    ) -> tuple[int, ...]:
        return tuple(b for b in range(c.sys.nb) if live[b] and cur[b] and cur[b] > live[b] + 1)


@mutant(
    "fence-less-than",
    "the server fails a fenced controller write only when the epoch zkVersion is below the fence",
)
class FenceLessThan(ZooKeeperServer):
    @staticmethod
    def epoch_fence_holds(zk: Zk, fence: int) -> bool:
        return fence == -1 or not zk.epoch_version < fence


# -- issue 20: more Kafka-plausible mistakes, one method each (the mutation harness's catalogue) --


@mutant(
    "no-um-on-broker-startup",
    "onBrokerStartup sends no UpdateMetadata to the live brokers before the replicas",
)
class NoUmOnBrokerStartup(BrokerLifecycle):
    def on_broker_startup(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        c.send_requests_to_brokers(self.replica_state_machine.replicas_to_online(c, brokers))
        prog: tuple = (TriggerOnlinePartitionStateChange(),)
        ctx = c.ctx
        if ctx.reassigning:
            restart = [p for p, rar in ctx.reassigning if any(b in rar for b in brokers)]
            prog += tuple(OnPartitionReassignment(p, 1) for p in restart)
        if ctx.deleting:
            prog += self.resume_deletion_for_brokers(c, brokers)
        return prog


@mutant(
    "startup-skips-online-replicas",
    "onBrokerStartup does not move the restarted broker's replicas to OnlineReplica (no LeaderAndIsr)",
)
class StartupSkipsOnlineReplicas(BrokerLifecycle):
    def on_broker_startup(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        c.send_update_metadata_request()
        prog: tuple = (TriggerOnlinePartitionStateChange(),)
        ctx = c.ctx
        if ctx.reassigning:
            restart = [p for p, rar in ctx.reassigning if any(b in rar for b in brokers)]
            prog += tuple(OnPartitionReassignment(p, 1) for p in restart)
        if ctx.deleting:
            prog += self.resume_deletion_for_brokers(c, brokers)
        return prog


@mutant("startup-no-trigger", "onBrokerStartup does not call triggerOnlinePartitionStateChange")
class StartupNoTrigger(BrokerLifecycle):
    def on_broker_startup(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        prog = super().on_broker_startup(c, brokers)
        assert type(prog[0]) is TriggerOnlinePartitionStateChange
        return prog[1:]


@mutant(
    "no-um-on-broker-failure", "onBrokerFailure sends no UpdateMetadata when no partition lost its leader"
)
class NoUmOnBrokerFailure(BrokerLifecycle):
    def on_broker_failure(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        return tuple(
            op for op in super().on_broker_failure(c, brokers) if type(op) is not SendUpdateMetadataRequest
        )


@mutant(
    "dead-broker-not-removed", "processBrokerChange computes no dead brokers (a lost registration is ignored)"
)
class DeadBrokerNotRemoved(BrokerLifecycle):
    def process_broker_change(self, c: ControllerBase, cur: tuple[int, ...], rest: tuple) -> None:
        if c.ctx is not None:
            cur = tuple(c or was for c, was in zip(cur, c.ctx.live))
        super().process_broker_change(c, cur, rest)


@mutant(
    "lai-to-old-isr",
    "an election sends the LeaderAndIsr to the old ISR instead of the live assigned replicas",
)
class LaiToOldIsr(PartitionStateMachine):
    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        res = super().elect_leader_for_partition(c, strategy, p, cur, live, dyn)
        return res._replace(live_replicas=cur.isr)


@mutant(
    "offline-election-ignores-liveness",
    "the offline election takes every assigned replica as live (elects a dead ISR member)",
)
class OfflineElectionIgnoresLiveness(PartitionStateMachine):
    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        if strategy == S_OFFLINE:
            live = c.ctx.ar[p]
        return super().elect_leader_for_partition(c, strategy, p, cur, live, dyn)


@mutant(
    "preferred-ignores-liveness",
    "the preferred replica election elects the preferred replica even if it is dead",
)
class PreferredIgnoresLiveness(PartitionStateMachine):
    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        if strategy == S_PREFERRED:
            return leader_for_preferred_replica(c.ctx.ar[p], cur, tuple(range(c.sys.nb)))
        return super().elect_leader_for_partition(c, strategy, p, cur, live, dyn)


@mutant(
    "reassign-ignores-liveness",
    "the reassignment election takes the first target replica in the ISR, live or not",
)
class ReassignIgnoresLiveness(PartitionStateMachine):
    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        if strategy == S_REASSIGN:
            live = c.ctx.ar[p]
        return super().elect_leader_for_partition(c, strategy, p, cur, live, dyn)


@mutant("remove-isr-no-epoch-bump", "doRemoveReplicasFromIsr writes the shrunk ISR with the old leader epoch")
class RemoveIsrNoEpochBump(ReplicaStateMachine):
    def remove_replica_from_isr(self, c: ControllerBase, cur: LeaderAndIsr, b: int) -> LeaderAndIsr | None:
        lai = super().remove_replica_from_isr(c, cur, b)
        return None if lai is None else lai._replace(leader_epoch=cur.leader_epoch)


@mutant(
    "elect-trusts-cached-state",
    "doElectLeaderForPartitions elects from the context's cached partition state, not the one read from ZooKeeper",
)
class ElectTrustsCachedState(PartitionStateMachine):
    def elect_leader_for_partitions_read(
        self, c: ControllerBase, resp: Any, data: tuple, batch: tuple, rest: tuple
    ) -> None:
        if c.ctx is not None:
            cached = tuple((p, c.ctx.leaders[p] or z) for p, z in resp.states)
            resp = TopicPartitionStates(cached, resp.unclean_topics)
        super().elect_leader_for_partitions_read(c, resp, data, batch, rest)


@mutant(
    "isr-change-keeps-cached-state",
    "IsrChangeNotification does not update the context's leader and ISR from what it read",
)
class IsrChangeKeepsCachedState(PartitionStateMachine):
    def process_isr_change_notification(
        self, c: ControllerBase, notes: tuple[tuple[int, int], ...], states: tuple, rest: tuple
    ) -> None:
        super().process_isr_change_notification(c, notes, (None,) * len(states), rest)


@mutant(
    "unfenced-controller-writes",
    "the controller's ZooKeeper writes carry no check of /controller_epoch's version",
)
class UnfencedControllerWrites(ControllerBase):
    __slots__ = ()

    def fence(self) -> int:
        return -1


@mutant(
    "inactive-event-requeued",
    "a broker that is not the controller puts an event it does not act on back at the end of its queue "
    "(2.x's `if (!isActive) return` made a retry)",
)
class InactiveEventRequeued(KafkaController):
    def process_event(self, c: ControllerBase, ev: ControllerEvent) -> None:
        super().process_event(c, ev)
        kind = type(EVENTS.view(ev) if type(ev) is tuple else ev)
        if c.ctx is None and kind not in (Startup, Reelect, Expire) and ev not in c.events:
            c.events = (*c.events, ev)


@mutant(
    "resign-keeps-channels",
    "onControllerResignation does not shut the channels: queued requests still go out",
)
class ResignKeepsChannels(KafkaController):
    def on_controller_resignation(self, c: ControllerBase) -> None:
        c.watch = False
        c.ctx = None  # type: ignore[assignment]


@mutant(
    "resign-keeps-context",
    "onControllerResignation keeps the controller context (the old controller acts on)",
)
class ResignKeepsContext(KafkaController):
    def on_controller_resignation(self, c: ControllerBase) -> None:
        ctx = c.ctx
        super().on_controller_resignation(c)
        c.ctx = ctx


@mutant(
    "expire-no-resign", "the (queued) session-expiry handler re-registers without onControllerResignation"
)
class ExpireNoResign(KafkaController):
    def process_event(self, c: ControllerBase, ev: ControllerEvent) -> None:
        if type(ev) is Expire and c.sys.cfg.elector is not Elector.LEGACY:
            c.active_id = -1
            c.send_zk(RegisterBroker(True))
            return
        super().process_event(c, ev)


@mutant(
    "stop-replica-error-as-success",
    "a StopReplica error response counts as a successful replica deletion (the deletion completes anyway)",
)
class StopReplicaErrorAsSuccess(TopicDeletionManager):
    def stop_replica_response(self, c: ControllerBase, b: int, mask: int, error: bool) -> None:
        super().stop_replica_response(c, b, mask, False)


@mutant(
    "reassign-no-stop-old",
    "a completed reassignment skips steps 8-9: OAR - RAR are neither removed from the ISR nor stopped",
)
class ReassignNoStopOld(AdminWorkflows):
    def reassign_stop_old(self, c: ControllerBase, p: int, old: tuple[int, ...], rest: tuple) -> bool:
        return super().reassign_stop_old(c, p, (), rest)


@mutant(
    "broker-accepts-equal-leader-epoch",
    "a broker applies a LeaderAndIsr whose leader epoch equals (is not newer than) its own",
)
class BrokerAcceptsEqualLeaderEpoch(ReplicaManager):
    def deliver(self, s: State, sender: int, d: int) -> tuple[Any, State]:
        msg = s.chans[sender * self.nb + d][0]
        n = s.nodes[d]
        if type(msg) is not LeaderAndIsrRequest:
            return super().deliver(s, sender, d)
        equal = {
            e.partition: e.leader_epoch
            for e in msg.partition_states
            if n.reps[e.partition].epoch == e.leader_epoch
        }
        if not equal:
            return super().deliver(s, sender, d)
        # as if the replica had the previous epoch, then restore it where the request was dropped
        reps = n.reps
        for p, ep in equal.items():
            reps = set_item(reps, p, reps[p]._replace(epoch=ep - 1))
        act, t = super().deliver(s._replace(nodes=set_item(s.nodes, d, n._replace(reps=reps))), sender, d)
        nd = t.nodes[d]
        reps = nd.reps
        for p, ep in equal.items():
            if reps[p].epoch == ep - 1:
                reps = set_item(reps, p, reps[p]._replace(epoch=ep))
        return act, t._replace(nodes=set_item(t.nodes, d, nd._replace(reps=reps)))


@mutant(
    "broker-epoch-check-le",
    "a broker rejects controller requests whose broker epoch is <= its own (not only older ones)",
)
class BrokerEpochCheckLe(ReplicaManager):
    def deliver(self, s: State, sender: int, d: int) -> tuple[Any, State]:
        msg = BROKER_REQUESTS.view(s.chans[sender * self.nb + d][0])
        n = s.nodes[d]
        if not self.cfg.broker_epoch or msg.broker_epoch != n.bepoch:
            return super().deliver(s, sender, d)
        raised = s._replace(nodes=set_item(s.nodes, d, n._replace(bepoch=n.bepoch + 1)))
        act, t = super().deliver(raised, sender, d)
        return act, t._replace(nodes=set_item(t.nodes, d, t.nodes[d]._replace(bepoch=n.bepoch)))


@mutant(
    "isr-update-unconditional",
    "a leader's ISR shrink/expand write to ZooKeeper is not conditioned on the zkVersion it read",
)
class IsrUpdateUnconditional(ZooKeeperServer):
    def apply(self, s: State, b: int) -> tuple[Any, State, Any]:
        n = s.nodes[b]
        req: Any = n.zk_out[0]
        cur = s.zk.parts[req.partition] if type(req) is UpdateIsr else None
        if cur is not None:
            req = UpdateIsr(req.partition, req.state._replace(version=cur.version))
            s = s._replace(nodes=set_item(s.nodes, b, n._replace(zk_out=(req, *n.zk_out[1:]))))
        return super().apply(s, b)


@mutant(
    "ctl-watch-not-rearmed",
    "reading /controller does not re-arm a watch the broker lost (after a session expiry no Reelect reaches it)",
)
class CtlWatchNotRearmed(ZooKeeperServer):
    def apply(self, s: State, b: int) -> tuple[Any, State, Any]:
        n = s.nodes[b]
        act, t, resp = super().apply(s, b)
        if type(n.zk_out[0]) is GetControllerIdAndEpoch and not n.ctl_watch:
            t = t._replace(nodes=set_item(t.nodes, b, t.nodes[b]._replace(ctl_watch=False)))
        return act, t, resp


# -- the probe of plausible mistakes (docs/mutation.md, "A probe of plausible mistakes") --------


@mutant(
    "cs-isr-keeps-shutting-down",
    "leaderForControlledShutdown keeps the shutting-down brokers in the new ISR (no isr.filter)",
)
class ShutdownIsrKeepsShuttingDown(PartitionStateMachine):
    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        res = super().elect_leader_for_partition(c, strategy, p, cur, live, dyn)
        if strategy != S_CONTROLLED_SHUTDOWN or res.leader_and_isr is None:
            return res
        return res._replace(leader_and_isr=res.leader_and_isr._replace(isr=cur.isr))


def _initialize_with(
    psm: PartitionStateMachine,
    c: ControllerBase,
    new_parts: tuple,
    elect: tuple,
    batch: tuple,
    rest: tuple,
    pick: Any,
) -> bool:
    """``initializeLeaderAndIsrForPartitions`` with ``pick(assigned, live assigned)`` giving the
    new leader and ISR in place of ``LeaderAndIsr(liveAssigned.head, liveAssigned)``."""
    live = c.live_broker_ids()
    writes = []
    for p in new_parts:
        ar = c.ctx.ar[p]
        live_assigned = tuple(r for r in ar if r in live)
        c.record_election("new_partition", "isr" if live_assigned else "none")
        if live_assigned:
            leader, isr = pick(ar, live_assigned)
            writes.append((p, PartZ(leader, 0, isr, c.ctx.epoch, -1)))
    if writes:
        c.send_zk(UpdateLeaderAndIsr(tuple(writes), c.fence(), c.ctx.epoch, True, S_INIT))
        c.park(InitializeLeaderAndIsrWritten(elect, batch=batch, rest=rest))
        return True
    return bool(psm.do_elect_leader_for_partitions(c, elect, batch, rest))


@mutant(
    "new-partition-isr-all-assigned", "a new partition's ISR is its whole assignment, dead replicas included"
)
class NewPartitionIsrAllAssigned(PartitionStateMachine):
    def initialize_leader_and_isr_for_partitions(
        self, c: ControllerBase, new_parts: tuple, elect: tuple, batch: tuple, rest: tuple
    ) -> bool:
        return _initialize_with(self, c, new_parts, elect, batch, rest, lambda ar, live: (live[0], ar))


@mutant("new-partition-dead-leader", "a new partition's leader is its first assigned replica, live or not")
class NewPartitionDeadLeader(PartitionStateMachine):
    def initialize_leader_and_isr_for_partitions(
        self, c: ControllerBase, new_parts: tuple, elect: tuple, batch: tuple, rest: tuple
    ) -> bool:
        return _initialize_with(self, c, new_parts, elect, batch, rest, lambda ar, live: (ar[0], live))


@mutant(
    "topic-change-resurrects-deleted",
    "TopicChange treats a deleted topic the read still reports (gone from the context) as a new one",
)
class TopicChangeResurrectsDeleted(TopicChanges):
    def process_topic_change(
        self, c: ControllerBase, ntopics: int, rest: tuple, gone: tuple[int, ...] = ()
    ) -> None:
        super().process_topic_change(c, ntopics, rest, ())


@mutant(
    "deletion-starts-ineligible-topic",
    "resumeDeletions starts the deletion of topics marked ineligible (a replica down, or a reassignment running)",
)
class DeletionStartsIneligibleTopic(TopicDeletionManager):
    def resume_deletions(self, c: ControllerBase) -> tuple:
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
            if not started:  # the mistake: ineligible topics too
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


@mutant(
    "cs-followers-stay-in-isr",
    "doControlledShutdown stops the replicas the broker follows but never moves them to OfflineReplica (out of the ISR)",
)
class ShutdownFollowersStayInIsr(ReplicaStateMachine):
    def do_remove_replicas_from_isr(
        self, c: ControllerBase, b: int, rest: tuple, only: tuple[int, ...] | None = None
    ) -> bool:
        if only is not None and b in c.ctx.shutting:
            return False  # the mistake: the controlled shutdown's OfflineReplica step left out
        return bool(super().do_remove_replicas_from_isr(c, b, rest, only))


@mutant(
    "expiry-no-reregister",
    "a broker that notices its session expired opens a new session but does not re-register "
    "/brokers/ids/<id> (the KAFKA-1387 family: it stays unregistered)",
)
class ExpiryNoReregister(Brokers):
    def notice_expiry(self, s: State, b: int) -> tuple[Any, State]:
        a, s2 = super().notice_expiry(s, b)
        n = s2.nodes[b]
        n = n._replace(zk_out=tuple(r for r in n.zk_out if type(r) is not RegisterBroker))
        return a, s2._replace(nodes=set_item(s2.nodes, b, n))


@dataclass(frozen=True)
class ControllerConfig(ModelControllerConfig):
    """``model.controller.ControllerConfig`` plus the test-only ``mutant`` key (this module's
    catalogue) and the ``bug`` key (a historic Kafka bug of the zoo, ``model/controller/bugs``,
    which sets the variant keys it implies as ``kafka_version`` does); the configuration the
    CLI and the tests load.

    >>> ControllerConfig(bug="KAFKA-1120").broker_epoch
    False
    >>> ControllerConfig(bug="KAFKA-1120", broker_epoch=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: broker_epoch: True contradicts bug = KAFKA-1120 (which implies False)
    """

    mutant: str = key(
        "none", "test-only: inject a named bug (invariants/mutants/controller.py)", choices=MUTANTS.names()
    )
    bug: str = key(
        "none",
        "a historic Kafka controller bug brought back (model/controller/bugs, docs/bugs.md); it "
        "implies the variant keys the bug needs",
        choices=bugs.names(),
    )

    def __post_init__(self) -> None:
        implied = bugs.BUGS[self.bug].implies if self.bug in bugs.BUGS else ()
        given = []
        for name, value in implied:
            default = next(f.default for f in dataclasses.fields(self) if f.name == name)
            current = getattr(self, name)
            if current is default or (not isinstance(default, ByVersion) and current == default):
                object.__setattr__(self, name, value)
            else:
                given.append((name, value))
        super().__post_init__()
        for name, value in given:
            if getattr(self, name) != value:
                raise ConfigError(
                    f"{name}: {getattr(self, name)} contradicts bug = {self.bug} (which implies {value})"
                )


def build(config: ModelControllerConfig) -> ControllerSystem:
    """The system of ``config``, with its ``mutant`` and its historic ``bug`` when it names them.

    >>> type(build(ControllerConfig(brokers=2))).__name__
    'ControllerSystem'
    >>> type(build(ControllerConfig(brokers=2, bug="KAFKA-1681")).kafka_controller).__name__
    'Kafka1681'
    """
    name = getattr(config, "bug", bugs.NONE)
    mutant_name = getattr(config, "mutant", "none")
    if name == bugs.NONE:
        system: ControllerSystem = MUTANTS.system(mutant_name, config)
        return system
    made = MUTANTS[mutant_name].build
    seams = dict(made.seams) if isinstance(made, WithSeams) else {}
    return ControllerSystem(config, **bugs.compose(name, {**SEAMS, **seams}))
