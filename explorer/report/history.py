"""The history of release runs: what changed since the previous run, and ``reports/index.html``.

Every ``kafka-mc release`` writes ``<report-dir>/<run-id>/report.json``. This module reads
those runs back: :func:`changes` compares a run with an earlier one (per entry: verdict,
distinct states, time; violations that appeared or vanished; state-machine edges and action
kinds covered or lost), :func:`changes_html` is the "Changed since" section of a run's page,
and :func:`index_html` is the report folder's front page: every run kept, with its commit,
date, verdict and totals, and trend charts (distinct states, time, coverage, mutation score),
as inline SVG with no external resource, so the folder can be copied to any static host.

An older run's ``report.json`` is a file someone else may have written (the folder is
published): :func:`scan` reads each bounded, without following a link, and keeps only those
that validate (:func:`report_problem`); the others are listed as unreadable and never compared
with. Every value the pages show is escaped, a count that is no number reads "unreadable", and
a run id is a link only in the form kafka-mc writes (:func:`run_link`).

>>> a = {"run_id": "1", "summary": {}, "entries": [{"name": "x", "status": "pass",
...      "result": {"distinct_states": 10, "seconds": 1.0, "violations": []}}]}
>>> b = {"run_id": "2", "summary": {}, "entries": [{"name": "x", "status": "fail",
...      "result": {"distinct_states": 12, "seconds": 1.5, "violations": [{"property": "p"}]}}]}
>>> ch = changes(b, a)
>>> ch["entries"][0]["states"], ch["new_violations"]
([10, 12], [['x', 'p']])
"""

from __future__ import annotations

import errno
import html
import math
import os
import re
import stat
from pathlib import Path
from typing import Any
from urllib.parse import quote

from explorer.datafiles import MAX_BYTES, DataFileError, loads_json

__all__ = [
    "RUN_ID",
    "changes",
    "changes_html",
    "index_html",
    "is_subset",
    "like_with_like",
    "load_run",
    "read_run",
    "report_problem",
    "run_key",
    "run_link",
    "runs",
    "scan",
    "shown_name",
]

SCHEMA = "kafka-mc/release-report/2"

#: a run id as ``kafka-mc release`` makes it (``explorer.release._run_dir``): the second it
#: started, ``%Y%m%d-%H%M%S``, and a suffix ``-2`` ... ``-9999`` for runs started in the same second
RUN_ID = re.compile(r"[0-9]{8}-[0-9]{6}(-[1-9][0-9]{0,3})?")

#: the largest history ``report.json`` read (the release suite's is a few MB)
MAX_REPORT_BYTES = MAX_BYTES

#: an entry's verdicts (``explorer.release.run_release``)
STATUSES = ("pass", "fail", "budget", "not-run")

#: counts beyond this are no count kafka-mc wrote (and would overflow a chart's float)
_BIG = 2**63

_UNREADABLE = "<span class=muted>unreadable</span>"


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _is_count(v: Any) -> bool:
    """A whole number >= 0 kafka-mc may have written (a bool is none).

    >>> _is_count(3), _is_count(True), _is_count(-1), _is_count(2.0), _is_count(10**30)
    (True, False, False, False, False)
    """
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < _BIG


def _is_real(v: Any) -> bool:
    """A finite number (a bool is none).

    >>> _is_real(1.5), _is_real(2), _is_real(float("nan")), _is_real(False), _is_real("1")
    (True, True, False, False, False)
    """
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return -_BIG < v < _BIG
    return isinstance(v, float) and math.isfinite(v)


def _num_text(v: Any, fmt: str = "{:,}") -> str:
    """A count or a time as the pages show it: ``v`` formatted when it is a number, else the
    word unreadable (a value of any other type never reaches the page).

    >>> _num_text(12345), _num_text(1.25, "{:.1f} s"), _num_text("<b>1</b>")
    ('12,345', '1.2 s', '<span class=muted>unreadable</span>')
    """
    return _e(fmt.format(v)) if _is_real(v) else _UNREADABLE


def shown_name(name: str) -> str:
    """A folder name for a one-line message: as is when plain, else its ``repr`` (no newline or
    terminal control reaches the message).

    >>> shown_name("20260101-000000"), shown_name("<b> x")
    ('20260101-000000', "'<b> x'")
    """
    return name if re.fullmatch(r"[A-Za-z0-9._+-]{1,100}", name) else repr(name[:100])


def run_link(run_id: Any) -> str:
    """A run id on the history page: a link to its run's page when it has the form kafka-mc
    writes (:data:`RUN_ID`), URL-quoted; else the id as text, never a link.

    >>> run_link("20260101-120000-2")
    '<a href="20260101-120000-2/index.html">20260101-120000-2</a>'
    >>> run_link("javascript:alert(1)")
    'javascript:alert(1)'
    """
    if isinstance(run_id, str) and RUN_ID.fullmatch(run_id):
        return f'<a href="{_e(quote(run_id))}/index.html">{_e(run_id)}</a>'
    return _e(run_id)


#: what :func:`report_problem` checks of a report: a dict is an object whose keys are optional
#: (``!`` marks a required one), ``("list", spec)`` a list of items, ``("map", spec)`` an object
#: of any keys whose values match ``spec``, a string one of the kinds in :data:`_KINDS`
_ENTRY: dict[str, Any] = {
    "!name": "text",
    "!status": "status",
    "message": "text",
    "result": {
        "distinct_states": "count?",
        "seconds": "seconds?",
        "violations": ("list", {"!property": "text"}),
    },
}
_REPORT: dict[str, Any] = {
    "!entries": ("list", _ENTRY),
    "interrupted": "flag",
    "suite": "text",
    "provenance": {"commit": "text?", "dirty": "flag?", "started": "text?"},
    "summary": {
        "entries": "count",
        "passed": "count",
        "distinct_states": "count",
        "wall_seconds": "seconds",
        "search_seconds": "seconds",
        "state_machines": ("map", {"covered": "count", "edges": "count", "hits": ("map", "count")}),
        "action_kinds": {"enabled": "count", "declared": "count", "never_enabled": ("list", "text")},
    },
    "mutation": {"score": {"score": "fraction?"}},
    "scope": {"subset": "flag", "entries": ("list", "text"), "suite_entries": "count"},
}
_KINDS: dict[str, tuple[str, Any]] = {
    "text": ("a string", lambda v: isinstance(v, str)),
    "count": ("a whole number >= 0", _is_count),
    "seconds": ("a number of seconds >= 0", lambda v: _is_real(v) and v >= 0),
    "fraction": ("a number from 0 to 1", lambda v: _is_real(v) and 0 <= v <= 1),
    "flag": ("true or false", lambda v: isinstance(v, bool)),
    "status": (f"one of {', '.join(STATUSES)}", lambda v: v in STATUSES),
}


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_>-]{1,60}", k) else repr(k[:60])


def _problem(value: Any, spec: Any, path: str) -> str | None:
    """The first place where ``value`` does not match ``spec`` (see :data:`_REPORT`), or None."""
    if isinstance(spec, str):
        optional = spec.endswith("?")
        what, ok = _KINDS[spec.rstrip("?")]
        if (optional and value is None) or ok(value):
            return None
        return f"{path}: expected {what}{' or null' if optional else ''}, got {value!r:.40}"
    if isinstance(spec, tuple):
        form, item = spec
        if form == "list":
            if not isinstance(value, list):
                return f"{path}: expected a list, got {value!r:.40}"
            items: Any = ((f"{path}[{i}]", v) for i, v in enumerate(value))
        else:
            if not isinstance(value, dict):
                return f"{path}: expected an object, got {value!r:.40}"
            items = ((f"{path}.{_key(str(k))}", v) for k, v in value.items())
        return next((p for where, v in items if (p := _problem(v, item, where)) is not None), None)
    if not isinstance(value, dict):
        return f"{path}: expected an object, got {value!r:.40}"
    for key, sub in spec.items():
        name = key.lstrip("!")
        where = f"{path}.{name}" if path else name
        if name not in value:
            if key.startswith("!"):
                return f"{where}: missing"
            continue
        p = _problem(value[name], sub, where)
        if p is not None:
            return p
    return None


def report_problem(doc: Any) -> str | None:
    """What is wrong with a release report (``report.json``) for the history page and the
    comparison to use it: the first field whose value is off, named, in one line; None when it
    validates. The fields checked are those the history and "Changed since" read; strings stay
    data (the pages escape them), counts must be whole numbers (a bool is none), a run id must
    have the form kafka-mc writes (:data:`RUN_ID`).

    >>> report_problem({"schema": SCHEMA, "run_id": "20260101-120000", "entries": []}) is None
    True
    >>> report_problem({"schema": SCHEMA, "run_id": "x<b>", "entries": []})
    "run_id: expected a run id such as 20260101-120000 or 20260101-120000-2, got 'x<b>'"
    >>> report_problem({"schema": SCHEMA, "run_id": "20260101-120000", "entries": [],
    ...                 "summary": {"passed": True}})
    'summary.passed: expected a whole number >= 0, got True'
    """
    if not isinstance(doc, dict):
        return f"expected an object, got {type(doc).__name__}"
    if doc.get("schema") != SCHEMA:
        return f"schema: expected {SCHEMA!r}, got {doc.get('schema')!r:.40}"
    rid = doc.get("run_id")
    if not isinstance(rid, str) or not RUN_ID.fullmatch(rid):
        return f"run_id: expected a run id such as 20260101-120000 or 20260101-120000-2, got {rid!r:.40}"
    return _problem(doc, _REPORT, "")


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


def _report_bytes(f: Path) -> bytes:
    """The bytes of a ``report.json``, opened without following a link or waiting on a pipe, at
    most :data:`MAX_REPORT_BYTES`; DataFileError (one line) otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(f, flags)
    except FileNotFoundError:
        raise DataFileError("no report.json") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise DataFileError("report.json is a symbolic link") from None
        raise DataFileError(f"report.json cannot be read ({e.strerror or type(e).__name__})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise DataFileError("report.json is not a regular file")
        try:
            data = fh.read(MAX_REPORT_BYTES + 1)
        except OSError as e:
            raise DataFileError(f"report.json cannot be read ({e.strerror or type(e).__name__})") from None
    if len(data) > MAX_REPORT_BYTES:
        raise DataFileError(f"report.json: larger than {MAX_REPORT_BYTES:,} bytes")
    return data


def load_run(path: Path) -> dict[str, Any]:
    """The ``report.json`` of a run folder (or the file itself) when it validates
    (:func:`report_problem`); DataFileError in one line saying why not (missing, a link, too
    large, too deep, not JSON, a field that is off).

    >>> load_run(Path("/nonexistent"))
    Traceback (most recent call last):
    ...
    explorer.datafiles.DataFileError: no report.json
    """
    f = path / "report.json" if path.is_dir() else path
    doc = loads_json(_report_bytes(f), "report.json")
    problem = report_problem(doc)
    if problem is not None:
        raise DataFileError(f"report.json: {problem}")
    return doc


def read_run(path: Path) -> dict[str, Any] | None:
    """The ``report.json`` of a run folder (or the file itself), or None when it is missing,
    unreadable or not a valid release report (:func:`load_run` says why)."""
    try:
        return load_run(path)
    except DataFileError:
        return None


def scan(report_dir: str | Path) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The run folders kept under ``report_dir``: the reports that validate and belong to their
    folder (the run id is the folder's name), oldest first, and ``(folder name, why)`` for every
    other folder, which the history lists as unreadable and a release never compares with.
    Hidden folders, ``latest`` and links are not run folders.

    >>> scan("/nonexistent")
    ([], [])
    """
    root = Path(report_dir)
    if not root.is_dir():
        return [], []
    good: list[dict[str, Any]] = []
    bad: list[tuple[str, str]] = []
    for d in sorted(root.iterdir()):
        if d.name.startswith(".") or d.name == "latest" or d.is_symlink() or not d.is_dir():
            continue
        try:
            doc = load_run(d)
        except DataFileError as e:
            bad.append((d.name, str(e)))
            continue
        if doc["run_id"] != d.name:
            bad.append((d.name, f"report.json: run_id {doc['run_id']} is not its folder's name"))
            continue
        good.append(doc)
    return sorted(good, key=lambda doc: run_key(doc["run_id"])), bad


def runs(report_dir: str | Path) -> list[dict[str, Any]]:
    """Every run kept under ``report_dir`` whose report validates (oldest first), each its
    report document (:func:`scan`)."""
    return scan(report_dir)[0]


def _edges(summary: dict[str, Any]) -> set[str]:
    return {
        f"{m}/{edge}"
        for m, x in (summary.get("state_machines") or {}).items()
        for edge, hits in (x.get("hits") or {}).items()
        if hits
    }


def is_subset(doc: dict[str, Any]) -> bool:
    """Whether a release report is of a subset run (``release --entries``): its ``scope``
    says so (a report older than the field is a run of its whole suite).

    >>> is_subset({"scope": {"subset": True}}), is_subset({})
    (True, False)
    """
    sel = doc.get("scope")
    return isinstance(sel, dict) and sel.get("subset") is True


def _ran(doc: dict[str, Any]) -> set[str]:
    """The entries a run ran (an entry it marked not-run is not among them)."""
    return {str(en.get("name")) for en in _entries(doc) if en.get("status") != "not-run"}


def like_with_like(kept: list[dict[str, Any]], names: list[str]) -> dict[str, Any] | None:
    """The run a run of the entries ``names`` is compared with, among ``kept`` (oldest first):
    the newest that ran every one of them (a subset run is compared with the same entries of
    the newest run that had them, never with a run that lacked some), else the newest run of
    the whole suite, else None.

    >>> full = {"run_id": "1", "entries": [{"name": "a", "status": "pass"}, {"name": "b", "status": "pass"}]}
    >>> only_b = {"run_id": "2", "scope": {"subset": True}, "entries": [{"name": "b", "status": "pass"}]}
    >>> like_with_like([full, only_b], ["a"])["run_id"], like_with_like([full, only_b], ["b"])["run_id"]
    ('1', '2')
    """
    for doc in reversed(kept):
        if set(names) <= _ran(doc):
            return doc
    return next((doc for doc in reversed(kept) if not is_subset(doc)), None)


def changes(cur: dict[str, Any], prev: dict[str, Any]) -> dict[str, Any]:
    """What changed from run ``prev`` to run ``cur``: per entry ``[before, after]`` of status,
    distinct states and seconds (None where an entry is new or gone); violations
    (``[entry, property]``) new and vanished; state-machine edges and action kinds gained and
    lost; totals.

    Like is compared with like: when either run is a subset run (:func:`is_subset`) only the
    entries ``cur`` ran are compared (an entry ``cur`` did not run is never "gone", its
    violations never "vanished"), the totals are summed over those entries, and coverage (a
    whole suite's) is compared only between two runs of the whole suite (``coverage_compared``).
    """
    partial = is_subset(cur) or is_subset(prev)
    after = {en["name"]: en for en in cur.get("entries", [])}
    before = {en["name"]: en for en in prev.get("entries", []) if not partial or en["name"] in after}
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
            if en["name"] in before or en["name"] in after
            for v in en.get("result", {}).get("violations", [])
        }

    vb, va = violations(prev), violations(cur)
    sb, sa = prev.get("summary", {}), cur.get("summary", {})
    if partial:  # totals over the entries compared; coverage left out (it is the whole suite's)
        sb, sa = _totals(before.values()), _totals(after.values())
    kinds_b = set((sb.get("action_kinds") or {}).get("never_enabled", []))
    kinds_a = set((sa.get("action_kinds") or {}).get("never_enabled", []))
    return {
        "since": prev.get("run_id"),
        "since_commit": (prev.get("provenance") or {}).get("commit"),
        "subset": partial,
        "coverage_compared": not partial,
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


def _totals(entries: Any) -> dict[str, Any]:
    """A summary's totals (distinct states, wall time) over some entries of a run (their search
    time stands for the wall time); no coverage."""
    ents = [en for en in entries if isinstance(en, dict)]
    states = [_obj(en.get("result")).get("distinct_states") for en in ents]
    secs = [_obj(en.get("result")).get("seconds") for en in ents]
    return {
        "distinct_states": sum(n for n in states if _is_count(n)),
        "wall_seconds": sum(x for x in secs if _is_real(x)),
    }


def _delta(pair: list[Any], fmt: str = "{:,}") -> str:
    """A count or time before and after, as HTML (a value that is no number reads unreadable).

    >>> _delta([10, 12]), _delta([None, 3]), _delta([1, "<i>"])
    ('10 &rarr; 12', 'new: 3', '1 &rarr; <span class=muted>unreadable</span>')
    """
    a, b = pair
    if a is None and b is None:
        return ""
    if a is None:
        return f"new: {_num_text(b, fmt)}"
    if b is None:
        return f"gone (was {_num_text(a, fmt)})"
    if a == b:
        return _num_text(b, fmt)
    return f"{_num_text(a, fmt)} &rarr; {_num_text(b, fmt)}"


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
    over = " (over the entries this run ran; coverage is compared between runs of the whole suite only)"
    head = (
        f"<h2>Changed since run {_e(ch['since'])}{commit}</h2>"
        f"<p>distinct states {_delta(ch['states'])}; {'search' if ch.get('subset') else 'wall'} time "
        f"{_delta(ch['seconds'], '{:.0f} s')}{over if ch.get('subset') else ''}</p>"
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
    """A line chart as inline SVG: one polyline per series over the runs ``xs``; its y-axis
    starts at zero (so a small change looks small), and its title gives the last change in
    percent.

    >>> svg = _chart("states", ["1", "2"], {"states": [12_100_000.0, 12_101_210.0]})
    >>> ">0<" in svg, "+0.01%" in svg
    (True, True)
    """
    w, h, pad = 640, 180, 40
    values = [v for vs in series.values() for v in vs if v is not None]
    if not values or len(xs) < 1:
        return ""
    lo, hi = min(0.0, min(values)), max(values)  # from zero: a 0.01% change stays a flat line
    span = (hi - lo) or 1.0
    step = (w - 2 * pad) / max(len(xs) - 1, 1)
    colours = ["#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#57606a"]
    parts = [
        f'<svg class=trend role=img aria-label="{_e(title)}" width="{w}" height="{h + 20 * len(series)}" '
        f'viewBox="0 0 {w} {h + 20 * len(series)}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{pad}" y="14" font-size="12">{_e(title + _last_change(series))}</text>',
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


def _last_change(series: dict[str, list[float | None]]) -> str:
    """The change between a single series' last two values, in percent ("" otherwise).

    >>> _last_change({"s": [None, 200.0, 150.0]}), _last_change({"s": [1.0]})
    (' (last change -25%)', '')
    """
    if len(series) != 1:
        return ""
    vs = [v for v in next(iter(series.values())) if v is not None]
    if len(vs) < 2 or not vs[-2]:
        return ""
    pct = (vs[-1] - vs[-2]) / vs[-2] * 100
    return f" (last change {pct:+.2g}%)" if abs(pct) >= 1 else f" (last change {pct:+.2f}%)"


def _obj(v: Any) -> dict[str, Any]:
    """``v`` when it is an object, else an empty one (the pages read what a report holds)."""
    return v if isinstance(v, dict) else {}


def _entries(d: dict[str, Any]) -> list[dict[str, Any]]:
    ents = d.get("entries")
    return [en for en in ents if isinstance(en, dict)] if isinstance(ents, list) else []


def _real_or_none(v: Any) -> float | None:
    return v if _is_real(v) else None


def _entries_cell(d: dict[str, Any]) -> str:
    """The history table's "entries" cell: "all N" for a run of the whole suite, else the
    entries the subset run ran (escaped; the first five, then how many more).

    >>> _entries_cell({"entries": [{"name": "a"}, {"name": "b"}]})
    'all 2'
    >>> _entries_cell({"scope": {"subset": True}, "entries": [{"name": "<x>"}]})
    'subset: &lt;x&gt;'
    """
    names = [str(en.get("name")) for en in _entries(d)]
    if not is_subset(d):
        return f"all {len(names)}"
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return "subset: " + _e(", ".join(names[:5])) + more


def _unreadable_html(unreadable: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> str:
    """The run folders the history leaves out, each with why (names and reasons as text)."""
    if not unreadable:
        return ""
    rows = "".join(f"<tr><td><code>{_e(name)}</code></td><td>{_e(why)}</td></tr>" for name, why in unreadable)
    return (
        "<h2>Unreadable run folders</h2><p>Their <code>report.json</code> is missing or does not validate: "
        "they are left out of the history and no release compares with them.</p>"
        f"<table><tr><th>folder</th><th>why</th></tr>{rows}</table>"
    )


def index_html(
    docs: list[dict[str, Any]],
    keep: int = 50,
    unreadable: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (),
) -> str:
    """The report folder's front page: every run (newest first) with its commit, date, verdict
    and totals, trend charts over the last ``keep`` runs, and the ``unreadable`` run folders
    (``(name, why)``, :func:`scan`). Every value read from a report is shown as text: a run id
    links to its run only in kafka-mc's form (:func:`run_link`), a count that is no number reads
    unreadable.

    >>> page = index_html([{"run_id": "<b>", "summary": {"passed": "<i>"}, "entries": []}])
    >>> "<b>" in page, "&lt;b&gt;" in page, "unreadable" in page
    (False, True, True)
    """
    shown = docs[-keep:]
    xs = [str(d.get("run_id")) for d in shown]
    rows = []
    for d in reversed(docs):
        s = _obj(d.get("summary"))
        p = _obj(d.get("provenance"))
        ents = _entries(d)
        failed = sum(1 for en in ents if en.get("status") == "fail")
        verdict = "FAILED" if failed else ("interrupted" if d.get("interrupted") is True else "passed")
        commit = str(p.get("commit") or "")[:10] + (" (dirty)" if p.get("dirty") is True else "")
        score = _obj(_obj(d.get("mutation")).get("score")).get("score")
        rows.append(
            f"<tr><td>{run_link(d.get('run_id'))}</td>"
            f"<td><code>{_e(commit)}</code></td><td>{_e(p.get('started', ''))}</td>"
            f"<td>{_entries_cell(d)}</td>"
            f"<td class={'fail' if failed else 'pass'}>{verdict}</td>"
            f"<td>{_num_text(s.get('passed', 0))}/{_num_text(s.get('entries', len(ents)))}</td>"
            f"<td>{_num_text(s.get('distinct_states', 0))}</td>"
            f"<td>{_num_text(s.get('wall_seconds', 0), '{:.1f} s')}</td>"
            f"<td>{_e(f'{score:.1%}') if isinstance(score, float) and _is_real(score) else ''}</td></tr>"
        )

    def total(key: str) -> list[float | None]:  # a subset run's totals are no point of the suite's trend
        return [None if is_subset(d) else _real_or_none(_obj(d.get("summary")).get(key)) for d in shown]

    def machines_of(d: dict[str, Any]) -> dict[str, Any]:
        return _obj(_obj(d.get("summary")).get("state_machines"))

    def covered(machine: str) -> list[float | None]:
        return [
            None if is_subset(d) else _real_or_none(_obj(machines_of(d).get(machine)).get("covered"))
            for d in shown
        ]

    entry_names = list(dict.fromkeys(str(en.get("name")) for d in shown for en in _entries(d)))
    machines = sorted({str(m) for d in shown for m in machines_of(d)})

    def per_entry(name: str, key: str) -> list[float | None]:
        out: list[float | None] = []
        for d in shown:
            en = next((en for en in _entries(d) if str(en.get("name")) == name), None)
            out.append(None if en is None else _real_or_none(_obj(en.get("result")).get(key)))
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
                    None
                    if is_subset(d)
                    else _real_or_none(_obj(_obj(d.get("summary")).get("action_kinds")).get("enabled"))
                    for d in shown
                ],
            },
        ),
    ]
    scores = [_real_or_none(_obj(_obj(d.get("mutation")).get("score")).get("score")) for d in shown]
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
        ".pass{color:#1a7f37}.fail{color:#d1242f;font-weight:bold}.muted{color:#667085}svg.trend{display:block;margin:1em 0}</style>"
        "</head><body><h1>kafka-mc release history</h1>"
        f"<p>{len(docs)} run{'' if len(docs) == 1 else 's'} kept in this folder"
        + (f" ({len(unreadable)} more unreadable, listed below)" if unreadable else "")
        + "; each run's page is its own folder (copy the folder as is "
        "to any static host). The suite's trends are drawn from its whole runs; a subset run "
        "(<code>release --entries</code>) counts in its entries' own charts only.</p>"
        "<table><tr><th>run</th><th>commit</th><th>started</th><th>entries</th><th>verdict</th>"
        "<th>passed</th><th>distinct states</th><th>wall time</th><th>mutation score</th></tr>"
        + "".join(rows)
        + "</table>"
        + _unreadable_html(unreadable)
        + "<h2>Trends</h2>"
        + "".join(charts)
        + "<h2>Per entry</h2>"
        + per
        + "</body></html>"
    )
