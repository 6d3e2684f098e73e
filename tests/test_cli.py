"""The command line: exit codes, one-line errors, nothing written on bad input."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import typing
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.cli import main
from explorer.config import describe_keys
from explorer.frontend import Bounded, registry
from invariants import MODEL_MODULES, get_model

MODEL = "timing-wheel"


def _int_key_with_min() -> tuple[str, int]:
    cls = get_model(MODEL).config_cls
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if hints[f.name] is int and f.metadata.get("min") is not None:
            return f.name, f.metadata["min"]
    raise AssertionError("timing-wheel has no bounded int key")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str, *needles: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("kafka-mc: error: ")
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], (n, lines[0])


def test_system_check_ok_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "r.json"
    code, out, _ = run(
        ["check", "--system", "tests.toys:grid", "--set", "n=3", "--json", str(out_file)], capsys
    )
    assert code == 0
    assert "16 distinct states" in out
    doc = json.loads(out_file.read_text())
    assert doc["distinct_states"] == 16 and doc["exit_reason"] == "complete" and doc["exit_code"] == 0
    assert doc["config"] == {"n": 3}


def test_system_violation_exit_1_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "r.json"
    code, out, _ = run(
        [
            "check",
            "--system",
            "tests.toys:grid",
            "--set",
            "limit=3",
            "--json",
            str(res),
            "--save-traces",
            str(tmp_path),
        ],
        capsys,
    )
    assert code == 1
    assert "VIOLATION of sum_below_limit" in out and "counter 0 increments" in out
    trace = tmp_path / "tests.toys_grid-sum_below_limit.json"
    assert trace.exists()
    for path in (trace, res):
        code, out, _ = run(["replay", str(path), "--system", "tests.toys:grid"], capsys)
        assert code == 0, out
        assert "3 steps replayed" in out and "violation reproduced" in out


def test_replay_detects_a_trace_that_no_longer_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(["check", "--system", "tests.toys:grid", "--set", "limit=3", "--save-traces", str(tmp_path)], capsys)
    trace = tmp_path / "tests.toys_grid-sum_below_limit.json"
    doc = json.loads(trace.read_text())
    doc["steps"][2]["action"] = "counter 7 increments"
    trace.write_text(json.dumps(doc))
    code, _, err = run(["replay", str(trace), "--system", "tests.toys:grid"], capsys)
    assert code == 1 and "step 2: action not enabled" in err
    doc["steps"][2]["action"] = "counter 0 increments"
    doc["steps"][2]["fingerprint"] = "0" * 16
    trace.write_text(json.dumps(doc))
    code, _, err = run(["replay", str(trace), "--system", "tests.toys:grid"], capsys)
    assert code == 1 and "step 2: state after" in err


def test_budget_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["check", "--system", "tests.toys:grid", "--set", "n=50", "--max-states", "10"], capsys
    )
    assert code == 3 and "max_states reached" in out


def test_continue_collects_all(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "--system", "tests.toys:grid", "--set", "limit=2", "--set", "terminal=false"]
    code, out, _ = run([*argv, "--continue"], capsys)
    assert code == 1 and "VIOLATION of deadlock" in out and "VIOLATION of sum_below_limit" in out


def test_models_lists_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["models"], capsys)
    assert code == 0
    for name in MODEL_MODULES:
        assert f"{name}:" in out
    key, _ = _int_key_with_min()
    assert key in out
    code, out, _ = run(["models", "--json"], capsys)
    assert {m["name"] for m in json.loads(out)} == set(MODEL_MODULES)


def _columns(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


@pytest.mark.parametrize("name", [None, *MODEL_MODULES])
def test_models_fit_100_columns_and_one_model_is_given_in_full(
    name: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every line of `models` and `models NAME` fits 100 terminal columns (off a terminal);
    NAME gives every key with its type, default and meaning; --json the same as JSON."""
    code, out, _ = run(["models"] if name is None else ["models", name], capsys)
    assert code == 0
    assert max(_columns(line) for line in out.splitlines()) <= 100
    if name is None:
        return
    spec = registry().get_model(name)
    flat = " ".join(out.split())
    for key, typ, default, meaning in describe_keys(spec.config_cls):
        assert f"{key} ({typ}, default {default})" in flat
        assert " ".join(meaning.split()) in flat
    code, out, _ = run(["models", name, "--json"], capsys)
    doc = json.loads(out)
    assert doc["name"] == name and [k["key"] for k in doc["keys"]] == [
        f.name for f in dataclasses.fields(spec.config_cls)
    ]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["models", "controllr"], "unknown model 'controllr' (did you mean 'controller'?)"),
        (["check", "controler"], "unknown model 'controler' (did you mean 'controller'?)"),
        (["check", "controller", "--set", "brokerz=2"], "unknown key 'brokerz' (did you mean 'brokers'?)"),
        (["check", MODEL, "--engine", "sprak"], "--engine sprak: unknown engine (did you mean 'spark'?)"),
        (["check", MODEL, "--reduce", "symetry"], "unknown reduction (did you mean 'symmetry'?)"),
        (["prove", "electon-rules"], "unknown proof target 'electon-rules' (did you mean 'election-rules'?)"),
        (
            ["prove", "timing-wheel", "--only", "no_early_expiri"],
            "no proof obligation 'no_early_expiri' (did you mean 'no_early_expiry'?)",
        ),
    ],
)
def test_a_near_miss_gets_a_did_you_mean(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_an_unknown_key_far_from_all_lists_a_few(capsys: pytest.CaptureFixture[str]) -> None:
    """No class name, and not all 40 keys: the first few and where the rest are."""
    code, _, err = run(["check", "controller", "--set", "zzzz=1"], capsys)
    assert code == 2
    assert "unknown key 'zzzz'" in err and "ControllerConfig" not in err
    assert "more; `kafka-mc models NAME` lists them" in err and len(err) < 300


def _bad_inputs(tmp_path: Path) -> list[tuple[list[str], tuple[str, ...]]]:
    key, lo = _int_key_with_min()
    malformed = tmp_path / "bad.toml"
    malformed.write_text("x = [1,\n")
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("no_such_key = 1\n")
    unreadable = tmp_path / "secret.toml"
    unreadable.write_text(f"{key} = 2\n")
    unreadable.chmod(0)
    cases = [
        (["check", "no-such-model"], ("unknown model", "no-such-model")),
        (["check", MODEL, "--set", "no_such_key=1"], ("unknown key", "no_such_key")),
        (["check", MODEL, "--set", f"{key}=abc"], (key, "expected an integer")),
        (["check", MODEL, "--set", f"{key}={lo - 1}"], (key, f"at least {lo}")),
        (["check", MODEL, "--set", f"{key}=-5"], (key,)),
        (["check", MODEL, "--set", "novalue"], ("key=value",)),
        (["check", MODEL, "--config", str(malformed)], ("bad.toml", "malformed TOML")),
        (["check", MODEL, "--config", str(unknown)], ("unknown key", "no_such_key")),
        (["check", MODEL, "--config", str(tmp_path / "missing.toml")], ("missing.toml", "no such file")),
        (["check", MODEL, "--config", str(tmp_path)], ("is a directory",)),
        (["check", MODEL, "--max-depth", "0"], ("--max-depth", "positive")),
        (["check", MODEL, "--max-states", "-3"], ("--max-states", "positive")),
        (["check", MODEL, "--max-seconds", "abc"], ("--max-seconds",)),
        (["check", MODEL, "--engine", "warp"], ("--engine", "warp")),
        (["check", MODEL, "--json", str(tmp_path / "nodir" / "r.json")], ("--json", "does not exist")),
        (["check"], ("MODEL",)),
        (["check", "--system", "tests.toys:nothing"], ("no callable",)),
        (["check", "--system", "tests.toys:not_a_system"], ("init_states",)),
        (["check", "--system", "no_such_module_x:f"], ("cannot import",)),
        (["replay", str(tmp_path / "missing.json")], ("no such file",)),
        (["replay", str(malformed)], ("not JSON",)),
        (["release", "--suite", str(malformed)], ("malformed TOML",)),
        (["frobnicate"], ("frobnicate",)),
    ]
    if os.geteuid() != 0:  # root reads any file
        cases.append((["check", MODEL, "--config", str(unreadable)], ("secret.toml", "cannot be read")))
    return cases


def test_bad_input_is_one_line_exit_2_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for argv, needles in _bad_inputs(tmp_path):
        extra = [] if argv[0] != "check" or "--json" in argv else ["--json", str(out_dir / "r.json")]
        code, _, err = run([*argv, *extra], capsys)
        assert code == 2, (argv, err)
        one_line_error(err, *needles)
    assert list(out_dir.iterdir()) == []


def test_console_entry_prints_no_traceback(tmp_path: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "explorer", "check", MODEL, "--set", "no_such_key=1"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


def test_liveness_lasso_printed_saved_and_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["check", "--system", "tests.toys:retransmit"], capsys)
    assert code == 0 and "held: delivered" in out
    code, out, _ = run(
        ["check", "--system", "tests.toys:retransmit", "--set", "fair=false", "--save-traces", str(tmp_path)],
        capsys,
    )
    assert code == 1 and "VIOLATION of delivered (eventually)" in out and "loop:" in out
    code, out, _ = run(
        [
            "replay",
            str(tmp_path / "tests.toys_retransmit-delivered.json"),
            "--system",
            "tests.toys:retransmit",
        ],
        capsys,
    )
    assert code == 0 and "violation reproduced" in out and "repeat forever" in out


def test_simulate_and_hypothesis_engines_from_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["check", "--system", "tests.toys:grid", "--set", "limit=3", "--quiet"]
    code, out, _ = run(
        [*base, "--engine", "simulate", "--seed", "1", "--walks", "20", "--depth", "10"], capsys
    )
    assert code == 1 and "(simulate): violation" in out and "VIOLATION of sum_below_limit" in out
    code, out, _ = run([*base, "--engine", "hypothesis", "--no-database", "--seed", "1"], capsys)
    assert code == 1 and "(hypothesis): violation" in out
    code, out, _ = run(["check", "--system", "tests.toys:grid", "--engine", "simulate", "--quiet"], capsys)
    assert code == 3  # a simulation never proves a property


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--walks", "3"], "--walks applies to --engine simulate only"),
        (["--engine", "simulate", "--max-depth", "3"], "--max-depth applies to exhaustive engines"),
        (["--engine", "simulate", "--weight", "Inc=-1"], "Inc"),
        (["--engine", "simulate", "--fault", "Inc=2"], "Inc"),
        (["--engine", "simulate", "--walks", "0"], "--walks"),
        (["--max-examples", "5"], "--max-examples applies to --engine hypothesis only"),
        (["--seed", "5"], "--seed applies to --engine simulate or hypothesis only"),
    ],
)
def test_engine_option_errors(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["check", "--system", "tests.toys:grid", *argv], capsys)
    assert code == 2
    one_line_error(err, needle)


def test_spark_option_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, needle in [
        (["--master", "local[2]"], "--master applies to --engine spark only"),
        (["--engine", "spark", "--partitions", "0"], "--partitions"),
        (["--engine", "spark", "--spark-conf", "novalue"], "KEY=VALUE"),
        (["--engine", "spark", "--local-frontier", "-1"], "--local-frontier"),
    ]:
        code, _, err = run(["check", "--system", "tests.toys:grid", *argv], capsys)
        assert code == 2
        one_line_error(err, needle)


@pytest.mark.slow  # over 1.3 CPU-s in the CI of session 17
def test_prove_and_symbolic_engine(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["prove", "--list"], capsys)
    assert code == 0 and "election-rules:" in out and "timing-wheel:" in out
    code, out, _ = run(["prove", "timing-wheel", "--only", "overflow_wheel_parameters"], capsys)
    assert code == 0 and "held: overflow_wheel_parameters" in out and "proof obligations" in out
    code, out, _ = run(["check", "controller-election", "--engine", "symbolic"], capsys)
    assert code == 0 and "held: controller_core_k_induction" in out
    code, _, err = run(["prove", "no-such-target"], capsys)
    assert code == 2
    one_line_error(err, "unknown proof target")


def test_check_runs_the_reference_configuration_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["check", "simple-timing-wheel", "--quiet"], capsys)
    assert code == 1  # seed 004's Java demo as printed: its bugs are found
    assert "configuration: " in out and "simple-timing-wheel-ref.toml" in out
    assert "VIOLATION of " in out
    code, out, _ = run(["check", "simple-timing-wheel", "--defaults", "--quiet"], capsys)
    assert code == 0 and "configuration: " not in out  # the demo's own main: one task, no stop
    code, _, err = run(["check", "timing-wheel", "--defaults", "--config", "x.toml"], capsys)
    assert code == 2
    one_line_error(err, "--defaults and --config")


def test_save_traces_makes_a_missing_folder_only_when_it_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing --save-traces folder (nested too) is made when the first trace is written; a run
    with no violation, or one refused as bad input, leaves it unmade; a file in its way, or a
    path under a file, is a one-line error before any work."""
    grid = ["check", "--system", "tests.toys:grid"]
    quiet = tmp_path / "quiet" / "traces"
    assert run([*grid, "--set", "limit=99", "--save-traces", str(quiet)], capsys)[0] == 0
    assert not (tmp_path / "quiet").exists()
    refused = tmp_path / "refused"
    assert run([*grid, "--set", "nope=1", "--save-traces", str(refused)], capsys)[0] == 2
    assert not refused.exists()
    made = tmp_path / "a" / "b"
    assert run([*grid, "--set", "limit=3", "--save-traces", str(made)], capsys)[0] == 1
    assert [p.suffix for p in made.iterdir()] == [".json"]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for where in (blocker, blocker / "under"):
        code, _, err = run([*grid, "--set", "limit=3", "--save-traces", str(where)], capsys)
        assert code == 2 and "--save-traces" in err and "not a directory" in err and err.count("\n") == 1


def test_progress_off_a_terminal_logs_lines_with_time_and_memory(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off a terminal (here: captured stderr) a search logs a whole line every
    KAFKA_MC_PROGRESS_EVERY seconds with its elapsed time and memory, and the proofs one line
    per obligation; a bad value of the variable is a one-line usage error."""
    monkeypatch.setenv("KAFKA_MC_PROGRESS_EVERY", "0")
    assert run(["check", "--system", "tests.toys:grid", "--set", "n=6"], capsys)[0] == 0
    _, _, err = run(["check", "--system", "tests.toys:grid", "--set", "n=6"], capsys)
    lines = [line for line in err.splitlines() if line.startswith("depth ")]
    assert lines and all(line.endswith(" MB)") and " s, " in line for line in lines)
    code, _, err = run(["prove", "timing-wheel", "--only", "overflow_wheel_parameters"], capsys)
    assert code == 0 and "proof 1/1 overflow_wheel_parameters: held in" in err
    assert run(["prove", "timing-wheel", "--only", "overflow_wheel_parameters", "--quiet"], capsys)[2] == ""
    for bad in ("abc", "-1", "nan"):
        monkeypatch.setenv("KAFKA_MC_PROGRESS_EVERY", bad)
        code, out, err = run(["models"], capsys)
        assert code == 2 and out == "" and "KAFKA_MC_PROGRESS_EVERY" in err and err.count("\n") == 1


def test_mutate_checks_its_json_destination_before_any_mutant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = ["mutate", "--suite", "configs/release.toml", "--entries", "controller-small"]
    for dest, word in ((tmp_path / "nodir" / "m.json", "does not exist"), (tmp_path, "is a directory")):
        code, out, err = run([*suite, "--json", str(dest)], capsys)
        assert code == 2 and out == "" and "--json" in err and word in err and err.count("\n") == 1
    code, _, err = run([*suite, "--mutants", "no-epoch-bum"], capsys)
    assert code == 2 and "(did you mean 'no-epoch-bump'?)" in err


def test_a_full_disk_names_the_file_being_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OSError while writing --json (here: a full disk) is one line naming the destination,
    not the temporary file, and leaves no file behind."""
    import errno

    import explorer.tracefile as tf

    def full(*_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tf.json, "dump", full)
    dest = tmp_path / "r.json"
    code, _, err = run(["check", "--system", "tests.toys:grid", "--set", "n=3", "--json", str(dest)], capsys)
    assert code == 2 and f"{dest}: No space left on device" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def _numeric_options() -> list[tuple[str, str, Any]]:
    """(verb, option, its type) for every option of every verb that reads a number: found in the
    parser, so an option added later is held to the same rules without editing a list."""
    import argparse

    from explorer.cli import build_parser
    from explorer.shrink import _parser as shrink_parser

    out = [
        ("shrink", a.option_strings[-1], a.type)
        for a in shrink_parser()._actions
        if a.option_strings and (a.type in (int, float) or isinstance(a.type, Bounded))
    ]
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for verb, sub in action.choices.items():
                for a in sub._actions:
                    if a.option_strings and (a.type in (int, float) or isinstance(a.type, Bounded)):
                        out.append((verb, a.option_strings[-1], a.type))
    return out


NUMERIC = _numeric_options()


def test_every_numeric_option_is_bounded() -> None:
    assert len(NUMERIC) >= 15
    assert [(v, o) for v, o, t in NUMERIC if not isinstance(t, Bounded)] == []


@pytest.mark.slow  # 3.1 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("verb, option, kind", NUMERIC, ids=[f"{v}{o}" for v, o, _ in NUMERIC])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_an_out_of_range_value_is_one_line_exit_2(
    verb: str, option: str, kind: Bounded, data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    """Values outside an option's bounds (nan, infinities, huge, below the least, not a number)
    are refused before any work: exit 2, one line naming the option, nothing on stdout."""
    lo, hi = kind.lo, kind.hi
    bad = [st.just("nan"), st.just("inf"), st.just("-inf"), st.just("ten"), st.just("9" * 5000)]
    if kind.kind is int:
        bad += [st.integers(min_value=int(hi) + 1).map(str), st.integers(max_value=int(lo) - 1).map(str)]
    else:
        bad += [st.floats(min_value=hi, exclude_min=True, allow_infinity=False).map(repr)]
        bad += [st.floats(max_value=lo, exclude_max=not kind.lo_open, allow_infinity=False).map(repr)]
    value = data.draw(st.one_of(bad))
    base = {
        "check": ["check", MODEL],
        "prove": ["prove", "timing-wheel"],
        "mutate": ["mutate", "--suite", "x"],
        "shrink": ["shrink", "t.json"],
        "replay": ["replay", "t.json"],
        "release": ["release"],
    }
    code, out, err = run([*base[verb], f"{option}={value}"], capsys)
    assert code == 2 and out == "", (option, value)
    assert option in err and err.count("\n") == 1, err


def test_replay_property_near_miss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = tmp_path / "r.json"
    argv = ["check", "--system", "tests.toys:grid", "--set", "limit=3", "--set", "terminal=false"]
    assert run([*argv, "--continue", "--quiet", "--json", str(result)], capsys)[0] == 1
    code, _, err = run(["replay", str(result), "--property", "sum_below_limt"], capsys)
    assert code == 2 and "(did you mean 'sum_below_limit'?)" in err and "(it holds: " in err


@pytest.mark.slow  # 1.2 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize(
    "args", [[], ["--workers", "2"], ["--visited", "fingerprints"]], ids=["bfs", "workers", "lean"]
)
def test_the_json_keeps_the_readmes_evaluated_promise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    """Every property of a complete search has ``evaluated`` (README, CheckResult JSON), but a
    witnessed reachable property (checked only until its witness) and an eventually one."""
    out = tmp_path / "r.json"
    code = main(
        [
            "check",
            "controller",
            "--config",
            "configs/controller-small.toml",
            "--set",
            "max_restarts=1",
            "--quiet",
            "--continue",
            "--json",
            str(out),
            *args,
        ]
    )
    capsys.readouterr()
    assert code in (0, 1)
    doc = json.loads(out.read_text())
    props = doc["properties"]
    for name, p in props.items():
        witnessed = p["kind"] == "reachable" and p["status"] == "witnessed"
        assert ("evaluated" in p) == (not witnessed and p["kind"] != "eventually"), name
    assert props["deadlock"]["evaluated"] == doc["distinct_states"]
    unreached = [p for p in props.values() if p["kind"] == "reachable" and p["status"] != "witnessed"]
    assert unreached and all(p["evaluated"] == doc["distinct_states"] for p in unreached)


def test_release_list_columns_line_up(capsys: pytest.CaptureFixture[str]) -> None:
    """``kafka-mc release --list`` prints name, model and engine in columns as wide as the
    longest value, so a long entry name does not push its row out of line."""
    code, out, _ = run(["release", "--list"], capsys)
    assert code == 0
    rows = out.splitlines()
    assert len(rows) > 10
    starts = {len(r) - len(r.split("  ", 1)[1].lstrip()) for r in rows}
    assert len(starts) == 1, rows


def test_check_properties_selects_and_names_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--properties`` checks only the named properties (the same state space), and a name the
    configuration does not check is a one-line error with the closest name, exit 2, no file."""
    out_file = tmp_path / "r.json"
    base = ["check", "controller", "--config", "configs/controller-small.toml"]
    code, _, _ = run(
        [*base, "--properties", "leader_in_isr,one_controller_per_epoch", "--json", str(out_file)], capsys
    )
    doc = json.loads(out_file.read_text())
    assert code == 0 and sorted(doc["properties"]) == [
        "deadlock",
        "leader_in_isr",
        "one_controller_per_epoch",
    ]
    code, _, _ = run([*base, "--json", str(tmp_path / "all.json")], capsys)
    assert json.loads((tmp_path / "all.json").read_text())["distinct_states"] == doc["distinct_states"]
    bad = tmp_path / "bad.json"
    code, _, err = run([*base, "--properties", "leader_in_is", "--json", str(bad)], capsys)
    assert code == 2 and not bad.exists()
    one_line_error(err, "--properties: unknown property 'leader_in_is'", "did you mean 'leader_in_isr'")
