"""The release suite: run every check of a suite file and publish the results.

A suite is TOML with one ``[[check]]`` table per entry::

    [[check]]
    name = "timing-wheel-ref"          # unique; used in the report and JUnit
    model = "timing-wheel"             # a registered model (or, with engine "symbolic", a proof target)
    config = "timing-wheel-ref.toml"   # relative to the suite file
    set = ["tick_ms=1"]                # optional overrides
    engine = "bfs"
    max_seconds = 600                  # the entry's budget
    reduce = "none"                    # or "por" / "symmetry": a reduction (bfs; docs/reduction.md)
    full_states = 1234                 # with reduce: the full search's distinct states (the
                                       # report gives the reduction's factor; pinned in a test)
    expect = "hold"                    # or "violation": the model is known broken
    violates = ["deadlock"]            # with expect = "violation": exactly these
    # required coverage (optional; an unmet requirement fails the entry):
    require_actions = "all"            # or a list: these action kinds must be enabled
    require_transitions = 0.5          # fraction of both state machines' edges taken, or a
                                       # list such as ["partition/OfflinePartition->OnlinePartition"]
    require_labels = ["elections/offline/isr"]  # coverage labels that must be hit
    require_witnesses = true           # every reachable property witnessed
    require_non_vacuous = true         # every guarded property applied at least once

An entry passes when its expectation is met and its coverage requirements hold: ``hold`` means the search completed
and every property held; ``violation`` means the search (run with ``--continue``)
found exactly the listed properties violated — a guard that known bugs of a model
written "as printed" stay found. The run exits 1 if any entry failed, 3 if an entry
ran out of budget (and none failed), 0 otherwise. The report also lists the variants
each entry ran (its configuration's non-numeric values) and the suite's coverage totals.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.api import CheckOptions
from explorer.config import ConfigError, did_you_mean, load_config, parse_override
from explorer.core import CheckResult, ExitReason
from explorer.frontend import CHECK_ENGINES, format_result, registry, run_check, run_proofs
from explorer.report import mutation_summary, provenance, render_html
from explorer.search import REDUCTIONS, Progress, not_run_result, stop_requested
from explorer.tracefile import ReplayError, mutation_problem, replay_steps, write_json_atomic

__all__ = ["SuiteEntry", "load_suite", "run_release"]

_REQUIRE_KEYS = {
    "require_actions",
    "require_transitions",
    "require_labels",
    "require_witnesses",
    "require_non_vacuous",
}
_KEYS = {
    "name",
    "model",
    "config",
    "set",
    "engine",
    "max_seconds",
    "max_states",
    "reduce",
    "full_states",
    "expect",
    "violates",
    *_REQUIRE_KEYS,
}
_MACHINES = ("partition", "replica")
#: the registered model whose coverage labels name the state machines' edges
_STATE_MACHINE_MODEL = "controller"


@dataclass(frozen=True)
class SuiteEntry:
    """One check of a release suite (see the module docstring for the keys)."""

    name: str
    model: str
    config: str | None = None
    set: tuple[str, ...] = ()
    engine: str = "bfs"
    max_seconds: float | None = None
    max_states: int | None = None
    #: state-space reduction of the entry's bfs run (``none``, ``por`` or ``symmetry``, docs/reduction.md)
    reduce: str = "none"
    #: with a reduction: the distinct states of the full search, for the factor in the report
    full_states: int | None = None
    expect: str = "hold"
    violates: tuple[str, ...] = field(default=())
    #: coverage requirements: key (``require_*``) -> value, as validated by :func:`load_suite`
    require: dict[str, Any] = field(default_factory=dict)


def load_suite(path: str) -> list[SuiteEntry]:
    """Read and validate a suite file; ConfigError (one line) on anything wrong.

    >>> load_suite("/nonexistent.toml")
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: /nonexistent.toml: no such file
    """
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot be read ({type(e).__name__})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: malformed TOML: {e}") from None
    except (ValueError, RecursionError) as e:  # e.g. an integer of thousands of digits
        raise ConfigError(f"{path}: unreadable TOML ({str(e).splitlines()[0][:80]})") from None
    if not isinstance(doc, dict) or set(doc) - {"check"}:
        extra = sorted(set(doc) - {"check"})
        raise ConfigError(f"{path}: unknown top-level key {extra[0]!r} (a suite holds [[check]] tables)")
    checks = doc.get("check")
    if not isinstance(checks, list) or not checks or not all(isinstance(c, dict) for c in checks):
        raise ConfigError(f"{path}: no [[check]] entries")
    base = os.path.dirname(os.path.abspath(path))
    entries: list[SuiteEntry] = []
    seen: set[str] = set()
    for i, c in enumerate(checks):
        where = f"{path}: check {i + 1}" + (f" ({c['name']})" if isinstance(c.get("name"), str) else "")
        entries.append(_load_entry(where, base, c, seen))
    return entries


def _strings(where: str, c: dict[str, Any], key: str) -> tuple[str, ...]:
    """A list of non-empty strings under ``key`` (a string alone is an error, not its letters)."""
    v = c.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise ConfigError(f"{where}: {key} must be a list of non-empty strings, got {v!r}")
    return tuple(v)


def _number(where: str, c: dict[str, Any], key: str, integer: bool) -> Any:
    """A positive number (an int when ``integer``) under ``key``, or None when absent."""
    v = c.get(key)
    if v is None:
        return None
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    if isinstance(v, bool) or not ok or not math.isfinite(v) or v <= 0:
        kind = "a positive integer" if integer else "a positive number"
        raise ConfigError(f"{where}: {key} must be {kind}, got {v!r}")
    return v


def _load_entry(where: str, base: str, c: dict[str, Any], seen: set[str]) -> SuiteEntry:
    """One ``[[check]]`` table, checked in full (model, config file, overrides, engine, types)."""
    unknown = set(c) - _KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    for k in ("name", "model"):
        if not isinstance(c.get(k), str) or not c[k]:
            raise ConfigError(f"{where}: {k} must be a non-empty string")
    if c["name"] in seen:
        raise ConfigError(f"{where}: duplicate name {c['name']!r}")
    seen.add(c["name"])
    expect = c.get("expect", "hold")
    if expect not in ("hold", "violation"):
        raise ConfigError(f"{where}: expect must be 'hold' or 'violation', got {expect!r}")
    violates = _strings(where, c, "violates")
    if expect == "violation" and not violates:
        raise ConfigError(f"{where}: expect = 'violation' needs the list 'violates'")
    overrides = _strings(where, c, "set")
    engine = c.get("engine", "bfs")
    engines = (*CHECK_ENGINES, "symbolic")
    if not isinstance(engine, str) or engine not in engines:
        raise ConfigError(f"{where}: engine must be one of {', '.join(engines)}, got {engine!r}")
    max_seconds = _number(where, c, "max_seconds", integer=False)
    max_states = _number(where, c, "max_states", integer=True)
    reduce = c.get("reduce", "none")
    if reduce not in REDUCTIONS or (reduce != "none" and engine != "bfs"):
        raise ConfigError(
            f"{where}: reduce must be one of {', '.join(REDUCTIONS)} (bfs only), got {reduce!r}"
        )
    full_states = _number(where, c, "full_states", integer=True)
    if full_states is not None and reduce == "none":
        raise ConfigError(f"{where}: full_states is the full search's count of a reduced entry (set reduce)")
    cfg = c.get("config")
    if cfg is not None and (not isinstance(cfg, str) or not cfg):
        raise ConfigError(f"{where}: config must be a non-empty file name, got {cfg!r}")
    config = None if cfg is None else os.path.join(base, cfg)
    require = _validate_requirements(where, c)
    model: str = c["model"]
    try:
        if engine == "symbolic":
            from explorer.symbolic import list_targets

            if model not in list_targets() and ":" not in model:
                raise ConfigError(f"unknown proof target {model!r} (known: {', '.join(list_targets())})")
            if config is not None:
                raise ConfigError("config: engine 'symbolic' takes a proof target and set, not a config file")
            for o in overrides:
                parse_override(o)
        else:
            reg = registry()
            if model not in reg.MODEL_MODULES:
                raise ConfigError(f"unknown model {model!r} (known models: {', '.join(reg.MODEL_MODULES)})")
            spec = reg.get_model(model)
            loaded = load_config(spec.config_cls, config, list(overrides))
            if violates:
                names = {p.name for p in spec.properties(loaded)} | {"deadlock"}
                bad = [v for v in violates if v not in names]
                if bad:
                    raise ConfigError(f"violates: {bad[0]!r} is not a property of {model}")
            if isinstance(require.get("require_actions"), tuple):
                _check_action_kinds(model, spec, loaded, require)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None
    return SuiteEntry(
        name=c["name"],
        model=model,
        config=config,
        set=overrides,
        engine=engine,
        max_seconds=max_seconds,
        max_states=max_states,
        reduce=reduce,
        full_states=full_states,
        expect=expect,
        violates=violates,
        require=require,
    )


def reduction_factor(e: SuiteEntry, res: dict[str, Any]) -> float | None:
    """The full search's distinct states over the reduced search's, for a complete reduced
    run whose entry gives ``full_states`` (else None).

    >>> e = SuiteEntry("x", "controller", reduce="symmetry", full_states=300)
    >>> reduction_factor(e, {"distinct_states": 150, "exit_reason": "complete"})
    2.0
    >>> reduction_factor(e, {"distinct_states": 150, "exit_reason": "budget_exhausted"}) is None
    True
    """
    if e.reduce == "none" or e.full_states is None or not res.get("distinct_states"):
        return None
    if res.get("exit_reason") not in ("complete", "violation"):
        return None
    return round(e.full_states / res["distinct_states"], 3)


def _validate_requirements(where: str, c: dict[str, Any]) -> dict[str, Any]:
    """The entry's ``require_*`` keys, checked; ConfigError (one line) naming a bad one.

    >>> _validate_requirements("s: check 1", {"require_transitions": 0.5, "require_witnesses": True})
    {'require_transitions': 0.5, 'require_witnesses': True}
    >>> _validate_requirements("s: check 1", {"require_actions": "some"})
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: s: check 1: require_actions must be "all" or a list of action kinds, got 'some'
    """
    out: dict[str, Any] = {}
    for key in sorted(_REQUIRE_KEYS & set(c)):
        v = c[key]
        strings = isinstance(v, list) and all(isinstance(x, str) and x for x in v)
        if key == "require_actions":
            if v != "all" and not strings:
                raise ConfigError(
                    f'{where}: require_actions must be "all" or a list of action kinds, got {v!r}'
                )
            v = "all" if v == "all" else tuple(v)
        elif key == "require_transitions":
            if isinstance(v, bool) or (not (isinstance(v, (int, float)) and 0 <= v <= 1) and not strings):
                raise ConfigError(
                    f"{where}: require_transitions must be a fraction in [0, 1] or a list like "
                    f'["partition/OfflinePartition->OnlinePartition"], got {v!r}'
                )
            if strings:
                edges = _state_machine_edges()
                for x in v:
                    if x not in edges:
                        raise ConfigError(
                            f"{where}: require_transitions: {x!r} is no edge of the partition or replica "
                            "state machine (write machine/From->To)"
                        )
                v = tuple(v)
            else:
                v = float(v)
        elif key == "require_labels":
            if not strings or any(len(x.split("/")) < 2 for x in v):
                raise ConfigError(
                    f'{where}: require_labels must be a list of label paths like "elections/offline/isr", got {v!r}'
                )
            v = tuple(v)
        elif not isinstance(v, bool):
            raise ConfigError(f"{where}: {key} must be true or false, got {v!r}")
        out[key] = v
    return out


def _state_machine_edges() -> set[str]:
    """Every edge of the partition and replica state machines, as ``machine/From->To``.

    Read from the coverage labels (``state_machines/...``) the controller model declares,
    reached through the model registry.

    >>> "partition/OfflinePartition->OnlinePartition" in _state_machine_edges()
    True
    """
    spec = registry().get_model(_STATE_MACHINE_MODEL)
    system = spec.build(load_config(spec.config_cls))
    return {"/".join(lb[1:]) for lb in system.coverage_labels() if lb[0] == "state_machines"}


def _check_action_kinds(model: str, spec: Any, config: Any, require: dict[str, Any]) -> None:
    """``require_actions`` names only action kinds the model declares (when it declares them)."""
    system = spec.build(config)
    kinds = getattr(system, "action_kinds", None)
    if kinds is None:
        return
    declared = set(kinds())
    for k in require["require_actions"]:
        if k not in declared:
            raise ConfigError(
                f"require_actions: {k!r} is not an action kind of {model} (kinds: {', '.join(sorted(declared))})"
            )


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


def check_requirements(e: SuiteEntry, r: CheckResult) -> list[dict[str, Any]]:
    """Each coverage requirement of the entry: ``{"key", "required", "met", "detail"}``."""
    out: list[dict[str, Any]] = []
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


def _expectation(e: SuiteEntry, r: CheckResult) -> tuple[str, str]:
    """(status, message) of the entry's expectation alone."""
    violated = sorted({v.property for v in r.violations})
    if e.expect == "hold":
        if violated:
            return "fail", "violated: " + ", ".join(violated)
        if r.exit_reason.value != "complete":
            return "budget", f"{r.exit_reason.value} ({r.budget}) before the search completed"
        return "pass", "every property held; search complete"
    if sorted(e.violates) == violated:
        return "pass", "the expected violations were found: " + ", ".join(violated)
    if r.exit_reason.value not in ("complete", "violation"):
        return "budget", f"{r.exit_reason.value} ({r.budget}); found {violated}"
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


def _not_run(e: SuiteEntry) -> CheckResult:
    """The placeholder result of an entry the release never ran (it was interrupted first)."""
    return not_run_result(e.model, e.engine, "not run: the release was interrupted before this entry")


def _run_dir(report_dir: str) -> tuple[str, Path]:
    """A new, unused ``report_dir/<run-id>`` (a suffix ``-2``, ``-3``, ... when two runs
    start in the same second): created here, so no two runs ever share a folder."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
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


def _write_text_atomic(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file in its folder, then rename it into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"--mutation {path}: cannot be read ({type(e).__name__})") from None
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
) -> int:
    """Run every entry of the suite, print a summary, write ``report.json``,
    ``index.html`` and ``junit.xml`` under ``report_dir/<run-id>/`` (``latest``
    points there). ``mutation`` names a ``kafka-mc mutate --json`` result whose score and
    survivors the report shows.

    Every entry is loaded and checked before the first search. An interrupt (Ctrl-C,
    SIGTERM) ends the entry that runs, marks the rest ``not-run``, still writes the
    report, and exits 3 (unless an entry failed: 1). ``entries_named`` (comma-separated) runs
    those entries only.
    """
    entries = select_entries(load_suite(suite_path), entries_named, suite_path)
    mutation_doc = None if mutation is None else mutation_summary(_read_mutation(mutation))
    if os.path.exists(report_dir) and not os.path.isdir(report_dir):
        raise ConfigError(f"--report-dir {report_dir}: not a directory")
    try:
        run_id, out = _run_dir(report_dir)
    except OSError as err:
        raise ConfigError(f"--report-dir {report_dir}: cannot create a run folder ({err.strerror})") from None
    t_start = time.monotonic()
    prov = provenance(
        suite_path,
        {"entries": entries_named, "mutation": mutation, "report_dir": report_dir, "quiet": quiet},
    )
    done: list[tuple[SuiteEntry, CheckResult, str, str, list[dict[str, Any]]]] = []
    arrows: dict[str, list[list[list[str]] | None]] = {}
    interrupted = False
    for e in entries:
        if interrupted:
            done.append((e, _not_run(e), "not-run", "not run: the release was interrupted", []))
            continue
        print(f"[{len(done) + 1}/{len(entries)}] {e.name}: {e.model} ({e.engine}) ...", flush=True)
        try:
            if e.engine == "symbolic":
                r = run_proofs(e.model, e.set, None, e.max_seconds, None if quiet else Progress())
            else:
                options = CheckOptions(
                    engine=e.engine,
                    max_seconds=e.max_seconds,
                    max_states=e.max_states,
                    reduce=e.reduce,
                    keep_going=e.expect == "violation",
                    progress=None if quiet else Progress(),
                )
                r, system, _ = run_check(e.model, options, config_path=e.config, overrides=e.set)
                arrows[e.name] = [
                    sequence_of(system, [{"action": s.action, "fingerprint": s.fingerprint} for s in v.trace])
                    for v in r.violations
                ]
        except KeyboardInterrupt:
            interrupted = True
            done.append((e, _not_run(e), "not-run", "not run: the release was interrupted", []))
            continue
        if r.exit_reason is ExitReason.INTERRUPTED or stop_requested():
            interrupted = True
        reqs = check_requirements(e, r)
        status, msg = _verdict(e, r, reqs)
        done.append((e, r, status, msg, reqs))
        print(format_result(r, steps=False))
        for q in reqs:
            print(f"  coverage {q['key']}: {'met' if q['met'] else 'UNMET'} ({q['detail']})")
        print(f"  => {status.upper()}: {msg}\n", flush=True)
    doc_entries = []
    for e, r, s, m, reqs in done:
        res = r.to_json()
        for v, seq in zip(res["violations"], arrows.get(e.name, [])):
            if seq is not None:
                v["sequence"] = seq
        doc_entries.append(
            {
                "name": e.name,
                "expect": e.expect,
                "reduce": e.reduce,
                "full_states": e.full_states,
                "reduction_factor": reduction_factor(e, res),
                "violates": list(e.violates),
                "status": s,
                "message": m,
                "requirements": reqs,
                "variants": variants_of(res["config"]),
                "result": res,
            }
        )
    doc: dict[str, Any] = {
        "schema": "kafka-mc/release-report/2",
        "run_id": run_id,
        "suite": prov["suite"],
        "provenance": prov,
        "summary": suite_summary(doc_entries, time.monotonic() - t_start),
        "entries": doc_entries,
    }
    if interrupted:
        doc["interrupted"] = True
    if mutation_doc is not None:
        doc["mutation"] = mutation_doc
    write_json_atomic(out / "report.json", doc)
    _write_text_atomic(out / "index.html", render_html(doc))
    junit = _junit(done, prov)
    ET.indent(junit)
    _write_text_atomic(
        out / "junit.xml",
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(junit, encoding="unicode") + "\n",
    )
    _point_latest(report_dir, run_id)
    failed = [e.name for e, _, s, _, _ in done if s == "fail"]
    budget = [e.name for e, _, s, _, _ in done if s == "budget"]
    not_run = [e.name for e, _, s, _, _ in done if s == "not-run"]
    ran = len(done) - len(not_run)
    summ = doc["summary"]
    sm = ", ".join(
        f"{m} state machine {x['covered']}/{x['edges']} edges" for m, x in summ["state_machines"].items()
    )
    print(
        f"release: {ran - len(failed) - len(budget)}/{len(done)} passed in {summ['wall_seconds']:.1f} s "
        f"(search {summ['search_seconds']:.1f} s); coverage: {sm or 'no state machines'}, action kinds "
        f"{summ['action_kinds']['enabled']}/{summ['action_kinds']['declared']} enabled; report in {out}"
    )
    if interrupted:
        print(f"release: interrupted; not run: {', '.join(not_run) or 'none'}")
    if mutation_doc is not None:
        print(f"release: mutation score {mutation_doc['line']}")
    if failed:
        print(f"release: FAILED: {', '.join(failed)}")
        return 1
    if budget or interrupted:
        if budget:
            print(f"release: out of budget: {', '.join(budget)}")
        return 3
    return 0
