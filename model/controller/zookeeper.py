"""The ZooKeeper server (``ZooKeeperServer``): sessions, ephemeral znodes, versions (BadVersion,
NodeExists), the multi conditioned on ``/controller_epoch``'s version, watches delivering
events, session expiry on the server; and the client side of its responses.
"""

from __future__ import annotations

from typing import Any

from explorer.mypyc_compat import mypyc_attr
from explorer.speedups import set_item
from model.controller.actions import SessionExpire, ZkReply, ZkServe
from model.controller.cluster import Actor
from model.controller.events import (
    BrokerChange,
    ControllerChange,
    ControllerEvent,
    IsrChangeNotification,
    PartitionReassignmentIsrChange,
    Reelect,
    Startup,
)
from model.controller.messages import (
    FENCED_ADMIN_WRITES,
    REQUESTS,
    CreateControllerPath,
    DeleteControllerPath,
    DeleteIsrChangeNotifications,
    DeleteTopicDeletions,
    DeleteTopicZNode,
    GetAllBrokersInCluster,
    GetAllIsrChangeNotifications,
    GetAllTopicsInCluster,
    GetControllerIdAndEpoch,
    GetPartitionReassignment,
    GetPreferredReplicaElection,
    GetReplicaAssignmentForTopic,
    GetTopicDeletions,
    GetTopicPartitionStates,
    IncrementControllerEpoch,
    ReadControllerContext,
    ReadControllerEpoch,
    RegisterBroker,
    RegisterControllerAndIncrementControllerEpoch,
    RemovePartitionsFromReassignment,
    SetReplicaAssignment,
    UpdateIsr,
    UpdateLeaderAndIsr,
)
from model.controller.network import ZK_SESSIONS
from model.controller.responses import (
    BrokerEpochs,
    BrokerRegistered,
    ControllerContext,
    ControllerEpochIncremented,
    ControllerEpochRead,
    ControllerIdAndEpoch,
    ControllerPathCreated,
    ControllerRegistered,
    IsrChangeNotifications,
    IsrUpdated,
    LeaderAndIsrWritten,
    PartitionReassignment,
    PreferredReplicaElection,
    ReplicaAssignment,
    ReplicaAssignmentWritten,
    TopicDeletions,
    TopicPartitionStates,
    Topics,
    TopicZNodeDeleted,
)
from model.controller.state import Node, State, Zk

_STARTUP = Startup()


@mypyc_attr(allow_interpreted_subclasses=True)
class ZooKeeperServer(Actor):
    """The ZooKeeper server (sessions, ephemerals, versions, multi, watches, expiry) and the
    client side of its responses."""

    def __init__(self, system: Any) -> None:
        super().__init__(system)
        #: :meth:`reply` is this class's own, so a response merged into the server's step may go
        #: to :meth:`receive` without being queued (``network.ZkSessions.serve``); a subclass
        #: that overrides :meth:`reply` has every response go through it
        self.receives_merged = type(self).reply is ZooKeeperServer.reply

    def fire_watches(self, nodes: list[Node], ev: ControllerEvent, who: str, skip: int = -1) -> None:
        """A watch fires: append ``ev`` to every live broker watching (``ctl``: /controller,
        else the controller's watches), once (a queued event is not queued twice)."""
        for b, n in enumerate(nodes):
            if b == skip or not n.alive or n.expired or n.session == 0:
                continue
            if (n.ctl_watch if who == "ctl" else n.watch) and ev not in n.events:
                nodes[b] = n._replace(events=(*n.events, ev))

    def reply(self, s: State, b: int) -> tuple[Any, State]:
        """Broker ``b`` takes the head of its queued responses (``Node.zk_in``) and reacts
        (:meth:`receive`)."""
        n = s.nodes[b]
        resp = n.zk_in[0]
        n2 = n._replace(zk_in=n.zk_in[1:])
        return ZkReply(b, resp), self.receive(s._replace(nodes=set_item(s.nodes, b, n2)), b, n2, resp)

    def receive(self, s: State, b: int, n: Node, resp: Any) -> State:
        """The client side of ZooKeeper's response ``resp`` at broker ``b`` (``n``, which is
        ``s.nodes[b]``, the response already off its queue): a registration's broker epoch
        (and the election it queues), a leader's ISR write, or the parked controller resumed."""
        match resp:
            case BrokerRegistered(broker_epoch=broker_epoch, reelect=reelect):
                ev = n.events
                if reelect and _STARTUP not in ev:
                    ev = (*ev, _STARTUP)
                n = n._replace(bepoch=broker_epoch, events=ev)
                return s._replace(nodes=set_item(s.nodes, b, n))
            case IsrUpdated():
                return self.system.replica_manager.isr_result(s, b, n, resp)
        w = self.system.controller_cls(self.system, s, b, n)
        if w.pending is None:  # pragma: no cover - a response nobody waits for
            raise AssertionError(f"broker {b}: unexpected response {resp!r}")
        self.system.kafka_controller.resume(w, resp)
        return w.commit(s)

    def apply(self, s: State, b: int) -> tuple[Any, State, Any]:
        """Apply the head request of ``b``'s session (a ``match`` on its class, ``messages.py``): the step,
        its successor and the response (or None), which the network hands on (``network.py``) or loses."""
        cfg = self.cfg
        n = s.nodes[b]
        req = n.zk_out[0]
        if type(req) is tuple:
            req = REQUESTS.view(req)
        zk = s.zk
        nodes = list(s.nodes)
        sess = n.session
        resp: tuple | None = None
        node = n._replace(zk_out=n.zk_out[1:])
        # the most frequent requests first (controller-ref's five most frequent: a class pattern
        # that misses costs about 0.1 us), the admin workflows' requests last
        match req:
            case RegisterBroker(reelect=reelect):
                reg = zk.brokers[b]
                if reg is None:
                    epoch = zk.czxids[b] + 1
                    zk = zk._replace(
                        brokers=set_item(zk.brokers, b, (sess, epoch)), czxids=set_item(zk.czxids, b, epoch)
                    )
                    resp = BrokerRegistered(epoch, reelect)
                    nodes[b] = node
                    self.fire_watches(nodes, BrokerChange(), "watch")
                    node = nodes[b]
                elif reg[0] == sess:  # a retried registration of this very session
                    resp = BrokerRegistered(reg[1], reelect)
                elif self.recreates_registration(n, reg):
                    # KAFKA-7165's workaround: the node of an expired session this client
                    # registered with last (a ZooKeeper that kept it: faults/orphaned_session.py)
                    # is deleted and created again in the current session
                    epoch = zk.czxids[b] + 1
                    zk = zk._replace(
                        brokers=set_item(zk.brokers, b, (sess, epoch)), czxids=set_item(zk.czxids, b, epoch)
                    )
                    resp = BrokerRegistered(epoch, reelect)
                    nodes[b] = node
                    self.fire_watches(nodes, BrokerChange(), "watch")
                    node = nodes[b]
                # else NodeExists, owned by another session: registerBroker throws, the broker
                # stays unregistered and RegisterBrokerAndReelect stops (no response, no Reelect)
            case GetControllerIdAndEpoch():
                ctl = zk.controller[0] if zk.controller is not None else -1
                resp = ControllerIdAndEpoch(ctl, zk.epoch, zk.epoch_version)
                node = node._replace(ctl_watch=True)
            case GetAllBrokersInCluster():
                resp = BrokerEpochs(tuple(0 if e is None else e[1] for e in zk.brokers))
            case UpdateIsr(partition=p, state=z):
                cur = zk.parts[p]
                if cur is not None and cur.version == z.version:
                    new = z._replace(version=z.version + 1)
                    # ReplicaManager.recordIsrChange: a new sequential /isr_change_notification child
                    ic = tuple(sorted((*zk.isr_changes, (p, new.version))))
                    zk = zk._replace(parts=set_item(zk.parts, p, new), isr_changes=ic)
                    resp = IsrUpdated(p, new)
                    nodes[b] = node
                    self.fire_watches(nodes, IsrChangeNotification(), "watch")
                    if zk.reassign and any(q == p for q, _ in zk.reassign):
                        # the controller's PartitionReassignmentIsrChangeHandler on the state znode
                        self.fire_watches(nodes, PartitionReassignmentIsrChange(p), "watch")
                    node = nodes[b]
                else:
                    resp = IsrUpdated(p, None)
            case GetTopicPartitionStates(partitions=partitions):
                states = tuple((p, zk.parts[p]) for p in partitions)
                if cfg.max_unclean_enables:
                    # with the topics' configs (getLogConfigs), for unclean.leader.election.enable
                    resp = TopicPartitionStates(states, zk.unclean_dyn)
                else:
                    resp = TopicPartitionStates(states)
            case RegisterControllerAndIncrementControllerEpoch(epoch=new_epoch, epoch_zk_version=version):
                if zk.controller is not None or zk.epoch_version != version:
                    resp = ControllerRegistered(False, 0, 0)
                else:
                    zk = zk._replace(controller=(b, sess), epoch=new_epoch, epoch_version=version + 1)
                    resp = ControllerRegistered(True, new_epoch, version + 1)
                    nodes[b] = node
                    self.fire_watches(nodes, ControllerChange(b), "ctl", skip=b)
                    node = nodes[b]
            case CreateControllerPath():
                if zk.controller is not None:
                    resp = ControllerPathCreated(False, zk.controller[0])
                else:
                    zk = zk._replace(controller=(b, sess))
                    resp = ControllerPathCreated(True, b)
                    nodes[b] = node
                    self.fire_watches(nodes, ControllerChange(b), "ctl", skip=b)
                    node = nodes[b]
            case ReadControllerEpoch():
                resp = ControllerEpochRead(zk.epoch, zk.epoch_version)
            case IncrementControllerEpoch(epoch=new_epoch, epoch_zk_version=version):
                if zk.epoch_version != version:
                    resp = ControllerEpochIncremented(False, 0, 0)
                else:
                    zk = zk._replace(epoch=new_epoch, epoch_version=version + 1)
                    resp = ControllerEpochIncremented(True, new_epoch, version + 1)
            case DeleteControllerPath():
                if zk.controller is not None:
                    zk = zk._replace(controller=None)
                    nodes[b] = node
                    self.fire_watches(nodes, Reelect(), "ctl")
                    node = nodes[b]
            case ReadControllerContext(delete_isr_changes=delete_isr_changes, fence=fence):
                if delete_isr_changes and zk.isr_changes and self.epoch_fence_holds(zk, fence):
                    # 2.x onControllerFailover's deleteIsrChangeNotifications(epochZkVersion),
                    # before initializeControllerContext (seed 004: 1311-1313)
                    zk = zk._replace(isr_changes=())
                live = tuple(0 if e is None else e[1] for e in zk.brokers)
                if self.admin:
                    present = tuple(self.system.present(zk, p) for p in range(self.np))
                    admin = (present, zk.ar, zk.delete_topics, zk.reassign, zk.preferred)
                    resp = ControllerContext(live, zk.parts, -1, admin)
                elif self.later:
                    resp = ControllerContext(live, zk.parts, self.topics_at_start + zk.created)
                else:
                    resp = ControllerContext(live, zk.parts)
                node = node._replace(watch=True)
            case GetAllTopicsInCluster():
                if self.admin:
                    resp = Topics(self.topics_at_start + zk.created, zk.gone)
                else:
                    resp = Topics(self.topics_at_start + zk.created)
            case UpdateLeaderAndIsr(writes=writes, fence=fence, create=create):
                if not self.epoch_fence_holds(zk, fence):
                    resp = LeaderAndIsrWritten(False, ())
                else:
                    parts = zk.parts
                    results = []
                    for p, z in writes:
                        cur = parts[p]
                        if create:
                            ok = cur is None
                            new = z._replace(version=0)
                        else:
                            ok = cur is not None and cur.version == z.version
                            new = z._replace(version=z.version + 1)
                        if ok:
                            parts = set_item(parts, p, new)
                            results.append((p, new))
                        else:
                            results.append((p, None))
                    zk = zk._replace(parts=parts)
                    resp = LeaderAndIsrWritten(True, tuple(results))
            case GetAllIsrChangeNotifications():
                notes = zk.isr_changes
                resp = IsrChangeNotifications(notes, tuple(zk.parts[p] for p, _ in notes))
            case DeleteIsrChangeNotifications(notifications=read, fence=fence):
                # only the notifications read: one written since (a new sequence number) stays
                if self.epoch_fence_holds(zk, fence):
                    zk = zk._replace(isr_changes=tuple(e for e in zk.isr_changes if e not in read))
            case _:  # the admin workflows' requests
                zk, resp = self.admin_request(zk, req)
        nodes[b] = node
        return (
            ZkServe(b, sess, req),
            s._replace(zk=zk, nodes=tuple(nodes)),
            self.check_retried(zk, b, sess, req, resp),
        )

    def check_retried(self, zk: Zk, b: int, sess: int, req: Any, resp: Any) -> Any:
        """The checks Kafka's client code makes when a write fails with NodeExists or BadVersion,
        which is what a write resent after a lost response (``network.py``) meets where its first
        copy landed: ``resp`` as the client ends up seeing it, with the reads the checks make
        merged into this step (``zk``: the tree after it). Only a failure whose check passes
        changes; without a lost response none does (the writer's own first copy is the only
        one that leaves what the check looks for).

        * 2.x election (``KafkaZkClient.registerControllerAndIncrementControllerEpoch``'s
          ``checkControllerAndEpoch``): ``/controller`` holds this broker's id and
          ``/controller_epoch`` the epoch it wrote: elected, at the epoch znode's version.
        * 0.8 election (``ZkUtils.createEphemeralPathExpectConflict``, seed 000: 129): the
          stored ``/controller`` data are what this broker wrote (its id, in this session):
          created.
        * a leader's ISR write (``ReplicationUtils.updateLeaderAndIsr`` with
          ``checkLeaderAndIsrZkData``, 0.8.2 and 2.x alike): the stored leader, leader epoch,
          ISR and controller epoch equal the written ones: written, at the stored version (the
          ISR change notification the first copy created stays the one).
        * not the controller's partition-state writes: 2.x's (``KafkaZkClient.updateLeaderAndIsr``)
          have no checker (BadVersion puts the partition in ``updatesToRetry``, read and elected
          again); 0.8.2's (seed 000: 588, ``ReplicationUtils.updateLeaderAndIsr``) pass the same
          checker, which the model leaves out: it also passes without a lost response, where a
          leader's ISR shrink and expand restored the data the controller writes
          (``docs/fidelity.md``).

        Retried deletes meet NoNode, which Kafka's callers ignore (``deleteRecursive``,
        ``deleteIsrChangeNotifications``), and retried registrations of the same session
        succeed (``registerBroker``'s ``checkedEphemeralCreate``): those requests' own
        semantics. The 0.8 epoch increment (``incrementControllerEpoch``'s conditional update,
        no checker) and partition-state creates (NodeExists: a failed state change in both
        versions) are not checked, as in Kafka.

        >>> from model.controller import ControllerConfig, ControllerSystem
        >>> from model.controller.messages import RegisterControllerAndIncrementControllerEpoch as Reg
        >>> server = ControllerSystem(ControllerConfig()).zookeeper
        >>> zk = server.system.init_states()[0].zk  # broker 0 won epoch 1 at version 1
        >>> server.check_retried(zk, 0, 1, Reg(1, 0), ControllerRegistered(False, 0, 0))
        ControllerRegistered(ok=True, epoch=1, epoch_zk_version=1)
        >>> server.check_retried(zk, 1, 2, Reg(1, 0), ControllerRegistered(False, 0, 0)).ok
        False
        """
        match resp:
            case ControllerRegistered(ok=False):
                ctl = zk.controller
                if ctl is not None and ctl[0] == b and zk.epoch == req.epoch:
                    return ControllerRegistered(True, zk.epoch, zk.epoch_version)
            case ControllerPathCreated(ok=False):
                if zk.controller == (b, sess):
                    return ControllerPathCreated(True, b)
            case IsrUpdated(partition=p, state=None):
                cur = zk.parts[p]
                if cur is not None and cur[:4] == req.state[:4]:
                    return IsrUpdated(p, cur)
        return resp

    def recreates_registration(self, n: Node, reg: tuple[int, int]) -> bool:
        """Kafka 2.2's ``checkedEphemeralCreate`` meeting ``/brokers/ids/<id>`` (``reg``: owner
        session, czxid) owned by another session: it deletes and re-creates the node when the
        owner is the session this client registered with last (``shouldReCreateEphemeralZNode``,
        KAFKA-7165's workaround for ZOOKEEPER-2985), which the broker knows by the broker epoch
        of that registration (``Node.bepoch``: a restarted process knows none); otherwise the
        create fails with NodeExists. Only an expired session whose ephemerals ZooKeeper kept
        (``faults/orphaned_session.py``) leaves such a node.

        >>> from model.controller import ControllerConfig, ControllerSystem
        >>> server = ControllerSystem(ControllerConfig()).zookeeper
        >>> n = server.system.init_states()[0].nodes[1]  # registered in session 2, broker epoch 1
        >>> server.recreates_registration(n, (2, 1)), server.recreates_registration(n, (2, 2))
        (True, False)
        """
        return n.bepoch != 0 and n.bepoch == reg[1]

    def serve(self, s: State, b: int) -> tuple[Any, State]:
        """The ordinary step on broker ``b``'s session (:meth:`apply`, its response handed to the
        broker): ``network.ZK_SESSIONS.serve``."""
        return ZK_SESSIONS.serve(self.system, s, b)

    def epoch_fence_holds(self, zk: Zk, fence: int) -> bool:
        """A controller write's ``check /controller_epoch`` op passes: the epoch znode still has
        the zkVersion the writer read (``fence``; -1: the write is not fenced, as before
        KAFKA-6082). Not a static method: compiled by mypyc, ``self.epoch_fence_holds`` would
        call this one directly, never a subclass's (the ``fence-less-than`` mutant's)."""
        return fence == -1 or zk.epoch_version == fence

    def admin_request(self, zk: Zk, req: Any) -> tuple[Zk, Any]:
        """The server side of the admin workflows' requests (controller writes fenced on the
        ``/controller_epoch`` version, as ``deleteTopicZNode(topic, epochZkVersion)`` etc.)."""
        match req:
            case GetTopicDeletions():
                return zk, TopicDeletions(zk.delete_topics)
            case GetReplicaAssignmentForTopic(topic=t):
                ppt = self.ppt
                return zk, ReplicaAssignment(
                    t, tuple(self.system.present(zk, p) for p in range(t * ppt, (t + 1) * ppt))
                )
            case GetPartitionReassignment():
                return zk, PartitionReassignment(zk.reassign)
            case GetPreferredReplicaElection():
                return zk, PreferredReplicaElection(zk.preferred)
        if type(req) not in FENCED_ADMIN_WRITES:  # pragma: no cover
            raise AssertionError(f"unknown request {req!r}")
        ok = self.epoch_fence_holds(zk, req.fence)
        match req:
            case DeleteTopicDeletions(topics=topics):
                if ok:
                    zk = zk._replace(delete_topics=tuple(t for t in zk.delete_topics if t not in topics))
                return zk, None
            case DeleteTopicZNode(partition=p) if p >= 0:
                # deleteRecursive: one partition's state znode (recursive_topic_deletion)
                if ok:
                    zk = zk._replace(parts=set_item(zk.parts, p, None))
                return zk, None
            case DeleteTopicZNode(topic=t):
                if not ok:
                    return zk, TopicZNodeDeleted(False)
                ppt = self.ppt
                ps = range(t * ppt, (t + 1) * ppt)
                parts = zk.parts
                for p in ps:
                    parts = set_item(parts, p, None)
                zk = zk._replace(
                    parts=parts,
                    gone=tuple(sorted({*zk.gone, t})),  # a retried delete: NoNode, ignored
                    delete_topics=zk.delete_topics
                    if self.cfg.recursive_topic_deletion  # its own DeleteTopicDeletions follows
                    else tuple(x for x in zk.delete_topics if x != t),
                    isr_changes=tuple(e for e in zk.isr_changes if e[0] not in ps),
                )
                return zk, TopicZNodeDeleted(True)
            case SetReplicaAssignment(partition=p, replicas=ar):
                if not ok:
                    return zk, ReplicaAssignmentWritten(False)
                return zk._replace(ar=set_item(zk.ar, p, ar)), ReplicaAssignmentWritten(True)
            case RemovePartitionsFromReassignment(partitions=partitions):
                if ok:
                    zk = zk._replace(reassign=tuple(e for e in zk.reassign if e[0] not in partitions))
                return zk, None
        # DeletePreferredReplicaElection
        if ok:
            zk = zk._replace(preferred=())
        return zk, None

    def expire(self, s: State, b: int, counted: bool) -> tuple[Any, State]:
        zk = s.zk
        n = s.nodes[b]
        sess = n.session
        nodes = list(s.nodes)
        # the requests stay queued but are never applied in this session (2.x: they fail with
        # SessionExpired when the client notices; legacy ZkClient retries them in the new session)
        nodes[b] = n._replace(expired=True)
        if zk.controller is not None and zk.controller[1] == sess:
            zk = zk._replace(controller=None)
            self.fire_watches(nodes, Reelect(), "ctl", skip=b)
        reg = zk.brokers[b]
        if reg is not None and reg[0] == sess:
            zk = zk._replace(brokers=set_item(zk.brokers, b, None))
            self.fire_watches(nodes, BrokerChange(), "watch", skip=b)
        return SessionExpire(b, sess), s._replace(
            zk=zk, nodes=tuple(nodes), expiries=s.expiries + (1 if counted else 0)
        )
