"""The release suite: run every check of a suite file and publish the results.

The suite file's format (one ``[[check]]`` table per entry: model, configuration, engine,
budget, expectation, coverage requirements) is read and checked by :mod:`explorer.suite`.
An entry passes when its expectation is met and its coverage requirements hold: ``hold`` means the search completed
and every property held; ``violation`` means the search (run with ``--continue``)
found exactly the listed properties violated — a guard that known bugs of a model
written "as printed" stay found; ``explore`` (engine ``simulate`` or ``hypothesis``) runs a
configuration too large for the exhaustive search with a fixed seed and budget and fails
only by finding a violation: it reports what it covered and **proves nothing**. The run
exits 1 if any entry failed, 3 if an entry ran out of budget (and none failed), 0 otherwise.
The report also lists the variants each entry ran (its configuration's non-numeric values)
and the suite's coverage totals.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from explorer.api import CheckOptions
from explorer.config import ConfigError, did_you_mean
from explorer.core import CheckResult, ExitReason
from explorer.datafiles import DataFileError, read_json
from explorer.frontend import run_check, run_proofs
from explorer.release_jobs import EntryRun, default_jobs, not_run_entry, run_entries
from explorer.release_output import closing_lines, config_toml, entry_lines, entry_progress, toml_values
from explorer.report.history import changes, index_html, like_with_like, load_run, scan, shown_name
from explorer.report.layout import LayoutError, layout_of
from explorer.report.page import mutation_summary, provenance, report_pages
from explorer.run_traces import RUN_TRACES, run_trace_name
from explorer.search import safeio, stop_requested
from explorer.state_view import trace_views
from explorer.suite import (
    _MACHINES,
    SuiteEntry,
    load_suite,
    reduction_factor,
)
from explorer.symmetry_probe import symmetry_problem
from explorer.tracefile import ReplayError, mutation_problem, replay_steps, trace_document, write_json_atomic

__all__ = ["SuiteEntry", "load_suite", "pinned_lengths_moved", "run_release"]


def _label_count(labels: dict[str, Any], path: str) -> int:
    """Hits of a label path (parts joined by ``/``) in a nested ``labels`` section; a key may
    itself hold ``/`` (a znode path), so at each level the longest matching key wins; a
    path that ends at a section counts every label under it.

    >>> labels = {"zk_writes": {"/controller": {"changed": 2, "expired": 1}}}
    >>> _label_count(labels, "zk_writes//controller/changed"), _label_count(labels, "zk_writes//controller")
    (2, 3)
    """
    node: Any = labels
    rest = path
    while rest:
        if not isinstance(node, dict):
            return 0
        keys = [k for k in node if rest == k or rest.startswith(k + "/")]
        if not keys:
            return 0
        k = max(keys, key=len)
        node, rest = node[k], rest[len(k) + 1 :]

    def total(x: Any) -> int:
        return sum(total(v) for v in x.values()) if isinstance(x, dict) else int(x)

    return total(node)


def state_machine_coverage(labels: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Per state machine: (edges taken, edges in its table), from a coverage ``labels`` section.

    >>> state_machine_coverage({"state_machines": {"partition": {"New->Online": 2, "Online->Offline": 0}}})
    {'partition': (1, 2)}
    """
    sm = labels.get("state_machines", {})
    return {m: (sum(1 for n in sm[m].values() if n), len(sm[m])) for m in _MACHINES if m in sm}


def _reduce_effective(e: SuiteEntry, r: Any, system: Any) -> dict[str, Any]:
    """Requirement ``reduce_effective`` of an entry with ``reduce = "symmetry"``: the model
    declares a permutation for its configuration and (given ``full_states``) the reduced search
    met fewer states than the full one. A model change that loses the symmetry leaves every
    verdict as it was but silently turns the entry into the full search; this says so.

    >>> from types import SimpleNamespace
    >>> class Sys:
    ...     def symmetries(self): return []
    >>> e = SuiteEntry("x", "controller", reduce="symmetry", full_states=300)
    >>> _reduce_effective(e, SimpleNamespace(distinct_states=300), Sys())["detail"]
    'reduce symmetry is ineffective: the model declares no symmetry for this configuration'
    >>> Sys.symmetries = lambda self: [lambda s: s]
    >>> _reduce_effective(e, SimpleNamespace(distinct_states=160), Sys())["detail"]
    '1 permutations, 160 states of 300'
    """
    perms = len(list(system.symmetries()))
    problem = None
    if not perms:
        problem = "the model declares no symmetry for this configuration"
    elif e.full_states is not None and r.distinct_states >= e.full_states:
        problem = f"{r.distinct_states:,} states, no fewer than the full search's {e.full_states:,}"
    return {
        "key": "reduce_effective",
        "required": True,
        "met": problem is None,
        "detail": f"{perms} permutations, {r.distinct_states:,} states"
        + (f" of {e.full_states:,}" if e.full_states is not None else "")
        if problem is None
        else f"reduce symmetry is ineffective: {problem}",
    }


def check_requirements(
    e: SuiteEntry, r: CheckResult, system: Any = None, properties: Any = ()
) -> list[dict[str, Any]]:
    """Each coverage requirement of the entry: ``{"key", "required", "met", "detail"}``; for an
    entry with ``reduce = "symmetry"`` (given its ``system``), ``reduce_sound``: the probe of
    :mod:`explorer.symmetry_probe` found the declared symmetry sound on the first states."""
    out: list[dict[str, Any]] = []
    if e.reduce == "symmetry" and system is not None and hasattr(system, "symmetries"):
        problem = symmetry_problem(system, properties)
        out.append(
            {
                "key": "reduce_sound",
                "required": True,
                "met": problem is None,
                "detail": "the symmetry commutes with the model on its first 300 states"
                if problem is None
                else f"reduce symmetry is unsound: {problem}",
            }
        )
        out.append(_reduce_effective(e, r, system))
    cov = r.coverage or {}
    labels = cov.get("labels", {})

    def add(key: str, required: Any, missing: list[str], detail_ok: str) -> None:
        met = not missing
        detail = detail_ok if met else "missing: " + ", ".join(missing)
        out.append({"key": key, "required": required, "met": met, "detail": detail})

    for key, v in e.require.items():
        if key == "require_actions":
            enabled = {k for k, x in cov.get("actions", {}).items() if x.get("enabled")}
            want = list(cov.get("declared_action_kinds") or sorted(enabled)) if v == "all" else list(v)
            missing = [k for k in want if k not in enabled]
            add(key, v if v == "all" else list(v), missing, f"{len(want)} action kinds enabled")
        elif key == "require_transitions":
            if isinstance(v, float):
                sm = state_machine_coverage(labels)
                hit, total = sum(h for h, _ in sm.values()), sum(n for _, n in sm.values())
                frac = hit / total if total else 0.0
                missing = [] if total and frac >= v else [f"{hit}/{total} edges taken ({frac:.0%} < {v:.0%})"]
                add(key, v, missing, f"{hit}/{total} state-machine edges taken ({frac:.0%})")
            else:
                missing = [x for x in v if not _label_count(labels, "state_machines/" + x)]
                add(key, list(v), missing, f"{len(v)} transitions taken")
        elif key == "require_labels":
            missing = [x for x in v if not _label_count(labels, x)]
            add(key, list(v), missing, f"{len(v)} labels hit")
        elif key == "require_witnesses" and v:
            missing = [
                n for n, p in r.properties.items() if p["kind"] == "reachable" and p["status"] != "witnessed"
            ]
            add(key, v, missing, "every reachable property witnessed")
        elif key == "require_non_vacuous" and v:
            missing = [n for n, p in r.properties.items() if p.get("vacuous")]
            add(key, v, missing, "every guarded property applied")
    return out


def variants_of(config: dict[str, Any]) -> dict[str, Any]:
    """The variant choices of a configuration: its non-numeric values (enums, flags, names).

    >>> variants_of({"brokers": 2, "elector": "modern", "broker_epoch": True, "assignment": ()})
    {'elector': 'modern', 'broker_epoch': True}
    """
    return {k: v for k, v in config.items() if isinstance(v, (str, bool))}


def _verdict(e: SuiteEntry, r: CheckResult, reqs: list[dict[str, Any]] | None = None) -> tuple[str, str]:
    """(status, message): status is pass, fail or budget; an unmet coverage requirement of an
    otherwise passing entry fails it."""
    status, msg = _expectation(e, r)
    unmet = [q for q in reqs or [] if not q["met"]]
    if status == "pass" and unmet:
        return "fail", "coverage requirement unmet: " + "; ".join(f"{q['key']}: {q['detail']}" for q in unmet)
    return status, msg


def _stopped(r: CheckResult) -> str:
    """Why a search stopped early: its exit reason, and the budget it spent when one was.

    >>> from explorer.search import not_run_result
    >>> _stopped(not_run_result("m", "bfs", "not run"))
    'interrupted'
    """
    return r.exit_reason.value + (f" ({r.budget})" if r.budget else "")


def pinned_lengths_moved(e: SuiteEntry, r: CheckResult) -> list[str]:
    """The expected violations whose shortest counterexample is not the entry's ``violates_at``
    pin, each as ``"name: N steps, pinned M"``.

    >>> from types import SimpleNamespace as N
    >>> pinned_lengths_moved(N(violates_at={"p": 15}), N(violations=[N(property="p", length=6)]))
    ['p: 6 steps, pinned 15']
    """
    shortest: dict[str, int] = {}
    for v in r.violations:
        shortest[v.property] = min(v.length, shortest.get(v.property, v.length))
    return [
        f"{name}: {shortest[name]} steps, pinned {n}"
        for name, n in sorted(e.violates_at.items())
        if name in shortest and shortest[name] != n
    ]


def _expectation(e: SuiteEntry, r: CheckResult) -> tuple[str, str]:
    """(status, message) of the entry's expectation alone."""
    violated = sorted({v.property for v in r.violations})
    if e.expect == "explore":
        if violated:
            return "fail", "the exploration found a violation: " + ", ".join(violated)
        if r.exit_reason.value == "interrupted":
            return "budget", "interrupted before the exploration's budget was spent"
        return "pass", (
            f"no violation in {r.distinct_states:,} distinct states sampled "
            f"({e.engine}, seed {e.explore.get('seed')}): an exploration, it proves nothing"
        )
    if e.expect == "hold":
        if violated:
            return "fail", "violated: " + ", ".join(violated)
        if r.exit_reason.value != "complete":
            return "budget", f"{_stopped(r)} before the search completed"
        return "pass", "every property held; search complete"
    if sorted(e.violates) == violated:
        moved = pinned_lengths_moved(e, r)
        if moved:
            return "fail", "expected violations at other lengths: " + "; ".join(moved)
        return "pass", "the expected violations were found: " + ", ".join(violated)
    if r.exit_reason.value not in ("complete", "violation"):
        return "budget", f"{_stopped(r)}; found {violated}"
    return "fail", f"expected violations {sorted(e.violates)}, found {violated}"


def _junit(
    entries: list[tuple[SuiteEntry, CheckResult, str, str, list[dict[str, Any]]]],
    prov: dict[str, Any] | None = None,
) -> ET.Element:
    """JUnit XML: per entry one suite with a ``search`` case, one case per property and one
    per coverage requirement (``coverage: require_*``)."""
    root = ET.Element("testsuites", name="kafka-mc release")
    for e, r, status, msg, reqs in entries:
        suite = ET.SubElement(
            root,
            "testsuite",
            name=e.name,
            tests=str(len(r.properties) + 1 + len(reqs)),
            failures="0",
            time=f"{r.seconds:.3f}",
        )
        if prov:
            props = ET.SubElement(suite, "properties")
            for k in ("commit", "dirty", "kafka_mc_version", "python", "platform", "suite", "started"):
                ET.SubElement(props, "property", name=k, value=str(prov.get(k)))
        fails = 0
        case = ET.SubElement(suite, "testcase", classname=e.name, name="search", time=f"{r.seconds:.3f}")
        if status != "pass":
            ET.SubElement(case, "failure", message=msg, type=status)
            fails += 1
        for pname, p in r.properties.items():
            pc = ET.SubElement(suite, "testcase", classname=e.name, name=pname)
            bad = p["status"] in ("violated", "unreached")
            if bad and pname not in e.violates:
                ET.SubElement(pc, "failure", message=f"{pname} {p['status']}", type=p["status"])
                fails += 1
            elif not bad and pname in e.violates:
                ET.SubElement(pc, "failure", message=f"{pname} expected to be violated", type="expected")
                fails += 1
            elif p["status"] in ("unknown", "unchecked"):
                ET.SubElement(pc, "skipped", message=p["status"])
        for q in reqs:
            qc = ET.SubElement(suite, "testcase", classname=e.name, name=f"coverage: {q['key']}")
            if not q["met"]:
                ET.SubElement(qc, "failure", message=f"{q['key']}: {q['detail']}", type="coverage")
                fails += 1
        suite.set("failures", str(fails))
    return root


def _layout(name: str, system: Any) -> dict[str, Any] | None:
    """The model's report layout; one that is not the documented shape is reported in one line
    and the entry drawn generically (the run's results stand)."""
    try:
        return layout_of(system)
    except LayoutError as err:
        print(f"  warning: {name}: {err}; the report draws this entry generically", flush=True)
        return None


def sequence_of(system: Any, trace: list[dict[str, Any]]) -> list[list[str]] | None:
    """The sequence-diagram arrows ``[from, to, label]`` of a trace's steps 1..n.

    The trace is replayed (actions by text, states by fingerprint) to recover each action;
    a system's ``sequence_arrow(action)`` names the actors, else every step is a
    self-arrow on one ``system`` lifeline. None when the trace does not replay.
    """
    if len(trace) < 2:
        return None
    try:
        states = replay_steps(system, trace)
    except (ReplayError, KeyError):
        return None
    arrow = getattr(system, "sequence_arrow", None)
    out: list[list[str]] = []
    for i, st in enumerate(trace[1:], start=1):
        prev, cur = states[i - 1], states[i]
        act = next((a for a, t in system.successors(prev) if t == cur and str(a) == st["action"]), None)
        if act is None:  # pragma: no cover - replay_steps found it
            return None
        out.append(list(arrow(act)) if arrow is not None else ["system", "system", str(act)])
    return out


def suite_summary(doc_entries: list[dict[str, Any]], wall_seconds: float) -> dict[str, Any]:
    """Totals over the suite: time, states, state-machine edges (union over the entries that
    label them), action kinds enabled, properties, variants exercised."""
    machines: dict[str, dict[str, int]] = {}
    actions_enabled: set[str] = set()
    actions_declared: set[str] = set()
    props = {"held": 0, "violated": 0, "expected_violations": 0, "witnessed": 0, "vacuous": 0, "other": 0}
    variants: dict[str, set[str]] = {}
    for en in doc_entries:
        r = en["result"]
        cov = r.get("coverage") or {}
        for m, edges in cov.get("labels", {}).get("state_machines", {}).items():
            acc = machines.setdefault(m, {})
            for edge, n in edges.items():
                acc[edge] = acc.get(edge, 0) + n
        actions_enabled |= {f"{r['model']}.{k}" for k, x in cov.get("actions", {}).items() if x["enabled"]}
        actions_declared |= {f"{r['model']}.{k}" for k in cov.get("declared_action_kinds", [])}
        expected = set(en.get("violates", ()))
        for name, p in r["properties"].items():
            if p.get("vacuous"):
                props["vacuous"] += 1
            st = p["status"] if p["status"] in props else "other"
            props[st] += 1
            if st == "violated" and name in expected:
                props["expected_violations"] += 1
        for k, v in en.get("variants", {}).items():
            variants.setdefault(f"{r['model']}.{k}", set()).add(json.dumps(v))
    return {
        "entries": len(doc_entries),
        "passed": sum(1 for en in doc_entries if en["status"] == "pass"),
        "search_seconds": sum(en["result"]["seconds"] for en in doc_entries),
        "wall_seconds": wall_seconds,
        "distinct_states": sum(
            en["result"]["distinct_states"] for en in doc_entries if en["result"]["engine"] != "symbolic"
        ),
        "state_machines": {
            m: {"covered": sum(1 for n in e.values() if n), "edges": len(e), "hits": dict(sorted(e.items()))}
            for m, e in sorted(machines.items())
        },
        "action_kinds": {
            "enabled": len(actions_enabled & actions_declared),
            "declared": len(actions_declared),
            "never_enabled": sorted(actions_declared - actions_enabled),
        },
        "properties": props,
        "variants": {k: sorted(json.loads(x) for x in v) for k, v in sorted(variants.items())},
    }


def _previous_run(
    report_dir: str, compare: str | None, names: list[str] | None = None
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The run this one is compared with, and every run kept (oldest first): ``compare`` (a run
    id in ``report_dir`` or a run folder; ConfigError in one line if its report is missing or
    does not validate), else the newest run in ``report_dir`` whose report validates and that
    ran each of ``names`` (the entries this run runs; :func:`explorer.report.history.like_with_like`),
    None if there is none. A run folder whose report does not validate is never compared with:
    one warning line on stderr each (:func:`explorer.report.history.scan`)."""
    kept, unreadable = scan(report_dir)
    previous = like_with_like(kept, names or [])
    if compare is not None:
        previous = _named_run(report_dir, compare, kept)
    for name, why in unreadable:
        print(
            f"release: warning: {report_dir}/{shown_name(name)} is unreadable, left out of the history "
            f"and never compared with: {why}",
            file=sys.stderr,
            flush=True,
        )
    return previous, kept


def _named_run(report_dir: str, compare: str, kept: list[dict[str, Any]]) -> dict[str, Any]:
    """The run ``--compare`` names (a run id in ``report_dir`` or a run folder); ConfigError in
    one line when there is none or its report does not validate."""
    for candidate in (Path(report_dir) / compare, Path(compare)):
        if candidate.exists():
            try:
                return load_run(candidate)
            except DataFileError as e:
                raise ConfigError(f"--compare {compare}: {candidate}: {e}") from None
    known = [str(d.get("run_id")) for d in kept]
    hint = f" (runs in {report_dir}: {', '.join(known[-5:])})" if known else f" ({report_dir} holds no run)"
    raise ConfigError(f"--compare {compare}: no such run{hint}")


#: the visited set of the release's bfs entries: 64-bit fingerprints, parents on disk, each
#: counterexample rebuilt by replay (docs/scale.md); an entry with eventually properties keeps its
#: states (the bfs engine's rule). The same counts, verdicts and counterexamples as "states".
RELEASE_VISITED = "fingerprints"


def run_entry(e: SuiteEntry, quiet: bool = True, visited: str = RELEASE_VISITED) -> EntryRun:
    """Run one entry of the suite and judge it: its result, verdict and what its report draws
    (a Ctrl-C outside the search: ``not-run``); a bfs entry with the ``visited`` set named."""
    system: Any = None
    props: Any = ()
    layout = arrows = views = None
    progress = None if quiet else entry_progress(e)  # with an ETA from the last run
    try:
        if e.engine == "symbolic":
            r = run_proofs(e.model, e.set, None, e.max_seconds, progress)
        else:
            eo = e.engine_options()
            if e.engine == "bfs" and eo is None:
                eo = {"visited": visited}
            options = CheckOptions(
                engine=e.engine,
                max_seconds=e.max_seconds,
                max_states=e.max_states,
                reduce=e.reduce,
                keep_going=e.expect == "violation",
                progress=progress,
                engine_options=eo,
            )
            r, system, props = run_check(e.model, options, config_path=e.config, overrides=e.set)
            layout = _layout(e.name, system)
            arrows = [
                sequence_of(system, [{"action": s.action, "fingerprint": s.fingerprint} for s in v.trace])
                for v in r.violations
            ]
            views = [_last_views(system, v.trace) for v in r.violations]
    except KeyboardInterrupt:
        return not_run_entry(e, interrupted=True)
    reqs = check_requirements(e, r, system, props)
    status, msg = _verdict(e, r, reqs)
    stopped = r.exit_reason is ExitReason.INTERRUPTED or stop_requested() is not None
    return EntryRun(r, status, msg, reqs, layout, arrows, views, stopped)


def print_entry(e: SuiteEntry, x: EntryRun, index: int, total: int, verbose: bool = False) -> None:
    """What the release prints of an entry once it has run (the ``index``-th of ``total`` to end;
    entries side by side end in any order)."""
    if x.status == "not-run":
        return
    lines = entry_lines(
        e, x.result, x.status, x.message, x.requirements, index=index, total=total, verbose=verbose
    )
    clear = "\r\x1b[K" if sys.stdout.isatty() else ""  # over the live "started" line on a terminal
    print(clear + "\n".join(lines), flush=True)  # one line when it passed (explorer.release_output)


def _run_dir(report_dir: str, stamp: str | None = None) -> tuple[str, Path]:
    """A new, unused ``report_dir/<run-id>``: ``stamp`` (the second the run started; default
    now), with a suffix ``-2``, ``-3``, ... when two runs started in the same second: created
    here, so no two runs ever share a folder."""
    stamp = stamp or _run_stamp()
    root = Path(report_dir)
    root.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        run_id = stamp if n == 1 else f"{stamp}-{n}"
        try:
            (root / run_id).mkdir()
        except FileExistsError:
            continue
        return run_id, root / run_id
    raise ConfigError(f"{report_dir}: no free run folder for {stamp}")  # pragma: no cover


def _run_stamp() -> str:
    """The run id of a run starting now (before its ``-2`` suffix, if any)."""
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def _check_report_dir(report_dir: str) -> None:
    """ConfigError (one line) unless a run folder can be made in ``report_dir`` (made if
    missing): asked before the first entry runs, while the run folder itself is made only
    when the report is written, so a run that ends in an error leaves none behind."""
    try:
        Path(report_dir).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"--report-dir {report_dir}: cannot create a run folder ({err.strerror})") from None
    if not os.access(report_dir, os.W_OK | os.X_OK):
        raise ConfigError(f"--report-dir {report_dir}: cannot create a run folder (not writable)")


def _write_text_atomic(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file in its folder, then rename it into place (the
    temporary file is made new: a link at either name is replaced, never written through)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    safeio.write_atomic(path, text.encode("utf-8"), tmp=tmp, sync=False)


def _point_latest(report_dir: str, run_id: str) -> None:
    """``report_dir/latest`` -> ``run_id``, replaced in one rename (never missing)."""
    latest = Path(report_dir) / "latest"
    tmp = Path(report_dir) / f".latest.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run_id)
    if latest.is_dir() and not latest.is_symlink():
        tmp.unlink()
        return  # a real folder named latest is the user's: left alone
    os.replace(tmp, latest)


def _read_mutation(path: str) -> dict[str, Any]:
    """A ``kafka-mc mutate --json`` result; ConfigError (one line) if it is not one."""
    try:  # as data: bounded size and depth (explorer.datafiles)
        doc = read_json(path, f"--mutation {path}")
    except DataFileError as e:
        raise ConfigError(str(e)) from None
    if not isinstance(doc, dict) or doc.get("schema") != "kafka-mc/mutation/1":
        raise ConfigError(f"--mutation {path}: not a kafka-mc mutate result (schema kafka-mc/mutation/1)")
    problem = mutation_problem(doc)
    if problem is not None:
        raise ConfigError(f"--mutation {path}: {problem}")
    return doc


def select_entries(entries: list[SuiteEntry], names: str | None, suite_path: str) -> list[SuiteEntry]:
    """The entries named in ``names`` (comma-separated, in the suite's order), or all of them
    when ``names`` is None; a name not in the suite is a one-line error with "did you mean".

    >>> es = [SuiteEntry("a", "m"), SuiteEntry("bee", "m"), SuiteEntry("c", "m")]
    >>> [e.name for e in select_entries(es, "c,a", "s.toml")]
    ['a', 'c']
    >>> select_entries(es, "be", "s.toml")
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: --entries: 'be' is not in s.toml (did you mean 'bee'?) (has: a, bee, c)
    """
    if names is None:
        return entries
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        raise ConfigError("--entries: name the suite entries to run (comma-separated)")
    known = [e.name for e in entries]
    for n in wanted:
        if n not in known:
            raise ConfigError(
                f"--entries: {n!r} is not in {suite_path}{did_you_mean(n, known)} (has: {', '.join(known)})"
            )
    return [e for e in entries if e.name in wanted]


def run_release(
    suite_path: str,
    *,
    report_dir: str = "reports",
    quiet: bool = False,
    mutation: str | None = None,
    entries_named: str | None = None,
    compare: str | None = None,
    verbose: bool = False,
    jobs: int | None = None,
) -> int:
    """Run every entry of the suite, print a summary, write ``report.json``,
    ``index.html`` (the run's page), ``entries/<name>.html`` (one page per entry) and
    ``junit.xml`` under ``report_dir/<run-id>/`` (``latest``
    points there). ``mutation`` names a ``kafka-mc mutate --json`` result whose score and
    survivors the report shows. The report says what changed since ``compare`` (a run id in
    ``report_dir``, or a run folder) or, by default, the newest run already there, and
    ``report_dir/index.html`` is rewritten: every run kept, with trends
    (:mod:`explorer.report.history`).

    Every entry is loaded and checked before the first search. An interrupt (Ctrl-C,
    SIGTERM) ends the entry that runs, marks the rest ``not-run``, still writes the
    report, and exits 3 (unless an entry failed: 1). ``entries_named`` (comma-separated) runs
    those entries only: a subset run, recorded as one (``scope`` in ``report.json``),
    compared with the newest run that ran those entries and never pointed at by ``latest``,
    which stays the newest run of the whole suite. Each entry prints one line (``verbose``:
    every property and requirement; :mod:`explorer.release_output`), and every counterexample
    is saved as ``traces/<entry>--<property>.json`` in the run folder.

    ``jobs`` (default: the processors this process may use) entries run side by side, each in a
    worker process of its own, the longest first (by the previous run's times, else by their
    ``max_seconds``), each printed as it ends; the report lists them in the suite's order
    (:func:`explorer.release_jobs.run_entries`). ``jobs=1`` runs them one after the other in this process.
    """
    suite = load_suite(suite_path)
    entries = select_entries(suite, entries_named, suite_path)
    scope = {
        "subset": len(entries) < len(suite),
        "entries": [e.name for e in entries],
        "suite_entries": len(suite),
    }
    mutation_doc = None if mutation is None else mutation_summary(_read_mutation(mutation))
    if os.path.exists(report_dir) and not os.path.isdir(report_dir):
        raise ConfigError(f"--report-dir {report_dir}: not a directory")
    previous, _ = _previous_run(report_dir, compare, [e.name for e in entries])
    _check_report_dir(report_dir)
    stamp = _run_stamp()  # the run folder is named by the start, made at the end (_run_dir)
    t_start = time.monotonic()
    prov = provenance(
        suite_path,
        {"entries": entries_named, "mutation": mutation, "report_dir": report_dir, "quiet": quiet},
    )
    runs, interrupted = run_entries(
        entries,
        run_entry,
        quiet=quiet,
        jobs=default_jobs() if jobs is None else jobs,
        previous=previous,
        show=lambda e, x, k, n: print_entry(e, x, k, n, verbose),
    )
    done = [(e, x.result, x.status, x.message, x.requirements) for e, x in zip(entries, runs, strict=True)]
    arrows = {e.name: x.arrows for e, x in zip(entries, runs, strict=True) if x.arrows is not None}
    layouts = {e.name: x.layout for e, x in zip(entries, runs, strict=True)}
    views = {e.name: x.views for e, x in zip(entries, runs, strict=True) if x.views is not None}
    doc_entries = []
    for e, r, s, m, reqs in done:
        res = r.to_json()
        for v, seq in zip(res["violations"], arrows.get(e.name, [])):
            if seq is not None:
                v["sequence"] = seq
        for v, tv in zip(res["violations"], views.get(e.name, []), strict=False):
            if tv is not None:
                v["state_views"] = tv  # the report's "full state" of the last steps (explorer.state_view)
        for v in res["violations"]:
            if v["trace"]:
                v["trace_file"] = f"{RUN_TRACES}/{run_trace_name(e.name, v['property'])}"
        doc_entries.append(
            {
                "name": e.name,
                "expect": e.expect,
                "reduce": e.reduce,
                "full_states": e.full_states,
                "reduction_factor": reduction_factor(e, res),
                "violates": list(e.violates),
                "violates_at": dict(e.violates_at),
                "status": s,
                "message": m,
                "requirements": reqs,
                "variants": variants_of(toml_values(r.model, res["config"])),  # as a TOML file spells them
                "config_toml": config_toml(r.model, res["config"]),
                "layout": layouts.get(e.name),
                "result": res,
            }
        )
    try:
        run_id, out = _run_dir(report_dir, stamp)
    except OSError as err:
        raise ConfigError(f"--report-dir {report_dir}: cannot create a run folder ({err.strerror})") from None
    doc: dict[str, Any] = {
        "schema": "kafka-mc/release-report/2",
        "run_id": run_id,
        "suite": prov["suite"],
        "provenance": prov,
        "summary": suite_summary(doc_entries, time.monotonic() - t_start),
        "scope": scope,
        "entries": doc_entries,
    }
    if interrupted:
        doc["interrupted"] = True
    if mutation_doc is not None:
        doc["mutation"] = mutation_doc
    if previous is not None:
        doc["changes"] = changes(doc, previous)
    write_json_atomic(out / "report.json", doc)
    _save_traces(out, done)
    pages = report_pages(doc)
    safeio.make_dir(out / "entries", exist_ok=True)  # a link there is refused, never written into
    for rel in sorted(pages, key=lambda r: r == "index.html"):  # the front page last
        _write_text_atomic(out / rel, pages[rel])
    junit = _junit(done, prov)
    ET.indent(junit)
    _write_text_atomic(
        out / "junit.xml",
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(junit, encoding="unicode") + "\n",
    )
    if not scope["subset"]:  # latest: the newest run of the whole suite
        _point_latest(report_dir, run_id)
    kept, unreadable = scan(report_dir)
    _write_text_atomic(Path(report_dir) / "index.html", index_html(kept, unreadable=unreadable))
    failed = [e.name for e, _, s, _, _ in done if s == "fail"]
    budget = [e.name for e, _, s, _, _ in done if s == "budget"]
    not_run = [e.name for e, _, s, _, _ in done if s == "not-run"]
    ran = len(done) - len(not_run)
    summ = doc["summary"]
    sm = ", ".join(
        f"{m} state machine {x['covered']}/{x['edges']} edges" for m, x in summ["state_machines"].items()
    )
    print(
        f"coverage: {sm or 'no state machines'}, action kinds {summ['action_kinds']['enabled']}/"
        f"{summ['action_kinds']['declared']} enabled; report: {out / 'index.html'}"
    )
    if interrupted:
        print(f"release: interrupted; not run: {', '.join(not_run) or 'none'}")
    if mutation_doc is not None:
        print(f"release: mutation score {mutation_doc['line']}")
    subset = f" (a subset: {len(done)} of the suite's {len(suite)} entries)" if scope["subset"] else ""
    timing = f"in {summ['wall_seconds']:.1f} s (search {summ['search_seconds']:.1f} s){subset}"
    passed = ran - len(failed) - len(budget)
    if failed:
        verdict = f"release: FAILED: {len(failed)} of {len(done)} entries ({', '.join(failed)}), {passed} passed {timing}"
    elif budget or interrupted:
        verdict = f"release: INCOMPLETE: {passed}/{len(done)} passed {timing}" + (
            f"; out of budget: {', '.join(budget)}" if budget else ""
        )
    else:
        verdict = f"release: PASSED: {passed}/{len(done)} entries met their expectations {timing}"

    def saved_trace(name: str, prop: str) -> str | None:
        path = out / RUN_TRACES / run_trace_name(name, prop)
        return str(path) if path.is_file() else None

    failing = [(e, r) for e, r, st, _, _ in done if st == "fail"]
    print("\n".join(closing_lines(failing, saved_trace, verdict)), flush=True)
    if failed:
        return 1
    return 3 if budget or interrupted else 0


def _last_views(system: Any, trace: list[Any]) -> list[Any] | None:
    """The "full state" views of a counterexample's last two steps (the violating state and the
    one before it), None for the others: the other states are one ``kafka-mc replay --state K``
    away in the saved trace file, and keeping every one made an entry's page hundreds of KB."""
    tv = trace_views(system, trace)
    if tv is None:
        return None
    return [x if i >= len(tv) - 2 else None for i, x in enumerate(tv)]


def _save_traces(
    out: Path, done: list[tuple[SuiteEntry, CheckResult, str, str, list[dict[str, Any]]]]
) -> None:
    """Each counterexample of the run, expected or not, as ``out/traces/<entry>--<property>.json``
    (:mod:`explorer.run_traces`), the trace file ``kafka-mc replay`` and ``shrink`` read; written
    through :mod:`explorer.search.safeio` (a link in the run folder is never followed)."""
    folder = out / RUN_TRACES
    for e, r, *_ in done:
        for v in r.violations:
            if not v.trace:
                continue
            safeio.make_dir(folder, exist_ok=True)
            doc = trace_document(r.model, r.config, v)
            path = folder / run_trace_name(e.name, v.property)
            data = (json.dumps(doc, indent=1, default=str) + "\n").encode("utf-8")
            safeio.write_atomic(path, data, tmp=path.with_name(f".{path.name}.{os.getpid()}.tmp"), sync=False)
