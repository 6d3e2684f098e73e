"""The report's diagrams as inline SVG (no script, no external resource): the new states per
level, the state machines with their transition counts, and a counterexample's sequence
diagram (``explorer/report.py`` lays out the page)."""

from __future__ import annotations

import html as _html
import math
from typing import Any


def _e(x: Any) -> str:
    """``x`` escaped for HTML."""
    return _html.escape(str(x))


def level_chart_svg(levels: list[dict[str, Any]], width: int = 560, height: int = 140) -> str:
    """An inline SVG bar chart of new states per BFS level.

    >>> level_chart_svg([{"depth": 0, "new_states": 1}, {"depth": 1, "new_states": 3}]).startswith("<svg")
    True
    """
    if not levels:
        return ""
    peak = max(lv["new_states"] for lv in levels) or 1
    n = len(levels)
    bw = max(1.0, (width - 40) / n)
    bars = []
    for i, lv in enumerate(levels):
        h = (height - 30) * lv["new_states"] / peak
        x = 35 + i * bw
        y = height - 20 - h
        bars.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(bw - 1, 0.5):.1f}" height="{h:.1f}" fill="#4c78a8">'
            f"<title>depth {lv['depth']}: {lv['new_states']:,} new states</title></rect>"
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="new states per BFS level">'
        f'<text x="2" y="12" font-size="11" fill="#667085">{peak:,}</text>'
        f'<line x1="34" y1="{height - 20}" x2="{width}" y2="{height - 20}" stroke="#999"/>'
        + "".join(bars)
        + f'<text x="35" y="{height - 5}" font-size="11" fill="#667085">depth 0</text>'
        f'<text x="{width - 60}" y="{height - 5}" font-size="11" fill="#667085">depth {levels[-1]["depth"]}</text>'
        "</svg>"
    )


#: diagram positions (centre x, y) of the controller's states, laid out like the seeds' diagrams
_LAYOUT: dict[str, tuple[float, float]] = {
    "NonExistentPartition": (110, 60),
    "OfflinePartition": (430, 60),
    "NewPartition": (110, 250),
    "OnlinePartition": (430, 250),
    "NonExistentReplica": (110, 60),
    "ReplicaDeletionSuccessful": (610, 60),
    "NewReplica": (110, 210),
    "OnlineReplica": (360, 210),
    "ReplicaDeletionStarted": (610, 210),
    "OfflineReplica": (360, 360),
    "ReplicaDeletionIneligible": (610, 360),
}


_NODE_W, _NODE_H = 176.0, 34.0


def _layout(nodes: list[str]) -> dict[str, tuple[float, float]]:
    if all(n in _LAYOUT for n in nodes):
        return {n: _LAYOUT[n] for n in nodes}
    k = max(len(nodes), 1)
    r = 60 + 28 * k
    return {
        n: (r + 100 + r * math.cos(2 * math.pi * i / k), r + 40 + r * math.sin(2 * math.pi * i / k))
        for i, n in enumerate(nodes)
    }


def _clip(cx: float, cy: float, tx: float, ty: float) -> tuple[float, float]:
    """The point where the ray from a node's centre towards (tx, ty) leaves its box."""
    dx, dy = tx - cx, ty - cy
    if dx == 0 and dy == 0:
        return cx, cy
    hw, hh = _NODE_W / 2 + 3, _NODE_H / 2 + 3
    s = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return cx + dx * s, cy + dy * s


def state_machine_svg(
    title: str,
    edges: dict[str, int],
    invalid: dict[str, int] | None = None,
    uid: str = "sm",
) -> str:
    """An inline SVG diagram of a state machine's coverage.

    ``edges`` maps every valid transition ``"From->To"`` to its hit count (0: never
    taken); ``invalid`` maps attempted invalid transitions to their counts. Covered edges
    are solid green with the count, uncovered ones dashed grey, invalid attempts dotted
    red. ``uid`` keeps marker ids unique in the page.

    >>> svg = state_machine_svg("partition", {"NewPartition->OnlinePartition": 3, "OnlinePartition->OfflinePartition": 0})
    >>> svg.count('class="edge covered"'), svg.count('class="edge uncovered"')
    (1, 1)
    """
    invalid = invalid or {}
    pairs: list[tuple[str, str, int, str]] = []
    for key, n in edges.items():
        u, _, v = key.partition("->")
        pairs.append((u, v, n, "covered" if n else "uncovered"))
    for key, n in invalid.items():
        u, _, v = key.partition("->")
        pairs.append((u, v, n, "invalid"))
    nodes: list[str] = []
    for u, v, _, _ in pairs:
        for x in (u, v):
            if x not in nodes:
                nodes.append(x)
    pos = {k: (x, y + 34) for k, (x, y) in _layout(nodes).items()}  # room for self-loops above the top row
    width = max((x for x, _ in pos.values()), default=0) + _NODE_W / 2 + 40
    height = max((y for _, y in pos.values()), default=0) + _NODE_H / 2 + 60
    cy_mid = (min((y for _, y in pos.values()), default=0) + max((y for _, y in pos.values()), default=0)) / 2
    colour = {"covered": "#17703a", "uncovered": "#a3abb8", "invalid": "#b3261e"}
    dash = {"covered": "", "uncovered": ' stroke-dasharray="6 4"', "invalid": ' stroke-dasharray="2 3"'}
    peak = max([n for _, _, n, c in pairs if c == "covered"] or [1])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" role="img" '
        f'aria-label="{_e(title)}"><defs>'
    ]
    for c, col in colour.items():
        parts.append(
            f'<marker id="{uid}-{c}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{col}"/></marker>'
        )
    parts.append("</defs>")
    for u, v, n, c in pairs:
        (x1, y1), (x2, y2) = pos[u], pos[v]
        sw = 1.4 if c != "covered" else 1.6 + 2.4 * math.log1p(n) / math.log1p(peak)
        tip = f"{u} -> {v}: " + (f"{n:,} hits" if c != "invalid" else f"{n:,} invalid attempts")
        if u == v:
            up = y1 <= cy_mid
            sy = y1 - _NODE_H / 2 if up else y1 + _NODE_H / 2
            k = -1 if up else 1
            d = f"M{x1 - 18:.1f},{sy:.1f} C{x1 - 45:.1f},{sy + 48 * k:.1f} {x1 + 45:.1f},{sy + 48 * k:.1f} {x1 + 18:.1f},{sy:.1f}"
            lx, ly = x1, sy + 40 * k + (4 if k > 0 else 0)
            anchor = "middle"
        else:
            dx, dy = x2 - x1, y2 - y1
            dist = math.hypot(dx, dy)
            off = 0.13 * dist if c != "invalid" else -0.22 * dist
            mx, my = (x1 + x2) / 2 - dy / dist * off, (y1 + y2) / 2 + dx / dist * off
            sx, sy2 = _clip(x1, y1, mx, my)
            ex, ey = _clip(x2, y2, mx, my)
            d = f"M{sx:.1f},{sy2:.1f} Q{mx:.1f},{my:.1f} {ex:.1f},{ey:.1f}"
            lx, ly = 0.25 * sx + 0.5 * mx + 0.25 * ex, 0.25 * sy2 + 0.5 * my + 0.25 * ey
            # the label sits on the outer side of its curve, so a reverse edge's label does not cover it
            nx = -dy / dist * off
            anchor = "start" if nx > 4 else "end" if nx < -4 else "middle"
            lx += 3 if anchor == "start" else -3 if anchor == "end" else 0
        parts.append(
            f'<g class="edge {c}" data-edge="{_e(u)}->{_e(v)}" data-hits="{n}"><title>{_e(tip)}</title>'
            f'<path d="{d}" fill="none" stroke="{colour[c]}" stroke-width="{sw:.1f}"{dash[c]} '
            f'marker-end="url(#{uid}-{c})"/>'
            f'<text x="{lx:.1f}" y="{ly:.1f}" font-size="11" text-anchor="{anchor}" fill="{colour[c]}" '
            f'stroke="#fff" stroke-width="3" paint-order="stroke">{"✗" if c == "invalid" else ""}{n:,}</text></g>'
        )
    for name, (px, py) in pos.items():
        parts.append(
            f'<g class="node"><rect x="{px - _NODE_W / 2:.1f}" y="{py - _NODE_H / 2:.1f}" width="{_NODE_W:.0f}" '
            f'height="{_NODE_H:.0f}" rx="8" fill="#eef3fb" stroke="#4c78a8"/>'
            f'<text x="{px:.1f}" y="{py + 4:.1f}" font-size="12" text-anchor="middle" fill="#1d2330">{_e(name)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _actor_of_change(change: str) -> str:
    """Which column a ``diff_states`` line belongs to: ZooKeeper, broker i, or other."""
    head = change.split(":", 1)[0].split(".", 1)[0]
    if head == "zk":
        return "ZooKeeper"
    if head.startswith("nodes[") and head.endswith("]"):
        return f"broker {head[6:-1]}"
    return "other"


def _strip_head(change: str) -> str:
    head, _, rest = change.partition(".")
    return rest if rest and (head == "zk" or head.startswith("nodes[")) else change


def _actor_key(a: str) -> tuple[int, int, str]:
    if a == "ZooKeeper":
        return (0, 0, a)
    if a.startswith("broker "):
        tail = a[7:]
        return (1, int(tail) if tail.isdigit() else 0, a)
    return (2, 0, a)


def sequence_svg(arrows: list[list[str]], uid: str = "seq") -> str:
    """An inline SVG sequence diagram: one lifeline per actor, one arrow per step.

    >>> svg = sequence_svg([["broker 0", "ZooKeeper", "create /controller"], ["broker 0", "broker 0", "crashes"]])
    >>> svg.count('class="lifeline"'), svg.count('class="msg"')
    (2, 2)
    """
    actors = sorted({x for a in arrows for x in a[:2]}, key=_actor_key)
    col = {a: 110 + 190 * i for i, a in enumerate(actors)}
    row_h, top = 34, 58
    width = 110 + 190 * max(len(actors) - 1, 0) + 180
    height = top + row_h * len(arrows) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="sequence diagram"><defs><marker id="{uid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#1d2330"/>'
        "</marker></defs>"
    ]
    for a in actors:
        x = col[a]
        parts.append(
            f'<g class="lifeline"><rect x="{x - 70}" y="8" width="140" height="26" rx="5" fill="#eef3fb" '
            f'stroke="#4c78a8"/><text x="{x}" y="25" font-size="12" text-anchor="middle">{_e(a)}</text>'
            f'<line x1="{x}" y1="34" x2="{x}" y2="{height - 8}" stroke="#a3abb8" stroke-dasharray="4 4"/></g>'
        )
    for i, (src, dst, label) in enumerate(arrows):
        y = top + row_h * i + 10
        parts.append(f'<text x="6" y="{y + 4}" font-size="11" fill="#667085">{i + 1}</text>')
        x1, x2 = col[src], col[dst]
        short = label if len(label) <= 48 else label[:46] + "…"
        tx: float
        if src == dst:
            d = f"M{x1},{y - 6} h28 v14 h-26"
            tx, anchor = x1 + 34, "start"
        else:
            d = f"M{x1},{y} L{x2 - 4 if x2 > x1 else x2 + 4},{y}"
            tx, anchor = (x1 + x2) / 2, "middle"
        parts.append(
            f'<g class="msg"><title>step {i + 1}: {_e(label)}</title><path d="{d}" fill="none" stroke="#1d2330" '
            f'stroke-width="1.2" marker-end="url(#{uid}-arrow)"/>'
            f'<text x="{tx}" y="{y - 4 if src != dst else y + 4}" font-size="11" text-anchor="{anchor}" '
            f'fill="#1d2330" stroke="#fff" stroke-width="3" paint-order="stroke">{_e(short)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
