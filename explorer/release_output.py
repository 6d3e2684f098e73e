"""What ``kafka-mc release`` prints: one line per entry, and what to do about a failure.

A passing entry is one line (its name, the verdict, states, seconds, and what was shown); so
is an entry whose violations were all expected. An entry that fails adds why: its message,
each unexpected violation with its explanation, each unmet coverage requirement. The run
ends with one verdict line, and, for every unexpected violation, the commands that replay,
show and shrink its counterexample, saved in the run folder (:mod:`explorer.run_traces`).
``--verbose`` prints today's detail instead: every property by status, the coverage
requirements, the entry's message.

:func:`entry_lines` is the one place that turns an entry's result into its lines, whatever
order the entries run in.

Example
-------
>>> from types import SimpleNamespace as N
>>> r = N(engine="bfs", distinct_states=74, seconds=0.12, violations=[], properties={}, exit_reason=N(value="complete"))
>>> e = N(name="controller-small", expect="hold", violates=())
>>> entry_lines(e, r, "pass", "every property held; search complete", [], index=4, total=47)
['[ 4/47] controller-small                           PASS           74 states    0.1 s  every property held']
"""

from __future__ import annotations

import functools
import os
from typing import Any

from explorer.run_traces import trace_commands
from explorer.search import Progress

__all__ = [
    "check_progress",
    "closing_lines",
    "config_toml",
    "entry_lines",
    "entry_progress",
    "known_states",
    "last_run",
    "list_lines",
    "model_costs",
    "toml_values",
    "unexpected",
]

#: the width of an entry's name in its line (release.toml's longest is 42)
_NAME = 42


def unexpected(e: Any, r: Any) -> list[Any]:
    """The violations of ``r`` that entry ``e`` did not expect (every one, for an entry that
    expects them to hold)."""
    expected = set(e.violates) if e.expect == "violation" else set()
    return [v for v in r.violations if v.property not in expected]


def _shown(e: Any, r: Any, status: str, message: str = "") -> str:
    """The few words that say what the entry showed (its line's last column)."""
    if status == "not-run":
        return "not run: the release was interrupted first"
    if r.engine == "symbolic":
        proved = sum(1 for p in r.properties.values() if p.get("status") == "held")
        return f"{proved} of {len(r.properties)} proof obligations proved"
    if e.expect == "explore" and status == "pass":
        return str(message)  # what was sampled, and that it proves nothing
    if status == "pass" and e.expect == "violation":
        n = len({v.property for v in r.violations})
        return f"the {n} expected violation{'s' if n != 1 else ''} found"
    if status == "pass":
        return "every property held"
    return ""


def entry_lines(
    e: Any,
    r: Any,
    status: str,
    message: str,
    reqs: list[dict[str, Any]],
    *,
    index: int,
    total: int,
    verbose: bool = False,
) -> list[str]:
    """An entry's lines in the release's output: one when it passed; with why when it did not
    (its message, each unexpected violation and its explanation, each unmet requirement);
    ``verbose``: every property by status and every requirement (the detail of
    :func:`explorer.frontend.format_result`)."""
    width = len(str(total))
    counts = (
        f"{len(r.properties):>9,} proofs" if r.engine == "symbolic" else f"{r.distinct_states:>9,} states"
    )
    head = f"[{index:>{width}}/{total}] {e.name:<{_NAME}} {status.upper():<7} {counts} {r.seconds:>6.1f} s"
    what = _shown(e, r, status, message)
    lines = [f"{head}  {what}".rstrip()]
    if verbose:
        from explorer.frontend import format_result

        lines += ["  " + line for line in format_result(r, steps=False, verbose=True).splitlines()]
        lines += [f"  coverage {q['key']}: {'met' if q['met'] else 'UNMET'} ({q['detail']})" for q in reqs]
        lines.append(f"  => {status.upper()}: {message}")
        return lines
    if status == "pass":
        return lines
    lines.append(f"  => {status.upper()}: {message}")
    for v in unexpected(e, r):
        lines.append(f"  VIOLATION of {v.property} ({v.kind}, {v.length} steps): {v.doc}")
        lines += [("    why: " if i == 0 else "         ") + line for i, line in enumerate(v.explanation)]
        if v.kind == "reachable" and not v.trace:
            lines.append(f"    {v.message}")
    for q in reqs:
        if not q["met"]:
            lines.append(f"  coverage {q['key']}: UNMET ({q['detail']})")
    return lines


def closing_lines(
    failed: list[tuple[Any, Any]],
    trace_path: Any,
    verdict: str,
) -> list[str]:
    """The run's last lines: for each unexpected violation of a failed entry (``(entry,
    result)``), the commands that look into its saved counterexample (``trace_path(entry
    name, property)`` gives the file, or None when none was saved), then the ``verdict`` line.

    >>> from types import SimpleNamespace as N
    >>> e = N(name="x", expect="hold", violates=())
    >>> r = N(violations=[N(property="p", length=3, trace=[1])])
    >>> print("\\n".join(closing_lines([(e, r)], lambda n, p: f"runs/1/traces/{n}--{p}.json", "release: FAILED")))
    <BLANKLINE>
    x: p (3 steps), saved as runs/1/traces/x--p.json:
      kafka-mc explore runs/1/traces/x--p.json  # open it in the browser at its violating step: state, why, what else could happen
      kafka-mc replay runs/1/traces/x--p.json  # replay it step by step, checking every step
      kafka-mc replay runs/1/traces/x--p.json --state -1  # the violating state in full
      kafka-mc replay runs/1/traces/x--p.json --diff -2 -1  # what the last step changed
      kafka-mc shrink runs/1/traces/x--p.json --out-dir shrunk/  # a shorter counterexample and a pytest test
    release: FAILED
    """
    lines: list[str] = []
    for e, r in failed:
        for v in unexpected(e, r):
            path = trace_path(e.name, v.property) if v.trace else None
            if path is None:
                continue
            lines.append("")
            lines.append(f"{e.name}: {v.property} ({v.length} steps), saved as {path}:")
            lines += [f"  {cmd}  # {what}" for cmd, what in trace_commands(str(path))]
    lines.append(verdict)
    return lines


def known_states(e: Any, runs: list[dict[str, Any]]) -> int | None:
    """How many states entry ``e``'s search is expected to meet, for its progress line's ETA:
    the newest of ``runs`` (release reports, oldest first) that searched it to the end, else
    the suite's ``full_states`` for an entry that is not reduced; None when neither says.

    >>> from types import SimpleNamespace as N
    >>> e = N(name="a", engine="bfs", full_states=None, reduce="none", expect="hold")
    >>> known_states(e, [{"entries": [{"name": "a", "result": {"distinct_states": 9, "exit_reason": "complete"}}]}])
    9
    """
    if e.engine in ("simulate", "hypothesis", "symbolic"):
        return None
    for doc in reversed(runs):
        for en in doc.get("entries") or []:
            if not isinstance(en, dict) or en.get("name") != e.name:
                continue
            res = _result_of(en)
            n = res.get("distinct_states")
            done = res.get("exit_reason") == "complete" or (
                res.get("exit_reason") == "violation" and e.expect == "violation"
            )
            if done and isinstance(n, int) and n > 0:
                return n
    full = getattr(e, "full_states", None)
    return full if isinstance(full, int) and getattr(e, "reduce", "none") == "none" else None


def last_run(report_dirs: Any = ("reports",)) -> dict[str, Any] | None:
    """The newest run of the whole suite, ``<report dir>/latest/report.json``, read as data and
    validated (:func:`explorer.report.history.read_run`), from the first of ``report_dirs``
    that has one; None when none does."""
    from pathlib import Path

    from explorer.report.history import read_run

    for d in report_dirs:
        doc = read_run(Path(d) / "latest")
        if doc is not None:
            return doc
    return None


def _result_of(en: Any) -> dict[str, Any]:
    """An entry's ``result`` in a report read as data (an empty one where it is no object)."""
    res = en.get("result") if isinstance(en, dict) else None
    return res if isinstance(res, dict) else {}


def _cost(doc: dict[str, Any] | None, name: str) -> str:
    """An entry's states and seconds in the run ``doc`` ("" when it did not run there).

    >>> _cost({"entries": [{"name": "a", "status": "pass", "result": {"distinct_states": 74, "seconds": 0.04}}]}, "a")
    '74 states, 0.0 s'
    """
    for en in (doc or {}).get("entries") or []:
        if isinstance(en, dict) and en.get("name") == name and en.get("status") != "not-run":
            res = _result_of(en)
            n, secs = res.get("distinct_states"), res.get("seconds")
            if isinstance(n, int) and isinstance(secs, (int, float)):
                return f"{n:,} states, {secs:,.1f} s"
    return ""


def list_lines(entries: list[Any], doc: dict[str, Any] | None) -> list[str]:
    """``release --list``: each entry's name, model, engine and expectation, and its states and
    time in the last run of the whole suite (``doc``, :func:`last_run`) when it ran there.

    >>> from types import SimpleNamespace as N
    >>> doc = {"run_id": "r1", "entries": [{"name": "a", "result": {"distinct_states": 74, "seconds": 0.04}}]}
    >>> print("\\n".join(list_lines([N(name="a", model="m", engine="bfs", expect="hold")], doc)))
    a  m  bfs, expect hold  last run: 74 states, 0.0 s
    """
    width = max((len(e.name) for e in entries), default=0)
    mwidth = max((len(e.model) for e in entries), default=0)
    whats = ["proofs" if e.engine == "symbolic" else f"{e.engine}, expect {e.expect}" for e in entries]
    wwidth = max((len(w) for w in whats), default=0)
    out = []
    for e, what in zip(entries, whats, strict=True):
        cost = _cost(doc, e.name)
        line = (
            f"{e.name:<{width}}  {e.model:<{mwidth}}  {what:<{wwidth}}  {'last run: ' + cost if cost else ''}"
        )
        out.append(line.rstrip())
    return out


def model_cost_lines(model: str, entries: list[Any], doc: dict[str, Any] | None) -> list[str]:
    """``models NAME``: what each release entry of the model cost in the last run (``doc``)."""
    rows = [(e.name, _cost(doc, e.name)) for e in entries if e.model == model]
    rows = [(n, c) for n, c in rows if c]
    if not rows:
        return []
    width = max(len(n) for n, _ in rows)
    return [f"  release entries of {model}, as the last run ({doc and doc.get('run_id')}) met them:"] + [
        f"    {n:<{width}}  {c}" for n, c in rows
    ]


def model_costs(model: str, root: Any) -> list[str]:
    """:func:`model_cost_lines` of the project's release suite (``root/configs/release.toml``)
    and the last run in ``reports/`` (here, else under ``root``); [] when either is missing."""
    from pathlib import Path

    from explorer.config import ConfigError
    from explorer.suite import load_suite

    try:
        entries = load_suite(str(Path(root) / "configs" / "release.toml"))
    except (ConfigError, OSError):
        return []
    return model_cost_lines(model, entries, last_run(("reports", Path(root) / "reports")))


def _toml_value(v: Any) -> str:
    """A value in TOML's spelling: true/false, numbers, quoted strings, arrays.

    >>> _toml_value([[0, 1], [1, 0]]), _toml_value("2.x"), _toml_value(False)
    ('[[0, 1], [1, 0]]', '"2.x"', 'false')
    """
    import json

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v), ensure_ascii=False)  # a TOML basic string is a JSON string


def toml_values(model: str, config: dict[str, Any]) -> dict[str, Any]:
    """A result's configuration (``CheckResult.config``: enums by their Python names, such as
    ``SETTLED``) with every choice spelled as the configuration file and ``--set`` take it (the
    enum's value, ``settled``), through the registered model's configuration class; the values
    as they are for a model the registry does not know (a proof target).

    >>> toml_values("controller", {"start": "SETTLED", "kafka_version": "KAFKA_0_8", "brokers": 2})
    {'start': 'settled', 'kafka_version': '0.8', 'brokers': 2}
    """
    import enum
    import typing

    from explorer.frontend import UsageError, model_spec

    try:
        hints = typing.get_type_hints(model_spec(model).config_cls)
    except (UsageError, TypeError, NameError):
        return dict(config)
    out: dict[str, Any] = {}
    for k, v in config.items():
        tp = hints.get(k)
        if isinstance(tp, type) and issubclass(tp, enum.Enum) and isinstance(v, str) and v in tp.__members__:
            v = tp[v].value
        out[k] = v
    return out


def config_toml(model: str, config: dict[str, Any]) -> str:
    """A result's configuration as a TOML file a user can paste back (``--config FILE``; each
    line is also a ``--set`` value), every key in its TOML spelling (:func:`toml_values`).

    >>> print(config_toml("controller", {"brokers": 2, "start": "COLD", "assignment": [[0, 1]]}))
    brokers = 2
    start = "cold"
    assignment = [[0, 1]]
    """
    return "\n".join(f"{k} = {_toml_value(v)}" for k, v in toml_values(model, config).items())


@functools.lru_cache(maxsize=4)
def _last_run_in(report_dir: str) -> dict[str, Any] | None:
    return last_run((report_dir,))


def entry_progress(e: Any, report_dir: str = "reports") -> Progress:
    """The progress line of a release entry, with an ETA when its state count is known
    (:func:`known_states`: the last run of the whole suite in ``report_dir``, else the suite's
    ``full_states``)."""
    p = Progress()
    last = _last_run_in(os.path.abspath(report_dir))  # per folder: the cache outlives a chdir
    p.expected = known_states(e, [last] if last is not None else [])
    return p


def check_progress(model: str | None, config_path: str | None, overrides: Any) -> Progress:
    """The progress line of ``kafka-mc check MODEL``, with an ETA when the last release ran the
    same model on the same configuration to the end (say ``check controller`` and the release's
    ``controller-ref``); without one when the configuration does not load (the check says why)."""
    from explorer.config import load_config
    from explorer.core import config_to_dict
    from explorer.frontend import model_spec

    p = Progress()
    doc = _last_run_in(os.path.abspath("reports")) if model is not None else None
    if doc is None or model is None:
        return p
    try:
        want = config_to_dict(load_config(model_spec(model).config_cls, config_path, overrides))
    except Exception:  # the check itself reports a bad configuration
        return p
    for en in doc.get("entries") or []:
        res = _result_of(en)
        n = res.get("distinct_states")
        if res.get("model") == model and res.get("config") == want and res.get("exit_reason") == "complete":
            p.expected = n if isinstance(n, int) and n > 0 else None
            break
    return p


def started_line(e: Any, k: int, n: int, stream: Any = None) -> None:
    """Say that entry ``e`` started (the ``k``-th of ``n``): on a terminal a live line on stderr,
    replaced by the next one; elsewhere (a log, CI) nothing, so that a passing release stays one
    line per entry: each entry's own line says when it ended.

    >>> import io
    >>> out = io.StringIO(); started_line(type("E", (), {"name": "a", "model": "m", "engine": "bfs"}), 1, 2, out)
    >>> out.getvalue()
    ''
    """
    import sys

    stream = sys.stderr if stream is None else stream
    if getattr(stream, "isatty", lambda: False)():
        stream.write(f"\r\x1b[Kstarted {e.name}: {e.model} ({e.engine}), {k} of {n} ...")
        stream.flush()
