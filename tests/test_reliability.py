"""Reliability (issue 15): stopping on signals, suites validated before any work, output
files written atomically, user models that raise, replay that checks what it prints, and
bad values that end in one line and exit 2 (with nothing written)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.cli import main
from explorer.core import always

ROOT = Path(__file__).resolve().parents[1]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], (n, err)


# ----------------------------------------------------------------------- user systems


class Boom:
    """A grid whose ``successors`` raises at one state (a model bug mid-search)."""

    def __init__(self, at: int = 3):
        self.at = at

    def init_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> list[tuple[str, int]]:
        if s == self.at:
            raise ZeroDivisionError(f"boom at {s}")
        return [("inc", s + 1), ("jump", s * 2 + 1)]

    def properties(self) -> list[Any]:
        return [always("small", lambda s: s < 1000, "stays small")]


def boom(at: int = 3) -> Boom:
    return Boom(at)


def factory_raises() -> Boom:
    raise RuntimeError("cannot connect to the model server")


class ListStates(Boom):
    def init_states(self) -> list[Any]:  # type: ignore[override]
        return [[0]]


def list_states() -> ListStates:
    return ListStates()


class Mutable:
    """A state object without value equality: each one would look new."""

    def __init__(self, n: int):
        self.n = n


class MutableStates(Boom):
    def init_states(self) -> list[Any]:  # type: ignore[override]
        return [Mutable(0)]

    def successors(self, s: Any) -> list[tuple[str, Any]]:  # type: ignore[override]
        return [("inc", Mutable(s.n + 1))]


def mutable_states() -> MutableStates:
    return MutableStates()


class Cube:
    """Four counters in ``0..n``: wide levels (the ``--workers`` pool forks after a few), and
    too many states to finish in a test, so signals arrive mid-search."""

    def __init__(self, n: int = 60):
        self.n = n

    def init_states(self) -> list[tuple[int, ...]]:
        marker = os.environ.get("CUBE_STARTED")
        if marker:  # the tests signal only once the search has started
            Path(marker).touch()
        return [(0, 0, 0, 0)]

    def successors(self, s: tuple[int, ...]) -> list[tuple[str, tuple[int, ...]]]:
        return [(f"inc {i}", (*s[:i], s[i] + 1, *s[i + 1 :])) for i in range(4) if s[i] < self.n]


def cube(n: int = 60) -> Cube:
    return Cube(n)


# ----------------------------------------------------------------------- 4. user models


def test_successors_raising_mid_search_is_exit_4_with_trace_and_partial_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json, traces = tmp_path / "r.json", tmp_path / "t"
    traces.mkdir()
    argv = ["check", "--system", "tests.test_reliability:boom", "--json", str(out_json)]
    code, _out, err = run([*argv, "--save-traces", str(traces)], capsys)
    assert code == 4
    one_line(err, "model error", "ZeroDivisionError: boom at 3", "depth 2", ": 3")
    doc = json.loads(out_json.read_text())
    assert doc["exit_code"] == 4 and doc["exit_reason"] == "interrupted"
    assert doc["distinct_states"] == sum(lv["new_states"] for lv in doc["levels"])
    assert [s["action"] for s in doc["model_error"]["trace"]] == [None, "inc", "jump"]
    saved = json.loads((traces / "tests.test_reliability_boom-model-error.json").read_text())
    assert saved["length"] == 2 and saved["steps"][-1]["state"] == 3


def test_factory_raising_is_one_line_exit_4(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["check", "--system", "tests.test_reliability:factory_raises"], capsys)
    assert code == 4
    one_line(err, "factory raised RuntimeError: cannot connect")


@pytest.mark.parametrize(
    ("factory", "needle"),
    [("list_states", "cannot encode a list"), ("mutable_states", "cannot encode a Mutable")],
)
def test_mutable_or_unhashable_states_are_rejected_at_the_first_state(
    factory: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        ["check", "--system", f"tests.test_reliability:{factory}", "--max-seconds", "5"], capsys
    )
    assert code == 4
    one_line(err, "initial state", "not an immutable value", needle)


# ----------------------------------------------------------------------- 5. replay


@pytest.fixture()
def trace_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    d = tmp_path / "traces"
    d.mkdir()
    code, _, _ = run(
        ["check", "--system", "tests.toys:grid", "--set", "limit=3", "--save-traces", str(d)], capsys
    )
    assert code == 1
    (path,) = d.iterdir()
    return path


@pytest.mark.parametrize(
    ("field", "value"),
    [("state", [9, 9]), ("changes", ["[0]: 0 -> 7"]), ("action_kind", "Reset"), ("index", 7)],
)
def test_replay_of_an_edited_trace_fails_naming_the_step(
    trace_file: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any
) -> None:
    assert run(["replay", str(trace_file), "--system", "tests.toys:grid"], capsys)[0] == 0
    doc = json.loads(trace_file.read_text())
    doc["steps"][2][field] = value
    trace_file.write_text(json.dumps(doc))
    code, out, err = run(["replay", str(trace_file), "--system", "tests.toys:grid"], capsys)
    assert code == 1 and "matches" not in out
    one_line(err, "replay failed: step 2", field)


def test_replay_of_a_bad_loop_start_is_a_usage_error(
    trace_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(trace_file.read_text())
    doc["loop_start"] = 99
    trace_file.write_text(json.dumps(doc))
    code, _, err = run(["replay", str(trace_file), "--system", "tests.toys:grid"], capsys)
    assert code == 2
    one_line(err, "loop_start")


# ----------------------------------------------------------------------- 2. suites

GOOD = """
[[check]]
name = "first"
model = "timing-wheel"
config = "{root}/configs/timing-wheel-small.toml"
max_seconds = 60
"""


@pytest.mark.parametrize(
    ("entry", "needles"),
    [
        ('model = "no-such-model"', ("check 2", "unknown model 'no-such-model'")),
        ('model = "timing-wheel"\nconfig = "missing.toml"', ("check 2", "missing.toml", "no such file")),
        ('model = "timing-wheel"\nengine = "warp"', ("check 2", "engine", "'warp'")),
        ('model = "timing-wheel"\nmax_seconds = "abc"', ("check 2", "max_seconds", "'abc'")),
        ('model = "timing-wheel"\nmax_seconds = nan', ("check 2", "max_seconds")),
        ('model = "timing-wheel"\nmax_states = 1.5', ("check 2", "max_states")),
        ('model = "timing-wheel"\nset = "tick_ms=1"', ("check 2", "set must be a list")),
        ('model = "timing-wheel"\nset = ["no_such_key=1"]', ("check 2", "unknown key 'no_such_key'")),
        ('model = "timing-wheel"\nset = [1, 2]', ("check 2", "set must be a list")),
        (
            'model = "timing-wheel"\nexpect = "violation"\nviolates = "deadlock"',
            ("check 2", "violates must be a list"),
        ),
        ('model = "timing-wheel"\nexpect = "violation"\nviolates = ["nope"]', ("check 2", "'nope'")),
        ('model = "no-target"\nengine = "symbolic"', ("check 2", "unknown proof target")),
    ],
)
def test_suite_is_validated_entry_by_entry_before_any_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str, needles: tuple[str, ...]
) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text(GOOD.format(root=ROOT) + f'\n[[check]]\nname = "second"\n{entry}\n')
    code, out, err = run(["release", "--suite", str(suite), "--report-dir", str(tmp_path / "r")], capsys)
    assert code == 2 and "[1/" not in out  # the first entry never ran
    one_line(err, *needles)
    assert not (tmp_path / "r").exists()


def test_suite_with_a_non_table_check_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text("check = [1, 2]\n")
    code, _, err = run(["release", "--suite", str(suite), "--report-dir", str(tmp_path / "r")], capsys)
    assert code == 2
    one_line(err, "no [[check]] entries")


def _two_entry_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite.toml"
    suite.write_text(GOOD.format(root=ROOT) + GOOD.format(root=ROOT).replace('"first"', '"second"'))
    return suite


def test_release_stops_at_the_first_interrupt_and_still_writes_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import explorer.release as release
    from explorer.search import request_stop

    real = release.run_check

    def interrupted(*a: Any, **k: Any) -> Any:
        request_stop("SIGINT")  # as the first Ctrl-C does: the running search stops at once
        return real(*a, **k)

    monkeypatch.setattr(release, "run_check", interrupted)
    code, out, _ = run(
        [
            "release",
            "--suite",
            str(_two_entry_suite(tmp_path)),
            "--report-dir",
            str(tmp_path / "r"),
            "--jobs",
            "1",
        ],
        capsys,
    )  # one after the other (entries side by side: tests/test_release_jobs.py)
    assert code == 3 and "not run: second" in out and "[2/" not in out
    doc = json.loads((tmp_path / "r" / "latest" / "report.json").read_text())
    assert [e["status"] for e in doc["entries"]] == ["budget", "not-run"] and doc["interrupted"]
    assert (tmp_path / "r" / "latest" / "index.html").read_text().rstrip().endswith("</html>")
    assert [p.name for p in (tmp_path / "r" / "latest").iterdir() if p.name.startswith(".")] == []


# ----------------------------------------------------------------------- 3. output files


def test_runs_started_together_never_share_a_folder(tmp_path: Path) -> None:
    from explorer.release import _run_dir

    ids = {_run_dir(str(tmp_path))[0] for _ in range(5)}
    assert len(ids) == 5 and len(list(tmp_path.iterdir())) == 5


def test_report_files_are_renamed_into_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kill while index.html is written leaves the old page (or none), never half of one."""
    import explorer.release as release

    page = tmp_path / "index.html"
    page.write_text("old")

    def fail(*a: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(release.os, "replace", fail)
    with pytest.raises(KeyboardInterrupt):
        release._write_text_atomic(page, "new" * 1000)
    assert page.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["index.html"]


@pytest.mark.parametrize("kind", ["symlink", "device", "empty"])
def test_json_refuses_what_is_not_a_regular_file_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    target = tmp_path / "real.json"
    target.write_text("keep me")
    if kind == "symlink":
        path = tmp_path / "link.json"
        path.symlink_to(target)
    path_s = {"symlink": str(tmp_path / "link.json"), "device": os.devnull, "empty": ""}[kind]
    code, _, err = run(["check", "--system", "tests.toys:grid", "--json", path_s, "--quiet"], capsys)
    assert code == 2
    one_line(err, "--json")
    assert target.read_text() == "keep me"


def test_save_traces_refuses_a_folder_with_older_traces(
    trace_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "check",
        "--system",
        "tests.toys:grid",
        "--set",
        "limit=2",
        "--save-traces",
        str(trace_file.parent),
    ]
    code, _, err = run(argv, capsys)
    assert code == 2
    one_line(err, "already holds 1 trace file", "--overwrite-traces")
    assert run([*argv, "--overwrite-traces"], capsys)[0] == 1


def test_hypothesis_without_database_leaves_nothing_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["check", "--system", "tests.toys:grid", "--engine", "hypothesis", "--no-database"]
    code, _, _ = run([*argv, "--max-examples", "5", "--quiet"], capsys)
    assert code == 3 and list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------- bad values

HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["check", "timing-wheel", "--max-seconds", "nan"], ("--max-seconds", "finite")),
        (["check", "timing-wheel", "--max-seconds", "inf"], ("--max-seconds", "finite")),
        (["check", "timing-wheel", "--config", ""], ("--config", "empty")),
        (["check", "timing-wheel", "--set", f"tick_ms={HUGE}"], ("--set tick_ms", "unreadable")),
        (["check", "timing-wheel", "--workers", "100000"], ("--workers", "at most")),
        (["check", "timing-wheel", "--save-traces", ""], ("--save-traces",)),
        (["prove", "timing-wheel", "--max-seconds", "nan"], ("--max-seconds", "finite")),
    ],
)
def test_bad_values_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needles: tuple[str, ...]
) -> None:
    out = tmp_path / "r.json"
    code, _, err = run([*argv, "--json", str(out)], capsys)
    assert code == 2
    one_line(err, *needles)
    assert not out.exists()


def test_unknown_top_level_key_beside_a_config_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("bogus = 1\n[meta]\nnote = 'free'\n[config]\ntick_ms = 1\n")
    code, _, err = run(["check", "timing-wheel", "--config", str(cfg), "--max-depth", "1"], capsys)
    assert code == 2
    one_line(err, "unknown top-level key 'bogus'")
    huge = tmp_path / "h.toml"
    huge.write_text(f"tick_ms = {HUGE}\n")
    code, _, err = run(["check", "timing-wheel", "--config", str(huge), "--max-depth", "1"], capsys)
    assert code == 2
    one_line(err, "h.toml", "unreadable TOML")


def test_shrink_help_and_unknown_keep_key(trace_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["shrink", "--help"], capsys)
    assert code == 0 and "--keep" in out
    code, _, err = run(
        ["shrink", str(trace_file), "--keep", "no_such_key", "--out-dir", str(trace_file.parent)], capsys
    )
    assert code == 2
    one_line(err, "--keep no_such_key", "not a key")


# ----------------------------------------------------------------------- 1. signals


def _start(argv: list[str], tmp_path: Path) -> subprocess.Popen[str]:
    marker = tmp_path / "started"
    marker.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CUBE_STARTED": str(marker)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", *argv],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (dead, not yet reaped by its parent) counts as gone
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split(")")[-1].split()[0] != "Z"


def _interrupt(tmp_path: Path, sig: signal.Signals, delay: float, workers: int) -> None:
    out = tmp_path / f"r-{sig.name}-{delay}-{workers}.json"
    argv = ["check", "--system", "tests.test_reliability:cube", "--quiet", "--json", str(out)]
    proc = _start([*argv, "--workers", str(workers)], tmp_path)
    time.sleep(delay)
    kids = _children(proc.pid)
    proc.send_signal(sig)
    try:
        _stdout, stderr = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:  # pragma: no cover - the bug this test is for
        proc.kill()
        pytest.fail(f"{sig.name} after {delay} s: no exit within 15 s")
    assert proc.returncode == 3, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert f"interrupted by {sig.name}" in stderr
    doc = json.loads(out.read_text())
    assert doc["exit_reason"] == "interrupted"
    assert doc["distinct_states"] == sum(lv["new_states"] for lv in doc["levels"])
    deadline = time.monotonic() + 5
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(k) for k in kids), "orphan workers"


@pytest.mark.slow  # 2.2 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_search_with_a_consistent_partial_result(
    tmp_path: Path, sig: signal.Signals
) -> None:
    _interrupt(tmp_path, sig, 0.5, 1)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("delay", [0.0, 0.3, 1.1, 2.5])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signals_at_many_points(tmp_path: Path, sig: signal.Signals, delay: float, workers: int) -> None:
    _interrupt(tmp_path, sig, delay, workers)


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 1.0])
def test_workers_die_with_a_killed_driver(tmp_path: Path, delay: float) -> None:
    argv = ["check", "--system", "tests.test_reliability:cube", "--quiet", "--workers", "2"]
    proc = _start(argv, tmp_path)
    deadline = time.monotonic() + 20
    while len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(delay)
    kids = _children(proc.pid)
    assert kids, "no workers were forked"
    proc.kill()
    proc.communicate()
    deadline = time.monotonic() + 5
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(k) for k in kids), "orphan workers after kill -9 of the driver"


# ----------------------------------------------------------------------- fuzz: configs

MODELS = ["timing-wheel", "purgatory", "simple-timing-wheel", "controller"]

_scalars = st.one_of(
    st.integers(min_value=-3, max_value=6),
    st.booleans(),
    st.sampled_from(["", "abc", "legacy", "none", "1", "[1", "nan", "9" * 5000]),
    st.floats(allow_nan=True),
    st.lists(st.integers(min_value=-2, max_value=5), max_size=3),
)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return (
            "nan" if v != v else ("inf" if v == float("inf") else "-inf" if v == float("-inf") else repr(v))
        )
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return str(v)


@st.composite
def _documents(draw: st.DrawFn, model: str) -> tuple[str, list[str]]:
    from explorer.frontend import model_spec

    keys = [f.name for f in model_spec(model).config_cls.__dataclass_fields__.values()]
    names = st.sampled_from([*keys, "no_such_key", "meta"])
    body = {draw(names): draw(_scalars) for _ in range(draw(st.integers(0, 3)))}
    lines = [f"{k} = {_toml_value(v)}" for k, v in body.items()]
    if draw(st.booleans()):
        lines = [*([draw(st.sampled_from(["stray = 1", ""]))]), "[config]", *lines]
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from(["= broken", "[[x]]", "a = [1,"])))
    sets = [
        draw(st.sampled_from(["", "=", "k", f"{draw(names)}="])) + _toml_value(draw(_scalars))
        if draw(st.booleans())
        else f"{draw(names)}={draw(st.text(max_size=6))}"
        for _ in range(draw(st.integers(0, 2)))
    ]
    return "\n".join(lines) + "\n", sets


@pytest.mark.slow  # 1.3 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("model", MODELS)
def test_fuzz_config_loader(model: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Random TOML documents and --set strings: exit 2 with one line and nothing written, or a run."""

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(_documents(model))
    def one(doc: tuple[str, list[str]]) -> None:
        text, sets = doc
        d = tmp_path_factory.mktemp("fuzz")
        cfg, out = d / "c.toml", d / "r.json"
        cfg.write_text(text)
        argv = ["check", model, "--config", str(cfg), "--max-states", "30", "--quiet", "--json", str(out)]
        for s in sets:
            argv += ["--set", s]
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
        if code == 2:
            assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()
            assert not out.exists()
        else:
            assert code in (0, 1, 3), (code, err.getvalue())
            assert json.loads(out.read_text())["exit_code"] == code

    one()


def test_stdout_closed_early_still_writes_the_json(tmp_path: Path) -> None:
    """``kafka-mc check ... | head -0``: the reader leaves before the summary is printed; the
    run ends with its own exit code, no traceback, and ``--json`` is written all the same."""
    out = tmp_path / "r.json"
    argv = ["check", "--system", "tests.toys:grid", "--set", "n=30", "--json", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", *argv],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # before the interpreter has even started the search
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "Broken pipe" not in stderr, stderr
    assert json.loads(out.read_text())["distinct_states"] == 961


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_first_ctrl_c_stops_mutate_with_jobs_at_once(tmp_path: Path, sig: signal.Signals) -> None:
    """``kafka-mc mutate --jobs 2`` with two long mutants running: one SIGINT (or SIGTERM) ends it
    within seconds (before: it waited for the running mutants), exit 3 in one line, no worker
    left, and the mutants it stopped are not in the results file (before: each was recorded as
    crashed, "the worker exited with code -9", and a resumed run skipped it)."""
    suite = tmp_path / "suite.toml"
    suite.write_text(
        '[[check]]\nname = "ref"\nmodel = "controller"\n'
        f'config = "{ROOT / "configs" / "controller-ref.toml"}"\nmax_seconds = 120\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", "mutate", "--suite", str(suite), "--entries", "ref",
         "--mutants", "no-epoch-bump,epoch-reset,empty-isr", "--jobs", "2", "--no-baseline", "--quiet",
         "--results", str(tmp_path / "results.jsonl")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < deadline:  # both mutants' workers started
        time.sleep(0.3)
        workers = _children(proc.pid)
    assert len(workers) >= 2, "the mutant workers did not start"
    time.sleep(1.0)
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        _stdout, stderr = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:  # pragma: no cover - the bug this test is for
        proc.kill()
        pytest.fail(f"no exit within 20 s of the first {sig.name}")
    assert time.monotonic() - t0 < 10
    assert proc.returncode == 3 and f"interrupted by {sig.name}" in stderr
    rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    stopped = [r["mutant"]["name"] for r in rows if "mutant" in r and r["mutant"]["status"] == "crashed"]
    assert stopped == [], "a stopped mutant was recorded as crashed"
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    deadline = time.monotonic() + 5
    while any(_alive(k) for k in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(k) for k in workers), "orphan mutant workers"


@pytest.mark.slow
def test_one_sigint_stops_workers_at_any_moment(tmp_path: Path) -> None:
    """``--workers 2`` on controller-admin (eventually properties: the driver also decides them
    on the workers' edges after the search), one SIGINT at a sweep of moments from the fork of
    the workers to the end of the run: each run ends within 5 s of it, with no second signal,
    no traceback and no worker left (exit 3 interrupted, or 0 when the signal came after the
    search was decided). The sweep starts at the run's first line of output (progress every
    0.2 s): the CLI's handler is in place by then, while a signal in the interpreter's first
    moments, before it, is Python's own KeyboardInterrupt."""
    ROOT = Path(__file__).resolve().parent.parent
    cmd = [sys.executable, "-m", "explorer", "check", "controller", "--config",
           str(ROOT / "configs" / "controller-admin.toml"), "--workers", "2"]  # fmt: skip

    env = {**os.environ, "KAFKA_MC_PROGRESS_EVERY": "0.2"}

    def start() -> tuple[subprocess.Popen[str], float, str]:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
        assert proc.stderr is not None
        first = proc.stderr.readline()  # the CLI runs: its handler is in place
        return proc, time.monotonic(), first

    proc, began, _ = start()
    proc.communicate(timeout=120)
    whole = max(time.monotonic() - began, 0.5)  # the run's length from its first line on
    outcomes = set()
    for k in range(0, 8):
        proc, _, first = start()
        time.sleep(whole * k / 9)
        workers = _children(proc.pid)
        proc.send_signal(signal.SIGINT)
        try:
            _out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - the bug this test is for
            proc.kill()
            proc.communicate()
            pytest.fail(f"still running 5 s after one SIGINT at {k}/9 of the run")
        err = first + err
        assert "Traceback" not in err, err
        assert proc.returncode in (0, 3), (proc.returncode, err)
        outcomes.add(proc.returncode)
        deadline = time.monotonic() + 5
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(w) for w in workers), "orphan workers"
    assert 3 in outcomes  # the sweep did interrupt searches


@pytest.mark.parametrize("master", ["bogus://x", "spark:/missing-slash", "localhost"])
def test_a_master_of_no_known_form_is_refused_before_the_jvm(
    master: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Spark master of no form Spark knows is one line, exit 2, before a JVM starts (which
    took seconds and printed Java's own error first)."""
    code = main(["check", "controller", "--engine", "spark", "--master", master])
    assert code == 2
    one_line(capsys.readouterr().err, f"bad Spark master {master}")  # not Java's gateway error
