"""``KafkaController``: one broker's controller during a step. Its event loop (``process``), the
continuation a ZooKeeper response resumes, election (2.x ``elect`` and 0.8
``ZookeeperLeaderElector``), ``onControllerFailover`` and ``onControllerResignation``.
"""

from __future__ import annotations

from typing import Any

from explorer.mypyc_compat import mypyc_attr
from explorer.speedups import set_item
from model.controller.base import Component, ControllerBase
from model.controller.config import Elector
from model.controller.continuations import (
    PARKED,
    AssignmentWritten,
    BrokerChangeRead,
    ElectLeaderForPartitionsRead,
    ElectLeaderForPartitionsWritten,
    ElectRead,
    FailoverContextRead,
    InitializeLeaderAndIsrWritten,
    IsrChangeNotificationsRead,
    MaybeResignRead,
    PartitionModificationsRead,
    PartitionReassignmentRead,
    PreferredReplicaElectionRead,
    ReassignmentPartitionStateRead,
    RegisterController,
    RemoveReplicasFromIsrRead,
    RemoveReplicasFromIsrWritten,
    TopicChangeRead,
    TopicDeletionRead,
    TopicZNodeDeleted,
)
from model.controller.election_rules import ElectRules
from model.controller.events import (
    EVENTS,
    BrokerChange,
    ControllerChange,
    ControllerEvent,
    Expire,
    IsrChangeNotification,
    Reelect,
    Startup,
    TopicChange,
)
from model.controller.messages import (
    S_PREFERRED,
    ControlledShutdownResponse,
    DeletePreferredReplicaElection,
    DeleteTopicDeletions,
    GetAllBrokersInCluster,
    GetAllIsrChangeNotifications,
    GetAllTopicsInCluster,
    GetControllerIdAndEpoch,
    ReadControllerContext,
    RegisterBroker,
    RegisterControllerAndIncrementControllerEpoch,
)
from model.controller.program import (
    STEPS,
    AddLiveBrokersAndEpochs,
    CompleteDeleteTopic,
    ControlledShutdownRespond,
    Elect,
    ElectLeaderForPartitions,
    FailReplicaDeletion,
    LegacyElect,
    LegacyResignAndElect,
    MaybeResign,
    MoveToReplicaDeletionStarted,
    NewReplicasOnline,
    OfflineReplicas,
    OnBrokerFailure,
    OnBrokerStartup,
    OnControllerFailover,
    OnNewPartitionCreation,
    OnPartitionReassignment,
    OnTopicDeletion,
    ProcessBrokerChange,
    ProcessIsrChangeNotification,
    RemoveLiveBrokers,
    RemovePartitionsFromPreferredReplicaElection,
    ResumeDeletionForTopics,
    ResumeDeletions,
    SendStopReplica,
    SendUpdateMetadataRequest,
    StopOldReplicasOfReassignedPartition,
    TriggerOnlinePartitionStateChange,
)
from model.controller.state import D_PICKED_UP
from model.state_machines import PartitionState, ReplicaState


@mypyc_attr(allow_interpreted_subclasses=True)
class KafkaController(ElectRules, Component):
    """One broker's ``KafkaController`` during a step: its event loop (``process``), the
    continuation a ZooKeeper response resumes, election, ``onControllerFailover`` and
    ``onControllerResignation``."""

    def run(self, c: ControllerBase, prog: tuple, batch: tuple = ()) -> None:
        """Run program steps until one parks for a ZooKeeper response or none is left."""
        while prog:
            op = prog[0]
            prog = prog[1:]
            if type(op) is tuple:  # a step written as a plain tuple (a mutant's)
                op = STEPS.view(op)
            match op:
                case Elect():
                    c.send_zk(GetControllerIdAndEpoch())
                    c.park(ElectRead(rest=prog))
                    return
                case MaybeResign():
                    c.send_zk(GetControllerIdAndEpoch())
                    c.park(MaybeResignRead(rest=prog))
                    return
                case LegacyElect():
                    self.zookeeper_leader_elector.elect(c, prog)
                    return
                case LegacyResignAndElect():
                    if c.active_id == c.me:
                        self.on_controller_resignation(c)
                    prog = (LegacyElect(), *prog)
                case OnControllerFailover():
                    c.send_zk(self.failover_reads(c))
                    c.park(FailoverContextRead(rest=prog))
                    return
                case _ if c.ctx is None:
                    pass  # the remaining steps need a context (the controller resigned meanwhile)
                case TriggerOnlinePartitionStateChange(topic=topic):
                    if self.partition_state_machine.trigger_online_partition_state_change(
                        c, prog, batch, topic
                    ):
                        return
                    batch = ()
                case ElectLeaderForPartitions(strategy=strategy, partitions=partitions):
                    if self.partition_state_machine.do_elect_leader_for_partitions(
                        c, partitions, batch, prog, strategy
                    ):
                        return
                    batch = ()
                case ProcessBrokerChange():
                    c.send_zk(GetAllBrokersInCluster())
                    c.park(BrokerChangeRead(rest=prog))
                    return
                case OnBrokerStartup(brokers=brokers):
                    prog = self.broker_lifecycle.on_broker_startup(c, brokers) + prog
                case OnBrokerFailure(brokers=brokers):
                    prog = self.broker_lifecycle.on_broker_failure(c, brokers) + prog
                case OfflineReplicas(broker=broker, partitions=partitions):
                    if self.replica_state_machine.do_remove_replicas_from_isr(c, broker, prog, partitions):
                        return
                case RemoveLiveBrokers(brokers=brokers):
                    c.set_live_brokers([(b, 0) for b in brokers])
                case AddLiveBrokersAndEpochs(brokers_and_epochs=brokers_and_epochs):
                    c.set_live_brokers(brokers_and_epochs)
                case ProcessIsrChangeNotification():
                    c.send_zk(GetAllIsrChangeNotifications())
                    c.park(IsrChangeNotificationsRead(rest=prog))
                    return
                case SendUpdateMetadataRequest():
                    c.send_update_metadata_request()
                case OnNewPartitionCreation(partitions=partitions):
                    if self.topic_changes.on_new_partition_creation(c, partitions, prog):
                        return
                case NewReplicasOnline(partitions=partitions):
                    self.topic_changes.new_replicas_online(c, partitions)
                case ResumeDeletions():
                    prog = self.topic_deletion_manager.resume_deletions(c) + prog
                case ResumeDeletionForTopics(topics=topics):
                    c.ctx = c.ctx._replace(ineligible=tuple(t for t in c.ctx.ineligible if t not in topics))
                    prog = self.topic_deletion_manager.resume_deletions(c) + prog
                case OnTopicDeletion(topic=topic):
                    prog = self.topic_deletion_manager.on_topic_deletion(c, topic) + prog
                case MoveToReplicaDeletionStarted(replicas=replicas):
                    self.topic_deletion_manager.replica_deletion_started(c, replicas)
                case CompleteDeleteTopic(topic=topic):
                    if self.topic_deletion_manager.complete_delete_topic(c, topic, prog):
                        return
                case FailReplicaDeletion(replicas=replicas):
                    prog = self.topic_deletion_manager.fail_replica_deletion(c, replicas) + prog
                case OnPartitionReassignment(partition=partition, mode=mode):
                    if self.admin_workflows.on_partition_reassignment(c, partition, mode, prog):
                        return
                case StopOldReplicasOfReassignedPartition(partition=partition, old=old):
                    if self.admin_workflows.reassign_stop_old(c, partition, old, prog):
                        return
                case RemovePartitionsFromPreferredReplicaElection():
                    c.send_zk(DeletePreferredReplicaElection(c.fence(), c.ctx.epoch))
                case SendStopReplica(broker=broker, partitions=partitions, extra=extra) if broker >= 0:
                    self.topic_deletion_manager.send_stop_replica_requests(
                        c, broker, partitions, extra, False
                    )
                case SendStopReplica(partitions=(p,), extra=old):
                    # stopOldReplicasOfReassignedPartition: -> Started -> Successful -> NonExistent
                    for b in old:
                        c.set_rstate(p, b, ReplicaState.ReplicaDeletionStarted)
                        self.topic_deletion_manager.send_stop_replica_requests(c, b, (p,), True, False)
                        c.set_rstate(p, b, ReplicaState.ReplicaDeletionSuccessful)
                        c.set_rstate(p, b, ReplicaState.NonExistentReplica)
                case ControlledShutdownRespond(broker=broker):
                    e = c.ctx.live[broker]
                    if e:
                        c.send_msg(broker, ControlledShutdownResponse(c.ctx.epoch, e, ()))
                case _:  # pragma: no cover
                    raise AssertionError(f"unknown program step {op!r}")
        c.pending = None

    def process_event(self, c: ControllerBase, ev: ControllerEvent) -> None:
        """The head of the event queue, by its class (``events.py``; a plain pair: ``EVENTS.view``)."""
        if type(ev) is tuple:
            ev = EVENTS.view(ev)
        legacy = c.sys.cfg.elector is Elector.LEGACY
        match ev:
            case Startup():
                self.run(c, (LegacyElect(),) if legacy else (Elect(),))
            case Reelect():
                self.run(c, (LegacyResignAndElect(),) if legacy else (Elect(),))
            case ControllerChange(controller_id=controller_id):
                if legacy:
                    # 0.8 LeaderChangeListener.handleDataChange: leaderId = new data (no resignation)
                    c.active_id = controller_id
                else:
                    self.run(c, (MaybeResign(),))
            case BrokerChange():
                if c.ctx is not None:
                    self.run(c, (ProcessBrokerChange(),))
            case IsrChangeNotification():
                if c.ctx is not None:
                    self.run(c, (ProcessIsrChangeNotification(),))
            case TopicChange():
                # getChildren /brokers/topics (re-arming its watch), the new topics' assignments
                if c.ctx is not None:
                    c.send_zk(GetAllTopicsInCluster())
                    c.park(TopicChangeRead())
            case Expire() if not legacy:
                # 2.x Expire: activeControllerId = -1, onControllerResignation if it was active; then
                # RegisterBrokerAndReelect (the registration's response queues the election)
                if c.ctx is not None or c.active_id == c.me:
                    self.on_controller_resignation(c)
                c.active_id = -1
                c.send_zk(RegisterBroker(True))
            case Expire():
                # 0.8 SessionExpirationListener.handleNewSession: onControllerResignation(); elect
                if c.ctx is not None or c.active_id == c.me:
                    self.on_controller_resignation(c)
                c.active_id = -1
                self.run(c, (LegacyElect(),))
            case _:  # the admin workflows' events
                if c.ctx is not None:
                    self.admin_workflows.admin_event(c, ev)

    def update_active_controller_id(self, c: ControllerBase, ctl: int) -> None:
        """``activeControllerId = getControllerId``, then ``onControllerResignation`` if this
        broker was the controller and no longer is (2.x ``maybeResign``; also ``elect``'s read)."""
        was = c.active_id == c.me
        c.active_id = ctl
        if was and ctl != c.me:
            self.on_controller_resignation(c)

    def resume(self, c: ControllerBase, resp: Any) -> None:
        """Continue the parked continuation with ZooKeeper's response ``resp``: a ``match`` on
        its class (``continuations.py``, each named after the Kafka call it was parked on), whose
        case calls the method continuing that Kafka method with the continuation's named fields
        (``ElectLeaderForPartitionsRead(strategy, partitions, batch)`` ->
        ``elect_leader_for_partitions_read``), which then runs ``rest``, the steps after it. A
        continuation written as a plain ``(wait, data, batch, rest)`` tuple is read as its record
        (``PARKED.view``). ``c.pending`` is cleared first: every case parks again (``park``
        replaces it) or runs (``run`` clears it when its program ends).
        """
        assert c.pending is not None  # a response resumes a parked continuation
        k: Any = c.pending
        if type(k) is tuple:  # a continuation written as a plain tuple
            k = PARKED.view(k)
        c.pending = None
        rest = k.rest
        match k:
            case ElectRead() | MaybeResignRead():
                ctl, epoch, version = resp.controller_id, resp.epoch, resp.epoch_zk_version
                self.update_active_controller_id(c, ctl)
                if ctl == -1 and type(k) is ElectRead:
                    epoch = self.next_controller_epoch(c, epoch)
                    c.send_zk(RegisterControllerAndIncrementControllerEpoch(epoch, version))
                    c.park(RegisterController(rest=rest))
                    return
                mine = ctl == c.me and type(k) is ElectRead
                if mine and self.already_elected_starts_controller(c, epoch, version):
                    # KAFKA-13407's fix (PR 11476): "This broker was already elected, but is not
                    # running the controller. Starting controller."
                    c.active_id = c.me
                    c.ctx = c.sys.empty_ctx(epoch, version)
                    self.run(c, (OnControllerFailover(), *rest))
                    return
                self.run(c, rest)
            case RegisterController():
                if resp.ok:
                    c.active_id = c.me
                    c.ctx = c.sys.empty_ctx(resp.epoch, resp.epoch_zk_version)
                    self.run(c, (OnControllerFailover(), *rest))
                else:
                    # NodeExists / BadVersion -> ControllerMovedException -> maybeResign
                    self.run(c, (MaybeResign(), *rest))
            case FailoverContextRead():
                self.on_controller_failover(
                    c, resp.live, resp.partition_states, rest, resp.topics, resp.admin
                )
            case InitializeLeaderAndIsrWritten(elect=elect, batch=batch):
                self.partition_state_machine.initialize_leader_and_isr_written(c, resp, elect, batch, rest)
            case ElectLeaderForPartitionsRead(batch=batch):
                self.partition_state_machine.elect_leader_for_partitions_read(c, resp, k.data, batch, rest)
            case ElectLeaderForPartitionsWritten(strategy=strategy, items=items, batch=batch):
                self.partition_state_machine.elect_leader_for_partitions_written(
                    c, resp, strategy, items, batch, rest
                )
            case BrokerChangeRead():
                self.broker_lifecycle.process_broker_change(c, resp.epochs, rest)
            case IsrChangeNotificationsRead():
                self.partition_state_machine.process_isr_change_notification(
                    c, resp.notifications, resp.states, rest
                )
            case RemoveReplicasFromIsrRead(broker=broker, partitions=partitions, batch=batch):
                self.replica_state_machine.remove_replicas_from_isr_read(
                    c, resp, broker, partitions, batch, rest
                )
            case RemoveReplicasFromIsrWritten(broker=broker, batch=batch):
                self.replica_state_machine.remove_replicas_from_isr_written(c, resp, broker, batch, rest)
            case TopicChangeRead():
                self.topic_changes.process_topic_change(c, resp.topics, rest, resp.deleted)
            case TopicDeletionRead():
                self.topic_deletion_manager.process_topic_deletion(c, resp.topics, rest)
            case TopicZNodeDeleted(topic=topic):
                self.topic_deletion_manager.delete_topic_done(c, resp.ok, topic, rest)
            case PartitionModificationsRead(topic=topic):
                self.topic_changes.process_partition_modifications(c, topic, resp.present, rest)
            case PartitionReassignmentRead():
                self.admin_workflows.process_partition_reassignment(c, resp.reassignments, rest)
            case ReassignmentPartitionStateRead(partition=partition, mode=mode):
                self.admin_workflows.reassign_parts(c, resp, partition, mode, rest)
            case AssignmentWritten(partition=partition, phase=phase, replicas=replicas):
                self.admin_workflows.assign_written(c, resp.ok, partition, phase, replicas, rest)
            case PreferredReplicaElectionRead():
                self.admin_workflows.process_preferred_replica_leader_election(c, resp.partitions, rest)
            case _:
                self.zookeeper_leader_elector.resume(c, k, resp)

    def failover_reads(self, c: ControllerBase) -> ReadControllerContext:
        """``onControllerFailover``'s ZooKeeper work before the context is known, one request:
        the handlers registered, ``deleteLogDirEventNotifications`` (no log dirs in the model),
        ``deleteIsrChangeNotifications(epochZkVersion)`` (fenced), ``initializeControllerContext``
        (seed 004: 1303-1313)."""
        return ReadControllerContext(True, c.fence())

    def on_controller_failover(
        self,
        c: ControllerBase,
        live: tuple[int, ...],
        parts: tuple,
        rest: tuple,
        ntopics: int = -1,
        admin: tuple | None = None,
    ) -> None:
        """``onControllerFailover`` after the context read; ``ntopics`` (``topics_created_later``
        only): the topics ``/brokers/topics`` holds (a prefix of the configured topics);
        ``admin`` (admin workflows only): which partitions exist, their assignments,
        ``/admin/delete_topics``, ``/admin/reassign_partitions`` and
        ``/admin/preferred_replica_election``."""
        sys = c.sys
        cfg = sys.cfg
        if self.resigned(c, rest):
            return
        ctx = c.ctx
        legacy = cfg.elector is Elector.LEGACY
        rstates = []
        pstates = []
        known = sys.np if ntopics < 0 else ntopics * sys.ppt
        present: tuple = ()
        ar = sys.replicas
        if admin is not None:
            present, ar = admin[0], admin[1]
        for p, reps in enumerate(sys.slots):
            if (p >= known) if admin is None else not present[p]:
                # topic not (yet) in /brokers/topics: not in the context
                rstates.append((ReplicaState.NonExistentReplica,) * len(reps))
                pstates.append(PartitionState.NonExistentPartition)
                continue
            rstates.append(self.replica_state_machine.initialize_replica_state(c, reps, ar[p], live))
            pstates.append(self.partition_state_machine.initialize_partition_state(c, parts[p], live))
        c.ctx = ctx._replace(live=live, leaders=parts, pstates=tuple(pstates), rstates=tuple(rstates))
        admin_prog: tuple = ()
        if admin is not None:
            admin_prog = self.on_controller_failover_admin(c, admin)
        if not legacy:
            # 2.x: UpdateMetadata to live brokers before the state machines start
            c.send_update_metadata_request()
        # replicaStateMachine.startup(): every live replica -> OnlineReplica
        batch = self.replica_state_machine.replicas_to_online(c, [b for b, e in enumerate(live) if e])
        c.send_requests_to_brokers(batch)
        # (Kafka 2.3, KAFKA-3143) every dead replica -> OfflineReplica; then
        # partitionStateMachine.startup(): triggerOnlinePartitionStateChange
        offline = self.replica_state_machine.offline_replicas_on_startup(c)
        self.run(c, (*offline, *self.failover_after_replica_startup(c, admin_prog), *rest))

    def failover_after_replica_startup(self, c: ControllerBase, admin_prog: tuple) -> tuple:
        """The steps of ``onControllerFailover`` after ``replicaStateMachine.startup()``:
        ``partitionStateMachine.startup()`` (``triggerOnlinePartitionStateChange``), the legacy
        elector's ``sendUpdateMetadataRequest``, then the admin steps (``admin_prog``, from
        :meth:`on_controller_failover_admin`). ``kafka_version = "0.8"`` orders them as seed 000
        prints (``model/controller/v08.py``)."""
        legacy = c.sys.cfg.elector is Elector.LEGACY
        return (
            TriggerOnlinePartitionStateChange(),
            *((SendUpdateMetadataRequest(),) if legacy else ()),
            *admin_prog,
        )

    def on_controller_failover_admin(self, c: ControllerBase, admin: tuple) -> tuple:
        """``onControllerFailover``'s admin steps: ``initializePartitionReassignment``,
        ``fetchTopicDeletionsInProgress`` + ``topicDeletionManager.init`` (before the state
        machines start); returns the steps after startup: ``maybeTriggerPartitionReassignment``,
        ``tryTopicDeletion``, ``fetchPendingPreferredReplicaElections`` + election."""
        sys = c.sys
        cfg = sys.cfg
        ctx = c.ctx
        present, ar, deletions, reassign, preferred = admin
        ppt = sys.ppt
        known = {t for t in range(cfg.topics) if present[t * ppt]}
        reassigning = tuple((p, rar) for p, rar in reassign if present[p])
        prog: list = []
        deleting: tuple[int, ...] = ()
        ineligible: tuple[int, ...] = ()
        unknown = tuple(t for t in deletions if t not in known)
        if cfg.delete_topic_enable:
            deleting = tuple(t for t in deletions if t in known)
            ineligible = tuple(
                t
                for t in deleting
                if any(p // ppt == t for p, _ in reassigning)
                or any(not ctx.live[r] for p in range(t * ppt, (t + 1) * ppt) for r in ar[p])
            )
        else:
            unknown = deletions
        if unknown:
            c.send_zk(DeleteTopicDeletions(unknown, c.fence(), ctx.epoch))
        c.ctx = ctx._replace(ar=ar, deleting=deleting, ineligible=ineligible, reassigning=reassigning)
        for p, _ in reassigning:
            prog.append(OnPartitionReassignment(p, 0))
            c.done |= D_PICKED_UP
        if deleting:
            prog.append(ResumeDeletions())
        if preferred:
            pending = self.admin_workflows.pending_preferred(c, preferred)
            if pending:
                prog.append(ElectLeaderForPartitions(S_PREFERRED, pending))
            prog.append(RemovePartitionsFromPreferredReplicaElection())
        return tuple(prog)

    def on_controller_resignation(self, c: ControllerBase) -> None:
        """``onControllerResignation``: unregister handlers, shut the channels, reset the context."""
        c.watch = False
        c.ctx = None  # resigned: no context
        nb = c.sys.nb
        base = c.me * nb
        chans = c.chans
        for d in range(nb):
            if chans[base + d]:
                chans = set_item(chans, base + d, ())
        c.chans = chans

    def resigned(self, c: ControllerBase, rest: tuple) -> bool:
        """Whether ``c`` resigned while it waited for ZooKeeper (no context left); if so, it
        goes on with ``rest``, and the caller drops the response."""
        if c.ctx is None:
            self.run(c, rest)
            return True
        return False

    def write_failed(self, c: ControllerBase, ok: bool, rest: tuple) -> bool:
        """Whether a conditional ZooKeeper write ``c`` waited for is void: ``c`` resigned
        meanwhile (:meth:`resigned`), or the write was fenced (``ControllerMovedException``:
        :meth:`controller_moved`)."""
        if self.resigned(c, rest):
            return True
        if not ok:
            self.controller_moved(c, rest)
            return True
        return False

    def controller_moved(self, c: ControllerBase, rest: tuple) -> None:
        """``ControllerMovedException`` (BadVersion on /controller_epoch): abort, maybeResign."""
        del rest
        if c.sys.cfg.elector is Elector.LEGACY:
            self.run(c, ())
        else:
            self.run(c, (MaybeResign(),))
