"""Nothing loaded from a file a user can hand the tool runs code (issue 37, item 5): a crafted
checkpoint snapshot, a crafted spilled frontier file of a checkpoint and a crafted ``--workers``
frontier share are each refused in one line (exit 2), and the command they carry never runs."""

from __future__ import annotations

import os
import pickle
import signal
from pathlib import Path

import pytest

from explorer.search import safeload
from tests.test_checkpoint import kafka_mc

TOY = ["check", "--system", "tests.toys:Grid", "--set", "n=30"]


class _Touch:
    """Unpickling it would run ``os.system("touch MARKER")``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def _checkpoint(tmp: Path, extra: list[str]) -> Path:
    """A checkpoint killed mid-search (SIGKILL at a crash point), with a snapshot to resume."""
    ck = tmp / "ck"
    batch = [] if "--workers" in extra else ["--frontier-batch", "8"]  # spill the frontier to files
    r = kafka_mc(
        [*TOY, "--checkpoint", str(ck), "--checkpoint-every", "0", *batch, *extra, "--quiet"], crash="state:3"
    )
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert (ck / "CURRENT").exists()
    return ck


def _refused(ck: Path, marker: Path) -> None:
    r = kafka_mc(["check", "--resume", str(ck), "--quiet"])
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "which is not a data type" in lines[0] and "system" in lines[0]
    assert not marker.exists(), "the crafted file ran its command"


@pytest.mark.slow
@pytest.mark.parametrize("what", ["snapshot", "frontier", "workers-share"])
def test_a_crafted_checkpoint_file_is_refused_in_one_line(tmp_path: Path, what: str) -> None:
    ck = _checkpoint(tmp_path, ["--workers", "2"] if what == "workers-share" else [])
    snap = ck / (ck / "CURRENT").read_text().strip()
    marker = tmp_path / "pwned"
    evil = pickle.dumps(_Touch(marker))
    if what == "snapshot":
        (snap / "state.pkl").write_bytes(evil)
    else:
        files = sorted(p for p in snap.iterdir() if p.suffix == ".pkl" and p.name != "state.pkl")
        assert files, sorted(p.name for p in snap.iterdir())
        files[0].write_bytes(evil)
    _refused(ck, marker)


def test_data_still_loads_and_functions_do_not() -> None:
    from model.controller import ControllerConfig, ControllerSystem

    s = ControllerSystem(ControllerConfig()).init_states()[0]
    assert safeload.loads(pickle.dumps([s, {"a": (1, 2)}])) == [s, {"a": (1, 2)}]
    with pytest.raises(safeload.UnsafePickleError, match=r"model\.controller\.system\.ControllerSystem"):
        safeload.loads(pickle.dumps(ControllerSystem))  # a class that is not a data type
    with pytest.raises(safeload.UnsafePickleError, match=r"explorer\.search\.safeload\.loads"):
        safeload.loads(pickle.dumps(safeload.loads))  # a project function
