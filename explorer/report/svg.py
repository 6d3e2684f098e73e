"""The report's diagrams as inline SVG (no script, no external resource): the new states per
level, the state machines with their transition counts, and a counterexample's sequence
diagram (``explorer/report/page.py`` lays out the page)."""

from __future__ import annotations

import html as _html
import math
import re
from typing import Any

from explorer.report.layout import actor_key


def _e(x: Any) -> str:
    """``x`` escaped for HTML (quotes included: safe in text and in attribute values)."""
    return _html.escape(str(x), quote=True)


def _id(uid: str) -> str:
    """An element id made of a caller's ``uid`` (which may carry a model's machine name): kept to
    letters, digits, ``_`` and ``-``, so it is safe in an attribute and in ``url(#...)``.

    >>> _id("e0-partition"), _id('x"><b>')
    ('e0-partition', 'x___b_')
    """
    return re.sub(r"[^A-Za-z0-9_-]", "_", str(uid))


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
            f"<title>depth {_e(lv['depth'])}: {lv['new_states']:,} new states</title></rect>"
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="new states per BFS level">'
        f'<text x="2" y="12" font-size="11" fill="#667085">{peak:,}</text>'
        f'<line x1="34" y1="{height - 20}" x2="{width}" y2="{height - 20}" stroke="#999"/>'
        + "".join(bars)
        + f'<text x="35" y="{height - 5}" font-size="11" fill="#667085">depth 0</text>'
        f'<text x="{width - 60}" y="{height - 5}" font-size="11" fill="#667085">depth {_e(levels[-1]["depth"])}</text>'
        "</svg>"
    )


_NODE_W, _NODE_H = 176.0, 34.0


def _layout(nodes: list[str], given: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """The model's positions when it gives one for every state, else the states on a circle."""
    if nodes and all(n in given for n in nodes):
        return {n: given[n] for n in nodes}
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
    given: dict[str, tuple[float, float]] | None = None,
) -> str:
    """An inline SVG diagram of a state machine's coverage.

    ``edges`` maps every valid transition ``"From->To"`` to its hit count (0: never
    taken); ``invalid`` maps attempted invalid transitions to their counts. Covered edges
    are solid green with the count, uncovered ones dashed grey, invalid attempts dotted
    red. ``uid`` keeps marker ids unique in the page; ``given`` places the states (the model's
    :func:`explorer.report.layout.positions`).

    >>> svg = state_machine_svg("light", {"Red->Green": 3, "Green->Amber": 0})
    >>> svg.count('class="edge covered"'), svg.count('class="edge uncovered"')
    (1, 1)
    """
    invalid = invalid or {}
    uid = _id(uid)
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
    pos = {
        k: (x, y + 34) for k, (x, y) in _layout(nodes, given or {}).items()
    }  # room for self-loops above the top row
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
            # a fixed size in the diagram's units: an arrowhead does not grow with its edge's width
            f'<marker id="{uid}-{c}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="10" markerHeight="10" '
            'markerUnits="userSpaceOnUse" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{col}"/></marker>'
        )
    parts.append("</defs>")
    drawn: list[tuple[str, str, int, str, str, float, float, str]] = []
    for u, v, n, c in pairs:
        (x1, y1), (x2, y2) = pos[u], pos[v]
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
        drawn.append((u, v, n, c, d, lx, ly, anchor))
    boxes = [
        (px - _NODE_W / 2, py - _NODE_H / 2, px + _NODE_W / 2, py + _NODE_H / 2) for px, py in pos.values()
    ]
    for u, v, n, c, d, lx, ly, anchor in drawn:
        sw = 1.4 if c != "covered" else 1.6 + 2.4 * math.log1p(n) / math.log1p(peak)
        tip = f"{u} -> {v}: " + (f"{n:,} hits" if c != "invalid" else f"{n:,} invalid attempts")
        label = f"{'✗' if c == 'invalid' else ''}{n:,}"
        ly = _free_y(lx, ly, anchor, _text_px(label), boxes, height)
        parts.append(
            f'<g class="edge {c}" data-edge="{_e(u)}->{_e(v)}" data-hits="{_e(n)}"><title>{_e(tip)}</title>'
            f'<path d="{d}" fill="none" stroke="{colour[c]}" stroke-width="{sw:.1f}"{dash[c]} '
            f'marker-end="url(#{uid}-{c})"/>'
            f'<text x="{lx:.1f}" y="{ly:.1f}" font-size="11" text-anchor="{anchor}" fill="{colour[c]}" '
            f'stroke="#fff" stroke-width="3" paint-order="stroke">{_e(label)}</text></g>'
        )
    for name, (px, py) in pos.items():
        parts.append(
            f'<g class="node"><rect x="{px - _NODE_W / 2:.1f}" y="{py - _NODE_H / 2:.1f}" width="{_NODE_W:.0f}" '
            f'height="{_NODE_H:.0f}" rx="8" fill="#eef3fb" stroke="#4c78a8"/>'
            f'<text x="{px:.1f}" y="{py + 4:.1f}" font-size="12" text-anchor="middle" fill="#1d2330">{_e(name)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


#: an 11 px label's width per character, generous (a proportional font's widest letters; a
#: CJK character is a full em): widths are estimated so that no label ever leaves its SVG
_CHAR_PX, _WIDE_PX, _LABEL_FONT = 7.0, 12.0, 11
#: a label longer than this many characters wraps at spaces onto further lines
_WRAP = 56
_LINE_PX = 14


def _free_y(
    x: float, y: float, anchor: str, w: float, boxes: list[tuple[float, float, float, float]], height: float
) -> float:
    """The baseline nearest ``y`` (in steps of a line, up to six either way) at which an edge
    label ``w`` wide, anchored at ``x``, overlaps no box of ``boxes`` (the states, and the labels
    placed before it, its own box added); ``y`` itself when none is free.

    >>> boxes = [(0.0, 0.0, 100.0, 20.0)]
    >>> _free_y(10.0, 15.0, "start", 30.0, boxes, 200.0), boxes[-1]
    (33.0, (8.0, 22.0, 42.0, 35.0))
    """
    left = x - w if anchor == "end" else x - w / 2 if anchor == "middle" else x
    for k in (0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6):
        cy = y + 18 * k if k > 0 else y + 13 * k
        box = (left - 2, cy - 11, left + w + 2, cy + 2)
        if box[1] < 0 or box[3] > height:
            continue
        if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in boxes):
            boxes.append(box)
            return cy
    boxes.append((left - 2, y - 11, left + w + 2, y + 2))
    return y


def _text_px(text: str) -> float:
    """The estimated width of ``text`` at the labels' font size.

    >>> _text_px("abc"), _text_px("中文")
    (21.0, 24.0)
    """
    return sum(_WIDE_PX if ord(ch) >= 0x2E80 else _CHAR_PX for ch in text)


def wrap_label(label: str, width: int = _WRAP) -> list[str]:
    """``label`` as lines of at most ``width`` characters, broken at spaces (a word longer than
    a line is cut into pieces, never dropped).

    >>> wrap_label("the light turns green at noon", 16)
    ['the light turns', 'green at noon']
    >>> wrap_label("x" * 10, 4)
    ['xxxx', 'xxxx', 'xx']
    """
    lines: list[str] = []
    cur = ""
    for word in label.split():
        while len(word) > width:
            if cur:
                lines.append(cur)
                cur = ""
            lines.append(word[:width])
            word = word[width:]
        if not cur:
            cur = word
        elif len(cur) + 1 + len(word) <= width:
            cur += " " + word
        else:
            lines.append(cur)
            cur = word
    if cur or not lines:
        lines.append(cur)
    return lines


def _tspans(lines: list[str], x: float) -> str:
    return "".join(
        f'<tspan x="{x:.0f}" dy="{0 if k == 0 else _LINE_PX}">{_e(line)}</tspan>'
        for k, line in enumerate(lines)
    )


def sequence_svg(arrows: list[list[str]], uid: str = "seq", layout: dict[str, Any] | None = None) -> str:
    """An inline SVG sequence diagram: one lifeline per actor, one arrow per step. The diagram
    sizes itself to its labels: a long label wraps onto more lines and the lifelines move apart
    until each label fits between the lifelines it joins (a self-message's label fits before
    the next lifeline), so no label is cut or clipped. Lifelines go in the order of the model's
    actor rules (``layout``, :func:`explorer.report.layout.actor_key`).

    >>> svg = sequence_svg([["car 0", "light", "crosses"], ["light", "light", "turns green"]])
    >>> svg.count('class="lifeline"'), svg.count('class="msg"')
    (2, 2)
    """
    uid = _id(uid)
    actors = sorted({x for a in arrows for x in a[:2]}, key=lambda a: actor_key(a, layout))
    idx = {a: i for i, a in enumerate(actors)}
    wrapped = [wrap_label(str(label)) for _, _, label in arrows]
    label_px = [max(_text_px(line) for line in lines) + 8 for lines in wrapped]
    box = [max(140.0, _text_px(a) + 24) for a in actors]
    # the gap after each lifeline (the last one's is the right margin)
    gaps = [max(190.0, (box[i] + box[i + 1]) / 2 + 30) for i in range(len(actors) - 1)]
    gaps.append(max(180.0, box[-1] / 2 + 10) if actors else 180.0)
    spans = sorted(
        ((idx[src], idx[dst], px) for (src, dst, _), px in zip(arrows, label_px, strict=True)),
        key=lambda t: abs(t[0] - t[1]),
    )
    for a, b, px in spans:
        if a == b:  # a self-message: the label starts 34 px right of the lifeline
            gaps[a] = max(gaps[a], 34 + px + 10)
            continue
        lo, hi = min(a, b), max(a, b)
        short = px + 24 - sum(gaps[lo:hi])
        if short > 0:
            for k in range(lo, hi):
                gaps[k] += short / (hi - lo)
    left = max(110.0, box[0] / 2 + 30) if actors else 110.0
    col: dict[str, float] = {}
    x = left
    for i, actor in enumerate(actors):
        col[actor] = x
        x += gaps[i]
    width = math.ceil(x)
    top = 58
    rows: list[float] = []  # each arrow's y
    y = float(top)
    for (src, dst, _), lines in zip(arrows, wrapped, strict=True):
        extra = _LINE_PX * (len(lines) - 1)
        if src == dst:
            rows.append(y + 10)
            y += max(34, 22 + extra + 12)
        else:
            rows.append(y + 10 + extra)
            y += 34 + extra
    height = math.ceil(y + 30)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="sequence diagram"><defs><marker id="{uid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#1d2330"/>'
        "</marker></defs>"
    ]
    for i, actor in enumerate(actors):
        x = col[actor]
        parts.append(
            f'<g class="lifeline"><rect x="{x - box[i] / 2:.0f}" y="8" width="{box[i]:.0f}" height="26" rx="5" '
            f'fill="#eef3fb" stroke="#4c78a8"/><text x="{x:.0f}" y="25" font-size="12" '
            f'text-anchor="middle">{_e(actor)}</text>'
            f'<line x1="{x:.0f}" y1="34" x2="{x:.0f}" y2="{height - 8}" stroke="#a3abb8" stroke-dasharray="4 4"/></g>'
        )
    for i, ((src, dst, label), lines, y) in enumerate(zip(arrows, wrapped, rows, strict=True)):
        parts.append(f'<text x="6" y="{y + 4:.0f}" font-size="11" fill="#667085">{i + 1}</text>')
        x1, x2 = col[src], col[dst]
        if src == dst:
            d = f"M{x1:.0f},{y - 6:.0f} h28 v14 h-26"
            tx, ty, anchor = x1 + 34, y + 4, "start"
        else:
            d = f"M{x1:.0f},{y:.0f} L{x2 - 4 if x2 > x1 else x2 + 4:.0f},{y:.0f}"
            tx, ty, anchor = (x1 + x2) / 2, y - 4 - _LINE_PX * (len(lines) - 1), "middle"
        parts.append(
            f'<g class="msg"><title>step {i + 1}: {_e(label)}</title><path d="{d}" fill="none" stroke="#1d2330" '
            f'stroke-width="1.2" marker-end="url(#{uid}-arrow)"/>'
            f'<text x="{tx:.0f}" y="{ty:.0f}" font-size="{_LABEL_FONT}" text-anchor="{anchor}" '
            f'fill="#1d2330" stroke="#fff" stroke-width="3" paint-order="stroke">{_tspans(lines, tx)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
