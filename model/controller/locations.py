"""Locations of the controller model's state, for partial-order reduction (issue 17): which
pieces of the state a step changed (``changed_locs``), their kinds (``changed_kinds``) and
whether a step changed a location of some kinds (``changes_any``, the reduction's visibility
test). ``model/controller/footprints.py`` lists the location kinds and declares what each
action reads and writes.

>>> from model.controller import ControllerConfig, ControllerSystem
>>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
>>> sorted(changed_kinds(s, s._replace(crashes=1)))
['crashes']
"""

from __future__ import annotations

from model.controller.state import State, Zk

__all__ = ["ALL_ZK", "ZK_FIELDS", "H", "Loc", "T", "changed_kinds", "changed_locs", "changes_any"]

Loc = tuple
H, T = 0, 1  # a queue's head and tail


_NODE_KINDS = ("alive", "sess", "bep", "ctl", "ctx", "pend", "ev", "zo", "zi", "seen", "cs", "mc")
_NODE_FIELDS = (
    ("alive", "alive"),
    ("session", "sess"),
    ("expired", "sess"),
    ("bepoch", "bep"),
    ("zk_out", "zo"),
    ("zk_in", "zi"),
    ("ctl_watch", "ctl"),
    ("watch", "ctl"),
    ("active_id", "ctl"),
    ("ctx", "ctx"),
    ("events", "ev"),
    ("pending", "pend"),
    ("seen_epoch", "seen"),
    ("cs", "cs"),
    ("mc_live", "mc"),
    ("mc_parts", "mc"),
)
ZK_FIELDS = tuple(f for f in Zk._fields if f != "next_session")
ALL_ZK = frozenset(("zk", f) for f in ZK_FIELDS)

_GLOBALS = ("acked", "produced", "crashes", "restarts", "expiries", "invalid", "history", "done", "shutdowns")


def _queue(out: set[Loc], kind: str, key: int, old: tuple, new: tuple) -> None:
    """The queue locations a step changed: the tail when it only appended, the head when it
    only took messages from the front, both otherwise."""
    if new is old or new == old:
        return
    n = len(old)
    if len(new) > n and new[:n] == old:
        out.add((kind, key, T))
    elif len(new) < n and old[n - len(new) :] == new:
        out.add((kind, key, H))
    else:
        out |= {(kind, key, H), (kind, key, T)}


def changed_locs(s: State, t: State) -> set[Loc]:
    """The locations whose value differs between ``s`` and ``t`` (what a step wrote).

    >>> from model.controller import ControllerConfig, ControllerSystem
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> sorted(changed_locs(s, s._replace(crashes=1, zk=s.zk._replace(epoch=7))))
    [('crashes',), ('zk', 'epoch')]
    """
    out: set[Loc] = set()
    if t.zk is not s.zk:
        for f, x, y in zip(Zk._fields, s.zk, t.zk):
            if x is not y and x != y:
                out.add(("zks",) if f == "next_session" else ("zk", f))
    if t.nodes is not s.nodes:
        for b, (n, m) in enumerate(zip(s.nodes, t.nodes)):
            if n is m:
                continue
            for f, k in _NODE_FIELDS:
                x, y = getattr(n, f), getattr(m, f)
                if x is y or x == y:
                    continue
                if k in ("zo", "zi"):
                    _queue(out, k, b, x, y)
                else:
                    out.add((k, b))
            if n.reps is not m.reps:
                for p, (r, q) in enumerate(zip(n.reps, m.reps)):
                    if r is not q and r != q:
                        if r.log != q.log or r.hw != q.hw:
                            out.add(("log", b, p))
                        if r._replace(log=(), hw=0) != q._replace(log=(), hw=0):
                            out.add(("rep", b, p))
    if t.chans is not s.chans:
        for i, (x, y) in enumerate(zip(s.chans, t.chans)):
            if x is not y:
                _queue(out, "ch", i, x, y)
    for f in _GLOBALS:
        if getattr(s, f) != getattr(t, f):
            out.add((f,))
    return out


def changed_kinds(s: State, t: State) -> frozenset[str]:
    """The location kinds whose value differs between ``s`` and ``t`` (what a step wrote).

    >>> from model.controller import ControllerConfig, ControllerSystem
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> sorted(changed_kinds(s, s._replace(crashes=1)))
    ['crashes']
    """
    out: set[str] = set()
    if t.zk is not s.zk and t.zk != s.zk:
        if t.zk.next_session != s.zk.next_session:
            out.add("zks")
        if t.zk._replace(next_session=0) != s.zk._replace(next_session=0):
            out.add("zk")
    if t.nodes is not s.nodes:
        for n, m in zip(s.nodes, t.nodes):
            if n is m:
                continue
            for f, k in _NODE_FIELDS:
                if getattr(n, f) != getattr(m, f):
                    out.add(k)
            if n.reps != m.reps:
                for r, q in zip(n.reps, m.reps):
                    if r is not q:
                        if r.log != q.log or r.hw != q.hw:
                            out.add("log")
                        if r._replace(log=(), hw=0) != q._replace(log=(), hw=0):
                            out.add("rep")
    if t.chans is not s.chans and t.chans != s.chans:
        out.add("ch")
    for f in _GLOBALS:
        if getattr(s, f) != getattr(t, f):
            out.add(f)
    return frozenset(out)


_NODE_FIELDS_OF: dict[frozenset, tuple[tuple[str, str], ...]] = {}


def changes_any(s: State, t: State, kinds: frozenset) -> bool:
    """Whether the step from ``s`` to ``t`` changed a location of one of ``kinds``: the same as
    ``bool(changed_kinds(s, t) & kinds)``, stopping at the first such location (the reduction's
    visibility test, run on every enabled action of every expanded state).

    >>> from model.controller import ControllerConfig, ControllerSystem
    >>> s = ControllerSystem(ControllerConfig(brokers=2)).init_states()[0]
    >>> t = s._replace(crashes=1)
    >>> changes_any(s, t, frozenset({"crashes"})), changes_any(s, t, frozenset({"zk", "rep"}))
    (True, False)
    """
    if t.zk is not s.zk:
        if "zk" in kinds:
            for f, x, y in zip(Zk._fields, s.zk, t.zk):
                if x is not y and f != "next_session" and x != y:
                    return True
        if "zks" in kinds and s.zk.next_session != t.zk.next_session:
            return True
    for f in _GLOBALS:
        if f in kinds and getattr(s, f) != getattr(t, f):
            return True
    if t.nodes is not s.nodes:
        fields = _NODE_FIELDS_OF.get(kinds)
        if fields is None:
            fields = _NODE_FIELDS_OF[kinds] = tuple((f, k) for f, k in _NODE_FIELDS if k in kinds)
        rep, log = "rep" in kinds, "log" in kinds
        for n, m in zip(s.nodes, t.nodes):
            if n is m:
                continue
            for f, _ in fields:
                x, y = getattr(n, f), getattr(m, f)
                if x is not y and x != y:
                    return True
            if (rep or log) and n.reps is not m.reps:
                for r, q in zip(n.reps, m.reps):
                    if r is q or r == q:
                        continue
                    if log and (r.log != q.log or r.hw != q.hw):
                        return True
                    if rep and r._replace(log=(), hw=0) != q._replace(log=(), hw=0):
                        return True
    return "ch" in kinds and t.chans is not s.chans and t.chans != s.chans
