"""The HTML report of a release run: the run's page and one page per entry, self-contained and
readable offline.

:func:`report_pages` turns the ``report.json`` document (schema
``kafka-mc/release-report/2``, see ``reports/README.md``) into HTML. The run's page
(:func:`render_html`) is the one screen to decide on: verdicts, what did not pass and why,
what changed since the previous run, the suite's totals (time, states, state-machine edges
and action kinds covered, variants exercised) with both state-machine diagrams over the
whole suite, one property table for the suite and the mutation score. Each entry's page
(:func:`render_entry_html`) holds its verdict,
coverage requirements, property table (held / violated / witnessed / vacuous, states
evaluated), action coverage, state-machine diagrams (covered edges solid with their hit
counts, uncovered dashed, attempted invalid transitions dotted red), the model's other
coverage labels, a chart of new states per BFS level, and every counterexample as a
sequence diagram plus a step table of what changed, split by actor. What a model names
(its machines' titles and layouts, its label tables, its actors) comes from the model's
``report_layout()`` (:mod:`explorer.report.layout`); the explorer knows no model. Inline SVG
only: no script, no external resource.

Example
-------
>>> html = render_html({"run_id": "r1", "suite": "s.toml", "entries": []})
>>> html.startswith("<!DOCTYPE html>") and "r1" in html
True
"""

from __future__ import annotations

import datetime
import html as _html
import json
import re
from pathlib import Path
from typing import Any

from explorer.report.history import changes_html
from explorer.report.layout import actor_key, actor_of_change, machine_title, named, positions, tables
from explorer.report.mutation import _mutation, mutation_summary
from explorer.report.svg import (
    level_chart_svg,
    sequence_svg,
    state_machine_svg,
)
from explorer.report.tools import commands_html, config_html
from explorer.state_view import as_node
from explorer.state_view import render_html as state_html

__all__ = [
    "entry_pages",
    "level_chart_svg",
    "mutation_summary",
    "render_entry_html",
    "render_html",
    "report_pages",
    "sequence_svg",
    "state_machine_svg",
]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,"Noto Sans CJK SC","Noto Sans SC","Source Han Sans SC","WenQuanYi Micro Hei","Microsoft YaHei","PingFang SC",sans-serif;margin:2em auto;max-width:1200px;
color:#1d2330;line-height:1.45;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{margin-top:2em;border-bottom:2px solid #dde3ee;padding-bottom:.2em}
h3{margin-top:1.5em} table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #d5dbe6;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f1f4f9} td.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#17703a;font-weight:600} .fail{color:#b3261e;font-weight:600} .budget{color:#9a6700;font-weight:600}
.held{color:#17703a} .expected{color:#8a5a00} table.matrix td,table.matrix th.col{font-size:.8em;padding:1px 2px;text-align:center;min-width:1.3em} details.counterexample>summary h4{display:inline} .violated,.unreached{color:#b3261e;font-weight:600} .witnessed{color:#1f5fa8}
table.matrix th{position:sticky;top:0;z-index:1} table.matrix td.prop{text-align:left;max-width:22em;font-size:.78em} table.matrix td.prop code{overflow-wrap:anywhere} table.matrix td a{color:inherit}
.unknown,.unchecked{color:#9a6700} .muted{color:#667085} code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace}
.changes{margin:0;padding-left:1.1em;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em}
.loop{background:#fff6e0} .loopstart{outline:2px solid #e0a030} details{margin:.4em 0} summary{cursor:pointer}
.diagrams{display:flex;flex-wrap:wrap;gap:1.2em;align-items:flex-start} figure{margin:.4em 0}
figcaption{font-size:.9em;color:#667085} .figs{font-size:1.05em} .met{color:#17703a} .unmet{color:#b3261e;font-weight:600}
.legend{font-size:.85em;color:#667085}
"""


def _e(x: Any) -> str:
    """``x`` as HTML text, quotes escaped too (safe in text and in attribute values).

    >>> _e('<img src=x onerror="a()">')
    '&lt;img src=x onerror=&quot;a()&quot;&gt;'
    """
    return _html.escape(str(x), quote=True)


def _summary(entries: list[dict[str, Any]], pages: list[str]) -> str:
    rows = []
    for en, pg in zip(entries, pages, strict=True):
        r = en["result"]
        rows.append(
            "<tr>"
            f'<td><a href="{_e(pg)}">{_e(en["name"])}</a></td><td>{_e(r["model"])}</td>'
            f"<td>{_e(r['engine'])}</td><td>{_e(en['expect'])}</td>"
            f'<td class="{_e(en["status"])}">{_e(en["status"].upper())}</td>'
            f"<td>{_e(r['exit_reason'])}</td>"
            + (
                # proofs explore no states (their paths are in the entry's section)
                "<td class=num>–</td><td class=num>–</td>"
                f"<td class=num>{r['seconds']:.2f}</td><td class=num>–</td></tr>"
                if r["engine"] == "symbolic"
                else f"<td class=num>{r['distinct_states']:,}</td><td class=num>{_e(r['max_depth'])}</td>"
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
        if p.get("non_vacuous"):
            extra.append("applied (non-vacuous)")
        if "witness_length" in p:
            extra.append(f"witness in {p['witness_length']} steps")
        if "evaluated" in p:
            unit = "transitions" if p["kind"] == "transition" else "states"
            evaluated = f"{p['evaluated']:,} {unit}"
        else:
            evaluated = "–"
        if "non_vacuous" in p:
            nv = "yes" if p["non_vacuous"] else "<span class=fail>no</span>"
        else:
            nv = "<span class=muted>no guard</span>"
        exp = " (expected)" if name in expected else ""
        rows.append(
            f"<tr><td><code>{_e(name)}</code></td><td>{_e(p['kind'])}</td>"
            f'<td class="{_e(status)}">{_e(status)}{exp}{vac}</td><td class=num>{evaluated}</td>'
            f"<td>{nv}</td><td class=muted>{_e(', '.join(extra))}</td><td>{_e(p['doc'])}</td></tr>"
        )
    return (
        "<table><tr><th>property</th><th>kind</th><th>status</th><th>evaluated on</th>"
        "<th>non-vacuous</th><th>evidence</th><th>guarantee</th></tr>" + "".join(rows) + "</table>"
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


# --------------------------------------------------------------------------- state machines


def _sm_figures(
    labels: dict[str, Any], uid: str, layout: dict[str, Any] | None, with_invalid: bool = True
) -> str:
    """The ``state_machines`` label section's diagrams (titled and laid out as the model's
    :mod:`explorer.report.layout` says) and its attempted invalid transitions."""
    sm = labels.get("state_machines", {})
    inv = labels.get("invalid_transitions", {})
    if not sm:
        return ""
    figs = []
    for machine in sorted(sm):
        edges = sm[machine]
        hit = sum(1 for n in edges.values() if n)
        name = machine_title(machine, layout)
        svg = state_machine_svg(name, edges, inv.get(machine), f"{uid}-{machine}", positions(machine, layout))
        figs.append(
            f"<figure>{svg}<figcaption>{_e(name)}: {hit}/{len(edges)} transitions taken"
            + (f"; {sum(inv[machine].values()):,} invalid attempts" if inv.get(machine) else "")
            + "</figcaption></figure>"
        )
    legend = (
        "<p class=legend>solid green: transition taken (count = explored transitions that took it; "
        "thicker = more); dashed grey: never taken; dotted red ✗: attempted invalid transition.</p>"
    )
    invalid_rows = "".join(
        f"<tr><td>{_e(m)}</td><td><code>{_e(k)}</code></td><td class=num>{n:,}</td></tr>"
        for m, d in sorted(inv.items())
        for k, n in sorted(d.items())
    )
    invalid_html = (
        "<table><tr><th>machine</th><th>attempted invalid transition</th><th>count</th></tr>"
        + invalid_rows
        + "</table>"
        if invalid_rows
        else "<p>No invalid transition was attempted.</p>"
    )
    return f"<div class=diagrams>{''.join(figs)}</div>{legend}{invalid_html if with_invalid else ''}"


def _label_table(labels: dict[str, Any], spec: dict[str, Any]) -> str:
    """A label section the model draws as a table: a row per key of the section, a column per
    outcome the model names.

    >>> spec = {"section": "lights", "title": "Lights", "row": "lamp", "columns": [["on", "lit"], ["off", "dark"]]}
    >>> html = _label_table({"lights": {"hall": {"on": 2}}}, spec)
    >>> "<h4>Lights</h4>" in html, "<td class=num>2</td><td class='num muted'>–</td>" in html
    (True, True)
    """
    section = labels.get(spec["section"])
    if not section:
        return ""
    cols = [(str(k), str(h)) for k, h in spec["columns"]]
    missing = str(spec.get("missing", "–"))
    rows = "".join(
        f"<tr><td><code>{_e(key)}</code></td>"
        + "".join(
            f"<td class=num>{d[k]:,}</td>"
            if isinstance(d, dict) and k in d
            else f"<td class='num muted'>{_e(missing)}</td>"
            for k, _ in cols
        )
        + "</tr>"
        for key, d in sorted(section.items())
    )
    legend = f"<p class=legend>{_e(spec['legend'])}</p>" if spec.get("legend") else ""
    return (
        f"<h4>{_e(spec.get('title', spec['section']))}</h4><table><tr><th>{_e(spec.get('row', ''))}</th>"
        + "".join(f"<th>{_e(h)}</th>" for _, h in cols)
        + "</tr>"
        + rows
        + "</table>"
        + legend
    )


def _other_labels(labels: dict[str, Any], layout: dict[str, Any] | None) -> str:
    known = {"state_machines", "invalid_transitions"} | {t["section"] for t in tables(layout)}
    rest = {k: v for k, v in labels.items() if k not in known}
    if not rest:
        return ""
    rows = []

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(f"{prefix}/{k}" if prefix else k, v)
        else:
            rows.append(f"<tr><td><code>{_e(prefix)}</code></td><td class=num>{node:,}</td></tr>")

    walk("", rest)
    heading = "Other coverage labels" if known & set(labels) else "Coverage labels by path"
    return f"<h4>{heading}</h4><table><tr><th>label</th><th>count</th></tr>" + "".join(rows) + "</table>"


def _labels(labels: dict[str, Any], uid: str, layout: dict[str, Any] | None) -> str:
    """An entry's coverage labels: the state machines' diagrams, the model's tables, the rest
    by path."""
    heading = (layout or {}).get("heading", "Coverage labels")
    return (
        f"<h3>{_e(heading)}</h3>"
        + _sm_figures(labels, uid, layout)
        + "".join(_label_table(labels, t) for t in tables(layout))
        + _other_labels(labels, layout)
    )


def _required(v: Any) -> str:
    if isinstance(v, list):
        return "<br>".join(f"<code>{_e(x)}</code>" for x in v)
    if isinstance(v, float):
        return f"{v:.0%} of the state-machine edges"
    return f"<code>{_e(str(v).lower() if isinstance(v, bool) else v)}</code>"


def _requirements(reqs: list[dict[str, Any]]) -> str:
    if not reqs:
        return ""
    rows = "".join(
        f"<tr><td><code>{_e(q['key'])}</code></td><td>{_required(q['required'])}</td>"
        f'<td class="{"met" if q["met"] else "unmet"}">{"met" if q["met"] else "UNMET"}</td>'
        f"<td>{_e(q['detail'])}</td></tr>"
        for q in reqs
    )
    return (
        "<h3>Coverage requirements</h3><table><tr><th>requirement</th><th>value</th><th>verdict</th>"
        "<th>detail</th></tr>" + rows + "</table>"
    )


# --------------------------------------------------------------------------- counterexamples


def _cx_id(prop: str) -> str:
    """The anchor of a property's counterexample on its entry's page.

    >>> _cx_id("leader_in_isr"), _cx_id("a b<")
    ('cx-leader_in_isr', 'cx-a_b_')
    """
    return "cx-" + re.sub(r"[^A-Za-z0-9_-]", "_", prop)


def _violation(
    v: dict[str, Any],
    uid: str = "v",
    expected: bool = False,
    anchor: bool = True,
    layout: dict[str, Any] | None = None,
    run_dir: str | None = None,
) -> str:
    """One counterexample, collapsed (``<details>``: opened on demand), marked when the entry
    expected it; ``anchor``: carries its property's :func:`_cx_id` (the first of a property's
    counterexamples). The step table's columns and the lifelines' order are the model's
    (``layout``, :mod:`explorer.report.layout`)."""
    loop = v.get("loop_start")
    trace = v["trace"]
    actors = sorted(
        {actor_of_change(c, layout)[0] for st in trace for c in st["changes"]},
        key=lambda a: actor_key(a, layout),
    )
    split = any(a != "other" for a in actors)
    cols = actors if split else ["what changed"]
    views = v.get("state_views") or []  # each step's full state (explorer.state_view), when recorded
    rows = []
    for st in trace:
        cls = ' class="loop"' if loop is not None and st["index"] > loop else ""
        if loop is not None and st["index"] == loop:
            cls = ' class="loopstart"'  # the last step of the prefix: the state the loop returns to
        cells = []
        for a in cols:
            mine = [(c, *actor_of_change(c, layout)) for c in st["changes"]]
            items = "".join(
                f"<li>{_e(named(rest if split else c, layout))}</li>"
                for c, who, rest in mine
                if not split or who == a
            )
            cells.append(f"<td><ul class=changes>{items}</ul></td>")
        rows.append(
            f"<tr{cls}><td class=num>{_e(st['index'])}</td><td>{_e(st['action'] or 'initial state')}</td>"
            + "".join(cells)
            + (_full_state(views[st["index"]]) if st["index"] < len(views) else "")
            + f"<td class='mono muted'>{_e(st['fingerprint'])}</td></tr>"
        )
    loop_note = (
        f"<p>Lasso: steps 0 to {_e(loop)} are the prefix; the highlighted steps after step {_e(loop)} are "
        f"the loop, which returns to the state of step {_e(loop)} (outlined) and repeats forever.</p>"
        if loop is not None
        else ""
    )
    heads = "".join(f"<th>{_e(a if a != 'other' else 'other changes')}</th>" for a in cols)
    heads += "<th>full state</th>" if views else ""
    body = (
        f"<table><tr><th>step</th><th>action</th>{heads}<th>fingerprint</th></tr>"
        + "".join(rows)
        + "</table>"
        if trace
        else f"<p>{_e(v['message'])}</p>"
    )
    seq = v.get("sequence")
    seq_html = (
        f"<details><summary>Sequence diagram ({len(seq)} steps)</summary>{sequence_svg(seq, uid, layout)}</details>"
        if seq
        else ""
    )
    tag = " <span class=expected>expected</span>" if expected else ""
    ident = f" id={_cx_id(v['property'])}" if anchor else ""
    cls = "expected" if expected else "violated"
    return (
        f"<details class=counterexample{ident}><summary><h4 class={cls}>{_e(v['property'])} ({_e(v['kind'])}): "
        f"{_e(v['length'])} steps{tag}</h4></summary>"
        f"<p>{_e(v['doc'])}</p>{_why(v.get('explanation'))}{commands_html(v, run_dir)}{loop_note}{seq_html}{body}"
        "</details>"
    )


def _why(lines: Any) -> str:
    """A violation's explanation (:mod:`explorer.explain`), escaped, one line each.

    >>> _why(["node 1 holds t0, its set (2,) <not> it"])
    '<p class=why><b>Why:</b> node 1 holds t0, its set (2,) &lt;not&gt; it</p>'
    """
    if not lines or not isinstance(lines, list):
        return ""
    return "<p class=why><b>Why:</b> " + "<br>".join(_e(line) for line in lines) + "</p>"


def _full_state(view: Any) -> str:
    """One step's "full state" cell: the state's tree (:mod:`explorer.state_view`), folded, every
    label and value escaped.

    >>> _full_state(["state", None, [["/owner", "<none>", []]]])
    '<td><details><summary>full state</summary><details class="state"><summary>state</summary><ul><li><b>/owner</b>: &lt;none&gt;</li></ul></details></details></td>'
    """
    try:
        tree = as_node(view)
    except (TypeError, ValueError):  # not a tree: a report.json edited by hand
        return "<td></td>"
    return f"<td><details><summary>full state</summary>{state_html(tree, open_depth=0)}</details></td>"


# --------------------------------------------------------------------------- the page


def _expected_note(violated: int, expected: int) -> str:
    """How many of the violations the suite expected (entries with ``expect = "violation"``).

    >>> _expected_note(21, 21), _expected_note(3, 1), _expected_note(0, 0)
    (' (all 21 expected)', ' (1 of them expected, 2 not)', '')
    """
    if not violated or not expected:
        return ""
    if expected == violated:
        return f" (all {violated} expected)"
    return f" ({expected} of them expected, {violated - expected} not)"


def _suite_layout(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The state machines' titles and positions over the suite: each machine's from the first
    entry whose model lays it out."""
    machines: dict[str, Any] = {}
    for en in entries:
        for m, spec in ((en.get("layout") or {}).get("state_machines") or {}).items():
            machines.setdefault(m, spec)
    return {"state_machines": machines}


def _suite(summary: dict[str, Any], layout: dict[str, Any] | None = None) -> str:
    if not summary:
        return ""
    sm = summary.get("state_machines", {})
    figs = [
        f"{_e(m)} state machine: <b>{_e(x['covered'])}/{_e(x['edges'])}</b> transitions taken"
        for m, x in sm.items()
    ]
    ak = summary.get("action_kinds", {})
    pr = summary.get("properties", {})
    items = [
        f"total time <b>{summary.get('wall_seconds', 0):.1f} s</b> "
        f"(searches {summary.get('search_seconds', 0):.1f} s)",
        f"{summary.get('distinct_states', 0):,} distinct states explored",
        *figs,
        f"action kinds enabled: <b>{_e(ak.get('enabled', 0))}/{_e(ak.get('declared', 0))}</b>"
        + (
            " (never enabled: " + ", ".join(f"<code>{_e(k)}</code>" for k in ak["never_enabled"]) + ")"
            if ak.get("never_enabled")
            else ""
        ),
        f"properties: {_e(pr.get('held', 0))} held, {_e(pr.get('violated', 0))} violated"
        + _e(_expected_note(pr.get("violated", 0), pr.get("expected_violations", 0)))
        + f", {_e(pr.get('witnessed', 0))} witnessed, {_e(pr.get('vacuous', 0))} vacuous",
    ]
    variants = summary.get("variants", {})
    vrows = "".join(
        f"<tr><td><code>{_e(k)}</code></td><td>{_e(', '.join(map(str, v)))}</td></tr>"
        for k, v in variants.items()
    )
    diagrams = ""
    if sm:
        labels = {"state_machines": {m: x["hits"] for m, x in sm.items()}}
        diagrams = "<h3>State machines over the whole suite</h3>" + _sm_figures(
            labels, "suite", layout, with_invalid=False
        )
    return (
        "<h2>Suite coverage</h2><ul class=figs>"
        + "".join(f"<li>{x}</li>" for x in items)
        + "</ul>"
        + diagrams
        + (
            "<h3>Variants exercised</h3><table><tr><th>variant key</th><th>values run</th></tr>"
            + vrows
            + "</table>"
            if vrows
            else ""
        )
    )


def _reduction(en: dict[str, Any]) -> str:
    """The entry's state-space reduction and, when the full count is known, its factor.

    >>> _reduction({"reduce": "symmetry", "full_states": 300, "reduction_factor": 2.0,
    ...             "result": {"distinct_states": 150}})
    '<p>reduction: <code>symmetry</code>, factor 2.00 (300 states in the full search, 150 reduced)</p>'
    >>> _reduction({"reduce": "none", "result": {}})
    ''
    """
    red = en.get("reduce", "none")
    if red == "none":
        return ""
    factor = en.get("reduction_factor")
    if factor is None:
        return f"<p>reduction: <code>{_e(red)}</code> (factor not known: no full count given)</p>"
    return (
        f"<p>reduction: <code>{_e(red)}</code>, factor {factor:.2f} ({en['full_states']:,} states in the "
        f"full search, {en['result']['distinct_states']:,} reduced)</p>"
    )


_PROJECT_ROOT = Path(__file__).resolve().parents[2]


def provenance(suite_path: str, options: dict[str, Any]) -> dict[str, Any]:
    """What produced a release run: the commit and whether the tree was dirty (None outside a
    git checkout), the kafka-mc version, Python, the platform, the suite (relative to the
    project when inside it), the options and the start time.

    >>> p = provenance(str(_PROJECT_ROOT / "configs" / "release.toml"), {"entries": None})
    >>> p["suite"], sorted(p)[:4]
    ('configs/release.toml', ['commit', 'dirty', 'kafka_mc_version', 'options'])
    """
    import importlib.metadata
    import platform
    import subprocess

    def git(*args: str) -> str | None:
        try:
            r = subprocess.run(
                ["git", *args], cwd=_PROJECT_ROOT, capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout if r.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    try:
        version = importlib.metadata.version("kafka-mc")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    suite = Path(suite_path).resolve()
    try:
        shown = suite.relative_to(_PROJECT_ROOT).as_posix()
    except ValueError:
        shown = str(suite)
    return {
        "commit": commit.strip() if commit else None,
        "dirty": None if status is None else bool(status.strip()),
        "kafka_mc_version": version,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "suite": shown,
        "options": options,
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def _provenance(p: dict[str, Any] | None) -> str:
    """One line: the commit (and whether the tree was dirty), version, Python, platform,
    start time and the options the run was given.

    >>> _provenance({"commit": "0123456789abcdef", "dirty": True, "kafka_mc_version": "0.1.0",
    ...              "python": "3.11.7", "platform": "Linux", "started": "t", "options": {"quiet": True}})
    '<p class=muted>commit <code>0123456789ab</code> (uncommitted changes) · kafka-mc 0.1.0 · Python 3.11.7 · Linux · started t · options quiet=True</p>'
    """
    if not p:
        return ""
    commit = p.get("commit")
    where = "not a git checkout" if not commit else f"commit <code>{_e(str(commit)[:12])}</code>"
    if p.get("dirty"):
        where += " (uncommitted changes)"
    opts = ", ".join(f"{k}={v}" for k, v in (p.get("options") or {}).items() if v not in (None, False))
    return (
        f"<p class=muted>{where} · kafka-mc {_e(str(p.get('kafka_mc_version')))} · Python "
        f"{_e(str(p.get('python')))} · {_e(str(p.get('platform')))} · started {_e(str(p.get('started')))}"
        + (f" · options {_e(opts)}" if opts else "")
        + "</p>"
    )


#: a property's status in one entry, as the suite table shows it (a glyph, CSS class); its
#: name is the cell's title, and the legend under each table says what each glyph means
_CELL = {
    "held": ("✓", "held"),
    "witnessed": ("✓", "witnessed"),
    "violated": ("✗", "violated"),
    "unreached": ("–", "unreached"),
    "unknown": ("?", "muted"),
    "unchecked": ("·", "muted"),
}
#: a property's kind in the suite table's narrow kind column (the full word is its title)
_KIND = {"always": "A", "transition": "T", "reachable": "R", "eventually": "E"}
_LEGEND = (
    "✓ held (a witness: reached), ✗ violated (amber: expected), – witness never reached, ? not decided, "
    "· not checked, v vacuous (never applied); kinds: A always, T transition, R reachable, E eventually"
)


def property_matrix(entries: list[dict[str, Any]], pages: list[str] | None = None) -> str:
    """One property table for the suite, per model: a row per property, a narrow column per
    entry that checks it (numbered; the numbers link to the entries' pages and are listed under
    the table), a glyph per cell with its status as the cell's title; a violation the entry
    expected reads ``expected``, one that ran vacuously carries a ``v``, and a violation links to
    its counterexample. The header row stays in view while the table scrolls, and the table
    stays within 1,400 px for the whole suite (the browser test measures it).

    >>> e = {"name": "a", "violates": ["q"], "result": {"model": "m", "engine": "bfs", "properties": {
    ...     "p": {"kind": "always", "status": "held"}, "q": {"kind": "always", "status": "violated"}}}}
    >>> html = property_matrix([e])
    >>> '<td class=held title="held">✓</td>' in html
    True
    >>> '<td class=expected title="expected"><a href="entries/a.html#cx-q">✗</a></td>' in html
    True
    """
    pages = entry_pages(entries) if pages is None else pages
    by_model: dict[str, list[int]] = {}
    for i, en in enumerate(entries):
        if en["result"].get("engine") != "symbolic":
            by_model.setdefault(en["result"]["model"], []).append(i)
    out = []
    for model, idx in by_model.items():
        names: dict[str, str] = {}
        for i in idx:
            for name, p in entries[i]["result"]["properties"].items():
                names.setdefault(name, p["kind"])
        heads = "".join(
            f'<th class=col title="{_e(entries[i]["name"])}"><a href="{_e(pages[i])}">{n}</a></th>'
            for n, i in enumerate(idx, start=1)
        )
        rows = []
        for name, kind in names.items():
            cells = []
            for i in idx:
                p = entries[i]["result"]["properties"].get(name)
                if p is None:
                    cells.append('<td class=muted title="not checked here"> </td>')
                    continue
                text, cls = _CELL.get(p["status"], ("?", "muted"))
                title = str(p["status"])
                if p["status"] == "violated" and name in entries[i].get("violates", []):
                    cls = title = "expected"
                vac = "<sup>v</sup>" if p.get("vacuous") else ""
                if p["status"] == "violated":
                    text = f'<a href="{_e(pages[i])}#{_cx_id(name)}">{text}</a>'
                title += " (vacuous)" if p.get("vacuous") else ""
                cells.append(f'<td class={cls} title="{_e(title)}">{text}{vac}</td>')
            rows.append(
                f"<tr><td class=prop><code>{_e(name)}</code></td>"
                f'<td title="{_e(kind)}">{_e(_KIND.get(kind, kind))}</td>{"".join(cells)}</tr>'
            )
        legend = "; ".join(
            f'{n} <a href="{_e(pages[i])}">{_e(entries[i]["name"])}</a>' for n, i in enumerate(idx, start=1)
        )
        out.append(
            f"<h3>{_e(model)}: every property in every entry</h3>"
            f"<table class=matrix><tr><th>property</th><th>kind</th>{heads}</tr>{''.join(rows)}</table>"
            f"<p class=muted>{_e(_LEGEND)}</p><p class=muted>entries: {legend}</p>"
        )
    return "<h2>Properties over the suite</h2>" + "".join(out) if out else ""


def entry_pages(entries: list[dict[str, Any]]) -> list[str]:
    """Each entry's page, relative to the run folder: ``entries/<name>.html``, the name kept
    to letters, digits, ``.``, ``_`` and ``-`` (others become ``_``), a suffix ``-2``, ``-3``, ...
    where two names would share a file.

    >>> entry_pages([{"name": "light-small"}, {"name": "a b"}, {"name": "a?b"}, {"name": ".."}])
    ['entries/light-small.html', 'entries/a_b.html', 'entries/a_b-2.html', 'entries/entry.html']
    """
    out: list[str] = []
    for en in entries:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", str(en["name"])).strip("._") or "entry"
        name, n = slug, 1
        while f"entries/{name}.html" in out:
            n += 1
            name = f"{slug}-{n}"
        out.append(f"entries/{name}.html")
    return out


def _head(title: str) -> str:
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
    )


def _failures(entries: list[dict[str, Any]], pages: list[str]) -> str:
    """What failed and why: one line per entry whose verdict is not a pass (nothing when all
    passed)."""
    bad = [(en, pg) for en, pg in zip(entries, pages, strict=True) if en["status"] != "pass"]
    if not bad:
        return "<p class=pass>Every entry met its expectation and its coverage requirements.</p>"
    items = "".join(
        f'<li><a href="{_e(pg)}">{_e(en["name"])}</a>: <span class="{_e(en["status"])}">'
        f"{_e(en['status'].upper())}</span> {_e(en['message'])}</li>"
        for en, pg in bad
    )
    return f"<h2>What did not pass</h2><ul>{items}</ul>"


def render_html(doc: dict[str, Any]) -> str:
    """The run's front page (``index.html``): verdict, what did not pass and why, what changed
    since the previous run, the suite's coverage, one property table for the suite and the
    mutation score. Each entry's details are on its own page (:func:`render_entry_html`,
    linked from its name), so the page stays small however large the suite."""
    entries = doc.get("entries", [])
    pages = entry_pages(entries)
    passed = sum(1 for e in entries if e["status"] == "pass")
    parts = [
        _head(f"kafka-mc release {doc.get('run_id', '')}"),
        f"<h1>kafka-mc release report</h1><p class=muted>run {_e(doc.get('run_id', ''))} · suite "
        f"<code>{_e(doc.get('suite', ''))}</code> · {passed}/{len(entries)} configurations passed</p>",
        _provenance(doc.get("provenance")),
        _failures(entries, pages),
        changes_html(doc["changes"]) if doc.get("changes") else "",
        "<h2>Summary</h2>",
        _summary(entries, pages),
        _suite(doc.get("summary", {}), _suite_layout(entries)),
        property_matrix(entries, pages),
        _mutation(doc.get("mutation")),
        "</body></html>",
    ]
    return "\n".join(parts)


def report_pages(doc: dict[str, Any]) -> dict[str, str]:
    """Every page of a run, by path relative to the run folder: ``index.html`` and one page
    per entry.

    >>> sorted(report_pages({"run_id": "r1", "suite": "s.toml", "entries": []}))
    ['index.html']
    """
    entries = doc.get("entries", [])
    pages = {pg: render_entry_html(doc, k) for k, pg in enumerate(entry_pages(entries))}
    pages["index.html"] = render_html(doc)
    return pages


def render_entry_html(doc: dict[str, Any], k: int) -> str:
    """The page of the run's ``k``-th entry: its verdict, configuration, properties, coverage,
    diagrams and every counterexample (collapsed), with a link back to the run's page."""
    en = doc["entries"][k]
    r = en["result"]
    parts = [
        _head(f"{en['name']} · kafka-mc release {doc.get('run_id', '')}"),
        f'<p class=muted><a href="../index.html">run {_e(doc.get("run_id", ""))}</a> · suite '
        f"<code>{_e(doc.get('suite', ''))}</code></p>",
        f'<h2 id="{_e(en["name"])}">{_e(en["name"])}</h2>',
        f'<p><span class="{_e(en["status"])}">{_e(en["status"].upper())}</span>: {_e(en["message"])}</p>',
    ]
    cfg = ", ".join(f"{k2} = {v}" for k2, v in r["config"].items())
    parts.append(
        f"<p class=muted>model <code>{_e(r['model'])}</code>"
        + (f"; configuration: <code>{_e(cfg)}</code>" if cfg and not en.get("config_toml") else "")
        + "</p>"
        + config_html(en)
    )
    if en.get("variants"):
        parts.append(
            "<p>variants: "
            + ", ".join(f"<code>{_e(k2)} = {_e(json.dumps(v))}</code>" for k2, v in en["variants"].items())
            + "</p>"
        )
    if r["engine"] == "symbolic":
        parts.append(
            f"<p>{len(r['properties'])} proof obligations, {r['generated_states']:,} paths, "
            f"{r['seconds']:.2f} s</p>"
        )
    else:
        parts.append(
            f"<p>{r['distinct_states']:,} distinct states, {r['generated_states']:,} generated, depth "
            f"{_e(r['max_depth'])}, {r['seconds']:.2f} s, {r['states_per_second']:,.0f} states/s</p>"
        )
    parts.append(_reduction(en))
    parts.append(_requirements(en.get("requirements", [])))
    parts.append(f"<h3>Properties ({len(r['properties'])})</h3>" + _properties(r, en.get("violates", [])))
    if r["engine"] != "symbolic" and r.get("levels"):
        parts.append("<h3>New states per level</h3>" + level_chart_svg(r["levels"]))
    cov = r.get("coverage", {})
    acts = cov.get("actions", {})
    declared = cov.get("declared_action_kinds")
    enabled = sum(1 for v in acts.values() if v["enabled"])
    frac = f"{enabled}/{len(declared)} kinds enabled" if declared is not None else f"{enabled} kinds"
    if r["engine"] != "symbolic":
        parts.append(f"<details><summary>Action coverage ({frac})</summary>" + _coverage(r) + "</details>")
    labels = cov.get("labels")
    if labels:
        parts.append(_labels(labels, f"e{k}", en.get("layout")))
    if r["violations"]:
        report_dir = ((doc.get("provenance") or {}).get("options") or {}).get("report_dir")
        run_dir = f"{report_dir}/{doc.get('run_id')}" if isinstance(report_dir, str) else None
        parts.append("<h3>Counterexamples</h3>")
        wanted = set(en.get("violates", []))
        seen: set[str] = set()
        for i, v in enumerate(r["violations"]):
            first = v["property"] not in seen
            parts.append(
                _violation(v, f"e{k}v{i}", v["property"] in wanted, first, en.get("layout"), run_dir)
            )
            seen.add(v["property"])
    for note in r.get("notes", []):
        parts.append(f"<p class=muted>note: {_e(note)}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
