"""``kafka-mc mutate``: how many bugs would the checks catch? A mutation harness.

It runs mutants of a model against chosen checks (release-suite entries, or one
``--config`` with ``--set``) and prints a kill matrix: per mutant and entry, the
property that killed it and the length of its counterexample, or ``survived`` (the
entry passed: every expectation met), ``timeout`` (the budget ran out first) or
``crashed`` (the mutant failed to import or raised). Two kinds of mutants:

- **catalogue mutants**: every name the model's config key ``mutant`` accepts except
  ``none`` (for ``--system module:factory``, the names of the module's ``MUTANTS``),
  selected with ``--set mutant=NAME``;
- **source mutants**: small changes generated from the AST of the model's source
  (:mod:`explorer.mutation.source`; by default the files of the package that defines the
  model's system class, ``--exclude coverage.py``), sampled with ``--sample N --seed S``.
  A source mutant runs on a copy: the top-level package holding the file is copied to a
  temporary directory, the one file patched, and the check run in a subprocess whose
  ``PYTHONPATH`` puts that directory first. The project's tree is never modified.

Every mutant (and, first, the unmutated model: the baseline, which must pass each
entry) runs in its own subprocess (``python -m explorer.mutation.command JOB``) with a hard time
limit. An entry's verdict is the release suite's (``explorer.release``): a mutant is
**killed** by an entry the release suite would fail (a property expected to hold
violated, a witness or coverage requirement unmet). The score is killed / (mutants not
marked equivalent); ``--crash-kills`` counts crashed mutants as killed. Equivalent
mutants (a change that cannot alter behaviour) are listed, with a one-line reason each,
in a TOML file (``--equivalent``; default ``invariants/mutants/<model>_equivalent.toml``)
keyed by catalogue name or source-mutant key (``file::Class.method@path:operator``, which
survives edits outside the function; an id ``file:line:col:operator`` is read too); they are
reported but neither run nor scored. A source mutant is named by its id in a run's output and
results (the code a results file measured is pinned by its header's digest), so a results
file written before the keys is read as it was.

``--json FILE`` writes the matrix (schema ``kafka-mc/mutation/1``), which
``kafka-mc release --mutation FILE`` summarises in the release report.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from explorer.api import CheckOptions
from explorer.config import ConfigError, did_you_mean, load_config
from explorer.datafiles import DataFileError, read_toml
from explorer.frontend import (
    MAX_WORKERS,
    MUTATE_HELP,
    SECONDS,
    SEED,
    Bounded,
    UsageError,
    check_output_path,
    model_spec,
    positive,
    run_check,
    system_module,
)
from explorer.mutation.line_coverage import entries_for_mutant, model_coverage
from explorer.mutation.results import SCHEMA, _open_results
from explorer.mutation.results import _portable as _portable  # where the tests find it
from explorer.mutation.score import (
    CRASHED,
    EQUIVALENT,
    KILLED,
    NOT_COVERED,
    NOT_RUN,
    SURVIVED,
    TIMEOUT,
    format_matrix,
    mutant_status,
    score_of,
)
from explorer.mutation.source import SourceMutant, apply_mutant, generate_files, resolve_keys, sample
from explorer.native import PURE_ENV
from explorer.release import SuiteEntry, _verdict, check_requirements, load_suite, pinned_lengths_moved
from explorer.search import safeio
from explorer.tracefile import write_json_atomic

__all__ = ["SCHEMA", "add_parser", "run_mutants", "score_of"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: the traced run that finds each entry's lines gets this many times the entry's budget
TRACE_SLOWDOWN = 3.0
#: seconds a worker may take beyond its entries' budgets (imports, building, coverage)
WORKER_SLACK = 60.0
MIN_MUTANT_SECONDS = 10.0  #: with ``--timeout-factor``, the least budget of a mutant on an entry
TIMEOUT_FACTOR_HELP = "a mutant's budget on an entry: F times the baseline's time there (10 s at least)"


# -- what to run ------------------------------------------------------------------------------


def _entries(args: argparse.Namespace) -> list[SuiteEntry]:
    """The entries each mutant runs against, with the budget and the ``--set`` overrides."""
    if (args.suite is None) == (args.config is None and args.system is None):
        raise UsageError("give --suite FILE --entries NAMES, or --config FILE / --system MODULE:FACTORY")
    if args.suite is not None:
        suite = {e.name: e for e in load_suite(args.suite)}
        names = [n for n in (args.entries or "").split(",") if n]
        if not names:
            raise UsageError("--entries: name the suite entries to run (comma-separated)")
        unknown = [n for n in names if n not in suite]
        if unknown:
            raise UsageError(
                f"--entries: {unknown[0]!r} is not in {args.suite}{did_you_mean(unknown[0], suite)} "
                f"(has: {', '.join(suite)})"
            )
        chosen = [suite[n] for n in names]
        models = {e.model for e in chosen}
        if len(models) > 1 or (args.model and args.model not in models):
            raise UsageError(f"the entries check several models ({', '.join(sorted(models))}); mutate one")
        if any(e.engine == "symbolic" for e in chosen):
            raise UsageError("--entries: proof entries (engine symbolic) cannot be mutated")
    elif args.system is not None:
        chosen = [SuiteEntry(name="system", model=args.system)]
    else:
        if not args.model:
            raise UsageError("--config needs the MODEL")
        chosen = [
            SuiteEntry(name=Path(args.config).stem, model=args.model, config=os.path.abspath(args.config))
        ]
    scoped: dict[str, list[str]] = {}
    common: list[str] = []
    for s in args.set:
        head, sep, rest = s.partition(":")
        if sep and head in {e.name for e in chosen}:
            scoped.setdefault(head, []).append(rest)
        else:
            common.append(s)
    merged = [
        dataclasses.replace(
            e, set=(*e.set, *common, *scoped.get(e.name, [])), max_seconds=args.max_seconds, max_states=None
        )
        for e in chosen
    ]
    for e in merged:  # each entry's configuration with every override, before any worker runs
        if ":" not in e.model:
            try:
                load_config(model_spec(e.model).config_cls, e.config, list(e.set))
            except ConfigError as err:
                flag = "--set" if common or scoped.get(e.name) else "--config"
                raise UsageError(f"{flag}: entry {e.name}: {err}") from None
    return merged


def _catalogue(model: str) -> list[str]:
    """The model's catalogue mutant names, ``none`` left out: the choices of its config key
    ``mutant`` (registered model) or the names of ``MUTANTS`` in the factory's module."""
    if ":" in model:  # the --system of the command line
        module = system_module(model)
        cat = getattr(module, "MUTANTS", ())
        names = list(cat.names() if hasattr(cat, "names") else cat)
    else:
        fields = {f.name: f for f in dataclasses.fields(model_spec(model).config_cls)}
        f = fields.get("mutant")
        names = list(f.metadata.get("choices") or ()) if f is not None else []
    return [n for n in names if n != "none"]


def _default_sources(model: str) -> list[Path]:
    """The source files of a model: the package defining its system class (its ``*.py``, not
    recursive) or, for a top-level module or a class in a top-level package, that one file."""
    if ":" in model:  # the --system of the command line
        module = system_module(model)
    else:
        spec = model_spec(model)
        from explorer.config import load_config

        system = spec.build(load_config(spec.config_cls))
        module = sys.modules[type(system).__module__]
    path = Path(module.__file__ or "")
    if "." in (module.__package__ or "") or path.name == "__init__.py":  # e.g. model.controller.system
        return sorted(path.parent.glob("*.py"))
    return [path]


def _source_mutants(args: argparse.Namespace, model: str) -> list[SourceMutant]:
    if args.source:
        files: list[Path] = []
        for s in args.source:
            p = Path(s)
            files += sorted(p.glob("*.py")) if p.is_dir() else [p]
    else:
        files = _default_sources(model)
    files = [f for f in files if f.name not in set(args.exclude)]
    try:
        muts = generate_files(PROJECT_ROOT, files)
    except ValueError as e:
        raise UsageError(f"--source: {e}") from None
    if args.ids:
        want = args.ids.split(",")
        by_id = {**{m.key: m for m in muts}, **{m.id: m for m in muts}}
        missing = [i for i in want if i not in by_id]
        if missing:
            raise UsageError(f"--ids: no source mutant {missing[0]!r}")
        return [by_id[i] for i in want]
    if args.sample is None and not args.all_source:
        return []
    return sample(muts, args.sample, args.seed)


def load_equivalent(path: Path | None, table: str = "equivalent") -> dict[str, str]:
    """Mutant (name or id) -> why it is equivalent, from the TOML file's ``[equivalent]`` table
    (a source mutant's key, ``file::Class.method@path:operator``, is read as the id it names
    in today's code: :func:`explorer.mutation.source.resolve_keys`); with
    ``table="unreached"``, ``"file::Class.function"`` -> why no entry executes the statements of
    it that none does (:func:`explorer.mutation.line_coverage.model_coverage`)."""
    if path is None or not path.is_file():
        return {}
    try:
        doc = read_toml(path)
    except DataFileError as e:
        raise ConfigError(str(e)) from None
    found = doc.get(table, {})
    if not isinstance(found, dict) or not all(isinstance(v, str) and v for v in found.values()):
        key = "mutant" if table == "equivalent" else "file::function"
        raise ConfigError(f'{path}: expected an [{table}] table of "{key}" = "reason"')
    return resolve_keys(found, PROJECT_ROOT) if table == "equivalent" else dict(found)


# -- running one mutant -----------------------------------------------------------------------


def _entry_json(e: SuiteEntry) -> dict[str, Any]:
    return {**dataclasses.asdict(e), "set": list(e.set), "violates": list(e.violates)}


#: the mutant workers running now (``--jobs``: one per thread), killed when the harness is
#: interrupted, so that the first Ctrl-C stops ``kafka-mc mutate --jobs N`` at once
_LIVE: set[subprocess.Popen[bytes]] = set()
_LIVE_LOCK = threading.Lock()
_INTERRUPTED = threading.Event()


def _kill_workers() -> None:
    """Stop every running worker and start no new one (the harness was interrupted)."""
    with _LIVE_LOCK:
        _INTERRUPTED.set()
        for proc in _LIVE:
            if proc.poll() is None:
                proc.kill()


def _not_copied(folder: str, names: list[str]) -> set[str]:
    """What the copy of a mutant's package leaves out: ``__pycache__``, and a compiled module
    (a mypyc shim, issue 56) whose ``.py`` is there: the mutant is in the ``.py``.

    >>> sorted(_not_copied("m", ["__pycache__", "a.py", "a.cpython-311-x86_64-linux-gnu.so", "_c.abi3.so"]))
    ['__pycache__', 'a.cpython-311-x86_64-linux-gnu.so']
    """
    sources = {n.removesuffix(".py") for n in names if n.endswith(".py")}
    return {
        n for n in names if n == "__pycache__" or (n.endswith((".so", ".pyd")) and n.split(".")[0] in sources)
    }


def _run_worker(
    job: dict[str, Any],
    entries: list[SuiteEntry],
    *,
    source: SourceMutant | None,
    hard_limit: float,
    lines: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run one mutant's checks in a subprocess; each entry's cell by name (missing ones timeout).
    With ``lines`` (a job that traces), the lines each entry executed are put there."""
    with tempfile.TemporaryDirectory(prefix="kafka-mc-mutant-", ignore_cleanup_errors=True) as tmp:
        tmpdir = Path(tmp)
        out = tmpdir / "cells.jsonl"
        cwd = tmpdir / "run"
        cwd.mkdir()
        if source is not None:
            top = source.file.split("/")[0]
            shutil.copytree(PROJECT_ROOT / top, cwd / top, ignore=_not_copied)
            target = cwd / source.file
            target.write_text(apply_mutant(target.read_text(encoding="utf-8"), source), encoding="utf-8")
        job = {**job, "entries": [_entry_json(e) for e in entries], "out": str(out)}
        job["lines_out"] = str(tmpdir / "lines.json")
        (tmpdir / "job.json").write_text(json.dumps(job), encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(cwd), str(PROJECT_ROOT), env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        )
        env.pop("PYTHONSAFEPATH", None)
        # the pure-Python model (explorer.native): a mutant and line tracing need the .py, and a
        # compiled shim copied or found on the path would run the unmutated build instead
        env[PURE_ENV] = "1"
        cmd = [sys.executable, "-m", "explorer.mutation.command", str(tmpdir / "job.json")]
        t0 = time.monotonic()
        with open(tmpdir / "stderr", "wb") as err:
            with _LIVE_LOCK:
                if _INTERRUPTED.is_set():  # the harness was interrupted: start no new worker
                    raise KeyboardInterrupt
                proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=err, stderr=err, start_new_session=True)
                _LIVE.add(proc)
            try:
                code = proc.wait(timeout=hard_limit)
            except subprocess.TimeoutExpired:
                code = None
            finally:  # a timeout, or the harness interrupted: the worker does not outlive it
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                with _LIVE_LOCK:
                    _LIVE.discard(proc)
        if _INTERRUPTED.is_set():  # killed because the harness stops: no verdict, not a crash
            raise KeyboardInterrupt
        cells: dict[str, dict[str, Any]] = {}
        tail: list[str] = []
        try:  # a missing file (the temporary directory removed under us) loses cells, not the run
            for line in out.read_text(encoding="utf-8").splitlines():
                c = json.loads(line)
                cells[c["entry"]] = c
            tail = (tmpdir / "stderr").read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        except (OSError, ValueError):
            pass
        if lines is not None and Path(job["lines_out"]).exists():
            lines.update(json.loads(Path(job["lines_out"]).read_text(encoding="utf-8")))
        killed = any(c["status"] == KILLED for c in cells.values())
        for e in entries:
            if e.name in cells:
                continue
            if code == 0 and killed and job.get("first_kill"):
                cells[e.name] = {"entry": e.name, "status": NOT_RUN, "message": "killed by an earlier entry"}
                continue
            if code is None:
                msg = f"the worker ran out of its hard limit ({hard_limit:.0f} s)"
                cells[e.name] = {"entry": e.name, "status": TIMEOUT, "message": msg}
            else:
                msg = f"the worker exited with code {code}: " + " | ".join(tail)
                cells[e.name] = {"entry": e.name, "status": CRASHED, "message": msg}
            cells[e.name]["seconds"] = round(time.monotonic() - t0, 2)
        return cells


def _cell(e: SuiteEntry, extra: Sequence[str], keep_going: bool) -> dict[str, Any]:
    """Check one entry (in the worker) and classify the outcome."""
    t0 = time.monotonic()
    options = CheckOptions(
        engine=e.engine,
        max_seconds=e.max_seconds,
        max_states=e.max_states,
        reduce=e.reduce,  # as the release runs it: a mutant of the symmetry renamer matters there
        keep_going=keep_going or e.expect == "violation",
        engine_options=e.engine_options(),
    )
    try:
        if ":" in e.model:
            r, system, props = run_check(None, options, system_ref=e.model, overrides=[*e.set, *extra])
        else:
            r, system, props = run_check(e.model, options, config_path=e.config, overrides=[*e.set, *extra])
        reqs = check_requirements(e, r, system, props)
    except Exception as ex:  # a mutant may raise anything: that is its outcome
        frames = traceback.extract_tb(ex.__traceback__)
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        return {
            "entry": e.name,
            "status": CRASHED,
            "message": f"{type(ex).__name__}: {str(ex).splitlines()[0] if str(ex) else ''}{where}",
            "seconds": round(time.monotonic() - t0, 2),
        }
    verdict, msg = _verdict(e, r, reqs)
    cell: dict[str, Any] = {
        "entry": e.name,
        "status": {"fail": KILLED, "pass": SURVIVED}.get(verdict, TIMEOUT),
        "message": msg,
        "seconds": round(r.seconds, 2),
        "distinct_states": r.distinct_states,
        "violations": [{"property": v.property, "length": v.length} for v in r.violations],
    }
    if cell["status"] == KILLED:
        expected = set(e.violates)
        bad = sorted(
            (v for v in r.violations if v.property not in expected), key=lambda v: (v.length, v.property)
        )
        if bad:
            cell["property"], cell["length"] = bad[0].property, bad[0].length
        elif moved := pinned_lengths_moved(e, r):
            cell["property"] = moved[0]
        else:
            unmet = [q["key"] for q in reqs if not q["met"]]
            cell["property"] = "coverage: " + (unmet[0] if unmet else "expected violations")
    return cell


def _worker_main(job_path: str) -> int:
    """The subprocess side: run the job's entries, append one JSON line per entry."""
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    tracer = None
    if job.get("trace"):  # before the model is imported: its import runs traced too
        from explorer.mutation.line_coverage import LineTracer

        tracer = LineTracer(PROJECT_ROOT, job["trace"])
        tracer.start()
    with open(job["out"], "a", encoding="utf-8") as out:
        for ed in job["entries"]:
            e = SuiteEntry(**{**ed, "set": tuple(ed["set"]), "violates": tuple(ed["violates"])})
            if tracer is not None:
                tracer.entry(e.name)
                e = dataclasses.replace(e, max_seconds=(e.max_seconds or 600) * TRACE_SLOWDOWN)
            cell = _cell(e, job["overrides"], job["keep_going"])
            out.write(json.dumps(cell) + "\n")
            out.flush()
            if job.get("first_kill") and cell["status"] == KILLED:
                break
    if tracer is not None:
        Path(job["lines_out"]).write_text(json.dumps(tracer.lines()), encoding="utf-8")
    return 0


def run_mutants(
    entries: list[SuiteEntry],
    catalogue: list[str],
    sources: list[SourceMutant],
    *,
    docs: dict[str, str] | None = None,
    equivalent: dict[str, str] | None = None,
    unreached: dict[str, str] | None = None,
    keep_going: bool = False,
    first_kill: bool = False,
    crash_kills: bool = False,
    baseline: bool = True,
    jobs: int = 1,
    log: Any = None,
    results: Path | None = None,
    route: bool = True,
    timeout_factor: float | None = None,
) -> dict[str, Any]:
    """Run the baseline, then every mutant against every entry; the result document.

    With ``route`` (and source mutants), each entry runs once more, traced, to learn which
    lines it executes; a source mutant then runs only against the entries that execute the
    statement it changes, and is "not covered" when none does (:mod:`explorer.mutation.line_coverage`).

    With ``first_kill`` the entries run cheapest first (by the baseline's seconds). With
    ``results`` (a JSON-lines file) every finished mutant is appended as it ends, and a run
    started again on the same file skips what it holds: a long measurement survives a kill
    and continues where it stopped. With ``timeout_factor``, a mutant's budget on an entry is
    :func:`mutant_budget`: a diverging one costs a few baselines, not every entry's budget."""
    equivalent = equivalent or {}
    docs = docs or {}
    done = _open_results(results, entries, keep_going, first_kill, crash_kills)
    write_lock = threading.Lock()

    def keep(kind: str, rec: Any) -> None:
        if results is None:
            return
        with write_lock, safeio.open_append(results) as f:  # never through a link (refused)
            f.write((json.dumps({kind: rec}) + "\n").encode())
            f.flush()
            os.fsync(f.fileno())

    budget = sum(e.max_seconds or 600 for e in entries)
    hard = budget * 1.5 + WORKER_SLACK

    def say(text: str) -> None:
        if log is not None:
            print(text, file=log, flush=True)

    base_cells: dict[str, dict[str, Any]] = done.get("baseline") or {}
    if baseline and not base_cells:
        base_cells = _run_worker(
            {"overrides": [], "keep_going": keep_going}, entries, source=None, hard_limit=hard
        )
        keep("baseline", base_cells)
    if baseline:
        bad = {n: c for n, c in base_cells.items() if c["status"] != SURVIVED}
        say("baseline: " + ", ".join(f"{n} {c['status']}" for n, c in base_cells.items()))
        if bad:
            n, c = next(iter(bad.items()))
            raise UsageError(
                f"the unmutated model does not pass entry {n} ({c['status']}: {c.get('message', '')}); "
                "fix the entry or raise --max-seconds"
            )
        if first_kill:  # cheapest first: most mutants die in the first cheap entry that sees them
            entries = sorted(entries, key=lambda e: base_cells.get(e.name, {}).get("seconds", 0.0))
    lines: dict[str, Any] | None = done.get("lines")
    traced = sorted({m.file for m in sources})
    if route and traced and lines is None:  # each entry once, traced: which lines it executes
        say(f"tracing which lines of {len(traced)} files each entry executes ...")
        by_entry: dict[str, Any] = {}
        trace_cells: dict[str, dict[str, Any]] = {}
        for e in entries:  # each in a process of its own: what importing the model runs (class
            # bodies, ``__init_subclass__``, decorators) is then every entry's, not the first one's
            trace_cells.update(
                _run_worker(
                    {"overrides": [], "keep_going": keep_going, "trace": traced},
                    [e],
                    source=None,
                    hard_limit=((e.max_seconds or 600) * 1.5 + WORKER_SLACK) * TRACE_SLOWDOWN,
                    lines=by_entry,
                )
            )
        # an entry whose traced run did not complete may execute more: it reaches every line
        partial = sorted(n for n, c in trace_cells.items() if c["status"] != SURVIVED)
        lines = {"by_entry": by_entry, "partial": partial}
        keep("lines", lines)
    finished: dict[str, dict[str, Any]] = done.get("mutants", {})
    if finished:
        say(f"resumed: {len(finished)} mutants already in {results}")
    todo: list[tuple[str, str, str, SourceMutant | None]] = [
        (name, "catalogue", docs.get(name, ""), None) for name in catalogue
    ] + [(m.id, "source", m.description, m) for m in sources]

    def one(item: tuple[str, str, str, SourceMutant | None]) -> dict[str, Any]:
        name, kind, doc, src = item
        rec: dict[str, Any] = {"name": name, "kind": kind, "doc": doc}
        prev = finished.get(name)
        if name in equivalent and (prev is None or prev.get("status") != KILLED):
            # a reason written after the run (the results file holds its survivor) counts too;
            # a killed mutant is no equivalent, whatever the catalogue says: its kill stands
            cells = prev.get("cells", {}) if prev else {}
            return {**rec, "status": EQUIVALENT, "equivalent": equivalent[name], "cells": cells}
        if prev is not None:
            return prev
        overrides = [f"mutant={name}"] if kind == "catalogue" else []
        t0 = time.monotonic()
        job = {"overrides": overrides, "keep_going": keep_going, "first_kill": first_kill}
        run = entries_for_mutant(src, entries, lines, PROJECT_ROOT)
        limit = hard
        if timeout_factor is not None and run:
            run = [
                dataclasses.replace(e, max_seconds=mutant_budget(e, base_cells, timeout_factor)) for e in run
            ]
            limit = sum(e.max_seconds or 600 for e in run) * 1.5 + WORKER_SLACK
        try:
            cells = _run_worker(job, run, source=src, hard_limit=limit) if run else {}
        except (ValueError, SyntaxError) as e:  # the mutant could not be written
            cells = {en.name: {"entry": en.name, "status": CRASHED, "message": str(e)} for en in run}
        ran = {en.name for en in run}
        for en in entries:
            if en.name not in ran:
                cells[en.name] = {
                    "entry": en.name,
                    "status": NOT_RUN,
                    "message": "does not execute the statement",
                }
        status = mutant_status(cells, crash_kills) if run else NOT_COVERED
        rec.update(status=status, seconds=round(time.monotonic() - t0, 1), cells=cells)
        moved = [
            n
            for n, c in cells.items()
            if status == SURVIVED
            and c.get("distinct_states") not in (None, base_cells.get(n, {}).get("distinct_states"))
        ]
        note = f"; state count moved on {len(moved)} entries, e.g. {moved[0]}" if moved else ""
        say(f"{rec['status']:>9}  {name}  ({rec['seconds']} s{note})")
        keep("mutant", rec)
        return rec

    _INTERRUPTED.clear()
    if jobs > 1:
        pool = ThreadPoolExecutor(jobs)
        try:
            mutants = list(pool.map(one, todo))
        except KeyboardInterrupt:
            # the first Ctrl-C: no mutant waits for the running ones to finish
            pool.shutdown(wait=False, cancel_futures=True)
            _kill_workers()
            raise
        finally:
            pool.shutdown(wait=True)
    else:
        mutants = [one(x) for x in todo]
    return {
        "schema": SCHEMA,
        "entries": [
            {
                "name": e.name,
                "model": e.model,
                "config": e.config,
                "set": list(e.set),
                "max_seconds": e.max_seconds,
            }
            for e in entries
        ],
        "keep_going": keep_going,
        "first_kill": first_kill,
        "crash_kills": crash_kills,
        "baseline": base_cells,
        "mutants": mutants,
        "score": score_of(mutants),
        **(
            {"line_coverage": model_coverage(lines["by_entry"], PROJECT_ROOT, traced, unreached or {})}
            if lines
            else {}
        ),
    }


def mutant_budget(entry: SuiteEntry, base_cells: dict[str, dict[str, Any]], factor: float) -> float:
    """A mutant's budget on ``entry`` under ``--timeout-factor``: ``factor`` times the baseline's
    seconds there, at least ``MIN_MUTANT_SECONDS``, at most the entry's own (as mutmut does).

    >>> e = SuiteEntry(name="e", model="m", max_seconds=600.0)
    >>> mutant_budget(e, {"e": {"seconds": 4.0}}, 10), mutant_budget(e, {"e": {"seconds": 0.1}}, 10)
    (40.0, 10.0)
    >>> mutant_budget(e, {"e": {"seconds": 100.0}}, 10), mutant_budget(e, {}, 10)
    (600.0, 600.0)
    """
    own = entry.max_seconds or 600.0
    base = base_cells.get(entry.name, {}).get("seconds")
    if base is None:  # no baseline (--no-baseline): the entry's own budget
        return own
    return min(own, max(MIN_MUTANT_SECONDS, factor * base))


# -- the command ------------------------------------------------------------------------------


def add_parser(sub: Any) -> None:
    """Register ``kafka-mc mutate`` on the CLI's subparsers."""
    p = sub.add_parser(
        "mutate",
        help=MUTATE_HELP,
        description="Measure how many bugs the checks catch: run each mutant of a model (the named bugs "
        "of its catalogue, and source mutants drawn from its code with --sample or --all-source) "
        "against release-suite entries (--suite with --entries) or one configuration, and print the "
        "kill matrix: which entry and property killed each mutant, and the score. Exit 0 when every "
        "non-equivalent mutant was killed, 1 when one was not, 2 on bad input.",
    )
    p.add_argument("model", nargs="?", help="a model name (default: the suite entries' model)")
    p.add_argument("--suite", metavar="FILE", help="a release suite TOML (with --entries)")
    p.add_argument(
        "--entries", metavar="NAMES", help="comma-separated suite entries to run each mutant against"
    )
    p.add_argument("--config", metavar="FILE", help="instead of a suite: one configuration of MODEL")
    p.add_argument("--system", metavar="MODULE:FACTORY", help="instead of a suite: a user TransitionSystem")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="[ENTRY:]KEY=VALUE",
        help="override a config key (of every entry, or of ENTRY only)",
    )
    p.add_argument(
        "--max-seconds", type=SECONDS, default=60.0, metavar="S", help="budget per entry (default 60)"
    )
    p.add_argument("--timeout-factor", type=Bounded(float, 1, 1e6), metavar="F", help=TIMEOUT_FACTOR_HELP)
    p.add_argument(
        "--continue", dest="keep_going", action="store_true", help="collect every violated property"
    )
    p.add_argument(
        "--first-kill",
        action="store_true",
        help="once an entry kills a mutant, do not run it against the later entries (cells: not run)",
    )
    p.add_argument("--no-catalogue", action="store_true", help="run no catalogue mutant")
    p.add_argument("--mutants", metavar="NAMES", help="only these catalogue mutants (comma-separated)")
    p.add_argument(
        "--sample", type=Bounded(int, 1, 10**6), metavar="N", help="run N source mutants, sampled with --seed"
    )
    p.add_argument("--seed", type=SEED, default=0, help="seed of the sample (default 0)")
    p.add_argument("--all-source", action="store_true", help="run every source mutant (many)")
    p.add_argument("--ids", metavar="IDS", help="run these source mutants (comma-separated ids or keys)")
    p.add_argument(
        "--source", action="append", default=[], metavar="PATH", help="files or directories to mutate"
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=None,
        metavar="NAME",
        help="file names not to mutate (default: coverage.py; coverage labels change no behaviour)",
    )
    p.add_argument("--equivalent", metavar="FILE", help="the equivalent-mutant catalogue (TOML)")
    p.add_argument("--crash-kills", action="store_true", help="count crashed mutants as killed")
    p.add_argument("--no-baseline", action="store_true", help="do not check that the unmutated model passes")
    p.add_argument(
        "--no-routing",
        action="store_true",
        help="run every source mutant against every entry (default: only the entries that execute its statement)",
    )
    p.add_argument(
        "--jobs",
        type=Bounded(int, 1, MAX_WORKERS),
        default=1,
        metavar="N",
        help="mutants run at once (default 1)",
    )
    p.add_argument("--list", action="store_true", help="list the selected mutants and stop")
    p.add_argument("--json", metavar="FILE", help="write the kill matrix as JSON")
    p.add_argument(
        "--results",
        metavar="FILE",
        help="append each finished mutant to FILE (JSON lines) and, run again, skip those it holds",
    )
    p.add_argument("--quiet", action="store_true", help="no line per mutant on stderr")
    p.set_defaults(func=cmd_mutate)


def cmd_mutate(args: argparse.Namespace) -> int:
    """``kafka-mc mutate``: 0 when no considered mutant survived, 1 otherwise."""
    positive("--max-seconds", args.max_seconds)
    positive("--jobs", args.jobs)
    positive("--sample", args.sample)
    check_output_path(args.json, "--json")  # before any mutant runs
    if args.results and Path(args.results).absolute().parent.is_dir():  # else made when the run starts
        check_output_path(args.results, "--results")
    if args.exclude is None:
        args.exclude = ["coverage.py"]
    entries = _entries(args)
    model = entries[0].model
    catalogue = [] if args.no_catalogue else _catalogue(model)
    if args.mutants:
        want = args.mutants.split(",")
        unknown = [n for n in want if n not in catalogue]
        if unknown:
            raise UsageError(
                f"--mutants: {unknown[0]!r} is not in the catalogue of {model}{did_you_mean(unknown[0], catalogue)}"
            )
        catalogue = want
    sources = _source_mutants(args, model)
    eq_path = Path(args.equivalent) if args.equivalent else None
    if eq_path is None and ":" not in model:
        eq_path = PROJECT_ROOT / "invariants" / "mutants" / f"{model.replace('-', '_')}_equivalent.toml"
    elif eq_path is not None and not eq_path.is_file():
        raise UsageError(f"--equivalent {eq_path}: no such file")
    equivalent = load_equivalent(eq_path)
    unreached = load_equivalent(eq_path, "unreached")
    if args.list:
        for n in catalogue:
            print(f"catalogue  {n}" + (f"  [equivalent: {equivalent[n]}]" if n in equivalent else ""))
        for m in sources:
            print(
                f"source     {m.id}  {m.key}  {m.description}"
                + (f"  [equivalent: {equivalent[m.id]}]" if m.id in equivalent else "")
            )
        return 0
    if not catalogue and not sources:
        raise UsageError(
            "no mutants selected (catalogue empty or --no-catalogue, and no --sample/--ids/--all-source)"
        )
    doc = run_mutants(
        entries,
        catalogue,
        sources,
        equivalent=equivalent,
        unreached=unreached,
        keep_going=args.keep_going,
        first_kill=args.first_kill,
        crash_kills=args.crash_kills,
        baseline=not args.no_baseline,
        jobs=args.jobs,
        log=None if args.quiet else sys.stderr,
        results=Path(args.results) if args.results else None,
        route=not args.no_routing,
        timeout_factor=args.timeout_factor,
    )
    doc["model"] = model
    doc["sample"] = {"n": args.sample, "seed": args.seed} if sources and args.sample else None
    print(format_matrix(doc))
    if args.json:
        write_json_atomic(args.json, doc)
    return 0 if doc["score"]["considered"] == doc["score"]["killed"] else 1


if __name__ == "__main__":  # the worker: python -m explorer.mutation.command JOB
    sys.exit(_worker_main(sys.argv[1]))
