"""One explorer session: a transition system walked by paths of successor indices, and
everything the page shows about the state a path reaches.

A *path* is a list of whole numbers: the first picks an initial state (its place in
``init_states()``), each later one an enabled action (its place in ``successors(s)``, the
model's own order, which is deterministic). ``0.3.1`` in the page's URL is the path
``[0, 3, 1]``, so any state the page shows can be bookmarked and shared. The session knows
no model: it words states with :func:`explorer.state_view.tree_of` (the controller in
Kafka's terms), actions with their text, properties with their ``explain``
(:mod:`explorer.explain`), and the path with the report's step table and sequence diagram
(:mod:`explorer.report.layout`, :mod:`explorer.report.svg`).

Example
-------
>>> from tests.toys import Grid
>>> s = Session(Grid(2), Grid(2).properties(), model="tests.toys:Grid", config={"n": 2})
>>> v = s.view([0, 1])
>>> v["steps"]["rows"][1]["action"], [a["text"] for a in v["actions"]][:1]
('counter 1 increments', ['counter 0 increments'])
>>> s.diff([0, 1, 0], 0, 2)
['state: (0, 0) -> (1, 1)']
"""

from __future__ import annotations

import random
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from explorer.core import Property, PropertyKind, Violation, action_kind, describe, diff_states
from explorer.encoding import fingerprint
from explorer.explain import explain_failure
from explorer.report.layout import LayoutError, actor_key, actor_of_change, layout_of, named
from explorer.report.svg import sequence_svg
from explorer.search.traces import trace_steps
from explorer.state_view import StateNode, diff_trees, flatten, tree_of
from explorer.tracefile import trace_document

__all__ = ["MAX_PATH", "PathError", "Session", "parse_path", "path_text"]

#: the longest path a request may name (steps after the initial state)
MAX_PATH = 5000
#: the most states and edges the explored graph keeps (its JSON export)
MAX_GRAPH = 200_000
#: the longest path whose sequence diagram is drawn (the last steps of a longer one)
MAX_DRAWN = 120
_CACHE = 20_000


class PathError(ValueError):
    """A path that names no state: one line naming the step and what it asked for."""


def parse_path(text: str) -> list[int]:
    """The path a URL spells (``0.3.1``), checked for form and length; PathError otherwise.

    >>> parse_path("0.3.1"), parse_path("")
    ([0, 3, 1], [0])
    >>> parse_path("0.x")
    Traceback (most recent call last):
    ...
    explorer.explore.session.PathError: path '0.x': expected whole numbers joined by '.', like 0.3.1
    """
    if text == "":
        return [0]
    if len(text) > 8 * MAX_PATH or not re.fullmatch(r"\d{1,7}(\.\d{1,7})*", text):
        raise PathError(f"path {text[:40]!r}: expected whole numbers joined by '.', like 0.3.1")
    out = [int(x) for x in text.split(".")]
    if len(out) > MAX_PATH + 1:
        raise PathError(f"path: {len(out) - 1} steps, more than the {MAX_PATH} a path may have")
    return out


def path_text(path: Sequence[int]) -> str:
    """A path as its URL spells it.

    >>> path_text([0, 3, 1])
    '0.3.1'
    """
    return ".".join(str(i) for i in path)


def _actor(system: Any, action: Any) -> str:
    """Who takes an action: the part of its text before ``": "`` (``broker 1``, ``ZooKeeper``),
    else the sender of its sequence-diagram arrow, else ``system``."""
    m = re.match(r"([^:]{1,40}): ", str(action))
    if m:
        return m.group(1)
    arrow = getattr(system, "sequence_arrow", None)
    if arrow is not None:
        try:
            return str(arrow(action)[0])
        except Exception:  # the model's code: the page still groups the action
            return "system"
    return "system"


def _marked(node: StateNode, before: dict[str, str | None] | None, path: str = "") -> dict[str, Any]:
    """The tree as JSON with what changed since ``before`` (a :func:`flatten`), by the same
    paths :func:`explorer.state_view.flatten` gives: ``mark`` is ``changed`` (with ``was``),
    ``added`` or absent; ``inner`` says a descendant changed."""
    out: dict[str, Any] = {"label": node.label, "value": node.value}
    if before is not None and path:
        if path not in before:
            out["mark"] = "added"
        elif before[path] != node.value:
            out["mark"], out["was"] = "changed", before[path]
    kids = []
    seen: dict[str, int] = {}
    for c in node.children:
        seen[c.label] = seen.get(c.label, 0) + 1
        label = c.label if seen[c.label] == 1 else f"{c.label} #{seen[c.label]}"
        head, _, last = path.rpartition(" / ")
        if last.startswith("/") and label.startswith(last + "/"):
            sub = f"{head} / {label}" if head else label
        else:
            sub = f"{path} / {label}" if path else label
        kids.append(_marked(c, before, sub))
    out["children"] = kids
    if any(k.get("mark") or k.get("inner") for k in kids):
        out["inner"] = True
    return out


def _removed(before: dict[str, str | None], after: dict[str, str | None]) -> list[str]:
    """The paths of ``before`` gone from ``after`` (not those under a gone parent)."""
    gone: list[str] = []
    for p in before:
        if p not in after and not any(p.startswith(g + " / ") for g in gone):
            gone.append(p)
    return [p + ("" if before[p] is None else f" (was {before[p]})") for p in gone]


class Session:
    """A system and its properties, walked by paths (see the module doc). ``trace`` is a
    loaded counterexample (a :func:`explorer.tracefile.load_trace` document) to start on.

    ``model`` and ``config`` are what an exported trace records (``config`` as the trace file
    keeps it), ``system_ref`` the ``--system`` the system was made with.
    """

    def __init__(
        self,
        system: Any,
        props: Sequence[Property],
        *,
        model: str,
        config: dict[str, Any],
        system_ref: str | None = None,
        trace: dict[str, Any] | None = None,
    ) -> None:
        self.system = system
        self.props = list(props)
        self.model, self.config, self.system_ref = model, config, system_ref
        self.inits = list(system.init_states())
        if not self.inits:
            raise PathError("the system has no initial state")
        try:
            self.layout = layout_of(system)
        except LayoutError:
            self.layout = None
        self.lock = threading.RLock()  # the server's threads share the caches
        self._states: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        self._succ: OrderedDict[tuple[int, ...], list[tuple[Any, Any]]] = OrderedDict()
        self.nodes: dict[str, str] = {}  # fingerprint -> the first path that reached it
        self.edges: dict[tuple[str, int], tuple[str, str]] = {}  # (from, index) -> (action, to)
        self.trace = trace
        self.trace_path: list[int] | None = None
        if trace is not None:
            self.trace_path = self.path_of_steps(trace["steps"])

    # -- walking ------------------------------------------------------------------------------

    def state(self, path: Sequence[int]) -> Any:
        """The state ``path`` reaches; PathError naming the first step that names no action."""
        with self.lock:
            return self._state(tuple(path))

    def _state(self, key: tuple[int, ...]) -> Any:
        if not key:
            raise PathError("an empty path: it needs at least the initial state's index")
        known = len(key)  # the longest prefix already known, walked forward from there
        while known > 0 and key[:known] not in self._states:
            known -= 1
        for k in range(max(known, 1), len(key) + 1):
            self._put(key[:k])
        got = self._states[key]
        self._states.move_to_end(key)
        return got

    def _put(self, key: tuple[int, ...]) -> None:
        if key in self._states:
            return
        if len(key) == 1:
            if not 0 <= key[0] < len(self.inits):
                raise PathError(f"step 0: no initial state {key[0]} (the system has {len(self.inits)})")
            got = self.inits[key[0]]
        else:
            succ = self._successors(key[:-1])
            if not 0 <= key[-1] < len(succ):
                raise PathError(
                    f"step {len(key) - 1}: no action {key[-1]} ({len(succ)} enabled in the state before it)"
                )
            got = succ[key[-1]][1]
        self._states[key] = got
        if len(self._states) > _CACHE:
            self._states.popitem(last=False)

    def successors(self, path: Sequence[int]) -> list[tuple[Any, Any]]:
        """The enabled actions of the state ``path`` reaches, in the model's order."""
        with self.lock:
            return self._successors(tuple(path))

    def _successors(self, key: tuple[int, ...]) -> list[tuple[Any, Any]]:
        got = self._succ.get(key)
        if got is not None:
            self._succ.move_to_end(key)
            return got
        got = list(self.system.successors(self._state(key)))
        self._succ[key] = got
        if len(self._succ) > _CACHE:
            self._succ.popitem(last=False)
        return got

    def walk(self, path: Sequence[int]) -> tuple[list[Any], list[Any]]:
        """The states and actions along ``path``."""
        if not path:
            raise PathError("an empty path: it needs at least the initial state's index")
        states = [self.state(path[:k]) for k in range(1, len(path) + 1)]
        actions = [self.successors(path[:k])[path[k]][0] for k in range(1, len(path))]
        return states, actions

    def path_of_steps(self, steps: Sequence[dict[str, Any]], start: Sequence[int] | None = None) -> list[int]:
        """The path of a trace's steps (actions by text, states by fingerprint), as ``replay``
        finds them, from an initial state or from the end of ``start`` (then the path returned
        extends ``start``); PathError naming the step that does not replay."""
        fp0 = steps[0].get("fingerprint")
        if start is not None:
            if f"{fingerprint(self.state(start)):016x}" != fp0:
                raise PathError(f"step 0: the state searched from does not have fingerprint {fp0}")
            path = list(start)
        else:
            first = next((i for i, s in enumerate(self.inits) if f"{fingerprint(s):016x}" == fp0), None)
            if first is None:
                raise PathError(f"step 0: no initial state has fingerprint {fp0}")
            path = [first]
        for k, st in enumerate(steps[1:], start=1):
            got = next(
                (
                    i
                    for i, (a, t) in enumerate(self.successors(path))
                    if str(a) == st.get("action") and f"{fingerprint(t):016x}" == st.get("fingerprint")
                ),
                None,
            )
            if got is None:
                raise PathError(
                    f"step {k}: no enabled action {st.get('action')!r} reaches the state it records"
                )
            path.append(got)
        return path

    def _record(self, path: Sequence[int], s: Any, succ: list[tuple[Any, Any]]) -> None:
        fp = f"{fingerprint(s):016x}"
        if len(self.nodes) < MAX_GRAPH:
            self.nodes.setdefault(fp, path_text(path))
        for i, (a, t) in enumerate(succ):
            if len(self.edges) >= MAX_GRAPH:
                break
            to = f"{fingerprint(t):016x}"
            self.edges.setdefault((fp, i), (str(a), to))
            if len(self.nodes) < MAX_GRAPH:
                self.nodes.setdefault(to, path_text([*path, i]))

    # -- what the page shows ------------------------------------------------------------------

    def view(self, path: Sequence[int]) -> dict[str, Any]:
        """Everything the page shows at the end of ``path``: the state (its tree, what changed
        since the step before marked), the enabled actions (text, actor, what each changes),
        every property's verdict on the state and the last step (with its explanation where it
        fails), and the path as a step table and a sequence diagram."""
        states, actions = self.walk(path)
        s = states[-1]
        tree = tree_of(self.system, s)
        prev_flat = flatten(tree_of(self.system, states[-2])) if len(states) > 1 else None
        flat = flatten(tree)
        succ = self.successors(path)
        self._record(path, s, succ)
        acts = []
        for i, (a, t) in enumerate(succ):
            acts.append(
                {
                    "index": i,
                    "text": str(a),
                    "actor": _actor(self.system, a),
                    "kind": action_kind(a),
                    "changes": diff_trees(tree, tree_of(self.system, t)),
                    "loops": t == s,
                }
            )
        acts.sort(key=lambda x: (actor_key(x["actor"], self.layout), x["index"]))
        terminal = getattr(self.system, "is_terminal", None)
        return {
            "path": path_text(path),
            "state": _marked(tree, prev_flat),
            "removed": _removed(prev_flat, flat) if prev_flat is not None else [],
            "actions": acts,
            "deadlock": not succ and not (terminal is not None and terminal(s)),
            "properties": self.verdicts(states, actions),
            "steps": self.steps(states, actions),
            "sequence": self.sequence(actions),
            "fingerprint": f"{fingerprint(s):016x}",
        }

    def verdicts(self, states: list[Any], actions: list[Any]) -> list[dict[str, Any]]:
        """Each property on the last state (``always``, a witness, a liveness goal) or the last
        step (``transition``): ``holds``, ``fails`` (with the explanation), ``here`` (a witness
        or goal that holds here), ``not here``, ``no step`` (a transition property at the
        initial state) or ``error`` (the property's code raised)."""
        s = states[-1]
        out = []
        for p in self.props:
            row: dict[str, Any] = {"name": p.name, "kind": p.kind.value, "doc": p.doc}
            try:
                if p.kind is PropertyKind.TRANSITION:
                    if not actions:
                        row["verdict"] = "no step"
                    else:
                        args: tuple[Any, ...] = (states[-2], actions[-1], s)
                        ok = p.check(*args)
                        row["verdict"] = "holds" if ok else "fails"
                        if not ok:
                            row["why"] = explain_failure(p, args)
                elif p.kind is PropertyKind.ALWAYS:
                    ok = p.check(s)
                    row["verdict"] = "holds" if ok else "fails"
                    if not ok:
                        row["why"] = explain_failure(p, (s,))
                else:  # a witness, or a liveness goal: whether it holds here
                    row["verdict"] = "here" if p.check(s) else "not here"
                    if p.kind is PropertyKind.EVENTUALLY and p.trigger is not None and p.trigger(s):
                        row["triggered"] = True
            except Exception as e:  # the model's code: one property's error never hides the rest
                row["verdict"], row["why"] = "error", [f"{type(e).__name__}: {e}"]
            out.append(row)
        order = {"fails": 0, "error": 1, "here": 2}
        out.sort(key=lambda r: order.get(r["verdict"], 3))
        return out

    def steps(self, states: list[Any], actions: list[Any]) -> dict[str, Any]:
        """The path as the report's step table: each step's action and what it changed, the
        changes split into the model's actor columns (its ``report_layout``)."""
        rows = []
        cols: set[str] = set()
        for k, s in enumerate(states):
            changes = diff_states(states[k - 1], s) if k else []
            split = [actor_of_change(c, self.layout) for c in changes]
            cols |= {a for a, _ in split}
            rows.append(
                {
                    "index": k,
                    "action": None if k == 0 else str(actions[k - 1]),
                    "changes": [[a, named(rest, self.layout)] for a, rest in split],
                }
            )
        ordered = sorted(cols, key=lambda a: actor_key(a, self.layout))
        return {"columns": ordered, "rows": rows}

    def sequence(self, actions: list[Any]) -> dict[str, Any]:
        """The path's sequence diagram (the report's, :func:`explorer.report.svg.sequence_svg`:
        every label escaped), of its last :data:`MAX_DRAWN` steps."""
        arrow = getattr(self.system, "sequence_arrow", None)
        first = max(0, len(actions) - MAX_DRAWN)
        arrows = []
        for a in actions[first:]:
            try:
                arrows.append(
                    [str(x) for x in arrow(a)] if arrow is not None else ["system", "system", str(a)]
                )
            except Exception:  # the model's code: draw the step on one lifeline
                arrows.append(["system", "system", str(a)])
        return {"first": first + 1, "svg": sequence_svg(arrows, "path", self.layout) if arrows else ""}

    def diff(self, path: Sequence[int], k1: int, k2: int) -> list[str]:
        """What changed from step ``k1`` to step ``k2`` of ``path``, by path in the state's tree
        (:func:`explorer.state_view.diff_trees`); PathError for a step out of range."""
        for k in (k1, k2):
            if not 0 <= k < len(path):
                raise PathError(f"step {k} is out of range: the path has steps 0 to {len(path) - 1}")
        a, b = self.state(path[: k1 + 1]), self.state(path[: k2 + 1])
        return diff_trees(tree_of(self.system, a), tree_of(self.system, b))

    def trace_diff(self, a: Sequence[int], b: Sequence[int]) -> dict[str, Any]:
        """Two paths side by side: each step's action in both, whether the states are equal,
        the first step where they part and what differs between their last states."""
        sa, aa = self.walk(a)
        sb, ab = self.walk(b)
        rows = []
        parted = None
        for k in range(max(len(sa), len(sb))):
            left = (str(aa[k - 1]) if k else "initial state") if k < len(sa) else None
            right = (str(ab[k - 1]) if k else "initial state") if k < len(sb) else None
            same = k < len(sa) and k < len(sb) and sa[k] == sb[k]
            if not same and parted is None:
                parted = k
            rows.append({"index": k, "a": left, "b": right, "same": same})
        ends = diff_trees(tree_of(self.system, sa[-1]), tree_of(self.system, sb[-1]))
        return {"rows": rows, "parted": parted, "ends": ends}

    def random_walk(self, path: Sequence[int], n: int, seed: int) -> list[int]:
        """``path`` extended by up to ``n`` steps, each action drawn uniformly with ``seed``
        (the same seed, the same walk); it stops early in a state with no action."""
        rng = random.Random(seed)
        out = list(path)
        for _ in range(n):
            if len(out) > MAX_PATH:
                break
            succ = self.successors(out)
            if not succ:
                break
            out.append(rng.randrange(len(succ)))
        return out

    # -- exports ------------------------------------------------------------------------------

    def trace_doc(self, path: Sequence[int], prop: str | None = None) -> dict[str, Any]:
        """``path`` as a trace file (:func:`explorer.tracefile.trace_document`), the format
        ``replay`` and ``shrink`` read. It names ``prop``, else the first property that fails
        at its end, else the loaded counterexample's property, else the first property."""
        states, actions = self.walk(path)
        found = None
        if prop is not None:
            found = next((p for p in self.props if p.name == prop), None)
            if found is None and prop != "deadlock":
                raise PathError(f"property {prop!r}: the model has no such property")
        if found is None and prop is None:
            failing = [v["name"] for v in self.verdicts(states, actions) if v["verdict"] == "fails"]
            name = failing[0] if failing else (self.trace or {}).get("property")
            found = next((p for p in self.props if p.name == name), None)
            if found is None and name is None and self.props:
                found = self.props[0]
        steps = trace_steps(states, actions)
        if found is None:
            v = Violation("deadlock", "deadlock", "no action is enabled", "deadlock", len(steps) - 1, steps)
        else:
            v = Violation.of(found, f"{found.name}: exported from kafka-mc explore", steps)
            if found.kind is PropertyKind.ALWAYS and not found.check(states[-1]):
                v.explanation = explain_failure(found, (states[-1],))
        return trace_document(self.model, self.config, v, self.system_ref)

    def graph(self) -> dict[str, Any]:
        """The part of the state graph this session expanded, as JSON: each state by its
        fingerprint with the first path that reached it, each edge with its action."""
        return {
            "model": self.model,
            "config": self.config,
            "nodes": [{"id": fp, "path": p} for fp, p in self.nodes.items()],
            "edges": [{"from": f, "index": i, "action": a, "to": t} for (f, i), (a, t) in self.edges.items()],
            "complete": len(self.nodes) < MAX_GRAPH and len(self.edges) < MAX_GRAPH,
        }

    def info(self) -> dict[str, Any]:
        """What the page needs once: the model, its configuration, the initial states, the
        properties (for "find from here" and exports) and the loaded counterexample."""
        out: dict[str, Any] = {
            "model": self.model,
            "config": {k: describe(v) if not isinstance(v, str) else v for k, v in self.config.items()},
            "inits": len(self.inits),
            "properties": [{"name": p.name, "kind": p.kind.value, "doc": p.doc} for p in self.props],
        }
        if self.trace is not None and self.trace_path is not None:
            out["trace"] = {
                "property": self.trace.get("property"),
                "kind": self.trace.get("kind"),
                "doc": self.trace.get("doc", ""),
                "path": path_text(self.trace_path),
                "violating_step": len(self.trace_path) - 1,
                "loop_start": self.trace.get("loop_start"),
                "explanation": [str(x) for x in self.trace.get("explanation") or []],
            }
        return out
