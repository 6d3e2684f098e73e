"""Fidelity properties of the controller model: rules the seeds state about *how* Kafka writes
its state, beyond the guarantees of ``invariants/controller.py``.

ISR order (seed 002, line 1333: "这个时候获取的isr信息的顺序就是 分区创建时候分配好的AR顺序 ... 因为在
其他情况下 ISR的顺序跟AR的顺序并不一致"): only a new partition's ISR is in assignment order. Every
later write keeps the ISR's own order: an expanding replica is appended
(``Partition.maybeExpandIsr``: ``inSyncReplicas + replica``), a shrink, ``doRemoveReplicasFromIsr``,
an offline or controlled-shutdown election filter the current ISR in place, an unclean election
writes ``[leader]``, a reassignment or preferred election keeps it (``newLeader``). Rules that take
"the first ISR member" (seed 000's ``ControlledShutdownLeaderSelector``: ``newIsr.headOption``)
depend on that order.

Auto leader rebalance (seed 002, ``leader.imbalance.per.broker.percentage``: "broker不平衡率=非优先
副本的leader个数/总分区数"): Kafka's ``checkAndTriggerAutoLeaderRebalance`` groups the partitions of
topics not queued for deletion by their preferred replica (the head of the assignment), and for each
preferred broker whose ratio of partitions led by another broker exceeds the percentage, elects
the preferred replica of those partitions whose preferred broker is live (not shutting down), with
no reassignment in progress and the topic not queued for deletion. The processing of the task's
event starts an election exactly when that set is non-empty.

A crashed process keeps no memory: a broker's controller context, event queue, pending
ZooKeeper responses, watches, controlled-shutdown request and metadata cache live in its JVM and
die with it (seed 001, line 22: "每个 Broker 都会在内存中保存当前 Controller 的 Brokerid 值", the
controller's id is kept in the broker's memory); only its log survives. While a broker is down it takes no step, so every field of its process
memory keeps its fresh value (``model.controller.state.FRESH_PROCESS``, the same table the crash
applies, so a new field of process memory is covered without an edit here).

The fault budgets are the configuration's promise about what was checked ("at most
``max_restarts`` restarts"): a model that takes more faults than its budget explores a different
system than the one the result names, and one that takes fewer hides them. Every fault that is
counted stays within its key, and ZooKeeper's session ids count the faults independently of the
counters: each restart and each noticed expiry opens one session (``Zk.next_session``), so the
sessions opened since the start never exceed ``max_restarts + max_session_expiries``.

A response answers its request: a StopReplica's response names the partitions the request named
(``StopReplicaRequest.getErrorResponse`` and ``ReplicaManager.stopReplicas`` give one partition
error per partition of the request, and ``sendStopReplicaRequests``' callback turns them into
``TopicDeletionStopReplicaResponseReceived(replicaId, ...)``; seed 000, line 845:
``callbacks.stopReplicaResponseCallback``). The deletion fails or completes exactly the replicas
it asked about; a response naming others leaves the asked ones in ReplicaDeletionStarted with
nothing in flight, and fails or completes replicas whose request is still on its way.

ZooKeeper's watches fire (the ZooKeeper Programmer's Guide: a watch is "a one-time trigger, sent to
the client that set the watch, which occurs when the data for which the watch was set changes";
Kafka's ``ZooKeeperClient`` sets it again on every read; seed 004, "Controller的选举": the
deletion or change of /controller triggers an election, and ``onControllerFailover`` registers
``brokerChangeHandler`` on /brokers/ids before it reads anything):
a step that creates or deletes ``/controller``, or adds or removes a child of ``/brokers/ids`` (a
registration, or an ephemeral gone with its session), queues at every other broker that watches
the path, alive and with its session open, the event Kafka's handler makes of it:
``ControllerChange`` on a create, ``Reelect`` on a delete (``ControllerChangeHandler``),
``BrokerChange`` on a child change (``BrokerChangeHandler``, the controller's watch). A dropped
notification leaves a broker believing in a controller that is gone, or a controller blind to a
broker's death, until something else happens to wake it.

The scenario flags that the report's witnesses read (``State.done``) are set only once the request
that causes them was made: a dynamically enabled unclean election only after the admin set
``unclean.leader.election.enable`` on a topic, an admin unclean election only after an ElectLeaders
request, a completed deletion, reassignment or partition addition only after its admin request.
A flag set too early would have the report claim a scenario covered that no run reached.

A deleted topic gets no more requests: once ``completeDeleteTopic`` has deleted a topic's znodes,
the current controller sends no LeaderAndIsr, UpdateMetadata or StopReplica naming one of its
partitions (``controllerContext.removeTopic``: every later request is built from the context, and
a new controller reads the topics from ZooKeeper). A deposed controller that has not noticed yet
may still send one; the brokers fence it by its epoch.

Registering (in ``invariants/controller.py``'s ``properties``)::

    from invariants.controller_fidelity import fidelity_properties
    props += fidelity_properties(config, sys)
"""

from __future__ import annotations

from operator import itemgetter, le
from typing import Any

from explorer.core import Property, always, transition
from invariants.controller_guards import (
    controller_stepped,
    delivers,
    processes_admin_unclean_election,
    processes_auto_rebalance,
    zk_changed,
)
from model.controller import ControllerSystem, State
from model.controller.config import Elector, ExpiryHandling, ZkResponses
from model.controller.effects import CONTROLLER_STEPS, delivered_message_of, does_any
from model.controller.events import (
    BrokerChange,
    ControllerChange,
    Reelect,
    TopicDeletionStopReplicaResponseError,
    TopicDeletionStopReplicaResponseReceived,
)
from model.controller.messages import (
    BROKER_REQUESTS,
    GetTopicPartitionStates,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from model.controller.state import (
    D_ADDED,
    D_ADMIN_UNCLEAN,
    D_DELETED,
    D_REASSIGNED,
    D_UNCLEAN_DYN,
    FRESH_PROCESS,
    Node,
    Zk,
)
from model.election import keep_members
from model.state_machines import PartitionState

__all__ = [
    "active_controller_id_from_zookeeper",
    "auto_rebalance_candidates",
    "auto_rebalance_follows_imbalance",
    "dead_broker_memory_fresh",
    "faults_within_budget",
    "fidelity_properties",
    "isr_order_follows",
    "isr_order_kept",
    "new_session_knows_no_controller",
    "no_request_for_a_deleted_topic",
    "request_partitions",
    "stop_replica_response_answers_request",
    "witnesses_follow_their_requests",
    "zookeeper_watches_fire",
]


def isr_order_follows(old: tuple[int, ...] | None, new: tuple[int, ...], assignment: tuple[int, ...]) -> bool:
    """The order rule for one written ISR: a new partition's ISR (``old`` is ``None``) is in
    assignment order; otherwise the members kept from ``old`` come first, in ``old``'s order,
    and new members are appended after them.

    >>> isr_order_follows(None, (0, 2), (0, 1, 2)), isr_order_follows(None, (2, 0), (0, 1, 2))
    (True, False)
    >>> isr_order_follows((1, 2), (1, 2, 0), (0, 1, 2)), isr_order_follows((1, 2), (0, 1, 2), (0, 1, 2))
    (True, False)
    >>> isr_order_follows((2, 0, 1), (2, 1), (0, 1, 2)), isr_order_follows((2, 0, 1), (1, 2), (0, 1, 2))
    (True, False)
    """
    if old is None:
        return new == keep_members(assignment, new)
    kept = keep_members(old, new)
    return new[: len(kept)] == kept


def isr_order_kept(sys: ControllerSystem):
    """The transition property over every write of a partition state znode (by the controller or
    by a leader's ISR change)."""
    replicas = sys.cfg.replicas()

    def check(s: State, a: Any, t: State) -> bool:
        """Every ISR written to ZooKeeper follows Kafka's order: assignment order only when the
        partition is created, otherwise the previous ISR's order with new members appended
        (seed 002 line 1333)."""
        before = s.zk.parts
        after = t.zk.parts
        if before is after:
            return True
        ar = t.zk.ar
        for p, new in enumerate(after):
            old = before[p]
            if new is None or new is old:
                continue
            assignment = ar[p] if ar and ar[p] else replicas[p]
            if not isr_order_follows(None if old is None else old.isr, new.isr, assignment):
                return False
        return True

    return check


def auto_rebalance_candidates(ctx: Any, ppt: int, percentage: int) -> list[int]:
    """The partitions ``checkAndTriggerAutoLeaderRebalance`` elects from the controller context
    ``ctx`` (``ppt``: partitions per topic), computed from the rule of seed 002 as stated there.

    >>> from types import SimpleNamespace as N
    >>> E, O = PartitionState.NonExistentPartition, PartitionState.OnlinePartition
    >>> ctx = N(pstates=(O, O), ar=((1,), (1, 0)), deleting=(), reassigning=(), shutting=(), live=(1, 1),
    ...         leaders=(N(leader=1), N(leader=0)))
    >>> auto_rebalance_candidates(ctx, 1, 50)  # broker 1 leads one of its two: 50% is not over 50
    []
    >>> ctx.deleting = (0,)  # topic 0 queued for deletion: partition 1 alone, led elsewhere: 100%
    >>> auto_rebalance_candidates(ctx, 1, 50)
    [1]
    """

    def queued(p: int) -> bool:
        return p // ppt in ctx.deleting

    by: dict[int, list[int]] = {}
    for p, state in enumerate(ctx.pstates):
        if state != PartitionState.NonExistentPartition and not queued(p):
            by.setdefault(ctx.ar[p][0], []).append(p)
    out: list[int] = []
    for preferred, parts in sorted(by.items()):
        off = [p for p in parts if ctx.leaders[p] is not None and ctx.leaders[p].leader != preferred]
        if len(off) * 100 > percentage * len(parts):
            live = bool(ctx.live[preferred]) and preferred not in ctx.shutting
            out += [p for p in off if live and not ctx.reassigning and not queued(p)]
    return out


def auto_rebalance_follows_imbalance(sys: ControllerSystem):
    """The transition property over the processing of the auto-rebalance task's event."""
    ppt = sys.ppt
    percentage = sys.cfg.leader_imbalance_per_broker_percentage

    def check(s: State, a: Any, t: State) -> bool:
        """The auto-rebalance task starts a preferred election (its controller parks on the
        election's read) exactly when some preferred broker's imbalance ratio exceeds
        leader.imbalance.per.broker.percentage with a partition left to elect (seed 002)."""
        started = t.nodes[a.broker].pending is not None
        return started == bool(auto_rebalance_candidates(s.nodes[a.broker].ctx, ppt, percentage))

    return check


def admin_unclean_election_elects_leaderless(sys: ControllerSystem) -> Any:
    """The transition property over the processing of an admin ``ReplicaLeaderElection``."""
    ppt = sys.ppt
    gone = PartitionState.NonExistentPartition

    def check(s: State, a: Any, t: State) -> bool:
        """A controller processing ``ReplicaLeaderElection(ElectionType.UNCLEAN,
        AdminClientTriggered)`` reads for election exactly the partitions of its context (not
        queued for deletion) whose leader is not in ``liveBrokerIds`` (none, dead or shutting
        down); the others get ElectionNotNeeded (Kafka 2.x ``processReplicaLeaderElection``;
        seed 002: allowUnclean).

        >>> from model.controller import ControllerConfig
        >>> from model.controller.actions import ProcessEvent
        >>> sys = ControllerSystem(ControllerConfig(max_admin_unclean_elections=1))
        >>> s = sys.init_states()[0]
        >>> check = admin_unclean_election_elects_leaderless(sys)
        >>> check(s, ProcessEvent(0, ReplicaLeaderElection()), s)  # the leader is live: no read
        True
        >>> n = s.nodes[0]
        >>> check(s, ProcessEvent(0, ReplicaLeaderElection()), s._replace(
        ...     nodes=(n._replace(zk_out=(GetTopicPartitionStates((0,)),)), *s.nodes[1:])))
        False
        """
        before = s.nodes[a.broker]
        ctx = before.ctx
        if ctx is None:
            return True  # not the controller: the event is dropped
        live = {b for b, e in enumerate(ctx.live) if e and b not in ctx.shutting}
        expected = tuple(
            p
            for p, z in enumerate(ctx.leaders)
            if z is not None
            and ctx.pstates[p] != gone
            and p // ppt not in ctx.deleting
            and z.leader not in live
        )
        sent = t.nodes[a.broker].zk_out[len(before.zk_out) :]
        return tuple(p for q in sent if type(q) is GetTopicPartitionStates for p in q.partitions) == expected

    return check


def dead_broker_memory_fresh() -> Any:
    """The check of ``dead_broker_holds_no_process_memory``: every broker that is down holds
    the fresh value of each field of process memory (``FRESH_PROCESS``).

    >>> from model.controller import ControllerConfig
    >>> s = ControllerSystem(ControllerConfig()).init_states()[0]
    >>> check = dead_broker_memory_fresh()
    >>> n = s.nodes[1]._replace(alive=False, **FRESH_PROCESS)
    >>> check(s._replace(nodes=(s.nodes[0], n)))
    True
    >>> check(s._replace(nodes=(s.nodes[0], n._replace(cs=3))))  # a dead broker shutting down
    False
    """
    fresh = tuple((Node._fields.index(k), v) for k, v in FRESH_PROCESS.items())

    def check(s: State) -> bool:
        for n in s.nodes:
            if not n.alive:
                for i, v in fresh:
                    if n[i] != v:
                        return False
        return True

    return check


def faults_within_budget(config: Any, first_session: int) -> Any:
    """The check of ``faults_within_budget`` for ``config``, whose initial state's next session id
    is ``first_session``: the fault and record counters within their keys, the sessions
    opened since the start within the restarts and expiries allowed, and the admin's requests
    (topics created, topics given partitions, deletions, reassignments, preferred and unclean
    elections, unclean configs enabled) within theirs.

    >>> from model.controller import ControllerConfig
    >>> c = ControllerConfig(brokers=2, max_restarts=1, max_session_expiries=0)
    >>> s = ControllerSystem(c).init_states()[0]
    >>> check = faults_within_budget(c, s.zk.next_session)
    >>> check(s), check(s._replace(zk=s.zk._replace(next_session=s.zk.next_session + 1), restarts=1))
    (True, True)
    >>> check(s._replace(zk=s.zk._replace(next_session=s.zk.next_session + 2), restarts=1))  # an uncounted restart
    False
    """
    # a session expiry that orphans its ephemerals (faults/orphaned_session.py) also opens one
    bound = first_session + config.max_restarts + config.max_session_expiries + config.max_orphaned_sessions
    limits = (
        ("crashes", config.max_crashes),
        ("restarts", config.max_restarts),
        ("expiries", config.max_session_expiries),
        ("produced", config.max_records),
        ("shutdowns", config.max_controlled_shutdowns),
    )
    counters = itemgetter(*(State._fields.index(k) for k, _ in limits))
    maxima = tuple(v for _, v in limits)
    requests = (
        ("created", config.topics_created_later),
        ("expanded", config.topics - config.topics_created_later if config.partitions_added_later else 0),
        ("deletes", config.max_topic_deletions),
        ("reassigns", config.max_reassignments),
        ("preferreds", config.max_preferred_elections),
        ("admin_elections", config.max_admin_unclean_elections),
    )
    admin = itemgetter(*(Zk._fields.index(k) for k, _ in requests))
    admin_maxima = tuple(v for _, v in requests)
    enables = config.max_unclean_enables

    def check(s: State) -> bool:
        zk = s.zk
        if zk.next_session > bound or len(zk.unclean_dyn) > enables:
            return False
        # no generator frame: it runs on every state
        return all(map(le, counters(s), maxima)) and all(map(le, admin(zk), admin_maxima))

    return check


_STOP_REPLICA_RESPONSES = (TopicDeletionStopReplicaResponseReceived, TopicDeletionStopReplicaResponseError)


def stop_replica_response_answers_request(s: State, a: Any, t: State) -> bool:
    """After broker ``a.dest`` handles a StopReplica whose response goes to the deletion callback,
    every response event new at the sending controller names that broker and exactly the
    request's partitions (whether the request was applied or rejected as stale).

    >>> from model.controller import ControllerConfig
    >>> s = ControllerSystem(ControllerConfig()).init_states()[0]
    >>> stop_replica_response_answers_request(s, None, s)
    True
    """
    msg = delivered_message_of(a)
    if type(msg) is not StopReplicaRequest or not msg.data.callback:
        return True
    before = s.nodes[a.sender].events
    mask = msg.data.mask
    return not any(
        type(ev) in _STOP_REPLICA_RESPONSES
        and ev not in before
        and (ev.replica_id != a.dest or ev.partitions != mask)
        for ev in t.nodes[a.sender].events
    )


def request_partitions(msg: Any) -> tuple[int, ...]:
    """The partitions a controller-to-broker request names (a plain tuple is read as its record).

    >>> from model.controller.messages import StopReplicaPartitions
    >>> request_partitions(StopReplicaRequest(1, 1, StopReplicaPartitions(0b101, True, True)))
    (0, 2)
    """
    if type(msg) is tuple:
        msg = BROKER_REQUESTS.view(msg)
    match msg:
        case LeaderAndIsrRequest(partition_states=states):
            return tuple(e[0] for e in states)
        case UpdateMetadataRequest(data=data):
            return tuple(e[0] for e in data.partition_states)
        case StopReplicaRequest(data=data):
            return tuple(p for p in range(data.mask.bit_length()) if (data.mask >> p) & 1)
    return ()


def no_request_for_a_deleted_topic(sys: ControllerSystem) -> Any:
    """The check of ``no_request_for_a_deleted_topic`` for ``sys``'s configuration."""
    ppt, nb = sys.ppt, sys.nb

    def check(s: State, a: Any, t: State) -> bool:
        """No request a controller's step (an event processed or a ZooKeeper reply that
        continues it) puts on a channel of the current controller (its context's epoch is
        ZooKeeper's) names a partition of a topic whose znodes were deleted before the step.

        >>> from model.controller import ControllerConfig
        >>> s = ControllerSystem(ControllerConfig(max_topic_deletions=1)).init_states()[0]
        >>> no_request_for_a_deleted_topic(ControllerSystem(ControllerConfig()))(s, None, s)
        True
        """
        gone = s.zk.gone
        if not gone or t.chans is s.chans or not does_any(a, CONTROLLER_STEPS):
            return True
        epoch = t.zk.epoch
        for i, (q0, q1) in enumerate(zip(s.chans, t.chans, strict=True)):
            if q1 is q0:
                continue
            ctx = t.nodes[i // nb].ctx
            if ctx is None or ctx.epoch != epoch:
                continue
            for m in q1:
                if m not in q0 and any(p // ppt in gone for p in request_partitions(m)):
                    return False
        return True

    return check


def active_controller_id_from_zookeeper(s: State, a: Any, t: State) -> bool:
    """Where a step changes a broker's activeControllerId, the new value is -1 or the broker
    that /controller names before or after the step (read by ``elect`` or ``maybeResign``, or
    the broker itself once it created the znode).

    >>> from model.controller import ControllerConfig
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> n = s.nodes[1]
    >>> [active_controller_id_from_zookeeper(s, None, s._replace(nodes=(s.nodes[0], n._replace(active_id=b))))
    ...  for b in (-1, 0, 1)]
    [True, True, False]
    """
    if t.nodes is s.nodes:
        return True
    for n0, n1 in zip(s.nodes, t.nodes, strict=True):
        if n1 is not n0 and (got := n1.active_id) != n0.active_id and got != -1:
            c0, c1 = s.zk.controller, t.zk.controller
            if (c0 is None or got != c0[0]) and (c1 is None or got != c1[0]):
                return False
    return True


def new_session_knows_no_controller(s: State, a: Any, t: State) -> bool:
    """A broker that takes a new ZooKeeper session in a step (a restart, or its expiry noticed)
    believes no broker is the controller after it.

    >>> from model.controller import ControllerConfig
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> n = s.nodes[1]
    >>> [new_session_knows_no_controller(s, None, s._replace(nodes=(s.nodes[0], n._replace(session=n.session + 1,
    ...  active_id=b)))) for b in (-1, 0)]
    [True, False]
    """
    if t.nodes is s.nodes:
        return True
    for n0, n1 in zip(s.nodes, t.nodes, strict=True):
        if n1 is not n0 and n1.session != n0.session and n1.active_id != -1:
            return False
    return True


def _watchers_notified(s: State, t: State, writer: int, kind: str, ev: Any) -> bool:
    for b, n in enumerate(s.nodes):
        if b == writer or not n.alive or n.expired or n.session == 0 or not getattr(n, kind):
            continue
        if ev not in t.nodes[b].events:
            return False
    return True


def zookeeper_watches_fire(s: State, a: Any, t: State) -> bool:
    """A step that creates or deletes /controller, or adds or removes a child of /brokers/ids,
    leaves at every other broker watching the path (alive, its session open) the event Kafka's
    handler makes of the change: ``ControllerChange(owner)`` on a create, ``Reelect`` on a delete,
    ``BrokerChange`` on a child change.

    >>> from model.controller import ControllerConfig
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> zookeeper_watches_fire(s, None, s)
    True
    >>> s.zk.controller[0], s.nodes[1].ctl_watch  # broker 0 is the controller, broker 1 watches
    (0, True)
    >>> t = s._replace(zk=s.zk._replace(controller=None))  # /controller deleted, nobody told
    >>> zookeeper_watches_fire(s, None, t)
    False
    >>> told = tuple(n._replace(events=(Reelect(),)) for n in s.nodes)
    >>> zookeeper_watches_fire(s, None, t._replace(nodes=told))
    True
    """
    z0, z1 = s.zk, t.zk
    if z0 is z1:
        return True
    writer = getattr(a, "broker", -1)
    c0, c1 = z0.controller, z1.controller
    if c0 is not c1 and c0 != c1:
        ev = Reelect() if c1 is None else ControllerChange(c1[0])
        if not _watchers_notified(s, t, writer, "ctl_watch", ev):
            return False
    b0, b1 = z0.brokers, z1.brokers
    if b0 is b1 or b0 == b1:
        return True
    if len(b0) == len(b1):  # a registration rewritten, none created or deleted
        for e0, e1 in zip(b0, b1):
            if (e0 is None) is not (e1 is None):
                break
        else:
            return True
    return _watchers_notified(s, t, writer, "watch", BrokerChange())


def witnesses_follow_their_requests(s: State) -> bool:
    """Each scenario flag of ``State.done`` that a witness reads is set only once ZooKeeper holds
    the admin request that causes it: an unclean election under a dynamically enabled topic
    config needs a topic in ``unclean_dyn``, an admin unclean election an ElectLeaders request, a
    completed deletion, reassignment or partition addition its request.

    >>> from model.controller import ControllerConfig
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> witnesses_follow_their_requests(s), witnesses_follow_their_requests(s._replace(done=D_UNCLEAN_DYN))
    (True, False)
    """
    d = s.done
    if not d:
        return True
    z = s.zk
    return not (
        (d & D_UNCLEAN_DYN and not z.unclean_dyn)
        or (d & D_ADMIN_UNCLEAN and not z.admin_elections)
        or (d & D_DELETED and not z.deletes)
        or (d & D_REASSIGNED and not z.reassigns)
        or (d & D_ADDED and not z.expanded)
    )


def _deleted_topic_and_send(s: State, a: Any, t: State) -> bool:
    return bool(s.zk.gone) and t.chans is not s.chans


def _delivers_stop_replica(s: State, a: Any, t: State) -> bool:
    return type(delivered_message_of(a)) is StopReplicaRequest


def fidelity_properties(config: Any, sys: ControllerSystem) -> list[Property]:
    """The fidelity properties for ``config`` (``sys`` is the system built from it), guarded
    by ``invariants/controller_guards.py``'s guards.

    >>> from model.controller import ControllerConfig
    >>> names = [p.name for p in fidelity_properties(ControllerConfig(), ControllerSystem(ControllerConfig()))]
    >>> names[:3]
    ['isr_order_kept', 'dead_broker_holds_no_process_memory', 'faults_within_budget']
    >>> names[3:5]
    ['zookeeper_watches_fire', 'witnesses_follow_their_requests']
    >>> names[5:]
    ['active_controller_id_from_zookeeper', 'new_session_knows_no_controller']
    """
    props = [
        transition(
            "isr_order_kept",
            isr_order_kept(sys),
            "every ISR written keeps Kafka's order: assignment order only at creation, else the "
            "previous order with new members appended (seed 002: ISR 的顺序跟 AR 的顺序并不一致)",
            guard=zk_changed,
        ),
        always(
            "dead_broker_holds_no_process_memory",
            dead_broker_memory_fresh(),
            "a broker that is down keeps no process memory (controller context, events, ZooKeeper "
            "responses, watches, controlled shutdown, metadata cache): it takes no step until it "
            "restarts (seed 001: 每个 Broker 都会在内存中保存当前 Controller 的 Brokerid 值)",
        ),
        always(
            "faults_within_budget",
            faults_within_budget(config, sys.init_states()[0].zk.next_session),
            "the model takes no more faults than the configuration allows: crashes, restarts, "
            "session expiries, records and controlled shutdowns within their max_* keys, the "
            "ZooKeeper sessions opened (one per restart or noticed expiry) within max_restarts + "
            "max_session_expiries, and the admin's requests within their keys",
        ),
        transition(
            "zookeeper_watches_fire",
            zookeeper_watches_fire,
            "a create or delete of /controller, or a child change of /brokers/ids, notifies every "
            "other live broker watching it (ZooKeeper watches; seed 004: /controller 节点被删除, 触发选举; "
            "onControllerFailover registers brokerChangeHandler on /brokers/ids)",
            guard=zk_changed,
        ),
        always(
            "witnesses_follow_their_requests",
            witnesses_follow_their_requests,
            "a scenario flag the report's witnesses read is set only after the admin request that "
            "causes it (a dynamic unclean enable, ElectLeaders, a deletion, reassignment or partition "
            "addition), so no witness is met by a scenario no run reached",
        ),
    ]
    if config.elector is Elector.MODERN and config.zk_responses is ZkResponses.MERGED:
        # (the 0.8 elector takes the id from a watch's data, and a separate response may be stale)
        props.append(
            transition(
                "active_controller_id_from_zookeeper",
                active_controller_id_from_zookeeper,
                "a broker's activeControllerId is learned from ZooKeeper: -1, the id /controller "
                "holds, or its own once it created /controller (seed 004 elect: activeControllerId "
                "= zkClient.getControllerId.getOrElse(-1), then config.brokerId)",
                guard=controller_stepped,
            )
        )
        if config.session_expiry_handling is ExpiryHandling.CLEAR_AND_PUT:
            props.append(
                transition(
                    "new_session_knows_no_controller",
                    new_session_knows_no_controller,
                    "a broker that takes a new ZooKeeper session (a restart, or its expiry noticed) "
                    "knows no controller until it reads /controller (Kafka 2.2+ processExpire: "
                    "activeControllerId = -1; seed 004: activeControllerId is read from /controller)",
                    guard=zk_changed,
                )
            )
    if config.max_topic_deletions:
        props.append(
            transition(
                "no_request_for_a_deleted_topic",
                no_request_for_a_deleted_topic(sys),
                "once a topic's znodes are deleted (completeDeleteTopic), the controller sends no "
                "LeaderAndIsr, UpdateMetadata or StopReplica naming its partitions (seed 002: "
                "controllerContext.removeTopic; a new controller reads the topics from ZooKeeper)",
                applies=_deleted_topic_and_send,
                guard=controller_stepped,
            )
        )
        props.append(
            transition(
                "stop_replica_response_answers_request",
                stop_replica_response_answers_request,
                "a StopReplica's response (TopicDeletionStopReplicaResponseReceived, with or without "
                "an error) names the broker and exactly the partitions of its request (seed 000: "
                "callbacks.stopReplicaResponseCallback; StopReplicaRequest.getErrorResponse)",
                applies=_delivers_stop_replica,
                guard=delivers,
            )
        )
    if config.max_admin_unclean_elections:
        props.append(
            transition(
                "admin_unclean_election_elects_leaderless",
                admin_unclean_election_elects_leaderless(sys),
                "an admin unclean election (ElectLeaders, ElectionType.UNCLEAN) elects exactly the "
                "partitions, not queued for deletion, whose leader is not a live broker "
                "(processReplicaLeaderElection: ElectionNotNeeded for the others; seed 002 allowUnclean)",
                guard=processes_admin_unclean_election,
            )
        )
    if config.auto_leader_rebalance:
        props.append(
            transition(
                "auto_rebalance_follows_imbalance",
                auto_rebalance_follows_imbalance(sys),
                "the auto-rebalance task elects exactly when a preferred broker's ratio of partitions "
                "led elsewhere exceeds leader.imbalance.per.broker.percentage (seed 002: "
                "broker不平衡率=非优先副本的leader个数/总分区数)",
                guard=processes_auto_rebalance,
            )
        )
    return props
