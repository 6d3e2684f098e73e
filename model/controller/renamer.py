"""The renaming of one permutation of brokers, partitions and topics applied to every kind of
value in a controller state (``Renamer``), for symmetry reduction (the group: ``symmetry.py``),
each record's fields by the kinds they declare (``ids.py``): a message's, step's or continuation's
by ``_plan``, a state record's (``state.py``) by the method ``_derive`` compiles for it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from model.controller import program
from model.controller import responses as rs
from model.controller.ids import VALUE_KINDS
from model.controller.messages import StopReplicaPartitions, UpdateMetadataPayload
from model.controller.program import SendStopReplica
from model.controller.state import FIELD_KINDS, Ctx, Node, PartZ, Rep, State, Zk


def _reindex(xs: Sequence[Any], perm: tuple[int, ...], f: Callable[[Any], Any] | None = None) -> tuple:
    """``xs`` indexed by the renamed ids: element ``i`` moves to ``perm[i]`` (mapped by ``f``)."""
    out: list[Any] = [None] * len(xs)
    for i, x in enumerate(xs):
        out[perm[i]] = x if f is None else f(x)
    return tuple(out)


#: the most sub-records whose images one renamer remembers (then it forgets them all)
MEMO_LIMIT = 1 << 18
#: the renamer's method for a field of each id kind (``ids.py``) and of each state record
KIND_METHODS = {
    "BrokerId": "b", "BrokerList": "bs", "BrokerSet": "bset", "PerBroker": "per_broker",
    "PartitionId": "p", "PartitionSet": "pset", "PartitionZnode": "partz", "PartitionZnodes": "pairs",
    "PerPartitionZnode": "per_partition_znode", "TopicId": "t", "TopicSet": "tset", "TopicList": "tlist",
    "IsrChangeSeqs": "isr_seqs", "BrokerEpochPairs": "broker_epochs", "BrokerPartitions": "broker_partitions",
    "Reassignments": "reassignments", "ElectionItems": "election_items", "AdminZnodes": "admin",
    "LeaderAndIsrStates": "leader_and_isr_states", "UpdateMetadataData": "update_metadata",
    "StopReplicaData": "stop_replica", "BrokerAndEpoch": "broker_and_epoch",
    "BrokerAndPartitionMask": "broker_and_mask", "Session": "session", "ControllerZnode": "controller_znode",
    "BrokerZnodes": "broker_znodes", "PerPartition": "per_partition", "Assignments": "assignments",
    "Replicas": "reps", "MetadataCache": "mc_parts", "ZkRequests": "requests", "ZkResponses": "responses",
    "Events": "events", "Continuation": "pending", "ShutdownRequest": "shutdown_request", "Nodes": "nodes",
    "Channels": "chans", "AckedRecords": "acked", "InvalidTransition": "invalid", "HistoryBits": "history",
    "PartZ": "partz", "Zk": "zk", "Ctx": "ctx", "Rep": "rep", "Node": "node", "State": "state",
}  # fmt: skip
#: the kinds of a state record's fields that a successor mostly shares with its parent: their
#: images are remembered by identity (``Renamer._memo``); an empty one (or None) is its own image
MEMOISED = frozenset({"Zk", "Ctx", "Replicas", "MetadataCache", "ZkRequests", "ZkResponses", "Continuation"})
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


def _derived(cls: type, given: int = 0) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark the decorated method (a stub: name, signature, docstring) as the renaming of state
    record ``cls`` that ``_derive`` compiles from its fields' kinds (the first ``given`` fields'
    images passed in instead)."""

    def mark(stub: Callable[..., Any]) -> Callable[..., Any]:
        stub._derives = (cls, given)  # type: ignore[attr-defined]
        return stub

    return mark


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

    def pairs(self, items: Iterable[tuple[int, Any]]) -> tuple:
        """``(partition, PartZ or None)`` pairs, sorted by partition (stable)."""
        P = self.P
        return tuple(sorted(((P[p], self.partz(z)) for p, z in items), key=lambda e: e[0]))

    def per_partition_znode(self, zs: Sequence[Any]) -> tuple:
        """A ``PartZ`` or None per partition, indexed by partition id."""
        return _reindex(zs, self.P, self.partz)

    # -- the kinds only state fields hold (``ids.py``) ------------------------------------
    def controller_znode(self, ctl: tuple[int, int]) -> tuple[int, int]:
        """``/controller``: (broker, owner session)."""
        return (self.b(ctl[0]), self.session(ctl[1]))

    def broker_znodes(self, zs: Sequence[Any]) -> tuple:
        """``/brokers/ids/<id>`` per broker: (owner session, broker epoch) or None."""
        session = self.session
        return _reindex(zs, self.B, lambda e: None if e is None else (session(e[0]), e[1]))

    def per_partition(self, xs: Sequence[Any]) -> tuple:
        """A value per partition, indexed by partition id."""
        return _reindex(xs, self.P)

    def assignments(self, ar: Sequence[Any]) -> tuple:
        """Replicas in order per partition, indexed by partition id."""
        return _reindex(ar, self.P, self.bs)

    def shutdown_request(self, cs: int) -> int:
        """A controlled shutdown: ``3 + c`` names controller ``c``."""
        return 3 + self.B[cs - 3] if cs >= 3 else cs

    def history(self, h: int) -> int:
        """Bit 0 kept, bit ``1 + p`` per partition ``p``."""
        return (h & 1) | self.mask(h >> 1) << 1

    def acked(self, acked: tuple) -> tuple:
        """Acknowledged records (partition, offset, epoch), kept sorted."""
        P = self.P
        return tuple(sorted((P[p], o, e) for p, o, e in acked)) if acked else acked

    def invalid(self, inv: tuple) -> tuple:
        """The first invalid transition (machine, partition, from, to), or ``()``."""
        return (inv[0], self.P[inv[1]], inv[2], inv[3]) if inv else inv

    def mc_part(self, e: tuple[int, int, tuple[int, ...]] | None) -> tuple | None:
        """One partition's metadata cache entry (leader, leader epoch, ISR) or None."""
        return None if e is None else (self.b(e[0]), e[1], self.bs(e[2]))

    def mc_parts(self, parts: tuple) -> tuple:
        """A broker's metadata cache of partitions."""
        return _reindex(parts, self.P, self.mc_part)

    def requests(self, q: tuple) -> tuple:
        """A session's queue of ZooKeeper requests."""
        return tuple(self.request(x) for x in q)

    def responses(self, q: tuple) -> tuple:
        """A session's queue of ZooKeeper responses."""
        return tuple(self.response(x) for x in q)

    def events(self, q: tuple) -> tuple:
        """A controller's queue of events."""
        return tuple(self.event(e) for e in q)

    def reps(self, reps: tuple) -> tuple:
        """A broker's replicas, one per partition."""
        return _reindex(reps, self.P, self.rep)

    def nodes(self, nodes: tuple) -> tuple:
        """The brokers, one per broker id (each image remembered)."""
        memo, node = self._memo, self.node
        return _reindex(nodes, self.B, lambda n: memo(node, n))

    def queue(self, q: tuple) -> tuple:
        """A controller channel's queue of requests."""
        return tuple(self.message(m) for m in q)

    def chans(self, chans: tuple) -> tuple:
        """The channels re-indexed by (renamed sender, renamed destination), their requests
        renamed."""
        nb, B = self.nb, self.B
        out: list[tuple] = [()] * (nb * nb)
        memo = self._memo
        for i, q in enumerate(chans):
            if q:
                out[B[i // nb] * nb + B[i % nb]] = memo(self.queue, q)
        return tuple(out)

    def admin(self, admin: tuple) -> tuple:
        """The failover's admin reads (``ids.AdminZnodes``)."""
        present, ar, deletions, reassign, preferred = admin
        return (
            self.per_partition(present),
            self.assignments(ar),
            self.tset(deletions),
            self.reassignments(reassign),
            self.pset(preferred),
        )

    # -- the state records: each derived from its fields' kinds (``_derive``) -------------
    # (each stub's body is compiled by ``_derive`` when this module is imported, from the kinds
    # its record's fields declare: a field added to a state record needs no edit here)
    @_derived(PartZ)
    def partz(self, z: PartZ | None) -> PartZ | None:  # type: ignore[empty-body]
        """A partition's state znode (``PartZ``) or None."""

    @_derived(Rep)
    def rep(self, r: Rep) -> Rep:  # type: ignore[empty-body]
        """A broker's replica of one partition."""

    @_derived(Ctx)
    def ctx(self, c: Ctx | None) -> Ctx | None:  # type: ignore[empty-body]
        """An active controller's context, or None."""

    @_derived(Zk)
    def zk(self, z: Zk) -> Zk:  # type: ignore[empty-body]
        """The ZooKeeper tree."""

    @_derived(Node)
    def node(self, n: Node) -> Node:  # type: ignore[empty-body]
        """One broker: its session, queues, controller (context, events, continuation),
        replicas and metadata cache."""

    @_derived(State)
    def state(self, s: State) -> State:  # type: ignore[empty-body]
        """A whole state."""

    @_derived(State, given=3)
    def _state_after(self, s: State, zk: Zk, nodes: tuple, chans: tuple) -> State:  # type: ignore[empty-body]
        """The image of ``s`` whose ZooKeeper tree, brokers and channels are given."""

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
            chans = self.chans(s.chans)
            c = _order(chans, best.chans, enc) if chans != best.chans else 0
            if c > 0:
                return None
            if c == 0:  # equal encodings: the image's tree, brokers and channels are best's
                image = self._state_after(s, best.zk, best.nodes, best.chans)
                return None if image == best or enc(image) >= enc(best) else image
        return self.state(s)

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


def _order(a: Any, b: Any, enc: Callable[[Any], bytes]) -> int:
    """-1, 0 or 1 as ``a``'s encoding sorts before, equal to or after ``b``'s."""
    if a is b:
        return 0
    ea, eb = enc(a), enc(b)
    return (ea > eb) - (ea < eb)


def _derive(stub: Callable[..., Any]) -> Callable[..., Any]:
    """The method ``stub`` marks (``_derived``): it renames its state record (None is its own
    image) field by field, each by the renamer's method for the kind the field declares
    (``state.FIELD_KINDS``; a field of one of ``ids.VALUE_KINDS`` is kept), a ``MEMOISED``
    kind's image remembered; compiled once, when this module is imported."""
    cls, given = stub._derives  # type: ignore[attr-defined]
    items, memo = [], False
    for i, written in enumerate(FIELD_KINDS[cls]):
        kind, v = written.removesuffix(" | None"), f"h{i}" if i < given else f"f{i}"
        if i < given or kind in VALUE_KINDS:
            items.append(v)
            continue
        if kind not in KIND_METHODS:
            raise TypeError(f"{cls.__name__}.{cls._fields[i]}: no renamer method for kind {kind}")
        m = KIND_METHODS[kind]
        if kind in MEMOISED:
            memo = True
            items.append(f"(memo(self.{m}, {v}) if {v} else {v})")
        else:
            items.append(f"self.{m}({v})" if kind == written else f"(None if {v} is None else self.{m}({v}))")
    n = len(FIELD_KINDS[cls])
    lines = [
        f"def {stub.__name__}(self, x{''.join(f', h{i}' for i in range(given))}):",
        "    if x is None:\n        return x",
        f"    {', '.join(f'f{i}' for i in range(n))}, = x",
        *(["    memo = self._memo"] if memo else []),
        f"    return _tnew(_cls, ({', '.join(items)},))",
    ]
    ns: dict[str, Any] = {"_tnew": tuple.__new__, "_cls": cls}
    exec(compile("\n".join(lines), f"<the renaming of {cls.__name__}>", "exec"), ns)
    fn = ns[stub.__name__]
    fn.__doc__, fn.__qualname__, fn.__module__ = stub.__doc__, stub.__qualname__, stub.__module__
    fn.__annotations__ = stub.__annotations__
    return fn


if State._fields[:3] != ("zk", "nodes", "chans"):  # what ``smaller_image`` decides on first
    raise TypeError("State's first fields must be zk, nodes and chans (Renamer.smaller_image)")
for _name, _stub in list(vars(Renamer).items()):
    if hasattr(_stub, "_derives"):
        setattr(Renamer, _name, _derive(_stub))
del _name, _stub
