"""Why a controller property fails, in Kafka's words: one ``explain`` per property
(:attr:`explorer.core.Property.explain`), each naming the brokers, partitions, sessions and
znodes at fault and their values.

Each function is given the failing state (``always``, and for ``eventually`` the state the
counterexample ends or cycles in) or step ``(s, action, s2)`` (``transition``) and re-reads
what its property's check read there, saying which entity broke the rule and how. They are
called only on a failure, so they may be slow; they never decide a verdict.
:func:`with_explanations` gives each property of ``invariants.controller.properties`` its own.

Partitions are named ``t<topic>-<index>`` (Kafka's ``TopicPartition``: topic ``t0``'s first
partition is ``t0-0``), brokers ``broker <id>``.

Example
-------
>>> from invariants.mutants.controller import ControllerConfig, build
>>> sys = build(ControllerConfig(brokers=2))
>>> s = sys.init_states()[0]
>>> z = s.zk.parts[0]._replace(isr=(1,))
>>> bad = s._replace(zk=s.zk._replace(parts=(z,)))
>>> explanations(sys)["leader_in_isr"](bad)
['t0-0: broker 0 leads at leader epoch 0, but its ISR (1,) does not contain it (/brokers/topics/0/partitions/0/state, zkVersion 1)']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from explorer.core import Property
from model.controller import ControllerSystem, KafkaVersion, State
from model.controller.state import (
    D_ADDED,
    D_ADMIN_UNCLEAN,
    D_DELETED,
    D_REASSIGNED,
    D_UNCLEAN_DYN,
    FRESH_PROCESS,
    Node,
)
from model.election import NO_LEADER
from model.state_machines import PartitionState, ReplicaState

__all__ = ["explanations", "with_explanations"]

#: at most this many entities at fault are named (the first ones found)
MAX_LINES = 4


def _first(lines: Iterable[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        out.append(line)
        if len(out) == MAX_LINES:
            break
    return out


def _isr(isr: tuple[int, ...]) -> str:
    return repr(tuple(isr))


def _leader(b: int) -> str:
    return "no leader (-1)" if b == NO_LEADER else f"broker {b}"


def _session(n: Node) -> str:
    return f"session {n.session}" + (" (expired on the server)" if n.expired else "")


def _req(a: Any) -> Any:
    return getattr(a, "req", None)


def explanations(sys: ControllerSystem) -> dict[str, Callable[..., Any]]:
    """Each controller property's ``explain`` for ``sys``'s configuration, by property name.

    >>> from model.controller import ControllerConfig
    >>> len(explanations(ControllerSystem(ControllerConfig()))) > 50
    True
    """
    ppt, nb = sys.ppt, sys.nb
    cfg = sys.cfg

    def pn(p: int) -> str:
        return f"t{p // ppt}-{p % ppt}"

    def path(p: int) -> str:
        return f"/brokers/topics/{p // ppt}/partitions/{p % ppt}/state"

    def zdesc(z: Any) -> str:
        if z is None:
            return "no state znode"
        return (
            f"leader {z.leader}, leader epoch {z.leader_epoch}, ISR {_isr(z.isr)}, controller epoch "
            f"{z.ctl_epoch}, zkVersion {z.version}"
        )

    def step(a: Any) -> str:
        return f"the step: {a}"

    # -- controller ------------------------------------------------------------------------

    def one_controller_per_epoch(s: State) -> list[str]:
        by: dict[int, list[int]] = {}
        for b, n in enumerate(s.nodes):
            if n.alive and n.ctx is not None:
                by.setdefault(n.ctx.epoch, []).append(b)
        return [
            f"brokers {', '.join(map(str, bs))} all act as controller at controller epoch {e} "
            f"(/controller_epoch is {s.zk.epoch}, /controller names {s.zk.controller})"
            for e, bs in by.items()
            if len(bs) > 1
        ]

    def controller_epoch_monotonic(s: State, a: Any, t: State) -> list[str]:
        return [step(a), f"/controller_epoch goes from {s.zk.epoch} down to {t.zk.epoch}"]

    def controller_epoch_won_once(s: State, a: Any, t: State) -> list[str]:
        return [
            step(a),
            f"/controller_epoch goes from {s.zk.epoch} (zkVersion {s.zk.epoch_version}) to {t.zk.epoch} "
            f"(zkVersion {t.zk.epoch_version}): a write must raise it by exactly one",
        ]

    def controller_znode_valid(s: State) -> list[str]:
        c = s.zk.controller
        if c is None:
            return []
        b, sess = c
        n = s.nodes[b]
        what = (
            "holds no controller context"
            if n.ctx is None
            else f"acts as controller at epoch {n.ctx.epoch} with activeControllerId {n.active_id}"
        )
        return [
            f"/controller names broker {b} (owner session {sess}), which is alive, idle and {what}; "
            f"/controller_epoch is {s.zk.epoch}"
        ]

    def controller_znode_removed_by_owner(s: State, a: Any, t: State) -> list[str]:
        c = s.zk.controller
        who = f"broker {getattr(a, 'broker', '?')} (session {getattr(a, 'session', '?')})"
        return [
            step(a),
            f"/controller, owned by broker {c[0] if c else '?'} with session {c[1] if c else '?'}, is removed "
            f"by {who}, not by its owner",
        ]

    def zk_writes_fenced(s: State, a: Any, t: State) -> list[str]:
        req = _req(a)
        return [
            step(a),
            f"broker {a.broker}'s {type(req).__name__} carries controller epoch {getattr(req, 'controller_epoch', '?')} "
            f"and lands while /controller_epoch is {s.zk.epoch}",
        ]

    def brokers_reject_stale_controller_epoch(s: State, a: Any, t: State) -> list[str]:
        n = s.nodes[a.dest]
        return [
            step(a),
            f"broker {a.dest} applies a {type(a.msg).__name__} of controller epoch {a.msg.controller_epoch} "
            f"from broker {a.sender} although it has seen controller epoch {n.seen_epoch}",
        ]

    def brokers_reject_stale_broker_epoch(s: State, a: Any, t: State) -> list[str]:
        n = s.nodes[a.dest]
        return [
            step(a),
            f"broker {a.dest} (broker epoch {n.bepoch}) applies a {type(a.msg).__name__} addressed to its "
            f"earlier incarnation (broker epoch {a.msg.broker_epoch})",
        ]

    def brokers_record_accepted_epochs(s: State, a: Any, t: State) -> list[str]:
        return [
            step(a),
            f"broker {a.dest} accepts a {type(a.msg).__name__} of controller epoch {a.msg.controller_epoch} "
            f"but remembers controller epoch {t.nodes[a.dest].seen_epoch} after it",
        ]

    def broker_epoch_matches_registration(s: State) -> list[str]:
        out = []
        for b, n in enumerate(s.nodes):
            reg = s.zk.brokers[b]
            idle = n.alive and not (n.zk_in or n.zk_out or n.expired)
            if idle and reg is not None and reg[0] == n.session and n.bepoch != reg[1]:
                out.append(
                    f"broker {b} ({_session(n)}) knows broker epoch {n.bepoch}, but /brokers/ids/{b} "
                    f"was registered by that session with broker epoch (czxid) {reg[1]}"
                )
        return out

    # -- partitions -----------------------------------------------------------------------

    def isr_nonempty_subset(s: State) -> list[str]:
        out = []
        for p, z in enumerate(s.zk.parts):
            if z is None:
                continue
            if not z.isr:
                out.append(f"{pn(p)}: the ISR in {path(p)} is empty ({zdesc(z)})")
            elif any(r not in s.zk.ar[p] for r in z.isr):
                out.append(
                    f"{pn(p)}: the ISR {_isr(z.isr)} holds {', '.join(f'broker {r}' for r in z.isr if r not in s.zk.ar[p])} "
                    f"outside the assigned replicas {_isr(s.zk.ar[p])}"
                )
        return out

    def leader_in_isr(s: State) -> list[str]:
        return [
            f"{pn(p)}: broker {z.leader} leads at leader epoch {z.leader_epoch}, but its ISR {_isr(z.isr)} "
            f"does not contain it ({path(p)}, zkVersion {z.version})"
            for p, z in enumerate(s.zk.parts)
            if z is not None and not cfg.unclean(p) and z.leader >= 0 and z.leader not in z.isr
        ]

    def leader_elected_from_isr(s: State, a: Any, t: State) -> list[str]:
        out = [step(a)]
        for p, (z, z2) in enumerate(zip(s.zk.parts, t.zk.parts, strict=True)):
            if z is None or z2 is None or z is z2:
                continue
            if z2.leader >= 0 and z2.leader != z.leader and z2.leader not in z.isr:
                out.append(
                    f"{pn(p)}: broker {z2.leader} becomes leader (leader epoch {z2.leader_epoch}) but was not in "
                    f"the ISR {_isr(z.isr)} ZooKeeper held before"
                )
        return out

    def leader_epoch_monotonic(s: State, a: Any, t: State) -> list[str]:
        out = [step(a)]
        for p, (z, z2) in enumerate(zip(s.zk.parts, t.zk.parts, strict=True)):
            if z is None or z2 is None or z is z2:
                continue
            if z2.leader_epoch < z.leader_epoch or z2.version < z.version:
                out.append(
                    f"{pn(p)}: leader epoch {z.leader_epoch} -> {z2.leader_epoch}, zkVersion {z.version} -> "
                    f"{z2.version} ({path(p)} goes back)"
                )
            elif z2.leader != z.leader and z2.leader_epoch == z.leader_epoch:
                out.append(
                    f"{pn(p)}: the leader changes from {_leader(z.leader)} to {_leader(z2.leader)} "
                    f"but the leader epoch stays {z.leader_epoch}"
                )
        return out

    def one_leader_per_epoch(s: State) -> list[str]:
        seen: dict[tuple[int, int], int] = {}
        out = []
        for b, n in enumerate(s.nodes):
            if n.alive:
                for p, r in enumerate(n.reps):
                    if r.leader == b:
                        other = seen.setdefault((p, r.epoch), b)
                        if other != b:
                            out.append(
                                f"{pn(p)}: brokers {other} and {b} both believe they lead at leader epoch {r.epoch}"
                            )
        return out

    def no_acked_record_lost(s: State) -> list[str]:
        out = []
        for p, o, e in s.acked:
            z = s.zk.parts[p]
            if z is None or z.leader < 0:
                continue
            n = s.nodes[z.leader]
            r = n.reps[p]
            if not n.alive or r.leader != z.leader or r.epoch != z.leader_epoch:
                continue
            if o >= len(r.log) or r.log[o] != e:
                have = (
                    f"holds a record of leader epoch {r.log[o]} there"
                    if o < len(r.log)
                    else f"ends at offset {len(r.log)}"
                )
                out.append(
                    f"{pn(p)}: the record acknowledged at offset {o} (leader epoch {e}) is not in the log of "
                    f"its leader broker {z.leader} (leader epoch {z.leader_epoch}), which {have}"
                )
        return out

    def valid_transitions(s: State) -> list[str]:
        inv = s.invalid
        if not inv:
            return ["an invalid state-machine transition was recorded"]
        machine, p, frm, to = inv
        kind, what = (
            (PartitionState, "PartitionStateMachine")
            if machine == 0
            else (ReplicaState, "ReplicaStateMachine")
        )
        return [
            f"{what}: {pn(p)} was moved from {kind(frm).name} to {kind(to).name}, which is not among "
            f"{kind(to).name}'s valid previous states"
        ]

    # -- convergence ---------------------------------------------------------------------

    def quiet_note(s: State) -> str:
        return "the cluster is quiet (no event, request, response or continuation in flight)"

    def controller_converges(s: State) -> list[str]:
        active = [b for b, n in enumerate(s.nodes) if n.alive and n.ctx is not None]
        out = [quiet_note(s)]
        if len(active) != 1:
            out.append(
                f"{len(active)} live brokers act as controller ({', '.join(f'broker {b}' for b in active) or 'none'}); "
                f"/controller names {s.zk.controller}"
            )
            return out
        b = active[0]
        n = s.nodes[b]
        c = s.zk.controller
        if c is None or c[0] != b or n.ctx.epoch != s.zk.epoch:
            out.append(
                f"broker {b} acts as controller at epoch {n.ctx.epoch} with {_session(n)}, but /controller names "
                f"{s.zk.controller} and /controller_epoch is {s.zk.epoch}"
            )
        out += [
            f"broker {m}'s activeControllerId is {x.active_id}, not {b}"
            for m, x in enumerate(s.nodes)
            if x.alive and x.active_id != b
        ]
        return _first(out)

    def broker_views_match_zookeeper(s: State) -> list[str]:
        out = [quiet_note(s)]
        for p, z in enumerate(s.zk.parts):
            if z is None or (p // ppt) in s.zk.delete_topics:
                continue
            for r in s.zk.ar[p]:
                n = s.nodes[r]
                rep = n.reps[p]
                if n.alive and (rep.leader != z.leader or rep.epoch != z.leader_epoch):
                    out.append(
                        f"{pn(p)}: broker {r} knows leader {rep.leader} at leader epoch {rep.epoch}; ZooKeeper has "
                        f"leader {z.leader} at leader epoch {z.leader_epoch}"
                    )
        return _first(out)

    def leader_isr_matches_zookeeper(s: State) -> list[str]:
        out = [quiet_note(s)]
        for p, z in enumerate(s.zk.parts):
            if z is None or z.leader < 0 or (p // ppt) in s.zk.delete_topics:
                continue
            n = s.nodes[z.leader]
            r = n.reps[p]
            if not n.alive or r.leader != z.leader or r.epoch != z.leader_epoch:
                continue
            if r.zkv != z.version or r.isr != z.isr:
                out.append(
                    f"{pn(p)}: leader broker {z.leader} (leader epoch {z.leader_epoch}) caches ISR {_isr(r.isr)} at "
                    f"zkVersion {r.zkv}; {path(p)} has ISR {_isr(z.isr)} at zkVersion {z.version}: its next ISR "
                    f"write is conditioned on a stale version"
                )
        return _first(out)

    def metadata_cache_matches_zookeeper(s: State) -> list[str]:
        zk = s.zk
        live = tuple(b for b, reg in enumerate(zk.brokers) if reg is not None)
        out = [quiet_note(s)]
        for b, n in enumerate(s.nodes):
            if not n.alive:
                continue
            if n.mc_live != live:
                out.append(
                    f"broker {b}'s metadata cache has live brokers {_isr(n.mc_live)}; /brokers/ids has {_isr(live)}"
                )
            cache = n.mc_parts or (None,) * sys.np
            for p, z in enumerate(zk.parts):
                if z is None or (p // ppt) in zk.delete_topics or not sys.present(zk, p):
                    continue
                if cache[p] != (z.leader, z.leader_epoch, z.isr):
                    out.append(
                        f"broker {b}'s metadata cache has {pn(p)} as {cache[p]}; ZooKeeper has "
                        f"(leader {z.leader}, leader epoch {z.leader_epoch}, ISR {_isr(z.isr)})"
                    )
        return _first(out)

    isr_tracked = cfg.kafka_version is not KafkaVersion.KAFKA_0_8

    def context_matches_zookeeper(s: State) -> list[str]:
        zk = s.zk
        live = tuple(0 if e is None else e[1] for e in zk.brokers)
        out = [quiet_note(s)]
        for b, n in enumerate(s.nodes):
            ctx = n.ctx
            if not n.alive or ctx is None:
                continue
            if ctx.live != live:
                out.append(
                    f"controller broker {b}'s context has live broker epochs {ctx.live} (0: dead); /brokers/ids "
                    f"gives {live}"
                )
            for p, z in enumerate(zk.parts):
                if z is None or not sys.present(zk, p):
                    continue
                c = ctx.leaders[p]
                if c != z and (isr_tracked or c is None or c[:2] != z[:2]):
                    out.append(
                        f"controller broker {b}'s context has {pn(p)} as {zdesc(c)}; {path(p)} has {zdesc(z)}"
                    )
        return _first(out)

    def replica_states_match_liveness(s: State) -> list[str]:
        out = [quiet_note(s)]
        for b, n in enumerate(s.nodes):
            ctx = n.ctx
            if not n.alive or ctx is None:
                continue
            for p in range(sys.np):
                if p in sys.added or p // ppt >= sys.topics_at_start:
                    continue
                if ctx.pstates[p] == PartitionState.NonExistentPartition or (p // ppt) in ctx.deleting:
                    continue
                for r in ctx.ar[p]:
                    rs = ctx.rstates[p][sys.rindex[p][r]]
                    if (ctx.live[r] and rs == ReplicaState.OfflineReplica) or (
                        not ctx.live[r] and rs == ReplicaState.OnlineReplica
                    ):
                        out.append(
                            f"controller broker {b}: the replica of {pn(p)} on broker {r} is {rs.name}, but its context "
                            f"counts broker {r} {'live' if ctx.live[r] else 'dead'}"
                        )
        return _first(out)

    def shutting_down_brokers_are_live(s: State) -> list[str]:
        out = [quiet_note(s)]
        for b, n in enumerate(s.nodes):
            ctx = n.ctx
            if n.alive and ctx is not None:
                out += [
                    f"controller broker {b} counts broker {x} as shutting down (shuttingDownBrokerIds "
                    f"{_isr(ctx.shutting)}), but its context counts broker {x} dead"
                    for x in ctx.shutting
                    if not ctx.live[x]
                ]
        return _first(out)

    def up(s: State, b: int) -> bool:
        n = s.nodes[b]
        reg = s.zk.brokers[b]
        return n.alive and reg is not None and reg[0] == n.session

    def no_leaderless_partition_when_quiet(s: State) -> list[str]:
        zk = s.zk
        out = [quiet_note(s)]
        for p, z in enumerate(zk.parts):
            if z is None or (p // ppt) in zk.delete_topics:
                continue
            if z.leader != NO_LEADER and up(s, z.leader):
                continue
            live_isr = [r for r in z.isr if up(s, r)]
            unclean = cfg.unclean(p) or (p // ppt) in zk.unclean_dyn
            live_ar = [r for r in (zk.ar[p] if zk.ar else sys.replicas[p]) if up(s, r)] if unclean else []
            if live_isr or live_ar:
                who = live_isr or live_ar
                out.append(
                    f"{pn(p)} has {_leader(z.leader)}{'' if z.leader < 0 else ' (not up)'} while "
                    f"{', '.join(f'broker {r}' for r in who)} of its {'ISR' if live_isr else 'assigned replicas'} "
                    f"is up ({path(p)}: {zdesc(z)})"
                )
        return _first(out)

    def _landed_writes(s: State, a: Any, t: State) -> list[tuple[int, Any, Any]]:
        req = _req(a)
        writes = getattr(req, "writes", ())
        return [(p, s.zk.parts[p], t.zk.parts[p]) for p, _ in writes if t.zk.parts[p] != s.zk.parts[p]]

    def no_dead_broker_in_written_isr(s: State, a: Any, t: State) -> list[str]:
        ctx = s.nodes[a.broker].ctx
        out = [step(a)]
        for p, _old, new in _landed_writes(s, a, t):
            dead = [r for r in new.isr if ctx is not None and not ctx.live[r]]
            if dead:
                out.append(
                    f"{pn(p)}: controller broker {a.broker} writes ISR {_isr(new.isr)} holding "
                    f"{', '.join(f'broker {r}' for r in dead)}, which its context knows is dead"
                )
        return out

    def partition_offline_only_without_live_leader(s: State, a: Any, t: State) -> list[str]:
        out = [step(a)]
        for b, (n, m) in enumerate(zip(s.nodes, t.nodes, strict=True)):
            c, d = n.ctx, m.ctx
            if c is None or d is None or c.epoch != d.epoch:
                continue
            for p, (was, now) in enumerate(zip(c.pstates, d.pstates, strict=True)):
                if was is PartitionState.OnlinePartition and now is PartitionState.OfflinePartition:
                    z = d.leaders[p]
                    if (
                        (p // ppt) not in d.deleting
                        and z is not None
                        and z.leader != NO_LEADER
                        and d.live[z.leader]
                    ):
                        out.append(
                            f"controller broker {b} moves {pn(p)} OnlinePartition -> OfflinePartition while its "
                            f"context has leader broker {z.leader}, live (broker epoch {d.live[z.leader]})"
                        )
        return out

    def no_election_for_a_topic_being_deleted(s: State, a: Any, t: State) -> list[str]:
        ctx = s.nodes[a.broker].ctx
        deleting = ctx.deleting if ctx is not None else ()
        return [
            step(a),
            *(
                f"{pn(p)}: an election lands (leader {z.leader}, leader epoch {z.leader_epoch}) although "
                f"controller broker {a.broker} has topic t{p // ppt} queued for deletion (topicsToBeDeleted "
                f"{_isr(deleting)})"
                for p, z in getattr(_req(a), "writes", ())
                if p // ppt in deleting
            ),
        ]

    def resigned_controller_sends_nothing(s: State, a: Any, t: State) -> list[str]:
        n = s.nodes[a.sender]
        return [
            step(a),
            f"broker {a.sender} holds no controller context (activeControllerId {n.active_id}), yet its "
            f"{type(a.msg).__name__} reaches broker {a.dest}",
        ]

    def no_write_over_newer_controller_state(s: State) -> list[str]:
        out = []
        for b, n in enumerate(s.nodes):
            for req in n.zk_out:
                if type(req).__name__ != "UpdateLeaderAndIsr" or req.create:
                    continue
                for p, z in req.writes:
                    cur = s.zk.parts[p]
                    if cur is not None and cur.version == z.version and cur.ctl_epoch > req.controller_epoch:
                        out.append(
                            f"broker {b} has a write of {pn(p)} queued at controller epoch {req.controller_epoch}, "
                            f"conditioned on zkVersion {z.version}, which controller epoch {cur.ctl_epoch} wrote"
                        )
        return _first(out)

    def context_only_while_active(s: State) -> list[str]:
        return [
            f"broker {b} holds a controller context (epoch {n.ctx.epoch}) while its activeControllerId is "
            f"{n.active_id}; /controller names {s.zk.controller}"
            for b, n in enumerate(s.nodes)
            if n.alive and n.ctx is not None and n.active_id != b
        ]

    # -- admin workflows -------------------------------------------------------------------

    def deleted_topic_gone(s: State) -> list[str]:
        zk = s.zk
        out = []
        for tp in zk.gone:
            ps = range(tp * ppt, (tp + 1) * ppt)
            if tp in zk.delete_topics:
                out.append(f"topic t{tp} is deleted but still under /admin/delete_topics")
            out += [
                f"topic t{tp} is deleted but {path(p)} remains ({zdesc(zk.parts[p])})"
                for p in ps
                if zk.parts[p] is not None
            ]
            out += [
                f"topic t{tp} is deleted but /isr_change_notification still names {pn(e[0])}"
                for e in zk.isr_changes
                if e[0] in ps
            ]
            for b, n in enumerate(s.nodes):
                ctx = n.ctx
                if not n.alive or ctx is None or ctx.epoch != zk.epoch or n.pending is not None:
                    continue
                if tp in ctx.deleting or tp in ctx.ineligible or any(q in ps for q, _ in ctx.reassigning):
                    out.append(
                        f"controller broker {b} still counts deleted topic t{tp} as being deleted or reassigned"
                    )
                for p in ps:
                    if ctx.pstates[p] != PartitionState.NonExistentPartition or ctx.leaders[p] is not None:
                        out.append(
                            f"controller broker {b}'s context still has {pn(p)} as {ctx.pstates[p].name} "
                            f"with {zdesc(ctx.leaders[p])}"
                        )
                    left = [r.name for r in ctx.rstates[p] if r != ReplicaState.NonExistentReplica]
                    if left:
                        out.append(
                            f"controller broker {b}'s context still has replicas of {pn(p)} in {', '.join(left)}"
                        )
        return _first(out)

    def reassignment_complete(s: State, a: Any, t: State) -> list[str]:
        out = [step(a)]
        for p, rar in s.zk.reassign:
            if p not in getattr(_req(a), "partitions", ()):
                continue
            if t.zk.ar[p] != rar:
                out.append(
                    f"{pn(p)}: the reassignment to {_isr(rar)} finishes with assignment {_isr(t.zk.ar[p])}"
                )
            z = t.zk.parts[p]
            if z is not None and any(r not in rar for r in z.isr):
                out.append(
                    f"{pn(p)}: the reassignment to {_isr(rar)} finishes with ISR {_isr(z.isr)} outside it"
                )
        return out

    def controlled_shutdown_never_elects_shutting_down(s: State, a: Any, t: State) -> list[str]:
        ctx = s.nodes[a.broker].ctx
        shutting = ctx.shutting if ctx is not None else ()
        return [
            step(a),
            *(
                f"{pn(p)}: broker {new.leader} becomes leader (leader epoch {new.leader_epoch}) while controller broker "
                f"{a.broker} counts it as shutting down (shuttingDownBrokerIds {_isr(shutting)})"
                for p, _old, new in _landed_writes(s, a, t)
                if new is not None and new.leader in shutting
            ),
        ]

    def preferred_election_elects_preferred(s: State, a: Any, t: State) -> list[str]:
        ctx = s.nodes[a.broker].ctx
        out = [step(a)]
        for p, old, new in _landed_writes(s, a, t):
            pref = s.zk.ar[p][0]
            state = (
                ""
                if ctx is None
                else f", live in the controller's view: {bool(ctx.live[pref]) and pref not in ctx.shutting}"
            )
            out.append(
                f"{pn(p)}: the preferred election makes {_leader(new.leader)} leader; the preferred replica is broker "
                f"{pref} (ISR before {_isr(old.isr) if old is not None else 'none'}{state})"
            )
        return out

    def preferred_election_znode_removed(s: State) -> list[str]:
        return [
            quiet_note(s),
            f"/admin/preferred_replica_election still names {', '.join(pn(p) for p in s.zk.preferred)}",
        ]

    # -- fidelity -----------------------------------------------------------------------------

    replicas = cfg.replicas()

    def isr_order_kept(s: State, a: Any, t: State) -> list[str]:
        from invariants.controller_fidelity import isr_order_follows

        out = [step(a)]
        ar = t.zk.ar
        for p, new in enumerate(t.zk.parts):
            old = s.zk.parts[p]
            if new is None or new is old:
                continue
            assignment = ar[p] if ar and ar[p] else replicas[p]
            if not isr_order_follows(None if old is None else old.isr, new.isr, assignment):
                before = "a new partition" if old is None else f"the ISR was {_isr(old.isr)}"
                out.append(
                    f"{pn(p)}: ISR {_isr(new.isr)} is written where {before} (assignment {_isr(assignment)}): "
                    "kept members must keep their order, new ones come after"
                )
        return out

    def dead_broker_holds_no_process_memory(s: State) -> list[str]:
        return _first(
            f"broker {b} is down but its {k} is {getattr(n, k)!r}, not the fresh {v!r}"
            for b, n in enumerate(s.nodes)
            if not n.alive
            for k, v in FRESH_PROCESS.items()
            if getattr(n, k) != v
        )

    def faults_within_budget(s: State) -> list[str]:
        out = [
            f"{k} is {getattr(s, k)}, over {key} = {getattr(cfg, key)}"
            for k, key in (
                ("crashes", "max_crashes"),
                ("restarts", "max_restarts"),
                ("expiries", "max_session_expiries"),
                ("produced", "max_records"),
                ("shutdowns", "max_controlled_shutdowns"),
            )
            if getattr(s, k) > getattr(cfg, key)
        ]
        opened = cfg.max_restarts + cfg.max_session_expiries + cfg.max_orphaned_sessions
        bound = sys.init_states()[0].zk.next_session + opened
        if s.zk.next_session > bound:
            out.append(
                f"ZooKeeper has opened sessions up to session {s.zk.next_session - 1}, more than max_restarts + "
                f"max_session_expiries + max_orphaned_sessions = {opened} new ones allow "
                f"({', '.join(f'broker {b} holds session {n.session}' for b, n in enumerate(s.nodes))})"
            )
        admin = (
            ("created", cfg.topics_created_later),
            ("expanded", cfg.topics - cfg.topics_created_later if cfg.partitions_added_later else 0),
            ("deletes", cfg.max_topic_deletions),
            ("reassigns", cfg.max_reassignments),
            ("preferreds", cfg.max_preferred_elections),
            ("admin_elections", cfg.max_admin_unclean_elections),
        )
        out += [
            f"the admin's {k} is {getattr(s.zk, k)}, over its budget {m}"
            for k, m in admin
            if getattr(s.zk, k) > m
        ]
        if len(s.zk.unclean_dyn) > cfg.max_unclean_enables:
            out.append(
                f"{len(s.zk.unclean_dyn)} topics have unclean election enabled dynamically, over max_unclean_enables"
            )
        return out

    def zookeeper_watches_fire(s: State, a: Any, t: State) -> list[str]:
        out = [step(a)]
        writer = getattr(a, "broker", -1)
        z0, z1 = s.zk, t.zk
        changes = []
        if z0.controller != z1.controller:
            changes.append(
                ("ctl_watch", f"/controller goes from {z0.controller} to {z1.controller}", "/controller")
            )
        if [e is None for e in z0.brokers] != [e is None for e in z1.brokers]:
            changes.append(
                ("watch", f"/brokers/ids children go from {z0.brokers} to {z1.brokers}", "/brokers/ids")
            )
        for kind, what, znode in changes:
            for b, n in enumerate(s.nodes):
                if b == writer or not n.alive or n.expired or n.session == 0 or not getattr(n, kind):
                    continue
                if t.nodes[b].events == n.events:
                    out.append(
                        f"{what}, but broker {b}, watching {znode}, gets no event (its queue stays {n.events})"
                    )
        return out

    def witnesses_follow_their_requests(s: State) -> list[str]:
        z, d = s.zk, s.done
        rules = (
            (
                D_UNCLEAN_DYN,
                not z.unclean_dyn,
                "an unclean election under a dynamic config",
                "no topic enabled it (no /config/topics/<topic> sets unclean.leader.election.enable)",
            ),
            (D_ADMIN_UNCLEAN, not z.admin_elections, "an admin unclean election", "no ElectLeaders request"),
            (
                D_DELETED,
                not z.deletes,
                "a completed deletion",
                "no deletion was requested (/admin/delete_topics)",
            ),
            (
                D_REASSIGNED,
                not z.reassigns,
                "a completed reassignment",
                "no reassignment was requested (/admin/reassign_partitions)",
            ),
            (D_ADDED, not z.expanded, "partitions added", "no partitions were requested"),
        )
        return [
            f"the state records {what} (done bit {bit}) but {why}"
            for bit, bad, what, why in rules
            if d & bit and bad
        ]

    def active_controller_id_from_zookeeper(s: State, a: Any, t: State) -> list[str]:
        owners = [-1] + [z[0] for z in (s.zk.controller, t.zk.controller) if z is not None]
        return [
            step(a),
            *(
                f"broker {b}'s activeControllerId goes from {n0.active_id} to {n1.active_id}, which is neither -1 nor "
                f"a broker /controller names ({s.zk.controller} before, {t.zk.controller} after)"
                for b, (n0, n1) in enumerate(zip(s.nodes, t.nodes, strict=True))
                if n1.active_id != n0.active_id and n1.active_id not in owners
            ),
        ]

    def new_session_knows_no_controller(s: State, a: Any, t: State) -> list[str]:
        return [
            step(a),
            *(
                f"broker {b} takes session {n1.session} (was {n0.session}) and believes broker {n1.active_id} is "
                "the controller before reading /controller"
                for b, (n0, n1) in enumerate(zip(s.nodes, t.nodes, strict=True))
                if n1.session != n0.session and n1.active_id != -1
            ),
        ]

    def request_partitions(msg: Any) -> tuple[int, ...]:
        from invariants.controller_fidelity import request_partitions as parts

        return parts(msg)

    def no_request_for_a_deleted_topic(s: State, a: Any, t: State) -> list[str]:
        out = [step(a)]
        for i, (q0, q1) in enumerate(zip(s.chans, t.chans, strict=True)):
            for m in q1:
                if m in q0:
                    continue
                gone = sorted({p // ppt for p in request_partitions(m)} & set(s.zk.gone))
                if gone:
                    out.append(
                        f"broker {i // nb} queues for broker {i % nb} a {type(m).__name__} naming deleted topic "
                        f"{', '.join(f't{x}' for x in gone)}"
                    )
        return out

    def stop_replica_response_answers_request(s: State, a: Any, t: State) -> list[str]:
        mask = a.msg.data.mask
        asked = tuple(p for p in range(mask.bit_length()) if (mask >> p) & 1)
        before = s.nodes[a.sender].events
        return [
            step(a),
            *(
                f"controller broker {a.sender} gets {ev} from broker {a.dest}'s StopReplica of "
                f"{', '.join(pn(p) for p in asked)}: it names broker {getattr(ev, 'replica_id', '?')} and partitions "
                f"mask {getattr(ev, 'partitions', '?')} (the request's: broker {a.dest}, mask {mask})"
                for ev in t.nodes[a.sender].events
                if ev not in before and hasattr(ev, "replica_id")
            ),
        ]

    def admin_unclean_election_elects_leaderless(s: State, a: Any, t: State) -> list[str]:
        ctx = s.nodes[a.broker].ctx
        sent = t.nodes[a.broker].zk_out[len(s.nodes[a.broker].zk_out) :]
        read = [p for q in sent for p in getattr(q, "partitions", ())]
        live = () if ctx is None else tuple(b for b, e in enumerate(ctx.live) if e and b not in ctx.shutting)
        leaders = () if ctx is None else tuple(None if z is None else z.leader for z in ctx.leaders)
        return [
            step(a),
            f"controller broker {a.broker} reads {', '.join(pn(p) for p in read) or 'no partition'} for the unclean "
            f"election; its context's leaders are {leaders} and liveBrokerIds {_isr(live)}: every partition whose "
            "leader is not live, and only those, must be read",
        ]

    def auto_rebalance_follows_imbalance(s: State, a: Any, t: State) -> list[str]:
        from invariants.controller_fidelity import auto_rebalance_candidates

        ctx = s.nodes[a.broker].ctx
        cands = auto_rebalance_candidates(ctx, ppt, cfg.leader_imbalance_per_broker_percentage) if ctx else []
        started = t.nodes[a.broker].pending is not None
        leaders = () if ctx is None else tuple(None if z is None else z.leader for z in ctx.leaders)
        return [
            step(a),
            f"controller broker {a.broker} {'starts' if started else 'starts no'} preferred election; the imbalance rule "
            f"(leader.imbalance.per.broker.percentage {cfg.leader_imbalance_per_broker_percentage}) picks "
            f"{', '.join(pn(p) for p in cands) or 'no partition'} (leaders {leaders})",
        ]

    # -- observed -------------------------------------------------------------------------------

    def elected_leader_is_live(s: State, a: Any, t: State) -> list[str]:
        ctx = s.nodes[a.broker].ctx
        return [
            step(a),
            *(
                f"{pn(p)}: controller broker {a.broker} elects broker {new.leader} (leader epoch {new.leader_epoch}), "
                f"which its context counts dead (live broker epochs {ctx.live if ctx else '?'})"
                for p, _old, new in _landed_writes(s, a, t)
                if new is not None and new.leader >= 0 and ctx is not None and not ctx.live[new.leader]
            ),
        ]

    def controlled_shutdown_isr_excludes_shutting_down(s: State, a: Any, t: State) -> list[str]:
        ctx = s.nodes[a.broker].ctx
        shutting = ctx.shutting if ctx is not None else ()
        return [
            step(a),
            *(
                f"{pn(p)}: the controlled-shutdown election writes ISR {_isr(new.isr)}; the ISR it read was "
                f"{_isr(old.isr)} and the shutting-down brokers are {_isr(shutting)}"
                for p, old, new in _landed_writes(s, a, t)
                if old is not None
                and new is not None
                and new.isr != tuple(r for r in old.isr if r not in shutting)
            ),
        ]

    def controlled_shutdown_answered_after_followers_offline(s: State, a: Any, t: State) -> list[str]:
        out = [step(a)]
        for i, (q0, q1) in enumerate(zip(s.chans, t.chans, strict=True)):
            if not any(type(m).__name__ == "ControlledShutdownResponse" and m not in q0 for m in q1):
                continue
            ctx, b = t.nodes[i // nb].ctx, i % nb
            if ctx is None:
                continue
            for p in sys.parts_of[b]:
                z = ctx.leaders[p]
                if z is not None and len(ctx.ar[p]) >= 2 and b in z.isr and z.leader != b and z.isr != (b,):
                    out.append(
                        f"controller broker {i // nb} answers broker {b}'s controlled shutdown while its context still "
                        f"has broker {b} in the ISR {_isr(z.isr)} of {pn(p)} (leader {z.leader})"
                    )
        return _first(out)

    def controlled_shutdown_skips_single_replica_partitions(s: State, a: Any, t: State) -> list[str]:
        ctx = s.nodes[a.broker].ctx
        single = [p for p, ar in enumerate(ctx.ar) if len(ar) <= 1] if ctx is not None else []
        return [
            step(a),
            f"controller broker {a.broker} acts (a read or a StopReplica) on single-replica partition(s) "
            f"{', '.join(f'{pn(p)} (assignment {_isr(ctx.ar[p])})' for p in single) if ctx else '?'}",
        ]

    def controlled_shutdown_completes_after_answer(s: State, a: Any, t: State) -> list[str]:
        return [
            step(a),
            *(
                f"broker {a.broker} stops while controller broker {c} still has its ControlledShutdown queued "
                f"(events {n.events})"
                for c, n in enumerate(s.nodes)
                if n.alive
                and n.ctx is not None
                and any(getattr(e, "broker", None) == a.broker for e in n.events)
            ),
        ]

    def no_replica_deletion_while_reassigning(s: State, a: Any, t: State) -> list[str]:
        out = [step(a)]
        for i, (q0, q1) in enumerate(zip(s.chans, t.chans, strict=True)):
            ctx = t.nodes[i // nb].ctx
            if ctx is None:
                continue
            for m in q1:
                if m in q0 or type(m).__name__ != "StopReplicaRequest":
                    continue
                hit = [p for p, _ in ctx.reassigning if (m.data.mask >> p) & 1]
                if hit:
                    out.append(
                        f"controller broker {i // nb} sends broker {i % nb} a deleting StopReplica of "
                        f"{', '.join(pn(p) for p in hit)}, which it is reassigning"
                    )
        return out

    # -- replication --------------------------------------------------------------------------

    def leader_hw_follows_isr(s: State, a: Any, t: State) -> list[str]:
        from invariants.controller_replication import leader_high_watermark

        b = a.broker if type(a).__name__ == "Produce" else a.leader
        r = t.nodes[b].reps[a.partition]
        return [
            step(a),
            f"{pn(a.partition)}: leader broker {b} has high watermark {r.hw}; its log ends at {len(r.log)}, its ISR "
            f"{_isr(r.isr)} has fetched up to {tuple(r.known)}, so maybeIncrementLeaderHW gives "
            f"{leader_high_watermark(r, b)}",
        ]

    def follower_log_is_leader_prefix(s: State, a: Any, t: State) -> list[str]:
        flog = t.nodes[a.broker].reps[a.partition].log
        llog = t.nodes[a.leader].reps[a.partition].log
        return [
            step(a),
            f"{pn(a.partition)}: after the fetch follower broker {a.broker}'s log is {flog} (leader epochs of its "
            f"records), not a prefix of leader broker {a.leader}'s {llog}",
        ]

    # -- liveness (the state a counterexample ends or cycles in) -------------------------------

    def leader_eventually_elected(s: State) -> list[str]:
        return _first(
            f"{pn(p)} has {_leader(z.leader)} while ISR broker(s) {', '.join(str(r) for r in z.isr if up(s, r))} "
            f"are up, under active controller {s.zk.controller}"
            for p, z in enumerate(s.zk.parts)
            if z is not None
            and (p // ppt) not in s.zk.delete_topics
            and not (z.leader >= 0 and up(s, z.leader))
            and any(up(s, r) for r in z.isr)
        )

    def deletion_eventually_completes(s: State) -> list[str]:
        return [
            f"topic t{tp} is queued for deletion (/admin/delete_topics {_isr(s.zk.delete_topics)}) and still exists, "
            f"with every replica's broker up"
            for tp in s.zk.delete_topics
            if tp not in s.zk.gone
        ]

    def controller_eventually_elected(s: State) -> list[str]:
        running = [b for b, n in enumerate(s.nodes) if n.alive and not n.expired and n.session != 0]
        return [
            f"no broker is the active controller (/controller is {s.zk.controller}) while "
            f"{', '.join(f'broker {b}' for b in running)} run with a session"
        ]

    def reassignment_eventually_completes(s: State) -> list[str]:
        return [
            f"{pn(p)}: the reassignment to {_isr(rar)} stays in /admin/reassign_partitions with all its new replicas' "
            f"brokers up (assignment {_isr(s.zk.ar[p])})"
            for p, rar in s.zk.reassign
        ]

    return {
        name: fn
        for name, fn in locals().items()
        if callable(fn) and not name.startswith("_") and name not in _HELPERS
    }


#: local helpers of :func:`explanations` that are not a property's explanation
_HELPERS = frozenset({"pn", "path", "zdesc", "step", "quiet_note", "up", "request_partitions", "replicas"})


def with_explanations(props: Iterable[Property], sys: ControllerSystem) -> list[Property]:
    """``props`` with each one's ``explain`` (:func:`explanations`) where it has none.

    >>> from model.controller import ControllerConfig
    >>> from invariants.controller import properties
    >>> all(p.explain is not None for p in properties(ControllerConfig()) if p.kind.value != "reachable")
    True
    """
    table = explanations(sys)
    return [
        p if p.explain is not None or p.name not in table else dataclasses.replace(p, explain=table[p.name])
        for p in props
    ]
