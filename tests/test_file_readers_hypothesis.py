"""Property-based tests of the file readers (issue 53, item 5): arbitrary bytes, and valid files
mutated at random, given to every reader of a file kafka-mc may be handed (a trace file, a
``--json`` result, a checkpoint's ``manifest.json`` and ``snapshot.json``, a ``mutate --results``
file, a ``--mutation`` result, a suite and a configuration TOML) never execute code, never
write outside the folder, and never end in anything but the reader's documented one-line error.

Every mutation may plant a ``system`` (or ``model``) of ``subprocess:call`` whose configuration
would create a marker file; the marker never appears. The default run keeps each property to a
few dozen examples, derandomized (the same examples every run) and without Hypothesis's
database; ``@pytest.mark.slow`` runs more.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.cli import main
from explorer.config import ConfigError, load_config
from explorer.frontend import UsageError, model_spec
from explorer.search.checkpoint import CheckpointError, read_manifest, read_snapshot
from explorer.tracefile import ReplayError, load_trace

ROOT = Path(__file__).resolve().parents[1]


def fast(n: int) -> Any:
    """The settings of a property: ``n`` examples, always the same ones, no database."""
    return settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )


#: examples per property in the default run, and under ``-m slow``
FEW, MANY = 30, 400

# -- values and mutations -------------------------------------------------------------------------

#: what a crafted file would like kafka-mc to import and call (with MARKER replaced)
CRAFTED = [
    "subprocess:call",
    "os:system",
    "builtins:exec",
    "../../../tmp/x",
    "tests.toys_exit:exits_in_factory",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(CRAFTED),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value in ``doc`` (dict keys and list indices), ``()`` the root."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from paths(v, (*prefix, i))


def replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``doc`` with the value at ``path`` replaced by ``value`` (a copy)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {**doc, head: replaced(doc[head], rest, value)}
    out = list(doc)
    out[head] = replaced(doc[head], rest, value)
    return out


@st.composite
def mutated(draw: Any, doc: Any, marker: str) -> bytes:
    """A few random edits of the JSON document ``doc``: values replaced (by crafted names among
    others), keys added (``system``, ``model``, ``config`` and ``args`` pointing at the marker)
    or removed, or the serialized text cut or spliced with bytes."""
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["replace", "plant", "call", "delete", "text"]))
        where = draw(st.sampled_from(list(paths(doc))))
        if how == "call" and isinstance(doc, dict):  # the whole recipe: a callable and its arguments
            field = draw(st.sampled_from(["system", "model"]))
            doc = {**doc, field: "subprocess:call", "config": {"args": ["touch", marker]}}
            if draw(st.booleans()) and isinstance(doc.get("run"), dict):  # a manifest's run section
                doc["run"] = {
                    **doc["run"],
                    "system": "subprocess:call",
                    "set": [f'args=["touch","{marker}"]'],
                }
        elif how == "replace":
            doc = replaced(doc, where, draw(json_values))
        elif how == "plant":
            key = draw(st.sampled_from(["system", "model", "config", "run", "identity", "digest", "code"]))
            value = draw(
                st.sampled_from(
                    [
                        *CRAFTED,
                        {"args": ["touch", marker]},
                        {"system": "subprocess:call", "set": [f'args=["touch","{marker}"]']},
                    ]
                )
            )
            target = replaced(doc, where, {}) if not isinstance(_at(doc, where), dict) else doc
            doc = replaced(target, where, {**_at(target, where), key: value})
        elif how == "delete" and where:
            parent = _at(doc, where[:-1])
            if isinstance(parent, dict):
                doc = replaced(doc, where[:-1], {k: v for k, v in parent.items() if k != where[-1]})
        else:
            text = json.dumps(doc).encode()
            cut = draw(st.integers(0, len(text)))
            return text[:cut] + draw(st.binary(max_size=12)) + text[cut + draw(st.integers(0, 8)) :]
    return json.dumps(doc).encode()


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


# -- fixtures: one valid file of each kind, made once ----------------------------------------------


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Valid files made by kafka-mc itself: a trace file, a ``--json`` result, a checkpoint."""
    d = tmp_path_factory.mktemp("valid")
    argv = ["check", "--system", "tests.toys:grid", "--set", "limit=2", "--set", "n=3", "--quiet"]
    assert main([*argv, "--save-traces", str(d / "t"), "--json", str(d / "r.json")]) == 1
    ck = d / "ck"
    assert (
        main(
            [
                "check",
                "--system",
                "tests.toys:grid",
                "--set",
                "n=3",
                "--quiet",
                "--checkpoint",
                str(ck),
                "--checkpoint-every",
                "0",
            ]
        )
        == 0
    )
    (trace,) = (d / "t").iterdir()
    snap = (ck / "CURRENT").read_text().strip()
    return {
        "trace": json.loads(trace.read_text()),
        "result": json.loads((d / "r.json").read_text()),
        "checkpoint": ck,
        "manifest": json.loads((ck / "manifest.json").read_text()),
        "snapshot": json.loads((ck / snap / "snapshot.json").read_text()),
        "snap": snap,
    }


@contextmanager
def sandbox() -> Iterator[tuple[Path, Path, Callable[[], None]]]:
    """``(folder, marker, check)``: a fresh folder to put files in, the marker a crafted file would
    create, and a check that the marker is absent and nothing was written beside the folder."""
    with tempfile.TemporaryDirectory(prefix="kafka-mc-fuzz-") as tmp:
        root = Path(tmp)
        folder, marker = root / "in", root / "pwned"
        folder.mkdir()
        (root / "outside.txt").write_text("keep")

        def check() -> None:
            assert not marker.exists(), "a crafted file ran a command"
            assert sorted(p.name for p in root.iterdir()) == ["in", "outside.txt"]
            assert (root / "outside.txt").read_text() == "keep"

        yield folder, marker, check


def refused_as(errors: tuple[type[BaseException], ...], call: Callable[[], Any]) -> None:
    """``call()`` returns, or raises one of ``errors`` with a one-line message."""
    try:
        call()
    except errors as e:
        text = str(e)
        assert text and "\n" not in text.strip(), repr(text)


# -- trace files and --json results ---------------------------------------------------------------


def _trace_property(valid: dict[str, Any], which: str, data: st.DataObject, raw: bool) -> None:
    with sandbox() as (folder, marker, check):
        path = folder / "t.json"
        path.write_bytes(
            data.draw(st.binary(max_size=300)) if raw else data.draw(mutated(valid[which], str(marker)))
        )
        refused_as((ReplayError,), lambda: load_trace(str(path)))
        refused_as((ReplayError,), lambda: load_trace(str(path), "sum_below_limit"))
        check()


@pytest.mark.parametrize("which", ["trace", "result"])
@fast(FEW)
@given(data=st.data(), raw=st.booleans())
def test_a_trace_or_result_file_is_data(
    valid: dict[str, Any], which: str, data: st.DataObject, raw: bool
) -> None:
    _trace_property(valid, which, data, raw)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["trace", "result"])
@fast(MANY)
@given(data=st.data(), raw=st.booleans())
def test_a_trace_or_result_file_is_data_many(
    valid: dict[str, Any], which: str, data: st.DataObject, raw: bool
) -> None:
    _trace_property(valid, which, data, raw)


def _replay_property(valid: dict[str, Any], data: st.DataObject, capsys: pytest.CaptureFixture[str]) -> None:
    """``replay`` and ``shrink`` in process: exit 0 or 1 (the file replays, or not), or a one-line
    refusal, exit 2; never a model error (exit 4), never the marker."""
    with sandbox() as (folder, marker, check):
        path = folder / "t.json"
        path.write_bytes(
            data.draw(mutated(valid[data.draw(st.sampled_from(["trace", "result"]))], str(marker)))
        )
        extra = data.draw(st.sampled_from([[], ["--system", "tests.toys:grid"]]))
        verb = data.draw(st.sampled_from(["replay", "shrink"]))
        argv = [verb, str(path), *extra] + (
            ["--out-dir", str(folder), "--max-seconds", "2", "--no-bfs"] if verb == "shrink" else []
        )
        code = main(argv)
        err = capsys.readouterr().err
        assert code in (0, 1, 2), (code, err)
        if code == 2:
            assert err.count("\n") == 1 and "Traceback" not in err, err
        check()


@pytest.mark.slow  # 1.5 CPU-s in a loaded default run (2026-11-29)
@fast(FEW)
@given(data=st.data())
def test_replay_and_shrink_of_a_mutated_file(
    valid: dict[str, Any], data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    _replay_property(valid, data, capsys)


@pytest.mark.slow
@fast(MANY // 2)
@given(data=st.data())
def test_replay_and_shrink_of_a_mutated_file_many(
    valid: dict[str, Any], data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    _replay_property(valid, data, capsys)


@pytest.mark.parametrize("system", [None, "subprocess:call"])
def test_replay_end_to_end_runs_nothing_a_file_names(valid: dict[str, Any], system: str | None) -> None:
    """``python3 -m explorer replay FILE`` (a process of its own, as a user runs it) on a file
    naming ``subprocess:call``: one line, exit 2, no traceback, no marker."""
    import subprocess
    import sys

    with sandbox() as (folder, marker, check):
        doc = {**valid["trace"], "config": {"args": ["touch", str(marker)]}}
        doc["system"] = "subprocess:call"
        if system is None:  # the model field instead
            del doc["system"]
            doc["model"] = "subprocess:call"
        path = folder / "t.json"
        path.write_text(json.dumps(doc))
        r = subprocess.run(
            [sys.executable, "-m", "explorer", "replay", str(path)], cwd=ROOT, capture_output=True, text=True
        )
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
        check()


# -- checkpoints ----------------------------------------------------------------------------------


def _checkpoint_property(
    valid: dict[str, Any], data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkpoint whose ``manifest.json`` or ``snapshot.json`` is mutated (or arbitrary bytes):
    ``read_manifest``/``read_snapshot`` raise CheckpointError only, and ``check --resume`` exits
    0 (the mutation changed nothing that matters) or 2 in one line, never 4, never the marker."""
    with sandbox() as (folder, marker, check):
        ck = folder / "ck"
        shutil.copytree(valid["checkpoint"], ck)
        which = data.draw(st.sampled_from(["manifest", "snapshot"]))
        target = ck / "manifest.json" if which == "manifest" else ck / valid["snap"] / "snapshot.json"
        raw = data.draw(st.booleans())
        target.write_bytes(
            data.draw(st.binary(max_size=200)) if raw else data.draw(mutated(valid[which], str(marker)))
        )
        refused_as((CheckpointError,), lambda: read_manifest(ck))
        refused_as((CheckpointError,), lambda: read_snapshot(ck))
        extra = data.draw(st.sampled_from([[], ["--system", "tests.toys:grid"]]))
        code = main(["check", "--resume", str(ck), *extra, "--quiet"])
        err = capsys.readouterr().err
        assert code in (0, 2), (code, err)
        if code == 2:
            assert err.count("\n") == 1 and "Traceback" not in err, err
        check()


@fast(FEW)
@given(data=st.data())
def test_a_mutated_checkpoint_is_data(
    valid: dict[str, Any], data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    _checkpoint_property(valid, data, capsys)


@pytest.mark.slow
@fast(MANY)
@given(data=st.data())
def test_a_mutated_checkpoint_is_data_many(
    valid: dict[str, Any], data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    _checkpoint_property(valid, data, capsys)


# -- mutation results, --mutation, suites and configurations ---------------------------------------

RESULTS_HEADER = {"header": {"schema": "kafka-mc/mutation/1", "entries": [], "keep_going": False}}
MUTATION_DOC = {
    "schema": "kafka-mc/mutation/1",
    "score": {"score": 0.5, "killed": 1, "considered": 2},
    "entries": [{"name": "e"}],
    "mutants": [{"name": "m", "status": "killed", "doc": ""}],
}
SUITE = '[[check]]\nname = "w"\nmodel = "timing-wheel"\nset = ["tick_ms=1"]\n'
CONFIG = "tick_ms = 1\nwheel_size = 4\n"


def _text_mutated(text: str) -> Any:
    """A TOML text with a few bytes spliced in, or arbitrary bytes."""
    data = text.encode()
    spliced = st.tuples(st.integers(0, len(data)), st.binary(max_size=10), st.integers(0, 6)).map(
        lambda t: data[: t[0]] + t[1] + data[t[0] + t[2] :]
    )
    return (
        spliced
        | st.binary(max_size=200)
        | st.sampled_from([b"a = " + b"[" * 5000, b'model = "subprocess:call"'])
    )


def _others_property(data: st.DataObject) -> None:
    from explorer.mutation.command import _open_results
    from explorer.release import SuiteEntry, _read_mutation
    from explorer.suite import load_suite

    with sandbox() as (folder, marker, check):
        res = folder / "r.jsonl"
        lines = [data.draw(mutated(RESULTS_HEADER, str(marker)))]
        lines += [data.draw(mutated({"mutant": {"name": "m", "status": "killed", "cells": {}}}, str(marker)))]
        res.write_bytes(b"\n".join(lines) + b"\n")
        entries = [SuiteEntry(name="system", model="tests.toy_mutation:make")]
        refused_as((UsageError,), lambda: _open_results(res, entries, False, False, False))
        mut = folder / "m.json"
        mut.write_bytes(data.draw(mutated(MUTATION_DOC, str(marker)) | st.binary(max_size=100)))
        refused_as((ConfigError,), lambda: _read_mutation(str(mut)))
        suite = folder / "s.toml"
        suite.write_bytes(data.draw(_text_mutated(SUITE)))
        refused_as((ConfigError,), lambda: load_suite(str(suite)))
        cfg = folder / "c.toml"
        cfg.write_bytes(data.draw(_text_mutated(CONFIG)))
        refused_as((ConfigError,), lambda: load_config(model_spec("timing-wheel").config_cls, cfg))
        check()


@pytest.mark.slow  # 0.9 CPU-s in a loaded default run (2026-11-29)
@fast(FEW)
@given(data=st.data())
def test_results_mutation_suite_and_config_files_are_data(data: st.DataObject) -> None:
    _others_property(data)


@pytest.mark.slow
@fast(MANY)
@given(data=st.data())
def test_results_mutation_suite_and_config_files_are_data_many(data: st.DataObject) -> None:
    _others_property(data)
