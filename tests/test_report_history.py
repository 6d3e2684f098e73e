"""The release history (issue 33, item 3): every run kept under the report folder, what changed
since the previous run, and ``reports/index.html`` with trend charts, offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.report.history import changes, index_html, run_key, runs

ROOT = Path(__file__).resolve().parents[1]


def _suite(tmp_path: Path, max_clock: int, mutant: str = "none") -> Path:
    path = tmp_path / f"suite-{max_clock}-{mutant}.toml"
    path.write_text(
        '[[check]]\nname = "wheel"\nmodel = "timing-wheel"\n'
        f'config = "{ROOT / "configs" / "timing-wheel-small.toml"}"\n'
        f'set = ["max_clock={max_clock}", "mutant={mutant}"]\nengine = "bfs"\nexpect = "hold"\n'
    )
    return path


def _release(tmp_path: Path, suite: Path, *extra: str) -> int:
    return main(["release", "--suite", str(suite), "--report-dir", str(tmp_path / "r"), "--quiet", *extra])


def test_three_runs_give_a_history_page_with_trends_and_each_run_says_what_changed(tmp_path: Path) -> None:
    assert _release(tmp_path, _suite(tmp_path, 3)) == 0
    assert _release(tmp_path, _suite(tmp_path, 4)) == 0
    assert _release(tmp_path, _suite(tmp_path, 4, "flush_forgets_readd")) == 1
    kept = runs(tmp_path / "r")
    assert len(kept) == 3
    first, second, third = kept
    assert "changes" not in first  # nothing to compare with
    ch = second["changes"]
    assert ch["since"] == first["run_id"] and ch["entries"][0]["states"][0] < ch["entries"][0]["states"][1]
    assert third["changes"]["new_violations"] and third["changes"]["entries"][0]["status"] == ["pass", "fail"]
    page = (tmp_path / "r" / "index.html").read_text()
    for doc in kept:
        assert f'href="{doc["run_id"]}/index.html"' in page
    assert page.count("<polyline") >= 3 and "FAILED" in page and "passed" in page
    # offline: no resource is fetched from anywhere
    assert not re.search(r'(src|href)="(https?:)?//', page)
    run_page = (tmp_path / "r" / third["run_id"] / "index.html").read_text()
    assert f"Changed since run {second['run_id']}" in run_page and "new violations" in run_page


def test_compare_names_the_run_to_compare_with(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _release(tmp_path, _suite(tmp_path, 3)) == 0
    assert _release(tmp_path, _suite(tmp_path, 4)) == 0
    first = runs(tmp_path / "r")[0]
    assert _release(tmp_path, _suite(tmp_path, 4), "--compare", first["run_id"]) == 0
    assert runs(tmp_path / "r")[-1]["changes"]["since"] == first["run_id"]
    before = sorted(p.name for p in (tmp_path / "r").iterdir())
    assert _release(tmp_path, _suite(tmp_path, 4), "--compare", "20990101-000000") == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--compare 20990101-000000: no such run" in err
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == before  # nothing half-written


def test_changes_name_coverage_gained_and_lost() -> None:
    def doc(run: str, edges: dict[str, int], never: list[str]) -> dict:
        return {
            "run_id": run,
            "summary": {
                "state_machines": {"partition": {"hits": edges}},
                "action_kinds": {"never_enabled": never},
            },
            "entries": [],
        }

    ch = changes(doc("2", {"A->B": 1, "B->C": 0}, ["Crash"]), doc("1", {"A->B": 0, "B->C": 3}, []))
    assert ch["edges_gained"] == ["partition/A->B"] and ch["edges_lost"] == ["partition/B->C"]
    assert ch["kinds_no_longer_enabled"] == ["Crash"] and ch["kinds_now_enabled"] == []


def test_runs_are_ordered_by_time_then_by_their_same_second_suffix() -> None:
    ids = ["20261127-051550-10", "20261127-051550-2", "20261127-051550", "20261126-235959"]
    assert sorted(ids, key=run_key) == [
        "20261126-235959",
        "20261127-051550",
        "20261127-051550-2",
        "20261127-051550-10",
    ]
    assert index_html([]).count("<tr>") == 1  # an empty folder: the header row only


def test_an_unreadable_run_folder_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "20260101-000000").mkdir()
    (tmp_path / "20260101-000000" / "report.json").write_text("{not json")
    (tmp_path / "20260101-000001").mkdir()
    (tmp_path / "20260101-000001" / "report.json").write_text(json.dumps({"schema": "other"}))
    assert runs(tmp_path) == []
