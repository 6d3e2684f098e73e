"""Faults and bad input found by the issue-37 audit, each as its general class: a Ctrl-C
inside a z3 query, the bounds of a proof target, the hypothesis engine's budget and stop,
output destinations that exist but cannot be written, a disk that fills while a checkpoint
is written, and Spark settings the JVM would reject or ignore."""

from __future__ import annotations

import errno
import io
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.api import CheckOptions, check
from explorer.cli import main
from explorer.core import ExitReason
from explorer.search import Progress, clear_stop, request_stop, stop_on_signals
from explorer.symbolic import Obligation, ProofOutcome, check_symbolic
from explorer.symbolic.targets import list_targets
from tests.toys import Grid

TOY = ["--system", "tests.toys:grid", "--set", "n=4"]


def one_line(err: str, *needles: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("kafka-mc: error: "), err
    assert "Traceback" not in err and "error::" not in err
    for n in needles:
        assert n in lines[0], (n, lines[0])


# --------------------------------------------------------------------- Ctrl-C inside z3


def _hard_query(deadline: float | None) -> ProofOutcome:
    """A query z3 needs many seconds for; read as a proof that treats "not sat" as "held",
    so that a query cancelled by the signal would pass for a verdict."""
    t0 = time.perf_counter()
    x = [z3.BitVec(f"x{i}", 64) for i in range(4)]
    s = z3.Solver()
    s.add(x[0] * x[1] * x[2] == 0x1234567890ABCDEF + x[3] * x[3] * x[3], *(v > 1000 for v in x[:3]))
    r = s.check()
    return ProofOutcome("violated" if r == z3.sat else "held", time.perf_counter() - t0, 1, None, "", {})


def _hard_factory() -> list[Obligation]:
    return [
        Obligation("hard", "a query z3 needs long for", "64-bit", _hard_query),
        Obligation("after", "never reached once stopped", "-", _hard_query),
    ]


def test_a_ctrl_c_during_a_z3_query_stops_the_proof_without_a_verdict() -> None:
    """z3 must not take the signal for itself (it would cancel the query, which returns
    `unknown` and passes for whatever the proof makes of it): the first SIGINT stops the run
    at once, the proof running and the ones after it have no verdict, exit reason interrupted."""
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    with stop_on_signals():
        timer.start()
        try:
            r = check_symbolic(f"{__name__}:_hard_factory")
        finally:
            timer.cancel()
    assert time.perf_counter() - t0 < 3.0
    assert r.exit_reason is ExitReason.INTERRUPTED and r.exit_code == 3
    assert {p["status"] for p in r.properties.values()} == {"unknown"} and not r.violations


@pytest.mark.slow
def test_prove_says_in_one_line_that_a_ctrl_c_stopped_it() -> None:
    """``prove``, like ``check``, ends a run a SIGINT cut short with one line on stderr naming
    the signal, and exit 3 (its partial result on stdout)."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", "prove", "election-rules"],  # about 90 s in all
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3.0)  # started, z3 imported, proving
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, (out, err)
    assert err.strip().splitlines()[-1].startswith("kafka-mc: interrupted by SIGINT after "), err


# --------------------------------------------------------------------- proof target bounds


@pytest.mark.slow  # over 1.3 CPU-s in the CI of session 17
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    target=st.sampled_from(sorted(list_targets())),
    key=st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True),
    value=st.sampled_from(["nan", "inf", "-1", "0", "9" * 30, "zz", "1e400"]),
)
def test_a_bad_bound_of_a_proof_target_is_exit_2_naming_the_key(
    target: str, key: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Any key the target does not have, or a value it refuses, is bad input (exit 2, one
    line naming the key), not an error of the proof's code (exit 4), for every target."""
    code = main(["prove", target, "--set", f"{key}={value}", "--only", "x", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", err
    one_line(err, key if "unknown key" in err else "")


def test_a_near_miss_bound_gets_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "election-rules", "--set", "max_replica=3"]) == 2
    one_line(capsys.readouterr().err, "max_replica: unknown key", "did you mean 'max_replicas'?")
    assert main(["check", "--engine", "symbolic", "election-rules", "--set", "max_replicas=99"]) == 2
    one_line(capsys.readouterr().err, "max_replicas: must be in 1..8, got 99")


# --------------------------------------------------------------------- hypothesis engine


def test_the_hypothesis_engine_keeps_max_seconds_a_stop_and_progress() -> None:
    """--max-seconds applies to the hypothesis engine as to the others (it ran on past it);
    a stop request ends it at the next step; a non-terminal progress log gets lines."""
    grid = Grid(40)
    opts: dict[str, Any] = {"seed": 0, "database": False, "max_examples": 10**6, "stateful_step_count": 50}
    log = io.StringIO()
    o = CheckOptions(
        engine="hypothesis", max_seconds=0.6, engine_options=opts, progress=Progress(log, log_every=0)
    )
    t0 = time.perf_counter()
    r = check(grid, [], o)
    assert time.perf_counter() - t0 < 3.0
    assert r.exit_reason is ExitReason.BUDGET_EXHAUSTED and r.budget == "max_seconds"
    assert "example " in log.getvalue() and " steps/s" in log.getvalue()
    request_stop("SIGINT")
    try:
        r = check(grid, [], CheckOptions(engine="hypothesis", engine_options=opts))
    finally:
        clear_stop()
    assert r.exit_reason is ExitReason.INTERRUPTED and r.generated_states < 200


# --------------------------------------------------------------------- output destinations


def _unwritable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder that exists and that os.access calls writable, where no file can be made
    (as /proc, a read-only mount, or a full disk)."""
    import tempfile

    folder = tmp_path / "ro"
    folder.mkdir()
    real = tempfile.mkstemp

    def mkstemp(*a: Any, **kw: Any) -> tuple[int, str]:
        if os.path.abspath(str(kw.get("dir", ""))) == str(folder):
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*a, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    return folder


@pytest.mark.parametrize(
    "argv",
    [
        ["check", *TOY, "--quiet", "--json", "{ro}/r.json"],
        ["check", *TOY, "--quiet", "--save-traces", "{ro}/traces"],
        ["prove", "timing-wheel", "--only", "overflow_wheel_parameters", "--json", "{ro}/r.json"],
        ["mutate", "--system", "tests.toy_mutation:make", "--json", "{ro}/m.json"],
    ],
    ids=["check-json", "save-traces", "prove-json", "mutate-json"],
)
def test_a_destination_that_cannot_be_written_is_refused_before_any_work(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ro = _unwritable(tmp_path, monkeypatch)
    given_path = next(a for a in argv if "{ro}" in a).format(ro=ro)
    code = main([a.format(ro=ro) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", err  # no mutant, search or proof ran
    one_line(err, given_path, "Read-only file system")
    assert list(ro.iterdir()) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_proc_is_not_a_destination(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *TOY, "--quiet", "--json", "/proc/kafka-mc.json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "/proc/kafka-mc.json: cannot write in /proc" in err


# --------------------------------------------------------------------- a full disk


@pytest.mark.parametrize("call", ["fsync", "pwrite"])
def test_a_full_disk_while_a_checkpoint_is_written_names_the_path(
    call: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ENOSPC from a write that Python does not name a file for (fsync, pwrite): the one
    line names the file (or the checkpoint folder), exit 2, and the folder is taken again
    as empty afterwards."""

    def full(*_: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    ck = tmp_path / "ck"
    argv = ["check", *TOY, "--quiet", "--checkpoint", str(ck), "--checkpoint-every", "0"]
    with monkeypatch.context() as m:
        m.setattr(os, call, full)
        assert main(argv) == 2
    _, err = capsys.readouterr()
    one_line(err, str(ck), "No space left on device")
    assert main(argv) == 0
    capsys.readouterr()


# --------------------------------------------------------------------- Spark settings


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--master", "local[0]"], "local[0]: its counts must be 1 or more"),
        (["--spark-conf", "spark.master=yarn"], "give the master as --master yarn"),
        (["--spark-conf", "executor.memory=2g"], "Spark settings start with 'spark.'"),
        (["--spark-conf", "spark.executor.cores=two"], "spark.executor.cores=two: expected a whole number"),
        (["--spark-conf", "spark.default.parallelism=0"], "expected a whole number, 1 or more"),
        (["--spark-conf", "spark.network.timeout=forever"], "expected a duration"),
    ],
)
def test_a_spark_setting_the_jvm_would_reject_or_ignore_is_one_line(
    extra: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", *TOY, "--engine", "spark", "--quiet", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    one_line(err, needle)


# --------------------------------------------------------------------- did you mean


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["check", "controller", "--set", "brokr_epoch=false"], "did you mean 'broker_epoch'?"),
        (["check", "controller", "--engine", "bfz"], "did you mean 'bfs'?"),
        (["check", "controllr"], "did you mean 'controller'?"),
        (["models", "controllr"], "did you mean 'controller'?"),
        (["prove", "electon"], "did you mean 'election-rules'?"),
        (
            ["prove", "timing-wheel", "--only", "overflow_wheel_parameter"],
            "did you mean 'overflow_wheel_parameters'?",
        ),
        (["release", "--entries", "controller-smal"], "did you mean 'controller-small'?"),
        (
            ["mutate", "--suite", "configs/release.toml", "--entries", "controller-smal"],
            "did you mean 'controller-small'?",
        ),
        (
            [
                "mutate",
                "controller",
                "--config",
                "configs/controller-small.toml",
                "--mutants",
                "no-epoch-bum",
            ],
            "did you mean 'no-epoch-bump'?",
        ),
        (
            [
                "check",
                "controller",
                "--config",
                "configs/controller-small.toml",
                "--engine",
                "simulate",
                "--fault",
                "Crah=0.1",
            ],
            "did you mean 'Crash'?",
        ),
    ],
    ids=[
        "key",
        "engine",
        "model",
        "models",
        "target",
        "obligation",
        "release-entry",
        "mutate-entry",
        "mutant",
        "kind",
    ],
)
def test_a_near_miss_name_gets_a_did_you_mean(
    argv: list[str], needle: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every name a user types (config key, engine, model, proof target and obligation, suite
    entry, mutant, action kind) is refused before any work with the nearest known name."""
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    one_line(err, needle)


# --------------------------------------------------------------------- uniform verbs


def _options(verb: str) -> set[str]:
    import argparse

    from explorer.cli import build_parser
    from explorer.shrink import _parser as shrink_parser

    if verb == "shrink":
        return {o for a in shrink_parser()._actions for o in a.option_strings}
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {o for a in sub.choices[verb]._actions for o in a.option_strings}


@pytest.mark.parametrize(
    "verb, names",
    [
        ("check", {"--json", "--quiet", "--max-seconds", "--set"}),
        ("prove", {"--json", "--quiet", "--max-seconds", "--set"}),
        ("mutate", {"--json", "--quiet", "--max-seconds", "--set"}),
        ("shrink", {"--quiet", "--max-seconds"}),
        ("release", {"--quiet", "--entries", "--list"}),
    ],
)
def test_the_same_things_have_the_same_option_names(verb: str, names: set[str]) -> None:
    """A result file is --json, silence --quiet, a time budget --max-seconds and a config
    key --set in every verb that has one; the suite verbs pick entries with --entries."""
    assert names <= _options(verb)
    assert not {"--output", "--out", "--silent", "--timeout", "--seconds", "--option"} & _options(verb)


def test_every_engine_is_named_wherever_engines_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    """check --help, the unknown-engine message and the API's list agree."""
    from explorer.engines import ENGINES

    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    engine_help = text[text.index("--engine ENGINE bfs") : text.index("--workers N ")]
    assert main(["check", "controller", "--engine", "nosuch"]) == 2
    err = capsys.readouterr().err
    for name in ENGINES:
        assert name in engine_help and name in err, name


def test_a_suite_proof_entry_with_a_bad_bound_is_refused_before_any_entry_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bounds of a symbolic entry are checked when the suite loads: exit 2 naming the key,
    no entry run, no report folder."""
    suite = tmp_path / "s.toml"
    suite.write_text(
        '[[check]]\nname = "toy"\nmodel = "timing-wheel"\n\n'
        '[[check]]\nname = "p"\nmodel = "election-rules"\nengine = "symbolic"\nexpect = "hold"\n'
        'set = ["max_replica=3"]\n'
    )
    assert main(["release", "--suite", str(suite), "--report-dir", str(tmp_path / "rep")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not (tmp_path / "rep").exists()
    one_line(err, "check 2 (p): set: max_replica: unknown key", "did you mean 'max_replicas'?")
