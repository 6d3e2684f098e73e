"""Shrinking counterexamples: steps (ddmin, bfs), configuration, outputs and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

import invariants
from explorer.config import load_config
from explorer.core import transition
from explorer.datafiles import model_digest
from explorer.engines.bfs import check_bfs
from explorer.engines.simulate import check_simulate
from explorer.shrink import ShrinkError, ddmin, shrink_main, shrink_trace, target_for
from explorer.tracefile import load_trace, replay_steps, trace_document, write_json_atomic
from tests.toys import Grid

ROOT = Path(__file__).resolve().parents[1]
UP0, UP1 = "counter 0 increments", "counter 1 increments"


def _zigzag(k: int) -> list[str | None]:
    return [None, *([UP1, UP0] * k)]


def test_ddmin_is_one_minimal() -> None:
    assert ddmin(list(range(20)), lambda xs: xs if {2, 11, 17} <= set(xs) else None) == [2, 11, 17]
    assert ddmin([1, 2, 3], lambda xs: xs) == []


def test_steps_shrink_by_ddmin_alone() -> None:
    out = shrink_trace(
        "tests.toys:grid",
        {"n": 5, "limit": 4},
        _zigzag(5),
        "sum_below_limit",
        use_bfs=False,
        shrink_config=False,
        shrinker="ddmin",
    )
    assert out.original_length == 10 and out.length == 4 and sum(out.steps[-1].state) == 4
    assert out.notes[0] == "steps: 10 -> 4 by ddmin (cut at 4)"


def test_ddmin_removes_detours() -> None:
    # a crash/restart detour: the shorter path without it also fails
    g_steps = [None, UP0, UP1, UP0, UP1, UP0]
    out = shrink_trace(
        Grid(4), None, g_steps, "odd_in_a", properties=[_odd_a()], shrink_config=False, use_bfs=False
    )
    assert [s.action for s in out.steps] == [None, UP0]


def _odd_a():  # type: ignore[no-untyped-def]
    from explorer.core import always

    return always("odd_in_a", lambda s: s[0] % 2 == 0 or s[0] > 3, "a is even")


def test_transition_and_deadlock_shrink() -> None:
    bad = transition("no_drop", lambda s, a, t: sum(t) >= sum(s), "sum never drops")
    long = [None, UP1, UP0, UP0, UP1, "both counters reset", UP0, UP0, UP1, UP1, "both counters reset"]
    out = shrink_trace(Grid(2, reset=True), None, long, "no_drop", properties=[bad], shrink_config=False)
    assert out.length == 5 and out.steps[-1].action == "both counters reset" and out.kind == "transition"
    dead = shrink_trace(
        "tests.toys:grid", {"n": 3, "terminal": False}, [None, UP0, UP1, UP0, UP1, UP0, UP1], "deadlock"
    )
    assert dead.kind == "deadlock" and dead.config == {"n": 0, "terminal": False} and dead.length == 0


def test_config_shrinks_with_fixed_keys_and_bfs() -> None:
    r = check_simulate(Grid(9, limit=7), Grid(9, limit=7).properties(), seed=5, walks=20, depth=30)
    v = r.violations[0]
    out = shrink_trace("tests.toys:grid", {"n": 9, "limit": 7}, v.trace, v.property, fixed_keys=["limit"])
    assert out.config == {"n": 4, "limit": 7} and out.length == 7
    assert out.config_changes() == ["n 9 -> 4"]
    config, steps = out  # unpacks as (config, steps)
    assert config is out.config and steps is out.steps
    # without fixed keys, lowering the limit itself is the smallest failing configuration
    anything = shrink_trace("tests.toys:grid", {"n": 9, "limit": 7}, v.trace, v.property)
    assert anything.config["limit"] == 0 and anything.length == 0


def test_errors_are_one_line() -> None:
    with pytest.raises(ShrinkError, match="does not replay to a violation"):
        shrink_trace("tests.toys:grid", {"n": 3, "limit": 9}, [None, UP0], "sum_below_limit")
    with pytest.raises(ShrinkError, match="property 'nope' is not defined"):
        shrink_trace("tests.toys:grid", {"n": 3}, [None, UP0], "nope")
    with pytest.raises(ShrinkError, match="corner' is reachable: only always, transition, deadlock shrink"):
        shrink_trace("tests.toys:grid", {"n": 3}, [None, UP0], "corner")
    with pytest.raises(ShrinkError, match="unknown model 'nope'"):
        target_for("nope")
    with pytest.raises(ShrinkError, match="configuration: "):
        shrink_trace("tests.toys:grid", {"m": 3}, [None, UP0], "sum_below_limit")


def _grid_shrunk():  # type: ignore[no-untyped-def]
    return shrink_trace(
        "tests.toys:grid", {"n": 5, "limit": 3}, _zigzag(4), "sum_below_limit", fixed_keys=["limit"]
    )


def test_outputs_trace_file_and_readable(tmp_path: Path) -> None:
    out = _grid_shrunk()
    doc = out.trace_document()
    assert doc["schema"] == "kafka-mc/trace/1" and doc["system"] == "tests.toys:grid" and doc["length"] == 3
    path = tmp_path / "t.json"
    write_json_atomic(path, doc)
    loaded = load_trace(str(path))
    system = target_for("tests.toys:grid").build(loaded["config"])[0]
    assert sum(replay_steps(system, loaded["steps"])[-1]) == 3
    text = out.readable()
    assert text.splitlines()[0] == "tests.toys:grid: sum_below_limit (always) violated after 3 steps"
    assert "  config: n=3, terminal=true" not in text and "initial state" in text


def _run_pytest(path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", str(path)],
        capture_output=True,
        text=True,
        cwd=path.parent,
        env=env,
    )


@pytest.mark.slow
def test_generated_tests_run_under_pytest_in_both_modes(tmp_path: Path) -> None:
    out = _grid_shrunk()
    bug = tmp_path / "test_grid_bug.py"
    bug.write_text(out.pytest_source("bug"))
    fixed = tmp_path / "test_grid_fixed.py"
    fixed.write_text(out.pytest_source("fixed"))
    p = _run_pytest(bug)
    assert p.returncode == 0 and "2 passed" in p.stdout, p.stdout + p.stderr
    p = _run_pytest(fixed)
    assert p.returncode == 1 and "sum_below_limit is still violated after the 3-step trace" in p.stdout


def test_generated_test_passes_while_the_bug_exists_and_fails_once_it_is_gone() -> None:
    out = _grid_shrunk()
    ns: dict[str, object] = {}
    exec(compile(out.pytest_source("bug"), "generated", "exec"), ns)
    ns["test_sum_below_limit_is_violated"]()  # type: ignore[operator]
    ns["test_sum_below_limit_is_violated_through_hypothesis"]()  # type: ignore[operator]
    # "fix" the bug: the test must now fail, saying so
    ns["CONFIG"] = {**out.config, "limit": 4}  # the property still names sum < limit
    with pytest.raises(
        AssertionError, match="sum_below_limit holds at the end of the 3-step trace: the bug is gone"
    ):
        ns["test_sum_below_limit_is_violated"]()  # type: ignore[operator]
    with pytest.raises(AssertionError, match="no longer fails as a Hypothesis example: the bug is gone"):
        ns["test_sum_below_limit_is_violated_through_hypothesis"]()  # type: ignore[operator]
    fixed: dict[str, object] = {}
    exec(compile(out.pytest_source("fixed"), "generated", "exec"), fixed)
    fixed["CONFIG"] = {**out.config, "limit": 4}
    fixed["test_sum_below_limit_is_fixed"]()  # type: ignore[operator]
    fixed["test_sum_below_limit_is_fixed_through_hypothesis"]()  # type: ignore[operator]
    with pytest.raises(ValueError, match="mode"):
        out.pytest_source("maybe")


@pytest.mark.slow  # 1.2 CPU-s in a loaded default run (2026-11-29)
def test_registered_model_trace_shrinks_and_its_test_runs() -> None:
    if "simple-timing-wheel" not in invariants.MODEL_MODULES:
        pytest.skip("simple-timing-wheel is not registered")
    spec = invariants.get_model("simple-timing-wheel")
    cfg = load_config(spec.config_cls, values={"delays": [2, 1], "stop_mode": "force"})
    r = check_bfs(spec.build(cfg), [p for p in spec.properties(cfg) if p.name == "no_task_lost"])
    v = r.violations[0]
    out = shrink_trace(spec, cfg, v.trace, v.property, max_seconds=20)
    assert out.length <= v.length and out.model == "simple-timing-wheel"
    ns: dict[str, object] = {}
    exec(compile(out.pytest_source(), "generated", "exec"), ns)
    ns["test_no_task_lost_is_violated"]()  # type: ignore[operator]


# --------------------------------------------------------------------------- CLI


#: a trace made with --system shrinks on the --system given (a file names, it never loads)
SYS = ["--system", "tests.toys:grid"]


def _trace_file(tmp_path: Path, name: str = "t.json") -> Path:
    g = Grid(6, limit=5)
    r = check_simulate(g, g.properties(), seed=2, walks=10, depth=40)
    path = tmp_path / name
    write_json_atomic(
        path, trace_document("tests.toys:grid", {"n": 6, "limit": 5}, r.violations[0], "tests.toys:grid")
    )
    return path


def test_cli_shrinks_and_writes_trace_and_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _trace_file(tmp_path)
    out_dir = tmp_path / "out" / "new"  # a missing output folder is made (as check --save-traces does)
    assert shrink_main([str(path), *SYS, "--out-dir", str(out_dir), "--no-config"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == "tests.toys:grid: sum_below_limit: 5 steps -> 5 steps"
    written = sorted(p.name for p in out_dir.iterdir())  # named as check --save-traces names traces
    assert written == ["test_grid_sum_below_limit_shrunk.py", "tests.toys_grid-sum_below_limit-shrunk.json"]
    doc = load_trace(str(out_dir / written[1]))
    assert doc["config"] == {"n": 6, "limit": 5} and doc["length"] == 5
    assert shrink_main([str(path), *SYS, "--quiet"]) == 0  # default: next to the trace; config shrinks
    first = capsys.readouterr().out.splitlines()[0]
    assert (
        first.startswith("tests.toys:grid: sum_below_limit: 5 steps -> 0 steps; config: ")
        and "limit 5 -> 0" in first
    )
    assert shrink_main([str(path), *SYS, "--quiet", "--keep", "limit"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "tests.toys:grid: sum_below_limit: 5 steps -> 5 steps; config: n 6 -> 3"


def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{")
    cases = [
        [str(tmp_path / "missing.json")],
        [str(bad_json)],
        [str(_trace_file(tmp_path)), *SYS, "--out-dir", str(bad_json / "nope")],
        [str(_trace_file(tmp_path)), *SYS, "--max-seconds", "0"],
        ["--bogus"],
    ]
    for argv in cases:
        assert shrink_main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err.startswith("kafka-mc: error: ") and "\n" not in err


def test_cli_trace_that_no_longer_replays_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _trace_file(tmp_path)
    doc = json.loads(path.read_text())
    doc["steps"][2]["fingerprint"] = "0" * 16
    path.write_text(json.dumps(doc))
    assert shrink_main([str(path), *SYS]) == 1
    assert "no longer replays: step 2" in capsys.readouterr().err
    doc = json.loads(_trace_file(tmp_path, "u.json").read_text())
    doc["config"]["limit"] = 50  # replays, but the property holds throughout
    doc["digest"] = model_digest(doc["model"], doc["config"])  # as written for that configuration
    path.write_text(json.dumps(doc))
    assert shrink_main([str(path), *SYS]) == 1


def test_cli_accepts_a_result_file(tmp_path: Path) -> None:
    g = Grid(4, limit=3)
    r = check_simulate(g, g.properties(), seed=0, walks=5)
    doc = r.to_json()
    doc["model"], doc["system"], doc["config"] = "tests.toys:grid", "tests.toys:grid", {"n": 4, "limit": 3}
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc))
    assert shrink_main([str(path), *SYS, "--property", "sum_below_limit", "--no-config", "--quiet"]) == 0
    assert asdict(r.violations[0].trace[0])["index"] == 0
