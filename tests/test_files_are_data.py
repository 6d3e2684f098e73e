"""Files are data (issue 53, item 1): nothing a file says is imported or called, a file's recorded
model and configuration are checked against their digest, a snapshot of another run is refused,
deep nesting is one line, and ``sys.exit`` in a user module is a model error.

Every refusal is one line on stderr, exit 2 (a model error: exit 4), and nothing runs: the files
below name ``subprocess:call`` with a command that would create a marker file, and the marker
never appears. The last tests hold ``explorer/`` to the rule by reading its source: every call
that imports a module by name is on an allow-list (:data:`ALLOWED`), and the checker is shown to
flag a call that is not.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.datafiles import model_digest

ROOT = Path(__file__).resolve().parents[1]
GRID = ["--system", "tests.toys:grid"]
DEEP = "[" * 10_000 + "]" * 10_000


def one_line(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    """The one line on stderr, holding ``words`` (no traceback)."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)
    return err


def crafted_call(marker: Path) -> tuple[str, dict[str, Any]]:
    """A ``system`` and configuration that, if imported and called, create ``marker``."""
    return "subprocess:call", {"args": ["touch", str(marker)]}


def saved_trace(tmp: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A trace file of a ``--system`` run (``check --save-traces``) and its ``--json`` result."""
    code = main(
        [
            "check",
            *GRID,
            "--set",
            "limit=3",
            "--quiet",
            "--save-traces",
            str(tmp / "t"),
            "--json",
            str(tmp / "r.json"),
        ]
    )
    assert code == 1
    capsys.readouterr()
    return tmp / "t" / "tests.toys_grid-sum_below_limit.json"


# -- 1. a file names, it never loads --------------------------------------------------------------


@pytest.mark.parametrize("verb", ["replay", "shrink"])
def test_a_trace_naming_a_system_never_loads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: str
) -> None:
    """A trace file whose ``system`` is ``subprocess:call`` (with the arguments that would run a
    command): without a ``--system`` the user gives, nothing is imported; with another one, the
    file is refused as well. Before issue 53 both verbs imported and called it."""
    marker = tmp_path / "pwned"
    path = saved_trace(tmp_path, capsys)
    doc = json.loads(path.read_text())
    doc["system"], doc["config"] = crafted_call(marker)
    doc["model"] = doc["system"]
    doc["digest"] = model_digest(doc["model"], doc["config"])  # a careful attacker updates it
    path.write_text(json.dumps(doc))
    assert main([verb, str(path)]) == 2
    one_line(capsys, "'system' is 'subprocess:call'", "never loads code a file names")
    assert main([verb, str(path), *GRID]) == 2
    one_line(capsys, "'system' is 'subprocess:call', not the --system tests.toys:grid given")
    assert not marker.exists()


def test_a_trace_replays_on_the_system_the_user_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same trace, its ``--system`` given: replayed; a registered model's trace refuses a
    ``--system`` (the file says how it was made, the user may not swap the code under it)."""
    path = saved_trace(tmp_path, capsys)
    assert main(["replay", str(path), *GRID]) == 0
    assert "violation reproduced" in capsys.readouterr().out
    assert main(["replay", str(tmp_path / "r.json"), *GRID]) == 0
    capsys.readouterr()
    doc = json.loads(path.read_text())
    del doc["system"]
    path.write_text(json.dumps(doc))
    assert main(["replay", str(path), *GRID]) == 2
    one_line(capsys, "'system' is absent", "leave out --system")


def test_a_trace_naming_an_unregistered_model_is_looked_up_not_imported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace without ``system`` whose ``model`` looks like ``module:callable``: the model is
    looked up in the registry by name, never imported."""
    marker = tmp_path / "pwned"
    path = saved_trace(tmp_path, capsys)
    doc = json.loads(path.read_text())
    del doc["system"]
    doc["model"], doc["config"] = crafted_call(marker)
    doc["digest"] = model_digest(doc["model"], doc["config"])
    path.write_text(json.dumps(doc))
    for verb in ("replay", "shrink"):
        assert main([verb, str(path)]) == 2
        one_line(capsys, "unknown model 'subprocess:call'")
    assert not marker.exists()


def _checkpoint(tmp: Path, n: int, name: str = "ck") -> Path:
    ck = tmp / name
    assert (
        main(
            ["check", *GRID, "--set", f"n={n}", "--quiet", "--checkpoint", str(ck), "--checkpoint-every", "0"]
        )
        == 0
    )
    return ck


def test_a_checkpoint_naming_a_system_never_loads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--resume DIR`` takes its options from the manifest's ``run`` section, but not its
    ``system``: that one the user gives, and it must equal the manifest's. Before issue 53 the
    manifest's ``run.system`` was imported and called with its ``run.set``."""
    marker = tmp_path / "pwned"
    ck = _checkpoint(tmp_path, 4)
    capsys.readouterr()
    manifest = json.loads((ck / "manifest.json").read_text())
    system, config = crafted_call(marker)
    manifest["run"]["system"], manifest["run"]["set"] = system, [f"args={json.dumps(config['args'])}"]
    (ck / "manifest.json").write_text(json.dumps(manifest))
    assert main(["check", "--resume", str(ck), "--quiet"]) == 2
    one_line(capsys, "manifest.json run: 'system' is 'subprocess:call'")
    assert main(["check", "--resume", str(ck), *GRID, "--quiet"]) == 2
    one_line(capsys, "not the --system tests.toys:grid given")
    assert not marker.exists()


def test_a_resumed_system_checkpoint_needs_the_system_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ck = _checkpoint(tmp_path, 4)
    capsys.readouterr()
    assert main(["check", "--resume", str(ck), "--quiet"]) == 2
    one_line(capsys, "'system' is 'tests.toys:grid' (made with --system)")
    assert main(["check", "--resume", str(ck), *GRID, "--quiet"]) == 0


def test_a_manifest_value_of_the_wrong_type_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ck = _checkpoint(tmp_path, 4)
    capsys.readouterr()
    manifest = json.loads((ck / "manifest.json").read_text())
    manifest["run"]["workers"] = "many"
    (ck / "manifest.json").write_text(json.dumps(manifest))
    assert main(["check", "--resume", str(ck), *GRID, "--quiet"]) == 2
    one_line(capsys, "manifest.json run.workers is not a valid value")


def test_a_suite_names_registered_proof_targets_only(tmp_path: Path) -> None:
    """A suite's proof entry once imported a ``module:function`` target it named."""
    from explorer.config import ConfigError
    from explorer.suite import load_suite

    suite = tmp_path / "s.toml"
    suite.write_text('[[check]]\nname = "p"\nmodel = "subprocess:call"\nengine = "symbolic"\n')
    with pytest.raises(
        ConfigError, match="unknown proof target 'subprocess:call' \\(a suite names registered"
    ):
        load_suite(str(suite))


def test_a_shrunk_test_embeds_only_a_dotted_system_name() -> None:
    """The pytest module ``shrink`` writes imports its system's module: a crafted name is
    refused, and text from the trace (property, model) stays inside the docstring."""
    from explorer.search import trace_steps
    from explorer.shrunk import Shrunk, pytest_source

    steps = trace_steps([(0, 0), (1, 0)], ["counter 0 increments"])
    bad = Shrunk("m", {}, "p", "always", "", steps, 1, {}, "os:system('id')")
    with pytest.raises(ValueError, match="dotted Python names"):
        pytest_source(bad)
    odd = Shrunk('x"""\nimport os\n"""', {}, "sum_below_limit", "always", "", steps, 1, {}, "tests.toys:grid")
    tree = ast.parse(pytest_source(odd))
    assert not any(isinstance(n, ast.Import) and n.names[0].name == "os" for n in tree.body)


# -- 2. digests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["trace", "result"])
def test_a_configuration_edited_without_its_digest_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str
) -> None:
    """A trace file and a ``--json`` result record ``digest``; one whose configuration was
    edited by hand is refused naming the field. A file without a digest (written before issue
    53) is still read."""
    trace = saved_trace(tmp_path, capsys)
    path = trace if which == "trace" else tmp_path / "r.json"
    doc = json.loads(path.read_text())
    assert doc["digest"] == model_digest(doc["model"], doc["config"])
    doc["config"]["limit"] = 4
    path.write_text(json.dumps(doc))
    assert main(["replay", str(path), *GRID]) == 2
    one_line(capsys, "'digest' does not match its 'model' and 'config'")
    del doc["digest"]
    path.write_text(json.dumps(doc))
    assert main(["replay", str(path), *GRID]) == 1  # read, replayed, and (limit 4) no longer violated
    capsys.readouterr()


def test_a_manifest_edited_without_its_digest_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ck = _checkpoint(tmp_path, 4)
    capsys.readouterr()
    manifest = json.loads((ck / "manifest.json").read_text())
    for field, value in (
        ("config", {"args": {"n": 5}}),
        ("options", {**manifest["options"], "max_depth": 3}),
    ):
        edited = {**manifest, field: value}
        (ck / "manifest.json").write_text(json.dumps(edited))
        assert main(["check", "--resume", str(ck), *GRID, "--quiet"]) == 2
        one_line(capsys, "manifest.json: 'digest'" if field == "config" else "manifest.json: 'identity'")


def test_a_snapshot_of_another_configuration_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before issue 53, a ``snap-NNNNNN/`` copied in from a checkpoint of ``n=4`` into one of
    ``n=5`` resumed and reported the other configuration's state count, exit 0."""
    a, b = _checkpoint(tmp_path, 4, "a"), _checkpoint(tmp_path, 5, "b")
    capsys.readouterr()
    snap_a, snap_b = ((ck / "CURRENT").read_text().strip() for ck in (a, b))
    shutil.rmtree(b / snap_b)
    shutil.copytree(a / snap_a, b / snap_b)
    assert main(["check", "--resume", str(b), *GRID, "--quiet"]) == 2
    one_line(capsys, f"snapshot {snap_b} is another run's", "'identity'")


def test_current_names_a_snapshot_of_its_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck = _checkpoint(tmp_path, 4)
    (tmp_path / "elsewhere").mkdir()
    (ck / "CURRENT").write_text("../elsewhere")
    capsys.readouterr()
    assert main(["check", "--resume", str(ck), *GRID, "--quiet"]) == 2
    one_line(capsys, "CURRENT names '../elsewhere', not a snapshot")


def test_mutate_results_of_other_code_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``mutate --results`` file records the digest of the model's code in its header; its
    verdicts are not reused for other code. A header without it (older files) is read."""
    import explorer.mutation.results as mutate
    from explorer.frontend import UsageError
    from explorer.release import SuiteEntry

    res = tmp_path / "r.jsonl"
    entries = [SuiteEntry(name="system", model="tests.toy_mutation:make")]
    assert mutate._open_results(res, entries, False, False, False) == {}
    header = json.loads(res.read_text())["header"]
    assert header["code"] == mutate.model_code_digest("tests.toy_mutation:make")
    res.write_text(json.dumps({"header": {**header, "code": "0" * 16}}) + "\n")
    with pytest.raises(
        UsageError, match="header's 'code' \\(0000000000000000\\) is not the digest of this model's code"
    ):
        mutate._open_results(res, entries, False, False, False)
    del header["code"]
    record = {"mutant": {"name": "m", "status": "killed", "cells": {}}}
    res.write_text(json.dumps({"header": header}) + "\n" + json.dumps(record) + "\n")
    assert mutate._open_results(res, entries, False, False, False)["mutants"] == {"m": record["mutant"]}
    res.write_text(json.dumps({"header": header}) + "\n" + json.dumps({"mutant": ["m"]}) + "\n")
    with pytest.raises(UsageError, match="line 2: mutant: expected an object"):
        mutate._open_results(res, entries, False, False, False)


# -- 3. sys.exit in a user module -------------------------------------------------------------------


@pytest.mark.parametrize(
    "where, factory, words",
    [
        ("import", "exits_in_factory", "importing tests.toys_exit called sys.exit(0)"),
        ("factory", "exits_in_factory", "the factory called sys.exit(0)"),
        ("search", "exits_in_search", "the system called sys.exit(0) during the search"),
    ],
)
def test_sys_exit_in_a_user_module_is_a_model_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, where: str, factory: str, words: str
) -> None:
    """Before issue 53 each ended kafka-mc with exit 0 and no output."""
    monkeypatch.setenv("KAFKA_MC_TEST_EXIT_AT", where)
    monkeypatch.delitem(sys.modules, "tests.toys_exit", raising=False)
    assert main(["check", "--system", f"tests.toys_exit:{factory}", "--quiet"]) == 4
    assert words in capsys.readouterr().err


# -- 4. deep nesting ------------------------------------------------------------------------------


def test_deep_nesting_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trace file, a checkpoint manifest and a ``--mutation`` file nested 10,000 deep: each one
    line, exit 2 (before: a RecursionError, exit 4)."""
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({"schema": "kafka-mc/trace/1", "config": "@"}).replace('"@"', DEEP))
    assert main(["replay", str(trace)]) == 2
    one_line(capsys, "nested deeper than")
    ck = _checkpoint(tmp_path, 3)
    (ck / "manifest.json").write_text('{"format": 2, "run": ' + DEEP + "}")
    capsys.readouterr()
    assert main(["check", "--resume", str(ck), "--quiet"]) == 2
    one_line(capsys, "manifest.json: nested deeper than")
    suite, mutation = tmp_path / "s.toml", tmp_path / "m.json"
    suite.write_text('[[check]]\nname = "w"\nmodel = "timing-wheel"\n')
    mutation.write_text('{"schema": "kafka-mc/mutation/1", "score": ' + DEEP + "}")
    argv = [
        "release",
        "--suite",
        str(suite),
        "--report-dir",
        str(tmp_path / "rep"),
        "--mutation",
        str(mutation),
    ]
    assert main(argv) == 2
    one_line(capsys, "--mutation", "nested deeper than")
    assert not (tmp_path / "rep").exists()  # nothing half-written


# -- 6. no import of a name that came from a file ---------------------------------------------------

#: the call sites in ``explorer/`` that import (or unpickle) by a name computed at run time,
#: ``file::enclosing function``, each with why its name cannot come from a file
ALLOWED: dict[str, str] = {
    "explorer/__init__.py::__getattr__": "the fixed table _WHERE of explorer's public names",
    "explorer/frontend.py::registry": "the registry module REGISTRY ('invariants'), a constant",
    "explorer/frontend.py::system_module": "a --system given on the command line (or by Python code)",
    "explorer/search/codec.py::find_class": "only modules of the trusted packages (the project's, a --system's)",
    "explorer/symbolic/targets.py::list_targets": "the fixed table PROOF_MODULES",
    "explorer/symbolic/targets.py::_resolve": "a `kafka-mc prove MODULE:FUNCTION` of the command line "
    "(a suite names registered targets only)",
    "explorer/engines/spark/partitions.py::_load_job": "the job the driver broadcasts to its executors (no file)",
    "explorer/engines/spark/partitions.py::unpack_block": "blocks a run's executors pass each other (no file)",
    "explorer/search/incremental.py::_load": "the constant 'explorer._incremental', the C accelerator (a plain "
    "import in a function is left unbound when mypyc compiles the module)",
}


def dynamic_imports(source: str) -> list[tuple[str, int]]:
    """Every call in ``source`` that imports, loads or runs code by a name computed at run time:
    ``importlib.import_module``, ``import_module``, ``__import__``, ``importlib.__import__``,
    ``getattr(importlib, ...)``, ``importlib.util`` loaders, ``runpy``, ``exec``/``eval``/
    ``compile`` and ``pickle``/``marshal`` loads. Returns ``(enclosing function, line)`` each
    (``<module>`` at top level).

    >>> dynamic_imports("import importlib\\ndef f(n):\\n    return importlib.import_module(n)\\n")
    [('f', 3)]
    """
    found: list[tuple[str, int]] = []
    banned_attrs = {
        ("importlib", "import_module"),
        ("importlib", "__import__"),
        ("runpy", "run_module"),
        ("runpy", "run_path"),
        ("pickle", "load"),
        ("pickle", "loads"),
        ("marshal", "loads"),
        ("marshal", "load"),
    }

    def name_of(node: ast.AST) -> str:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return f"{name_of(node.value)}.{node.attr}"
        return ""

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else where
            if isinstance(child, ast.Call):
                f = child.func
                full = name_of(f)
                bad = (
                    (
                        isinstance(f, ast.Name)
                        and f.id in ("__import__", "import_module", "exec", "eval", "compile")
                    )
                    or any(full == f"{m}.{a}" or full.endswith(f".{m}.{a}") for m, a in banned_attrs)
                    or full.startswith("importlib.util.")
                    or (
                        isinstance(f, ast.Name)
                        and f.id == "getattr"
                        and child.args
                        and name_of(child.args[0]).split(".")[0] in ("importlib", "runpy", "builtins")
                    )
                )
                if bad:
                    found.append((where, child.lineno))
            visit(child, inner)

    visit(ast.parse(source), "<module>")
    return found


@pytest.mark.slow  # 1.0 CPU-s in a loaded default run (2026-11-29)
def test_no_import_of_a_name_that_came_from_a_file() -> None:
    """Every dynamic import in ``explorer/`` is on :data:`ALLOWED` (and every entry there is still
    used: an allow-list that outlives its call site would hide a new one there)."""
    seen: set[str] = set()
    unexpected = []
    for path in sorted((ROOT / "explorer").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for where, line in dynamic_imports(path.read_text(encoding="utf-8")):
            if f"{rel}::{where}" in ALLOWED:
                seen.add(f"{rel}::{where}")
            else:
                unexpected.append(f"{rel}:{line} in {where}")
    assert not unexpected, f"dynamic imports not on the allow-list: {unexpected}"
    assert seen == set(ALLOWED), f"allowed but gone: {sorted(set(ALLOWED) - seen)}"


@pytest.mark.parametrize(
    "snippet",
    [
        "import importlib\ndef load(doc):\n    return importlib.import_module(doc['system'])\n",
        "from importlib import import_module\ndef load(doc):\n    return import_module(doc['module'])\n",
        "def load(doc):\n    return __import__(doc['module'])\n",
        "import importlib\ndef load(doc):\n    return getattr(importlib, 'import_module')(doc['m'])\n",
        "import importlib.util\ndef load(p):\n    return importlib.util.spec_from_file_location('x', p)\n",
        "import pickle\ndef load(b):\n    return pickle.loads(b)\n",
        "def load(text):\n    return eval(text)\n",
    ],
)
def test_the_checker_flags_a_forbidden_call(snippet: str) -> None:
    """The grep test can fail: each of these, in a function ``load`` not on the allow-list, is found."""
    assert dynamic_imports(snippet) == [("load", snippet.count("\n"))]


def test_a_result_violation_without_its_property_is_one_line(tmp_path: Path) -> None:
    """Found by tests/test_file_readers_hypothesis.py: ``--property`` over a result file whose
    violation lacks its ``property`` was a KeyError (exit 4)."""
    from explorer.tracefile import ReplayError, load_trace

    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema": "kafka-mc/check-result/1", "violations": [{"trace": [{}]}]}))
    with pytest.raises(ReplayError, match="holds no counterexample of property 'p' to replay"):
        load_trace(str(path), "p")


def test_a_pipe_or_device_where_a_file_was_expected_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO put in a checkpoint folder (or named as a trace) must not hang the reader: only a
    regular file is read, anything else is a one-line refusal (it blocked forever before)."""
    from explorer.datafiles import DataFileError, read_json

    fifo = tmp_path / "manifest.json"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(DataFileError, match="not a regular file"):
            read_json(path)
