"""The history of release runs: what changed since the previous run, and ``reports/index.html``.

Every ``kafka-mc release`` writes ``<report-dir>/<run-id>/report.json``. This module reads
those runs back: :func:`changes` compares a run with an earlier one (per entry: verdict,
distinct states, time; violations that appeared or vanished; state-machine edges and action
kinds covered or lost), :func:`changes_html` is the "Changed since" section of a run's page,
and :func:`index_html` is the report folder's front page: every run kept, with its commit,
date, verdict and totals, and trend charts (distinct states, time, coverage, mutation score),
as inline SVG with no external resource, so the folder can be copied to any static host.

>>> a = {"run_id": "1", "summary": {}, "entries": [{"name": "x", "status": "pass",
...      "result": {"distinct_states": 10, "seconds": 1.0, "violations": []}}]}
>>> b = {"run_id": "2", "summary": {}, "entries": [{"name": "x", "status": "fail",
...      "result": {"distinct_states": 12, "seconds": 1.5, "violations": [{"property": "p"}]}}]}
>>> ch = changes(b, a)
>>> ch["entries"][0]["states"], ch["new_violations"]
([10, 12], [['x', 'p']])
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

__all__ = ["changes", "changes_html", "index_html", "read_run", "run_key", "runs"]

SCHEMA = "kafka-mc/release-report/2"


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def run_key(run_id: str) -> tuple[str, int]:
    """The order of run ids: their time stamp, then the ``-N`` suffix of runs started in the
    same second.

    >>> sorted(["20260101-000000-10", "20260101-000000-2", "20260101-000000"], key=run_key)
    ['20260101-000000', '20260101-000000-2', '20260101-000000-10']
    """
    parts = run_id.split("-")
    if len(parts) == 3 and parts[2].isdigit():
        return f"{parts[0]}-{parts[1]}", int(parts[2])
    return run_id, 1


def read_run(path: Path) -> dict[str, Any] | None:
    """The ``report.json`` of a run folder (or the file itself), or None when it is missing,
    unreadable or not a release report."""
    f = path / "report.json" if path.is_dir() else path
    try:
        doc = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("entries"), list):
        return None
    return doc


def runs(report_dir: str | Path) -> list[dict[str, Any]]:
    """Every run kept under ``report_dir`` (oldest first), each its report document."""
    root = Path(report_dir)
    if not root.is_dir():
        return []
    out = []
    for d in root.iterdir():
        if d.name.startswith(".") or d.name == "latest" or d.is_symlink() or not d.is_dir():
            continue
        doc = read_run(d)
        if doc is not None:
            out.append(doc)
    return sorted(out, key=lambda doc: run_key(str(doc.get("run_id", ""))))


def _edges(summary: dict[str, Any]) -> set[str]:
    return {
        f"{m}/{edge}"
        for m, x in (summary.get("state_machines") or {}).items()
        for edge, hits in (x.get("hits") or {}).items()
        if hits
    }


def changes(cur: dict[str, Any], prev: dict[str, Any]) -> dict[str, Any]:
    """What changed from run ``prev`` to run ``cur``: per entry ``[before, after]`` of status,
    distinct states and seconds (None where an entry is new or gone); violations
    (``[entry, property]``) new and vanished; state-machine edges and action kinds gained and
    lost; totals."""
    before = {en["name"]: en for en in prev.get("entries", [])}
    after = {en["name"]: en for en in cur.get("entries", [])}
    names = [*after, *(n for n in before if n not in after)]

    def field(en: dict[str, Any] | None, key: str) -> Any:
        if en is None:
            return None
        return en["status"] if key == "status" else en.get("result", {}).get(key)

    rows = [
        {
            "name": n,
            "status": [field(before.get(n), "status"), field(after.get(n), "status")],
            "states": [field(before.get(n), "distinct_states"), field(after.get(n), "distinct_states")],
            "seconds": [field(before.get(n), "seconds"), field(after.get(n), "seconds")],
        }
        for n in names
    ]

    def violations(doc: dict[str, Any]) -> set[tuple[str, str]]:
        return {
            (en["name"], v["property"])
            for en in doc.get("entries", [])
            for v in en.get("result", {}).get("violations", [])
        }

    vb, va = violations(prev), violations(cur)
    sb, sa = prev.get("summary", {}), cur.get("summary", {})
    kinds_b = set((sb.get("action_kinds") or {}).get("never_enabled", []))
    kinds_a = set((sa.get("action_kinds") or {}).get("never_enabled", []))
    return {
        "since": prev.get("run_id"),
        "since_commit": (prev.get("provenance") or {}).get("commit"),
        "entries": rows,
        "new_violations": sorted([list(x) for x in va - vb]),
        "vanished_violations": sorted([list(x) for x in vb - va]),
        "edges_gained": sorted(_edges(sa) - _edges(sb)),
        "edges_lost": sorted(_edges(sb) - _edges(sa)),
        "kinds_now_enabled": sorted(kinds_b - kinds_a),
        "kinds_no_longer_enabled": sorted(kinds_a - kinds_b),
        "states": [sb.get("distinct_states"), sa.get("distinct_states")],
        "seconds": [sb.get("wall_seconds"), sa.get("wall_seconds")],
    }


def _delta(pair: list[Any], fmt: str = "{:,}") -> str:
    a, b = pair
    if a is None and b is None:
        return ""
    if a is None:
        return f"new: {fmt.format(b)}"
    if b is None:
        return f"gone (was {fmt.format(a)})"
    if a == b:
        return fmt.format(b)
    return f"{fmt.format(a)} &rarr; {fmt.format(b)}"


def changes_html(ch: dict[str, Any]) -> str:
    """The "Changed since" section of a run's page (collapsed when nothing changed)."""
    commit = f" (commit {_e(str(ch['since_commit'])[:10])})" if ch.get("since_commit") else ""
    lines = []
    for key, label in (
        ("new_violations", "new violations"),
        ("vanished_violations", "violations gone"),
    ):
        if ch[key]:
            lines.append(
                f"<li>{label}: " + ", ".join(f"<code>{_e(e)}: {_e(p)}</code>" for e, p in ch[key]) + "</li>"
            )
    for key, label in (
        ("edges_gained", "state-machine edges now taken"),
        ("edges_lost", "state-machine edges no longer taken"),
        ("kinds_now_enabled", "action kinds now enabled"),
        ("kinds_no_longer_enabled", "action kinds no longer enabled"),
    ):
        if ch[key]:
            lines.append(f"<li>{label}: " + ", ".join(f"<code>{_e(x)}</code>" for x in ch[key]) + "</li>")
    moved = [r for r in ch["entries"] if r["status"][0] != r["status"][1] or r["states"][0] != r["states"][1]]
    table = "".join(
        f"<tr><td>{_e(r['name'])}</td><td>{_e(' → '.join(str(s) for s in r['status'] if s is not None))}</td>"
        f"<td>{_delta(r['states'])}</td><td>{_delta(r['seconds'], '{:.1f} s')}</td></tr>"
        for r in moved
    )
    head = (
        f"<h2>Changed since run {_e(ch['since'])}{commit}</h2>"
        f"<p>distinct states {_delta(ch['states'])}; wall time {_delta(ch['seconds'], '{:.0f} s')}</p>"
    )
    if not lines and not moved:
        return head + "<p class=muted>no entry changed its verdict or its state count; coverage unchanged</p>"
    body = f"<ul>{''.join(lines)}</ul>" if lines else ""
    if moved:
        body += (
            "<details open><summary>entries whose verdict or state count changed</summary><table>"
            "<tr><th>entry</th><th>verdict</th><th>distinct states</th><th>time</th></tr>"
            f"{table}</table></details>"
        )
    return head + body


def _num(v: float) -> str:
    """An axis label: thousands separated, decimals only for small values.

    >>> _num(163165.0), _num(0.42)
    ('163,165', '0.42')
    """
    return f"{v:,.0f}" if abs(v) >= 10 else f"{v:.2g}" if v else "0"


def _chart(title: str, xs: list[str], series: dict[str, list[float | None]], unit: str = "") -> str:
    """A line chart as inline SVG: one polyline per series over the runs ``xs``."""
    w, h, pad = 640, 180, 40
    values = [v for vs in series.values() for v in vs if v is not None]
    if not values or len(xs) < 1:
        return ""
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    step = (w - 2 * pad) / max(len(xs) - 1, 1)
    colours = ["#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#57606a"]
    parts = [
        f'<svg class=trend role=img aria-label="{_e(title)}" width="{w}" height="{h + 20 * len(series)}" '
        f'viewBox="0 0 {w} {h + 20 * len(series)}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{pad}" y="14" font-size="12">{_e(title)}</text>',
        f'<text x="4" y="{pad}" font-size="10">{_num(hi)}{_e(unit)}</text>',
        f'<text x="4" y="{h - pad + 10}" font-size="10">{_num(lo)}{_e(unit)}</text>',
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#999"/>',
        f'<text x="{pad}" y="{h - pad + 14}" font-size="10">{_e(xs[0])}</text>',
        f'<text x="{w - pad}" y="{h - pad + 14}" font-size="10" text-anchor="end">{_e(xs[-1])}</text>'
        if len(xs) > 1
        else "",
    ]
    for i, (name, vs) in enumerate(series.items()):
        c = colours[i % len(colours)]
        pts = [
            f"{pad + j * step:.1f},{(h - pad) - (v - lo) / span * (h - 2 * pad - 10):.1f}"
            for j, v in enumerate(vs)
            if v is not None
        ]
        if len(pts) > 1:
            parts.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{" ".join(pts)}"/>')
        for p in pts:
            x, y = p.split(",")
            parts.append(f'<circle cx="{x}" cy="{y}" r="3" fill="{c}"/>')
        parts.append(f'<text x="{pad}" y="{h + 14 + 20 * i}" font-size="11" fill="{c}">{_e(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def index_html(docs: list[dict[str, Any]], keep: int = 50) -> str:
    """The report folder's front page: every run (newest first) with its commit, date, verdict
    and totals, and trend charts over the last ``keep`` runs."""
    shown = docs[-keep:]
    xs = [str(d.get("run_id")) for d in shown]
    rows = []
    for d in reversed(docs):
        s = d.get("summary", {})
        p = d.get("provenance", {})
        ents = d.get("entries", [])
        failed = sum(1 for en in ents if en.get("status") == "fail")
        verdict = "FAILED" if failed else ("interrupted" if d.get("interrupted") else "passed")
        commit = str(p.get("commit") or "")[:10] + (" (dirty)" if p.get("dirty") else "")
        score = ((d.get("mutation") or {}).get("score") or {}).get("score")
        rows.append(
            f'<tr><td><a href="{_e(d.get("run_id"))}/index.html">{_e(d.get("run_id"))}</a></td>'
            f"<td><code>{_e(commit)}</code></td><td>{_e(p.get('started', ''))}</td>"
            f"<td class={'fail' if failed else 'pass'}>{verdict}</td>"
            f"<td>{s.get('passed', 0)}/{s.get('entries', len(ents))}</td>"
            f"<td>{s.get('distinct_states', 0):,}</td><td>{s.get('wall_seconds', 0):.1f} s</td>"
            f"<td>{f'{score:.1%}' if isinstance(score, float) else ''}</td></tr>"
        )

    def total(key: str) -> list[float | None]:
        return [d.get("summary", {}).get(key) for d in shown]

    def covered(machine: str) -> list[float | None]:
        return [
            ((d.get("summary", {}).get("state_machines") or {}).get(machine) or {}).get("covered")
            for d in shown
        ]

    entry_names = list(dict.fromkeys(en["name"] for d in shown for en in d.get("entries", [])))
    machines = sorted({m for d in shown for m in (d.get("summary", {}).get("state_machines") or {})})

    def per_entry(name: str, key: str) -> list[float | None]:
        out: list[float | None] = []
        for d in shown:
            en = next((en for en in d.get("entries", []) if en["name"] == name), None)
            out.append(None if en is None else en.get("result", {}).get(key))
        return out

    charts = [
        _chart("distinct states, whole suite", xs, {"distinct states": total("distinct_states")}),
        _chart("wall time, whole suite", xs, {"seconds": total("wall_seconds")}, " s"),
        _chart(
            "coverage",
            xs,
            {
                **{f"{m} edges": covered(m) for m in machines},
                "action kinds enabled": [
                    (d.get("summary", {}).get("action_kinds") or {}).get("enabled") for d in shown
                ],
            },
        ),
    ]
    scores = [((d.get("mutation") or {}).get("score") or {}).get("score") for d in shown]
    if any(isinstance(x, float) for x in scores):
        charts.append(
            _chart(
                "mutation score",
                xs,
                {"score %": [x * 100 if isinstance(x, float) else None for x in scores]},
                "%",
            )
        )
    per = "".join(
        f"<details><summary>{_e(n)}</summary>"
        + _chart(f"{n}: distinct states", xs, {"distinct states": per_entry(n, "distinct_states")})
        + _chart(f"{n}: seconds", xs, {"seconds": per_entry(n, "seconds")}, " s")
        + "</details>"
        for n in entry_names
    )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>kafka-mc release history</title>"
        "<style>body{font-family:system-ui,'Noto Sans','Noto Sans CJK SC',sans-serif;margin:2em;max-width:1100px}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
        ".pass{color:#1a7f37}.fail{color:#d1242f;font-weight:bold}svg.trend{display:block;margin:1em 0}</style>"
        "</head><body><h1>kafka-mc release history</h1>"
        f"<p>{len(docs)} run{'' if len(docs) == 1 else 's'} kept in this folder; each run's page is its own folder (copy the folder as is "
        "to any static host).</p><table><tr><th>run</th><th>commit</th><th>started</th><th>verdict</th>"
        "<th>passed</th><th>distinct states</th><th>wall time</th><th>mutation score</th></tr>"
        + "".join(rows)
        + "</table><h2>Trends</h2>"
        + "".join(charts)
        + "<h2>Per entry</h2>"
        + per
        + "</body></html>"
    )
