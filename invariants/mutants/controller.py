"""The controller model's named bugs: each a small override of one Kafka method.

Every mutant here is a subclass of :class:`~model.controller.KafkaController` (the
controller of one broker) or of :class:`~model.controller.ControllerSystem` (ZooKeeper,
the brokers' data plane) that replaces one method; a controller subclass comes with a
system subclass that runs it (``controller_cls``). The tests that show which property each
breaks are in ``tests/test_controller.py``, ``tests/test_controller_admin.py`` and
``tests/test_guards.py``.

>>> from invariants.mutants.controller import MUTANTS, ControllerConfig
>>> type(MUTANTS.system("no-epoch-bump", ControllerConfig(brokers=2))).__name__
'NoEpochBumpSystem'
>>> ControllerConfig(brokers=2, mutant="no-such-bug")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.config.ConfigError: mutant: expected one of none, no-epoch-bump, ..., got 'no-such-bug'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.config import key
from explorer.speedups import set_item
from invariants.mutants import Catalogue
from model.controller import ControllerConfig as ModelControllerConfig
from model.controller import ControllerSystem, Node, State, Zk
from model.controller.controller import KafkaController
from model.controller.messages import (
    EV_REASSIGN_ISR,
    EV_REELECT,
    Q_DELETE_TOPIC,
    S_CONTROLLED_SHUTDOWN,
    S_OFFLINE,
    S_PREFERRED,
)
from model.controller.program import O_REMOVE_ISR, O_TRIGGER, W_REGISTER
from model.election import (
    NO_LEADER,
    ElectionOutcome,
    ElectionResult,
    LeaderAndIsr,
    leader_for_controlled_shutdown,
    offline_partition_leader_election_strategy,
)
from model.state_machines import PartitionState, ReplicaState

__all__ = ["MUTANTS", "ControllerConfig", "build"]

MUTANTS = Catalogue("controller", ControllerSystem)
"""Every controller mutant by name (``none``: the model as written)."""


def _runs(controller: type[KafkaController]) -> type[ControllerSystem]:
    """A system subclass whose brokers run ``controller`` (named after it, importable)."""
    system = type(controller.__name__ + "System", (ControllerSystem,), {"controller_cls": controller})
    system.__module__ = __name__
    globals()[system.__name__] = system
    return system


def controller_mutant(name: str, doc: str) -> Any:
    """Register a :class:`KafkaController` subclass as mutant ``name`` (its system built for it)."""

    def add(controller: type[KafkaController]) -> type[KafkaController]:
        MUTANTS.register(name, doc)(_runs(controller))
        return controller

    return add


# -- ZooKeeper writes of the election -----------------------------------------------------------


@controller_mutant("no-epoch-bump", "a new controller writes the controller epoch it read, not epoch + 1")
class NoEpochBump(KafkaController):
    __slots__ = ()

    def next_controller_epoch(self, epoch: int) -> int:
        return epoch


@controller_mutant(
    "epoch-reset", "the 2.x election writes controller epoch 1 once the epoch read is 2 or more"
)
class EpochReset(KafkaController):
    __slots__ = ()

    def next_controller_epoch(self, epoch: int) -> int:
        if epoch >= 2 and not self.sys.legacy:
            return 1
        return epoch + 1


@controller_mutant(
    "failover-keeps-old-epoch", "a new controller fails over with the epoch (and zkVersion) before its win"
)
class FailoverKeepsOldEpoch(KafkaController):
    __slots__ = ()

    def resume(self, resp: tuple) -> None:
        if self.pending is not None and self.pending[0] == W_REGISTER and resp[1]:
            resp = (resp[0], resp[1], resp[2] - 1, resp[3] - 1)
        super().resume(resp)


@MUTANTS.register(
    "no-reelect-on-controller-gone", "deleting /controller (or its owner's expiry) fires no Reelect watch"
)
class NoReelectOnControllerGone(ControllerSystem):
    def _fire(self, nodes: list[Node], ev: tuple[int, int], who: str, skip: int = -1) -> None:
        if ev[0] != EV_REELECT:
            super()._fire(nodes, ev, who, skip)


# -- brokers ------------------------------------------------------------------------------------


@MUTANTS.register(
    "no-controller-epoch-check", "a broker applies controller requests of a stale controller epoch"
)
class NoControllerEpochCheck(ControllerSystem):
    def _deliver(self, s: State, sender: int, d: int) -> tuple[Any, State]:
        # deliver as if the broker had seen no newer epoch, then restore what it had seen
        n = s.nodes[d]
        ctl_epoch = s.chans[sender * self.nb + d][0][1]
        if ctl_epoch >= n.seen_epoch:
            return super()._deliver(s, sender, d)
        lowered = s._replace(nodes=set_item(s.nodes, d, n._replace(seen_epoch=ctl_epoch)))
        act, t = super()._deliver(lowered, sender, d)
        nd = t.nodes[d]
        return act, t._replace(nodes=set_item(t.nodes, d, nd._replace(seen_epoch=n.seen_epoch)))


@controller_mutant(
    "skip-replica-init",
    "onControllerFailover leaves every replica NonExistentReplica (no initializeReplicaState)",
)
class SkipReplicaInit(KafkaController):
    __slots__ = ()

    def initialize_replica_state(
        self, slots: tuple[int, ...], assigned: tuple[int, ...], live: tuple[int, ...]
    ) -> tuple[ReplicaState, ...]:
        return (ReplicaState.NonExistentReplica,) * len(slots)


@controller_mutant("no-election-on-broker-failure", "onBrokerFailure does not trigger the offline elections")
class NoElectionOnBrokerFailure(KafkaController):
    __slots__ = ()

    def on_broker_failure(self, brokers: tuple[int, ...]) -> tuple:
        prog = super().on_broker_failure(brokers)
        assert prog[0] == (O_TRIGGER,)
        return prog[1:]


# -- partition leader election --------------------------------------------------------------------


@controller_mutant("no-leader-epoch-bump", "an election writes the new leader with the old leader epoch")
class NoLeaderEpochBump(KafkaController):
    __slots__ = ()

    def elect_leader_for_partition(
        self, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        res = super().elect_leader_for_partition(strategy, p, cur, live, dyn)
        lai = res.leader_and_isr
        if lai is None:
            return res
        return res._replace(leader_and_isr=lai._replace(leader_epoch=cur.leader_epoch))


@controller_mutant(
    "leader-outside-isr", "doRemoveReplicasFromIsr drops the (surviving) leader from the ISR it writes"
)
class LeaderOutsideIsr(KafkaController):
    __slots__ = ()

    def remove_replica_from_isr(self, cur: LeaderAndIsr, b: int) -> LeaderAndIsr | None:
        lai = super().remove_replica_from_isr(cur, b)
        if lai is None or cur.leader == b:
            return lai
        return lai._replace(isr=tuple(r for r in cur.isr if r != cur.leader) or lai.isr)


@controller_mutant("empty-isr", "doRemoveReplicasFromIsr removes the ISR's last member too")
class EmptyIsr(KafkaController):
    __slots__ = ()

    def remove_replica_from_isr(self, cur: LeaderAndIsr, b: int) -> LeaderAndIsr | None:
        lai = super().remove_replica_from_isr(cur, b)
        if lai is None:
            return lai
        return lai._replace(isr=tuple(r for r in cur.isr if r != b))


@controller_mutant(
    "preferred-any-isr-replica", "the preferred replica election elects any live ISR replica (offline rule)"
)
class PreferredAnyIsrReplica(KafkaController):
    __slots__ = ()

    def elect_leader_for_partition(
        self, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        if strategy == S_PREFERRED:
            return offline_partition_leader_election_strategy(self.ctx.ar[p], cur, live, False, False)
        return super().elect_leader_for_partition(strategy, p, cur, live, dyn)


@controller_mutant(
    "cs-elects-shutting-down",
    "liveBrokerIds and the controlled-shutdown election include shutting-down brokers",
)
class CsElectsShuttingDown(KafkaController):
    __slots__ = ()

    def live_broker_ids(self) -> tuple[int, ...]:
        return tuple(b for b, e in enumerate(self.ctx.live) if e)

    def elect_leader_for_partition(
        self, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> ElectionResult:
        if strategy == S_CONTROLLED_SHUTDOWN:
            live_or_shutting = tuple(b for b, e in enumerate(self.ctx.live) if e)
            return leader_for_controlled_shutdown(self.ctx.ar[p], cur, live_or_shutting, ())
        return super().elect_leader_for_partition(strategy, p, cur, live, dyn)


# -- admin workflows ------------------------------------------------------------------------------


@controller_mutant(
    "no-deletion-retry-on-startup",
    "onBrokerStartup does not resume the deletion of topics with replicas on it",
)
class NoDeletionRetryOnStartup(KafkaController):
    __slots__ = ()

    def resume_deletion_for_brokers(self, brokers: tuple[int, ...]) -> tuple:
        return ()


@controller_mutant(
    "no-resume-after-replica-deletion", "completeReplicaDeletion does not call resumeDeletions"
)
class NoResumeAfterReplicaDeletion(KafkaController):
    __slots__ = ()

    def complete_replica_deletion(self, b: int, parts: tuple[int, ...]) -> None:
        for p in parts:
            self.set_rstate(p, b, ReplicaState.ReplicaDeletionSuccessful)
        self.run(())


@MUTANTS.register(
    "delete-keeps-partition-state", "deleting a topic's znodes leaves its partition state znodes behind"
)
class DeleteKeepsPartitionState(ControllerSystem):
    def _zk_admin(self, zk: Zk, req: tuple) -> tuple[Zk, tuple | None]:
        zk2, resp = super()._zk_admin(zk, req)
        if req[0] == Q_DELETE_TOPIC and resp is not None and resp[1]:
            zk2 = zk2._replace(parts=zk.parts)
        return zk2, resp


@MUTANTS.register(
    "no-reassign-isr-watch", "the controller gets no PartitionReassignmentIsrChange when RAR joins the ISR"
)
class NoReassignIsrWatch(ControllerSystem):
    def _fire(self, nodes: list[Node], ev: tuple[int, int], who: str, skip: int = -1) -> None:
        if ev[0] != EV_REASSIGN_ISR:
            super()._fire(nodes, ev, who, skip)


@controller_mutant(
    "reassign-keeps-old-replica",
    "step 6 of a reassignment keeps OAR - RAR in the assignment (AR = RAR + old)",
)
class ReassignKeepsOldReplica(KafkaController):
    __slots__ = ()

    def update_partition_replica_assignment(self, p: int, replicas: tuple[int, ...]) -> None:
        old = tuple(r for r in self.ctx.ar[p] if r not in replicas)
        super().update_partition_replica_assignment(p, replicas + old)


# -- mistakes that epoch fencing hides (issue 20): caught by the convergence properties -----------


@controller_mutant(
    "no-resign-on-controller-moved",
    "a controller that reads that /controller moved to another broker does not resign (maybeResign)",
)
class NoResignOnControllerMoved(KafkaController):
    __slots__ = ()

    def update_active_controller_id(self, ctl: int) -> None:
        self.active_id = ctl


@controller_mutant(
    "no-offline-replicas-on-broker-failure",
    "onBrokerFailure does not move the dead broker's replicas to OfflineReplica (no ISR removal)",
)
class NoOfflineReplicasOnBrokerFailure(KafkaController):
    __slots__ = ()

    def on_broker_failure(self, brokers: tuple[int, ...]) -> tuple:
        return tuple(op for op in super().on_broker_failure(brokers) if op[0] != O_REMOVE_ISR)


@controller_mutant(
    "offline-election-keeps-dead-isr", "the clean offline election keeps the whole old ISR, dead brokers too"
)
class OfflineElectionKeepsDeadIsr(KafkaController):
    __slots__ = ()

    def elect_leader_for_partition(
        self, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        res = super().elect_leader_for_partition(strategy, p, cur, live, dyn)
        lai = res.leader_and_isr
        if strategy != S_OFFLINE or lai is None or res.outcome != ElectionOutcome.CLEAN:
            return res
        return res._replace(leader_and_isr=lai._replace(isr=cur.isr))


@controller_mutant(
    "failover-dead-leader-online",
    "initializePartitionState marks a partition OnlinePartition whenever it has a leader, live or not",
)
class FailoverDeadLeaderOnline(KafkaController):
    __slots__ = ()

    def initialize_partition_state(self, z: Any, live: tuple[int, ...]) -> PartitionState:
        if z is not None and z.leader != NO_LEADER:
            return PartitionState.OnlinePartition
        return super().initialize_partition_state(z, live)


@controller_mutant(
    "ignores-newer-controller-state",
    "an election or ISR removal goes on over a partition state written by a newer controller",
)
class IgnoresNewerControllerState(KafkaController):
    __slots__ = ()

    def written_by_newer_controller(self, z: Any) -> bool:
        return False


@controller_mutant(
    "bounce-off-by-one", "processBrokerChange sees a bounce only when the broker epoch grew by more than one"
)
class BounceOffByOne(KafkaController):
    __slots__ = ()

    def bounced_brokers(self, cur: tuple[int, ...], live: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(b for b in range(self.sys.nb) if live[b] and cur[b] and cur[b] > live[b] + 1)


@MUTANTS.register(
    "fence-less-than",
    "the server fails a fenced controller write only when the epoch zkVersion is below the fence",
)
class FenceLessThan(ControllerSystem):
    @staticmethod
    def epoch_fence_holds(zk: Zk, fence: int) -> bool:
        return fence == -1 or not zk.epoch_version < fence


@dataclass(frozen=True)
class ControllerConfig(ModelControllerConfig):
    """``model.controller.ControllerConfig`` plus the test-only ``mutant`` key (this module's
    catalogue); the configuration the CLI and the tests load."""

    mutant: str = key(
        "none", "test-only: inject a named bug (invariants/mutants/controller.py)", choices=MUTANTS.names()
    )


def build(config: ModelControllerConfig) -> ControllerSystem:
    """The system of ``config``, with its ``mutant`` when it names one.

    >>> type(build(ControllerConfig(brokers=2))).__name__
    'ControllerSystem'
    """
    system: ControllerSystem = MUTANTS.system(getattr(config, "mutant", "none"), config)
    return system
