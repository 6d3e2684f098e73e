"""The controller's liveness as leads-to properties (TLC's ``P ~> Q``, issue 58).

Each property says: whenever ``P`` holds, ``Q`` eventually holds, on every behaviour weakly
fair in the healing actions (``FAIR_KINDS``: deliveries, event processing, ZooKeeper serving
and replies, noticing an expiry, a dead broker's session timeout, budgeted restarts, fetches,
the stop after a controlled shutdown). Crashes, admin requests and the other faults are not
fair: they may happen, never must. They are switched on with the other liveness properties
(the configuration key ``liveness``), and each is shown failing on a mutant or a variant in
``tests/test_controller_liveness.py``.

A property's ``P`` and ``Q`` read only ZooKeeper, the brokers' processes and their replicas:

- ``dead_leader_eventually_replaced``: a partition led by a dead broker eventually has a live
  leader or goes offline with leader -1 (seeds 002, 003: onBrokerFailure ->
  onReplicasBecomeOffline -> OfflinePartition -> triggerOnlinePartitionStateChange);
- ``one_controller_eventually_current``: while a broker runs, eventually exactly one broker acts
  as controller, owns ``/controller`` and holds ``/controller_epoch`` (seed 004 elect);
- ``registered_broker_eventually_told``: a registered broker eventually knows, for each of its
  replicas, ZooKeeper's leader and leader epoch (LeaderAndIsr; with UpdateMetadata on, its
  metadata cache too: seed 003 onBrokerStartup: sendUpdateMetadataRequest, OnlineReplica);
- ``expired_session_eventually_reregistered``: a running broker whose session expired (or that
  is not registered) eventually registers ``/brokers/ids/<id>`` with its live session (seed 004
  handleNewSession, registerBrokerInZk);
- ``event_queue_eventually_drains``: a running broker's controller event queue eventually empties
  (seed 004 ControllerEventManager);
- ``isr_change_eventually_propagated``: an ``/isr_change_notification`` child is eventually
  processed and deleted (seed 003 IsrChangeNotification, deleteIsrChangeNotifications);
- ``marked_topic_eventually_deleted`` (with topic deletions): a topic marked for deletion whose
  replicas' brokers are up is eventually deleted and the controller forgets it (seed 001
  TopicDeletionManager, completeDeleteTopic);
- ``reassignment_eventually_finished`` (with reassignments): a reassignment whose targets are up
  eventually leaves ``/admin/reassign_partitions`` and ``partitionsBeingReassigned``, its leader
  knowing the new assignment (seed 001 分区副本迁移, onPartitionReassignment).

Example
-------
>>> from model.controller import ControllerConfig, ControllerSystem
>>> sys = ControllerSystem(ControllerConfig(liveness=True))
>>> [p.name for p in liveness_properties(ControllerConfig(liveness=True), sys)][:2]
['dead_leader_eventually_replaced', 'one_controller_eventually_current']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from explorer.core import Property, leads_to
from model.controller import ControllerConfig, ControllerSystem, State
from model.controller.actions import FAIR_KINDS
from model.controller.state import Ctx
from model.state_machines import PartitionState

__all__ = ["liveness_properties"]


def _running(s: State, b: int) -> bool:
    """Broker ``b``'s process runs with a session the server has not expired."""
    n = s.nodes[b]
    return n.alive and not n.expired and n.session != 0


def _registered(s: State, b: int) -> bool:
    """Broker ``b`` runs and ``/brokers/ids/<b>`` is owned by its current session."""
    reg = s.zk.brokers[b]
    return _running(s, b) and reg is not None and reg[0] == s.nodes[b].session


def _dead_leaders(sys: ControllerSystem, s: State) -> Iterator[tuple[int, int]]:
    """(partition, leader) of each existing partition (of a topic not queued for deletion) whose
    ZooKeeper leader is not a registered broker, unless no ISR member is registered and a
    controller holds it OfflinePartition: a controller that fails over after the last ISR
    member died leaves that leader in ZooKeeper (Kafka 2.x initializeReplicaState marks its
    replicas ineligible, no ISR removal writes leader -1, the offline election finds no live
    ISR member and writes nothing), found by this property on controller-small with a session
    expiry: KAFKA-3096. Kafka 2.3's startup (``offline_replicas_on_startup``, KAFKA-3143) writes
    leader -1 there, so with it the property makes no such exception."""
    zk = s.zk
    seeds_startup = not sys.cfg.offline_replicas_on_startup
    for p, z in enumerate(zk.parts):
        if z is None or z.leader < 0 or (p // sys.ppt) in zk.delete_topics or not sys.present(zk, p):
            continue
        if _registered(s, z.leader):
            continue
        if (
            seeds_startup
            and not any(_registered(s, r) for r in z.isr)
            and any(
                n.ctx is not None and n.ctx.pstates[p] == PartitionState.OfflinePartition for n in s.nodes
            )
        ):
            continue  # offline, the dead leader left in ZooKeeper (below)
        yield p, z.leader


def _current_controllers(s: State) -> list[int]:
    """The brokers acting as controller (a context)."""
    return [b for b, n in enumerate(s.nodes) if n.ctx is not None]


def _one_current_controller(s: State) -> bool:
    """Exactly one broker acts as controller; it owns ``/controller`` with its live session and
    its context's epoch is ``/controller_epoch``."""
    act = _current_controllers(s)
    if len(act) != 1:
        return False
    b = act[0]
    c = s.zk.controller
    ctx = s.nodes[b].ctx
    assert ctx is not None
    return c is not None and c[0] == b and _registered(s, b) and ctx.epoch == s.zk.epoch


def _untold(sys: ControllerSystem, s: State) -> Iterator[tuple[int, int, str]]:
    """(broker, partition, what) of each registered, not shutting-down broker's replica of an
    existing partition with a leader (of a topic not queued for deletion) that does not know
    ZooKeeper's leader and leader epoch (with UpdateMetadata: its metadata cache neither).
    A leader's replica with its own ISR write in flight is skipped: the model delivers no
    LeaderAndIsr to it meanwhile (Kafka's partition lock), and weak fairness lets a leader retry
    a failing shrink forever, which Kafka's timing (a shrink per replica.lag.time.max.ms) does
    not."""
    zk = s.zk
    um = sys.cfg.send_update_metadata
    for p, z in enumerate(zk.parts):
        if z is None or z.leader < 0 or (p // sys.ppt) in zk.delete_topics or not sys.present(zk, p):
            continue
        for b in zk.ar[p]:
            n = s.nodes[b]
            if not _registered(s, b) or n.cs != 0:
                continue
            rep = n.reps[p]
            if rep.pend:  # its own ISR write in flight: LeaderAndIsr waits for the partition's lock
                continue
            if (rep.leader, rep.epoch) != (z.leader, z.leader_epoch):
                yield b, p, f"knows leader {rep.leader} at epoch {rep.epoch}"
            elif um and (
                not n.mc_parts or n.mc_parts[p] is None or n.mc_parts[p][:2] != (z.leader, z.leader_epoch)
            ):
                yield b, p, f"caches {n.mc_parts[p] if n.mc_parts else None}"


def _unregistered(s: State) -> list[int]:
    """The brokers whose process runs but which are not registered with a live session."""
    return [b for b, n in enumerate(s.nodes) if n.alive and not _registered(s, b) and n.cs == 0]


def _busy(s: State) -> list[int]:
    """The running brokers with controller events queued."""
    return [b for b, n in enumerate(s.nodes) if _running(s, b) and n.events]


def _up(s: State, b: int) -> bool:
    """Broker ``b`` is registered with its live session and not shutting down (``liveBrokerIds``
    less ``shuttingDownBrokerIds``)."""
    return _registered(s, b) and s.nodes[b].cs == 0


def _controller_ctx(s: State) -> Ctx | None:
    """The context of the broker that owns ``/controller`` with its live session, if it acts as
    controller."""
    c = s.zk.controller
    return None if c is None or not _registered(s, c[0]) else s.nodes[c[0]].ctx


def _undeleted(sys: ControllerSystem, s: State) -> Iterator[tuple[int, str]]:
    """(topic, why) of each topic marked for deletion (``/admin/delete_topics/<t>``) whose existing
    partitions' replicas are all on up brokers, and of each deleted topic (``/brokers/topics/<t>``
    removed) the active controller has not forgotten (``topicsToBeDeleted``, a partition state
    other than NonExistentPartition: seed 001 TopicDeletionManager, completeDeleteTopic)."""
    zk = s.zk
    ppt = sys.ppt
    for t in zk.delete_topics:
        ps = [p for p in range(t * ppt, (t + 1) * ppt) if sys.present(zk, p)]
        if all(_up(s, r) for p in ps for r in zk.ar[p]):
            yield t, f"is marked for deletion (/admin/delete_topics/{t}) and every replica's broker is up"
    ctx = _controller_ctx(s)
    if ctx is None:
        return
    b = s.zk.controller[0]  # type: ignore[index]
    for t in zk.gone:
        if t in ctx.deleting:
            yield (
                t,
                f"is deleted (/brokers/topics/{t} removed) but controller broker {b} still lists it in topicsToBeDeleted",
            )
        elif any(
            ctx.pstates[p] != PartitionState.NonExistentPartition for p in range(t * ppt, (t + 1) * ppt)
        ):
            yield (
                t,
                (
                    f"is deleted (/brokers/topics/{t} removed) but controller broker {b} still holds a state for one "
                    "of its partitions"
                ),
            )


def _unfinished_reassignments(sys: ControllerSystem, s: State) -> Iterator[tuple[int, str]]:
    """(partition, why) of each reassignment whose target replicas (RAR) are all up and which
    ``/admin/reassign_partitions`` or the active controller's ``partitionsBeingReassigned`` still
    lists, and of each reassigned partition whose up leader does not know ZooKeeper's assignment
    (seed 001 分区副本迁移; Kafka 2.x onPartitionReassignment: moveReassignedPartitionLeaderIfRequired
    sends the new AR, removePartitionsFromReassignedPartitions forgets it)."""
    zk = s.zk
    pending = dict(zk.reassign)
    ctx = _controller_ctx(s)
    if ctx is not None:
        pending.update(ctx.reassigning)
    for p, rar in sorted(pending.items()):
        if sys.present(zk, p) and all(_up(s, r) for r in rar):
            where = (
                "/admin/reassign_partitions"
                if p in dict(zk.reassign)
                else f"controller broker {zk.controller[0]}'s partitionsBeingReassigned"  # type: ignore[index]
            )
            yield p, f"its reassignment to {list(rar)} is still listed in {where}, every target up"
    for p in range(zk.reassigns):
        z = zk.parts[p]
        if p in pending or z is None or not sys.present(zk, p) or z.leader < 0 or not _up(s, z.leader):
            continue
        rep = s.nodes[z.leader].reps[p]
        if not rep.pend and rep.leader == z.leader and rep.ar != zk.ar[p]:
            yield (
                p,
                f"its leader, broker {z.leader}, knows the assignment {list(rep.ar)}, ZooKeeper's is {list(zk.ar[p])}",
            )


def _not(f: Callable[[State], bool]) -> Callable[[State], bool]:
    def q(s: State) -> bool:
        return not f(s)

    return q


def liveness_properties(config: ControllerConfig, sys: ControllerSystem) -> list[Property]:
    """The leads-to properties of the controller (with ``liveness``; none without).

    >>> liveness_properties(ControllerConfig(), ControllerSystem(ControllerConfig()))
    []
    """
    if not config.liveness:
        return []
    fair = FAIR_KINDS

    def dead_leader(s: State) -> bool:
        """A partition's ZooKeeper leader is a dead or unregistered broker."""
        return next(_dead_leaders(sys, s), None) is not None

    def explain_dead_leader(s: State) -> str:
        return "; ".join(
            f"partition {p}'s ZooKeeper leader is broker {b}, which is not registered with a live session"
            for p, b in _dead_leaders(sys, s)
        )

    def some_broker_runs(s: State) -> bool:
        """Some broker runs with a live session."""
        return any(_running(s, b) for b in range(len(s.nodes)))

    def explain_controller(s: State) -> str:
        act = _current_controllers(s)
        c = s.zk.controller
        owner = "nobody" if c is None else f"broker {c[0]} (session {c[1]})"
        epochs = ", ".join(f"broker {b} at epoch {s.nodes[b].ctx.epoch}" for b in act if s.nodes[b].ctx)  # type: ignore[union-attr]
        return (
            f"{len(act)} brokers act as controller ({epochs or 'none'}); /controller is owned by {owner}, "
            f"/controller_epoch is {s.zk.epoch}"
        )

    def untold(s: State) -> bool:
        """A registered broker does not know ZooKeeper's leader of one of its replicas."""
        return next(_untold(sys, s), None) is not None

    def explain_untold(s: State) -> str:
        return "; ".join(
            f"broker {b}'s replica of partition {p} {what}, ZooKeeper says leader {s.zk.parts[p].leader} "  # type: ignore[union-attr]
            f"at epoch {s.zk.parts[p].leader_epoch}"  # type: ignore[union-attr]
            for b, p, what in _untold(sys, s)
        )

    def unregistered(s: State) -> bool:
        """A running broker is not registered with its live session."""
        return bool(_unregistered(s))

    def explain_unregistered(s: State) -> str:
        return "; ".join(
            f"broker {b} runs (session {s.nodes[b].session}{', expired' if s.nodes[b].expired else ''}) but "
            f"/brokers/ids/{b} is {s.zk.brokers[b]}"
            for b in _unregistered(s)
        )

    def busy(s: State) -> bool:
        """A running broker has controller events queued."""
        return bool(_busy(s))

    def explain_busy(s: State) -> str:
        return "; ".join(f"broker {b}'s event queue holds {len(s.nodes[b].events)} events" for b in _busy(s))

    def isr_changes(s: State) -> bool:
        """``/isr_change_notification`` has children."""
        return bool(s.zk.isr_changes)

    def explain_isr_changes(s: State) -> str:
        return f"/isr_change_notification holds {len(s.zk.isr_changes)} children: {list(s.zk.isr_changes)}"

    def undeleted(s: State) -> bool:
        """A topic marked for deletion, with every replica's broker up, is not yet deleted (or a
        deleted one's replica is still on an up broker)."""
        return next(_undeleted(sys, s), None) is not None

    def explain_undeleted(s: State) -> str:
        return "; ".join(f"topic {t} {why}" for t, why in _undeleted(sys, s))

    def unfinished(s: State) -> bool:
        """A reassignment whose targets are up has not completed."""
        return next(_unfinished_reassignments(sys, s), None) is not None

    def explain_unfinished(s: State) -> str:
        return "; ".join(f"partition {p}: {why}" for p, why in _unfinished_reassignments(sys, s))

    def or_none_runs(f: Callable[[State], bool]) -> Callable[[State], bool]:
        """``f``, or no broker runs (every broker stopped for good: nobody can act)."""

        def q(s: State) -> bool:
            return f(s) or not some_broker_runs(s)

        return q

    props = [
        leads_to(
            "dead_leader_eventually_replaced",
            dead_leader,
            or_none_runs(_not(dead_leader)),
            "a partition whose leader died eventually gets a live leader from the ISR or goes offline "
            "(leader -1, or no live ISR member and OfflinePartition) (seeds 002, 003 onBrokerFailure -> "
            "OfflinePartition -> triggerOnlinePartitionStateChange)",
            fairness=fair,
            explain=explain_dead_leader,
        ),
        leads_to(
            "one_controller_eventually_current",
            some_broker_runs,
            or_none_runs(_one_current_controller),
            "while a broker runs, eventually exactly one broker acts as controller, owning /controller "
            "and holding the highest epoch, /controller_epoch (seed 004 elect, onControllerResignation)",
            fairness=fair,
            explain=explain_controller,
        ),
        leads_to(
            "registered_broker_eventually_told",
            untold,
            _not(untold),
            "a registered broker eventually learns ZooKeeper's leader and leader epoch of each of its "
            "replicas (LeaderAndIsr; UpdateMetadata when sent) (seed 003 onBrokerStartup)",
            fairness=fair,
            explain=explain_untold,
        ),
        leads_to(
            "expired_session_eventually_reregistered",
            unregistered,
            _not(unregistered),
            "a running broker whose session expired (or that has not registered) eventually registers "
            "/brokers/ids/<id> with a live session (seed 004 handleNewSession, registerBrokerInZk)",
            fairness=fair,
            explain=explain_unregistered,
        ),
        leads_to(
            "event_queue_eventually_drains",
            busy,
            _not(busy),
            "a running broker's controller event queue eventually empties (seed 004 ControllerEventManager)",
            fairness=fair,
            explain=explain_busy,
        ),
        leads_to(
            "isr_change_eventually_propagated",
            isr_changes,
            or_none_runs(_not(isr_changes)),
            "an ISR change notification is eventually processed and deleted (seed 003 "
            "IsrChangeNotification: deleteIsrChangeNotifications)",
            fairness=fair,
            explain=explain_isr_changes,
        ),
    ]
    if config.max_topic_deletions:
        props.append(
            leads_to(
                "marked_topic_eventually_deleted",
                undeleted,
                or_none_runs(_not(undeleted)),
                "a topic marked for deletion whose replicas' brokers are all up is eventually deleted: "
                "/admin/delete_topics/<t> and /brokers/topics/<t> removed and the controller forgets it "
                "(seed 001 TopicDeletionManager: resumed on broker startup; completeDeleteTopic)",
                fairness=fair,
                explain=explain_undeleted,
            )
        )
    if config.max_reassignments:
        props.append(
            leads_to(
                "reassignment_eventually_finished",
                unfinished,
                or_none_runs(_not(unfinished)),
                "a reassignment whose target replicas are up eventually completes: /admin/reassign_partitions "
                "and the controller's partitionsBeingReassigned forget it and the leader knows the new "
                "assignment (seed 001 分区副本迁移, onPartitionReassignment)",
                fairness=fair,
                explain=explain_unfinished,
            )
        )
    return props
