"""``KafkaController``: one broker's controller during a step. Its event loop (``process``), the
continuation a ZooKeeper response resumes, election (2.x ``elect`` and 0.8
``ZookeeperLeaderElector``), ``onControllerFailover`` and ``onControllerResignation``.
"""

from __future__ import annotations

from explorer.speedups import set_item
from model.controller.base import Component, ControllerBase
from model.controller.config import Elector
from model.controller.elector import LEGACY_WAITS
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
    Q_DELETE_DELETIONS,
    Q_DELETE_PREFERRED,
    Q_READ_BROKERS,
    Q_READ_CONTEXT,
    Q_READ_CTL,
    Q_READ_ISR_CHANGES,
    Q_READ_TOPICS,
    Q_REGISTER_BROKER,
    Q_REGISTER_CTL,
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


class KafkaController(Component):
    """One broker's ``KafkaController`` during a step: its event loop (``process``), the
    continuation a ZooKeeper response resumes, election, ``onControllerFailover`` and
    ``onControllerResignation``."""

    def run(self, c: ControllerBase, prog: tuple, batch: tuple = ()) -> None:
        """Run program ops until one parks for a ZooKeeper response or none is left."""
        me = c.me
        while prog:
            op = prog[0]
            prog = prog[1:]
            code = op[0]
            if code in (O_ELECT, O_MAYBE_RESIGN):
                c.send_zk(
                    GetControllerIdAndEpoch(
                        Q_READ_CTL,
                    )
                )
                c.park(W_ELECT_READ if code == O_ELECT else W_RESIGN_READ, None, (), prog)
                return
            if code == O_L_ELECT:
                self.zookeeper_leader_elector.elect(c, prog)
                return
            if code == O_L_RESIGN_ELECT:
                if c.active_id == me:
                    self.on_controller_resignation(c)
                prog = ((O_L_ELECT,), *prog)
                continue
            if code == O_FAILOVER:
                c.send_zk(
                    ReadControllerContext(
                        Q_READ_CONTEXT,
                    )
                )
                c.park(W_CONTEXT, None, (), prog)
                return
            if c.ctx is None:
                # the remaining ops need a context (the controller resigned meanwhile)
                continue
            if code == O_TRIGGER:
                if self.partition_state_machine.trigger_online_partition_state_change(
                    c, prog, batch, op[1] if len(op) > 1 else -1
                ):
                    return
                batch = ()
            elif code == O_ELECT_PARTS:
                if self.partition_state_machine.do_elect_leader_for_partitions(c, op[2], batch, prog, op[1]):
                    return
                batch = ()
            elif code == O_BROKER_CHANGE:
                c.send_zk(
                    GetAllBrokersInCluster(
                        Q_READ_BROKERS,
                    )
                )
                c.park(W_BROKERS, None, (), prog)
                return
            elif code == O_ON_STARTUP:
                prog = self.broker_lifecycle.on_broker_startup(c, op[1]) + prog
            elif code == O_ON_FAILURE:
                prog = self.broker_lifecycle.on_broker_failure(c, op[1]) + prog
            elif code == O_REMOVE_ISR:
                if self.replica_state_machine.do_remove_replicas_from_isr(
                    c, op[1], prog, op[2] if len(op) > 2 else None
                ):
                    return
            elif code == O_LIVE_REMOVE:
                live = c.ctx.live
                for b in op[1]:
                    live = set_item(live, b, 0)
                c.ctx = c.ctx._replace(live=live)
            elif code == O_LIVE_ADD:
                live = c.ctx.live
                for b, e in op[1]:
                    live = set_item(live, b, e)
                c.ctx = c.ctx._replace(live=live)
            elif code == O_ISR_CHANGE:
                c.send_zk(
                    GetAllIsrChangeNotifications(
                        Q_READ_ISR_CHANGES,
                    )
                )
                c.park(W_ISR_READ, None, (), prog)
                return
            elif code == O_SEND_UM:
                c.send_update_metadata_request()
            elif code == O_NEW_PARTITIONS:
                if self.topic_changes.on_new_partition_creation(c, op[1], prog):
                    return
            elif code == O_NEW_REPLICAS_ONLINE:
                self.topic_changes.new_replicas_online(c, op[1])
            elif code == O_RESUME_DELETIONS:
                prog = self.topic_deletion_manager.resume_deletions(c) + prog
            elif code == O_RESUME_TOPIC:
                # resumeDeletionForTopics
                topics = op[1]
                c.ctx = c.ctx._replace(ineligible=tuple(t for t in c.ctx.ineligible if t not in topics))
                prog = self.topic_deletion_manager.resume_deletions(c) + prog
            elif code == O_ON_TOPIC_DELETION:
                prog = self.topic_deletion_manager.on_topic_deletion(c, op[1]) + prog
            elif code == O_DEL_STARTED:
                self.topic_deletion_manager.replica_deletion_started(c, op[1])
            elif code == O_DEL_COMPLETE:
                if self.topic_deletion_manager.complete_delete_topic(c, op[1], prog):
                    return
            elif code == O_FAIL_DELETION:
                prog = self.topic_deletion_manager.fail_replica_deletion(c, op[1]) + prog
            elif code == O_REASSIGN:
                if self.admin_workflows.on_partition_reassignment(c, op[1], op[2], prog):
                    return
            elif code == O_REASSIGN_DONE:
                if self.admin_workflows.reassign_stop_old(c, op[1], op[2], prog):
                    return
            elif code == O_DELETE_PREFERRED:
                # removePartitionsFromPreferredReplicaElection: delete the znode
                c.send_zk(DeletePreferredReplicaElection(Q_DELETE_PREFERRED, c.fence(), c.ctx.epoch))
            elif code == O_STOP:
                if op[1] >= 0:
                    self.topic_deletion_manager.send_stop_replica_requests(c, op[1], op[2], op[3], False)
                else:
                    # stopOldReplicasOfReassignedPartition: -> Started -> Successful -> NonExistent
                    (p,) = op[2]
                    for b in op[3]:
                        c.set_rstate(p, b, ReplicaState.ReplicaDeletionStarted)
                        self.topic_deletion_manager.send_stop_replica_requests(c, b, (p,), True, False)
                        c.set_rstate(p, b, ReplicaState.ReplicaDeletionSuccessful)
                        c.set_rstate(p, b, ReplicaState.NonExistentReplica)
            elif code == O_CS_RESPOND:
                e = c.ctx.live[op[1]]
                if e:
                    c.send_msg(op[1], ControlledShutdownResponse(M_CS_RESPONSE, c.ctx.epoch, e, ()))
            else:  # pragma: no cover
                raise AssertionError(f"unknown program op {op!r}")
        c.pending = None

    def process_event(self, c: ControllerBase, ev: tuple[int, int]) -> None:
        kind, arg = ev
        legacy = c.sys.cfg.elector is Elector.LEGACY
        if kind == EV_STARTUP:
            self.run(c, ((O_L_ELECT,),) if legacy else ((O_ELECT,),))
        elif kind == EV_REELECT:
            self.run(c, ((O_L_RESIGN_ELECT,),) if legacy else ((O_ELECT,),))
        elif kind == EV_CTL_CHANGE:
            if legacy:
                # 0.8 LeaderChangeListener.handleDataChange: leaderId = new data (no resignation)
                c.active_id = arg
            else:
                self.run(c, ((O_MAYBE_RESIGN,),))
        elif kind == EV_BROKER_CHANGE:
            if c.ctx is not None:
                self.run(c, ((O_BROKER_CHANGE,),))
        elif kind == EV_ISR_CHANGE:
            if c.ctx is not None:
                self.run(c, ((O_ISR_CHANGE,),))
        elif kind == EV_TOPIC_CHANGE:
            # TopicChange: getChildren /brokers/topics (re-arming the watch) and the new topics'
            # assignments; then onNewTopicCreation for the topics the context does not know
            if c.ctx is not None:
                c.send_zk(
                    GetAllTopicsInCluster(
                        Q_READ_TOPICS,
                    )
                )
                c.park(W_TOPICS, None, (), ())
        elif kind >= EV_DELETE_TOPICS:
            if c.ctx is not None:
                self.admin_workflows.admin_event(c, kind, arg)
        elif kind == EV_EXPIRE and not legacy:
            # 2.x Expire: activeControllerId = -1, onControllerResignation if it was active; then
            # RegisterBrokerAndReelect (the registration's response queues the election)
            if c.ctx is not None or c.active_id == c.me:
                self.on_controller_resignation(c)
            c.active_id = -1
            c.send_zk(RegisterBroker(Q_REGISTER_BROKER, True))
        elif kind == EV_EXPIRE:
            # 0.8 SessionExpirationListener.handleNewSession: onControllerResignation(); elect
            if c.ctx is not None or c.active_id == c.me:
                self.on_controller_resignation(c)
            c.active_id = -1
            self.run(c, ((O_L_ELECT,),))

    def update_active_controller_id(self, c: ControllerBase, ctl: int) -> None:
        """``activeControllerId = getControllerId``, then ``onControllerResignation`` if this
        broker was the controller and no longer is (2.x ``maybeResign``; also ``elect``'s read)."""
        was = c.active_id == c.me
        c.active_id = ctl
        if was and ctl != c.me:
            self.on_controller_resignation(c)

    def next_controller_epoch(self, c: ControllerBase, epoch: int) -> int:
        """The epoch a new controller writes: ``newControllerEpoch = curEpoch + 1`` (2.x
        ``registerControllerAndIncrementControllerEpoch``; 0.8 ``incrementControllerEpoch``)."""
        return epoch + 1

    def resume(self, c: ControllerBase, resp: tuple) -> None:
        assert c.pending is not None  # a response resumes a parked continuation
        wait, data, batch, rest = c.pending
        c.pending = None
        me = c.me
        op = resp[0]
        if wait in (W_ELECT_READ, W_RESIGN_READ):
            _, ctl, epoch, version = resp
            self.update_active_controller_id(c, ctl)
            if wait == W_ELECT_READ and ctl == -1:
                c.send_zk(
                    RegisterControllerAndIncrementControllerEpoch(
                        Q_REGISTER_CTL, self.next_controller_epoch(c, epoch), version
                    )
                )
                c.park(W_REGISTER, None, (), rest)
                return
            self.run(c, rest)
        elif wait == W_REGISTER:
            ok, epoch, version = resp[1], resp[2], resp[3]
            if ok:
                c.active_id = me
                c.ctx = c.sys.empty_ctx(epoch, version)
                self.run(c, ((O_FAILOVER,), *rest))
            else:
                # NodeExists / BadVersion -> ControllerMovedException -> maybeResign
                self.run(c, ((O_MAYBE_RESIGN,), *rest))
        elif wait == W_CONTEXT:
            self.on_controller_failover(
                c,
                resp[1],
                resp[2],
                rest,
                resp[3] if len(resp) > 3 else -1,
                resp[4] if len(resp) > 4 else None,
            )
        elif wait == W_INIT:
            self.partition_state_machine.initialize_leader_and_isr_written(c, resp, data, batch, rest)
        elif wait == W_ELECT_PARTS:
            self.partition_state_machine.elect_leader_for_partitions_read(c, resp, data, batch, rest)
        elif wait == W_ELECT_WRITE:
            self.partition_state_machine.elect_leader_for_partitions_written(c, resp, data, batch, rest)
        elif wait == W_BROKERS:
            self.broker_lifecycle.process_broker_change(c, resp[1], rest)
        elif wait == W_ISR_READ:
            self.partition_state_machine.process_isr_change_notification(c, resp[1], resp[2], rest)
        elif wait == W_RM_READ:
            self.replica_state_machine.remove_replicas_from_isr_read(c, resp, data, batch, rest)
        elif wait == W_RM_WRITE:
            self.replica_state_machine.remove_replicas_from_isr_written(c, resp, data, batch, rest)
        elif wait == W_TOPICS:
            self.topic_changes.process_topic_change(c, resp[1], rest, resp[2] if len(resp) > 2 else ())
        elif wait == W_DEL_READ:
            self.topic_deletion_manager.process_topic_deletion(c, resp[1], rest)
        elif wait == W_DEL_DONE:
            self.topic_deletion_manager.delete_topic_done(c, resp[1], data, rest)
        elif wait == W_PMOD:
            self.topic_changes.process_partition_modifications(c, data, resp[2], rest)
        elif wait == W_REASSIGN_READ:
            self.admin_workflows.process_partition_reassignment(c, resp[1], rest)
        elif wait == W_REASSIGN_PARTS:
            self.admin_workflows.reassign_parts(c, resp, data, rest)
        elif wait == W_ASSIGN:
            self.admin_workflows.assign_written(c, resp[1], data, rest)
        elif wait == W_PREF_READ:
            self.admin_workflows.process_preferred_replica_leader_election(c, resp[1], rest)
        elif wait in LEGACY_WAITS:
            self.zookeeper_leader_elector.resume(c, wait, resp, rest)
        else:  # pragma: no cover
            raise AssertionError(f"unknown wait {wait} for response {op}")

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
        # partitionStateMachine.startup(): triggerOnlinePartitionStateChange
        self.run(c, (*self.failover_after_replica_startup(c, admin_prog), *rest))

    def failover_after_replica_startup(self, c: ControllerBase, admin_prog: tuple) -> tuple:
        """The steps of ``onControllerFailover`` after ``replicaStateMachine.startup()``:
        ``partitionStateMachine.startup()`` (``triggerOnlinePartitionStateChange``), the legacy
        elector's ``sendUpdateMetadataRequest``, then the admin steps (``admin_prog``, from
        :meth:`on_controller_failover_admin`). ``kafka_version = "0.8"`` orders them as seed 000
        prints (``model/controller/v08.py``)."""
        legacy = c.sys.cfg.elector is Elector.LEGACY
        return ((O_TRIGGER,), *(((O_SEND_UM,),) if legacy else ()), *admin_prog)

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
            c.send_zk(DeleteTopicDeletions(Q_DELETE_DELETIONS, unknown, c.fence(), ctx.epoch))
        c.ctx = ctx._replace(ar=ar, deleting=deleting, ineligible=ineligible, reassigning=reassigning)
        for p, _ in reassigning:
            prog.append((O_REASSIGN, p, 0))
            c.done |= D_PICKED_UP
        if deleting:
            prog.append((O_RESUME_DELETIONS,))
        if preferred:
            pending = self.admin_workflows.pending_preferred(c, preferred)
            if pending:
                prog.append((O_ELECT_PARTS, S_PREFERRED, pending))
            prog.append((O_DELETE_PREFERRED,))
        return tuple(prog)

    def on_controller_resignation(self, c: ControllerBase) -> None:
        """``onControllerResignation``: unregister handlers, shut the channels, reset the context."""
        c.watch = False
        c.ctx = None  # type: ignore[assignment]  # resigned: no context
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
            self.run(c, ((O_MAYBE_RESIGN,),))
