"""The release report's mutation section: the score of a ``kafka-mc mutate`` result given
with ``release --mutation``, its survivors, and the statements of the mutated files its
entries execute.

Example
-------
>>> m = mutation_summary({"score": {"score": 1.0, "killed": 1, "considered": 1}, "entries": [{"name": "e"}],
...                       "mutants": [{"name": "a", "status": "killed"}]})
>>> "100.0% (1 of 1" in _mutation(m)
True
"""

from __future__ import annotations

import html as _html
from typing import Any

__all__ = ["mutation_summary"]


def _e(x: Any) -> str:
    """``x`` as HTML text, quotes escaped too (mutant names and reasons come from a results file)."""
    return _html.escape(str(x), quote=True)


def mutation_summary(doc: dict[str, Any]) -> dict[str, Any]:
    """What the release report shows of a ``kafka-mc mutate`` result: the score and the
    mutants not killed (survived, timeout, crashed).

    >>> s = mutation_summary({"score": {"score": 0.5, "killed": 1, "considered": 2}, "entries": [],
    ...     "mutants": [{"name": "a", "status": "killed"}, {"name": "b", "status": "survived", "doc": "d"}]})
    >>> s["line"], s["survivors"]
    ('50.0% (1 of 2 non-equivalent mutants killed)', [{'name': 'b', 'status': 'survived', 'doc': 'd'}])
    """
    sc = doc.get("score", {})
    pct = "n/a" if sc.get("score") is None else f"{sc['score']:.1%}"
    return {
        "score": sc,
        "line": f"{pct} ({sc.get('killed', 0)} of {sc.get('considered', 0)} non-equivalent mutants killed)",
        "entries": [e["name"] for e in doc.get("entries", [])],
        "survivors": [
            {"name": m["name"], "status": m["status"], "doc": m.get("doc", "")}
            for m in doc.get("mutants", [])
            if m["status"] not in ("killed", "equivalent")
        ],
        "line_coverage": doc.get("line_coverage"),
    }


def _mutation(m: dict[str, Any] | None) -> str:
    if not m:
        return ""
    rows = "".join(
        f"<tr><td><code>{_e(s['name'])}</code></td><td>{_e(s['status'])}</td><td>{_e(s['doc'])}</td></tr>"
        for s in m["survivors"]
    )
    table = (
        f"<table><tr><th>mutant</th><th>status</th><th>what it changes</th></tr>{rows}</table>"
        if rows
        else ""
    )
    return (
        f"<h2>Mutation score</h2><p><b>{_e(m['line'])}</b> against {_e(', '.join(m['entries']))}</p>{table}"
        + _line_coverage(m.get("line_coverage"))
    )


def _ranges(lines: list[int]) -> str:
    """Line numbers as ranges.

    >>> _ranges([3, 4, 5, 9, 11, 12])
    '3-5, 9, 11-12'
    """
    runs: list[list[int]] = []
    for n in sorted(lines):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    out = [str(a) if a == b else f"{a}-{b}" for a, b in runs]
    return ", ".join(out)


def _line_coverage(cov: dict[str, Any] | None) -> str:
    """The statements of the model's mutated files that the mutation run's entries execute: the
    total, and per file (collapsed) the count and the lines of the statements never run."""
    if not cov or not cov.get("statements"):
        return ""
    rows = "".join(
        f"<tr><td><code>{_e(name)}</code></td><td class=num>{f['executed']:,}/{f['statements']:,}</td>"
        f"<td class=num>{f['executed'] / f['statements']:.0%}</td><td class=mono>{_missed(f)}</td></tr>"
        for name, f in sorted(cov["files"].items())
        if f["statements"]
    )
    missed = cov["statements"] - cov["executed"]
    why = (
        f" Of the {missed:,} never executed, <b>{cov['explained']:,}</b> have a reason in the model's "
        f"catalogue and {missed - cov['explained']:,} do not."
        if isinstance(cov.get("explained"), int)
        else ""
    )
    return (
        f"<p>The entries execute <b>{cov['executed']:,} of {cov['statements']:,}</b> statements "
        f"({cov['executed'] / cov['statements']:.1%}) of the mutated files; a mutant of a statement none "
        f"executes is <i>not covered</i>.{why}</p><details><summary>Statements never executed, per file</summary>"
        "<table><tr><th>file</th><th>executed</th><th></th><th>lines never executed</th></tr>"
        + rows
        + "</table></details>"
    )


def _missed(f: dict[str, Any]) -> str:
    """A file's never-executed lines: as ranges, or per function with the catalogue's reason.

    >>> _missed({"missed": [3, 4], "functions": {"A.f": {"lines": [3, 4], "why": "no entry <x>"}}})
    '<code>A.f</code> 3-4: no entry &lt;x&gt;'
    """
    functions = f.get("functions")
    if not isinstance(functions, dict):
        return _e(_ranges(f["missed"]))
    return "<br>".join(
        f"<code>{_e(name)}</code> {_e(_ranges(g['lines']))}: "
        + (_e(g["why"]) if g.get("why") else "<b>no reason given</b>")
        for name, g in sorted(functions.items(), key=lambda kv: min(kv[1]["lines"]))
    )
