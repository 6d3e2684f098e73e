"""Checkpoint and resume of the ``--workers N`` bfs (issue 16): a run killed at several
points (inside snapshots, mid-level, before the workers were forked and after) and resumed
with new workers gives the uninterrupted run's result, every field but timings."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from explorer.engines.bfs import check_bfs
from explorer.engines.pbfs import SERIAL_BELOW_ENV, check_pbfs
from explorer.search.checkpoint import CheckpointError
from tests.test_checkpoint import Killed, arm, comparable, kafka_mc
from tests.test_pbfs import comparable as same_fields
from tests.toys import Grid, LabelledGrid


def _armed(monkeypatch: Any, points: list[str]) -> dict[str, int]:
    """Make the crash points of the ``--workers`` search raise :class:`Killed` at ``points``."""
    from explorer.search import checkpoint, levels

    return arm(monkeypatch, [levels, checkpoint], points)


@pytest.mark.slow  # 2.0 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("serial_below", [2, 6], ids=["forked-early", "forked-after-a-snapshot"])
@pytest.mark.parametrize("system", [Grid(12, limit=8), LabelledGrid(9)], ids=["violations", "labels"])
def test_killed_at_several_points_then_resumed_equals_uninterrupted(
    tmp_path: Path, monkeypatch: Any, serial_below: int, system: Any
) -> None:
    props = system.properties()
    ref = check_bfs(system, props, keep_going=True)
    whole = check_pbfs(
        system, props, workers=2, serial_below=serial_below, keep_going=True, visited="fingerprints"
    )
    assert same_fields(whole) == same_fields(ref)
    ck = tmp_path / "ck"
    kw: dict[str, Any] = dict(
        workers=2,
        serial_below=serial_below,
        keep_going=True,
        visited="fingerprints",
        checkpoint=ck,
        checkpoint_every=0.0,
    )
    for i, point in enumerate(["snapshot-written:3", "snapshot-renamed:2", "state:4", "state:2"]):
        passes = _armed(monkeypatch, [point])
        with pytest.raises(Killed):
            check_pbfs(system, props, resume=i > 0, **kw)
        assert passes  # the run reached the crash point it died at
    _armed(monkeypatch, [])
    r = check_pbfs(system, props, resume=True, **kw)
    assert same_fields(r) == same_fields(ref)
    assert r.notes == whole.notes
    if not isinstance(system, LabelledGrid):  # the limit makes violations; their traces are bfs's
        assert r.violations and [v.trace for v in r.violations] == [v.trace for v in ref.violations]


def test_resume_refuses_other_options_and_the_serial_layout(tmp_path: Path, monkeypatch: Any) -> None:
    g = Grid(6)
    ck = tmp_path / "ck"
    _armed(monkeypatch, ["state:3"])
    kw: dict[str, Any] = dict(serial_below=2, visited="fingerprints", checkpoint=ck, checkpoint_every=0.0)
    with pytest.raises(Killed):
        check_pbfs(g, g.properties(), workers=2, **kw)
    with pytest.raises(CheckpointError, match="option workers=3 differs from the checkpoint's 2"):
        check_pbfs(g, g.properties(), workers=3, resume=True, **kw)
    from explorer.engines.bfs import check_lean

    with pytest.raises(CheckpointError, match="written by the pbfs search, not the lean one"):
        check_lean(g, g.properties(), checkpoint=ck, resume=True)
    with pytest.raises(ValueError, match="needs --visited fingerprints"):
        check_pbfs(g, g.properties(), workers=2, checkpoint=tmp_path / "other")


@pytest.mark.slow
def test_controller_workers_sigkilled_and_resumed(tmp_path: Path, monkeypatch: Any) -> None:
    """The command line, real SIGKILLs (the driver; its workers die with it), a mutant run
    with ``--continue``: the resumed result equals the uninterrupted ``--workers 2`` run's
    and, but for notes, the serial bfs's."""
    monkeypatch.setenv(SERIAL_BELOW_ENV, "50")
    model = [
        "check", "controller", "--config", "configs/controller-small.toml", "--set", "max_session_expiries=1",
        "--set", "mutant=no-leader-epoch-bump", "--continue", "--quiet",
    ]  # fmt: skip
    whole, plain, out, ck = (tmp_path / f for f in ("whole.json", "plain.json", "out.json", "ck"))
    assert (
        kafka_mc([*model, "--workers", "2", "--visited", "fingerprints", "--json", str(whole)]).returncode
        == 1
    )
    assert kafka_mc([*model, "--json", str(plain)]).returncode == 1
    first = [*model, "--workers", "2", "--checkpoint", str(ck), "--checkpoint-every", "0"]
    r = kafka_mc(first, crash="state:9")
    assert r.returncode == -signal.SIGKILL, r.stderr
    for crash in ["snapshot-written:5", "state:6", "snapshot-renamed:4"]:
        r = kafka_mc(["check", "--resume", str(ck), "--quiet"], crash=crash)
        assert r.returncode == -signal.SIGKILL, (crash, r.returncode, r.stderr)
    r = kafka_mc(["check", "--resume", str(ck), "--quiet", "--json", str(out)])
    assert r.returncode == 1, r.stderr
    got, ref = comparable(json.loads(out.read_text())), comparable(json.loads(whole.read_text()))
    assert got == ref and got["violations"]
    assert {**got, "notes": []} == {**comparable(json.loads(plain.read_text())), "notes": []}
