"""The release suite: run every check of a suite file and publish the results.

A suite is TOML with one ``[[check]]`` table per entry::

    [[check]]
    name = "timing-wheel-ref"          # unique; used in the report and JUnit
    model = "timing-wheel"             # a registered model (or, with engine "symbolic", a proof target)
    config = "timing-wheel-ref.toml"   # relative to the suite file
    set = ["tick_ms=1"]                # optional overrides
    engine = "bfs"
    max_seconds = 600                  # the entry's budget
    expect = "hold"                    # or "violation": the model is known broken
    violates = ["deadlock"]            # with expect = "violation": exactly these

An entry passes when its expectation is met: ``hold`` means the search completed
and every property held; ``violation`` means the search (run with ``--continue``)
found exactly the listed properties violated — a guard that known bugs of a model
written "as printed" stay found. The run exits 1 if any entry failed, 3 if an entry
ran out of budget (and none failed), 0 otherwise.
"""

from __future__ import annotations

import datetime as _dt
import os
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.bfs import Progress
from explorer.config import ConfigError
from explorer.core import CheckResult
from explorer.report import render_html
from explorer.tracefile import write_json_atomic

__all__ = ["SuiteEntry", "load_suite", "run_release"]

_KEYS = {"name", "model", "config", "set", "engine", "max_seconds", "max_states", "expect", "violates"}


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
    expect: str = "hold"
    violates: tuple[str, ...] = field(default=())


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
    checks = doc.get("check")
    if not isinstance(checks, list) or not checks:
        raise ConfigError(f"{path}: no [[check]] entries")
    base = os.path.dirname(os.path.abspath(path))
    entries: list[SuiteEntry] = []
    seen: set[str] = set()
    for i, c in enumerate(checks):
        where = f"{path}: check {i + 1}"
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
        violates = tuple(c.get("violates", ()))
        if expect == "violation" and not violates:
            raise ConfigError(f"{where}: expect = 'violation' needs the list 'violates'")
        cfg = c.get("config")
        entries.append(
            SuiteEntry(
                name=c["name"],
                model=c["model"],
                config=None if cfg is None else os.path.join(base, cfg),
                set=tuple(c.get("set", ())),
                engine=c.get("engine", "bfs"),
                max_seconds=c.get("max_seconds"),
                max_states=c.get("max_states"),
                expect=expect,
                violates=violates,
            )
        )
    return entries


def _verdict(e: SuiteEntry, r: CheckResult) -> tuple[str, str]:
    """(status, message): status is pass, fail or budget."""
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


def _junit(entries: list[tuple[SuiteEntry, CheckResult, str, str]]) -> ET.Element:
    root = ET.Element("testsuites", name="kafka-mc release")
    for e, r, status, msg in entries:
        suite = ET.SubElement(
            root,
            "testsuite",
            name=e.name,
            tests=str(len(r.properties) + 1),
            failures="0",
            time=f"{r.seconds:.3f}",
        )
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
        suite.set("failures", str(fails))
    return root


def run_release(suite_path: str, *, report_dir: str = "reports", quiet: bool = False) -> int:
    """Run every entry of the suite, print a summary, write ``report.json``,
    ``index.html`` and ``junit.xml`` under ``report_dir/<run-id>/`` (``latest``
    points there)."""
    from explorer.cli import format_result, run_check

    entries = load_suite(suite_path)
    run_id = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    done: list[tuple[SuiteEntry, CheckResult, str, str]] = []
    for e in entries:
        print(f"[{len(done) + 1}/{len(entries)}] {e.name}: {e.model} ({e.engine}) ...", flush=True)
        if e.engine == "symbolic":
            from explorer.cli import _run_proofs

            r = _run_proofs(e.model, e.set, None, e.max_seconds)
            status, msg = _verdict(e, r)
            done.append((e, r, status, msg))
            print(format_result(r, steps=False))
            print(f"  => {status.upper()}: {msg}\n", flush=True)
            continue
        r, _, _ = run_check(
            e.model,
            config_path=e.config,
            overrides=e.set,
            engine=e.engine,
            max_seconds=e.max_seconds,
            max_states=e.max_states,
            keep_going=e.expect == "violation",
            progress=None if quiet else Progress(),
        )
        status, msg = _verdict(e, r)
        done.append((e, r, status, msg))
        print(format_result(r, steps=False))
        print(f"  => {status.upper()}: {msg}\n", flush=True)
    out = Path(report_dir) / run_id
    out.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {
        "schema": "kafka-mc/release-report/1",
        "run_id": run_id,
        "suite": os.path.abspath(suite_path),
        "entries": [
            {
                "name": e.name,
                "expect": e.expect,
                "violates": list(e.violates),
                "status": s,
                "message": m,
                "result": r.to_json(),
            }
            for e, r, s, m in done
        ],
    }
    write_json_atomic(out / "report.json", doc)
    (out / "index.html").write_text(render_html(doc), encoding="utf-8")
    tree = ET.ElementTree(_junit(done))
    ET.indent(tree)
    tree.write(out / "junit.xml", encoding="utf-8", xml_declaration=True)
    latest = Path(report_dir) / "latest"
    if latest.is_symlink() or latest.exists():
        latest.unlink()
    latest.symlink_to(run_id)
    failed = [e.name for e, _, s, _ in done if s == "fail"]
    budget = [e.name for e, _, s, _ in done if s == "budget"]
    total = sum(r.seconds for _, r, _, _ in done)
    print(
        f"release: {len(done) - len(failed) - len(budget)}/{len(done)} passed in {total:.1f} s; report in {out}"
    )
    if failed:
        print(f"release: FAILED: {', '.join(failed)}")
        return 1
    if budget:
        print(f"release: out of budget: {', '.join(budget)}")
        return 3
    return 0
