"""The renaming of one permutation of brokers, partitions and topics applied to every kind of
value in a controller state (``Renamer``), for symmetry reduction; the permutations and the
group a configuration has are in ``model/controller/symmetry.py``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from model.controller import continuations, events, program
from model.controller import messages as m
from model.controller import responses as rs
from model.controller.continuations import (
    AssignmentWritten,
    ElectLeaderForPartitionsRead,
    ElectLeaderForPartitionsWritten,
    InitializeLeaderAndIsrWritten,
    PartitionModificationsRead,
    ReassignmentPartitionStateRead,
    RemoveReplicasFromIsrRead,
    RemoveReplicasFromIsrWritten,
)
from model.controller.messages import (
    M_LEADER_AND_ISR,
    M_STOP_REPLICA,
    M_UPDATE_METADATA,
    StopReplicaPartitions,
    UpdateMetadataPayload,
)
from model.controller.program import (
    AddLiveBrokersAndEpochs,
    CompleteDeleteTopic,
    ControlledShutdownRespond,
    ElectLeaderForPartitions,
    FailReplicaDeletion,
    MoveToReplicaDeletionStarted,
    NewReplicasOnline,
    OfflineReplicas,
    OnBrokerFailure,
    OnBrokerStartup,
    OnNewPartitionCreation,
    OnPartitionReassignment,
    OnTopicDeletion,
    RemoveLiveBrokers,
    ResumeDeletionForTopics,
    SendStopReplica,
    StopOldReplicasOfReassignedPartition,
    TriggerOnlinePartitionStateChange,
)
from model.controller.state import Ctx, Node, PartZ, Rep, State, Zk


def _reindex(xs: Sequence[Any], perm: tuple[int, ...], f: Callable[[Any], Any] | None = None) -> tuple:
    """``xs`` indexed by the renamed ids: element ``i`` moves to ``perm[i]`` (mapped by ``f``)."""
    out: list[Any] = [None] * len(xs)
    for i, x in enumerate(xs):
        out[perm[i]] = x if f is None else f(x)
    return tuple(out)


#: the most sub-records whose images one renamer remembers (then it forgets them all)
MEMO_LIMIT = 1 << 18


class Renamer:
    """The renaming of one :class:`Permutation` applied to every kind of value in a state.

    A successor shares most of its sub-records (the ZooKeeper tree, the brokers, the channel
    queues) with the state it came from, whose image was made just before: so the images of
    those sub-records are remembered by identity (holding the record, so that its id is not
    reused while it is remembered), which makes renaming a successor several times cheaper.
    """

    __slots__ = ("B", "P", "T", "inv", "memo", "nb", "ppt")

    def __init__(self, g: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]) -> None:
        """``g``: a ``Permutation`` (brokers, partitions, topics)."""
        self.B, self.P, self.T = g
        self.nb = len(self.B)
        self.ppt = len(self.P) // len(self.T)
        self.memo: dict[int, tuple[Any, Any]] = {}
        #: the inverse permutation's renamer: it learns every image's pre-image (a search
        #: expands the representative, that is often the image, and renames its successors)
        self.inv: Renamer = self

    def _memo(self, f: Callable[[Any], Any], x: Any) -> Any:
        """``f(x)``, remembered for this very ``x``."""
        hit = self.memo.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        y = f(x)
        if len(self.memo) >= MEMO_LIMIT:
            self.memo.clear()
        self.memo[id(x)] = (x, y)
        inv = self.inv.memo
        if len(inv) >= MEMO_LIMIT:
            inv.clear()
        inv[id(y)] = (y, x)
        return y

    # -- ids ------------------------------------------------------------------------------
    def b(self, b: int) -> int:
        """A broker id (negative: none, ``LEADER_DURING_DELETE``: kept)."""
        return self.B[b] if b >= 0 else b

    def bs(self, bs: Iterable[int]) -> tuple[int, ...]:
        """An ordered broker list (ISR, assignment): renamed in place."""
        B = self.B
        return tuple(B[x] if x >= 0 else x for x in bs)

    def bset(self, bs: Iterable[int]) -> tuple[int, ...]:
        """A broker list the model keeps sorted."""
        return tuple(sorted(self.B[x] for x in bs))

    def pset(self, ps: Iterable[int]) -> tuple[int, ...]:
        """A partition list the model keeps sorted."""
        return tuple(sorted(self.P[p] for p in ps))

    def tset(self, ts: Iterable[int]) -> tuple[int, ...]:
        """A topic list the model keeps sorted."""
        return tuple(sorted(self.T[t] for t in ts))

    def mask(self, m: int) -> int:
        """A bit set of partitions (StopReplica)."""
        out = 0
        for p, q in enumerate(self.P):
            if (m >> p) & 1:
                out |= 1 << q
        return out

    def session(self, sess: int) -> int:
        """A ZooKeeper session: the initial session ``b + 1`` of broker ``b`` is renamed with it."""
        return self.B[sess - 1] + 1 if 1 <= sess <= self.nb else sess

    # -- records --------------------------------------------------------------------------
    def partz(self, z: PartZ | None) -> PartZ | None:
        if z is None:
            return None
        return z._replace(leader=self.b(z.leader), isr=self.bs(z.isr))

    def pairs(self, items: Iterable[tuple[int, Any]]) -> tuple:
        """``(partition, PartZ or None)`` pairs, sorted by partition (stable)."""
        P = self.P
        return tuple(sorted(((P[p], self.partz(z)) for p, z in items), key=lambda e: e[0]))

    def zk(self, z: Zk) -> Zk:
        B, P = self.B, self.P
        ctl = z.controller
        return z._replace(
            controller=None if ctl is None else (self.b(ctl[0]), self.session(ctl[1])),
            brokers=_reindex(z.brokers, B, lambda e: None if e is None else (self.session(e[0]), e[1])),
            parts=_reindex(z.parts, P, self.partz),
            isr_changes=tuple(sorted((P[p], v) for p, v in z.isr_changes)),
            czxids=_reindex(z.czxids, B),
            ar=_reindex(z.ar, P, self.bs) if z.ar else z.ar,
            delete_topics=self.tset(z.delete_topics),
            gone=self.tset(z.gone),
            reassign=tuple(sorted((P[p], self.bs(r)) for p, r in z.reassign)),
            preferred=self.pset(z.preferred),
            unclean_dyn=tuple(self.T[t] for t in z.unclean_dyn),
        )

    def ctx(self, c: Ctx | None) -> Ctx | None:
        if c is None:
            return None
        P = self.P
        return c._replace(
            live=_reindex(c.live, self.B),
            leaders=_reindex(c.leaders, P, self.partz),
            pstates=_reindex(c.pstates, P),
            rstates=_reindex(c.rstates, P),
            ar=_reindex(c.ar, P, self.bs) if c.ar else c.ar,
            deleting=self.tset(c.deleting),
            ineligible=self.tset(c.ineligible),
            reassigning=tuple(sorted((P[p], self.bs(r)) for p, r in c.reassigning)),
            shutting=self.bset(c.shutting),
        )

    def rep(self, r: Rep) -> Rep:
        return r._replace(
            leader=self.b(r.leader),
            isr=self.bs(r.isr),
            known=_reindex(r.known, self.B) if r.known else r.known,
            ar=self.bs(r.ar),
        )

    def mc_part(self, e: tuple[int, int, tuple[int, ...]] | None) -> tuple | None:
        return None if e is None else (self.b(e[0]), e[1], self.bs(e[2]))

    def node(self, n: Node) -> Node:
        # a step changes one or two of a broker's parts: the others' images are remembered
        memo = self._memo
        return n._replace(
            session=self.session(n.session),
            zk_out=memo(self.requests, n.zk_out) if n.zk_out else n.zk_out,
            zk_in=memo(self.responses, n.zk_in) if n.zk_in else n.zk_in,
            active_id=self.b(n.active_id),
            ctx=None if n.ctx is None else memo(self.ctx, n.ctx),
            events=tuple(self.event(e) for e in n.events),
            pending=None if n.pending is None else memo(self.pending, n.pending),
            reps=memo(self.reps, n.reps),
            cs=3 + self.B[n.cs - 3] if n.cs >= 3 else n.cs,
            mc_live=self.bset(n.mc_live),
            mc_parts=memo(self.mc_parts, n.mc_parts) if n.mc_parts else n.mc_parts,
        )

    def requests(self, q: tuple) -> tuple:
        """A session's queue of ZooKeeper requests."""
        return tuple(self.request(x) for x in q)

    def responses(self, q: tuple) -> tuple:
        """A session's queue of ZooKeeper responses."""
        return tuple(self.response(x) for x in q)

    def reps(self, reps: tuple) -> tuple:
        """A broker's replicas, one per partition."""
        return _reindex(reps, self.P, self.rep)

    def mc_parts(self, parts: tuple) -> tuple:
        """A broker's metadata cache of partitions."""
        return _reindex(parts, self.P, self.mc_part)

    # -- messages -------------------------------------------------------------------------
    def event(self, ev: Any) -> tuple[int, int]:
        """A controller event (``events.py``): its argument names a broker, partition or topic."""
        match ev:
            case events.ControllerChange(b):
                return events.ControllerChange(self.B[b])
            case events.ControlledShutdown(b, epoch):
                return events.ControlledShutdown(self.B[b], epoch)
            case events.PartitionReassignmentIsrChange(p):
                return events.PartitionReassignmentIsrChange(self.P[p])
            case events.PartitionModifications(t) | events.TopicUncleanLeaderElectionEnable(t):
                return type(ev)(self.T[t])
            case events.TopicDeletionStopReplicaResponseReceived(
                b, m
            ) | events.TopicDeletionStopReplicaResponseError(b, m):
                return type(ev)(self.B[b], self.mask(m))
        return ev  # no argument

    def entry(self, e: tuple) -> tuple:
        """One partition's LeaderAndIsr entry (partition, leader, epoch, ISR, zkVersion[, AR])."""
        out = (self.P[e[0]], self.b(e[1]), e[2], self.bs(e[3]), e[4], *(self.bs(e[5]) for _ in e[5:]))
        e_cls: Any = type(e)
        return e_cls(*out)

    def message(self, m: tuple) -> tuple:
        """A controller-to-broker request."""
        kind, payload = m[0], m[3]
        if kind == M_LEADER_AND_ISR:
            payload = tuple(self.entry(e) for e in payload)
        elif kind == M_UPDATE_METADATA:
            P = self.P
            states = sorted(
                ((P[p], self.b(ld), ep, self.bs(isr)) for p, ld, ep, isr in payload.partition_states),
                key=lambda e: e[0],
            )
            payload = UpdateMetadataPayload(self.bset(payload.live_brokers), tuple(states))
        elif kind == M_STOP_REPLICA:
            payload = StopReplicaPartitions(self.mask(payload.mask), payload.delete, payload.callback)
        m_cls: Any = type(m)
        return m_cls(m[0], m[1], m[2], payload)

    def request(self, q: Any) -> tuple:
        """A ZooKeeper request (``messages.py``'s request classes)."""
        P = self.P
        match q:
            case m.GetTopicPartitionStates(ps):
                return m.GetTopicPartitionStates(self.pset(ps))
            case m.UpdateLeaderAndIsr(writes, fence, epoch, create, strategy):
                return m.UpdateLeaderAndIsr(self.pairs(writes), fence, epoch, create, strategy)
            case m.DeleteIsrChangeNotifications(notes, fence, epoch):
                return m.DeleteIsrChangeNotifications(
                    tuple(sorted((P[p], v) for p, v in notes)), fence, epoch
                )
            case m.UpdateIsr(p, z):
                return m.UpdateIsr(P[p], self.partz(z))
            case m.DeleteTopicDeletions(ts, fence, epoch):
                return m.DeleteTopicDeletions(self.tset(ts), fence, epoch)
            case m.DeleteTopicZNode(t, fence, epoch):
                return m.DeleteTopicZNode(self.T[t], fence, epoch)
            case m.GetReplicaAssignmentForTopic(t):
                return m.GetReplicaAssignmentForTopic(self.T[t])
            case m.SetReplicaAssignment(p, ar, fence, epoch):
                return m.SetReplicaAssignment(P[p], self.bs(ar), fence, epoch)
            case m.RemovePartitionsFromReassignment(ps, fence, epoch, completed):
                return m.RemovePartitionsFromReassignment(self.pset(ps), fence, epoch, completed)
        return q  # no id in it

    def response(self, r: Any) -> tuple:
        """A ZooKeeper response (``responses.py``'s classes)."""
        B, P = self.B, self.P
        match r:
            case rs.ControllerIdAndEpoch(ctl, epoch, version):
                return rs.ControllerIdAndEpoch(self.b(ctl), epoch, version)
            case rs.ControllerPathCreated(ok, ctl):
                return rs.ControllerPathCreated(ok, self.b(ctl))
            case rs.ControllerContext(live, states, topics, admin):
                out: list[Any] = [_reindex(live, B), _reindex(states, P, self.partz)]
                if admin is not None:
                    present, ar, deletions, reassign, preferred = admin
                    admin = (
                        _reindex(present, P),
                        _reindex(ar, P, self.bs),
                        self.tset(deletions),
                        tuple(sorted((P[p], self.bs(x)) for p, x in reassign)),
                        self.pset(preferred),
                    )
                    out += [topics, admin]
                elif len(r) > 3:
                    out.append(topics)
                return rs.ControllerContext(*out)
            case rs.TopicPartitionStates(states, unclean):
                if len(r) > 2:
                    return rs.TopicPartitionStates(self.pairs(states), tuple(self.T[t] for t in unclean))
                return rs.TopicPartitionStates(self.pairs(states))
            case rs.LeaderAndIsrWritten(ok, results):
                return rs.LeaderAndIsrWritten(ok, self.pairs(results))
            case rs.BrokerEpochs(epochs):
                return rs.BrokerEpochs(_reindex(epochs, B))
            case rs.IsrChangeNotifications(notes, states):
                pairs = sorted(((P[p], v), self.partz(z)) for (p, v), z in zip(notes, states))
                return rs.IsrChangeNotifications(tuple(n for n, _ in pairs), tuple(z for _, z in pairs))
            case rs.IsrUpdated(p, z):
                return rs.IsrUpdated(P[p], self.partz(z))
            case rs.Topics(n, deleted) if len(r) > 2:
                return rs.Topics(n, self.tset(deleted))
            case rs.TopicDeletions(ts):
                return rs.TopicDeletions(self.tset(ts))
            case rs.ReplicaAssignment(t, present):
                base, nbase = t * self.ppt, self.T[t] * self.ppt
                out_p = [False] * len(present)
                for i, here in enumerate(present):
                    out_p[P[base + i] - nbase] = here
                return rs.ReplicaAssignment(self.T[t], tuple(out_p))
            case rs.PartitionReassignment(pairs):
                return rs.PartitionReassignment(tuple(sorted((P[p], self.bs(x)) for p, x in pairs)))
            case rs.PreferredReplicaElection(ps):
                return rs.PreferredReplicaElection(self.pset(ps))
        return r  # no id in it

    # -- continuations --------------------------------------------------------------------
    def step(self, op: tuple) -> tuple:
        """One program step (a plain tuple is read as its record)."""
        if type(op) is tuple:
            op = program.STEPS.view(op)
        B, P, T = self.B, self.P, self.T
        match op:
            case TriggerOnlinePartitionStateChange(t):
                return op if t < 0 else TriggerOnlinePartitionStateChange(T[t])
            case ElectLeaderForPartitions(strategy, ps):
                return ElectLeaderForPartitions(strategy, self.pset(ps))
            case OnBrokerStartup(bs) | OnBrokerFailure(bs) | RemoveLiveBrokers(bs):
                return type(op)(self.bset(bs))
            case OfflineReplicas(b, ps):
                return OfflineReplicas(B[b]) if len(op) == 2 else OfflineReplicas(B[b], self.pset(ps))
            case AddLiveBrokersAndEpochs(bes):
                return AddLiveBrokersAndEpochs(tuple(sorted((B[b], e) for b, e in bes)))
            case OnNewPartitionCreation(ps) | NewReplicasOnline(ps):
                return type(op)(self.pset(ps))
            case ResumeDeletionForTopics(ts):
                return ResumeDeletionForTopics(self.tset(ts))
            case OnTopicDeletion(t) | CompleteDeleteTopic(t):
                return type(op)(T[t])
            case MoveToReplicaDeletionStarted(rs) | FailReplicaDeletion(rs):
                return type(op)(tuple(sorted((B[b], self.pset(ps)) for b, ps in rs)))
            case OnPartitionReassignment(p, mode):
                return OnPartitionReassignment(P[p], mode)
            case StopOldReplicasOfReassignedPartition(p, old):
                return StopOldReplicasOfReassignedPartition(P[p], self.bs(old))
            case ControlledShutdownRespond(b):
                return ControlledShutdownRespond(B[b])
            case SendStopReplica(b, ps, delete) if b >= 0:
                return SendStopReplica(B[b], self.pset(ps), delete)
            case SendStopReplica(b, ps, old):
                return SendStopReplica(b, self.pset(ps), self.bs(old))
        return op  # no argument

    def pending(self, k: Any) -> tuple:
        """A parked continuation (a record of ``continuations.py``; ``node`` renames only one)."""
        batch = tuple((self.b(d), self.entry(e)) for d, e in k.batch)
        rest = program.sort_runs(tuple(self.step(op) for op in k.rest))
        match k:
            case InitializeLeaderAndIsrWritten(elect):
                return InitializeLeaderAndIsrWritten(self.pset(elect), batch=batch, rest=rest)
            case ElectLeaderForPartitionsRead(strategy, ps):
                return ElectLeaderForPartitionsRead(strategy, self.pset(ps), batch=batch, rest=rest)
            case ElectLeaderForPartitionsWritten(strategy, items):
                items = tuple(sorted((self.P[p], self.bs(rec), u) for p, rec, u in items))  # p distinct
                return ElectLeaderForPartitionsWritten(strategy, items, batch=batch, rest=rest)
            case RemoveReplicasFromIsrRead(b, ps) | RemoveReplicasFromIsrWritten(b, ps):
                return type(k)(self.B[b], self.pset(ps), batch=batch, rest=rest)
            case PartitionModificationsRead(t) | continuations.TopicZNodeDeleted(t):
                return type(k)(self.T[t], batch=batch, rest=rest)
            case ReassignmentPartitionStateRead(p, mode):
                return ReassignmentPartitionStateRead(self.P[p], mode, batch=batch, rest=rest)
            case AssignmentWritten(p, phase, replicas):
                return AssignmentWritten(self.P[p], phase, self.bs(replicas), batch=batch, rest=rest)
        return type(k)(batch=batch, rest=rest)  # no data

    def smaller_image(self, s: State, best: State, enc: Callable[[Any], bytes]) -> State | None:
        """The image of ``s`` if it sorts before ``best`` (canonical encodings), else None.

        A state's encoding is its fields' encodings in order, each self-delimiting, so the
        first field (and, within the brokers, the first broker) that differs decides; the
        image's ZooKeeper tree and brokers are remembered by identity, so deciding is cheap
        and the whole image is built only for a state that moves.
        """
        memo = self._memo
        c = _order(memo(self.zk, s.zk), best.zk, enc)
        if c == 0:
            inv, nodes, bnodes = self.inv.B, s.nodes, best.nodes
            for j in range(self.nb):
                c = _order(memo(self.node, nodes[inv[j]]), bnodes[j], enc)
                if c:
                    break
        if c > 0:
            return None
        if c == 0:  # the channels, then the few other fields, decide
            chans = self.chans(s)
            c = _order(chans, best.chans, enc) if chans != best.chans else 0
            if c > 0:
                return None
            if c == 0:  # equal encodings: the image's tree, brokers and channels are best's
                image = s._replace(zk=best.zk, nodes=best.nodes, chans=best.chans, **self.rest(s))
                return None if image == best or enc(image) >= enc(best) else image
        return self.state(s)

    def queue(self, q: tuple) -> tuple:
        """A controller channel's queue of requests."""
        return tuple(self.message(m) for m in q)

    def chans(self, s: State) -> tuple:
        """The channels re-indexed by (renamed sender, renamed destination), their requests
        renamed."""
        nb, B = self.nb, self.B
        chans: list[tuple] = [()] * (nb * nb)
        memo = self._memo
        for i, q in enumerate(s.chans):
            if q:
                chans[B[i // nb] * nb + B[i % nb]] = memo(self.queue, q)
        return tuple(chans)

    def rest(self, s: State) -> dict[str, Any]:
        """The state's other fields that name partitions: acked records, the first invalid
        transition, the per-partition history bits."""
        P = self.P
        history = s.history & 1
        for p, q in enumerate(P):
            if (s.history >> (p + 1)) & 1:
                history |= 2 << q
        inv = s.invalid
        return {
            "acked": tuple(sorted((P[p], o, e) for p, o, e in s.acked)) if s.acked else s.acked,
            "invalid": (inv[0], P[inv[1]], inv[2], inv[3]) if inv else inv,
            "history": history,
        }

    def state(self, s: State) -> State:
        memo, node = self._memo, self.node
        return s._replace(
            zk=memo(self.zk, s.zk),
            nodes=_reindex(s.nodes, self.B, lambda n: memo(node, n)),
            chans=self.chans(s),
            **self.rest(s),
        )


def _order(a: Any, b: Any, enc: Callable[[Any], bytes]) -> int:
    """-1, 0 or 1 as ``a``'s encoding sorts before, equal to or after ``b``'s."""
    if a is b:
        return 0
    ea, eb = enc(a), enc(b)
    return (ea > eb) - (ea < eb)
