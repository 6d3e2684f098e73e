"""Counterexample trace files: writing them, reading them, and replaying them; and the checks
of the other JSON files the tool reads back (a mutation result: :func:`mutation_problem`).

A trace file is JSON (schema ``kafka-mc/trace/1``) holding the model (or the
``--system`` factory), its configuration, the violated property and the steps, each
with the action's text and the state's fingerprint. :func:`replay` rebuilds the
system, starts from the initial state with the first fingerprint, and at every step
looks for the enabled action with that text whose next state has that fingerprint.

Example
-------
>>> class Two:
...     def init_states(self): return [0]
...     def successors(self, s): return [("inc", s + 1)] if s < 2 else []
>>> from explorer.search import build_trace
>>> steps = build_trace(Two(), {0: None, 1: 0, 2: 1}, 2)
>>> out = replay_steps(Two(), [{"action": s.action, "fingerprint": s.fingerprint} for s in steps])
>>> [s for s in out]
[0, 1, 2]
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from explorer.config import did_you_mean
from explorer.core import Violation
from explorer.datafiles import DataFileError, check_digest, model_digest, read_json
from explorer.encoding import fingerprint

__all__ = ["TRACE_SCHEMA", "ReplayError", "load_trace", "replay_steps", "trace_document", "write_json_atomic"]

TRACE_SCHEMA = "kafka-mc/trace/1"


class ReplayError(Exception):
    """A trace that does not replay: one line naming the step that diverged."""


def trace_document(
    model: str, config: dict[str, Any], violation: Violation, system_ref: str | None = None
) -> dict[str, Any]:
    """The JSON document of one counterexample (see README, "Trace files"): it names its model
    (and ``system``, the ``--system`` it was made with) and records ``digest``, the
    :func:`explorer.datafiles.model_digest` of its model and configuration, which
    :func:`load_trace` checks."""
    doc: dict[str, Any] = {
        "schema": TRACE_SCHEMA,
        "model": model,
        "config": config,
        "property": violation.property,
        "kind": violation.kind,
        "doc": violation.doc,
        "length": violation.length,
        "explanation": list(violation.explanation),
        "steps": [asdict(s) for s in violation.trace],
        "loop_start": violation.loop_start,
    }
    if system_ref is not None:
        doc["system"] = system_ref
    doc["digest"] = model_digest(model, config)
    return doc


def trace_file_name(model: str, prop: str, suffix: str = "") -> str:
    """The one naming scheme of trace files: ``<model>-<property><suffix>.json`` (a ``--system``
    model's ``package.module:factory`` with ``_`` for ``:``), as ``check --save-traces`` and
    ``shrink`` write them.

    >>> trace_file_name("controller", "zk_writes_fenced"), trace_file_name("m.toys:grid", "p", "-shrunk")
    ('controller-zk_writes_fenced.json', 'm.toys_grid-p-shrunk.json')
    """
    return f"{model.replace(':', '_')}-{prop}{suffix}.json"


def write_json_atomic(path: str | os.PathLike[str], doc: Any) -> None:
    """Write JSON to ``path`` through a temporary file, so nothing is half-written. An
    OSError (a full disk, a folder gone) names ``path``, not the temporary file. The temporary
    file is a new name (``mkstemp``: ``O_EXCL``) and a link at ``path`` is replaced by the
    rename, never written through.

    >>> write_json_atomic("/nonexistent-dir/r.json", {})
    Traceback (most recent call last):
    ...
    FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent-dir/r.json'
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".kafka-mc-", suffix=".json", dir=directory)
    except OSError as e:
        raise type(e)(e.errno, e.strerror, os.fspath(path)) from None
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes it private (the descriptor: never a link put at tmp)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1, default=str)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.errno is not None:
            raise type(e)(e.errno, e.strerror, os.fspath(path)) from None
        raise


def load_trace(path: str, prop: str | None = None) -> dict[str, Any]:
    """Read a trace file, or pick one violation out of a ``check --json`` result file.

    The file is read as data (:func:`explorer.datafiles.read_json`: bounded size and depth) and
    nothing it names is loaded: its ``system``, if any, is only returned, for the caller to
    compare with the ``--system`` the user gave (:func:`explorer.datafiles.check_named_system`).
    A ``digest`` that does not match the file's model and configuration is refused. Raises
    ReplayError (one line) for anything that is not such a file.

    >>> load_trace("/nonexistent.json")
    Traceback (most recent call last):
    ...
    explorer.tracefile.ReplayError: /nonexistent.json: no such file
    """
    try:
        doc = read_json(path)
        if isinstance(doc, dict):
            check_digest(doc, path)  # a model or configuration edited after the file was written
    except DataFileError as e:
        raise ReplayError(str(e)) from None
    if not isinstance(doc, dict):
        raise ReplayError(f"{path}: not a kafka-mc trace or result file")
    if doc.get("schema") == "kafka-mc/check-result/1":
        listed = doc.get("violations", [])
        if not isinstance(listed, list) or not all(isinstance(v, dict) for v in listed):
            raise ReplayError(f"{path}: 'violations' must be a list of objects")
        vs = [v for v in listed if v.get("trace")]
        named = [str(v.get("property")) for v in vs]
        if prop is not None:
            vs = [v for v in vs if v.get("property") == prop]
        if not vs:
            what = f"of property {prop!r} " if prop else ""
            hint = f"{did_you_mean(prop, named)} (it holds: {', '.join(named)})" if prop and named else ""
            raise ReplayError(f"{path}: the result holds no counterexample {what}to replay{hint}")
        v = vs[0]
        if not all(k in v for k in ("property", "kind", "length")):
            raise ReplayError(f"{path}: a violation lacks its property, kind or length")
        doc = {
            "schema": TRACE_SCHEMA,
            "model": doc.get("model"),
            "config": doc.get("config", {}),
            "property": v["property"],
            "kind": v["kind"],
            "doc": v.get("doc", ""),
            "length": v["length"],
            "steps": v["trace"],
            "loop_start": v.get("loop_start"),
            **({"system": doc["system"]} if "system" in doc else {}),
        }
    if doc.get("schema") != TRACE_SCHEMA:
        raise ReplayError(f"{path}: schema is {doc.get('schema')!r}, expected {TRACE_SCHEMA!r}")
    steps = doc.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ReplayError(f"{path}: 'steps' must be a non-empty list")
    for i, st in enumerate(steps):
        if not isinstance(st, dict) or "fingerprint" not in st or (i > 0 and not st.get("action")):
            raise ReplayError(f"{path}: step {i} lacks an action or a fingerprint")
        if not isinstance(st["fingerprint"], str) or (i > 0 and not isinstance(st["action"], str)):
            raise ReplayError(f"{path}: step {i}: the action and the fingerprint must be strings")
    for k in ("model", "property"):
        if not isinstance(doc.get(k), str) or not doc[k]:
            raise ReplayError(f"{path}: {k!r} must be a non-empty string")
    if not isinstance(doc.get("config", {}), dict):
        raise ReplayError(f"{path}: 'config' must be an object")
    if "system" in doc and not isinstance(doc["system"], str):
        raise ReplayError(f"{path}: 'system' must be a string")
    loop = doc.get("loop_start")
    if loop is not None and (
        isinstance(loop, bool) or not isinstance(loop, int) or not 0 <= loop < len(steps)
    ):
        raise ReplayError(f"{path}: 'loop_start' must be a step index (0 to {len(steps) - 1}), got {loop!r}")
    return doc


def replay_steps(system: Any, steps: Iterable[dict[str, Any]]) -> list[Any]:
    """Re-execute steps on ``system``; return the states, or raise ReplayError.

    Step 0 names an initial state by fingerprint; each later step names an action
    (its text) that must be enabled and lead to a state with the given fingerprint.
    """
    steps = list(steps)
    fp0 = steps[0]["fingerprint"]
    current = next((s for s in system.init_states() if f"{fingerprint(s):016x}" == fp0), None)
    if current is None:
        raise ReplayError(f"step 0: no initial state has fingerprint {fp0}")
    states = [current]
    for i, st in enumerate(steps[1:], start=1):
        want_action, want_fp = st["action"], st["fingerprint"]
        same_text = [(a, t) for a, t in system.successors(current) if str(a) == want_action]
        if not same_text:
            raise ReplayError(f"step {i}: action not enabled: {want_action}")
        match = next((t for _, t in same_text if f"{fingerprint(t):016x}" == want_fp), None)
        if match is None:
            got = f"{fingerprint(same_text[0][1]):016x}"
            raise ReplayError(
                f"step {i}: state after '{want_action}' has fingerprint {got}, trace says {want_fp}"
            )
        current = match
        states.append(current)
    return states


#: the statuses a mutant of a ``kafka-mc mutate`` result can have
MUTANT_STATUSES = ("killed", "survived", "timeout", "crashed", "equivalent", "not run", "not covered")


def mutation_problem(doc: dict[str, Any]) -> str | None:
    """What is wrong with the fields of a mutation result the report reads (the first key
    whose value is off, named), or None.

    >>> mutation_problem({"score": {"score": 0.5, "killed": 1, "considered": 2}, "entries": [{"name": "e"}],
    ...                   "mutants": [{"name": "m", "status": "killed"}]}) is None
    True
    >>> mutation_problem({"score": {"score": "high"}, "entries": [], "mutants": []})
    "score.score: expected a number from 0 to 1 or null, got 'high'"
    """

    def nonneg_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    sc = doc.get("score")
    if not isinstance(sc, dict):
        return f"score: expected an object, got {sc!r:.40}"
    v = sc.get("score")
    if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1 or v != v):
        return f"score.score: expected a number from 0 to 1 or null, got {v!r:.40}"
    for key in ("killed", "considered"):
        if key in sc and not nonneg_int(sc[key]):
            return f"score.{key}: expected a whole number >= 0, got {sc[key]!r:.40}"
    for key in ("entries", "mutants"):
        items = doc.get(key, [])
        if not isinstance(items, list):
            return f"{key}: expected a list, got {items!r:.40}"
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                return f"{key}[{i}].name: expected a string, got {item.get('name') if isinstance(item, dict) else item!r:.40}"
            if key == "mutants":
                if item.get("status") not in MUTANT_STATUSES:
                    return f"mutants[{i}].status: expected one of {', '.join(MUTANT_STATUSES)}, got {item.get('status')!r:.40}"
                if not isinstance(item.get("doc", ""), str):
                    return f"mutants[{i}].doc: expected a string, got {item.get('doc')!r:.40}"
    cov = doc.get("line_coverage")
    if cov is not None:
        if not isinstance(cov, dict) or not isinstance(cov.get("files"), dict):
            return f"line_coverage: expected an object with files, got {cov!r:.40}"
        for key in ("statements", "executed"):
            if not nonneg_int(cov.get(key)):
                return f"line_coverage.{key}: expected a whole number >= 0, got {cov.get(key)!r:.40}"
        for name, f in cov["files"].items():
            ok = isinstance(f, dict) and nonneg_int(f.get("statements")) and nonneg_int(f.get("executed"))
            if not ok or not isinstance(f.get("missed"), list) or not all(nonneg_int(x) for x in f["missed"]):
                return f"line_coverage.files.{name}: expected statements, executed and missed lines, got {f!r:.40}"
            functions = f.get("functions", {})
            if not isinstance(functions, dict):
                return f"line_coverage.files.{name}.functions: expected an object, got {functions!r:.40}"
            for fn, g in functions.items():
                good = isinstance(g, dict) and isinstance(g.get("lines"), list) and g["lines"]
                if (
                    not good
                    or not all(nonneg_int(x) for x in g["lines"])
                    or not isinstance(g.get("why"), (str, type(None)))
                ):
                    return f"line_coverage.files.{name}.functions.{fn}: expected lines and a reason or null, got {g!r:.40}"
        if "explained" in cov and not nonneg_int(cov["explained"]):
            return f"line_coverage.explained: expected a whole number >= 0, got {cov['explained']!r:.40}"
    return None
