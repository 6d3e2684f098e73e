"""Coverage labels and sequence-diagram arrows of the controller model.

The controller's ``successors_labelled`` yields, with every transition, the labels the
step's controller code recorded while it ran (``_W.labels``: state-machine transitions
valid and invalid, election outcomes) plus the ZooKeeper writes this module derives
from the step (:func:`zk_labels`). Label sections (first element of a label):

* ``("state_machines", "partition" | "replica", "From->To")``: a valid transition taken
  (``handleStateChanges`` of one partition or replica);
* ``("invalid_transitions", "partition" | "replica", "From->To")``: an attempted
  transition the table forbids (``logInvalidTransition``);
* ``("elections", strategy, outcome)``: ``offline`` (OfflinePartitionLeaderElection-
  Strategy), ``reassign``, ``preferred``, ``controlled_shutdown`` (seed 002's other three
  strategies) or ``new_partition`` (initializeLeaderAndIsrForPartitions), with outcome
  ``isr`` (leader from the ISR / the live assigned replicas), ``unclean`` or ``none``;
* ``("zk_writes", path, outcome)``: a write request the ZooKeeper server applied, by
  znode path, ``changed`` when the znode changed and ``unchanged`` when the request was
  rejected (BadVersion, NodeExists, a fenced multi) or changed nothing; an admin's topic
  create is ``changed``; ephemerals a session expiry deletes are ``expired``.

Example
-------
>>> from model.controller import ControllerConfig, ControllerSystem
>>> sys = ControllerSystem(ControllerConfig(brokers=2, max_restarts=0, max_session_expiries=0))
>>> s = sys.init_states()[0]
>>> [(str(a), labels) for a, _, labels in sys.successors_labelled(s)][0]
('broker 0: crashes', ())
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from explorer.core import EFFECTS_ATTR, effects_of
from model.controller import messages as msg
from model.controller.cluster import Cluster
from model.controller.effects import (
    Effect,
    delivered_message_of,
    processed_event_of,
    zk_request_of,
    zk_response_of,
)
from model.controller.messages import WRITES
from model.controller.state import State, Zk
from model.state_machines import StateMachine, TableVersion, transition_graph

__all__ = [
    "ZK_LABELLED_BY_TYPE",
    "ZK_WRITING",
    "expected_labels",
    "partition_path",
    "report_layout",
    "sequence_arrow",
    "state_machine_graphs",
    "zk_labels",
    "znode_names",
]

_WRITE_OPS = WRITES | {msg.RegisterBroker, msg.UpdateIsr}
ISR_CHANGE = "/isr_change_notification"
DELETE_TOPICS = "/admin/delete_topics"
REASSIGN = "/admin/reassign_partitions"
PREFERRED = "/admin/preferred_replica_election"
#: the effects of the steps :func:`zk_labels` can label (every other step writes nothing to
#: ZooKeeper): a ZooKeeper request applied, a session expired, an admin client's request
ZK_WRITING = frozenset({Effect.APPLIES_ZK_REQUEST, Effect.EXPIRES_SESSION, Effect.ADMIN_REQUEST})


class _ZkLabelledByType(dict[type, bool]):
    """Action class -> whether :func:`zk_labels` can label its steps (it declares one of
    :data:`ZK_WRITING`), derived from the class's effects the first time it is looked up.

    >>> from model.controller.actions import Crash, ZkServe
    >>> ZK_LABELLED_BY_TYPE[ZkServe], ZK_LABELLED_BY_TYPE[Crash]
    (True, False)
    """

    def __missing__(self, tp: type) -> bool:
        got = self[tp] = not ZK_WRITING.isdisjoint(effects_of(tp))
        return got


#: the hot path's lookup (``ControllerSystem.successors_labelled``): ``ZK_LABELLED_BY_TYPE[type(a)]``
ZK_LABELLED_BY_TYPE = _ZkLabelledByType()


@lru_cache(maxsize=2)
def state_machine_graphs(replica_table: str = "later-2.x") -> dict[str, Any]:
    """The two tables the controller model uses, as networkx graphs by machine name.

    The partition table is seed 003's; the replica table is the configured one (``replica_table``):
    by default the later 2.x one, whose extra edge OfflineReplica -> ReplicaDeletionIneligible
    topic deletion needs (seed 001); ``printed``: the table seeds 000 and 001 print.

    >>> g = state_machine_graphs()
    >>> g["replica"].has_edge("OfflineReplica", "ReplicaDeletionIneligible")
    True
    """
    return {
        "partition": transition_graph(StateMachine.PARTITION),
        "replica": transition_graph(
            StateMachine.REPLICA,
            TableVersion.KAFKA_2_X if replica_table == "printed" else TableVersion.KAFKA_LATER_2_X,
        ),
    }


@lru_cache(maxsize=256)
def partition_path(p: int, ppt: int) -> str:
    """The state znode of partition ``p`` (topic-major, ``ppt`` partitions per topic).

    >>> partition_path(3, 2)
    '/brokers/topics/1/partitions/1/state'
    """
    return f"/brokers/topics/{p // ppt}/partitions/{p % ppt}/state"


def _ne(x: Any, y: Any) -> bool:
    """``x != y``, without comparing an object with itself."""
    return x is not y and x != y


def _topic_changed(sys: Cluster, t: int, a: Zk, b: Zk) -> bool:
    """Whether ``/brokers/topics/<t>`` differs between two ZooKeeper trees (created or deleted,
    its assignment rewritten, or partitions added to it)."""
    if not (
        _ne(a.created, b.created) or _ne(a.gone, b.gone) or _ne(a.ar, b.ar) or _ne(a.expanded, b.expanded)
    ):
        return False
    ppt = sys.ppt
    return 0 <= t < sys.cfg.topics and (
        (t in a.gone) != (t in b.gone)
        or a.ar[t * ppt : (t + 1) * ppt] != b.ar[t * ppt : (t + 1) * ppt]
        or (b.created > a.created and t == sys.topics_at_start + a.created)
        or (b.expanded > a.expanded and t == a.expanded)
    )


def _changed(sys: Cluster, a: Zk, b: Zk) -> set[str]:
    """The znode paths whose data or existence differs between two ZooKeeper trees."""
    out: set[str] = set()
    u: Any  # each field's old and new value in turn (compared by identity first: most are shared)
    v: Any
    if (u := a.controller) is not (v := b.controller) and u != v:
        out.add("/controller")
    if a.epoch != b.epoch or a.epoch_version != b.epoch_version:
        out.add("/controller_epoch")
    if (u := a.brokers) is not (v := b.brokers) and u != v:
        out.update(f"/brokers/ids/{i}" for i, (x, y) in enumerate(zip(u, v)) if x != y)
    if (u := a.parts) is not (v := b.parts) and u != v:
        # not (x, y) again: compiled by mypyc, a name keeps the type of its first binding (a broker's)
        out.update(partition_path(p, sys.ppt) for p, (zx, zy) in enumerate(zip(u, v)) if zx != zy)
    if (u := a.isr_changes) is not (v := b.isr_changes) and u != v:
        out.add(ISR_CHANGE)
    if a.created != b.created or a.gone != b.gone or a.ar != b.ar or a.expanded != b.expanded:
        out.update(f"/brokers/topics/{t}" for t in range(sys.cfg.topics) if _topic_changed(sys, t, a, b))
    if (u := a.delete_topics) is not (v := b.delete_topics) and u != v:
        out.update(f"{DELETE_TOPICS}/{t}" for t in set(u) ^ set(v))
    if (u := a.reassign) is not (v := b.reassign) and u != v:
        out.add(REASSIGN)
    if (u := a.preferred) is not (v := b.preferred) and u != v:
        out.add(PREFERRED)
    if (u := a.unclean_dyn) is not (v := b.unclean_dyn) and u != v:
        out.update(f"/config/topics/{t}" for t in set(u) ^ set(v))
    return out


def _requested(sys: Cluster, broker: int, req: Any) -> list[str]:
    match req:
        case msg.RegisterBroker():
            return [f"/brokers/ids/{broker}"]
        case msg.RegisterControllerAndIncrementControllerEpoch():
            return ["/controller", "/controller_epoch"]
        case msg.CreateControllerPath() | msg.DeleteControllerPath():
            return ["/controller"]
        case msg.IncrementControllerEpoch():
            return ["/controller_epoch"]
        case msg.UpdateLeaderAndIsr(writes=writes):
            return [partition_path(p, sys.ppt) for p, _ in writes]
        case msg.DeleteIsrChangeNotifications():
            return [ISR_CHANGE]
        case msg.UpdateIsr(partition=p):
            return [partition_path(p, sys.ppt), ISR_CHANGE]
        case msg.DeleteTopicDeletions(topics=topics):
            return [f"{DELETE_TOPICS}/{t}" for t in topics]
        case msg.DeleteTopicZNode(partition=p) if p >= 0:
            return [partition_path(p, sys.ppt)]
        case msg.DeleteTopicZNode(topic=t):
            if sys.cfg.recursive_topic_deletion:
                return [f"/brokers/topics/{t}"]
            return [f"/brokers/topics/{t}", f"{DELETE_TOPICS}/{t}"]
        case msg.SetReplicaAssignment(partition=p):
            return [f"/brokers/topics/{p // sys.ppt}"]
        case msg.RemovePartitionsFromReassignment():
            return [REASSIGN]
        case msg.DeletePreferredReplicaElection():
            return [PREFERRED]
    return []  # pragma: no cover - not a write


_W = "zk_writes"


def _label(path: str, changed: bool) -> tuple[str, str, str]:
    return (_W, path, "changed" if changed else "unchanged")


@lru_cache(maxsize=64)
def _broker_path(b: int) -> str:
    return f"/brokers/ids/{b}"


def _label_writes(sys: Cluster, b: int, req: Any, x: Zk, y: Zk) -> tuple[tuple[str, str, str], ...] | None:
    """The labels of write request ``req`` of broker ``b`` that took ZooKeeper from ``x`` to
    ``y``: each znode it writes (:func:`_requested`'s paths, in its order), ``changed`` where
    that znode differs (:func:`_changed`'s test of that one path); None for a request type this
    table does not know (:func:`zk_labels` then takes the general way)."""
    tp = type(req)
    if tp is msg.RegisterBroker:
        was, now = x.brokers[b], y.brokers[b]  # a broker znode (not a PartZ, as u and v below)
        return (_label(_broker_path(b), was is not now and was != now),)
    if tp is msg.UpdateIsr:
        p = req.partition
        u, v = x.parts[p], y.parts[p]
        i, j = x.isr_changes, y.isr_changes
        return (
            _label(partition_path(p, sys.ppt), u is not v and u != v),
            _label(ISR_CHANGE, i is not j and i != j),
        )
    if tp is msg.RegisterControllerAndIncrementControllerEpoch:
        return (
            _label("/controller", _ne(x.controller, y.controller)),
            _label("/controller_epoch", x.epoch != y.epoch or x.epoch_version != y.epoch_version),
        )
    if tp is msg.UpdateLeaderAndIsr:
        ppt, xp, yp = sys.ppt, x.parts, y.parts
        return tuple(
            _label(partition_path(p, ppt), xp[p] is not yp[p] and xp[p] != yp[p]) for p, _ in req.writes
        )
    if tp is msg.DeleteIsrChangeNotifications:
        return (_label(ISR_CHANGE, _ne(x.isr_changes, y.isr_changes)),)
    if tp is msg.CreateControllerPath or tp is msg.DeleteControllerPath:
        return (_label("/controller", _ne(x.controller, y.controller)),)
    if tp is msg.IncrementControllerEpoch:
        return (_label("/controller_epoch", x.epoch != y.epoch or x.epoch_version != y.epoch_version),)
    return None


#: action class -> how :func:`zk_labels` labels its steps: (it applies a ZooKeeper request,
#: the outcome of every znode it changed otherwise: ``changed`` for an admin's request,
#: ``expired`` for a session expiry, None for any other step)
_HOW: dict[type, tuple[bool, str | None]] = {}


def _how(tp: type) -> tuple[bool, str | None]:
    done: frozenset[Effect] = getattr(tp, EFFECTS_ATTR, frozenset())
    tail = (
        "changed" if Effect.ADMIN_REQUEST in done else "expired" if Effect.EXPIRES_SESSION in done else None
    )
    how = _HOW[tp] = (Effect.APPLIES_ZK_REQUEST in done, tail)
    return how


def zk_labels(sys: Cluster, s: State, a: Any, t: State) -> tuple[tuple[str, str, str], ...]:
    """The ``zk_writes`` labels of one transition (see the module docstring).

    >>> from model.controller import ControllerConfig, ControllerSystem
    >>> sys = ControllerSystem(ControllerConfig(brokers=1, replication_factor=1, topics_created_later=1))
    >>> s = sys.cold_state()
    >>> a, t = next(iter(sys.successors(s)))
    >>> str(a), zk_labels(sys, s, a, t)
    ('ZooKeeper: applies create /brokers/ids/<id> (ephemeral) from session 1 (broker 0)', (('zk_writes', '/brokers/ids/0', 'changed'),))
    """
    tp = type(a)
    how = _HOW.get(tp)
    if how is None:
        how = _how(tp)
    applies, tail = how
    x, y = s.zk, t.zk
    if applies and (req := a.req) is not None:
        if type(req) not in _WRITE_OPS:
            return ()
        got = _label_writes(sys, a.broker, req, x, y)
        if got is not None:
            return got
        changed = _changed(sys, x, y) if x != y else set()
        return tuple(_label(path, path in changed) for path in _requested(sys, a.broker, req))
    if tail is None or x is y or x == y:
        return ()
    return tuple((_W, path, tail) for path in sorted(_changed(sys, x, y)))


def expected_labels(sys: Cluster) -> list[tuple[str, ...]]:
    """The labels a complete coverage hits: every edge of both state machines' tables, and
    every outcome of each election strategy (``unclean`` only where unclean election is on).

    >>> from model.controller import ControllerConfig, ControllerSystem
    >>> labels = expected_labels(ControllerSystem(ControllerConfig()))
    >>> len([x for x in labels if x[0] == "state_machines"]), ("elections", "offline", "unclean") in labels
    (22, False)
    """
    out: list[tuple[str, ...]] = []
    for name, graph in state_machine_graphs(str(sys.cfg.replica_table)).items():
        for u, v in graph.edges:
            out.append(("state_machines", name, f"{u}->{v}"))
    cfg = sys.cfg
    unclean = cfg.unclean_leader_election or bool(cfg.unclean_topics) or cfg.max_unclean_enables > 0
    for outcome in ("isr", "unclean", "none") if unclean else ("isr", "none"):
        out.append(("elections", "offline", outcome))
    for outcome in ("isr", "none"):
        out.append(("elections", "new_partition", outcome))
    if cfg.max_admin_unclean_elections:
        out += [("elections", "admin_unclean", o) for o in ("isr", "unclean", "none")]
    if cfg.max_reassignments:
        out += [("elections", "reassign", o) for o in ("isr", "none")]
    if cfg.max_preferred_elections or cfg.auto_leader_rebalance:
        out += [("elections", "preferred", o) for o in ("isr", "none")]
    if cfg.max_controlled_shutdowns:
        out += [("elections", "controlled_shutdown", o) for o in ("isr", "none")]
    return out


#: where the report draws each state of the two state machines (centres, px), laid out like
#: the seeds' diagrams
_POSITIONS: dict[str, dict[str, list[int]]] = {
    "partition": {
        "NonExistentPartition": [110, 60],
        "OfflinePartition": [430, 60],
        "NewPartition": [110, 250],
        "OnlinePartition": [430, 250],
    },
    "replica": {
        "NonExistentReplica": [110, 60],
        "ReplicaDeletionSuccessful": [610, 60],
        "NewReplica": [110, 210],
        "OnlineReplica": [360, 210],
        "ReplicaDeletionStarted": [610, 210],
        "OfflineReplica": [360, 360],
        "ReplicaDeletionIneligible": [610, 360],
    },
}


def znode_names(partitions: int, ppt: int) -> list[list[str]]:
    """The step tables' words for the ZooKeeper tree's fields: the znode each one models
    (``explorer.report.layout``'s ``names`` rules, applied to the ZooKeeper column's lines).

    >>> import re
    >>> rules = znode_names(2, 1)
    >>> line = "parts[1].isr: (0, 1) -> (1,)"
    >>> next(re.sub(p, r, line, count=1) for p, r in rules if re.match(p, line))
    '/brokers/topics/1/partitions/0/state isr: (0, 1) -> (1,)'
    """
    rules: list[list[str]] = []
    for p in range(partitions):
        rules += [
            [rf"^parts\[{p}\]\.(\w+)", partition_path(p, ppt) + r" \1"],
            [rf"^parts\[{p}\]", partition_path(p, ppt)],
            [rf"^ar\[{p}\]", f"/brokers/topics/{p // ppt} (partition {p % ppt})"],
        ]
    rules.extend(
        [
            [r"^controller(?=:)", "/controller"],
            [r"^epoch(?=:)", "/controller_epoch"],
            [r"^epoch_version(?=:)", "/controller_epoch zkVersion"],
            [r"^brokers\[(\d+)\]", r"/brokers/ids/\1"],
            [r"^czxids\[(\d+)\]", r"/brokers/ids/\1 czxid"],
            [r"^isr_changes", "/isr_change_notification"],
            [r"^delete_topics", "/admin/delete_topics"],
            [r"^reassign(?=[:\[])", "/admin/reassign_partitions"],
            [r"^preferred(?=[:\[])", "/admin/preferred_replica_election"],
        ]
    )
    return rules


def report_layout(partitions: int = 1, ppt: int = 1) -> dict[str, Any]:
    """How the report draws the controller (``explorer.report.layout`` documents the keys): the
    state machines under Kafka's class names, laid out like the seeds' diagrams; elections and
    ZooKeeper writes as tables; a step table's columns ZooKeeper and one per broker, the
    ZooKeeper tree's fields named by their znodes (``partitions`` in all, ``ppt`` per topic).

    >>> lay = report_layout()
    >>> lay["state_machines"]["partition"]["title"], [t["section"] for t in lay["tables"]]
    ('PartitionStateMachine', ['elections', 'zk_writes'])
    """
    titles = {"partition": "PartitionStateMachine", "replica": "ReplicaStateMachine"}
    return {
        "heading": "Controller coverage",
        "state_machines": {m: {"title": titles[m], "positions": pos} for m, pos in _POSITIONS.items()},
        "tables": [
            {
                "section": "elections",
                "title": "Election outcomes per strategy",
                "row": "strategy",
                "columns": [
                    ["isr", "leader from the ISR"],
                    ["unclean", "unclean (outside the ISR)"],
                    ["none", "no leader"],
                ],
                "legend": "–: no election of this strategy ended so in this run.",
            },
            {
                "section": "zk_writes",
                "title": "ZooKeeper paths written",
                "row": "znode",
                "columns": [
                    ["changed", "writes that changed it"],
                    ["unchanged", "writes rejected / no change"],
                    ["expired", "deleted by session expiry"],
                ],
                "missing": "0",
            },
        ],
        "actors": [[r"zk\.", "ZooKeeper"], [r"nodes\[(\d+)\]\.", r"broker \1"]],
        "names": znode_names(partitions, ppt),
    }


def sequence_arrow(a: Any) -> tuple[str, str, str]:
    """(from actor, to actor, label) of a controller action, for a sequence diagram: its own
    (``arrow()``) or the one of what it does (its effects).

    Actors are ``ZooKeeper``, ``broker <i>``, ``producer`` and ``admin``; a step inside
    one actor is a self-arrow.

    >>> from model.controller.actions import Crash, Deliver
    >>> from model.controller.messages import LeaderAndIsrRequest
    >>> sequence_arrow(Deliver(0, 1, LeaderAndIsrRequest(2, 1, ())))
    ('broker 0', 'broker 1', 'LeaderAndIsr (controller epoch 2)')
    >>> sequence_arrow(Crash(1))
    ('broker 1', 'broker 1', 'crashes')
    """
    arrow = getattr(a, "arrow", None)
    if arrow is not None:  # an action that draws itself (a plug-in fault)
        return arrow()
    if (event := processed_event_of(a)) is not None:
        b = f"broker {a.broker}"
        return b, b, f"controller processes {event.kafka_name}"
    if (req := zk_request_of(a)) is not None:
        return f"broker {a.broker}", "ZooKeeper", req.kafka_call
    if (resp := zk_response_of(a)) is not None:
        return "ZooKeeper", f"broker {a.broker}", "response: " + resp.kafka_call
    if (msg := delivered_message_of(a)) is not None:
        return (
            f"broker {a.sender}",
            f"broker {a.dest}",
            f"{msg.kafka_name} (controller epoch {msg.controller_epoch})",
        )
    done = effects_of(a)
    if Effect.CRASHES_BROKER in done:
        return f"broker {a.broker}", f"broker {a.broker}", "crashes"
    if Effect.RESTARTS_BROKER in done:
        return f"broker {a.broker}", "ZooKeeper", f"restarts: new session {a.session}"
    if Effect.EXPIRES_SESSION in done:
        return "ZooKeeper", f"broker {a.broker}", f"session {a.session} expires"
    if Effect.NOTICES_SESSION_EXPIRY in done:
        return f"broker {a.broker}", "ZooKeeper", f"notices expiry: new session {a.session}"
    if Effect.PRODUCES in done:
        return "producer", f"broker {a.broker}", f"produce to partition {a.partition}"
    if Effect.FETCHES in done:
        return f"broker {a.broker}", f"broker {a.leader}", f"fetch partition {a.partition}"
    if Effect.SHRINKS_ISR in done:
        return f"broker {a.broker}", "ZooKeeper", f"shrink ISR of partition {a.partition} (drop {a.follower})"
    if Effect.ADMIN_ELECTS_LEADERS in done:
        return "admin", f"broker {a.controller}", "ElectLeaders (unclean)"
    if Effect.ADMIN_REQUEST in done:
        return "admin", "ZooKeeper", str(a).removeprefix("admin: ")
    if Effect.FIRES_AUTO_REBALANCE in done:
        b = f"broker {a.broker}"
        return b, b, "scheduler: auto preferred replica election"
    if Effect.REQUESTS_CONTROLLED_SHUTDOWN in done:
        return f"broker {a.broker}", f"broker {a.controller}", "ControlledShutdownRequest"
    if Effect.COMPLETES_SHUTDOWN in done:
        return f"broker {a.broker}", "ZooKeeper", f"stops: closes session {a.session}"
    if Effect.TIME_PASSES in done:
        return "system", "system", "time passes"
    return "system", "system", str(a)
