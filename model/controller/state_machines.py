"""``PartitionStateMachine`` and ``ReplicaStateMachine`` as the controller drives them (seeds
000, 002, 003): ``initializeReplicaState``, replicas -> OnlineReplica,
``triggerOnlinePartitionStateChange``, ``initializeLeaderAndIsrForPartitions``,
``doElectLeaderForPartitions`` with the four strategies, ``doRemoveReplicasFromIsr`` and the
``IsrChangeNotification`` handler.
"""

from __future__ import annotations

from typing import Any, ClassVar

from explorer.mypyc_compat import mypyc_attr
from explorer.speedups import set_item
from model.controller.base import (
    ELECTION_OUTCOME_LABEL,
    VALID_PARTITION_TRANSITION,
    Component,
    ControllerBase,
)
from model.controller.config import LeaderSelectors
from model.controller.continuations import (
    ElectLeaderForPartitionsRead,
    ElectLeaderForPartitionsWritten,
    InitializeLeaderAndIsrWritten,
    RemoveReplicasFromIsrRead,
    RemoveReplicasFromIsrWritten,
)
from model.controller.messages import (
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
from model.controller.program import OfflineReplicas
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


@mypyc_attr(allow_interpreted_subclasses=True)
class PartitionStateMachine(Component):
    """``PartitionStateMachine`` as the controller drives it (seeds 000, 002, 003): partition states, ``triggerOnlinePartitionStateChange``, ``initializeLeaderAndIsrForPartitions``, ``doElectLeaderForPartitions`` with the four strategies, and the ``IsrChangeNotification`` handler."""

    def initialize_partition_state(
        self, c: ControllerBase, z: PartZ | None, live: tuple[int, ...]
    ) -> PartitionState:
        """``PartitionStateMachine.initializePartitionState`` of one partition (seed 003):
        OnlinePartition if its leader's broker is live, OfflinePartition if it has a state but
        no live leader, NewPartition without a state."""
        if z is None:
            return initial_partition_state(NO_LEADER, False, False)
        return initial_partition_state(z.leader, z.leader != NO_LEADER and live[z.leader] != 0, True)

    def trigger_online_partition_state_change(
        self, c: ControllerBase, rest: tuple, batch: tuple, topic: int = -1
    ) -> bool:
        """``triggerOnlinePartitionStateChange`` (of one topic when ``topic`` >= 0): New and
        Offline partitions of topics not queued for deletion go to OnlinePartition."""
        ctx = c.ctx
        new_parts: list[int] = []
        elect: list[int] = []
        deleting = ctx.deleting
        ppt = c.sys.ppt
        for p, st in enumerate(ctx.pstates):
            if st == PartitionState.NewPartition or st == PartitionState.OfflinePartition:
                if deleting and (p // ppt) in deleting:
                    continue  # no leader election for partitions of topics queued for deletion
                if topic >= 0 and p // ppt != topic:
                    continue
                if not VALID_PARTITION_TRANSITION[
                    (st, PartitionState.OnlinePartition)
                ]:  # pragma: no cover - valid by table
                    c.record_invalid(0, p, st, PartitionState.OnlinePartition)
                    continue
                (new_parts if st == PartitionState.NewPartition else elect).append(p)
        return self.initialize_leader_and_isr_for_partitions(c, tuple(new_parts), tuple(elect), batch, rest)

    def initialize_leader_and_isr_for_partitions(
        self, c: ControllerBase, new_parts: tuple, elect: tuple, batch: tuple, rest: tuple
    ) -> bool:
        live = c.live_broker_ids()
        writes = []
        for p in new_parts:
            lai = initialize_leader_and_isr(c.ctx.ar[p], live)
            c.record_election("new_partition", "none" if lai is None else "isr")
            if lai is not None:
                writes.append((p, PartZ(lai.leader, lai.leader_epoch, lai.isr, c.ctx.epoch, -1)))
        if writes:
            c.send_zk(UpdateLeaderAndIsr(tuple(writes), c.fence(), c.ctx.epoch, True, S_INIT))
            c.park(InitializeLeaderAndIsrWritten(elect, batch=batch, rest=rest))
            return True
        return self.do_elect_leader_for_partitions(c, elect, batch, rest)

    def update_leader_and_isr_result(
        self, c: ControllerBase, resp: Any, rest: tuple
    ) -> tuple[list[tuple[int, int, PartZ]], list[int]] | None:
        """``UpdateLeaderAndIsrResult(finishedPartitions, partitionsToRetry)`` of the write ``c``
        waited for: the partitions written, as (index of the write, partition, state), each put
        into the context (``putPartitionLeadershipInfo``), and those to retry (BadVersion); None
        when the write is void: ``c`` resigned meanwhile or was fenced (``write_failed``, which
        then runs what follows)."""
        if self.kafka_controller.write_failed(c, resp.ok, rest):
            return None
        finished, retry = [], []
        for i, (p, z) in enumerate(resp.results):
            if z is None:
                retry.append(p)
            else:
                c.put_partition_leadership_info(p, z)
                finished.append((i, p, z))
        return finished, retry

    def initialize_leader_and_isr_written(
        self, c: ControllerBase, resp: Any, elect: tuple, batch: tuple, rest: tuple
    ) -> None:
        result = self.update_leader_and_isr_result(c, resp, rest)
        if result is None:
            return
        batch_l = list(batch)
        for _, p, z in result[0]:
            c.set_pstate(p, PartitionState.OnlinePartition)
            if p in c.sys.added:
                c.done |= D_ADDED
            for r in z.isr:
                batch_l.append((r, c.entry(p, z)))
        if not self.do_elect_leader_for_partitions(c, elect, tuple(batch_l), rest):
            self.kafka_controller.run(c, rest)

    def do_elect_leader_for_partitions(
        self, c: ControllerBase, elect: tuple, batch: tuple, rest: tuple, strategy: int = S_OFFLINE
    ) -> bool:
        """``doElectLeaderForPartitions``: read the partition states, elect, write, retry."""
        if elect:
            c.send_zk(GetTopicPartitionStates(elect))
            c.park(ElectLeaderForPartitionsRead(strategy, elect, batch=batch, rest=rest))
            return True
        c.send_requests_to_brokers(batch)
        return False

    def elect_leader_for_partition(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        """The election of one partition with ``strategy`` (seed 002's four strategies)."""
        sys = c.sys
        cfg = sys.cfg
        ctx = c.ctx
        ar = ctx.ar[p]
        if cfg.leader_selectors is LeaderSelectors.KAFKA_0_8 and strategy != S_EPOCH:
            return self.select_leader_0_8(c, strategy, p, cur, live, dyn)
        if strategy == S_OFFLINE:
            return offline_partition_leader_election_strategy(ar, cur, live, False, c.unclean(p, dyn))
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
        # S_CONTROLLED_SHUTDOWN
        return leader_for_controlled_shutdown(ar, cur, c.live_or_shutting_down(), ctx.shutting)

    def select_leader_0_8(
        self, c: ControllerBase, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple
    ) -> Any:
        """Seed 000's ``PartitionLeaderSelector`` for ``strategy`` (``leader_selectors = "0.8"``):
        OfflinePartition, ReassignedPartition, PreferredReplicaPartition, ControlledShutdown. Their
        ``zkVersion + 1`` is not used: the write is conditioned on the version read, as in 2.x."""
        ctx = c.ctx
        ar = ctx.ar[p]
        if strategy in (S_OFFLINE, S_ADMIN_UNCLEAN):
            unclean = strategy == S_ADMIN_UNCLEAN or c.unclean(p, dyn)
            return legacy_offline_partition_leader_selector(ar, cur, live, unclean)
        if strategy == S_REASSIGN:
            return legacy_reassigned_partition_leader_selector(ar, cur, live)
        if strategy == S_PREFERRED:
            return legacy_preferred_replica_partition_leader_selector(ar, cur, live)
        return legacy_controlled_shutdown_leader_selector(ar, cur, c.live_or_shutting_down(), ctx.shutting)

    def elect_leader_for_partitions_read(
        self, c: ControllerBase, resp: Any, data: tuple, batch: tuple, rest: tuple
    ) -> None:
        if self.kafka_controller.resigned(c, rest):
            return
        ctx = c.ctx
        strategy = data[0]
        cfg = c.sys.cfg
        live = c.live_broker_ids()
        dyn = resp.unclean_topics
        writes = []
        for p, z in resp.states:
            if z is None or self.written_by_newer_controller(c, z):
                continue  # failed election (no state / written by a newer controller)
            cur = LeaderAndIsr(z.leader, z.leader_epoch, z.isr, z.version)
            res = self.elect_leader_for_partition(c, strategy, p, cur, live, dyn)
            lai = res.leader_and_isr
            if strategy != S_EPOCH:
                c.record_election(STRATEGY_NAMES[strategy], ELECTION_OUTCOME_LABEL[res.outcome])
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
            c.send_requests_to_brokers(batch)
            self.kafka_controller.run(c, rest)
            return
        c.send_zk(
            UpdateLeaderAndIsr(
                tuple((p, z) for p, z, _, _ in writes),
                c.fence(),
                ctx.epoch,
                False,
                strategy,
            )
        )
        c.park(
            ElectLeaderForPartitionsWritten(
                strategy, tuple((p, rec, u) for p, _, rec, u in writes), batch=batch, rest=rest
            )
        )

    def elect_leader_for_partitions_written(
        self, c: ControllerBase, resp: Any, strategy: int, items: tuple, batch: tuple, rest: tuple
    ) -> None:
        result = self.update_leader_and_isr_result(c, resp, rest)
        if result is None:
            return
        finished, retry = result
        batch_l = list(batch)
        for i, p, z in finished:
            _, recipients, unclean = items[i]
            if strategy != S_EPOCH:
                c.set_pstate(p, PartitionState.OnlinePartition)
            if unclean:
                c.history |= 1
                if unclean == 2:
                    c.done |= D_UNCLEAN_DYN
                elif unclean == 3:
                    c.done |= D_ADMIN_UNCLEAN
            if strategy == S_PREFERRED:
                c.done |= D_PREFERRED
            for r in recipients:
                batch_l.append((r, c.entry(p, z)))
        if retry:
            self.do_elect_leader_for_partitions(c, tuple(retry), tuple(batch_l), rest, strategy)
            return
        c.send_requests_to_brokers(tuple(batch_l))
        self.kafka_controller.run(c, rest)

    def process_isr_change_notification(
        self, c: ControllerBase, notes: tuple[tuple[int, int], ...], states: tuple, rest: tuple
    ) -> None:
        """``IsrChangeNotification``: ``updateLeaderAndIsrCache`` from the states read (one per
        notification, of its partition), UpdateMetadata, then ``deleteIsrChangeNotifications`` of
        the notifications read."""
        if self.kafka_controller.resigned(c, rest):
            return
        ctx = c.ctx
        if notes:
            leaders = ctx.leaders
            for (p, _), z in zip(notes, states):
                if z is not None:
                    leaders = set_item(leaders, p, z)
            c.ctx = ctx._replace(leaders=leaders)
            # processUpdateNotifications: UpdateMetadata of the notified partitions
            c.send_update_metadata_request(tuple(sorted({p for p, _ in notes})))
        c.send_zk(DeleteIsrChangeNotifications(notes, c.fence(), ctx.epoch))
        self.kafka_controller.run(c, rest)

    def written_by_newer_controller(self, c: ControllerBase, z: PartZ) -> bool:
        """A partition state written by a controller with a newer epoch than this one's: the
        election or ISR change is aborted (seed 003 ``doElectLeaderForPartitions``: "aborted
        leader election ... written by another controller")."""
        return z.ctl_epoch > c.ctx.epoch


@mypyc_attr(allow_interpreted_subclasses=True)
class ReplicaStateMachine(Component):
    """``ReplicaStateMachine`` as the controller drives it: ``initializeReplicaState``, replicas -> OnlineReplica, ``doRemoveReplicasFromIsr`` (-> OfflineReplica) and the requests it sends."""

    def initialize_replica_state(
        self, c: ControllerBase, slots: tuple[int, ...], assigned: tuple[int, ...], live: tuple[int, ...]
    ) -> tuple[ReplicaState, ...]:
        """``ReplicaStateMachine.initializeReplicaState`` for one partition: each assigned replica
        OnlineReplica if its broker is live, else ReplicaDeletionIneligible (seed 003);
        the other slots (reassignment targets) NonExistentReplica."""
        return tuple(
            initial_replica_state(live[r] != 0) if r in assigned else ReplicaState.NonExistentReplica
            for r in slots
        )

    def replicas_to_online(self, c: ControllerBase, brokers: list[int] | tuple[int, ...]) -> tuple:
        """``replicaStateMachine.handleStateChanges(replicas on brokers, OnlineReplica)``."""
        batch: list = []
        sys = c.sys
        later = sys.maybe_absent
        admin = sys.admin
        for b in brokers:
            for p in sys.parts_of[b]:
                if later and c.ctx.pstates[p] == PartitionState.NonExistentPartition:
                    continue  # a topic not created yet: not in replicasOnBrokers
                if admin and b not in c.ctx.ar[p]:
                    continue  # a slot of a reassignment target not (or no longer) assigned
                i = sys.rindex[p][b]
                cur = c.ctx.rstates[p][i]
                if (
                    c.ctx.deleting
                    and not c.sys.valid_replica[(cur, ReplicaState.OnlineReplica)]
                    and c.is_topic_queued_up_for_deletion(p)
                    and not sys.cfg.strict_deletion_transitions
                ):
                    continue  # Kafka logs the invalid transition and skips the replica
                if not c.set_rstate(p, b, ReplicaState.OnlineReplica):
                    continue
                if cur != ReplicaState.NewReplica:
                    z = c.ctx.leaders[p]
                    if z is not None:
                        batch.append((b, c.entry(p, z)))
        return tuple(batch)

    def offline_replicas_on_startup(self, c: ControllerBase) -> tuple:
        """``replicaStateMachine.startup``'s second batch since Kafka 2.3 (KAFKA-3143,
        ``onlineAndOfflineReplicas``): the replicas of every dead broker -> OfflineReplica, one
        ``OfflineReplicas`` step per dead broker holding replicas, run before
        ``partitionStateMachine.startup``. The seeds' startup (Kafka 0.8 to 2.2: key
        ``offline_replicas_on_startup`` false) has none: a dead follower stays in the ISR and a
        dead last ISR member stays leader. Replicas of topics queued for deletion are left to the
        deletion manager, as ``onBrokerFailure`` leaves them to ``failReplicaDeletion``."""
        sys = c.sys
        if not sys.cfg.offline_replicas_on_startup:
            return ()
        ctx = c.ctx
        steps = []
        for b in range(sys.nb):
            if ctx.live[b]:
                continue
            mine = tuple(
                p
                for p in sys.parts_of[b]
                if b in ctx.ar[p]
                and ctx.pstates[p] != PartitionState.NonExistentPartition
                and not (ctx.deleting and c.is_topic_queued_up_for_deletion(p))
            )
            if mine:
                steps.append(OfflineReplicas(b, mine))
        return tuple(steps)

    def do_remove_replicas_from_isr(
        self, c: ControllerBase, b: int, rest: tuple, only: tuple[int, ...] | None = None
    ) -> bool:
        """Replica ``b`` of its partitions (of ``only``) -> OfflineReplica: ``doRemoveReplicasFromIsr``."""
        sys = c.sys
        ctx = c.ctx
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
            if not c.sys.valid_replica[(cur, ReplicaState.OfflineReplica)]:
                c.record_invalid(1, p, cur, ReplicaState.OfflineReplica)
                continue
            if ctx.leaders[p] is None:
                self.offline_without_leadership_info(c, p, b)
            else:
                with_info.append(p)
        if not with_info:
            return False
        c.send_zk(GetTopicPartitionStates(tuple(with_info)))
        c.park(RemoveReplicasFromIsrRead(b, tuple(with_info), rest=rest))
        return True

    def offline_without_leadership_info(self, c: ControllerBase, p: int, b: int) -> None:
        """Replica ``b`` of partition ``p``, which has no leadership info (no state znode: a
        topic half deleted by an earlier controller), -> OfflineReplica with no ISR to change
        (Kafka 2.0, KAFKA-6650: ``replicasWithoutLeadershipInfo``), and the partition's
        UpdateMetadata (Kafka 2.3)."""
        c.set_rstate(p, b, ReplicaState.OfflineReplica)
        c.send_update_metadata_request((p,))

    def remove_replica_from_isr(self, c: ControllerBase, cur: LeaderAndIsr, b: int) -> LeaderAndIsr | None:
        """The new leader and ISR of one partition once replica ``b`` leaves it
        (``doRemoveReplicasFromIsr``, seed 002; ``None``: ``b`` is not in the ISR)."""
        return remove_replica_from_isr(cur, b)

    def offline_replica_recipients(self, c: ControllerBase, p: int, b: int, z: PartZ) -> tuple[int, ...]:
        """Who gets the LeaderAndIsr of partition ``p`` once replica ``b`` is removed from its
        ISR (``z``, as written): 2.x, every other assigned replica (seed 000's diagram [4] sends
        it to the leader only: ``kafka_version = "0.8"``)."""
        return tuple(r for r in c.ctx.ar[p] if r != b)

    def remove_replicas_from_isr_read(
        self, c: ControllerBase, resp: Any, b: int, parts: tuple, batch: tuple, rest: tuple
    ) -> None:
        if self.kafka_controller.resigned(c, rest):
            return
        ctx = c.ctx
        writes = []
        done = []
        for p, z in resp.states:
            if z is None or self.partition_state_machine.written_by_newer_controller(c, z):
                continue
            cur = LeaderAndIsr(z.leader, z.leader_epoch, z.isr, z.version)
            lai = self.remove_replica_from_isr(c, cur, b)
            if lai is None:
                done.append((p, z))
                continue
            writes.append((p, PartZ(lai.leader, lai.leader_epoch, lai.isr, ctx.epoch, z.version)))
        # the partitions whose ISR lacks b are among doRemoveReplicasFromIsr's results too: their
        # state goes to the context and, as for the written ones, LeaderAndIsr to the other replicas
        batch = batch + self.offline_replica_requests(c, b, done)
        for p, z in done:
            c.put_partition_leadership_info(p, z)
            c.set_rstate(p, b, ReplicaState.OfflineReplica)
        if not writes:
            c.send_requests_to_brokers(batch)
            self.kafka_controller.run(c, rest)
            return
        c.send_zk(UpdateLeaderAndIsr(tuple(writes), c.fence(), ctx.epoch, False, S_REMOVE))
        c.park(RemoveReplicasFromIsrWritten(b, parts, batch=batch, rest=rest))

    def remove_replicas_from_isr_written(
        self, c: ControllerBase, resp: Any, b: int, batch: tuple, rest: tuple
    ) -> None:
        result = self.partition_state_machine.update_leader_and_isr_result(c, resp, rest)
        if result is None:
            return
        finished, retry = result
        batch_l = list(batch)
        for _, p, z in finished:
            if z.leader == NO_LEADER:
                c.history |= 2 << p
            c.set_rstate(p, b, ReplicaState.OfflineReplica)
            batch_l.extend(self.offline_replica_requests(c, b, ((p, z),)))
        if retry:
            c.send_zk(GetTopicPartitionStates(tuple(retry)))
            c.park(RemoveReplicasFromIsrRead(b, tuple(retry), batch=tuple(batch_l), rest=rest))
            return
        c.send_requests_to_brokers(tuple(batch_l))
        self.kafka_controller.run(c, rest)

    #: the OfflineReplica transition sends nothing for a topic queued for deletion: Kafka 2.x's
    #: ``if (!isTopicQueuedUpForDeletion(partition.topic))`` (0.8.1, whose recipients
    #: ``kafka_version = "0.8"`` follows, has no such check)
    skips_topics_queued_up_for_deletion: ClassVar[bool] = True

    def offline_replica_requests(self, c: ControllerBase, b: int, states: tuple | list) -> tuple:
        """The OfflineReplica transition's requests for replica ``b`` of the partitions of
        ``states`` (``(p, state)``): LeaderAndIsr to :meth:`offline_replica_recipients` (2.x: the
        other assigned replicas; with none, ``-1``: no LeaderAndIsr, the partition's UpdateMetadata still goes out, as
        ``addLeaderAndIsrRequestForBrokers`` sends it for whatever brokers it is given). None for a
        partition of a topic queued for deletion (:attr:`skips_topics_queued_up_for_deletion`):
        2.x calls ``addLeaderAndIsrRequestForBrokers`` only
        ``if (!isTopicQueuedUpForDeletion(partition.topic))``."""
        out: list = []
        skip = self.skips_topics_queued_up_for_deletion and c.ctx.deleting
        for p, z in states:
            if skip and c.is_topic_queued_up_for_deletion(p):
                continue
            entry = c.entry(p, z)
            others = [(r, entry) for r in self.offline_replica_recipients(c, p, b, z)]
            out.extend(others or [(-1, entry)])
        return tuple(out)
