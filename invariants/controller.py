"""Properties of the controller model (``model/controller/``).

Controller guarantees (seed 004's 2.x ``elect``: "每次的控制器变更都会使此epoch增1 ... 通过epoch
来保证操作的唯一性"; seed 001: "Kafka 通过 controller_epoch 来保证 Controller 的唯一性"; seed 003's
``doElectLeaderForPartitions`` epoch check and zkVersion-conditional update) and partition
guarantees (seeds 002 and 003: the leader is chosen from the live ISR unless unclean
election is enabled; ``doRemoveReplicasFromIsr`` keeps the ISR's last member; leader epochs
rise with every election) are checked as ``always`` and ``transition`` properties;
``reachable`` witnesses show that the interesting scenarios happen at all.

The admin workflows of issue 4 add safety properties (a deleted topic leaves nothing behind;
a finished reassignment leaves AR = RAR with the ISR inside; controlled shutdown never elects
a shutting-down broker; preferred elections elect only the live, in-sync preferred replica),
witnesses that each workflow completes, and, with ``liveness``, the ``eventually`` properties
L1-L4 under weak fairness of the healing actions (``FAIR_KINDS``).

Each property is shown able to fail by a variant or a mutant (``tests/test_controller.py``,
``tests/test_controller_admin.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from explorer.core import ModelSpec, Property, always, eventually, reachable, transition
from invariants.controller_convergence import (
    broker_views_match_zookeeper,
    context_matches_zookeeper,
    context_only_while_active,
    controller_converges,
    leader_isr_matches_zookeeper,
    metadata_cache_matches_zookeeper,
    no_dead_broker_in_written_isr,
    no_election_for_a_topic_being_deleted,
    no_leaderless_partition_when_quiet,
    no_write_over_newer_controller_state,
    partition_offline_only_without_live_leader,
    replica_states_match_liveness,
    resigned_controller_sends_nothing,
    serving,
    shutting_down_brokers_are_live,
)
from invariants.controller_explain import with_explanations
from invariants.controller_failover import failover_properties
from invariants.controller_fidelity import fidelity_properties
from invariants.controller_guards import controller_stepped, delivers, zk_changed
from invariants.controller_liveness import liveness_properties
from invariants.controller_observed import observed_properties
from invariants.controller_reassign import reassign_properties
from invariants.controller_replication import replication_properties
from invariants.mutants.controller import ControllerConfig, build
from model.controller import ControllerSystem, Elector, State
from model.controller.actions import FAIR_KINDS
from model.controller.effects import Effect, delivered_message_of, does, zk_request_of
from model.controller.messages import (
    FENCED_ADMIN_WRITES,
    S_CONTROLLED_SHUTDOWN,
    S_INIT,
    S_OFFLINE,
    S_PREFERRED,
    S_REASSIGN,
    WRITES,
    DeleteControllerPath,
    DeleteIsrChangeNotifications,
    RemovePartitionsFromReassignment,
    UpdateIsr,
    UpdateLeaderAndIsr,
)
from model.controller.state import (
    D_ADDED,
    D_ADMIN_UNCLEAN,
    D_AUTO,
    D_DELETED,
    D_DELETED_AFTER_RESUME,
    D_PREFERRED,
    D_REASSIGNED,
    D_RESUMED,
    D_SHUTDOWN,
    D_UNCLEAN_DYN,
)
from model.state_machines import PartitionState, ReplicaState

__all__ = ["SPEC", "SYMMETRIC", "active_controller", "admin_properties", "build", "properties"]

#: the properties that give the same verdict on a state (or step) and on its image under every
#: renaming ``ControllerSystem.symmetries()`` declares (``model/controller/symmetry.py``): each
#: reads every broker and partition alike, through the configuration's assignment and unclean
#: topics, which the renamings preserve. ``tests/test_symmetry_controller.py`` checks them on
#: sampled states. The properties of the admin workflows are left out: no configuration with an
#: admin workflow declares a symmetry, so none is checked.
SYMMETRIC = frozenset(
    {
        # invariants/controller.py
        "one_controller_per_epoch",
        "controller_epoch_monotonic",
        "controller_epoch_won_once",
        "controller_znode_valid",
        "controller_znode_removed_by_owner",
        "zk_writes_fenced",
        "brokers_reject_stale_controller_epoch",
        "brokers_reject_stale_broker_epoch",
        "brokers_record_accepted_epochs",
        "broker_epoch_matches_registration",
        "leader_in_isr",
        "leader_elected_from_isr",
        "elected_leader_is_live",  # invariants/controller_observed.py
        "isr_nonempty_subset",
        "leader_epoch_monotonic",
        "one_leader_per_epoch",
        "no_acked_record_lost",
        "valid_transitions",
        "failover",
        "second_controller_failover",
        "expiry_with_write_in_flight",
        "partition_offline_and_back",
        "acked_record",
        "unclean_election",
        "leader_eventually_elected",
        "controller_eventually_elected",
        # invariants/controller_convergence.py
        "controller_converges",
        "broker_views_match_zookeeper",
        "leader_isr_matches_zookeeper",
        "context_matches_zookeeper",
        "replica_states_match_liveness",
        "no_leaderless_partition_when_quiet",
        "no_dead_broker_in_written_isr",
        "partition_offline_only_without_live_leader",
        "no_election_for_a_topic_being_deleted",
        "shutting_down_brokers_are_live",
        "resigned_controller_sends_nothing",
        "no_write_over_newer_controller_state",
        "metadata_cache_matches_zookeeper",
        "context_only_while_active",
        # invariants/controller_failover.py
        "no_dead_leader_when_quiet",
        # invariants/controller_fidelity.py
        "isr_order_kept",
        "dead_broker_holds_no_process_memory",
        "faults_within_budget",
        "active_controller_id_from_zookeeper",
        "new_session_knows_no_controller",
        "zookeeper_watches_fire",
        "witnesses_follow_their_requests",
        # invariants/controller_replication.py
        "leader_hw_follows_isr",
        "follower_log_is_leader_prefix",
        # invariants/controller_liveness.py (leads-to: their triggers and goals read every broker
        # and partition alike; a reduced search still switches the reduction off for liveness)
        "dead_leader_eventually_replaced",
        "one_controller_eventually_current",
        "registered_broker_eventually_told",
        "expired_session_eventually_reregistered",
        "event_queue_eventually_drains",
        "isr_change_eventually_propagated",
    }
)


# -- controller -------------------------------------------------------------------------


def one_controller_per_epoch(s: State) -> bool:
    """No two live brokers act as controller with the same controller epoch.

    >>> one_controller_per_epoch(build(ControllerConfig(brokers=2)).init_states()[0])
    True
    """
    seen = set()
    for n in s.nodes:
        if n.alive and n.ctx is not None:
            if n.ctx.epoch in seen:
                return False
            seen.add(n.ctx.epoch)
    return True


def controller_epoch_monotonic(s: State, a: Any, t: State) -> bool:
    """``/controller_epoch`` never decreases."""
    if t.zk is s.zk:  # ZooKeeper untouched (most steps share the parent's tree)
        return True
    return t.zk.epoch >= s.zk.epoch


def controller_epoch_won_once(s: State, a: Any, t: State) -> bool:
    """Every write of ``/controller_epoch`` raises it by exactly one (each value is won once)."""
    if t.zk is s.zk:
        return True
    if t.zk.epoch_version == s.zk.epoch_version:
        return t.zk.epoch == s.zk.epoch
    return t.zk.epoch == s.zk.epoch + 1


def controller_znode_valid(s: State) -> bool:
    """If ``/controller`` names broker b with b's current session, and b is alive with no
    ZooKeeper request outstanding (no parked continuation, so election and failover are
    over), then b acts as controller with the epoch in ``/controller_epoch``.

    >>> controller_znode_valid(build(ControllerConfig(brokers=2)).init_states()[0])
    True
    """
    c = s.zk.controller
    if c is None:
        return True
    b, sess = c
    n = s.nodes[b]
    if not n.alive or n.session != sess or n.expired or n.pending is not None:
        return True
    return n.ctx is not None and n.active_id == b and n.ctx.epoch == s.zk.epoch


def controller_znode_valid_applies(s: State) -> bool:
    c = s.zk.controller
    if c is None:
        return False
    n = s.nodes[c[0]]
    return n.alive and n.session == c[1] and not n.expired and n.pending is None


def controller_znode_removed_by_owner(s: State, a: Any, t: State) -> bool:
    """``/controller`` disappears only when its owner's session expires or its owner deletes it
    (no broker deposes another by deleting the election path)."""
    if t.zk is s.zk:
        return True
    c = s.zk.controller
    if c is None or t.zk.controller == c:
        return True
    if does(a, Effect.EXPIRES_SESSION):
        return a.session == c[1]
    if type(zk_request_of(a)) is DeleteControllerPath:
        return a.broker == c[0] and a.session == c[1]
    return True


def zk_writes_fenced(s: State, a: Any, t: State) -> bool:
    """No ZooKeeper write of a controller lands unless its epoch is the current one."""
    z0, z1 = s.zk, t.zk
    if z1 is z0:
        return True
    req = zk_request_of(a)
    if req is None:
        return True
    kind = type(req)  # the three kinds are disjoint: the most frequent tested first
    if kind is UpdateLeaderAndIsr:
        if z1.parts == z0.parts:
            return True
        return req.controller_epoch == z0.epoch
    if kind is DeleteIsrChangeNotifications:
        if z1.isr_changes == z0.isr_changes:
            return True
        return req.controller_epoch == z0.epoch
    if kind in FENCED_ADMIN_WRITES:
        if z1 == z0:
            return True
        return req.controller_epoch == z0.epoch
    return True


def zk_writes_fenced_applies(s: State, a: Any, t: State) -> bool:
    kind = type(zk_request_of(a))
    return kind in (UpdateLeaderAndIsr, DeleteIsrChangeNotifications) or kind in FENCED_ADMIN_WRITES


def brokers_reject_stale_controller_epoch(s: State, a: Any, t: State) -> bool:
    """A broker never applies a controller request older than the newest controller epoch it saw."""
    msg = delivered_message_of(a)
    if msg is None:
        return True
    n = s.nodes[a.dest]
    return msg.controller_epoch >= n.seen_epoch or t.nodes[a.dest] == n


def brokers_reject_stale_broker_epoch(s: State, a: Any, t: State) -> bool:
    """A broker never applies a controller request addressed to an earlier incarnation of itself."""
    msg = delivered_message_of(a)
    if msg is None:
        return True
    n = s.nodes[a.dest]
    return msg.broker_epoch >= n.bepoch or t.nodes[a.dest] == n


def brokers_record_accepted_epochs(sys: ControllerSystem):
    """The check of ``brokers_record_accepted_epochs`` for ``sys``'s configuration."""
    broker_epoch = sys.cfg.broker_epoch

    def check(s: State, a: Any, t: State) -> bool:
        """A broker that is handed a request it must accept (controller epoch at least the newest
        it saw, and addressed to this incarnation) records its controller epoch: the stale-epoch
        check is only as good as what the broker remembers (ReplicaManager: controllerEpoch =
        request.controllerEpoch)."""
        msg = delivered_message_of(a)
        if msg is None:
            return True
        n = s.nodes[a.dest]
        acceptable = msg.controller_epoch >= n.seen_epoch and not (
            broker_epoch and msg.broker_epoch < n.bepoch
        )
        return not acceptable or t.nodes[a.dest].seen_epoch >= msg.controller_epoch

    return check


def broker_epoch_matches_registration(s: State) -> bool:
    """A live broker with no ZooKeeper request or response in flight knows the broker epoch of
    its registration under its current session (the czxid of /brokers/ids/<id>): the
    stale-broker-epoch check compares requests against it (KIP-380)."""
    brokers = s.zk.brokers
    for b, n in enumerate(s.nodes):
        if n.alive and not (n.zk_in or n.zk_out or n.expired):
            reg = brokers[b]
            if reg is not None and reg[0] == n.session and n.bepoch != reg[1]:
                return False
    return True


# -- partitions ---------------------------------------------------------------------------


def isr_valid(sys: ControllerSystem):
    def isr_nonempty_subset(s: State) -> bool:
        """Every partition's ISR (in ZooKeeper) is non-empty and a subset of its assigned replicas
        (``/brokers/topics/<t>``, which a reassignment changes)."""
        reps = s.zk.ar
        for p, z in enumerate(s.zk.parts):
            if z is None:
                continue
            if not z.isr:
                return False
            for r in z.isr:
                if r not in reps[p]:
                    return False
        return True

    return isr_nonempty_subset


def leader_in_isr(sys: ControllerSystem):
    clean = tuple(not sys.cfg.unclean(p) for p in range(sys.np))

    def check(s: State) -> bool:
        """With unclean election off, a partition's leader (in ZooKeeper) is in its ISR."""
        for p, z in enumerate(s.zk.parts):
            if z is not None and clean[p] and z.leader >= 0 and z.leader not in z.isr:
                return False
        return True

    return check


def leader_elected_from_isr(sys: ControllerSystem):
    """The check of ``leader_elected_from_isr`` for ``sys``'s configuration: partitions whose
    topic has unclean election on (statically, or by an admin's ElectLeaders request) are
    left out; a topic whose ``unclean.leader.election.enable`` is set dynamically is left out
    from then on."""
    ppt = sys.cfg.partitions_per_topic
    clean = tuple(not sys.cfg.unclean(p) and not sys.cfg.max_admin_unclean_elections for p in range(sys.np))

    def check(s: State, a: Any, t: State) -> bool:
        """With unclean election off, a ZooKeeper write that gives a partition a new leader picks
        it from the ISR ZooKeeper held just before (every clean election strategy, offline,
        reassignment, preferred and controlled shutdown, chooses from the live ISR)."""
        for p, (z, z2) in enumerate(zip(s.zk.parts, t.zk.parts)):
            if z is None or z2 is None or z is z2 or not clean[p]:
                continue
            outside = z2.leader >= 0 and z2.leader != z.leader and z2.leader not in z.isr
            if outside and p // ppt not in s.zk.unclean_dyn and p // ppt not in t.zk.unclean_dyn:
                return False
        return True

    return check


def leader_epoch_monotonic(s: State, a: Any, t: State) -> bool:
    """A partition's leader epoch and zkVersion never decrease, and a new leader gets a new epoch."""
    if t.zk is s.zk:
        return True
    for z, z2 in zip(s.zk.parts, t.zk.parts):
        if z is None or z2 is None or z is z2:
            continue
        if z2.leader_epoch < z.leader_epoch or z2.version < z.version:
            return False
        if z2.leader != z.leader and z2.leader_epoch == z.leader_epoch:
            return False
    return True


def one_leader_per_epoch(s: State) -> bool:
    """No two live brokers believe they lead the same partition in the same leader epoch."""
    seen = None  # (partition, leader epoch) of each live broker that believes it leads
    for b, n in enumerate(s.nodes):
        if n.alive:
            for p, r in enumerate(n.reps):
                if r.leader == b:
                    key = (p, r.epoch)
                    if seen is None:
                        seen = {key}
                    elif key in seen:
                        return False
                    else:
                        seen.add(key)
    return True


def no_acked_record_lost(s: State) -> bool:
    """Every acknowledged record is in the log of the partition's current leader (the broker
    ZooKeeper names, once it leads that leader epoch).

    >>> no_acked_record_lost(build(ControllerConfig(brokers=2)).init_states()[0])
    True
    """
    if not s.acked:
        return True
    for p, o, e in s.acked:
        z = s.zk.parts[p]
        if z is None or z.leader < 0:
            continue
        n = s.nodes[z.leader]
        r = n.reps[p]
        if not n.alive or r.leader != z.leader or r.epoch != z.leader_epoch:
            continue
        if o >= len(r.log) or r.log[o] != e:
            return False
    return True


def valid_transitions(s: State) -> bool:
    """Every state-machine transition a controller attempted was valid (an invalid one is recorded)."""
    return not s.invalid


# -- witnesses ----------------------------------------------------------------------------


def topic_created_online(sys: ControllerSystem):
    """Witness for ``topics_created_later``: a topic created after start is fully online."""
    ppt = sys.ppt
    first = sys.topics_at_start
    online = PartitionState.OnlinePartition

    def check(s: State) -> bool:
        """Some topic created after start has every partition OnlinePartition in a live active
        controller's context, with a leader in its ZooKeeper state znode."""
        parts = s.zk.parts
        for t in range(first, first + s.zk.created):
            ps = range(t * ppt, (t + 1) * ppt)
            if not all((z := parts[p]) is not None and z.leader >= 0 for p in ps):
                continue
            for n in s.nodes:
                if n.alive and n.ctx is not None and all(n.ctx.pstates[p] == online for p in ps):
                    return True
        return False

    return check


# -- admin workflows (issue 4): safety --------------------------------------------------------


def deleted_topics_gone(sys: ControllerSystem):
    ppt = sys.ppt
    recursive = sys.cfg.recursive_topic_deletion

    def check(s: State) -> bool:
        """A deleted topic leaves nothing in ZooKeeper (partition states, ISR change
        notifications, ``/admin/delete_topics``) nor in the context of the current controller
        (partition and replica states, leadership, deletion and reassignment sets). With
        ``recursive_topic_deletion`` the deletion ends with ``deleteTopicDeletions``, a request
        of its own: a topic still under ``/admin/delete_topics`` is not deleted yet.

        >>> check(build(ControllerConfig(max_topic_deletions=1)).init_states()[0])
        True
        """
        zk = s.zk
        for t in zk.gone:
            ps = range(t * ppt, (t + 1) * ppt)
            if recursive and t in zk.delete_topics:
                continue
            if (
                t in zk.delete_topics
                or any(zk.parts[p] is not None for p in ps)
                or any(e[0] in ps for e in zk.isr_changes)
            ):
                return False
            for n in s.nodes:
                ctx = n.ctx
                if not n.alive or ctx is None or ctx.epoch != zk.epoch or n.pending is not None:
                    continue
                if t in ctx.deleting or t in ctx.ineligible or any(q in ps for q, _ in ctx.reassigning):
                    return False
                for p in ps:
                    if ctx.pstates[p] != PartitionState.NonExistentPartition or ctx.leaders[p] is not None:
                        return False
                    if any(r != ReplicaState.NonExistentReplica for r in ctx.rstates[p]):
                        return False
        return True

    return check


def reassignment_complete(s: State, a: Any, t: State) -> bool:
    """When a finished reassignment leaves ``/admin/reassign_partitions``, the partition's
    assignment (AR) is its target (RAR) and its ISR lies within it."""
    req = zk_request_of(a)
    if not (type(req) is RemovePartitionsFromReassignment and req.completed):
        return True
    if t.zk.reassign == s.zk.reassign:
        return True
    for p, rar in s.zk.reassign:
        if p not in req.partitions:
            continue
        if t.zk.ar[p] != rar:
            return False
        z = t.zk.parts[p]
        if z is not None and any(r not in rar for r in z.isr):
            return False
    return True


def _reassignment_completes(s: State, a: Any, t: State) -> bool:
    req = zk_request_of(a)
    return type(req) is RemovePartitionsFromReassignment and req.completed and t.zk.reassign != s.zk.reassign


def _landed_leaders(s: State, a: Any, t: State) -> list[tuple[int, Any, Any]]:
    """(partition, old, new) state znodes a landing partition-state write changed."""
    req = zk_request_of(a)
    if type(req) is not UpdateLeaderAndIsr or t.zk.parts == s.zk.parts:
        return []
    return [(p, s.zk.parts[p], t.zk.parts[p]) for p, _ in req.writes if t.zk.parts[p] != s.zk.parts[p]]


# the partition-state writes that elect a leader (not an epoch bump or an ISR removal)
_ELECTIONS = frozenset({S_OFFLINE, S_REASSIGN, S_PREFERRED, S_CONTROLLED_SHUTDOWN, S_INIT})


def controlled_shutdown_never_elects_shutting_down(s: State, a: Any, t: State) -> bool:
    """No partition-state write lands that makes a broker leader while the writing
    controller counts it as shutting down (``shuttingDownBrokerIds``, seed 002)."""
    changed = _landed_leaders(s, a, t)
    if not changed:
        return True
    ctx = s.nodes[a.broker].ctx
    if ctx is None or not ctx.shutting:
        return True
    elects = a.req.strategy in _ELECTIONS
    for _, old, new in changed:
        if new.leader in ctx.shutting and (elects or old is None or old.leader != new.leader):
            return False
    return True


def _shutdown_write(s: State, a: Any, t: State) -> bool:
    if not _landed_leaders(s, a, t):
        return False
    ctx = s.nodes[a.broker].ctx
    return ctx is not None and bool(ctx.shutting) and a.req.strategy == S_CONTROLLED_SHUTDOWN


def preferred_election_elects_preferred(s: State, a: Any, t: State) -> bool:
    """A preferred replica election only makes the preferred replica (the head of AR) leader,
    and only when it is live (in the writing controller's view) and in the ISR."""
    changed = _landed_leaders(s, a, t)
    if not changed or a.req.strategy != S_PREFERRED:
        return True
    ctx = s.nodes[a.broker].ctx
    for p, old, new in changed:
        preferred = s.zk.ar[p][0]
        if new.leader != preferred or old is None or preferred not in old.isr:
            return False
        if ctx is not None and (not ctx.live[preferred] or preferred in ctx.shutting):
            return False
    return True


def preferred_election_znode_removed(s: State) -> bool:
    """Once quiet, ``/admin/preferred_replica_election`` is gone: the controller that read it
    ran ``onPreferredReplicaElection``, whose ``finally`` deletes it
    (``removePartitionsFromPreferredReplicaElection``), or a new controller's failover did
    (``fetchPendingPreferredReplicaElections``), so the admin can ask again.

    >>> from invariants.mutants.controller import ControllerConfig, build
    >>> s = build(ControllerConfig(brokers=2)).init_states()[0]
    >>> preferred_election_znode_removed(s), preferred_election_znode_removed(s._replace(zk=s.zk._replace(preferred=(0,))))
    (True, False)
    """
    return not s.zk.preferred or not serving(s)


def _preferred_write(s: State, a: Any, t: State) -> bool:
    return bool(_landed_leaders(s, a, t)) and a.req.strategy == S_PREFERRED


# -- admin workflows (issue 4): liveness ---------------------------------------------------------


def _up(s: State, b: int) -> bool:
    """Broker ``b`` runs, its session is live and registered, and it is not shutting down."""
    n = s.nodes[b]
    reg = s.zk.brokers[b]
    return n.alive and not n.expired and reg is not None and reg[0] == n.session and n.cs == 0


def active_controller(s: State) -> bool:
    """Some running broker owns ``/controller`` with its live session (or ``/controller`` names it
    under a session ZooKeeper expired and kept: ``faults/orphaned_session.py``) and acts as
    controller.

    >>> active_controller(build(ControllerConfig()).init_states()[0])
    True
    """
    c = s.zk.controller
    if c is None:
        return False
    n = s.nodes[c[0]]
    # c[1] differs from n.session only when that session's expiry left /controller in place
    return n.alive and not n.expired and n.ctx is not None


def leaderless_with_live_isr(sys: ControllerSystem):
    ppt = sys.ppt

    def bad(s: State) -> bool:
        """With an active controller, some partition (of a topic not queued for deletion) has
        an up ISR replica but no up leader."""
        if not active_controller(s):
            return False
        zk = s.zk
        for p, z in enumerate(zk.parts):
            if z is None or (p // ppt) in zk.delete_topics:
                continue
            if z.leader >= 0 and _up(s, z.leader):
                continue
            if any(_up(s, r) for r in z.isr):
                return True
        return False

    return bad


def deletion_stuck(sys: ControllerSystem):
    ppt = sys.ppt

    def bad(s: State) -> bool:
        """A topic is queued for deletion, still exists, and every replica's broker is up."""
        zk = s.zk
        for t in zk.delete_topics:
            ps = range(t * ppt, (t + 1) * ppt)
            if t in zk.gone or not any(sys.present(zk, p) for p in ps):
                continue
            if all(_up(s, r) for p in ps if sys.present(zk, p) for r in zk.ar[p]):
                return True
        return False

    return bad


def no_controller(s: State) -> bool:
    """Some broker runs with a live session but no broker is the active controller."""
    if active_controller(s):
        return False
    return any(n.alive and not n.expired and n.session != 0 for n in s.nodes)


def reassignment_waits_for_down_broker(s: State) -> bool:
    """Quiet, and a controller holds a reassignment still in ``/admin/reassign_partitions``
    with a new replica on a broker its context counts dead: since Kafka 0.10.1 it waits for that
    replica to join the ISR (``onBrokerStartup`` restarts it), where 0.8.0 to 0.10.0 failed it
    (KAFKA-4214, ``model/controller/bugs/kafka_4214.py``)."""
    if not s.zk.reassign or not serving(s):
        return False
    pending = {p for p, _ in s.zk.reassign}
    for n in s.nodes:
        ctx = n.ctx
        if (
            n.alive
            and ctx is not None
            and any(p in pending and any(not ctx.live[r] for r in rar) for p, rar in ctx.reassigning)
        ):
            return True
    return False


def reassignment_stuck(sys: ControllerSystem):
    def bad(s: State) -> bool:
        """A reassignment is in ``/admin/reassign_partitions`` and all its new replicas are up."""
        zk = s.zk
        return any(sys.present(zk, p) and all(_up(s, r) for r in rar) for p, rar in zk.reassign)

    return bad


def properties(config: ControllerConfig) -> list[Property]:
    """The controller model's properties for ``config``.

    >>> len(properties(ControllerConfig())) > 10
    True
    """
    sys = ControllerSystem(config)
    init_epoch = sys.init_states()[0].zk.epoch
    np_ = sys.np
    faults = config.max_crashes + config.max_session_expiries > 0
    props = [
        always(
            "one_controller_per_epoch",
            one_controller_per_epoch,
            "at most one controller per controller epoch (seed 004 elect; seed 001 controller_epoch)",
        ),
        transition(
            "controller_epoch_monotonic",
            controller_epoch_monotonic,
            "/controller_epoch never decreases (seed 001: 每次 Controller 变化，将其值加 1)",
            guard=zk_changed,
        ),
        transition(
            "controller_epoch_won_once",
            controller_epoch_won_once,
            "each controller epoch value is won once: every write raises it by one "
            "(seed 004 registerControllerAndIncrementControllerEpoch)",
            guard=zk_changed,
        ),
        always(
            "controller_znode_valid",
            controller_znode_valid,
            "/controller names a broker that completed failover for the current epoch "
            "(seed 004 elect + onControllerFailover)",
            applies=controller_znode_valid_applies,
        ),
        transition(
            "controller_znode_removed_by_owner",
            controller_znode_removed_by_owner,
            "only its owner (session expiry or own delete) removes /controller "
            "(seed 000 resign() deletes the election path)",
            guard=zk_changed,
        ),
        transition(
            "zk_writes_fenced",
            zk_writes_fenced,
            "no ZooKeeper write lands from a controller whose epoch is not current "
            "(seed 003 doElectLeaderForPartitions; KAFKA-6082 epoch zkVersion check)",
            applies=zk_writes_fenced_applies,
            guard=zk_changed,
        ),
        transition(
            "brokers_reject_stale_controller_epoch",
            brokers_reject_stale_controller_epoch,
            "brokers never apply a request with a stale controller epoch (seed 001: 被认定为无效的请求)",
            applies=delivers,
            guard=delivers,
        ),
        transition(
            "brokers_record_accepted_epochs",
            brokers_record_accepted_epochs(sys),
            "a broker that accepts a controller request remembers its controller epoch (seed 001: "
            "controllerEpoch 用于隔离过期的 Controller 请求)",
            applies=delivers,
            guard=delivers,
        ),
        always(
            "broker_epoch_matches_registration",
            broker_epoch_matches_registration,
            "a live broker knows the broker epoch of its current registration (KIP-380 broker epoch: "
            "the czxid of /brokers/ids/<id>)",
        ),
        transition(
            "brokers_reject_stale_broker_epoch",
            brokers_reject_stale_broker_epoch,
            "brokers never apply a request addressed to an earlier incarnation (KIP-380 broker epoch)",
            applies=delivers,
            guard=delivers,
        ),
        always(
            "leader_in_isr",
            leader_in_isr(sys),
            "with unclean election off the leader is in the ISR (seeds 002, 003 offlinePartitionLeaderElection)",
        ),
        transition(
            "leader_elected_from_isr",
            leader_elected_from_isr(sys),
            "with unclean election off every new leader comes from the ISR ZooKeeper held before the "
            "election (seed 003 offlinePartitionLeaderElection: liveReplicas.find(isr.contains); seed 002)",
            guard=zk_changed,
        ),
        always(
            "isr_nonempty_subset",
            isr_valid(sys),
            "the ISR is non-empty and within the assigned replicas (seed 002 doRemoveReplicasFromIsr keeps "
            "the last member)",
        ),
        transition(
            "leader_epoch_monotonic",
            leader_epoch_monotonic,
            "leader epochs never decrease and rise with every new leader (seeds 002, 003 newLeaderAndIsr)",
            guard=zk_changed,
        ),
        always(
            "one_leader_per_epoch",
            one_leader_per_epoch,
            "at most one broker leads a partition in a leader epoch (seed 003 LeaderAndIsr leader epoch)",
        ),
        always(
            "no_acked_record_lost",
            no_acked_record_lost,
            "no acknowledged (acks=all) record is lost while unclean election is off (seed 003: "
            "否则会在非isr的副本中选举leader，造成数据不一致问题)",
        ),
        always(
            "valid_transitions",
            valid_transitions,
            "every state-machine transition is valid (seeds 000, 001, 003 validPreviousStates)",
        ),
        # what fencing can hide (invariants/controller_convergence.py): read once the cluster is quiet
        always(
            "controller_converges",
            controller_converges,
            "once quiet, exactly one broker is the active controller, owns /controller with the latest "
            "epoch, and every live broker's activeControllerId names it (seed 004 elect; seed 001)",
            applies=serving,
        ),
        always(
            "broker_views_match_zookeeper",
            broker_views_match_zookeeper(sys),
            "once quiet, every live replica knows ZooKeeper's leader and leader epoch of its partition "
            "(seed 001: the controller pushes the latest metadata to every broker)",
            applies=serving,
        ),
        always(
            "leader_isr_matches_zookeeper",
            leader_isr_matches_zookeeper(sys),
            "once quiet, every live leader at ZooKeeper's leader epoch caches ZooKeeper's ISR and "
            "zkVersion of its partition, on which its next ISR change is conditioned (Partition.updateIsr; "
            "KAFKA-1382: ReplicationUtils.checkLeaderAndIsrZkData)",
            applies=serving,
        ),
        always(
            "context_matches_zookeeper",
            context_matches_zookeeper(sys),
            "once quiet, the active controller's context equals ZooKeeper: live brokers with their epochs, "
            "every partition's leader, leader epoch, ISR and zkVersion (seed 004 onControllerFailover; "
            "seed 001: 监听 /isr_change_notification)",
            applies=serving,
        ),
        always(
            "replica_states_match_liveness",
            replica_states_match_liveness(sys),
            "once quiet, no replica of a dead broker is OnlineReplica and none of a live one OfflineReplica "
            "(seed 001 onBrokerFailure / onBrokerStartup)",
            applies=serving,
        ),
        always(
            "shutting_down_brokers_are_live",
            shutting_down_brokers_are_live,
            "once quiet, every broker the controller counts as shutting down is live (Kafka 2.x "
            "onBrokerFailure: shuttingDownBrokerIds.remove of the dead brokers; seed 002's shuttingDownBrokerIds)",
            applies=serving,
        ),
        always(
            "no_leaderless_partition_when_quiet",
            no_leaderless_partition_when_quiet(sys),
            "once quiet, no partition lacks a live leader while a live ISR member exists, or, where its "
            "topic allows unclean election, a live assigned replica (seed 002 OfflinePartition election "
            "on broker failure; TopicUncleanLeaderElectionEnable -> triggerOnlinePartitionStateChange)",
            applies=serving,
        ),
        transition(
            "no_dead_broker_in_written_isr",
            no_dead_broker_in_written_isr,
            "an offline election or a new partition never gets an ISR with a broker the controller "
            "knows is dead (seed 003 leaderForOffline: isr.filter(liveReplicas))",
            guard=zk_changed,
        ),
        transition(
            "partition_offline_only_without_live_leader",
            partition_offline_only_without_live_leader(sys),
            "a partition goes OfflinePartition only when the controller knows no live leader for it, or "
            "its topic is being deleted (seed 001 onBrokerFailure: partitionsWithOfflineLeader; seed 002)",
            guard=controller_stepped,
        ),
        transition(
            "no_election_for_a_topic_being_deleted",
            no_election_for_a_topic_being_deleted(sys),
            "no leader election lands for a partition of a topic queued for deletion (seed 002 "
            "triggerOnlinePartitionStateChange, fetchPendingPreferredReplicaElections, "
            "doControlledShutdown: !isTopicQueuedUpForDeletion)",
            guard=zk_changed,
        ),
        # what a deposed controller does (fencing makes it harmless, so no quiet state shows it)
        transition(
            "resigned_controller_sends_nothing",
            resigned_controller_sends_nothing,
            "no controller request is delivered from a broker that resigned (seed 004 "
            "onControllerResignation: controllerChannelManager.shutdown(); seed 001: 清空请求队列)",
            applies=delivers,
            guard=delivers,
        ),
        always(
            "no_write_over_newer_controller_state",
            no_write_over_newer_controller_state,
            "no controller sends a partition-state write over a state a newer controller wrote "
            "(seed 003 doElectLeaderForPartitions: aborted ... already written by another controller)",
        ),
    ]
    if config.send_update_metadata:
        props.append(
            always(
                "metadata_cache_matches_zookeeper",
                metadata_cache_matches_zookeeper(sys),
                "once quiet, every live broker's metadata cache has the registered brokers alive and "
                "ZooKeeper's leader, leader epoch and ISR of every partition (seed 001 onBrokerStartup: "
                "UpdateMetadata so that 其他的节点就会知道当前的 Broker 已经上线了; seed 004)",
                applies=serving,
            )
        )
    if config.elector is not Elector.LEGACY:
        props.append(
            always(
                "context_only_while_active",
                context_only_while_active,
                "a broker holds a controller context only while its activeControllerId names itself "
                "(2.x isActive; seed 004 maybeResign: a controller that sees /controller move resigns)",
            )
        )
    if faults:
        props.append(
            reachable(
                "failover",
                lambda s: any(
                    n.alive and n.ctx is not None and n.pending is None and n.ctx.epoch > init_epoch
                    for n in s.nodes
                ),
                "a controller completes onControllerFailover at a new epoch",
            )
        )
    if config.max_session_expiries >= 2 and config.max_controller_epoch >= init_epoch + 2:
        # two expiries of the active controller's session each move the controller (seed 004
        # handleSessionExpiry -> onControllerResignation, then a new election), so the epoch
        # can rise twice; issue 20 asks for bounds that reach two controller changes
        props.append(
            reachable(
                "second_controller_failover",
                lambda s: any(
                    n.alive and n.ctx is not None and n.pending is None and n.ctx.epoch >= init_epoch + 2
                    for n in s.nodes
                ),
                "a controller completes onControllerFailover after two controller changes",
            )
        )
    if config.max_session_expiries > 0:
        props.append(
            reachable(
                "expiry_with_write_in_flight",
                lambda s: any(
                    n.expired and any(type(q) in WRITES or type(q) is UpdateIsr for q in n.zk_out)
                    for n in s.nodes
                ),
                "a ZooKeeper session expires with a write of its client in flight",
            )
        )
    if config.max_session_expiries + config.max_restarts > 0 and faults and config.brokers > 1:
        # one broker never writes its own partition's leader -1 (no other controller is left to)
        props.append(
            reachable(
                "partition_offline_and_back",
                partition_offline_and_back(np_),
                "a partition loses its leader (OfflinePartition / leader -1) and leads again",
            )
        )
    if config.max_records > 0:
        props.append(
            reachable("acked_record", lambda s: bool(s.acked), "a record is acknowledged (acks=all)")
        )
    if config.topics_created_later > 0:
        props.append(
            reachable(
                "topic_created_online",
                topic_created_online(sys),
                "a topic created after start has all its partitions OnlinePartition with a leader "
                "(seed 001 新建 Topic: onNewTopicCreation -> onNewPartitionCreation)",
            )
        )
    props += fidelity_properties(config, sys)
    props += observed_properties(config, sys)
    props += replication_properties(config)
    props += admin_properties(config, sys)
    props += liveness_properties(config, sys)  # leads-to (issue 58)
    props += failover_properties(config, sys)  # KAFKA-3143 (issue 58's bug zoo)
    props += reassign_properties(config, sys)  # KAFKA-4214 (issue 58's bug zoo)
    if any(config.unclean(p) for p in range(np_)):
        props.append(
            reachable(
                "unclean_election", lambda s: bool(s.history & 1), "an unclean leader election is written"
            )
        )
    props = with_explanations(props, sys)  # each property says why it fails (controller_explain.py)
    return [dataclasses.replace(p, symmetric=True) if p.name in SYMMETRIC else p for p in props]


def partition_offline_and_back(np_: int) -> Callable[[State], bool]:
    """The goal of ``partition_offline_and_back`` for ``np_`` partitions: some partition whose
    leader went -1 once (``State.history``, bit ``p + 1``) has a leader again that leads it at
    its broker. It stays a goal for the first 60,000 states of controller-ref, so it is read
    first on the history word (one test on most states).

    >>> from model.controller import ControllerSystem
    >>> s = ControllerSystem(ControllerConfig()).init_states()[0]
    >>> goal = partition_offline_and_back(1)
    >>> goal(s), goal(s._replace(history=s.history | 2))
    (False, True)
    """

    def goal(s: State) -> bool:
        h = s.history >> 1
        if not h:
            return False
        for p in range(np_):
            if (h >> p) & 1:
                z = s.zk.parts[p]
                if z is not None and z.leader >= 0 and s.nodes[z.leader].reps[p].leader == z.leader:
                    return True
        return False

    return goal


def _not(f: Any) -> Any:
    def goal(s: State) -> bool:
        return not f(s)

    goal.__doc__ = f"not: {f.__doc__}"
    return goal


def admin_properties(config: ControllerConfig, sys: ControllerSystem) -> list[Property]:
    """Safety properties, witnesses and (with ``liveness``) the liveness properties of the
    admin workflows of issue 4 that ``config`` turns on.

    >>> [p.name for p in admin_properties(ControllerConfig(), ControllerSystem(ControllerConfig()))]
    []
    >>> len(admin_properties(ControllerConfig(max_topic_deletions=1), build(ControllerConfig()))) > 1
    True
    """
    props: list[Property] = []
    fair = FAIR_KINDS

    def done(bit: int) -> Any:
        return lambda s: bool(s.done & bit)

    if config.max_topic_deletions:
        props.append(
            always(
                "deleted_topic_gone",
                deleted_topics_gone(sys),
                "a deleted topic leaves nothing in ZooKeeper or the controller's context "
                "(seed 001 completeDeleteTopic: 从 Controller 缓存和 ZK 中清除这个 Topic 的相关记录)",
                applies=lambda s: bool(s.zk.gone),
            )
        )
        props.append(
            reachable("topic_deleted", done(D_DELETED), "a topic deletion completes (completeDeleteTopic)")
        )
        if config.max_crashes and config.max_restarts:
            props.append(
                reachable(
                    "deletion_resumed_on_startup",
                    done(D_DELETED_AFTER_RESUME),
                    "a deletion resumed on broker startup (onBrokerStartup -> resumeDeletionForTopics) "
                    "completes",
                )
            )
    if sys.added:
        props.append(
            reachable(
                "partition_added",
                done(D_ADDED),
                "a partition added after start gets a leader (PartitionModifications -> onNewPartitionCreation)",
            )
        )
    if config.max_reassignments:
        props.append(
            transition(
                "reassignment_complete",
                reassignment_complete,
                "a finished reassignment leaves AR = RAR and the ISR within it (seed 001 分区副本迁移 steps)",
                applies=_reassignment_completes,
                guard=zk_changed,
            )
        )
        props.append(
            reachable("reassignment_completed", done(D_REASSIGNED), "a reassignment completes (AR = RAR)")
        )
        if config.max_crashes:
            props.append(
                reachable(
                    "reassignment_waits_for_down_broker",
                    reassignment_waits_for_down_broker,
                    "once quiet, a controller's reassignment in progress waits for a new replica whose "
                    "broker is down (Kafka 0.10.1 on; 0.8.0 to 0.10.0 failed it: KAFKA-4214)",
                )
            )
            props.append(
                reachable(
                    "reassignment_resumed_after_failover",
                    done(D_RESUMED),
                    "a controller failover picks up a reassignment in progress, which then completes",
                )
            )
    if config.max_controlled_shutdowns:
        props.append(
            transition(
                "controlled_shutdown_never_elects_shutting_down",
                controlled_shutdown_never_elects_shutting_down,
                "no election makes a shutting-down broker leader (seed 002 "
                "controlledShutdownPartitionLeaderElection; liveBrokerIds excludes shuttingDownBrokerIds)",
                applies=_shutdown_write,
                guard=zk_changed,
            )
        )
        props.append(
            reachable(
                "controlled_shutdown_done",
                done(D_SHUTDOWN),
                "a broker stops after its controlled shutdown was answered",
            )
        )
    if config.max_preferred_elections or config.auto_leader_rebalance:
        props.append(
            transition(
                "preferred_election_elects_preferred",
                preferred_election_elects_preferred,
                "a preferred election only elects the preferred replica, live and in the ISR "
                "(seed 002 preferredReplicaPartitionLeaderElection)",
                applies=_preferred_write,
                guard=zk_changed,
            )
        )
        props.append(
            reachable("preferred_election_done", done(D_PREFERRED), "a preferred replica election is written")
        )
    if config.max_preferred_elections:
        props.append(
            always(
                "preferred_election_znode_removed",
                preferred_election_znode_removed,
                "once quiet, /admin/preferred_replica_election is gone (seed 002 "
                "onPreferredReplicaElection: finally removePartitionsFromPreferredReplicaElection)",
                applies=serving,
            )
        )
    if config.auto_leader_rebalance:
        props.append(
            reachable(
                "auto_rebalance_elects",
                done(D_AUTO),
                "the auto-rebalance task finds a broker over leader.imbalance.per.broker.percentage",
            )
        )
    if config.max_unclean_enables:
        props.append(
            reachable(
                "unclean_enabled_and_used",
                done(D_UNCLEAN_DYN),
                "an unclean election is written under a dynamically enabled topic config "
                "(TopicUncleanLeaderElectionEnable -> triggerOnlinePartitionStateChange(topic))",
            )
        )
    if config.max_admin_unclean_elections:
        props.append(
            reachable(
                "admin_unclean_election_used",
                done(D_ADMIN_UNCLEAN),
                "an admin's unclean election (kafka-leader-election.sh --election-type unclean: "
                "ElectLeaders with allowUnclean = true) elects a leader outside the ISR",
            )
        )
    if config.liveness:
        l1 = leaderless_with_live_isr(sys)
        props.append(
            eventually(
                "leader_eventually_elected",
                _not(l1),
                "L1: with an active controller, a partition with an up ISR replica eventually has an up "
                "leader (seeds 002, 003 triggerOnlinePartitionStateChange)",
                trigger=l1,
                fairness=fair,
            )
        )
        if config.max_topic_deletions:
            l2 = deletion_stuck(sys)
            props.append(
                eventually(
                    "deletion_eventually_completes",
                    _not(l2),
                    "L2: a topic queued for deletion is eventually gone while all its replicas' brokers "
                    "are up (seed 001: resumed on broker startup)",
                    trigger=l2,
                    fairness=fair,
                )
            )
        props.append(
            eventually(
                "controller_eventually_elected",
                _not(no_controller),
                "L3: while some broker runs with a session, eventually some broker is the active "
                "controller (seed 004 elect, Reelect)",
                trigger=no_controller,
                fairness=fair,
            )
        )
        if config.max_reassignments:
            l4 = reassignment_stuck(sys)
            props.append(
                eventually(
                    "reassignment_eventually_completes",
                    _not(l4),
                    "L4: a reassignment whose new replicas are up eventually completes (seed 001 分区副本迁移)",
                    trigger=l4,
                    fairness=fair,
                )
            )
    return props


def sliced_properties(config: ControllerConfig) -> list[Property]:
    """:func:`properties` with the slices each reads declared (``controller_slices.py``), for
    the serial search's incremental checking (issue 56).

    >>> any(p.slices for p in sliced_properties(ControllerConfig()))
    True
    """
    from invariants.controller_slices import with_slices  # it imports model, not this module

    return with_slices(properties(config))


SPEC = ModelSpec(
    name="controller",
    summary="ZooKeeper-based Kafka controller: ZooKeeper, election and fencing, brokers, state machines, "
    "leader election, replication",
    config_cls=ControllerConfig,
    build=build,
    properties=sliced_properties,
)
