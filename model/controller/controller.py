"""``KafkaController``: one broker's controller during a step. Its event loop (``process``), the
continuation a ZooKeeper response resumes, election (2.x ``elect`` and 0.8
``ZookeeperLeaderElector``), ``onControllerFailover`` and ``onControllerResignation``.
"""

from __future__ import annotations

from explorer.speedups import set_item
from model.controller.admin import AdminWorkflows
from model.controller.config import Elector
from model.controller.messages import (
    EV_BROKER_CHANGE,
    EV_CTL_CHANGE,
    EV_DELETE_TOPICS,
    EV_EXPIRE,
    EV_ISR_CHANGE,
    EV_REELECT,
    EV_STARTUP,
    EV_TOPIC_CHANGE,
    M_CS_RESPONSE,
    Q_CREATE_CTL,
    Q_DELETE_CTL,
    Q_DELETE_DELETIONS,
    Q_DELETE_PREFERRED,
    Q_INC_EPOCH,
    Q_READ_BROKERS,
    Q_READ_CONTEXT,
    Q_READ_CTL,
    Q_READ_EPOCH,
    Q_READ_ISR_CHANGES,
    Q_READ_TOPICS,
    Q_REGISTER_BROKER,
    Q_REGISTER_CTL,
    S_PREFERRED,
    ControlledShutdownResponse,
    CreateControllerPath,
    DeleteControllerPath,
    DeletePreferredReplicaElection,
    DeleteTopicDeletions,
    GetAllBrokersInCluster,
    GetAllIsrChangeNotifications,
    GetAllTopicsInCluster,
    GetControllerIdAndEpoch,
    IncrementControllerEpoch,
    ReadControllerContext,
    ReadControllerEpoch,
    RegisterBroker,
    RegisterControllerAndIncrementControllerEpoch,
)
from model.controller.program import (
    O_BROKER_CHANGE,
    O_CS_RESPOND,
    O_DEL_COMPLETE,
    O_DEL_STARTED,
    O_DELETE_PREFERRED,
    O_ELECT,
    O_ELECT_PARTS,
    O_FAIL_DELETION,
    O_FAILOVER,
    O_ISR_CHANGE,
    O_L_ELECT,
    O_L_RESIGN_ELECT,
    O_LIVE_ADD,
    O_LIVE_REMOVE,
    O_MAYBE_RESIGN,
    O_NEW_PARTITIONS,
    O_NEW_REPLICAS_ONLINE,
    O_ON_FAILURE,
    O_ON_STARTUP,
    O_ON_TOPIC_DELETION,
    O_REASSIGN,
    O_REASSIGN_DONE,
    O_REMOVE_ISR,
    O_RESUME_DELETIONS,
    O_RESUME_TOPIC,
    O_SEND_UM,
    O_STOP,
    O_TRIGGER,
    W_ASSIGN,
    W_BROKERS,
    W_CONTEXT,
    W_DEL_DONE,
    W_DEL_READ,
    W_ELECT_PARTS,
    W_ELECT_READ,
    W_ELECT_WRITE,
    W_INIT,
    W_ISR_READ,
    W_L_CREATE,
    W_L_EPOCH,
    W_L_INC,
    W_L_READ,
    W_PMOD,
    W_PREF_READ,
    W_REASSIGN_PARTS,
    W_REASSIGN_READ,
    W_REGISTER,
    W_RESIGN_READ,
    W_RM_READ,
    W_RM_WRITE,
    W_TOPICS,
)
from model.controller.state import D_PICKED_UP
from model.state_machines import PartitionState, ReplicaState


class KafkaController(AdminWorkflows):
    """One broker's ``KafkaController`` during a step: its event loop (``process``), the
    continuation a ZooKeeper response resumes, election, ``onControllerFailover`` and
    ``onControllerResignation``."""

    __slots__ = ()

    def run(self, prog: tuple, batch: tuple = ()) -> None:
        """Run program ops until one parks for a ZooKeeper response or none is left."""
        me = self.me
        while prog:
            op = prog[0]
            prog = prog[1:]
            code = op[0]
            if code in (O_ELECT, O_MAYBE_RESIGN):
                self.send_zk(
                    GetControllerIdAndEpoch(
                        Q_READ_CTL,
                    )
                )
                self.park(W_ELECT_READ if code == O_ELECT else W_RESIGN_READ, None, (), prog)
                return
            if code == O_L_ELECT:
                self.send_zk(
                    GetControllerIdAndEpoch(
                        Q_READ_CTL,
                    )
                )
                self.park(W_L_READ, None, (), prog)
                return
            if code == O_L_RESIGN_ELECT:
                if self.active_id == me:
                    self.on_controller_resignation()
                prog = ((O_L_ELECT,), *prog)
                continue
            if code == O_FAILOVER:
                self.send_zk(
                    ReadControllerContext(
                        Q_READ_CONTEXT,
                    )
                )
                self.park(W_CONTEXT, None, (), prog)
                return
            if self.ctx is None:
                # the remaining ops need a context (the controller resigned meanwhile)
                continue
            if code == O_TRIGGER:
                if self.trigger_online_partition_state_change(prog, batch, op[1] if len(op) > 1 else -1):
                    return
                batch = ()
            elif code == O_ELECT_PARTS:
                if self.do_elect_leader_for_partitions(op[2], batch, prog, op[1]):
                    return
                batch = ()
            elif code == O_BROKER_CHANGE:
                self.send_zk(
                    GetAllBrokersInCluster(
                        Q_READ_BROKERS,
                    )
                )
                self.park(W_BROKERS, None, (), prog)
                return
            elif code == O_ON_STARTUP:
                prog = self.on_broker_startup(op[1]) + prog
            elif code == O_ON_FAILURE:
                prog = self.on_broker_failure(op[1]) + prog
            elif code == O_REMOVE_ISR:
                if self.do_remove_replicas_from_isr(op[1], prog, op[2] if len(op) > 2 else None):
                    return
            elif code == O_LIVE_REMOVE:
                live = self.ctx.live
                for b in op[1]:
                    live = set_item(live, b, 0)
                self.ctx = self.ctx._replace(live=live)
            elif code == O_LIVE_ADD:
                live = self.ctx.live
                for b, e in op[1]:
                    live = set_item(live, b, e)
                self.ctx = self.ctx._replace(live=live)
            elif code == O_ISR_CHANGE:
                self.send_zk(
                    GetAllIsrChangeNotifications(
                        Q_READ_ISR_CHANGES,
                    )
                )
                self.park(W_ISR_READ, None, (), prog)
                return
            elif code == O_SEND_UM:
                self.send_update_metadata_request()
            elif code == O_NEW_PARTITIONS:
                if self.on_new_partition_creation(op[1], prog):
                    return
            elif code == O_NEW_REPLICAS_ONLINE:
                self.new_replicas_online(op[1])
            elif code == O_RESUME_DELETIONS:
                prog = self.resume_deletions() + prog
            elif code == O_RESUME_TOPIC:
                # resumeDeletionForTopics
                topics = op[1]
                self.ctx = self.ctx._replace(
                    ineligible=tuple(t for t in self.ctx.ineligible if t not in topics)
                )
                prog = self.resume_deletions() + prog
            elif code == O_ON_TOPIC_DELETION:
                prog = self.on_topic_deletion(op[1]) + prog
            elif code == O_DEL_STARTED:
                self.replica_deletion_started(op[1])
            elif code == O_DEL_COMPLETE:
                if self.complete_delete_topic(op[1], prog):
                    return
            elif code == O_FAIL_DELETION:
                prog = self.fail_replica_deletion(op[1]) + prog
            elif code == O_REASSIGN:
                if self.on_partition_reassignment(op[1], op[2], prog):
                    return
            elif code == O_REASSIGN_DONE:
                if self.reassign_stop_old(op[1], op[2], prog):
                    return
            elif code == O_DELETE_PREFERRED:
                # removePartitionsFromPreferredReplicaElection: delete the znode
                self.send_zk(DeletePreferredReplicaElection(Q_DELETE_PREFERRED, self.fence(), self.ctx.epoch))
            elif code == O_STOP:
                if op[1] >= 0:
                    self.send_stop_replica_requests(op[1], op[2], op[3], False)
                else:
                    # stopOldReplicasOfReassignedPartition: -> Started -> Successful -> NonExistent
                    (p,) = op[2]
                    for b in op[3]:
                        self.set_rstate(p, b, ReplicaState.ReplicaDeletionStarted)
                        self.send_stop_replica_requests(b, (p,), True, False)
                        self.set_rstate(p, b, ReplicaState.ReplicaDeletionSuccessful)
                        self.set_rstate(p, b, ReplicaState.NonExistentReplica)
            elif code == O_CS_RESPOND:
                e = self.ctx.live[op[1]]
                if e:
                    self.send_msg(op[1], ControlledShutdownResponse(M_CS_RESPONSE, self.ctx.epoch, e, ()))
            else:  # pragma: no cover
                raise AssertionError(f"unknown program op {op!r}")
        self.pending = None

    def process_event(self, ev: tuple[int, int]) -> None:
        kind, arg = ev
        legacy = self.sys.cfg.elector is Elector.LEGACY
        if kind == EV_STARTUP:
            self.run(((O_L_ELECT,),) if legacy else ((O_ELECT,),))
        elif kind == EV_REELECT:
            self.run(((O_L_RESIGN_ELECT,),) if legacy else ((O_ELECT,),))
        elif kind == EV_CTL_CHANGE:
            if legacy:
                # 0.8 LeaderChangeListener.handleDataChange: leaderId = new data (no resignation)
                self.active_id = arg
            else:
                self.run(((O_MAYBE_RESIGN,),))
        elif kind == EV_BROKER_CHANGE:
            if self.ctx is not None:
                self.run(((O_BROKER_CHANGE,),))
        elif kind == EV_ISR_CHANGE:
            if self.ctx is not None:
                self.run(((O_ISR_CHANGE,),))
        elif kind == EV_TOPIC_CHANGE:
            # TopicChange: getChildren /brokers/topics (re-arming the watch) and the new topics'
            # assignments; then onNewTopicCreation for the topics the context does not know
            if self.ctx is not None:
                self.send_zk(
                    GetAllTopicsInCluster(
                        Q_READ_TOPICS,
                    )
                )
                self.park(W_TOPICS, None, (), ())
        elif kind >= EV_DELETE_TOPICS:
            if self.ctx is not None:
                self.admin_event(kind, arg)
        elif kind == EV_EXPIRE and not legacy:
            # 2.x Expire: activeControllerId = -1, onControllerResignation if it was active; then
            # RegisterBrokerAndReelect (the registration's response queues the election)
            if self.ctx is not None or self.active_id == self.me:
                self.on_controller_resignation()
            self.active_id = -1
            self.send_zk(RegisterBroker(Q_REGISTER_BROKER, True))
        elif kind == EV_EXPIRE:
            # 0.8 SessionExpirationListener.handleNewSession: onControllerResignation(); elect
            if self.ctx is not None or self.active_id == self.me:
                self.on_controller_resignation()
            self.active_id = -1
            self.run(((O_L_ELECT,),))

    def update_active_controller_id(self, ctl: int) -> None:
        """``activeControllerId = getControllerId``, then ``onControllerResignation`` if this
        broker was the controller and no longer is (2.x ``maybeResign``; also ``elect``'s read)."""
        was = self.active_id == self.me
        self.active_id = ctl
        if was and ctl != self.me:
            self.on_controller_resignation()

    def next_controller_epoch(self, epoch: int) -> int:
        """The epoch a new controller writes: ``newControllerEpoch = curEpoch + 1`` (2.x
        ``registerControllerAndIncrementControllerEpoch``; 0.8 ``incrementControllerEpoch``)."""
        return epoch + 1

    def resume(self, resp: tuple) -> None:
        assert self.pending is not None  # a response resumes a parked continuation
        wait, data, batch, rest = self.pending
        self.pending = None
        me = self.me
        op = resp[0]
        if wait in (W_ELECT_READ, W_RESIGN_READ):
            _, ctl, epoch, version = resp
            self.update_active_controller_id(ctl)
            if wait == W_ELECT_READ and ctl == -1:
                self.send_zk(
                    RegisterControllerAndIncrementControllerEpoch(
                        Q_REGISTER_CTL, self.next_controller_epoch(epoch), version
                    )
                )
                self.park(W_REGISTER, None, (), rest)
                return
            self.run(rest)
        elif wait == W_REGISTER:
            ok, epoch, version = resp[1], resp[2], resp[3]
            if ok:
                self.active_id = me
                self.ctx = self.sys.empty_ctx(epoch, version)
                self.run(((O_FAILOVER,), *rest))
            else:
                # NodeExists / BadVersion -> ControllerMovedException -> maybeResign
                self.run(((O_MAYBE_RESIGN,), *rest))
        elif wait == W_CONTEXT:
            self.on_controller_failover(
                resp[1], resp[2], rest, resp[3] if len(resp) > 3 else -1, resp[4] if len(resp) > 4 else None
            )
        elif wait == W_INIT:
            self.initialize_leader_and_isr_written(resp, data, batch, rest)
        elif wait == W_ELECT_PARTS:
            self.elect_leader_for_partitions_read(resp, data, batch, rest)
        elif wait == W_ELECT_WRITE:
            self.elect_leader_for_partitions_written(resp, data, batch, rest)
        elif wait == W_BROKERS:
            self.process_broker_change(resp[1], rest)
        elif wait == W_ISR_READ:
            self.process_isr_change_notification(resp[1], resp[2], rest)
        elif wait == W_RM_READ:
            self.remove_replicas_from_isr_read(resp, data, batch, rest)
        elif wait == W_RM_WRITE:
            self.remove_replicas_from_isr_written(resp, data, batch, rest)
        elif wait == W_TOPICS:
            self.process_topic_change(resp[1], rest, resp[2] if len(resp) > 2 else ())
        elif wait == W_DEL_READ:
            self.process_topic_deletion(resp[1], rest)
        elif wait == W_DEL_DONE:
            self.delete_topic_done(resp[1], data, rest)
        elif wait == W_PMOD:
            self.process_partition_modifications(data, resp[2], rest)
        elif wait == W_REASSIGN_READ:
            self.process_partition_reassignment(resp[1], rest)
        elif wait == W_REASSIGN_PARTS:
            self.reassign_parts(resp, data, rest)
        elif wait == W_ASSIGN:
            self.assign_written(resp[1], data, rest)
        elif wait == W_PREF_READ:
            self.process_preferred_replica_leader_election(resp[1], rest)
        elif wait == W_L_READ:
            ctl = resp[1]
            self.active_id = ctl
            if ctl != -1:
                self.run(rest)
                return
            self.send_zk(
                CreateControllerPath(
                    Q_CREATE_CTL,
                )
            )
            self.park(W_L_CREATE, None, (), rest)
        elif wait == W_L_CREATE:
            if resp[1]:
                self.active_id = me
                # 0.8 onControllerFailover: readControllerEpochFromZookeeper; incrementControllerEpoch
                self.send_zk(
                    ReadControllerEpoch(
                        Q_READ_EPOCH,
                    )
                )
                self.park(W_L_EPOCH, None, (), rest)
            else:
                self.active_id = resp[2]
                self.run(rest)
        elif wait == W_L_EPOCH:
            self.send_zk(IncrementControllerEpoch(Q_INC_EPOCH, self.next_controller_epoch(resp[1]), resp[2]))
            self.park(W_L_INC, None, (), rest)
        elif wait == W_L_INC:
            if resp[1]:
                self.ctx = self.sys.empty_ctx(resp[2], resp[3])
                self.run(((O_FAILOVER,), *rest))
            else:
                # ControllerMovedException inside elect -> resign(): leaderId = -1; deletePath
                self.active_id = -1
                self.send_zk(
                    DeleteControllerPath(
                        Q_DELETE_CTL,
                    )
                )
                self.run(rest)
        else:  # pragma: no cover
            raise AssertionError(f"unknown wait {wait} for response {op}")

    def on_controller_failover(
        self, live: tuple[int, ...], parts: tuple, rest: tuple, ntopics: int = -1, admin: tuple | None = None
    ) -> None:
        """``onControllerFailover`` after the context read; ``ntopics`` (``topics_created_later``
        only): the topics ``/brokers/topics`` holds (a prefix of the configured topics);
        ``admin`` (admin workflows only): which partitions exist, their assignments,
        ``/admin/delete_topics``, ``/admin/reassign_partitions`` and
        ``/admin/preferred_replica_election``."""
        sys = self.sys
        cfg = sys.cfg
        ctx = self.ctx
        if ctx is None:  # resigned while reading
            self.run(rest)
            return
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
            rstates.append(self.initialize_replica_state(reps, ar[p], live))
            pstates.append(self.initialize_partition_state(parts[p], live))
        self.ctx = ctx._replace(live=live, leaders=parts, pstates=tuple(pstates), rstates=tuple(rstates))
        admin_prog: tuple = ()
        if admin is not None:
            admin_prog = self.on_controller_failover_admin(admin)
        if not legacy:
            # 2.x: UpdateMetadata to live brokers before the state machines start
            self.send_update_metadata_request()
        # replicaStateMachine.startup(): every live replica -> OnlineReplica
        batch = self.replicas_to_online([b for b, e in enumerate(live) if e])
        self.send_requests_to_brokers(batch)
        # partitionStateMachine.startup(): triggerOnlinePartitionStateChange
        self.run((*self.failover_after_replica_startup(admin_prog), *rest))

    def failover_after_replica_startup(self, admin_prog: tuple) -> tuple:
        """The steps of ``onControllerFailover`` after ``replicaStateMachine.startup()``:
        ``partitionStateMachine.startup()`` (``triggerOnlinePartitionStateChange``), the legacy
        elector's ``sendUpdateMetadataRequest``, then the admin steps (``admin_prog``, from
        :meth:`on_controller_failover_admin`). ``kafka_version = "0.8"`` orders them as seed 000
        prints (``model/controller/v08.py``)."""
        legacy = self.sys.cfg.elector is Elector.LEGACY
        return ((O_TRIGGER,), *(((O_SEND_UM,),) if legacy else ()), *admin_prog)

    def on_controller_failover_admin(self, admin: tuple) -> tuple:
        """``onControllerFailover``'s admin steps: ``initializePartitionReassignment``,
        ``fetchTopicDeletionsInProgress`` + ``topicDeletionManager.init`` (before the state
        machines start); returns the steps after startup: ``maybeTriggerPartitionReassignment``,
        ``tryTopicDeletion``, ``fetchPendingPreferredReplicaElections`` + election."""
        sys = self.sys
        cfg = sys.cfg
        ctx = self.ctx
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
            self.send_zk(DeleteTopicDeletions(Q_DELETE_DELETIONS, unknown, self.fence(), ctx.epoch))
        self.ctx = ctx._replace(ar=ar, deleting=deleting, ineligible=ineligible, reassigning=reassigning)
        for p, _ in reassigning:
            prog.append((O_REASSIGN, p, 0))
            self.done |= D_PICKED_UP
        if deleting:
            prog.append((O_RESUME_DELETIONS,))
        if preferred:
            pending = self.pending_preferred(preferred)
            if pending:
                prog.append((O_ELECT_PARTS, S_PREFERRED, pending))
            prog.append((O_DELETE_PREFERRED,))
        return tuple(prog)
