"""Footprints of the controller model's actions, for partial-order reduction (issue 17).

A *location* is one independently changing piece of the state, at the granularity of actors
and channels (a tuple whose first element is its kind):

========================  =====================================================================
``("zk", f)``             one field ``f`` of ZooKeeper's data tree (``Zk``; not ``next_session``)
``("zks",)``              ``Zk.next_session`` (the server's session counter)
``("alive", b)``          broker ``b``'s process runs (``alive``)
``("sess", b)``           its ZooKeeper session as the broker knows it: ``session``, ``expired``
``("bep", b)``            the broker epoch it knows (``bepoch``)
``("ctl", b)``            its controller's watch flags and ``activeControllerId``
``("ctx", b)``            its controller's context (``ctx``)
``("pend", b)``           its controller's parked continuation (``pending``)
``("ev", b)``             its controller's event queue (one location: enqueueing reads it too)
``("zo", b, h)``          its ZooKeeper request queue: ``h`` 0 the head, 1 the tail
``("zi", b, h)``          its ZooKeeper response queue, head and tail
``("seen", b)``           the newest controller epoch its replica manager accepted
``("rep", b, p)``         its replica of partition ``p`` (leader, epoch, ISR, zkVersion, ...)
``("log", b, p)``         that replica's log and high watermark
``("cs", b)``             its controlled-shutdown progress
``("mc", b)``             its metadata cache (UpdateMetadata)
``("ch", i, h)``          controller channel ``i`` (sender * brokers + dest), head and tail
``("acked",)`` ...        the whole-state fields: ``acked``, ``produced``, ``crashes``,
                          ``restarts``, ``expiries``, ``invalid``, ``history``, ``done``,
                          ``shutdowns``
========================  =====================================================================

A FIFO queue is two locations: its consumer reads and writes the head, its producers the
tail, so taking the head of a non-empty queue commutes with appending to it. Three
whole-state fields are accumulators whose writes commute and which no action reads except
to accumulate: ``acked`` (a set union), ``history`` and ``done`` (bitwise or; in admin
configurations ``done`` is also read, and is then an ordinary location). ``invalid`` keeps
the first invalid transition: two actions that both write it do not commute, an action that
reads it only to keep the first one does not depend on it.

Each action belongs to a *class* (its kind and the actors it belongs to, e.g. ``("DL", i)``
for every delivery on channel ``i``): one actor's sequential steps. ``class_footprint``
gives what any action of a class may read and write in any state (an over-approximation);
``footprint`` the concrete footprint of an enabled action: its reads narrowed by its message,
request or leader, and its writes narrowed to the locations the step changed. (An action
reads every location it may write; a location it writes with the value it already holds is
one that no other action independent of it can write, so the write stays a no-op in every
state the independent actions lead to.) Two actions are
independent when neither writes what the other reads or writes (``independent``); the test
``tests/test_footprints.py`` checks on sampled reachable states that such pairs commute and
do not disable each other. ``enabling_classes`` names, for a class with no enabled action,
the classes one of which must act before it can be enabled (none when its budget is spent).

>>> from model.controller import ControllerConfig, ControllerSystem
>>> sys = ControllerSystem(ControllerConfig(brokers=2))
>>> fp = Footprints(sys)
>>> fp.class_of(next(iter(sys.successors(sys.init_states()[0])))[0])[0] in CLASS_KINDS
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from model.controller.actions import (
    AdminAddPartitions,
    AdminCreateTopic,
    AdminDeleteTopic,
    AdminEnableUnclean,
    AdminPreferredElection,
    AdminReassign,
    AdminUncleanElection,
    AutoRebalanceTick,
    ControlledShutdown,
    Crash,
    Deliver,
    Fetch,
    ProcessEvent,
    Produce,
    Restart,
    SessionExpire,
    SessionNotice,
    ShrinkIsr,
    ShutdownComplete,
    TimePasses,
    ZkReply,
    ZkServe,
)
from model.controller.locations import (
    _NODE_KINDS,
    ALL_ZK,
    H,
    Loc,
    T,
    changed_kinds,
    changed_locs,
    changes_any,
)
from model.controller.messages import (
    M_CS_RESPONSE,
    M_LEADER_AND_ISR,
    M_STOP_REPLICA,
    M_UPDATE_METADATA,
    Q_CREATE_CTL,
    Q_DELETE_CTL,
    Q_DELETE_ISR_CHANGES,
    Q_INC_EPOCH,
    Q_READ_BROKERS,
    Q_READ_CTL,
    Q_READ_EPOCH,
    Q_READ_ISR_CHANGES,
    Q_READ_PARTS,
    Q_REGISTER_BROKER,
    Q_REGISTER_CTL,
    Q_UPDATE_ISR,
    Q_WRITE_PARTS,
)
from model.controller.state import State

#: the ``Zk`` fields each ZooKeeper request reads (and may write); the others read every field
_ZK_OPS: dict[int, frozenset] = {
    op: frozenset(("zk", f) for f in fields)
    for op, fields in {
        Q_REGISTER_BROKER: ("brokers", "czxids"),
        Q_READ_CTL: ("controller", "epoch", "epoch_version"),
        Q_REGISTER_CTL: ("controller", "epoch", "epoch_version"),
        Q_CREATE_CTL: ("controller",),
        Q_READ_EPOCH: ("epoch", "epoch_version"),
        Q_INC_EPOCH: ("epoch", "epoch_version"),
        Q_DELETE_CTL: ("controller",),
        Q_READ_PARTS: ("parts", "unclean_dyn"),
        Q_WRITE_PARTS: ("parts", "epoch_version"),
        Q_READ_BROKERS: ("brokers",),
        Q_READ_ISR_CHANGES: ("isr_changes", "parts"),
        Q_DELETE_ISR_CHANGES: ("isr_changes", "epoch_version"),
        Q_UPDATE_ISR: ("parts", "isr_changes", "reassign"),
    }.items()
}

__all__ = [
    "CLASS_KINDS",
    "QUIET_DISABLED_KINDS",
    "Footprint",
    "Footprints",
    "changed_kinds",
    "changed_locs",
    "changes_any",
]


class Footprint(NamedTuple):
    """What an action reads and writes (frozensets of locations)."""

    reads: frozenset
    writes: frozenset

    def conflicts(self, other: Footprint) -> bool:
        """Dependent: one writes what the other reads or writes.

        >>> a = Footprint(frozenset({("zk",)}), frozenset())
        >>> a.conflicts(Footprint(frozenset(), frozenset({("zk",)}))), a.conflicts(a)
        (True, False)
        """
        return bool(self.writes & (other.reads | other.writes) or other.writes & self.reads)


#: the class kinds: one actor's steps of one action kind
CLASS_KINDS = (
    "PE", "ZR", "ZS", "DL", "PR", "FE", "SH", "CR", "RS", "EX", "NO",
    "AC", "AD", "AA", "AR", "AP", "AE", "AU", "AT", "CS", "SC", "TP",
)  # fmt: skip

#: action kinds never enabled in a quiet state (``invariants.controller_convergence.quiet``):
#: each needs a non-empty queue, a parked continuation, an expired or unexpired-but-dead
#: session or a controlled shutdown under way, which quiet excludes. A property that holds
#: in every state that is not quiet cannot be turned from false to true by them.
QUIET_DISABLED_KINDS = frozenset(
    {"ProcessEvent", "ZkServe", "ZkReply", "Deliver", "SessionNotice", "ShutdownComplete"}
)

_ACCUMULATORS = frozenset({("acked",), ("history",), ("done",)})


class Footprints:
    """The footprint declaration of one ``ControllerSystem``: classes, their static
    footprints, the dependency relation between classes, the concrete footprint of an
    enabled action, and the necessary enabling classes of a disabled class."""

    def __init__(self, sys: Any) -> None:
        self.sys = sys
        cfg = sys.cfg
        nb, np_ = sys.nb, sys.np
        self.nb, self.np = nb, np_
        self.admin_done = bool(sys.admin)  # admin handlers read ``done`` bits others set
        self.um = bool(cfg.send_update_metadata)  # UpdateMetadata sends read the whole channel
        classes: list[tuple] = []
        for b in range(nb):
            classes += [("PE", b), ("ZR", b), ("ZS", b), ("CR", b), ("RS", b), ("EX", b), ("NO", b)]
            classes += [("AT", b), ("CS", b), ("SC", b)]
            for p in range(np_):
                classes += [("PR", b, p), ("FE", b, p), ("SH", b, p)]
        classes += [("DL", i) for i in range(nb * nb)]
        classes += [("AC",), ("AD",), ("AA",), ("AR",), ("AP",), ("AE",), ("AU",), ("TP",)]
        self.classes = tuple(classes)
        self.static = {c: self._static(c) for c in self.classes}
        writers: dict[Loc, set[tuple]] = {}
        for c, fp in self.static.items():
            for loc in fp.writes:
                writers.setdefault(loc, set()).add(c)
        self.writers = {loc: frozenset(cs) for loc, cs in writers.items()}
        self._deps: dict[Footprint, frozenset] = {}

    # -- classes and static footprints ---------------------------------------------------

    def class_of(self, a: Any) -> tuple:
        """The class of action ``a`` (its kind and actor).

        >>> from model.controller import ControllerConfig, ControllerSystem
        >>> Footprints(ControllerSystem(ControllerConfig(brokers=2))).class_of(Deliver(1, 0, (0, 1, 1, ())))
        ('DL', 2)
        """
        tp = type(a)
        if tp is ProcessEvent:
            return ("PE", a.broker)
        if tp is ZkServe:
            return ("ZS", a.broker)
        if tp is ZkReply:
            return ("ZR", a.broker)
        if tp is Deliver:
            return ("DL", a.sender * self.nb + a.dest)
        if tp is Fetch:
            return ("FE", a.broker, a.partition)
        if tp is Produce:
            return ("PR", a.broker, a.partition)
        if tp is ShrinkIsr:
            return ("SH", a.broker, a.partition)
        return _SIMPLE[tp](a)

    def _node(self, b: int, kinds: Iterable[str] = _NODE_KINDS) -> set[Loc]:
        out: set[Loc] = set()
        for k in kinds:
            if k in ("zo", "zi"):
                out |= {(k, b, H), (k, b, T)}
            else:
                out.add((k, b))
        out |= {(k, b, p) for k in ("rep", "log") for p in range(self.np)} if "rep" in kinds else set()
        return out

    def _controller(self, b: int) -> tuple[set[Loc], set[Loc]]:
        """A controller step of broker ``b`` (an event processed or a continuation resumed)."""
        nb = self.nb
        rw = {("ctl", b), ("ctx", b), ("pend", b), ("ev", b), ("zo", b, T)}
        rw |= {("ch", b * nb + d, T) for d in range(nb)}
        rw |= {("ch", b * nb + d, H) for d in range(nb)}  # resignation / removeBroker clear them
        if self.admin_done:
            rw.add(("done",))
        return rw, rw | {("invalid",)}

    def _fire(self, skip: int = -1) -> tuple[set[Loc], set[Loc]]:
        """A watch fired: read every broker's watch flags and liveness, append to its queue."""
        r = {("ctl", c) for c in range(self.nb) if c != skip} | {
            (k, c) for c in range(self.nb) if c != skip for k in ("alive", "sess")
        }
        return r | {("ev", c) for c in range(self.nb)}, {("ev", c) for c in range(self.nb) if c != skip}

    def _static(self, c: tuple) -> Footprint:
        nb = self.nb
        k = c[0]
        r: set[Loc] = set()
        w: set[Loc] = set()
        epoch = {("zk", "epoch")}  # the fault budget reads /controller_epoch
        if k in ("PE", "ZR"):
            b = c[1]
            r, w = self._controller(b)
            r.add(("alive", b))
            if k == "ZR":
                r |= {("zi", b, H)}
                w |= {("zi", b, H), ("bep", b), ("ev", b)}
                w |= {(x, b, p) for x in ("rep", "log") for p in range(self.np)}  # an ISR result
        elif k == "ZS":
            b = c[1]
            r = {("zo", b, H), ("alive", b), ("sess", b)} | ALL_ZK
            w = {("zo", b, H), ("zi", b, T), ("ctl", b)} | ALL_ZK
            fr, fw = self._fire()
            r |= fr
            w |= fw
            if self.sys.merged:
                zr = self._static(("ZR", b))
                r |= zr.reads | {("zi", b, T)}
                w |= zr.writes | {("zi", b, H)}
        elif k == "DL":
            i = c[1]
            s_, d = divmod(i, nb)
            r = {("ch", i, H), ("alive", d), ("seen", d), ("bep", d), ("cs", d), ("mc", d)}
            w = {("ch", i, H), ("seen", d), ("cs", d), ("mc", d)}  # mc: UpdateMetadata's cache
            if self.sys.admin:  # StopReplica (admin workflows only) answers its sender
                r |= {("alive", s_), ("ev", s_)}
                w |= {("ev", s_)}
            w |= {(x, d, p) for x in ("rep", "log") for p in range(self.np)}
        elif k == "PR":
            b, p = c[1], c[2]
            r = {("alive", b), ("rep", b, p), ("produced",)}
            w = {("log", b, p), ("produced",)}
        elif k == "FE":
            p = c[2]
            slots = self.sys.slots[p]  # a follower fetches from a leader among the replicas
            r = {("alive", x) for x in slots} | {("seen", x) for x in slots}
            w = {(x, y, p) for x in ("rep", "log") for y in slots} | {("zo", x, T) for x in slots}
        elif k == "SH":
            b, p = c[1], c[2]
            slots = self.sys.slots[p]
            r = {("alive", x) for x in slots} | {("rep", x, p) for x in slots}
            r |= {("log", b, p), ("seen", b)}
            w = {("rep", b, p), ("zo", b, T)}
        elif k in ("CR", "SC"):
            b = c[1]
            r = w = self._node(b, (*_NODE_KINDS, "rep"))
            chans = {("ch", i, h) for i in range(nb * nb) if i // nb == b or i % nb == b for h in (H, T)}
            r = r | chans | {("crashes",)} | epoch
            w = w | chans | {("crashes",)}
            if k == "SC":
                w = w | {("done",)}  # D_SHUTDOWN
                fr, fw = self._fire(skip=b)
                zk = {("zk", "controller"), ("zk", "brokers")}
                r |= fr | zk | {(x, y) for x in ("alive", "ctx") for y in range(nb)}
                w |= fw | zk
        elif k == "RS":
            b = c[1]
            r = {("alive", b), ("sess", b), ("restarts",), ("zks",)} | epoch
            w = {
                ("alive", b),
                ("sess", b),
                ("restarts",),
                ("zks",),
                ("zo", b, H),
                ("zo", b, T),
                ("zi", b, H),
                ("zi", b, T),
            }
        elif k == "EX":
            b = c[1]
            fr, fw = self._fire(skip=b)
            zk = {("zk", "controller"), ("zk", "brokers")}
            r = {("alive", b), ("sess", b), ("expiries",)} | zk | epoch | fr
            w = {("sess", b), ("expiries",)} | zk | fw
        elif k == "NO":
            b = c[1]
            cr, cw = self._controller(b)
            own: set[Loc] = self._node(b, (*_NODE_KINDS, "rep"))
            r = cr | own | {("zks",)}
            w = cw | own | {("zks",)}
        elif k in ("AC", "AD", "AA", "AR", "AP", "AE"):
            fr, fw = self._fire()
            r = set(ALL_ZK) | fr
            w = set(ALL_ZK) | fw
        elif k == "AU":
            r = {("zk", "controller"), ("zk", "admin_elections")} | {
                (x, y) for x in ("alive", "ctx", "ev") for y in range(nb)
            }
            w = {("zk", "admin_elections")} | {("ev", y) for y in range(nb)}
        elif k == "AT":
            b = c[1]
            r = {("alive", b), ("sess", b), ("ctx", b), ("ev", b), ("pend", b)}
            w = {("ev", b)}
        elif k == "CS":
            b = c[1]
            r = {
                ("alive", b),
                ("sess", b),
                ("cs", b),
                ("shutdowns",),
                ("zk", "brokers"),
                ("zk", "controller"),
            }
            r |= {(x, y) for x in ("alive", "ctx", "ev") for y in range(nb)}
            w = {("cs", b), ("shutdowns",)} | {("ev", y) for y in range(nb)}
        # ``done`` is read too in admin configurations (a resumed reassignment or deletion
        # completes only after the bit of its pick-up is set): an ordinary location there
        acc = _ACCUMULATORS - {("done",)} if self.admin_done else _ACCUMULATORS
        w -= acc
        # an action reads what it may write (``invalid`` only to keep the first entry)
        r = (r | w) - acc - {("invalid",)}
        return Footprint(frozenset(r), frozenset(w))

    def class_footprint(self, c: tuple) -> Footprint:
        """What any action of class ``c`` may read and write, in any state.

        >>> from model.controller import ControllerConfig, ControllerSystem
        >>> fp = Footprints(ControllerSystem(ControllerConfig(brokers=2)))
        >>> ("ch", 2, 0) in fp.class_footprint(("DL", 2)).writes
        True
        """
        return self.static[c]

    # -- concrete footprints --------------------------------------------------------------

    def footprint(self, s: State, a: Any, t: State, changed: set[Loc] | None = None) -> Footprint:
        """The footprint of the enabled action ``a`` from ``s`` to ``t`` (``changed``: the
        locations the step changed, when already known): its reads narrowed by its message,
        request, leader or the watches that can fire, its writes narrowed to what it changed.

        >>> from model.controller import ControllerConfig, ControllerSystem
        >>> sys = ControllerSystem(ControllerConfig(brokers=2))
        >>> s = sys.init_states()[0]
        >>> a, t = next(iter(sys.successors(s)))
        >>> fp = Footprints(sys)
        >>> fp.footprint(s, a, t).writes <= fp.class_footprint(fp.class_of(a)).writes
        True
        """
        c = self.class_of(a)
        k = c[0]
        static = self.static[c]
        if changed is None:
            changed = changed_locs(s, t)
        w = static.writes & changed
        if k == "DL":
            r = self._deliver_reads(a)
        elif k == "FE":
            f, p, ld = a.broker, a.partition, a.leader
            r = {("alive", f), ("alive", ld), ("rep", f, p), ("log", f, p), ("rep", ld, p), ("log", ld, p)}
            r |= {("seen", ld), ("zo", ld, T)}
        elif k in ("PE", "ZR", "NO", "ZS"):
            b = c[1]
            r = set(static.reads)
            if not self.um:
                # a channel is read to clear it only (resignation, removeBroker): a no-op on an
                # empty one, which only this controller's steps fill
                r -= {("ch", b * self.nb + d, H) for d in range(self.nb)}
            if k == "ZS":
                r -= ALL_ZK
                r |= _ZK_OPS.get(a.req[0], ALL_ZK)
                nodes = s.nodes
                if not (changed & ALL_ZK):
                    # no znode changed, so no watch fired: the other brokers are not read
                    r -= {(y, x) for y in ("ev", "ctl", "alive", "sess") for x in range(self.nb) if x != b}
                else:
                    # a fired watch reaches only brokers with a watch set (which it reads, so
                    # no independent action sets one): the others' queues and sessions are
                    # not read
                    r -= {
                        (y, x)
                        for x in range(self.nb)
                        if x != b and not (nodes[x].watch or nodes[x].ctl_watch)
                        for y in ("ev", "alive", "sess")
                    }
        elif k == "EX":
            # the watches it fires reach only brokers with a watch set
            nodes = s.nodes
            r = set(static.reads) - {
                (y, x)
                for x in range(self.nb)
                if x != c[1] and not (nodes[x].watch or nodes[x].ctl_watch)
                for y in ("ev", "alive", "sess")
            }
        else:
            return Footprint(static.reads, w) if w != static.writes else static
        return Footprint(frozenset(r | w), w)

    def _deliver_reads(self, a: Deliver) -> set[Loc]:
        d, snd = a.dest, a.sender
        i = snd * self.nb + d
        msg = a.msg
        kind = msg[0]
        r: set[Loc] = {("ch", i, H), ("alive", d), ("seen", d), ("bep", d)}
        if kind == M_LEADER_AND_ISR:
            for entry in msg[3]:
                r |= {("rep", d, entry[0]), ("log", d, entry[0])}
        elif kind == M_STOP_REPLICA:
            mask = msg[3][0]
            r |= {(x, d, p) for x in ("rep", "log") for p in range(self.np) if (mask >> p) & 1}
            r |= {("alive", snd), ("ev", snd)}
        elif kind == M_CS_RESPONSE:
            r.add(("cs", d))
        elif kind != M_UPDATE_METADATA:  # pragma: no cover - every message kind is above
            return set(self.static[("DL", i)].reads)
        return r

    def independent(self, s: State, a: Any, t: State, b: Any, u: State) -> bool:
        """Actions ``a`` (to ``t``) and ``b`` (to ``u``), both enabled in ``s``, are independent.

        >>> from model.controller import ControllerConfig, ControllerSystem
        >>> sys = ControllerSystem(ControllerConfig(brokers=2))
        >>> s = sys.init_states()[0]
        >>> (a, t), = [x for x in sys.successors(s) if type(x[0]) is Crash][:1]
        >>> Footprints(sys).independent(s, a, t, a, t)
        False
        """
        return not self.footprint(s, a, t).conflicts(self.footprint(s, b, u))

    def dependent_classes(self, fp: Footprint) -> frozenset:
        """Every class some action of which may be dependent on an action with footprint ``fp``."""
        got = self._deps.get(fp)
        if got is None:
            got = frozenset(c for c, cf in self.static.items() if fp.conflicts(cf))
            self._deps[fp] = got
        return got

    @staticmethod
    def changed_locs(s: State, t: State) -> set[Loc]:
        """The locations the step from ``s`` to ``t`` changed (:func:`changed_locs`)."""
        return changed_locs(s, t)

    @staticmethod
    def changes_any(s: State, t: State, kinds: frozenset) -> bool:
        """Whether the step from ``s`` to ``t`` changed a location of one of ``kinds``
        (:func:`changes_any`)."""
        return changes_any(s, t, kinds)

    @staticmethod
    def guard_disabled(name: str) -> frozenset[str]:
        """Action kinds never enabled where guard ``name`` holds (``quiet``: the controller
        plane's, ``QUIET_DISABLED_KINDS``; any other guard: none).

        >>> sorted(Footprints.guard_disabled("quiet"))[:2], Footprints.guard_disabled("other")
        (['Deliver', 'ProcessEvent'], frozenset())
        """
        return QUIET_DISABLED_KINDS if name == "quiet" else frozenset()

    # -- enabling ----------------------------------------------------------------------

    def _writers(self, locs: Iterable[Loc]) -> set[tuple]:
        out: set[tuple] = set()
        for loc in locs:
            out |= self.writers.get(loc, frozenset())
        return out

    def enabling_classes(self, s: State, c: tuple) -> set[tuple]:
        """For a class with no enabled action in ``s``: classes one of which must act before it
        can be enabled (empty when a spent budget keeps it disabled for ever; budgets only grow).

        >>> from model.controller import ControllerConfig, ControllerSystem
        >>> sys = ControllerSystem(ControllerConfig(brokers=2, max_restarts=0))
        >>> Footprints(sys).enabling_classes(sys.init_states()[0], ("RS", 0))
        set()
        """
        cfg = self.sys.cfg
        k = c[0]
        zk = s.zk
        if k in ("PE", "ZR", "ZS", "DL"):
            if k == "DL":
                i = c[1]
                d = i % self.nb
                if not s.chans[i]:
                    return self._writers([("ch", i, T)])
                n = s.nodes[d]
                if not n.alive:
                    return self._writers([("alive", d)])
                msg = s.chans[i][0]
                return self._writers([("rep", d, e[0]) for e in msg[3]] if msg[0] == M_LEADER_AND_ISR else [])
            b = c[1]
            n = s.nodes[b]
            if k == "ZS":
                if not n.zk_out:
                    return self._writers([("zo", b, T)])
                return self._writers([("alive", b), ("sess", b)])
            if not n.alive:
                return self._writers([("alive", b)])
            if k == "ZR":
                return self._writers([("zi", b, T)])
            if n.pending is not None:
                return self._writers([("pend", b)])
            return self._writers([("ev", b)])
        # one false conjunct of the guard, and the classes that write what it reads
        epoch_spent = zk.epoch >= cfg.max_controller_epoch  # no new fault (unless it drops)
        if k == "CR":
            if s.crashes >= cfg.max_crashes:
                return set()
            if epoch_spent:
                return self._writers([("zk", "epoch")])
            return self._writers([("alive", c[1])])
        if k == "RS":
            if s.restarts >= cfg.max_restarts:
                return set()
            if epoch_spent:
                return self._writers([("zk", "epoch")])
            return self._writers([("alive", c[1]), ("sess", c[1])])
        if k == "EX":
            n = s.nodes[c[1]]
            if not self.sys.session_live(n):
                return self._writers([("sess", c[1])])
            # live session, alive: the fault budget stops it until the broker dies
            locs = [("alive", c[1])]
            if epoch_spent:
                locs.append(("zk", "epoch"))
            return self._writers(locs)
        if k == "NO":
            return self._writers([("sess", c[1])])
        if k in ("PR", "FE", "SH") and c[2] not in self.sys.parts_of[c[1]]:
            return set()  # not a replica: the data plane never runs it
        if k in ("FE", "SH"):
            b, p = c[1], c[2]
            n = s.nodes[b]
            if not n.alive:
                return self._writers([("alive", b)])
            r = n.reps[p]
            if k == "SH" or r.leader < 0 or r.leader == b:
                # not following (or, shrinking: not leading, pending, nobody to drop): its own
                # replica's state or the followers' (their replicas, liveness, fetched offsets)
                slots = self.sys.slots[p]
                return self._writers(
                    [("rep", b, p), ("log", b, p)]
                    + [(x, y, p) for x in ("rep", "log") for y in slots]
                    + [("alive", y) for y in slots]
                )
            ld = r.leader
            return self._writers(
                [("alive", ld), ("rep", ld, p), ("log", ld, p), ("rep", b, p), ("log", b, p)]
            )
        if k == "PR":
            if s.produced >= cfg.max_records:
                return set()
            b, p = c[1], c[2]
            n = s.nodes[b]
            return self._writers([("alive", b)] if not n.alive else [("rep", b, p)])
        if k == "TP" and not cfg.liveness:
            return set()
        if k == "AC" and zk.created >= self.sys.later:
            return set()
        if k == "AD" and zk.deletes >= cfg.max_topic_deletions:
            return set()
        if k == "AA" and not self.sys.added:
            return set()
        if k == "AR" and zk.reassigns >= cfg.max_reassignments:
            return set()
        if k == "AP" and zk.preferreds >= cfg.max_preferred_elections:
            return set()
        if k == "AE" and len(zk.unclean_dyn) >= cfg.max_unclean_enables:
            return set()
        if k == "AU" and zk.admin_elections >= cfg.max_admin_unclean_elections:
            return set()
        if k == "AT" and not cfg.auto_leader_rebalance:
            return set()
        if k in ("CS", "SC") and not cfg.max_controlled_shutdowns:
            return set()
        if k == "CS" and s.shutdowns >= cfg.max_controlled_shutdowns and s.nodes[c[1]].cs == 0:
            return set()
        return self._writers(self.static[c].reads)


_SIMPLE: dict[type, Any] = {
    Crash: lambda a: ("CR", a.broker),
    Restart: lambda a: ("RS", a.broker),
    SessionExpire: lambda a: ("EX", a.broker),
    SessionNotice: lambda a: ("NO", a.broker),
    AdminCreateTopic: lambda a: ("AC",),
    AdminDeleteTopic: lambda a: ("AD",),
    AdminAddPartitions: lambda a: ("AA",),
    AdminReassign: lambda a: ("AR",),
    AdminPreferredElection: lambda a: ("AP",),
    AdminEnableUnclean: lambda a: ("AE",),
    AdminUncleanElection: lambda a: ("AU",),
    AutoRebalanceTick: lambda a: ("AT", a.broker),
    ControlledShutdown: lambda a: ("CS", a.broker),
    ShutdownComplete: lambda a: ("SC", a.broker),
    TimePasses: lambda a: ("TP",),
}
