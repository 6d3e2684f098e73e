"""The release suite's ``explore`` entries (issue 34, item 3): a seeded, budgeted sampled run of a
configuration too large for bfs, which fails a release only by finding a violation and says that
passing proves nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.release import load_suite

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "configs" / "controller-small.toml"


def _suite(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(f'[[check]]\nname = "explore"\nmodel = "controller"\nconfig = "{SMALL}"\n{body}\n')
    return path


def test_an_exploration_without_violation_passes_and_says_it_proves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(
        tmp_path, 'engine = "simulate"\nexpect = "explore"\nexplore = { seed = 3, walks = 20, depth = 30 }'
    )
    code = main(["release", "--suite", str(suite), "--report-dir", str(tmp_path / "r"), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("[1/1] explore"))  # the entry's one line
    assert " PASS " in line and "(simulate, seed 3): an exploration, it proves nothing" in line
    doc = json.loads((tmp_path / "r" / "latest" / "report.json").read_text())
    (entry,) = doc["entries"]
    assert entry["expect"] == "explore" and entry["result"]["exit_reason"] == "budget_exhausted"


def test_an_exploration_that_finds_a_violation_fails_the_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(
        tmp_path,
        'set = ["mutant=no-epoch-bump", "max_session_expiries=1"]\nengine = "hypothesis"\nexpect = "explore"\n'
        "explore = { seed = 0, max_examples = 40 }",
    )
    code = main(["release", "--suite", str(suite), "--report-dir", str(tmp_path / "r"), "--quiet"])
    assert code == 1
    assert "FAIL: the exploration found a violation: " in capsys.readouterr().out
    assert not (tmp_path / ".hypothesis").exists()  # an explore entry keeps no example database


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            'engine = "bfs"\nexpect = "explore"\nexplore = { seed = 0 }',
            "an explore entry runs engine simulate or hypothesis",
        ),
        ('engine = "simulate"\nexpect = "explore"', "explore must be a table with an integer seed"),
        (
            'engine = "simulate"\nexpect = "explore"\nexplore = { walks = 5 }',
            "explore must be a table with an integer seed",
        ),
        (
            'engine = "simulate"\nexpect = "explore"\nexplore = { seed = 0, walk = 5 }',
            "'walk': unknown (did you mean 'walks'?)",
        ),
        ('engine = "simulate"\nexpect = "explore"\nexplore = { seed = 0, walks = 0 }', "walks"),
        ('engine = "hypothesis"\nexpect = "explore"\nexplore = { seed = 0, profile = "fast" }', "profile"),
        ('expect = "hold"\nexplore = { seed = 0 }', "explore is the options of an expect = 'explore' entry"),
    ],
)
def test_a_bad_explore_entry_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, message: str
) -> None:
    code = main(
        ["release", "--suite", str(_suite(tmp_path, body)), "--report-dir", str(tmp_path / "r"), "--quiet"]
    )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and message in err, err
    assert not (tmp_path / "r").exists()


def test_the_default_suite_explores_a_configuration_too_large_for_bfs() -> None:
    entries = {e.name: e for e in load_suite(str(ROOT / "configs" / "release.toml"))}
    e = entries["controller-explore"]
    assert e.expect == "explore" and e.engine == "simulate" and e.explore["seed"] == 0
    assert e.engine_options() == {"seed": 0, "walks": 1500, "depth": 250, "swarm": True}
