"""The renaming of one permutation of brokers, partitions and topics applied to every kind of
value in a controller state (``Renamer``), for symmetry reduction; the permutations and the
group a configuration has are in ``model/controller/symmetry.py``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from model.controller import program
from model.controller import responses as rs
from model.controller.messages import (
    StopReplicaPartitions,
    UpdateMetadataPayload,
)
from model.controller.program import (
    SendStopReplica,
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


#: the renamer's method for a field of each id kind (``ids.py``)
KIND_METHODS = {
    "BrokerId": "b",
    "BrokerList": "bs",
    "BrokerSet": "bset",
    "PerBroker": "per_broker",
    "PartitionId": "p",
    "PartitionSet": "pset",
    "PartitionZnode": "partz",
    "PartitionZnodes": "pairs",
    "PerPartitionZnode": "per_partition_znode",
    "TopicId": "t",
    "TopicSet": "tset",
    "TopicList": "tlist",
    "IsrChangeSeqs": "isr_seqs",
    "BrokerEpochPairs": "broker_epochs",
    "BrokerPartitions": "broker_partitions",
    "Reassignments": "reassignments",
    "ElectionItems": "election_items",
    "LeaderAndIsrStates": "leader_and_isr_states",
    "UpdateMetadataData": "update_metadata",
    "StopReplicaData": "stop_replica",
    "AdminZnodes": "admin",
    "BrokerAndEpoch": "broker_and_epoch",
    "BrokerAndPartitionMask": "broker_and_mask",
}
_PLANS: dict[tuple[type, int], tuple[tuple[int, Callable[[Any, Any], Any]], ...]] = {}


def _plan(cls: type, first: int = 1) -> tuple[tuple[int, Callable[[Any, Any], Any]], ...]:
    """(index, renaming) of each field of record class ``cls`` that holds ids, by the kind its
    annotation declares (``ids.py``); field ``j`` is at index ``first + j``."""
    plan = _PLANS.get((cls, first))
    if plan is None:
        kinds = [t.removesuffix(" | None") for t in getattr(cls, "_field_types", ())]
        plan = tuple(
            (first + j, getattr(Renamer, KIND_METHODS[k])) for j, k in enumerate(kinds) if k in KIND_METHODS
        )
        _PLANS[(cls, first)] = plan
    return plan


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

    def p(self, p: int) -> int:
        """A partition id."""
        return self.P[p]

    def t(self, t: int) -> int:
        """A topic id (negative: none)."""
        return self.T[t] if t >= 0 else t

    def tlist(self, ts: Iterable[int]) -> tuple[int, ...]:
        """A topic list in the order it was listed: renamed in place."""
        return tuple(self.T[t] for t in ts)

    def per_broker(self, xs: Sequence[Any]) -> tuple:
        """A value per broker, indexed by broker id."""
        return _reindex(xs, self.B)

    def broker_and_epoch(self, arg: int) -> int:
        """An event argument ``broker_epoch * 8 + broker``."""
        return (arg >> 3) * 8 + self.B[arg & 7]

    def broker_and_mask(self, arg: int) -> int:
        """An event argument ``partition bit mask * 8 + broker``."""
        return self.mask(arg >> 3) * 8 + self.B[arg & 7]

    def broker_epochs(self, bes: Iterable[tuple[int, int]]) -> tuple:
        """(broker, epoch) pairs, kept sorted."""
        return tuple(sorted((self.B[b], e) for b, e in bes))

    def broker_partitions(self, bps: Iterable[tuple[int, Any]]) -> tuple:
        """(broker, sorted partitions) pairs, kept sorted."""
        return tuple(sorted((self.B[b], self.pset(ps)) for b, ps in bps))

    def isr_seqs(self, notes: Iterable[tuple[int, int]]) -> tuple:
        """(partition, sequence zkVersion) pairs, kept sorted."""
        return tuple(sorted((self.P[p], v) for p, v in notes))

    def reassignments(self, pairs: Iterable[tuple[int, Any]]) -> tuple:
        """(partition, target replicas in order) pairs, kept sorted."""
        return tuple(sorted((self.P[p], self.bs(x)) for p, x in pairs))

    def election_items(self, items: Iterable[tuple[int, Any, int]]) -> tuple:
        """(partition, recipients, unclean) triples, kept sorted (their partitions distinct)."""
        return tuple(sorted((self.P[p], self.bs(rec), u) for p, rec, u in items))

    # -- records --------------------------------------------------------------------------
    def partz(self, z: PartZ | None) -> PartZ | None:
        if z is None:
            return None
        return z._replace(leader=self.b(z.leader), isr=self.bs(z.isr))

    def pairs(self, items: Iterable[tuple[int, Any]]) -> tuple:
        """``(partition, PartZ or None)`` pairs, sorted by partition (stable)."""
        P = self.P
        return tuple(sorted(((P[p], self.partz(z)) for p, z in items), key=lambda e: e[0]))

    def per_partition_znode(self, zs: Sequence[Any]) -> tuple:
        """A ``PartZ`` or None per partition, indexed by partition id."""
        return _reindex(zs, self.P, self.partz)

    def admin(self, admin: tuple) -> tuple:
        """The failover's admin reads (``ids.AdminZnodes``)."""
        present, ar, deletions, reassign, preferred = admin
        P = self.P
        return (
            _reindex(present, P),
            _reindex(ar, P, self.bs),
            self.tset(deletions),
            self.reassignments(reassign),
            self.pset(preferred),
        )

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
    def record(self, r: Any) -> Any:
        """A record (an event, a ZooKeeper request or response, a program step) whose fields
        declare their id kinds (``ids.py``): each such field renamed by its kind, the others kept."""
        cls = type(r)
        fields = _plan(cls)
        if not fields:
            return r
        items = list(r)
        n = len(items)
        for i, f in fields:
            if i < n and items[i] is not None:  # an optional field may be absent, or None
                items[i] = f(self, items[i])
        return tuple.__new__(cls, items)

    #: a controller event, a ZooKeeper request, a controller-to-broker request (``messages.py``)
    event = request = message = record

    def entry(self, e: tuple) -> tuple:
        """One partition's LeaderAndIsr entry (partition, leader, epoch, ISR, zkVersion[, AR])."""
        out = (self.P[e[0]], self.b(e[1]), e[2], self.bs(e[3]), e[4], *(self.bs(e[5]) for _ in e[5:]))
        e_cls: Any = type(e)
        return e_cls(*out)

    def leader_and_isr_states(self, states: tuple) -> tuple:
        """A LeaderAndIsr request's partition states, each renamed in place."""
        return tuple(self.entry(e) for e in states)

    def update_metadata(self, data: UpdateMetadataPayload) -> UpdateMetadataPayload:
        """An UpdateMetadata request's data: the live brokers, and the partition states re-sorted."""
        P = self.P
        states = sorted(
            ((P[p], self.b(ld), ep, self.bs(isr)) for p, ld, ep, isr in data.partition_states),
            key=lambda e: e[0],
        )
        return UpdateMetadataPayload(self.bset(data.live_brokers), tuple(states))

    def stop_replica(self, data: StopReplicaPartitions) -> StopReplicaPartitions:
        """A StopReplica request's data: its partition mask."""
        return StopReplicaPartitions(self.mask(data.mask), data.delete, data.callback)

    def response(self, r: Any) -> tuple:
        """A ZooKeeper response (``responses.py``): by its fields' id kinds, but for the two whose
        fields are renamed together."""
        P = self.P
        match r:
            case rs.IsrChangeNotifications(notifications=notes, states=states):
                pairs = sorted(((P[p], v), self.partz(z)) for (p, v), z in zip(notes, states))
                return rs.IsrChangeNotifications(tuple(n for n, _ in pairs), tuple(z for _, z in pairs))
            case rs.ReplicaAssignment(
                topic=t, present=present
            ):  # which partitions of topic t exist, in order
                base, nbase = t * self.ppt, self.T[t] * self.ppt
                out_p = [False] * len(present)
                for i, here in enumerate(present):
                    out_p[P[base + i] - nbase] = here
                return rs.ReplicaAssignment(self.T[t], tuple(out_p))
        return self.record(r)

    # -- continuations --------------------------------------------------------------------
    def step(self, op: tuple) -> tuple:
        """One program step (a plain tuple is read as its record): by its fields' id kinds, but
        for ``SendStopReplica``, whose ``extra`` holds brokers only when ``broker`` is -1."""
        if type(op) is tuple:
            op = program.STEPS.view(op)
        match op:
            case SendStopReplica(broker=b, partitions=ps, extra=old) if b < 0:
                return SendStopReplica(b, self.pset(ps), self.bs(old))
        return self.record(op)

    def pending(self, k: Any) -> tuple:
        """A parked continuation (a record of ``continuations.py``; ``node`` renames only one):
        its data fields by their id kinds (``ids.py``), its requests and steps."""
        batch = tuple((self.b(d), self.entry(e)) for d, e in k.batch)
        rest = program.sort_runs(tuple(self.step(op) for op in k.rest))
        data = k.data
        fields = _plan(type(k), 0)
        if fields and k._ndata == 1:
            data = fields[0][1](self, data)
        elif fields:
            items = list(data)
            for i, f in fields:
                items[i] = f(self, items[i])
            data = tuple(items)
        return tuple.__new__(type(k), (k.wait, data, batch, rest))

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
