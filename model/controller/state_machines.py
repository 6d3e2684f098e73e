"""``PartitionStateMachine`` and ``ReplicaStateMachine`` as the controller drives them (seeds
000, 002, 003): ``initializeReplicaState``, replicas -> OnlineReplica,
``triggerOnlinePartitionStateChange``, ``initializeLeaderAndIsrForPartitions``,
``doElectLeaderForPartitions`` with the four strategies, ``doRemoveReplicasFromIsr`` and the
``IsrChangeNotification`` handler.
"""

from __future__ import annotations

from typing import Any

from explorer.speedups import set_item
from model.controller.base import (
    ELECTION_OUTCOME_LABEL,
    VALID_PARTITION_TRANSITION,
    ControllerBase,
)
from model.controller.config import LeaderSelectors
from model.controller.messages import (
    Q_DELETE_ISR_CHANGES,
    Q_READ_PARTS,
    Q_WRITE_PARTS,
    S_ADMIN_UNCLEAN,
    S_EPOCH,
    S_INIT,
    S_OFFLINE,
    S_PREFERRED,
    S_REASSIGN,
    S_REMOVE,
    STRATEGY_NAMES,
    DeleteIsrChangeNotifications,
    GetTopicPartitionStates,
    UpdateLeaderAndIsr,
)
from model.controller.program import W_ELECT_PARTS, W_ELECT_WRITE, W_INIT, W_RM_READ, W_RM_WRITE
from model.controller.state import D_ADDED, D_ADMIN_UNCLEAN, D_PREFERRED, D_UNCLEAN_DYN, PartZ
from model.election import (
    NO_LEADER,
    ElectionOutcome,
    ElectionResult,
    LeaderAndIsr,
    initialize_leader_and_isr,
    leader_for_controlled_shutdown,
    leader_for_preferred_replica,
    leader_for_reassign,
    new_leader_and_isr,
    offline_partition_leader_election_strategy,
    remove_replica_from_isr,
)
from model.leader_selectors import (
    legacy_controlled_shutdown_leader_selector,
    legacy_offline_partition_leader_selector,
    legacy_preferred_replica_partition_leader_selector,
    legacy_reassigned_partition_leader_selector,
)
from model.state_machines import PartitionState, ReplicaState, initial_partition_state, initial_replica_state


class StateMachines(ControllerBase):
    """PartitionStateMachine / ReplicaStateMachine ``handleStateChanges`` as the controller runs them:
    replicas -> OnlineReplica, ``triggerOnlinePartitionStateChange``, ``doElectLeaderForPartitions``,
    ``doRemoveReplicasFromIsr``, ``IsrChangeNotification``."""

    __slots__ = ()

    def initialize_replica_state(
        self, slots: tuple[int, ...], assigned: tuple[int, ...], live: tuple[int, ...]
    ) -> tuple[ReplicaState, ...]:
        """``ReplicaStateMachine.initializeReplicaState`` for one partition: each assigned replica
        OnlineReplica if its broker is live, else ReplicaDeletionIneligible (seed 003);
        the other slots (reassignment targets) NonExistentReplica."""
        return tuple(
            initial_replica_state(live[r] != 0) if r in assigned else ReplicaState.NonExistentReplica
            for r in slots
        )

    def initialize_partition_state(self, z: PartZ | None, live: tuple[int, ...]) -> PartitionState:
        """``PartitionStateMachine.initializePartitionState`` of one partition (seed 003):
        OnlinePartition if its leader's broker is live, OfflinePartition if it has a state but
        no live leader, NewPartition without a state."""
        if z is None:
            return initial_partition_state(NO_LEADER, False, False)
        return initial_partition_state(z.leader, z.leader != NO_LEADER and live[z.leader] != 0, True)

    def replicas_to_online(self, brokers: list[int] | tuple[int, ...]) -> tuple:
        """``replicaStateMachine.handleStateChanges(replicas on brokers, OnlineReplica)``."""
        batch: list = []
        sys = self.sys
        later = sys.maybe_absent
        admin = sys.admin
        for b in brokers:
            for p in sys.parts_of[b]:
                if later and self.ctx.pstates[p] == PartitionState.NonExistentPartition:
                    continue  # a topic not created yet: not in replicasOnBrokers
                if admin and b not in self.ctx.ar[p]:
                    continue  # a slot of a reassignment target not (or no longer) assigned
                i = sys.rindex[p][b]
                cur = self.ctx.rstates[p][i]
                if (
                    self.ctx.deleting
                    and not self.sys.valid_replica[(cur, ReplicaState.OnlineReplica)]
                    and self.is_topic_queued_up_for_deletion(p)
                    and not sys.cfg.strict_deletion_transitions
                ):
                    continue  # Kafka logs the invalid transition and skips the replica
                if not self.set_rstate(p, b, ReplicaState.OnlineReplica):
                    continue
                if cur != ReplicaState.NewReplica:
                    z = self.ctx.leaders[p]
                    if z is not None:
                        batch.append((b, self.entry(p, z)))
        return tuple(batch)

    def trigger_online_partition_state_change(self, rest: tuple, batch: tuple, topic: int = -1) -> bool:
        """``triggerOnlinePartitionStateChange`` (of one topic when ``topic`` >= 0): New and
        Offline partitions of topics not queued for deletion go to OnlinePartition."""
        ctx = self.ctx
        new_parts: list[int] = []
        elect: list[int] = []
        deleting = ctx.deleting
        ppt = self.sys.ppt
        for p, st in enumerate(ctx.pstates):
            if st == PartitionState.NewPartition or st == PartitionState.OfflinePartition:
                if deleting and (p // ppt) in deleting:
                    continue  # no leader election for partitions of topics queued for deletion
                if topic >= 0 and p // ppt != topic:
                    continue
                if not VALID_PARTITION_TRANSITION[
                    (st, PartitionState.OnlinePartition)
                ]:  # pragma: no cover - valid by table
                    self.record_invalid(0, p, st, PartitionState.OnlinePartition)
                    continue
                (new_parts if st == PartitionState.NewPartition else elect).append(p)
        return self.initialize_leader_and_isr_for_partitions(tuple(new_parts), tuple(elect), batch, rest)

    def initialize_leader_and_isr_for_partitions(
        self, new_parts: tuple, elect: tuple, batch: tuple, rest: tuple
    ) -> bool:
        live = self.live_broker_ids()
        writes = []
        for p in new_parts:
            lai = initialize_leader_and_isr(self.ctx.ar[p], live)
            self.record_election("new_partition", "none" if lai is None else "isr")
            if lai is not None:
                writes.append((p, PartZ(lai.leader, lai.leader_epoch, lai.isr, self.ctx.epoch, -1)))
        if writes:
            self.send_zk(
                UpdateLeaderAndIsr(Q_WRITE_PARTS, tuple(writes), self.fence(), self.ctx.epoch, True, S_INIT)
            )
            self.park(W_INIT, elect, batch, rest)
            return True
        return self.do_elect_leader_for_partitions(elect, batch, rest)

    def initialize_leader_and_isr_written(self, resp: tuple, elect: tuple, batch: tuple, rest: tuple) -> None:
        if self.ctx is None:
            self.run(rest)
            return
        _, ok, results = resp
        if not ok:
            self.controller_moved(rest)
            return
        batch_l = list(batch)
        for p, z in results:
            if z is None:
                continue
            self.ctx = self.ctx._replace(leaders=set_item(self.ctx.leaders, p, z))
            self.set_pstate(p, PartitionState.OnlinePartition)
            if p in self.sys.added:
                self.done |= D_ADDED
            for r in z.isr:
                batch_l.append((r, self.entry(p, z)))
        if not self.do_elect_leader_for_partitions(elect, tuple(batch_l), rest):
            self.run(rest)

    def do_elect_leader_for_partitions(
        self, elect: tuple, batch: tuple, rest: tuple, strategy: int = S_OFFLINE
    ) -> bool:
        """``doElectLeaderForPartitions``: read the partition states, elect, write, retry."""
        if elect:
            self.send_zk(GetTopicPartitionStates(Q_READ_PARTS, elect))
            self.park(W_ELECT_PARTS, (strategy, elect), batch, rest)
            return True
        self.send_requests_to_brokers(batch)
        return False

    def elect_leader_for_partition(
        self, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        """The election of one partition with ``strategy`` (seed 002's four strategies)."""
        sys = self.sys
        cfg = sys.cfg
        ctx = self.ctx
        ar = ctx.ar[p]
        if cfg.leader_selectors is LeaderSelectors.KAFKA_0_8 and strategy != S_EPOCH:
            return self.select_leader_0_8(strategy, p, cur, live, dyn)
        if strategy == S_OFFLINE:
            unclean = cfg.unclean(p) or (p // sys.ppt) in dyn
            return offline_partition_leader_election_strategy(ar, cur, live, False, unclean)
        if strategy == S_ADMIN_UNCLEAN:
            # OfflinePartitionLeaderElectionStrategy(allowUnclean = true): the admin override
            return offline_partition_leader_election_strategy(ar, cur, live, True, cfg.unclean(p))
        if strategy == S_REASSIGN:
            return leader_for_reassign(ar, cur, live)
        if strategy == S_PREFERRED:
            return leader_for_preferred_replica(ar, cur, live)
        if strategy == S_EPOCH:
            # updateLeaderEpoch: same leader and ISR, leader epoch + 1
            return ElectionResult(new_leader_and_isr(cur, cur.leader, cur.isr), ar, ElectionOutcome.CLEAN)
        # S_CONTROLLED_SHUTDOWN: liveOrShuttingDownBrokerIds
        live_or_shutting = tuple(b for b, e in enumerate(ctx.live) if e)
        return leader_for_controlled_shutdown(ar, cur, live_or_shutting, ctx.shutting)

    def select_leader_0_8(
        self, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        """Seed 000's ``PartitionLeaderSelector`` for ``strategy`` (``leader_selectors = "0.8"``):
        OfflinePartition, ReassignedPartition, PreferredReplicaPartition, ControlledShutdown. Their
        ``zkVersion + 1`` is not used: the write is conditioned on the version read, as in 2.x."""
        sys = self.sys
        ctx = self.ctx
        ar = ctx.ar[p]
        if strategy in (S_OFFLINE, S_ADMIN_UNCLEAN):
            unclean = strategy == S_ADMIN_UNCLEAN or sys.cfg.unclean(p) or (p // sys.ppt) in dyn
            return legacy_offline_partition_leader_selector(ar, cur, live, unclean)
        if strategy == S_REASSIGN:
            return legacy_reassigned_partition_leader_selector(ar, cur, live)
        if strategy == S_PREFERRED:
            return legacy_preferred_replica_partition_leader_selector(ar, cur, live)
        live_or_shutting = tuple(b for b, e in enumerate(ctx.live) if e)
        return legacy_controlled_shutdown_leader_selector(ar, cur, live_or_shutting, ctx.shutting)

    def elect_leader_for_partitions_read(self, resp: tuple, data: tuple, batch: tuple, rest: tuple) -> None:
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        strategy = data[0]
        cfg = self.sys.cfg
        live = self.live_broker_ids()
        dyn = resp[2] if len(resp) > 2 else ()
        writes = []
        for p, z in resp[1]:
            if z is None or self.written_by_newer_controller(z):
                continue  # failed election (no state / written by a newer controller)
            cur = LeaderAndIsr(z.leader, z.leader_epoch, z.isr, z.version)
            res = self.elect_leader_for_partition(strategy, p, cur, live, dyn)
            lai = res.leader_and_isr
            if strategy != S_EPOCH:
                self.record_election(STRATEGY_NAMES[strategy], ELECTION_OUTCOME_LABEL[res.outcome])
            if lai is None:
                continue
            new = PartZ(lai.leader, lai.leader_epoch, lai.isr, ctx.epoch, z.version)
            # 0: clean; 1: unclean by the static topic config; 2: by a dynamically enabled one
            # 3: by the admin override (allowUnclean = true)
            u = 0
            if res.outcome == ElectionOutcome.UNCLEAN:
                u = 3 if strategy == S_ADMIN_UNCLEAN else 1 if cfg.unclean(p) else 2
            writes.append((p, new, res.live_replicas, u))
        if not writes:
            self.send_requests_to_brokers(batch)
            self.run(rest)
            return
        self.send_zk(
            UpdateLeaderAndIsr(
                Q_WRITE_PARTS,
                tuple((p, z) for p, z, _, _ in writes),
                self.fence(),
                ctx.epoch,
                False,
                strategy,
            )
        )
        self.park(W_ELECT_WRITE, (strategy, tuple((p, rec, u) for p, _, rec, u in writes)), batch, rest)

    def elect_leader_for_partitions_written(
        self, resp: tuple, data: tuple, batch: tuple, rest: tuple
    ) -> None:
        if self.ctx is None:
            self.run(rest)
            return
        _, ok, results = resp
        if not ok:
            self.controller_moved(rest)
            return
        strategy, items = data
        batch_l = list(batch)
        retry = []
        for (p, z), (_, recipients, unclean) in zip(results, items):
            if z is None:
                retry.append(p)  # BadVersion: updatesToRetry
                continue
            self.ctx = self.ctx._replace(leaders=set_item(self.ctx.leaders, p, z))
            if strategy != S_EPOCH:
                self.set_pstate(p, PartitionState.OnlinePartition)
            if unclean:
                self.history |= 1
                if unclean == 2:
                    self.done |= D_UNCLEAN_DYN
                elif unclean == 3:
                    self.done |= D_ADMIN_UNCLEAN
            if strategy == S_PREFERRED:
                self.done |= D_PREFERRED
            for r in recipients:
                batch_l.append((r, self.entry(p, z)))
        if retry:
            self.do_elect_leader_for_partitions(tuple(retry), tuple(batch_l), rest, strategy)
            return
        self.send_requests_to_brokers(tuple(batch_l))
        self.run(rest)

    def do_remove_replicas_from_isr(self, b: int, rest: tuple, only: tuple[int, ...] | None = None) -> bool:
        """Replica ``b`` of its partitions (of ``only``) -> OfflineReplica: ``doRemoveReplicasFromIsr``."""
        sys = self.sys
        ctx = self.ctx
        with_info = []
        later = sys.maybe_absent
        admin = sys.admin
        for p in sys.parts_of[b] if only is None else only:
            if later and ctx.pstates[p] == PartitionState.NonExistentPartition:
                continue  # a topic not created yet: not in replicasOnBrokers
            if admin and only is None and b not in ctx.ar[p]:
                continue
            i = sys.rindex[p][b]
            cur = ctx.rstates[p][i]
            if not self.sys.valid_replica[(cur, ReplicaState.OfflineReplica)]:
                self.record_invalid(1, p, cur, ReplicaState.OfflineReplica)
                continue
            if ctx.leaders[p] is None:
                self.set_rstate(p, b, ReplicaState.OfflineReplica)
                self.send_update_metadata_request((p,))
            else:
                with_info.append(p)
        if not with_info:
            return False
        self.send_zk(GetTopicPartitionStates(Q_READ_PARTS, tuple(with_info)))
        self.park(W_RM_READ, (b, tuple(with_info)), (), rest)
        return True

    def remove_replica_from_isr(self, cur: LeaderAndIsr, b: int) -> LeaderAndIsr | None:
        """The new leader and ISR of one partition once replica ``b`` leaves it
        (``doRemoveReplicasFromIsr``, seed 002; ``None``: ``b`` is not in the ISR)."""
        return remove_replica_from_isr(cur, b)

    def offline_replica_recipients(self, p: int, b: int, z: PartZ) -> tuple[int, ...]:
        """Who gets the LeaderAndIsr of partition ``p`` once replica ``b`` is removed from its
        ISR (``z``, as written): 2.x, every other assigned replica (seed 000's diagram [4] sends
        it to the leader only: ``kafka_version = "0.8"``)."""
        return tuple(r for r in self.ctx.ar[p] if r != b)

    def remove_replicas_from_isr_read(self, resp: tuple, data: tuple, batch: tuple, rest: tuple) -> None:
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        b, parts = data
        writes = []
        done = []
        for p, z in resp[1]:
            if z is None or self.written_by_newer_controller(z):
                continue
            cur = LeaderAndIsr(z.leader, z.leader_epoch, z.isr, z.version)
            lai = self.remove_replica_from_isr(cur, b)
            if lai is None:
                done.append((p, z))
                continue
            writes.append((p, PartZ(lai.leader, lai.leader_epoch, lai.isr, ctx.epoch, z.version)))
        # the partitions whose ISR lacks b are among doRemoveReplicasFromIsr's results too: their
        # state goes to the context and, as for the written ones, LeaderAndIsr to the other replicas
        batch = batch + self.offline_replica_requests(b, done)
        for p, z in done:
            self.ctx = self.ctx._replace(leaders=set_item(self.ctx.leaders, p, z))
            self.set_rstate(p, b, ReplicaState.OfflineReplica)
        if not writes:
            self.send_requests_to_brokers(batch)
            self.run(rest)
            return
        self.send_zk(
            UpdateLeaderAndIsr(Q_WRITE_PARTS, tuple(writes), self.fence(), ctx.epoch, False, S_REMOVE)
        )
        self.park(W_RM_WRITE, (b, parts), batch, rest)

    def remove_replicas_from_isr_written(self, resp: tuple, data: tuple, batch: tuple, rest: tuple) -> None:
        if self.ctx is None:
            self.run(rest)
            return
        _, ok, results = resp
        if not ok:
            self.controller_moved(rest)
            return
        b, _ = data
        batch_l = list(batch)
        retry = []
        for p, z in results:
            if z is None:
                retry.append(p)
                continue
            self.ctx = self.ctx._replace(leaders=set_item(self.ctx.leaders, p, z))
            if z.leader == NO_LEADER:
                self.history |= 2 << p
            self.set_rstate(p, b, ReplicaState.OfflineReplica)
            batch_l.extend(self.offline_replica_requests(b, ((p, z),)))
        if retry:
            self.send_zk(GetTopicPartitionStates(Q_READ_PARTS, tuple(retry)))
            self.park(W_RM_READ, (b, tuple(retry)), tuple(batch_l), rest)
            return
        self.send_requests_to_brokers(tuple(batch_l))
        self.run(rest)

    def offline_replica_requests(self, b: int, states: tuple | list) -> tuple:
        """The OfflineReplica transition's requests for replica ``b`` of the partitions of
        ``states`` (``(p, state)``): LeaderAndIsr to :meth:`offline_replica_recipients` (2.x: the
        other assigned replicas; with none, ``-1``: no LeaderAndIsr, the partition's UpdateMetadata still goes out, as
        ``addLeaderAndIsrRequestForBrokers`` sends it for whatever brokers it is given)."""
        out: list = []
        for p, z in states:
            entry = self.entry(p, z)
            others = [(r, entry) for r in self.offline_replica_recipients(p, b, z)]
            out.extend(others or [(-1, entry)])
        return tuple(out)

    def process_isr_change_notification(
        self, notes: tuple[tuple[int, int], ...], states: tuple, rest: tuple
    ) -> None:
        """``IsrChangeNotification``: ``updateLeaderAndIsrCache`` from the states read (one per
        notification, of its partition), UpdateMetadata, then ``deleteIsrChangeNotifications`` of
        the notifications read."""
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        if notes:
            leaders = ctx.leaders
            for (p, _), z in zip(notes, states):
                if z is not None:
                    leaders = set_item(leaders, p, z)
            self.ctx = ctx._replace(leaders=leaders)
            # processUpdateNotifications: UpdateMetadata of the notified partitions
            self.send_update_metadata_request(tuple(sorted({p for p, _ in notes})))
        self.send_zk(DeleteIsrChangeNotifications(Q_DELETE_ISR_CHANGES, notes, self.fence(), ctx.epoch))
        self.run(rest)
