"""The state records: the ZooKeeper tree (``Zk``, ``PartZ``), each broker (``Node``: process,
ZooKeeper session and queues, controller instance with its ``Ctx``, replicas ``Rep``) and the
whole system (``State``), plus the ``D_*`` bits of workflows completed.

Every record is an immutable ``NamedTuple`` of ints, bools, enums and tuples, so a state has
one canonical encoding (``explorer.encoding``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from explorer.speedups import install_fast_replace
from model.state_machines import PartitionState, ReplicaState


class PartZ(NamedTuple):
    """``/brokers/topics/T/partitions/P/state``: LeaderIsrAndControllerEpoch and its zkVersion."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    ctl_epoch: int
    version: int


class Zk(NamedTuple):
    """The ZooKeeper server's data tree (only the znodes the model uses)."""

    controller: tuple[int, int] | None  #: /controller: (broker id, owner session)
    epoch: int  #: /controller_epoch data
    epoch_version: int  #: /controller_epoch zkVersion
    brokers: tuple[tuple[int, int] | None, ...]  #: /brokers/ids/<id>: (owner session, broker epoch)
    parts: tuple[PartZ | None, ...]  #: partition state znodes
    #: /isr_change_notification's sequential children, one per leader ISR change: (partition, the
    #: zkVersion that change wrote), which names it as its sequence number does, in sorted order
    isr_changes: tuple[tuple[int, int], ...]
    next_session: int
    czxids: tuple[int, ...]  #: per broker: the broker epoch of its last registration
    created: int = 0  #: topics created after start (``topics_created_later``) so far, in order
    ar: tuple[tuple[int, ...], ...] = ()  #: /brokers/topics/<t> assignments per partition (admin only)
    expanded: int = 0  #: topics whose added partitions the admin wrote (``partitions_added_later``)
    delete_topics: tuple[int, ...] = ()  #: children of /admin/delete_topics
    deletes: int = 0  #: deletions the admin requested so far
    gone: tuple[int, ...] = ()  #: topics deleted (/brokers/topics/<t> removed)
    reassign: tuple[tuple[int, tuple[int, ...]], ...] = ()  #: /admin/reassign_partitions: (p, RAR)
    reassigns: int = 0  #: reassignments the admin requested so far
    preferred: tuple[int, ...] = ()  #: /admin/preferred_replica_election partitions
    preferreds: int = 0  #: preferred elections the admin requested so far
    unclean_dyn: tuple[int, ...] = ()  #: topics whose unclean.leader.election.enable was set dynamically
    admin_elections: int = 0  #: admin-triggered unclean elections (ElectLeaders) requested so far


class Ctx(NamedTuple):
    """``ControllerContext`` of an active controller."""

    epoch: int
    epoch_version: int
    live: tuple[int, ...]  #: per broker: its broker epoch if live, else 0
    leaders: tuple[PartZ | None, ...]  #: partitionLeadershipInfo
    pstates: tuple[PartitionState, ...]
    rstates: tuple[tuple[ReplicaState, ...], ...]  #: per partition, per replica slot
    ar: tuple[tuple[int, ...], ...] = ()  #: partitionReplicaAssignment
    deleting: tuple[int, ...] = ()  #: topicsToBeDeleted
    ineligible: tuple[int, ...] = ()  #: topicsIneligibleForDeletion
    reassigning: tuple[tuple[int, tuple[int, ...]], ...] = ()  #: partitionsBeingReassigned: (p, RAR)
    shutting: tuple[int, ...] = ()  #: shuttingDownBrokerIds


class Rep(NamedTuple):
    """A broker's replica of one partition (data plane)."""

    leader: int  #: the leader it knows (-1: none / not yet told)
    epoch: int  #: the leader epoch it knows (-1: none)
    isr: tuple[int, ...]  #: the ISR, when it leads
    zkv: int  #: cached partition zkVersion, when it leads
    log: tuple[int, ...]  #: records as the leader epoch they were appended in
    hw: int
    known: tuple[int, ...]  #: when it leads: each broker's last fetch offset
    pend: bool  #: an ISR update of this leader is in flight
    ar: tuple[int, ...] = ()  #: when it leads: the assigned replicas of its LeaderAndIsr (admin only)


class Node(NamedTuple):
    """One broker: process, ZooKeeper client session, controller instance, replicas."""

    alive: bool
    session: int  #: its current ZooKeeper session (0: none)
    expired: bool  #: the server expired ``session``; the client has not noticed yet
    bepoch: int  #: its broker epoch (czxid of its registration) as it knows it (0: unknown)
    zk_out: tuple[tuple, ...]  #: requests of ``session`` not yet applied by the server
    zk_in: tuple[tuple, ...]  #: responses not yet received
    ctl_watch: bool  #: watch on /controller registered
    watch: bool  #: controller watches (/brokers/ids, /isr_change_notification) registered
    active_id: int  #: activeControllerId
    ctx: Ctx | None  #: the context (state machines started) while it acts as controller
    events: tuple[Any, ...]  #: controller event queue (``events.py``)
    pending: tuple | None  #: continuation waiting for a ZooKeeper response
    seen_epoch: int  #: highest controller epoch its replica manager accepted
    reps: tuple[Rep, ...]
    cs: int = 0  #: controlled shutdown: 0 none, 2 answered, 3 + c: requested at controller c
    #: MetadataCache (``send_update_metadata`` only; empty until the first UpdateMetadata of this
    #: process): the alive brokers, and per partition (leader, leader epoch, ISR) or None
    mc_live: tuple[int, ...] = ()
    mc_parts: tuple[tuple[int, int, tuple[int, ...]] | None, ...] = ()


#: a broker process's memory when it starts, and so after it crashes: no broker epoch, ZooKeeper
#: responses, watches, controller, events, continuation, controlled shutdown or metadata cache
FRESH_PROCESS: dict[str, Any] = {
    "bepoch": 0,
    "zk_in": (),
    "ctl_watch": False,
    "watch": False,
    "active_id": -1,
    "ctx": None,
    "events": (),
    "pending": None,
    "seen_epoch": 0,
    "cs": 0,
    "mc_live": (),
    "mc_parts": (),
}


class State(NamedTuple):
    """The whole system."""

    zk: Zk
    nodes: tuple[Node, ...]
    chans: tuple[tuple[tuple, ...], ...]  #: controller requests, index sender * brokers + dest
    acked: tuple[tuple[int, int, int], ...]  #: acknowledged records (partition, offset, epoch)
    produced: int
    crashes: int
    restarts: int
    expiries: int
    invalid: tuple[int, ...]  #: first invalid state-machine transition (machine, partition, from, to)
    history: int  #: bit 0: an unclean election was written; bit 1+p: partition p had no leader
    done: int = 0  #: admin workflows completed at least once (``D_*`` bits)
    shutdowns: int = 0  #: controlled shutdowns requested
    #: how often each plug-in fault (``model/controller/faults``) fired, in registry order; () when none did
    spent: tuple[int, ...] = ()


# a faster ``_replace`` (in C when explorer._speedups is built) for the state records
for _record in (PartZ, Zk, Ctx, Rep, Node, State):
    install_fast_replace(_record)
del _record


def leo(r: Rep) -> int:
    """Log end offset of a replica.

    >>> leo(Rep(-1, -1, (), 0, (1, 1), 0, (), False))
    2
    """
    return len(r.log)


def is_active(s: State, b: int) -> bool:
    """Broker ``b`` acts as controller (its state machines are started).

    >>> from model.controller import ControllerSystem, ControllerConfig
    >>> is_active(ControllerSystem(ControllerConfig(brokers=1, replication_factor=1)).init_states()[0], 0)
    True
    """
    return s.nodes[b].ctx is not None


# State.done bits: an admin workflow completed at least once
D_DELETED, D_ADDED, D_REASSIGNED, D_PREFERRED, D_SHUTDOWN, D_UNCLEAN_DYN, D_AUTO = (1 << i for i in range(7))
# a failover picked up a reassignment in progress / then it completed; a deletion was resumed on
# broker startup / then it completed
D_PICKED_UP, D_RESUMED, D_DEL_RESUME, D_DELETED_AFTER_RESUME = (1 << i for i in range(7, 11))
# an admin-triggered unclean election (allowUnclean = true) elected a leader outside the ISR
D_ADMIN_UNCLEAN = 1 << 11
