"""The controller's full state in Kafka's terms, as a tree of ``(label, value, children)``
tuples (``explorer.state_view`` renders it as text, HTML or a diff): ZooKeeper's znodes
with their versions and owners, then each broker (its process and ZooKeeper session, what
its ZooKeeper client has in flight, its controller: ``activeControllerId``, the
``ControllerContext`` with partition leadership and partition and replica states, its event
queue and the continuation it waits on, the requests its ``ControllerChannelManager`` has
queued, its replicas and its metadata cache), then the cluster's counters.

Labels name the znode or the Kafka field and never hold a value, so two trees pair their
nodes by label path (``ControllerSystem.state_tree``).

Example
-------
>>> from model.controller import ControllerConfig, ControllerSystem
>>> sys = ControllerSystem(ControllerConfig(brokers=2))
>>> tree = state_tree(sys, sys.init_states()[0])
>>> [label for label, _, _ in tree[2]]
['ZooKeeper', 'broker 0', 'broker 1', 'cluster']
>>> zk = dict((label, value) for label, value, _ in tree[2][0][2])
>>> zk["/controller"], zk["/controller_epoch"]
('broker 0 (ephemeral, owner session 1)', '1 (zkVersion 1)')
"""

from __future__ import annotations

from typing import Any

from model.controller.state import Ctx, Node, Rep, State
from model.state_machines import PartitionState, ReplicaState

__all__ = ["partition_name", "state_tree"]

#: a node of the tree: (label, value or None, children)
Tree = tuple[str, Any, tuple[Any, ...]]


def partition_name(p: int, ppt: int) -> str:
    """Partition ``p`` as Kafka's ``TopicPartition`` prints it, topics named ``t<index>``.

    >>> partition_name(3, 2)
    't1-1'
    """
    return f"t{p // ppt}-{p % ppt}"


def _t(label: str, value: Any = None, children: tuple[Any, ...] | list[Any] = ()) -> Tree:
    return (label, value, tuple(children))


def _ids(xs: Any) -> str:
    return "(" + ", ".join(str(x) for x in xs) + ")" if len(xs) != 1 else f"({xs[0]},)"


def _lai(z: Any) -> str:
    if z is None:
        return "none"
    return (
        f"leader {z.leader}, leader epoch {z.leader_epoch}, ISR {_ids(z.isr)}, controller epoch {z.ctl_epoch}, "
        f"zkVersion {z.version}"
    )


def _zookeeper(sys: Any, s: State) -> Tree:
    zk, ppt = s.zk, sys.ppt
    c = zk.controller
    kids: list[Tree] = [
        _t("/controller", "absent" if c is None else f"broker {c[0]} (ephemeral, owner session {c[1]})"),
        _t("/controller_epoch", f"{zk.epoch} (zkVersion {zk.epoch_version})"),
        _t(
            "/brokers/ids",
            None,
            [
                _t(
                    f"/brokers/ids/{b}",
                    f"absent (last broker epoch {zk.czxids[b]})"
                    if reg is None
                    else f"ephemeral, owner session {reg[0]}, broker epoch (czxid) {reg[1]}",
                )
                for b, reg in enumerate(zk.brokers)
            ],
        ),
    ]
    topics: list[Tree] = []
    for tp in range(sys.np // ppt if ppt else 0):
        parts = range(tp * ppt, (tp + 1) * ppt)
        gone = tp in zk.gone
        assignment = ", ".join(f"{p % ppt}: {_ids(zk.ar[p] if zk.ar else sys.replicas[p])}" for p in parts)
        present = not gone and any(zk.parts[p] is not None or sys.present(zk, p) for p in parts)
        topics.append(
            _t(
                f"/brokers/topics/{tp}",
                f"assignment {{{assignment}}}" if present else "absent",
                [
                    _t(f"/brokers/topics/{tp}/partitions/{p % ppt}/state", _lai(zk.parts[p]))
                    for p in parts
                    if zk.parts[p] is not None
                ],
            )
        )
    kids.append(_t("/brokers/topics", None, topics))
    kids.append(
        _t(
            "/isr_change_notification",
            ", ".join(f"{partition_name(p, ppt)} at zkVersion {v}" for p, v in zk.isr_changes)
            or "no children",
        )
    )
    admin = [
        ("/admin/delete_topics", ", ".join(f"t{t}" for t in zk.delete_topics)),
        (
            "/admin/reassign_partitions",
            ", ".join(f"{partition_name(p, ppt)} -> {_ids(rar)}" for p, rar in zk.reassign),
        ),
        ("/admin/preferred_replica_election", ", ".join(partition_name(p, ppt) for p in zk.preferred)),
    ]
    kids.append(_t("/admin", None, [_t(label, v or "absent") for label, v in admin]))
    asked = (
        f"topics created {zk.created}, topics given partitions {zk.expanded}, deletions {zk.deletes}, "
        f"reassignments {zk.reassigns}, preferred elections {zk.preferreds}, unclean elections "
        f"{zk.admin_elections}, unclean enabled for {', '.join(f't{t}' for t in zk.unclean_dyn) or 'no topic'}"
    )
    kids.append(_t("admin requests so far", asked))
    kids.append(_t("next session id", zk.next_session))
    return _t("ZooKeeper", None, kids)


def _context(sys: Any, ctx: Ctx) -> Tree:
    ppt = sys.ppt
    live = [b for b, e in enumerate(ctx.live) if e]
    parts: list[Tree] = []
    for p, z in enumerate(ctx.leaders):
        ar = ctx.ar[p] if ctx.ar else sys.replicas[p]
        row = ctx.rstates[p]
        reps = ", ".join(f"{r}: {ReplicaState(row[sys.rindex[p][r]]).name}" for r in ar if r in sys.rindex[p])
        parts.append(
            _t(
                partition_name(p, ppt),
                None,
                [
                    _t("partition state", PartitionState(ctx.pstates[p]).name),
                    _t("leadership", _lai(z)),
                    _t("replica states", reps or "none"),
                ],
            )
        )
    kids = [
        _t("controller epoch", f"{ctx.epoch} (zkVersion {ctx.epoch_version})"),
        _t(
            "live brokers",
            ", ".join(f"{b} (broker epoch {ctx.live[b]})" for b in live) or "none",
        ),
        _t("shutting down brokers", _ids(ctx.shutting)),
        _t("topics to be deleted", ", ".join(f"t{t}" for t in ctx.deleting) or "none"),
        _t("topics ineligible for deletion", ", ".join(f"t{t}" for t in ctx.ineligible) or "none"),
        _t(
            "partitions being reassigned",
            ", ".join(f"{partition_name(p, ppt)} -> {_ids(r)}" for p, r in ctx.reassigning) or "none",
        ),
        _t("partitions", None, parts),
    ]
    return _t("context", None, kids)


def _replica(sys: Any, b: int, p: int, r: Rep) -> Tree:
    kids = [
        _t("leader", "none (-1)" if r.leader < 0 else r.leader),
        _t("leader epoch", r.epoch),
        _t("log", f"{len(r.log)} records, leader epochs {_ids(r.log)}" if r.log else "empty"),
        _t("high watermark", r.hw),
    ]
    if r.leader == b:
        kids += [
            _t("ISR", _ids(r.isr)),
            _t("zkVersion", r.zkv),
            _t("followers' fetch offsets", _ids(r.known)),
            _t("ISR update in flight", r.pend),
        ]
        if r.ar:
            kids.append(_t("assigned replicas", _ids(r.ar)))
    return _t(partition_name(p, sys.ppt), None, kids)


def _broker(sys: Any, s: State, b: int, n: Node) -> Tree:
    nb = sys.nb
    process = "alive" if n.alive else "down"
    session = (
        "none"
        if n.session == 0
        else f"{n.session}" + (" (expired on the server; the client has not noticed)" if n.expired else "")
    )
    cs = {0: "none", 2: "answered"}.get(n.cs, f"requested at controller {n.cs - 3}")
    controller: list[Tree] = [
        _t("activeControllerId", n.active_id),
        _t("role", "active controller" if n.ctx is not None else "not the controller"),
    ]
    if n.ctx is not None:
        controller.append(_context(sys, n.ctx))
    controller += [
        _t("event queue", ", ".join(str(e) for e in n.events) or "empty"),
        _t("waits on", "nothing" if n.pending is None else str(n.pending)),
        _t(
            "request queues",
            None,
            [
                _t(f"to broker {d}", "; ".join(str(m) for m in s.chans[b * nb + d]) or "empty")
                for d in range(nb)
            ],
        ),
    ]
    zk_client = [
        _t("requests in flight", "; ".join(str(q) for q in n.zk_out) or "none"),
        _t("responses not yet received", "; ".join(str(q) for q in n.zk_in) or "none"),
        _t("watch on /controller", n.ctl_watch),
        _t("controller watches (/brokers/ids, /isr_change_notification)", n.watch),
    ]
    cache: list[Tree] = []
    if n.mc_live or n.mc_parts:
        cache = [
            _t("live brokers", _ids(n.mc_live)),
            *(
                _t(
                    partition_name(p, sys.ppt),
                    "none" if e is None else f"leader {e[0]}, leader epoch {e[1]}, ISR {_ids(e[2])}",
                )
                for p, e in enumerate(n.mc_parts)
            ),
        ]
    return _t(
        f"broker {b}",
        None,
        [
            _t("process", process),
            _t("ZooKeeper session", session),
            _t("broker epoch", n.bepoch),
            _t("highest controller epoch seen", n.seen_epoch),
            _t("controlled shutdown", cs),
            _t("ZooKeeper client", None, zk_client),
            _t("controller", None, controller),
            _t("replicas", None, [_replica(sys, b, p, r) for p, r in enumerate(n.reps)]),
            _t("metadata cache", None if cache else "empty", cache),
        ],
    )


def _cluster(sys: Any, s: State) -> Tree:
    ppt = sys.ppt
    invalid = "none"
    if s.invalid:
        machine, p, frm, to = s.invalid
        kind = PartitionState if machine == 0 else ReplicaState
        invalid = f"{kind.__name__}: {partition_name(p, ppt)} {kind(frm).name} -> {kind(to).name}"
    return _t(
        "cluster",
        None,
        [
            _t(
                "acknowledged records",
                ", ".join(f"{partition_name(p, ppt)} offset {o} (leader epoch {e})" for p, o, e in s.acked)
                or "none",
            ),
            _t(
                "faults and requests so far",
                f"crashes {s.crashes}, restarts {s.restarts}, session expiries {s.expiries}, records produced "
                f"{s.produced}, controlled shutdowns {s.shutdowns}"
                + (f", plug-in faults {_ids(s.spent)}" if s.spent else ""),
            ),
            _t("first invalid transition", invalid),
            _t("history bits", bin(s.history)),
            _t("workflows completed (bits)", bin(s.done)),
        ],
    )


def state_tree(sys: Any, s: State) -> Tree:
    """The whole state of ``sys`` (a ``ControllerSystem``) as a ``(label, value, children)`` tree:
    ZooKeeper, each broker, the cluster's counters."""
    return _t(
        "state",
        None,
        [_zookeeper(sys, s), *(_broker(sys, s, b, n) for b, n in enumerate(s.nodes)), _cluster(sys, s)],
    )
