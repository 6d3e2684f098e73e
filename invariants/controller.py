"""Properties of the controller model (``model/controller.py``).

Controller guarantees (seed 004's 2.x ``elect``: "每次的控制器变更都会使此epoch增1 ... 通过epoch
来保证操作的唯一性"; seed 001: "Kafka 通过 controller_epoch 来保证 Controller 的唯一性"; seed 003's
``doElectLeaderForPartitions`` epoch check and zkVersion-conditional update) and partition
guarantees (seeds 002 and 003: the leader is chosen from the live ISR unless unclean
election is enabled; ``doRemoveReplicasFromIsr`` keeps the ISR's last member; leader epochs
rise with every election) are checked as ``always`` and ``transition`` properties;
``reachable`` witnesses show that the interesting scenarios happen at all.

Each property is shown able to fail by a variant or a mutant (``tests/test_controller.py``).
"""

from __future__ import annotations

from typing import Any

from explorer.core import ModelSpec, Property, always, reachable, transition
from model.controller import (
    MUTANTS,
    Q_DELETE_CTL,
    Q_DELETE_ISR_CHANGES,
    Q_UPDATE_ISR,
    Q_WRITE_PARTS,
    WRITES,
    ControllerConfig,
    ControllerSystem,
    Deliver,
    SessionExpire,
    State,
    ZkServe,
)
from model.state_machines import PartitionState

__all__ = ["SPEC", "build", "properties"]


def build(config: ControllerConfig) -> ControllerSystem:
    """The transition system of ``config``.

    >>> build(ControllerConfig(brokers=2)).nb
    2
    """
    return ControllerSystem(config)


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
    return t.zk.epoch >= s.zk.epoch


def controller_epoch_won_once(s: State, a: Any, t: State) -> bool:
    """Every write of ``/controller_epoch`` raises it by exactly one (each value is won once)."""
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
    c = s.zk.controller
    if c is None or t.zk.controller == c:
        return True
    if isinstance(a, SessionExpire):
        return a.session == c[1]
    if isinstance(a, ZkServe) and a.req[0] == Q_DELETE_CTL:
        return a.broker == c[0] and a.session == c[1]
    return True


def zk_writes_fenced(s: State, a: Any, t: State) -> bool:
    """No ZooKeeper write of a controller lands unless its epoch is the current one."""
    if not isinstance(a, ZkServe):
        return True
    op = a.req[0]
    if op == Q_WRITE_PARTS:
        if t.zk.parts == s.zk.parts:
            return True
        return a.req[3] == s.zk.epoch
    if op == Q_DELETE_ISR_CHANGES:
        if t.zk.isr_changes == s.zk.isr_changes:
            return True
        return a.req[3] == s.zk.epoch
    return True


def zk_writes_fenced_applies(s: State, a: Any, t: State) -> bool:
    return isinstance(a, ZkServe) and a.req[0] in (Q_WRITE_PARTS, Q_DELETE_ISR_CHANGES)


def brokers_reject_stale_controller_epoch(s: State, a: Any, t: State) -> bool:
    """A broker never applies a controller request older than the newest controller epoch it saw."""
    if not isinstance(a, Deliver):
        return True
    n = s.nodes[a.dest]
    return a.msg[1] >= n.seen_epoch or t.nodes[a.dest] == n


def brokers_reject_stale_broker_epoch(s: State, a: Any, t: State) -> bool:
    """A broker never applies a controller request addressed to an earlier incarnation of itself."""
    if not isinstance(a, Deliver):
        return True
    n = s.nodes[a.dest]
    return a.msg[2] >= n.bepoch or t.nodes[a.dest] == n


def _is_deliver(s: State, a: Any, t: State) -> bool:
    return isinstance(a, Deliver)


# -- partitions ---------------------------------------------------------------------------


def isr_valid(sys: ControllerSystem):
    reps = sys.replicas

    def isr_nonempty_subset(s: State) -> bool:
        """Every partition's ISR (in ZooKeeper) is non-empty and a subset of its assigned replicas."""
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


def leader_epoch_monotonic(s: State, a: Any, t: State) -> bool:
    """A partition's leader epoch and zkVersion never decrease, and a new leader gets a new epoch."""
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
    nodes = s.nodes
    for p in range(len(s.zk.parts)):
        seen = set()
        for b, n in enumerate(nodes):
            if n.alive:
                r = n.reps[p]
                if r.leader == b:
                    if r.epoch in seen:
                        return False
                    seen.add(r.epoch)
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
        ),
        transition(
            "controller_epoch_won_once",
            controller_epoch_won_once,
            "each controller epoch value is won once: every write raises it by one "
            "(seed 004 registerControllerAndIncrementControllerEpoch)",
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
        ),
        transition(
            "zk_writes_fenced",
            zk_writes_fenced,
            "no ZooKeeper write lands from a controller whose epoch is not current "
            "(seed 003 doElectLeaderForPartitions; KAFKA-6082 epoch zkVersion check)",
            applies=zk_writes_fenced_applies,
        ),
        transition(
            "brokers_reject_stale_controller_epoch",
            brokers_reject_stale_controller_epoch,
            "brokers never apply a request with a stale controller epoch (seed 001: 被认定为无效的请求)",
            applies=_is_deliver,
        ),
        transition(
            "brokers_reject_stale_broker_epoch",
            brokers_reject_stale_broker_epoch,
            "brokers never apply a request addressed to an earlier incarnation (KIP-380 broker epoch)",
            applies=_is_deliver,
        ),
        always(
            "leader_in_isr",
            leader_in_isr(sys),
            "with unclean election off the leader is in the ISR (seeds 002, 003 offlinePartitionLeaderElection)",
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
    ]
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
    if config.max_session_expiries > 0:
        props.append(
            reachable(
                "expiry_with_write_in_flight",
                lambda s: any(
                    n.expired and any(q[0] in WRITES or q[0] == Q_UPDATE_ISR for q in n.zk_out)
                    for n in s.nodes
                ),
                "a ZooKeeper session expires with a write of its client in flight",
            )
        )
    if config.max_session_expiries + config.max_restarts > 0 and faults:
        props.append(
            reachable(
                "partition_offline_and_back",
                lambda s: any(
                    (s.history >> (p + 1)) & 1
                    and s.zk.parts[p] is not None
                    and s.zk.parts[p].leader >= 0
                    and s.nodes[s.zk.parts[p].leader].reps[p].leader == s.zk.parts[p].leader
                    for p in range(np_)
                ),
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
    if any(config.unclean(p) for p in range(np_)):
        props.append(
            reachable(
                "unclean_election", lambda s: bool(s.history & 1), "an unclean leader election is written"
            )
        )
    return props


SPEC = ModelSpec(
    name="controller",
    summary="ZooKeeper-based Kafka controller: ZooKeeper, election and fencing, brokers, state machines, "
    "leader election, replication",
    config_cls=ControllerConfig,
    build=build,
    properties=properties,
)

_ = MUTANTS
