"""``eventually`` properties on a state graph held as fingerprints: what an engine that does
not keep its states (``--workers``, spark) records while it searches, and the check after it.

While the search runs, every expanded state contributes its goal and trigger bits (one pair
per ``eventually`` property) and every transition an edge record ``(source key, target key,
action fingerprint, action kind)`` (:class:`LiveRecorder`, 26 bytes an edge). After a complete
search the engine hands :func:`check_eventually` a :class:`FingerprintGraph`: the keys of its
states in ``bfs`` order with their parents, and the records. Each property ``trigger ~>
goal`` is decided under weak fairness as :mod:`explorer.search.liveness` decides it:

1. the *region*: a breadth-first search (``scipy.sparse.csgraph``) from the trigger states
   (without a trigger: the initial states) through states where ``goal`` is false;
2. its strongly connected components (``scipy.sparse.csgraph.connected_components``, in C
   over CSR arrays);
3. a component is a counterexample when it has a cycle (more than one state, or a
   self-loop) and every fair action enabled in all of its states is taken on one of its
   edges; a region state without successors is one too (the behaviour ends without the goal).

A failing property's lasso is built by :func:`explorer.search.liveness.check_leads_to` on
the region only (integers standing for states), then replayed through ``successors`` from
an initial state, each step's key and action fingerprint compared.

Example
-------
>>> from explorer.core import eventually
>>> class Spin:  # 0 -> 1 -> 1 ...: the goal 2 is never reached
...     def init_states(self): return [0]
...     def successors(self, s): return [("go", 1)] if s == 0 else [("spin", 1)]
>>> rec = LiveRecorder([eventually("two", lambda s: s == 2, "")], hash)
>>> rec.state(hash(0), 0); rec.edge(hash(0), "go", hash(1), 0)
>>> rec.state(hash(1), 1); rec.edge(hash(1), "spin", hash(1), 1)
>>> g = FingerprintGraph(np.array([hash(0), hash(1)], np.uint64), np.array([-1, 0]), [rec.records(["go", "spin"])])
>>> out = check_eventually(Spin(), rec.props, g, hash, keep_going=False, action_fp=hash)
>>> out["two"].length, out["two"].loop_start
(2, 1)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from explorer.core import Property, Violation
from explorer.encoding import fingerprint
from explorer.search.liveness import check_leads_to
from explorer.search.traces import trace_step

__all__ = ["FingerprintGraph", "GraphError", "LiveRecorder", "action_fingerprint", "check_eventually"]

_MASK = (1 << 64) - 1


class GraphError(RuntimeError):
    """The recorded graph does not add up (an edge to an unrecorded state, a lasso that does
    not replay): a fingerprint collision or a model that is not deterministic."""


def action_fingerprint(fp: Callable[[Any], int], a: Any) -> int:
    """A 64-bit fingerprint of an action (its canonical encoding; else its ``repr``).

    >>> action_fingerprint(fingerprint, ("go", 1)) == fingerprint(("go", 1))
    True
    """
    try:
        return fp(a) & _MASK
    except (TypeError, ValueError):
        return fingerprint(("repr", repr(a)))


class LiveRecorder:
    """Collects goal/trigger bits and edges as numpy-ready lists.

    ``props`` are the ``eventually`` properties; ``fp`` the function that fingerprints an
    action (None records nothing but the empty arrays).
    """

    def __init__(self, props: list[Property], fp: Callable[[Any], int] | None):
        self.props = props
        self.fp = fp
        self.s_fps: list[int] = []
        self.s_bits: list[int] = []
        self.src: list[int] = []
        self.dst: list[int] = []
        self.afp: list[int] = []
        self.kind: list[int] = []
        self._afp: dict[Any, int] = {}

    def state(self, f: int, s: Any) -> None:
        """Record an expanded state: bit ``2i`` is goal ``i``, bit ``2i + 1`` its trigger."""
        if self.fp is None:
            return
        bits = 0
        for i, p in enumerate(self.props):
            if p.check(s):
                bits |= 1 << (2 * i)
            if p.trigger is not None and p.trigger(s):
                bits |= 1 << (2 * i + 1)
        self.s_fps.append(f & _MASK)
        self.s_bits.append(bits)

    def edge(self, f: int, a: Any, g: int, kind_id: int) -> None:
        """Record the transition ``f --a--> g`` (``kind_id`` indexes the caller's kind table)."""
        if self.fp is None:
            return
        try:
            h = self._afp.get(a)
            if h is None:
                h = self._afp[a] = action_fingerprint(self.fp, a)
        except TypeError:  # an unhashable action
            h = action_fingerprint(self.fp, a)
        self.src.append(f & _MASK)
        self.dst.append(g & _MASK)
        self.afp.append(h)
        self.kind.append(kind_id)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """``(state fps, bits, edge sources, targets, action fps, kind ids)`` as arrays."""
        return (
            np.array(self.s_fps, dtype=np.uint64),
            np.array(self.s_bits, dtype=np.uint64),
            np.array(self.src, dtype=np.uint64),
            np.array(self.dst, dtype=np.uint64),
            np.array(self.afp, dtype=np.uint64),
            np.array(self.kind, dtype=np.int32),
        )

    def records(self, kind_names: list[str]) -> dict[str, np.ndarray]:
        """The records as named arrays, the kind ids mapped to ``kind_names`` (names by id)."""
        a = self.arrays()
        names = np.array([*kind_names, ""], dtype=str)  # no objects: the files load without pickle
        return {"s_fps": a[0], "s_bits": a[1], "src": a[2], "dst": a[3], "afp": a[4], "kind": names[a[5]]}

    def clear(self) -> None:
        """Forget what was recorded (after it was handed on)."""
        for lst in (self.s_fps, self.s_bits, self.src, self.dst, self.afp, self.kind):
            lst.clear()


class FingerprintGraph:
    """The explored graph as arrays: ``keys`` (uint64) of the states in ``bfs`` order,
    ``parent`` (the index of each state's parent, -1 for an initial state), and the
    recorded ``parts`` (:meth:`LiveRecorder.records`; kinds as names)."""

    def __init__(self, keys: np.ndarray, parent: np.ndarray, parts: list[dict[str, np.ndarray]]):
        self.fps = np.asarray(keys, dtype=np.uint64)
        self.n = len(self.fps)
        self.parent = np.asarray(parent, dtype=np.int64)
        self._order = np.argsort(self.fps)
        self._sorted = self.fps[self._order]
        cat = {
            k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0) for k in ("src", "dst", "afp")
        }
        self.src = self.ids(cat["src"].astype(np.uint64))
        self.dst = self.ids(cat["dst"].astype(np.uint64))
        self.afp = cat["afp"].astype(np.uint64)
        self.kind = np.concatenate([p["kind"] for p in parts]) if parts else np.zeros(0, dtype=object)
        self.bits = np.zeros(self.n, dtype=np.uint64)
        if parts:
            self.bits[self.ids(np.concatenate([p["s_fps"] for p in parts]).astype(np.uint64))] = (
                np.concatenate([p["s_bits"] for p in parts]).astype(np.uint64)
            )

    def ids(self, fps: np.ndarray) -> np.ndarray:
        """The indices of the states with these keys (every key must be recorded)."""
        pos = np.searchsorted(self._sorted, fps)
        np.minimum(pos, max(self.n - 1, 0), out=pos)
        if len(fps) and not (self._sorted[pos] == fps).all():
            raise GraphError("liveness: an edge leads to a state the search did not record")
        return np.asarray(self._order[pos], dtype=np.int64)

    def bit(self, b: int) -> np.ndarray:
        """Bit ``b`` of every state's record, as booleans."""
        return ((self.bits >> np.uint64(b)) & np.uint64(1)).astype(bool)


def _bfs_from(n: int, src: np.ndarray, dst: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Every node reachable from ``starts`` along the edges (a super-source, one BFS)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    s = np.concatenate([src, np.full(len(starts), n)])
    d = np.concatenate([dst, starts])
    g = csr_matrix((np.ones(len(s), dtype=np.int8), (s, d)), shape=(n + 1, n + 1))
    order = breadth_first_order(g, n, directed=True, return_predecessors=False)
    return np.asarray(order[order != n], dtype=np.int64)


def _pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(len(a), dtype=[("a", np.int64), ("b", np.uint64)])
    out["a"], out["b"] = a, b
    return out


def bad_targets(
    g: FingerprintGraph, i: int, has_trigger: bool, fair: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Property ``i``'s region and its counterexample states (empty: the property holds).

    ``fair`` marks the edges whose action is weakly fair.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    bad = ~g.bit(2 * i)
    starts = np.nonzero(bad & (g.bit(2 * i + 1) if has_trigger else g.parent < 0))[0]
    if not len(starts):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    m = bad[g.src] & bad[g.dst]
    region = _bfs_from(g.n, g.src[m], g.dst[m], starts)
    inreg = np.zeros(g.n, dtype=bool)
    inreg[region] = True
    outdeg = np.bincount(g.src, minlength=g.n)
    targets = [region[outdeg[region] == 0]]
    rm = inreg[g.src] & inreg[g.dst]
    rs, rd = g.src[rm], g.dst[rm]
    sub = csr_matrix((np.ones(len(rs), dtype=np.int8), (rs, rd)), shape=(g.n, g.n))
    _, labels = connected_components(sub, directed=True, connection="strong")
    size = np.bincount(labels[region], minlength=labels.max() + 1 if len(labels) else 0)
    cyclic = size > 1
    cyclic[labels[rs[rs == rd]]] = True
    inner = labels[rs] == labels[rd]
    taken = np.unique(_pairs(labels[rs[inner]], g.afp[rm][inner]))
    fm = inreg[g.src] & fair
    en = np.unique(_pairs(g.src[fm], g.afp[fm]))  # (state, fair action) enabled there
    en_comp = _pairs(labels[en["a"]], en["b"])
    uniq, counts = np.unique(en_comp, return_counts=True)
    everywhere = uniq[counts == size[uniq["a"]]]
    starved = np.unique(everywhere[~np.isin(everywhere, taken)]["a"])
    ok = cyclic.copy()
    ok[starved] = False
    comps = region[ok[labels[region]]]
    targets.append(comps)
    return region, np.concatenate(targets)


def _fair_kinds(system: Any, p: Property) -> frozenset[str] | None:
    kinds = p.fairness
    if kinds is None and hasattr(system, "fair_action_kinds"):
        kinds = tuple(system.fair_action_kinds())
    return None if kinds is None else frozenset(kinds)


def check_eventually(
    system: Any,
    props: list[Property],
    g: FingerprintGraph,
    key: Callable[[Any], int],
    keep_going: bool,
    action_fp: Callable[[Any], int] = fingerprint,
) -> dict[str, Violation | None]:
    """Check the ``eventually`` properties ``props`` (in the recorder's order) on ``g``.

    ``key`` gives a state's key as the graph holds it; ``action_fp`` fingerprints an action as
    the recorder did. Returns, per property checked, None (it held) or its lasso Violation;
    without ``keep_going`` the checks stop at the first violation, as in ``bfs``.
    """
    out: dict[str, Violation | None] = {}
    for i, p in enumerate(props):
        fk = _fair_kinds(system, p)
        fair = np.ones(len(g.kind), bool) if fk is None else np.isin(g.kind.astype(str), list(fk))
        region, targets = bad_targets(g, i, p.trigger is not None, fair)
        if not len(targets):
            out[p.name] = None
            continue
        out[p.name] = _lasso(system, g, p, i, region, fair, key, action_fp)
        if not keep_going:
            break
    return out


def _lasso(
    system: Any,
    g: FingerprintGraph,
    p: Property,
    i: int,
    region: np.ndarray,
    fair: np.ndarray,
    key: Callable[[Any], int],
    action_fp: Callable[[Any], int],
) -> Violation:
    """The counterexample of ``bfs``'s liveness check, on the region only, as states."""
    inreg = np.zeros(g.n, dtype=bool)
    inreg[region] = True
    m = inreg[g.src]
    edges: dict[int, list[tuple[int, int]]] = {int(s): [] for s in region}
    fair_actions: set[int] = set()
    for s, a, t, f in zip(g.src[m].tolist(), g.afp[m].tolist(), g.dst[m].tolist(), fair[m].tolist()):
        edges[s].append((a, t))
        if f:
            fair_actions.add(a)
    # parents of every ancestor of the region (root paths)
    parents: dict[int, int | None] = {}
    todo = np.unique(region)
    while len(todo):
        par = g.parent[todo]
        parents.update(zip(todo.tolist(), [None if x < 0 else x for x in par.tolist()]))
        nxt = np.unique(par[par >= 0])
        todo = nxt[[x not in parents for x in nxt.tolist()]] if len(nxt) else nxt
    goal, trig = g.bit(2 * i), g.bit(2 * i + 1)
    lv = check_leads_to(
        edges,
        parents,
        goal=lambda s: bool(goal[s]),
        trigger=None if p.trigger is None else (lambda s: bool(trig[s])),
        fair=lambda a: a in fair_actions,
    )
    if lv is None:  # pragma: no cover - the array check and check_leads_to disagree
        raise RuntimeError(
            f"liveness of {p.name}: the SCC check found a counterexample, the lasso search none"
        )
    ids = [*lv.prefix, *(t for _, t in lv.cycle)]
    acts: list[int | None] = [None] * len(lv.prefix) + [a for a, _ in lv.cycle]
    want0 = int(g.fps[ids[0]])  # the prefix starts at an initial state
    s0 = next((s for s in system.init_states() if key(s) & _MASK == want0), None)
    if s0 is None:
        raise GraphError(f"liveness trace of {p.name}: no initial state has the recorded key")
    states, actions = [s0], [None]
    for k in range(1, len(ids)):
        want, want_a = int(g.fps[ids[k]]), acts[k]
        step = next(
            (
                (a, t)
                for a, t in system.successors(states[-1])
                if key(t) & _MASK == want and (want_a is None or action_fingerprint(action_fp, a) == want_a)
            ),
            None,
        )
        if step is None:
            raise GraphError(
                f"liveness trace of {p.name}: step {k} does not replay (a fingerprint collision, "
                "or a non-deterministic model)"
            )
        actions.append(step[0])
        states.append(step[1])
    steps = []
    prev = None
    for n, (a, s) in enumerate(zip(actions, states)):
        steps.append(trace_step(n, prev, a, s))
        prev = s
    loop_start = len(lv.prefix) - 1 if lv.cycle else None
    what = "lasso: the steps after the loop start repeat forever" if lv.cycle else "the behaviour ends here"
    return Violation(p.name, p.kind.value, p.doc, f"{lv.reason} ({what})", len(steps) - 1, steps, loop_start)
