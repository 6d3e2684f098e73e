"""The state records: the ZooKeeper tree (``Zk``, ``PartZ``), each broker (``Node``: process,
ZooKeeper session and queues, controller instance with its ``Ctx``, replicas ``Rep``) and the
whole system (``State``), plus the ``D_*`` bits of workflows completed.

Every record is an immutable ``NamedTuple`` of ints, bools, enums and tuples, so a state has
one canonical encoding (``explorer.encoding``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from explorer.speedups import install_fast_new, install_fast_replace, install_memo_hash
from model.controller import ids


class PartZ(NamedTuple):
    """``/brokers/topics/T/partitions/P/state``: LeaderIsrAndControllerEpoch and its zkVersion."""

    leader: ids.BrokerId
    leader_epoch: ids.Epoch
    isr: ids.BrokerList
    ctl_epoch: ids.Epoch
    version: ids.ZkVersion


class Zk(NamedTuple):
    """The ZooKeeper server's data tree (only the znodes the model uses)."""

    controller: ids.ControllerZnode | None  #: /controller: (broker id, owner session)
    epoch: ids.Epoch  #: /controller_epoch data
    epoch_version: ids.ZkVersion  #: /controller_epoch zkVersion
    brokers: ids.BrokerZnodes  #: /brokers/ids/<id>: (owner session, broker epoch)
    parts: ids.PerPartitionZnode  #: partition state znodes
    #: /isr_change_notification's sequential children, one per leader ISR change: (partition, the
    #: zkVersion that change wrote), which names it as its sequence number does, in sorted order
    isr_changes: ids.IsrChangeSeqs
    next_session: ids.Count  #: the next session's number (above the brokers' initial sessions)
    czxids: ids.PerBroker  #: per broker: the broker epoch of its last registration
    created: ids.Count = 0  #: topics created after start (``topics_created_later``) so far, in order
    ar: ids.Assignments = ()  #: /brokers/topics/<t> assignments per partition (admin only)
    expanded: ids.Count = 0  #: topics whose added partitions the admin wrote (``partitions_added_later``)
    delete_topics: ids.TopicSet = ()  #: children of /admin/delete_topics
    deletes: ids.Count = 0  #: deletions the admin requested so far
    gone: ids.TopicSet = ()  #: topics deleted (/brokers/topics/<t> removed)
    reassign: ids.Reassignments = ()  #: /admin/reassign_partitions: (p, RAR)
    reassigns: ids.Count = 0  #: reassignments the admin requested so far
    preferred: ids.PartitionSet = ()  #: /admin/preferred_replica_election partitions
    preferreds: ids.Count = 0  #: preferred elections the admin requested so far
    unclean_dyn: ids.TopicList = ()  #: topics whose unclean.leader.election.enable was set dynamically
    admin_elections: ids.Count = 0  #: admin-triggered unclean elections (ElectLeaders) requested so far


class Ctx(NamedTuple):
    """``ControllerContext`` of an active controller."""

    epoch: ids.Epoch
    epoch_version: ids.ZkVersion
    live: ids.PerBroker  #: per broker: its broker epoch if live, else 0
    leaders: ids.PerPartitionZnode  #: partitionLeadershipInfo
    pstates: ids.PerPartition  #: a ``PartitionState`` per partition
    rstates: ids.PerPartition  #: per partition, a ``ReplicaState`` per replica slot
    ar: ids.Assignments = ()  #: partitionReplicaAssignment
    deleting: ids.TopicSet = ()  #: topicsToBeDeleted
    ineligible: ids.TopicSet = ()  #: topicsIneligibleForDeletion
    reassigning: ids.Reassignments = ()  #: partitionsBeingReassigned: (p, RAR)
    shutting: ids.BrokerSet = ()  #: shuttingDownBrokerIds


class Rep(NamedTuple):
    """A broker's replica of one partition (data plane)."""

    leader: ids.BrokerId  #: the leader it knows (-1: none / not yet told)
    epoch: ids.Epoch  #: the leader epoch it knows (-1: none)
    isr: ids.BrokerList  #: the ISR, when it leads
    zkv: ids.ZkVersion  #: cached partition zkVersion, when it leads
    log: ids.Epochs  #: records as the leader epoch they were appended in
    hw: ids.Offset
    known: ids.PerBroker  #: when it leads: each broker's last fetch offset
    pend: ids.Flag  #: an ISR update of this leader is in flight
    ar: ids.BrokerList = ()  #: when it leads: the assigned replicas of its LeaderAndIsr (admin only)


class Node(NamedTuple):
    """One broker: process, ZooKeeper client session, controller instance, replicas."""

    alive: ids.Flag
    session: ids.Session  #: its current ZooKeeper session (0: none)
    expired: ids.Flag  #: the server expired ``session``; the client has not noticed yet
    bepoch: ids.Epoch  #: its broker epoch (czxid of its registration) as it knows it (0: unknown)
    zk_out: ids.ZkRequests  #: requests of ``session`` not yet applied by the server
    zk_in: ids.ZkResponses  #: responses not yet received
    ctl_watch: ids.Flag  #: watch on /controller registered
    watch: ids.Flag  #: controller watches (/brokers/ids, /isr_change_notification) registered
    active_id: ids.BrokerId  #: activeControllerId
    ctx: Ctx | None  #: the context (state machines started) while it acts as controller
    events: ids.Events  #: controller event queue (``events.py``)
    pending: ids.Continuation | None  #: continuation waiting for a ZooKeeper response
    seen_epoch: ids.Epoch  #: highest controller epoch its replica manager accepted
    reps: ids.Replicas  #: its replica (``Rep``) of each partition
    cs: ids.ShutdownRequest = 0  #: controlled shutdown: 0 none, 2 answered, 3 + c: requested at controller c
    #: MetadataCache (``send_update_metadata`` only; empty until the first UpdateMetadata of this
    #: process): the alive brokers, and per partition (leader, leader epoch, ISR) or None
    mc_live: ids.BrokerSet = ()
    mc_parts: ids.MetadataCache = ()


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
    nodes: ids.Nodes  #: a ``Node`` per broker
    chans: ids.Channels  #: controller requests, index sender * brokers + dest
    acked: ids.AckedRecords  #: acknowledged records (partition, offset, epoch)
    produced: ids.Count
    crashes: ids.Count
    restarts: ids.Count
    expiries: ids.Count
    invalid: ids.InvalidTransition  #: first invalid state-machine transition (machine, partition, from, to)
    history: ids.HistoryBits  #: bit 0: an unclean election was written; bit 1+p: partition p had no leader
    done: ids.Bits = 0  #: admin workflows completed at least once (``D_*`` bits)
    shutdowns: ids.Count = 0  #: controlled shutdowns requested
    #: how often each plug-in fault (``model/controller/faults``) fired, in registry order; () when none did
    spent: ids.Counts = ()


# a faster ``_replace`` and constructor (in C when explorer._speedups is built) for the state records, and for
# all but ``State`` (new in every step) a hash and an encoding remembered per record object
for _record in (PartZ, Zk, Ctx, Rep, Node, State):
    install_fast_replace(_record)
    install_fast_new(_record)
for _record in (PartZ, Zk, Ctx, Rep, Node):
    install_memo_hash(_record)
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

#: the state records, each field of which declares its kind (``ids.py``: what the symmetry
#: renamer, ``renamer.py``, renames it by, or that it holds no id)
STATE_RECORDS = (PartZ, Zk, Ctx, Rep, Node, State)
#: each state record's fields' kinds, in field order (checked when this module is imported)
FIELD_KINDS: dict[type, tuple[str, ...]] = {
    r: ids.check_state_record(r, frozenset(c.__name__ for c in STATE_RECORDS)) for r in STATE_RECORDS
}
