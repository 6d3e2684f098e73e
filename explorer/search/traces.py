"""Counterexample traces: rebuilt from parent links or from a path of states, rendered
as :class:`~explorer.core.TraceStep` lists in the one format every engine reports.

Example
-------
>>> class Ring:
...     def successors(self, s): return [("inc", (s + 1) % 4)]
>>> [(st.index, st.action) for st in build_trace(Ring(), {0: None, 1: 0, 2: 1}, 2)]
[(0, None), (1, 'inc'), (2, 'inc')]
"""

from __future__ import annotations

from typing import Any

from explorer.core import TraceStep, action_kind, diff_states, render_state
from explorer.encoding import fingerprint

__all__ = ["build_trace", "cut_cycles", "trace_step", "trace_steps"]


def build_trace(
    system: Any, parents: dict[Any, Any], end: Any, extra: tuple[Any, Any] | None = None
) -> list[TraceStep]:
    """Rebuild the trace from an initial state to ``end`` (then ``extra``'s step).

    Actions are recovered by re-running ``successors`` on each parent and taking
    the first action that leads to the child.
    """
    path = [end]
    while (p := parents[path[-1]]) is not None:
        path.append(p)
    path.reverse()
    steps: list[TraceStep] = []
    prev = None
    for i, s in enumerate(path):
        act = None
        if prev is not None:
            act = next((a for a, t in system.successors(prev) if t == s), None)
            if act is None:  # pragma: no cover - would mean a non-deterministic model
                raise RuntimeError(f"step {i}: successor not reproduced; is the model deterministic?")
        steps.append(trace_step(i, prev, act, s))
        prev = s
    if extra is not None:
        a, t = extra
        steps.append(trace_step(len(path), prev, a, t))
    return steps


def trace_step(i: int, prev: Any, action: Any, s: Any) -> TraceStep:
    """Step ``i`` of a trace: ``action`` led from ``prev`` (None for an initial state) to ``s``.

    >>> st = trace_step(1, (0,), "inc", (1,))
    >>> st.action, st.changes
    ('inc', ['[0]: 0 -> 1'])
    """
    return TraceStep(
        index=i,
        action=None if action is None else str(action),
        action_kind=None if action is None else action_kind(action),
        fingerprint=f"{fingerprint(s):016x}",
        state=render_state(s),
        changes=[] if prev is None else diff_states(prev, s),
    )


def cut_cycles(states: list[Any], actions: list[Any], keep_last: bool = False) -> tuple[list[Any], list[Any]]:
    """Remove every cycle from a path: ``states[i+1]`` follows ``states[i]`` by ``actions[i]``.

    When a state occurs again, the path continues from its first occurrence; the
    result visits each state once and ends in the same state. ``keep_last`` keeps
    the last step as it is (the bad step of a ``transition`` violation) and cuts the
    path before it.

    >>> cut_cycles([0, 1, 2, 1, 3], ["a", "b", "c", "d"])
    ([0, 1, 3], ['a', 'd'])
    >>> cut_cycles([0, 1, 0], ["a", "b"], keep_last=True)
    ([0, 1, 0], ['a', 'b'])
    """
    if keep_last and len(states) > 1:
        head_s, head_a = cut_cycles(states[:-1], actions[:-1])
        return [*head_s, states[-1]], [*head_a, actions[-1]]
    out_s: list[Any] = []
    out_a: list[Any] = []
    where: dict[Any, int] = {}
    for i, s in enumerate(states):
        j = where.get(s)
        if j is not None:
            for dropped in out_s[j + 1 :]:
                del where[dropped]
            del out_s[j + 1 :]
            del out_a[j:]
        else:
            if i > 0:
                out_a.append(actions[i - 1])
            where[s] = len(out_s)
            out_s.append(s)
    return out_s, out_a


def trace_steps(states: list[Any], actions: list[Any]) -> list[TraceStep]:
    """Render a path as trace steps, in the same format as ``bfs`` (index, action, kind,
    fingerprint, state, changes).

    >>> [(s.index, s.action, s.changes) for s in trace_steps([(0,), (1,)], ["inc"])]
    [(0, None, []), (1, 'inc', ['[0]: 0 -> 1'])]
    """
    steps = []
    prev = None
    for i, s in enumerate(states):
        steps.append(trace_step(i, prev, None if i == 0 else actions[i - 1], s))
        prev = s
    return steps
