"""The ``kafka-mc mutate --results FILE`` file: what a stopped mutation run already measured.

A JSON-lines file: a header (the run's entries, options and ``code``, the digest of the model's
code its verdicts belong to), then one record per line (``baseline``, ``lines``, ``mutant``),
appended as each finishes. A run started again on the file reuses what it holds, after checking
that the file was written for this run and this code: every line is read as data
(:mod:`explorer.datafiles`), and a header or record that is off is a one-line refusal naming it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.datafiles import DataFileError, loads_json
from explorer.frontend import UsageError, model_spec, system_module
from explorer.search import safeio
from explorer.tracefile import MUTANT_STATUSES

if TYPE_CHECKING:
    from explorer.suite import SuiteEntry

__all__ = ["SCHEMA", "model_code_digest"]

#: the schema of ``kafka-mc mutate --json`` results and of a results file's header
SCHEMA = "kafka-mc/mutation/1"
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _portable(config: str | None) -> str | None:
    """A configuration path as a results file records it: relative to the project when inside it,
    so a results file resumes in another clone (``/work/main/configs/a.toml`` -> ``configs/a.toml``)."""
    if config is None:  # a model with its embedded default configuration
        return None
    try:
        return Path(config).resolve().relative_to(PROJECT_ROOT.resolve()).as_posix()
    except ValueError:
        return config


def _open_results(
    results: Path | None, entries: list[SuiteEntry], keep_going: bool, first_kill: bool, crash_kills: bool
) -> dict[str, Any]:
    """What a results file holds from an earlier run (``{"baseline": cells, "mutants": {name:
    record}}``), after checking it was written for this run; a new file gets its header."""
    if results is None:
        return {}
    header = {
        "schema": SCHEMA,
        "entries": sorted([e.name, _portable(e.config), list(e.set), e.max_seconds] for e in entries),
        "keep_going": keep_going,
        "first_kill": first_kill,
        "crash_kills": crash_kills,
        "code": model_code_digest(entries[0].model) if entries else None,
    }
    if not results.exists() or results.stat().st_size == 0:
        results.parent.mkdir(parents=True, exist_ok=True)
        safeio.write_atomic(results, (json.dumps({"header": header}) + "\n").encode(), sync=False)
        return {}
    out: dict[str, Any] = {"mutants": {}}
    data = results.read_bytes()
    if not data.endswith(b"\n"):  # a line torn by a kill: dropped, so the next one starts clean
        safeio.truncate(results, data.rfind(b"\n") + 1)  # never through a link (refused)
        data = data[: data.rfind(b"\n") + 1]
    where = f"--results {results}"
    try:
        lines = data.decode("utf-8").splitlines()
        first = loads_json(lines[0], f"{where}: line 1")["header"]
        if not isinstance(first, dict):
            raise TypeError
    except (ValueError, KeyError, IndexError, TypeError):  # DataFileError is a ValueError
        raise UsageError(f"{where}: not a results file of kafka-mc mutate") from None
    for k, v in header.items():
        if k == "code" and k not in first:
            continue  # a file of before the code digest was recorded: its verdicts are trusted as before
        if json.loads(json.dumps(v)) != first.get(k):
            if k == "code":
                raise UsageError(
                    f"{where}: its header's 'code' ({str(first.get(k))[:20]}) is not the digest of this "
                    f"model's code ({v}): its verdicts are another version's; use a new file"
                )
            raise UsageError(
                f"{where}: written by another run (its {k} setting is not this run's); use a new file"
            )
    for i, line in enumerate(lines[1:], start=2):
        try:
            d = loads_json(line, f"{where}: line {i}")
        except DataFileError as e:
            if "not JSON" in str(e):  # a line cut by a kill: that mutant runs again
                continue
            raise UsageError(str(e)) from None
        problem = _record_problem(d)
        if problem is not None:
            raise UsageError(f"{where}: line {i}: {problem}")
        if "baseline" in d:
            out["baseline"] = d["baseline"]
        elif "lines" in d:
            out["lines"] = d["lines"]
        elif "mutant" in d:
            out["mutants"][d["mutant"]["name"]] = d["mutant"]
    return out


def _record_problem(d: Any) -> str | None:
    """What is wrong with one record of a results file (the field named), or None.

    >>> _record_problem({"mutant": {"name": "m", "status": "killed", "cells": {}}}) is None
    True
    >>> _record_problem({"baseline": {"e": {"status": 3}}})
    'baseline.e.status: expected a string'
    """
    if not isinstance(d, dict) or len(d) != 1 or next(iter(d)) not in ("baseline", "lines", "mutant"):
        return "expected one of the records baseline, lines, mutant"
    kind, rec = next(iter(d.items()))
    if not isinstance(rec, dict):
        return f"{kind}: expected an object"
    if kind == "baseline":
        for name, cell in rec.items():
            if not isinstance(cell, dict) or not isinstance(cell.get("status"), str):
                return f"baseline.{name}.status: expected a string"
    elif kind == "lines":
        if not isinstance(rec.get("by_entry"), dict) or not isinstance(rec.get("partial"), list):
            return "lines: expected by_entry (an object) and partial (a list)"
    else:
        if not isinstance(rec.get("name"), str) or rec.get("status") not in MUTANT_STATUSES:
            return f"mutant: expected a name and a status ({', '.join(MUTANT_STATUSES)})"
        cells = rec.get("cells", {})
        if not isinstance(cells, dict) or not all(isinstance(c, dict) for c in cells.values()):
            return f"mutant {rec['name']!r:.40}: cells: expected an object of objects"
    return None


def model_code_digest(model: str) -> str:
    """The digest of the code a mutation verdict depends on: the source of the packages behind
    ``model``'s system class and its properties (:func:`explorer.search.checkpoint.code_digest`),
    which a ``--results`` file's header records; a file of other code is refused.

    >>> model_code_digest("tests.toys:grid") == model_code_digest("tests.toys:Grid")
    True
    """
    from explorer.search.checkpoint import code_digest, module_code_digest

    if ":" in model:  # the --system of the command line
        return module_code_digest([system_module(model).__name__])
    from explorer.config import load_config

    spec = model_spec(model)
    config = load_config(spec.config_cls)
    return code_digest(spec.build(config), [p.check for p in spec.properties(config)])
