"""Checkpoint and resume of the lean bfs (``--checkpoint DIR``, ``--resume DIR``): a run killed
by SIGKILL at several points and resumed gives the result of the uninterrupted run, every
field but timings; conflicting options on resume are one-line exit-2 errors."""

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

from explorer.cli import main
from explorer.search.checkpoint import CRASH_ENV

ROOT = Path(__file__).resolve().parents[1]
TOY = ["--system", "tests.toys:labelled_grid", "--set", "n=25", "--continue"]
TOY_BAD = ["--system", "tests.toys:grid", "--set", "n=20", "--set", "limit=12", "--continue"]
SMALL = ["controller", "--config", "configs/controller-small.toml", "--set", "max_session_expiries=1"]
MUTANT = [*SMALL, "--set", "mutant=no-leader-epoch-bump", "--continue"]


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """A result document without its timings."""
    d = dict(doc)
    for k in ("seconds", "states_per_second"):
        d.pop(k, None)
    d["levels"] = [{k: v for k, v in lv.items() if k != "seconds"} for lv in d["levels"]]
    return d


def kafka_mc(
    args: list[str], crash: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m explorer ARGS`` in a fresh process (with the crash point ``crash`` armed)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(CRASH_ENV, None)
    if crash is not None:
        env[CRASH_ENV] = crash
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def reference(tmp: Path, model_args: list[str]) -> dict[str, Any]:
    """The uninterrupted lean run's result, checked equal to plain bfs's (but notes)."""
    lean, plain = tmp / "lean.json", tmp / "plain.json"
    r = kafka_mc([*model_args, "--visited", "fingerprints", "--quiet", "--json", str(lean)])
    assert r.returncode in (0, 1), r.stderr
    kafka_mc([*model_args, "--quiet", "--json", str(plain)])
    a, b = comparable(json.loads(lean.read_text())), comparable(json.loads(plain.read_text()))
    assert {**a, "notes": []} == {**b, "notes": []}
    return a


def system_of(model_args: list[str]) -> list[str]:
    """The ``--system`` of ``model_args``, which a resume repeats (a file names, never loads: the
    checkpoint's system is the one the user gives)."""
    return (
        model_args[model_args.index("--system") : model_args.index("--system") + 2]
        if "--system" in model_args
        else []
    )


def killed_then_resumed(tmp: Path, model_args: list[str], crashes: list[str], batch: int) -> dict[str, Any]:
    """Start with a checkpoint, die at ``crashes[0]``, resume and die at the next ones, then
    resume to the end; the final result document."""
    ck, out = tmp / "ck", tmp / "out.json"
    first = [*model_args, "--checkpoint", str(ck), "--checkpoint-every", "0", "--frontier-batch", str(batch)]
    r = kafka_mc([*first, "--quiet"], crash=crashes[0])
    assert r.returncode == -signal.SIGKILL, (r.returncode, r.stderr)
    for crash in crashes[1:]:
        r = kafka_mc(["check", "--resume", str(ck), *system_of(model_args), "--quiet"], crash=crash)
        assert r.returncode == -signal.SIGKILL, (crash, r.returncode, r.stderr)
    r = kafka_mc(["check", "--resume", str(ck), *system_of(model_args), "--quiet", "--json", str(out)])
    assert r.returncode in (0, 1), r.stderr
    return comparable(json.loads(out.read_text()))


@pytest.mark.parametrize(
    "crashes",
    [
        pytest.param(["state:3"], marks=pytest.mark.slow),  # mid-search, after a few snapshots
        pytest.param(  # inside snapshots, then mid-level
            ["snapshot-written:4", "snapshot-renamed:2", "state:9"], marks=pytest.mark.slow
        ),
        pytest.param(["state:1"], marks=pytest.mark.slow),  # before the first snapshot: starts over
    ],
    ids=["mid-level", "in-snapshots", "before-first"],
)
def test_toy_killed_and_resumed_equals_uninterrupted(tmp_path: Path, crashes: list[str]) -> None:
    model_args = ["check", *TOY_BAD]
    assert killed_then_resumed(tmp_path, model_args, crashes, batch=5) == reference(tmp_path, model_args)


@pytest.mark.slow
@pytest.mark.parametrize("args", [SMALL, MUTANT], ids=["held", "mutant-continue"])
def test_controller_killed_at_several_points(tmp_path: Path, args: list[str]) -> None:
    model_args = ["check", *args]
    ref = reference(tmp_path, model_args)
    assert bool(ref["violations"]) == (args is MUTANT)  # the mutant's violations are found before kills
    crashes = ["state:4", "snapshot-written:6", "state:7", "snapshot-renamed:5", "state:12"]
    assert killed_then_resumed(tmp_path, model_args, crashes, batch=40) == ref


@pytest.mark.slow
def test_sigkill_at_a_random_moment(tmp_path: Path) -> None:
    """The parent kills the run (kill -9) once a few snapshots exist, at no chosen point."""
    model_args = ["check", *TOY]
    ck, out = tmp_path / "ck", tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "explorer", *model_args, "--checkpoint", str(ck), "--checkpoint-every", "0"]
    p = subprocess.Popen([*cmd, "--frontier-batch", "3", "--quiet"], cwd=ROOT, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        current = ck / "CURRENT"
        if current.exists() and int(current.read_text().split("-")[1]) >= 15:
            break
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.wait()
    r = kafka_mc(["check", "--resume", str(ck), *system_of(model_args), "--quiet", "--json", str(out)])
    assert r.returncode in (0, 1), r.stderr
    assert comparable(json.loads(out.read_text())) == reference(tmp_path, model_args)


class Killed(BaseException):
    """Stands for SIGKILL in the in-process test (no ``except Exception`` catches it)."""


def arm(monkeypatch: Any, modules: list[Any], points: list[str]) -> dict[str, int]:
    """Make the crash points of ``modules`` raise :class:`Killed` at ``points`` (``WHERE:N``,
    in turn; each taken once); the count of passes per point, for the caller to check."""
    passes: dict[str, int] = {}

    def crash(where: str) -> None:
        passes[where] = passes.get(where, 0) + 1
        if points and points[0] == f"{where}:{passes[where]}":
            points.pop(0)
            raise Killed

    for m in modules:
        monkeypatch.setattr(m, "crash_point", crash)
    return passes


def test_in_process_crashes_then_resume_equal(tmp_path: Path, monkeypatch: Any) -> None:
    """The fast stand-in for the SIGKILL tests (marked slow): the crash points raise, in
    this process, at several places in a row; each resume continues the last snapshot."""
    from explorer.engines import bfs as lean
    from explorer.search import checkpoint, serial
    from tests.toys import Grid

    g = Grid(12, limit=8)
    ref = lean.check_lean(g, g.properties(), keep_going=True)
    ck = tmp_path / "ck"
    for i, point in enumerate(["snapshot-written:3", "snapshot-renamed:2", "state:4", None]):
        arm(monkeypatch, [serial, checkpoint], [point] if point else [])
        kw: dict[str, Any] = dict(keep_going=True, frontier_batch=4, checkpoint=ck, checkpoint_every=0.0)
        if point is None:
            r = lean.check_lean(g, g.properties(), resume=True, **kw)
        else:
            with pytest.raises(Killed):
                lean.check_lean(g, g.properties(), resume=i > 0, **kw)
    from tests.test_pbfs import comparable as same_fields

    assert same_fields(r) == same_fields(ref) and r.violations


def test_checkpoint_of_the_c_table_resumes_in_pure_python(tmp_path: Path, monkeypatch: Any) -> None:
    """The table's layout is the same in C and in Python: a run resumed without the C
    module (a machine without a compiler) continues the C run's snapshot."""
    from explorer.engines import bfs as lean
    from explorer.search import checkpoint, serial, visited
    from tests.toys import LabelledGrid

    g = LabelledGrid(14)
    ref = lean.check_lean(g, g.properties())
    ck = tmp_path / "ck"
    calls = [0]

    def crash(where: str) -> None:
        calls[0] += where == "state"
        if calls[0] == 12:
            raise Killed

    monkeypatch.setattr(serial, "crash_point", crash)
    monkeypatch.setattr(checkpoint, "crash_point", lambda where: None)
    kw: dict[str, Any] = dict(frontier_batch=5, checkpoint=ck, checkpoint_every=0.0)
    with pytest.raises(Killed):
        lean.check_lean(g, g.properties(), **kw)
    monkeypatch.setattr(visited, "FingerprintTable", visited.PyFingerprintTable)
    monkeypatch.setattr(serial, "crash_point", lambda where: None)
    r = lean.check_lean(g, g.properties(), resume=True, **kw)
    from tests.test_pbfs import comparable as same_fields

    assert same_fields(r) == same_fields(ref)


# -- usage errors ------------------------------------------------------------------------------------


def test_resume_conflicts_are_exit_2(tmp_path: Path, capsys: Any) -> None:
    ck = tmp_path / "ck"
    base = ["check", "--system", "tests.toys:grid", "--set", "n=4", "--quiet"]
    assert main([*base, "--checkpoint", str(ck), "--checkpoint-every", "0"]) == 0
    capsys.readouterr()
    for extra, word in (
        (["--max-states", "5"], "--max-states"),
        (["--set", "n=5"], "--set"),
        (["--continue"], "--keep-going"),
        (["--checkpoint", str(tmp_path / "other")], "--checkpoint"),
    ):
        assert main(["check", "--resume", str(ck), "--system", "tests.toys:grid", *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith("kafka-mc: error:") and word in err and err.count("\n") == 1
    resume = ["check", "--resume", str(ck), "--system", "tests.toys:grid"]
    assert main([*resume, "--set", "n=4", "--quiet"]) == 0  # the same option: fine
    assert main([*base, "--checkpoint", str(ck)]) == 2  # an existing checkpoint is not overwritten
    assert "already holds a checkpoint" in capsys.readouterr().err
    assert main(["check", "--resume", str(tmp_path / "none")]) == 2
    assert "no checkpoint there" in capsys.readouterr().err


@pytest.mark.slow  # 0.8 CPU-s in a loaded default run (2026-11-29)
def test_resume_may_give_a_run_more_time(tmp_path: Path, capsys: Any) -> None:
    """A run that ran out of time resumes with a larger ``--max-seconds`` (the whole run's) and
    completes; without one it keeps the checkpoint's budget."""
    import json

    ck, out = tmp_path / "ck", tmp_path / "r.json"
    base = ["check", "--system", "tests.toys:grid", "--set", "n=400", "--quiet"]  # about 0.4 s in all
    assert main([*base, "--checkpoint", str(ck), "--max-seconds", "0.02"]) == 3
    first = capsys.readouterr().out
    assert "max_seconds" in first
    resume = ["check", "--resume", str(ck), "--system", "tests.toys:grid"]
    assert main([*resume, "--max-seconds", "600", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["exit_reason"] == "complete" and r["distinct_states"] == 401 * 401


def test_resume_refuses_a_changed_model(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    """A checkpoint holds one model's counts: after its source changes, --resume is exit 2."""
    import importlib
    import json
    import sys

    from explorer.search.checkpoint import code_digest, run_identity

    pkg = tmp_path / "src" / "ringtoy"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "class Ring:\n"
        "    def init_states(self):\n        return [0]\n"
        "    def successors(self, s):\n        return [('inc', (s + 1) % 5)]\n"
        "def ring(**kw):\n    return Ring()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    ring = importlib.import_module("ringtoy").Ring()
    before = code_digest(ring)
    (pkg / "__init__.py").write_text((pkg / "__init__.py").read_text().replace("% 5", "% 6"))
    assert code_digest(ring) != before  # the digest reads the files as they are now
    sys.modules.pop("ringtoy", None)

    ck = tmp_path / "ck"
    assert (
        main(["check", "--system", "tests.toys:grid", "--set", "n=4", "--quiet", "--checkpoint", str(ck)])
        == 0
    )
    manifest = json.loads((ck / "manifest.json").read_text())
    manifest["code"] = "0" * 16  # as if model/ had changed since
    manifest["identity"] = run_identity(manifest)  # as the run of that older model recorded it
    (ck / "manifest.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["check", "--resume", str(ck), "--system", "tests.toys:grid", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "the model's code differs from the checkpoint's" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "extra, word",
    [
        (["--engine", "simulate", "--visited", "fingerprints"], "--visited"),
        (["--workers", "2", "--visited", "fingerprints", "--frontier-batch", "9"], "--frontier-batch"),
        (["--visited", "states", "--checkpoint", "x"], "--checkpoint"),
        (["--checkpoint-every", "5"], "--checkpoint-every"),
        (["--frontier-batch", "5"], "--frontier-batch"),
        (["--visited", "fingerprints", "--frontier-batch", "0"], "--frontier-batch"),
    ],
)
def test_bad_lean_options(extra: list[str], word: str, capsys: Any) -> None:
    assert main(["check", "--system", "tests.toys:grid", "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kafka-mc: error:") and word in err and err.count("\n") == 1


def test_liveness_refuses_a_checkpoint(tmp_path: Path, capsys: Any) -> None:
    args = ["check", "--system", "tests.toys:retransmit", "--quiet", "--checkpoint", str(tmp_path / "ck")]
    assert main(args) == 2
    assert "eventually" in capsys.readouterr().err


# -- faults that leave nothing stuck -----------------------------------------------------------------

HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(os.path.join(sys.argv[1], "lock"), os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, str(os.getpid()).encode())
print("held", flush=True)
time.sleep(60)
"""


def test_a_folder_in_use_is_refused_naming_the_holder(tmp_path: Path, capsys: Any) -> None:
    """A second run on a checkpoint folder that a live run holds (its lock) is refused in one
    line naming the holder's pid, for --checkpoint and --resume alike; once the holder is gone
    the folder is free."""
    base = ["check", "--system", "tests.toys:grid", "--set", "n=4", "--quiet"]
    ck = tmp_path / "ck"
    assert kafka_mc([*base, "--checkpoint", str(ck), "--checkpoint-every", "0"]).returncode == 0
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(ck)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        for argv in (
            ["check", "--resume", str(ck), "--system", "tests.toys:grid"],
            [*base, "--checkpoint", str(ck)],
        ):
            assert main(argv) == 2
            err = capsys.readouterr().err
            assert f"in use by process {holder.pid}" in err and err.count("\n") == 1
    finally:
        holder.kill()
        holder.wait()
    assert main(["check", "--resume", str(ck), "--system", "tests.toys:grid"]) == 0


@pytest.mark.slow  # over a CPU-second: the ci selection runs it
@pytest.mark.parametrize("point", ["snapshot-written:1", "snapshot-renamed:1"])
def test_killed_before_its_first_snapshot_the_folder_starts_again(tmp_path: Path, point: str) -> None:
    """A kill -9 before the first snapshot is current leaves a folder that --checkpoint treats as
    empty (it is cleared and used) and --resume runs from the beginning; a folder whose start
    died before the manifest is named as such by --resume and taken by --checkpoint."""
    args = ["check", *TOY, "--quiet", "--checkpoint-every", "0", "--frontier-batch", "8"]
    ck = tmp_path / "ck"
    assert kafka_mc([*args, "--checkpoint", str(ck)], crash=point).returncode == -9
    assert not (ck / "CURRENT").exists()
    assert kafka_mc(["check", "--resume", str(ck), *system_of(TOY), "--quiet"]).returncode in (0, 1)
    ck2 = tmp_path / "ck2"
    assert kafka_mc([*args, "--checkpoint", str(ck2)], crash=point).returncode == -9
    r = kafka_mc([*args, "--checkpoint", str(ck2), "--json", str(tmp_path / "r.json")])
    assert r.returncode in (0, 1), r.stderr
    assert (ck2 / "CURRENT").exists()
    # the very first write died (a full disk, a kill): only the start's leftovers are there
    ck3 = tmp_path / "ck3"
    (ck3 / "frontier").mkdir(parents=True)
    (ck3 / "manifest.json.tmp").write_text("{")
    r = kafka_mc(["check", "--resume", str(ck3)])
    assert r.returncode == 2 and "died before writing it: start again with --checkpoint" in r.stderr
    assert kafka_mc([*args, "--checkpoint", str(ck3)]).returncode in (0, 1)
    (ck3 / "unrelated.txt").write_text("mine")
    r = kafka_mc([*args, "--checkpoint", str(tmp_path / "ck3")])
    assert r.returncode == 2 and "already holds a checkpoint" in r.stderr
