"""``violates_at``: an entry that expects violations pins the shortest counterexample of each
(bfs), so a change that breaks a known-broken model in a new, quicker way fails the release
instead of hiding behind the expected verdict (issue 35: the 0.8 controller's expiry handling
made a no-op passed as 0.8's own known violations, found at 6 steps instead of 7 and 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.cli import main

ROOT = Path(__file__).resolve().parent.parent

ENTRY = """[[check]]
name = "stw-small"
model = "simple-timing-wheel"
config = "{root}/configs/simple-timing-wheel-small.toml"
expect = "violation"
violates = ["no_task_lost", "lateness_bounded", "deadlock", "graceful_stop_waits",
            "task_count_consistent", "stop_terminates_trigger"]
{extra}
"""


def _release(tmp_path: Path, extra: str) -> tuple[int, Path]:
    tmp_path.mkdir(exist_ok=True)
    suite = tmp_path / "suite.toml"
    suite.write_text(ENTRY.format(root=ROOT, extra=extra))
    out = tmp_path / "r"
    return main(["release", "--suite", str(suite), "--report-dir", str(out), "--quiet"]), out


@pytest.mark.slow  # 1.2 CPU-s in a loaded default run (2026-11-29)
def test_pinned_lengths_pass_and_a_moved_one_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _release(tmp_path / "a", "violates_at = { no_task_lost = 25, deadlock = 48 }")
    assert code == 0
    code, out = _release(tmp_path / "b", "violates_at = { no_task_lost = 26, deadlock = 48 }")
    assert code == 1
    doc = json.loads((out / "latest" / "report.json").read_text())
    (entry,) = doc["entries"]
    assert entry["message"] == "expected violations at other lengths: no_task_lost: 25 steps, pinned 26"
    assert entry["violates_at"] == {"no_task_lost": 26, "deadlock": 48}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('violates_at = "25"', "violates_at must be a table of property = steps"),
        ("violates_at = { leader_in_isr = 3 }", "violates_at: 'leader_in_isr' is not in violates"),
        ("violates_at = { deadlock = 0 }", "violates_at: deadlock must be a positive number of steps"),
        ("violates_at = { deadlock = true }", "violates_at: deadlock must be a positive number of steps"),
        ('engine = "simulate"\nviolates_at = { deadlock = 48 }', "violates_at needs engine 'bfs'"),
    ],
)
def test_a_bad_pin_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, message: str
) -> None:
    code, out = _release(tmp_path, extra)
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and message in err, err
    assert not out.exists()
