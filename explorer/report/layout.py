"""What a model tells the report about drawing its coverage and counterexamples.

A system may define ``report_layout() -> dict`` (JSON data; the release stores it as
``entries[].layout`` in ``report.json``). Every key is optional:

- ``heading``: the title over the entry's coverage labels (default "Coverage labels");
- ``state_machines``: per machine of the ``state_machines`` label section, its ``title``
  and the diagram ``positions`` of its states (``{state: [x, y]}``, centres in px); a
  machine without positions is laid out on a circle;
- ``tables``: label sections drawn as a table, each ``{"section", "title", "row" (the first
  column's head), "columns": [[key, head], ...], "missing" (what a cell with no count shows,
  default "–"), "legend"}``;
- ``actors``: how a step table splits a change into columns: ``[[pattern, actor], ...]``,
  a change line matching the regular expression ``pattern`` at its start goes to the column
  ``actor`` (``\\1`` and the like name groups), the match removed from the line; rules are
  tried in order, and their order is the columns' order (and the lifelines' in a sequence
  diagram). Without rules a step table has one "what changed" column;
- ``names``: ``[[pattern, replacement], ...]``, the words a step table uses for a changed
  field: the first rule whose regular expression matches a change line (after the actor
  rule took its part) rewrites that match (``re.sub`` once), e.g. a field path to the
  znode it models.

The explorer knows no model: everything a model names comes through this hook, and a system
without it is drawn generically.

Example
-------
>>> lay = {"actors": [["store\\\\.", "store"], [r"nodes\\[(\\d+)\\]\\.", r"node \\1"]]}
>>> actor_of_change("nodes[1].epoch: 0 -> 1", lay), actor_of_change("spent: 1", lay)
(('node 1', 'epoch: 0 -> 1'), ('other', 'spent: 1'))
>>> sorted(["node 10", "other", "node 2", "store"], key=lambda a: actor_key(a, lay))
['store', 'node 2', 'node 10', 'other']
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["actor_key", "actor_of_change", "layout_of", "machine_title", "named", "positions", "tables"]


class LayoutError(ValueError):
    """A model's ``report_layout()`` that is not the shape this module documents."""


def _check(layout: Any) -> dict[str, Any]:
    if not isinstance(layout, dict):
        raise LayoutError(f"report_layout() must return a dict, got {type(layout).__name__}")
    unknown = sorted(set(layout) - {"heading", "state_machines", "tables", "actors", "names"})
    if unknown:
        raise LayoutError(f"report_layout(): unknown key {unknown[0]!r}")
    for machine, spec in (layout.get("state_machines") or {}).items():
        for state, xy in (spec.get("positions") or {}).items():
            if not (
                isinstance(xy, (list, tuple))
                and len(xy) == 2
                and all(isinstance(v, (int, float)) for v in xy)
            ):
                raise LayoutError(
                    f"report_layout(): state_machines.{machine}.positions.{state} must be [x, y]"
                )
    for i, t in enumerate(layout.get("tables") or []):
        if not isinstance(t, dict) or not isinstance(t.get("section"), str) or not t.get("columns"):
            raise LayoutError(f"report_layout(): tables[{i}] needs a section and columns")
    for key, what in (("actors", "[pattern, actor]"), ("names", "[pattern, replacement]")):
        for i, rule in enumerate(layout.get(key) or []):
            try:
                re.compile(rule[0])
                str(rule[1])
            except (re.error, TypeError, IndexError) as e:
                raise LayoutError(f"report_layout(): {key}[{i}] is no {what} ({e})") from None
    return layout


def layout_of(system: Any) -> dict[str, Any] | None:
    """The system's ``report_layout()``, checked (None when it defines none).

    >>> layout_of(object()) is None
    True
    >>> class S:
    ...     def report_layout(self): return {"heading": "Light coverage"}
    >>> layout_of(S())
    {'heading': 'Light coverage'}
    """
    hook = getattr(system, "report_layout", None)
    if hook is None:
        return None
    return _check(hook())


def machine_title(machine: str, layout: dict[str, Any] | None) -> str:
    """A state machine's title: the model's, else its label name.

    >>> machine_title("light", None), machine_title("light", {"state_machines": {"light": {"title": "Light"}}})
    ('light', 'Light')
    """
    spec = ((layout or {}).get("state_machines") or {}).get(machine) or {}
    return str(spec.get("title", machine))


def positions(machine: str, layout: dict[str, Any] | None) -> dict[str, tuple[float, float]]:
    """The model's diagram positions of a machine's states (empty: lay them out on a circle)."""
    spec = ((layout or {}).get("state_machines") or {}).get(machine) or {}
    return {k: (float(v[0]), float(v[1])) for k, v in (spec.get("positions") or {}).items()}


def tables(layout: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The label sections the model draws as tables."""
    return list((layout or {}).get("tables") or [])


def actor_of_change(change: str, layout: dict[str, Any] | None) -> tuple[str, str]:
    """The column of a step table a change line belongs to, and the line without the part
    that named the column (``other``, the line unchanged, when no rule matches)."""
    for pattern, actor in (layout or {}).get("actors") or []:
        m = re.match(pattern, change)
        if m:
            return m.expand(actor), change[m.end() :]
    return "other", change


def named(change: str, layout: dict[str, Any] | None) -> str:
    """A change line in the model's words (its ``names`` rules; unchanged when none matches).

    >>> named("parts[1]: None -> 3", {"names": [[r"parts\\[(\\d+)\\]", r"/parts/\\1"]]})
    '/parts/1: None -> 3'
    """
    for pattern, replacement in (layout or {}).get("names") or []:
        out, n = re.subn(pattern, replacement, change, count=1)
        if n:
            return out
    return change


def actor_key(actor: str, layout: dict[str, Any] | None) -> tuple[int, int, str]:
    """Where an actor's column (or lifeline) goes: by the first rule whose actor it could be,
    then by its number, then by name; actors no rule names come last."""
    rules = (layout or {}).get("actors") or []
    m = re.search(r"(\d+)\s*$", actor)
    number = int(m.group(1)) if m else -1
    for i, (_, template) in enumerate(rules):
        fixed = re.split(r"\\\d|\\g<[^>]*>", template)[0]
        if actor == template or (fixed and actor.startswith(fixed) and fixed != template):
            return (i, number, actor)
    return (len(rules), number, actor)
