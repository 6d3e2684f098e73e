"""Liveness (``eventually`` / leads-to) on the explored state graph, under weak fairness.

After a complete search the engine hands over every explored edge. For a property
``trigger ~> goal`` the *region* is every state reachable from a trigger state
through states where ``goal`` is false. The property fails when the region holds

- a state without successors (the behaviour ends without reaching the goal), or
- a strongly connected component (networkx) that admits a weakly fair cycle: the
  cycle that walks every edge of the component is fair exactly when every fair
  action enabled in *all* of its states is also taken on one of its edges; a
  smaller cycle can be fair only if that one is.

The counterexample is a lasso: the shortest path from an initial state to a trigger
state, a path inside the region to the component, then a cycle in the component that
is itself fair (built by extending a shortest cycle with detours through the edges
that weak fairness demands).

Example
-------
>>> edges = {0: [("spin", 0), ("go", 1)], 1: []}
>>> v = check_leads_to(edges, {0: None, 1: 0}, goal=lambda s: s == 1, trigger=None,
...                    fair=lambda a: a == "go")
>>> v is None
True
>>> v = check_leads_to(edges, {0: None, 1: 0}, goal=lambda s: s == 1, trigger=None,
...                    fair=lambda a: False)
>>> (v.prefix, v.cycle)
([0], [('spin', 0)])
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from explorer.core import Property, TraceStep, Violation, action_kind
from explorer.search.traces import trace_step

__all__ = ["LivenessViolation", "check_leads_to", "check_liveness", "replay_lasso"]


@dataclass
class LivenessViolation:
    """A lasso: ``prefix`` states from an initial state to the loop's first state,
    then ``cycle`` as (action, state) steps returning to it; or, when the behaviour
    ends, ``cycle`` is empty and the prefix's last state has no successor."""

    prefix: list[Any]
    cycle: list[tuple[Any, Any]] = field(default_factory=list)
    reason: str = ""


def _path_from_root(parents: dict[Any, Any], s: Any) -> list[Any]:
    path = [s]
    while (p := parents[path[-1]]) is not None:
        path.append(p)
    path.reverse()
    return path


def _bfs_path(
    edges: dict[Any, list[tuple[Any, Any]]], sources: list[Any], targets: set[Any], allowed: set[Any]
) -> list[tuple[Any, Any]] | None:
    """Shortest (action, state) path from any source to any target inside ``allowed``;
    the first element is (None, source)."""
    prev: dict[Any, tuple[Any, Any]] = {}
    q: deque[Any] = deque()
    for s in sources:
        if s in allowed and s not in prev:
            prev[s] = (None, None)
            q.append(s)
    while q:
        s = q.popleft()
        if s in targets:
            out = []
            cur = s
            while cur is not None:
                a, p = prev[cur]
                out.append((a, cur))
                cur = p
            out.reverse()
            return out
        for a, t in edges.get(s, ()):
            if t in allowed and t not in prev:
                prev[t] = (a, s)
                q.append(t)
    return None


def _cycle_through(
    edges: dict[Any, list[tuple[Any, Any]]], entry: Any, comp: set[Any]
) -> list[tuple[Any, Any]]:
    """A shortest cycle entry -> ... -> entry inside ``comp`` as (action, state) steps."""
    best: list[tuple[Any, Any]] | None = None
    for a, t in edges[entry]:
        if t not in comp:
            continue
        if t == entry:
            return [(a, t)]
        back = _bfs_path(edges, [t], {entry}, comp)
        if back is not None and (best is None or len(back) + 1 < len(best)):
            best = [(a, t), *back[1:]]
    assert best is not None
    return best


def check_leads_to(
    edges: dict[Any, list[tuple[Any, Any]]],
    parents: dict[Any, Any],
    *,
    goal: Callable[[Any], bool],
    trigger: Callable[[Any], bool] | None,
    fair: Callable[[Any], bool],
) -> LivenessViolation | None:
    """Check ``trigger ~> goal`` (``trigger`` None: from the initial states).

    ``edges`` maps every explored state to its (action, successor) list; ``parents``
    is the BFS parent map; ``fair(action)`` says whether an action is weakly fair.
    Returns None when the property holds, else a shortest-prefix lasso.
    """
    bad = {s for s in edges if not goal(s)}
    if trigger is None:
        starts = [s for s, p in parents.items() if p is None and s in bad]
    else:
        starts = [s for s in edges if s in bad and trigger(s)]
    if not starts:
        return None
    # the region: reachable from a trigger state through goal-free states
    region: set[Any] = set()
    q = deque(starts)
    region.update(starts)
    while q:
        s = q.popleft()
        for _, t in edges[s]:
            if t in bad and t not in region:
                region.add(t)
                q.append(t)
    # states ranked by BFS depth, so the reported lasso has a short prefix
    depth: dict[Any, int] = {}

    def depth_of(s: Any) -> int:
        d = depth.get(s)
        if d is None:
            d = depth[s] = len(_path_from_root(parents, s))
        return d

    candidates: list[tuple[int, str, list[Any]]] = []
    for s in region:
        if not edges[s]:
            candidates.append((depth_of(s), "ends", [s]))
    import networkx as nx  # here, not at the top: `kafka-mc --help` should not pay for it

    g = nx.DiGraph()
    g.add_nodes_from(region)
    for s in region:
        for _, t in edges[s]:
            if t in region:
                g.add_edge(s, t)
    for comp_nodes in nx.strongly_connected_components(g):
        comp = set(comp_nodes)
        if len(comp) == 1:
            (only,) = comp
            if not g.has_edge(only, only):
                continue
        taken = {a for s in comp for a, t in edges[s] if t in comp}
        enabled_everywhere: set[Any] | None = None
        for s in comp:
            en = {a for a, _ in edges[s] if fair(a)}
            enabled_everywhere = en if enabled_everywhere is None else enabled_everywhere & en
            if not enabled_everywhere:
                break
        if enabled_everywhere and not enabled_everywhere <= taken:
            continue  # every cycle here starves a fair action
        candidates.append((min(depth_of(s) for s in comp), "cycle", list(comp)))
    if not candidates:
        return None
    candidates.sort(key=lambda c: (c[0], c[1]))
    _, what, nodes = candidates[0]
    target = set(nodes)
    # prefix: shortest root path to a trigger state, then inside the region to the target
    best_prefix: list[Any] | None = None
    # only trigger states that can reach the target (it may lie below the shallowest ones)
    reach = nx.ancestors(g, nodes[0]) | target
    for s0 in sorted((s for s in starts if s in reach), key=depth_of)[:64]:
        inner = _bfs_path(edges, [s0], target, region)
        if inner is None:
            continue
        prefix = _path_from_root(parents, s0) + [st for _, st in inner[1:]]
        if best_prefix is None or len(prefix) < len(best_prefix):
            best_prefix = prefix
    assert best_prefix is not None
    entry = best_prefix[-1]
    if what == "ends":
        return LivenessViolation(best_prefix, [], "the behaviour ends without reaching the goal")
    comp = target
    cycle = _cycle_through(edges, entry, comp)
    # extend the cycle until it is fair: each fair action enabled all along it is taken
    for _ in range(len(comp) * 4 + 8):
        states = [entry] + [t for _, t in cycle]
        en_all: set[Any] | None = None
        for s in states:
            en = {a for a, _ in edges[s] if fair(a)}
            en_all = en if en_all is None else en_all & en
        taken_here = {a for a, _ in cycle}
        starving = sorted((en_all or set()) - taken_here, key=str)
        if not starving:
            break
        a_need = starving[0]
        # a detour: to a state where a_need is taken inside comp, or where it is disabled
        srcs = {s for s in comp for a, t in edges[s] if a == a_need and t in comp}
        srcs |= {s for s in comp if all(a != a_need for a, _ in edges[s])}
        to_src = _bfs_path(edges, [entry], srcs, comp)
        assert to_src is not None
        mid = to_src[-1][1]
        detour = to_src[1:]
        step = next(((a, t) for a, t in edges[mid] if a == a_need and t in comp), None)
        if step is not None:
            detour.append(step)
            mid = step[1]
        back = _bfs_path(edges, [mid], {entry}, comp)
        assert back is not None
        detour += back[1:]
        if not detour:
            break
        cycle = detour + cycle
    return LivenessViolation(best_prefix, cycle, "a weakly fair cycle never reaches the goal")


def _fairness(system: Any, p: Property) -> Callable[[Any], bool]:
    """Whether an action is weakly fair for ``p`` (its ``fairness``, else the system's
    ``fair_action_kinds()``, else every action)."""
    kinds = p.fairness
    if kinds is None and hasattr(system, "fair_action_kinds"):
        kinds = tuple(system.fair_action_kinds())
    fair_kinds = None if kinds is None else frozenset(kinds)

    def fair(a: Any) -> bool:
        return fair_kinds is None or action_kind(a) in fair_kinds

    return fair


def replay_lasso(
    system: Any, p: Property, states: list[Any], steps: list[dict[str, Any]], loop: int | None
) -> tuple[bool, list[str]]:
    """Whether replayed ``states`` (with their trace ``steps``: ``action``, ``fingerprint``) are a
    counterexample of the ``eventually`` / leads-to property ``p``, and the lines that say why.

    With ``loop`` (the trace's ``loop_start``) the last state must be the loop start's, the goal
    false all along the loop, and the loop weakly fair (each fair action enabled in every loop
    state is taken in it); without, the last state has no successor and is not the goal. Either
    way the trigger (P) holds at a step from which the goal (Q) never holds (without a trigger:
    the initial state).

    >>> from explorer.core import leads_to
    >>> class Spin:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("go", 1)] if s == 0 else [("spin", 1)]
    >>> p = leads_to("p", lambda s: s == 0, lambda s: s == 2, "", fairness=["str"])
    >>> steps = [{"action": None, "fingerprint": "a"}, {"action": "go", "fingerprint": "b"},
    ...          {"action": "spin", "fingerprint": "b"}]
    >>> replay_lasso(Spin(), p, [0, 1, 1], steps, 1)
    (True, ['lasso: the steps after step 1 repeat forever', 'P holds at step 0 and Q at no step after it', 'the loop is weakly fair'])
    """
    lines: list[str] = []
    if loop is not None:
        closes = steps[loop]["fingerprint"] == steps[-1]["fingerprint"]
        lines.append(
            f"lasso: the steps after step {loop} repeat forever"
            + ("" if closes else " (loop does NOT close)")
        )
        ok = closes and not any(p.check(s) for s in states[loop:])
        end = loop
    else:
        ok = not p.check(states[-1]) and not list(system.successors(states[-1]))
        lines.append(
            "the behaviour ends here" + ("" if ok else " (NOT: the last state moves or is the goal)")
        )
        end = len(states) - 1
    good = [i for i, s in enumerate(states) if p.check(s)]
    after = (good[-1] + 1) if good else 0  # the first step from which Q never holds
    trig = p.trigger
    starts = [i for i in range(after, end + 1) if (trig(states[i]) if trig is not None else i == 0)]
    if starts:
        lines.append(f"P holds at step {starts[0]} and Q at no step after it" if trig else "Q never holds")
    else:
        lines.append(
            "P (the trigger) holds at no step after which Q never holds" if trig else "Q holds at some step"
        )
        ok = False
    if loop is not None and ok:
        fair = _fairness(system, p)
        taken = {str(st.get("action")) for st in steps[loop + 1 :]}
        always_on: set[str] | None = None
        for s in states[loop:-1]:
            en = {str(a) for a, _ in system.successors(s) if fair(a)}
            always_on = en if always_on is None else always_on & en
        starved = sorted((always_on or set()) - taken)
        lines.append(
            "the loop is weakly fair"
            if not starved
            else f"the loop is NOT weakly fair: {starved[0]!r} is enabled throughout and never taken"
        )
        ok = not starved
    return ok, lines


def check_liveness(
    system: Any, p: Property, edges: dict[Any, list[tuple[Any, Any]]], parents: dict[Any, Any]
) -> Violation | None:
    """Check one ``eventually`` property on the explored graph; a lasso Violation or None.

    ``edges`` maps every explored state to its ``(action, successor)`` list and
    ``parents`` every state to the one it was first reached from (None: initial);
    ``fair_action_kinds()`` of the system (or the property's ``fairness``) names the
    action kinds under weak fairness (None: every kind).

    >>> from explorer.core import eventually
    >>> p = eventually("done", lambda s: s == 1, "reaches 1")
    >>> check_liveness(object(), p, {0: [("go", 1)], 1: []}, {0: None, 1: 0}) is None
    True
    """
    fair = _fairness(system, p)
    lv = check_leads_to(edges, parents, goal=p.check, trigger=p.trigger, fair=fair)
    if lv is None:
        return None
    steps: list[TraceStep] = []
    prev = None
    for i, s in enumerate(lv.prefix):
        act = None
        if prev is not None:
            act = next(a for a, t in edges[prev] if t == s)
        steps.append(trace_step(i, prev, act, s))
        prev = s
    loop_start = len(steps) - 1 if lv.cycle else None
    for a, t in lv.cycle:
        steps.append(trace_step(len(steps), prev, a, t))
        prev = t
    what = "lasso: the steps after the loop start repeat forever" if lv.cycle else "the behaviour ends here"
    return Violation(p.name, p.kind.value, p.doc, f"{lv.reason} ({what})", len(steps) - 1, steps, loop_start)
