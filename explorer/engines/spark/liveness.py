"""``eventually`` properties on the ``spark`` engine: the state graph as fingerprints on disk.

While the search runs, every expanded state contributes its goal and trigger bits
(one pair per ``eventually`` property) and every transition an edge record
``(source fingerprint, target fingerprint, action fingerprint, action kind)``; the
driver writes them per level to ``edges-NNNNN.npz`` in the run directory (26 bytes
an edge, so graphs whose edges fit on disk). After a complete search
:func:`check_eventually` loads them into numpy arrays, numbers the states in ``bfs``
order (the level files), and decides each property ``trigger ~> goal`` under weak
fairness as :mod:`explorer.search.liveness` does:

1. the *region*: a breadth-first search (``scipy.sparse.csgraph``) from the trigger
   states through states where ``goal`` is false;
2. its strongly connected components (``scipy.sparse.csgraph.connected_components``,
   Pearce's iterative variant of Tarjan's algorithm, in C over CSR arrays);
3. a component is a counterexample when it has a cycle (more than one state, or a
   self-loop) and every fair action enabled in all of its states is taken on one of
   its edges (counted per ``(component, action)`` with numpy); a region state
   without successors is one too (the behaviour ends without the goal).

When a property fails, the lasso is built by :func:`explorer.search.liveness.check_leads_to`
on the region only (integers standing for states, action fingerprints for
actions), then replayed through ``successors`` into states, so the trace is built
as ``bfs`` builds it.

Example
-------
>>> from explorer.core import always, eventually
>>> [p.name for p in live_properties([always("a", bool, ""), eventually("e", bool, "")])]
['e']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from explorer.core import Property, PropertyKind, Violation
from explorer.engines.spark.edges import action_fingerprint, edge_path
from explorer.engines.spark.fingerprints import FingerprintCollisionError
from explorer.engines.spark.levels import LevelStore, rebuild_path
from explorer.engines.spark.partitions import IDX_BITS, Job
from explorer.search.liveness import check_leads_to
from explorer.search.traces import trace_step

__all__ = ["check_eventually", "live_properties"]


def live_properties(props: list[Property]) -> list[Property]:
    """The ``eventually`` properties of a list, in order."""
    return [p for p in props if p.kind is PropertyKind.EVENTUALLY]


def _fair_kinds(system: Any, p: Property) -> frozenset[str] | None:
    kinds = p.fairness
    if kinds is None and hasattr(system, "fair_action_kinds"):
        kinds = tuple(system.fair_action_kinds())
    return None if kinds is None else frozenset(kinds)


class _Graph:
    """The explored graph as arrays: states numbered in ``bfs`` order."""

    def __init__(self, store: LevelStore, run_dir: Path, levels: int):
        fps = [store.get(lv)[1] for lv in range(store.count)]
        keys = [store.get(lv)[0] for lv in range(store.count)]
        self.fps = np.concatenate(fps)
        self.n = len(self.fps)
        self.depth = np.concatenate([np.full(len(f), lv, dtype=np.int32) for lv, f in enumerate(fps)])
        offsets = np.cumsum([0] + [len(f) for f in fps])
        self.offsets = offsets
        parent = np.full(self.n, -1, dtype=np.int64)
        for lv in range(1, len(fps)):
            parent[offsets[lv] : offsets[lv + 1]] = offsets[lv - 1] + (keys[lv] >> IDX_BITS)
        self.parent = parent
        self._order = np.argsort(self.fps)
        self._sorted = self.fps[self._order]
        parts = []
        for lv in range(levels):
            if not edge_path(run_dir, lv).exists():
                if len(fps[lv]):
                    raise RuntimeError(f"liveness: the edges of level {lv} were not recorded")
                continue
            with np.load(edge_path(run_dir, lv)) as z:
                parts.append({k: z[k] for k in z.files})
        self.src = self.ids(np.concatenate([p["src"] for p in parts]))
        self.dst = self.ids(np.concatenate([p["dst"] for p in parts]))
        self.afp = np.concatenate([p["afp"] for p in parts])
        self.kind = np.concatenate([p["kind"] for p in parts])
        self.bits = np.zeros(self.n, dtype=np.uint64)
        self.bits[self.ids(np.concatenate([p["s_fps"] for p in parts]))] = np.concatenate(
            [p["s_bits"] for p in parts]
        )

    def ids(self, fps: np.ndarray) -> np.ndarray:
        pos = np.searchsorted(self._sorted, fps)
        np.minimum(pos, max(self.n - 1, 0), out=pos)
        if len(fps) and not (self._sorted[pos] == fps).all():
            raise FingerprintCollisionError("liveness: an edge leads to a state the search did not record")
        return self._order[pos]

    def bit(self, b: int) -> np.ndarray:
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


def bad_targets(g: _Graph, i: int, has_trigger: bool, fair: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Property ``i``'s region and its counterexample states (empty: the property holds).

    ``fair`` marks the edges whose action is weakly fair.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    bad = ~g.bit(2 * i)
    starts = np.nonzero(bad & (g.bit(2 * i + 1) if has_trigger else g.depth == 0))[0]
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


def check_eventually(
    job: Job, props: list[Property], store: LevelStore, run_dir: Path, kind_names: list[str], keep_going: bool
) -> dict[str, Violation | None]:
    """Check the ``eventually`` properties on the graph written under ``run_dir``.

    Returns, per property checked, None (it held) or its lasso Violation; without
    ``keep_going`` the checks stop at the first violation, as in ``bfs``.
    """
    g = _Graph(store, run_dir, store.count)
    out: dict[str, Violation | None] = {}
    names = np.array([*kind_names, ""], dtype=object)
    for i, p in enumerate(props):
        fk = _fair_kinds(job.system, p)
        fair = np.ones(len(g.kind), bool) if fk is None else np.isin(names[g.kind], list(fk))
        region, targets = bad_targets(g, i, p.trigger is not None, fair)
        if not len(targets):
            out[p.name] = None
            continue
        out[p.name] = _lasso(job, g, store, p, i, region, fair)
        if not keep_going:
            break
    return out


def _lasso(
    job: Job, g: _Graph, store: LevelStore, p: Property, i: int, region: np.ndarray, fair: np.ndarray
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
    root = ids[0]
    lv0 = int(g.depth[root])
    rank = root - int(g.offsets[lv0])
    (_, s) = rebuild_path(job, store, lv0, rank)[-1]
    states = [s]
    actions: list[Any] = [None]
    for k in range(1, len(ids)):
        want = int(g.fps[ids[k]])
        want_a = acts[k]
        step = next(
            (
                (a, t)
                for a, t in job.system.successors(states[-1])
                if job.fp(t) == want and (want_a is None or action_fingerprint(job.fp, a) == want_a)
            ),
            None,
        )
        if step is None:
            raise FingerprintCollisionError(
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
