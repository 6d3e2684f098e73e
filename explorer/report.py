"""The HTML report of a release run: one self-contained page, readable offline.

:func:`render_html` turns the ``report.json`` document (schema
``kafka-mc/release-report/1``) into HTML: a summary per configuration, each
configuration's property table (held / violated / witnessed / vacuous), action
coverage, a chart of new states per BFS level (inline SVG), and every counterexample
as a step table with what changed at each step. No script, no external resource.

Example
-------
>>> html = render_html({"run_id": "r1", "suite": "s.toml", "entries": []})
>>> html.startswith("<!DOCTYPE html>") and "r1" in html
True
"""

from __future__ import annotations

import html as _html
from typing import Any

__all__ = ["level_chart_svg", "render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;
color:#1d2330;line-height:1.45;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{margin-top:2em;border-bottom:2px solid #dde3ee;padding-bottom:.2em}
h3{margin-top:1.5em} table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #d5dbe6;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f1f4f9} td.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#17703a;font-weight:600} .fail{color:#b3261e;font-weight:600} .budget{color:#9a6700;font-weight:600}
.held{color:#17703a} .violated,.unreached{color:#b3261e;font-weight:600} .witnessed{color:#1f5fa8}
.unknown,.unchecked{color:#9a6700} .muted{color:#667085} code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace}
.changes{margin:0;padding-left:1.1em;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em}
.loop{background:#fff6e0} details{margin:.4em 0} summary{cursor:pointer}
"""


def _e(x: Any) -> str:
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


def _summary(entries: list[dict[str, Any]]) -> str:
    rows = []
    for en in entries:
        r = en["result"]
        rows.append(
            "<tr>"
            f'<td><a href="#{_e(en["name"])}">{_e(en["name"])}</a></td><td>{_e(r["model"])}</td>'
            f"<td>{_e(r['engine'])}</td><td>{_e(en['expect'])}</td>"
            f'<td class="{_e(en["status"])}">{_e(en["status"].upper())}</td>'
            f"<td>{_e(r['exit_reason'])}</td>"
            + (
                # proofs explore no states: their size is the number of paths
                f"<td class=num>{r['generated_states']:,} paths</td><td class=num>–</td>"
                f"<td class=num>{r['seconds']:.2f}</td><td class=num>–</td></tr>"
                if r["engine"] == "symbolic"
                else f"<td class=num>{r['distinct_states']:,}</td><td class=num>{r['max_depth']}</td>"
                f"<td class=num>{r['seconds']:.2f}</td><td class=num>{r['states_per_second']:,.0f}</td></tr>"
            )
        )
    return (
        "<table><tr><th>configuration</th><th>model</th><th>engine</th><th>expect</th><th>verdict</th>"
        "<th>exit reason</th><th>distinct states</th><th>depth</th><th>seconds</th><th>states/s</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _properties(r: dict[str, Any], expected: list[str]) -> str:
    rows = []
    for name, p in r["properties"].items():
        status = p["status"]
        vac = " (vacuous: never applied)" if p.get("vacuous") else ""
        extra = []
        if "evaluated" in p:
            extra.append(f"{p['evaluated']:,} evaluated")
        if p.get("non_vacuous"):
            extra.append("applied (non-vacuous)")
        if "witness_length" in p:
            extra.append(f"witness in {p['witness_length']} steps")
        exp = " (expected)" if name in expected else ""
        rows.append(
            f"<tr><td><code>{_e(name)}</code></td><td>{_e(p['kind'])}</td>"
            f'<td class="{_e(status)}">{_e(status)}{exp}{vac}</td><td class=muted>{_e(", ".join(extra))}</td>'
            f"<td>{_e(p['doc'])}</td></tr>"
        )
    return (
        "<table><tr><th>property</th><th>kind</th><th>status</th><th>evidence</th><th>guarantee</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _coverage(r: dict[str, Any]) -> str:
    cov = r.get("coverage", {})
    acts = cov.get("actions", {})
    rows = [
        f"<tr><td><code>{_e(k)}</code></td><td class=num>{v['enabled']:,}</td><td class=num>{v['new_states']:,}</td></tr>"
        for k, v in acts.items()
    ]
    never = cov.get("never_enabled") or []
    rows += [
        f"<tr><td><code>{_e(k)}</code></td><td class='num fail'>0</td><td class=num>0</td></tr>"
        for k in never
    ]
    return (
        "<table><tr><th>action kind</th><th>enabled (transitions)</th><th>found new states</th></tr>"
        + "".join(rows)
        + "</table>"
        + (f"<p class=fail>never enabled: {_e(', '.join(never))}</p>" if never else "")
    )


def _violation(v: dict[str, Any]) -> str:
    loop = v.get("loop_start")
    rows = []
    for st in v["trace"]:
        cls = ' class="loop"' if loop is not None and st["index"] > loop else ""
        changes = "".join(f"<li>{_e(c)}</li>" for c in st["changes"])
        rows.append(
            f"<tr{cls}><td class=num>{st['index']}</td><td>{_e(st['action'] or 'initial state')}</td>"
            f"<td><ul class=changes>{changes}</ul></td><td class='mono muted'>{_e(st['fingerprint'])}</td></tr>"
        )
    loop_note = (
        f"<p>Lasso: the highlighted steps after step {loop} repeat forever.</p>" if loop is not None else ""
    )
    body = (
        "<table><tr><th>step</th><th>action</th><th>what changed</th><th>fingerprint</th></tr>"
        + "".join(rows)
        + "</table>"
        if v["trace"]
        else f"<p>{_e(v['message'])}</p>"
    )
    return (
        f"<h4 class=violated>{_e(v['property'])} ({_e(v['kind'])}): {v['length']} steps</h4>"
        f"<p>{_e(v['doc'])}</p>{loop_note}{body}"
    )


def render_html(doc: dict[str, Any]) -> str:
    """Render a release report document as one self-contained HTML page."""
    entries = doc.get("entries", [])
    passed = sum(1 for e in entries if e["status"] == "pass")
    parts = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f"<title>kafka-mc release {_e(doc.get('run_id', ''))}</title><style>{_CSS}</style></head><body>",
        f"<h1>kafka-mc release report</h1><p class=muted>run {_e(doc.get('run_id', ''))} · suite "
        f"<code>{_e(doc.get('suite', ''))}</code> · {passed}/{len(entries)} configurations passed</p>",
        "<h2>Summary</h2>",
        _summary(entries),
    ]
    for en in entries:
        r = en["result"]
        parts.append(f'<h2 id="{_e(en["name"])}">{_e(en["name"])}</h2>')
        parts.append(
            f'<p><span class="{_e(en["status"])}">{_e(en["status"].upper())}</span>: {_e(en["message"])}</p>'
        )
        cfg = ", ".join(f"{k} = {v}" for k, v in r["config"].items())
        parts.append(
            f"<p class=muted>model <code>{_e(r['model'])}</code>; configuration: <code>{_e(cfg)}</code></p>"
        )
        if r["engine"] == "symbolic":
            parts.append(
                f"<p>{len(r['properties'])} proof obligations, {r['generated_states']:,} paths, "
                f"{r['seconds']:.2f} s</p>"
            )
        else:
            parts.append(
                f"<p>{r['distinct_states']:,} distinct states, {r['generated_states']:,} generated, depth "
                f"{r['max_depth']}, {r['seconds']:.2f} s, {r['states_per_second']:,.0f} states/s</p>"
            )
        parts.append("<h3>Properties</h3>" + _properties(r, en.get("violates", [])))
        parts.append("<h3>New states per level</h3>" + level_chart_svg(r.get("levels", [])))
        parts.append("<details><summary>Action coverage</summary>" + _coverage(r) + "</details>")
        if r["violations"]:
            parts.append("<h3>Counterexamples</h3>")
            parts += [_violation(v) for v in r["violations"]]
        for note in r.get("notes", []):
            parts.append(f"<p class=muted>note: {_e(note)}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
