"""The full state at any step, as one structure every front end renders: a tree of
:class:`StateNode` (label, value, children), its text and HTML renderings, and the
difference of two trees by path.

A model may word its own tree: a system method ``state_tree(s)`` returning nested
``(label, value, children)`` tuples (a model imports nothing from here; the controller's is
``model/controller/render.py``: ZooKeeper's znodes with versions and owners, each broker's
process, session, controller context, replicas, metadata cache, channels and what it waits
on). Without one, :func:`state_tree` shows any state as the tree of its NamedTuple or
dataclass fields. ``kafka-mc replay TRACE --state K`` prints step ``K``'s tree
(:func:`render_text`), ``--diff K1 K2`` what changed between two steps (:func:`diff_trees`);
the report's step table folds each step's tree in (:func:`render_html`).

Example
-------
>>> from typing import NamedTuple
>>> class Broker(NamedTuple):
...     alive: bool
...     epoch: int
>>> class S(NamedTuple):
...     brokers: tuple[Broker, ...]
...     leader: int
>>> s = S((Broker(True, 1), Broker(False, 0)), 0)
>>> print(render_text(state_tree(s)))
state
  brokers
    [0]
      alive: True
      epoch: 1
    [1]
      alive: False
      epoch: 0
  leader: 0
>>> diff_trees(state_tree(s), state_tree(s._replace(leader=1)))
['leader: 0 -> 1']
"""

from __future__ import annotations

import dataclasses
import enum
import html
from collections.abc import Iterator
from typing import Any, NamedTuple

from explorer.core import describe

__all__ = [
    "StateNode",
    "as_node",
    "compact",
    "diff_trees",
    "flatten",
    "render_html",
    "render_text",
    "state_tree",
    "step_view",
    "trace_views",
    "tree_of",
    "view_steps",
]


class StateNode(NamedTuple):
    """One node of a rendered state: its ``label`` (stable from state to state: a diff pairs
    nodes by their labels' path), its ``value`` as text (None for a node that only groups its
    children) and its ``children``."""

    label: str
    value: str | None = None
    children: tuple[StateNode, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The node as JSON (``label``, ``value``, ``children``), for a later front end.

        >>> StateNode("zk", None, (StateNode("epoch", "1"),)).to_json()
        {'label': 'zk', 'value': None, 'children': [{'label': 'epoch', 'value': '1', 'children': []}]}
        """
        return {"label": self.label, "value": self.value, "children": [c.to_json() for c in self.children]}


def as_node(t: Any) -> StateNode:
    """A model's ``(label, value, children)`` tuples (or StateNodes) as a :class:`StateNode` tree;
    a value that is not text is described (:func:`explorer.core.describe`).

    >>> as_node(("zk", None, [("epoch", 1, ())]))
    StateNode(label='zk', value=None, children=(StateNode(label='epoch', value='1', children=()),))
    """
    label, value, *rest = t
    kids = rest[0] if rest else ()
    text = None if value is None else value if isinstance(value, str) else _leaf(value)
    return StateNode(str(label), text, tuple(as_node(k) for k in kids))


def _leaf(v: Any) -> str:
    return v.name if isinstance(v, enum.Enum) else describe(v)


def _is_record(v: Any) -> bool:
    return (isinstance(v, tuple) and hasattr(v, "_fields")) or (
        dataclasses.is_dataclass(v) and not isinstance(v, type)
    )


def _fields(v: Any) -> list[tuple[str, Any]]:
    if isinstance(v, tuple):
        return list(zip(v._fields, v, strict=True))  # type: ignore[attr-defined]
    return [(f.name, getattr(v, f.name)) for f in dataclasses.fields(v)]


def _worded(v: Any) -> bool:
    return _is_record(v) and type(v).__str__ not in (object.__str__, tuple.__str__)


def _branch(v: Any) -> bool:
    """A value shown as a subtree: a record (unless its class words it), or a tuple holding one."""
    if _is_record(v):
        return not _worded(v)
    return isinstance(v, tuple) and any(_branch(x) for x in v)


def state_tree(v: Any, label: str = "state") -> StateNode:
    """Any state as a tree: a record's fields (NamedTuple or dataclass) and a tuple's elements
    that are records (``[i]``) as children, everything else as one value.

    >>> state_tree((1, 2)), state_tree(3, "n")
    (StateNode(label='state', value='(1, 2)', children=()), StateNode(label='n', value='3', children=()))
    """
    if _is_record(v) and not _worded(v):
        return StateNode(label, None, tuple(state_tree(x, k) for k, x in _fields(v)))
    if isinstance(v, tuple) and v and _branch(v):
        return StateNode(label, None, tuple(state_tree(x, f"[{i}]") for i, x in enumerate(v)))
    return StateNode(label, _leaf(v))


def tree_of(system: Any, s: Any) -> StateNode:
    """State ``s`` as ``system`` words it (its ``state_tree(s)``), else as :func:`state_tree`."""
    own = getattr(system, "state_tree", None)
    return as_node(own(s)) if callable(own) else state_tree(s)


def render_text(node: StateNode, indent: int = 0) -> str:
    """The tree as indented lines: ``label: value``, children two spaces further in.

    >>> print(render_text(StateNode("broker 1", None, (StateNode("session", "2"),))))
    broker 1
      session: 2
    """
    return "\n".join(_text_lines(node, indent))


def _text_lines(node: StateNode, indent: int) -> Iterator[str]:
    pad = "  " * indent
    yield f"{pad}{node.label}" if node.value is None else f"{pad}{node.label}: {node.value}"
    for c in node.children:
        yield from _text_lines(c, indent + 1)


def render_html(node: StateNode, open_depth: int = 1) -> str:
    """The tree as nested lists, every label and value escaped; a node with children is a
    ``<details>`` element, open down to ``open_depth`` levels.

    >>> render_html(StateNode("zk", None, (StateNode("/controller", "<none>"),)))
    '<details class="state" open><summary>zk</summary><ul><li><b>/controller</b>: &lt;none&gt;</li></ul></details>'
    """
    return _html(node, 0, open_depth)


def _html(node: StateNode, depth: int, open_depth: int) -> str:
    label = html.escape(node.label)
    value = "" if node.value is None else f": {html.escape(node.value)}"
    if not node.children:
        return f"<b>{label}</b>{value}"
    items = "".join(f"<li>{_html(c, depth + 1, open_depth)}</li>" for c in node.children)
    opened = " open" if depth < open_depth else ""
    cls = ' class="state"' if depth == 0 else ""
    return f"<details{cls}{opened}><summary>{label}{value}</summary><ul>{items}</ul></details>"


def flatten(node: StateNode, prefix: str = "") -> dict[str, str | None]:
    """Every node by its path (the labels from the root's children down, joined by ``" / "``),
    with its value. Labels repeated among siblings get ``#2``, ``#3`` so that every path is one node.
    A label that extends its parent's path (a znode below its parent, ``/brokers/ids/1`` below
    ``/brokers/ids``) stands for both.

    >>> flatten(StateNode("state", None, (StateNode("zk", None, (StateNode("epoch", "1"),)),)))
    {'zk': None, 'zk / epoch': '1'}
    >>> flatten(StateNode("", None, (StateNode("zk", None, (StateNode("/a", None, (StateNode("/a/b", "1"),)),)),)))
    {'zk': None, 'zk / /a': None, 'zk / /a/b': '1'}
    """
    out: dict[str, str | None] = {}
    seen: dict[str, int] = {}
    for c in node.children:
        seen[c.label] = seen.get(c.label, 0) + 1
        label = c.label if seen[c.label] == 1 else f"{c.label} #{seen[c.label]}"
        head, _, last = prefix.rpartition(" / ")
        if last.startswith("/") and label.startswith(
            last + "/"
        ):  # a znode below its parent: its path says it
            path = f"{head} / {label}" if head else label
        else:
            path = f"{prefix} / {label}" if prefix else label
        out[path] = c.value
        out.update(flatten(c, path))
    return out


def diff_trees(old: StateNode, new: StateNode) -> list[str]:
    """What changed from ``old`` to ``new``, by path: ``path: old -> new`` for a value that
    changed, ``path: added (value)`` and ``path: removed (was value)`` for nodes that appear or
    go (a node whose parent appears or goes is not listed again).

    >>> a = StateNode("s", None, (StateNode("x", "1"), StateNode("y", None, (StateNode("z", "2"),))))
    >>> b = StateNode("s", None, (StateNode("x", "2"), StateNode("w", "0")))
    >>> diff_trees(a, b)
    ['x: 1 -> 2', 'y: removed', 'w: added (0)']
    """
    fa, fb = flatten(old), flatten(new)
    out: list[str] = [] if old.value == new.value else [f"{old.label}: {old.value} -> {new.value}"]

    def under_listed(path: str, listed: set[str]) -> bool:
        return any(path.startswith(p + " / ") for p in listed)

    gone: set[str] = set()
    for path, v in fa.items():
        if path in fb:
            if fb[path] != v:
                out.append(
                    f"{path}: {v if v is not None else '(group)'} -> {fb[path] if fb[path] is not None else '(group)'}"
                )
        elif not under_listed(path, gone):
            gone.add(path)
            out.append(f"{path}: removed" + ("" if v is None else f" (was {v})"))
    came: set[str] = set()
    for path, v in fb.items():
        if path not in fa and not under_listed(path, came):
            came.add(path)
            out.append(f"{path}: added" + ("" if v is None else f" ({v})"))
    return out


def view_steps(ks: list[int], count: int) -> list[int]:
    """Step numbers asked for on the command line, checked against a trace of ``count`` states
    (steps 0 to ``count - 1``; a negative one counts from the end); ValueError names the one out
    of range.

    >>> view_steps([0, -1], 4)
    [0, 3]
    >>> view_steps([7], 4)
    Traceback (most recent call last):
    ...
    ValueError: step 7 is out of range: the trace has steps 0 to 3
    """
    out = []
    for k in ks:
        if not -count <= k < count:
            raise ValueError(f"step {k} is out of range: the trace has steps 0 to {count - 1}")
        out.append(k % count)
    return out


def step_view(system: Any, states: list[Any], steps: list[dict[str, Any]], ks: list[int]) -> str:
    """What ``replay --state K`` (one step in ``ks``) or ``--diff K1 K2`` (two) prints: the full
    state at step ``K`` with the action that led there, or what changed from step ``K1`` to ``K2``
    by path. ``states`` are the replayed states, ``steps`` the trace's steps (their actions).

    >>> from tests.toys import Grid
    >>> g = Grid(2)
    >>> s0 = next(iter(g.init_states())); a, s1 = next(iter(g.successors(s0)))
    >>> print(step_view(g, [s0, s1], [{"action": None}, {"action": str(a)}], [0, 1]))
    step 0 (initial state) -> step 1 (counter 0 increments): 1 change
      state: (0, 0) -> (1, 0)
    """

    def title(k: int) -> str:
        return f"step {k} ({steps[k].get('action') or 'initial state'})"

    if len(ks) == 1:
        return f"{title(ks[0])}\n{render_text(tree_of(system, states[ks[0]]))}"
    k1, k2 = ks
    changes = diff_trees(tree_of(system, states[k1]), tree_of(system, states[k2]))
    head = f"{title(k1)} -> {title(k2)}: {len(changes)} change{'' if len(changes) == 1 else 's'}"
    return "\n".join(
        [head, *(f"  {c}" for c in changes)] if changes else [head, "  the two states are equal"]
    )


def compact(node: StateNode) -> list[Any]:
    """The tree as nested ``[label, value, children]`` lists (what a result file keeps; read back
    by :func:`as_node`).

    >>> compact(StateNode("zk", None, (StateNode("epoch", "1"),)))
    ['zk', None, [['epoch', '1', []]]]
    >>> as_node(compact(StateNode("zk", None, (StateNode("epoch", "1"),)))).children[0].value
    '1'
    """
    return [node.label, node.value, [compact(c) for c in node.children]]


#: the longest counterexample whose every state :func:`trace_views` renders (a report's size)
MAX_VIEWED_STEPS = 60


def trace_views(system: Any, steps: list[Any]) -> list[list[Any]] | None:
    """Each state of a counterexample (its steps, as :class:`~explorer.core.TraceStep` or dicts)
    as :func:`compact` trees, the trace replayed on ``system``; None when it does not replay or
    is longer than :data:`MAX_VIEWED_STEPS`.

    >>> from tests.toys import Grid
    >>> from explorer.search.traces import trace_steps
    >>> g = Grid(2)
    >>> s0 = next(iter(g.init_states())); a, s1 = next(iter(g.successors(s0)))
    >>> trace_views(g, trace_steps([s0, s1], [a]))
    [['state', '(0, 0)', []], ['state', '(1, 0)', []]]
    """
    from explorer.explain import replay_path

    if not steps or len(steps) > MAX_VIEWED_STEPS + 1:
        return None
    try:
        path = replay_path(system, steps)
    except Exception:  # the model's code: a view is never worth a failed run
        return None
    return None if path is None else [compact(tree_of(system, s)) for s in path[0]]
