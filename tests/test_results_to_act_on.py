"""Issue 55 (items 3-5, 7): results a person can act on.

A release saves every counterexample as a trace file in its run folder and leads to the tools
(the terminal and the entry page give the commands; ``replay`` and ``shrink`` take the run
folder with ``--entry``); it prints one line per passing entry and the verdict last; ``check``
prints a trace once, ``--continue --save-traces`` one line per violation, a budget stop in one
line; a subset run is recorded as one and compared like with like; the history's charts start
at zero; the report gives configurations as TOML that loads back.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from explorer.cli import main

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
[[check]]
name = "controller-small"
model = "controller"
config = "{root}/configs/controller-small.toml"
expect = "hold"

[[check]]
name = "controller-leader-outside-isr"
model = "controller"
config = "{root}/configs/controller-small.toml"
set = ["mutant=leader-outside-isr"]
expect = "violation"
violates = ["leader_in_isr", "isr_nonempty_subset"]

[[check]]
name = "purgatory-small-wrong-expectation"
model = "purgatory"
config = "{root}/configs/purgatory-small.toml"
set = ["mutant=no_cas"]
expect = "hold"
"""


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A release of three small entries (one passes, one finds its expected violations, one
    fails on a violation it did not expect): its report folder, run folder and output."""
    d = tmp_path_factory.mktemp("release")
    (d / "suite.toml").write_text(SUITE.format(root=ROOT))
    out = d / "out.txt"
    import contextlib

    with out.open("w") as f, contextlib.redirect_stdout(f):
        code = main(
            ["release", "--suite", str(d / "suite.toml"), "--report-dir", str(d / "reports"), "--quiet"]
        )
    assert code == 1
    (run_dir,) = [p for p in (d / "reports").iterdir() if p.is_dir() and not p.is_symlink()]
    return d / "reports", run_dir, out.read_text()


def test_a_release_prints_one_line_per_passing_entry_and_the_verdict_last(
    release: tuple[Path, Path, str],
) -> None:
    """Passing entries (with or without expected violations) are one line each; the failing one
    gives its message and explanation; the last lines give the commands and the verdict."""
    _, run_dir, out = release
    lines = out.splitlines()
    assert re.fullmatch(
        r"\[\d/3\] controller-small +PASS +74 states +[0-9.]+ s  every property held", lines[0]
    )
    (expected,) = [ln for ln in lines if "controller-leader-outside-isr " in ln]
    assert "PASS" in expected and "the 2 expected violations found" in expected
    assert not [ln for ln in lines if "VIOLATION of leader_in_isr" in ln]  # expected: no heading
    assert "  VIOLATION of on_complete_at_most_once (always, " in out and "    why: operation " in out
    saved = f"{run_dir}/traces/purgatory-small-wrong-expectation--on_complete_at_most_once.json"
    assert f"  kafka-mc replay {saved} --state -1  # the violating state in full" in lines
    assert lines[-1].startswith(
        "release: FAILED: 1 of 3 entries (purgatory-small-wrong-expectation), 2 passed"
    )
    assert len(lines) < 20, out


def test_every_counterexample_is_saved_and_replays_from_the_run_folder(
    release: tuple[Path, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Expected violations are saved too; ``replay RUN --entry E --property P`` replays one, and
    a missing or unknown name is a one-line error naming what the folder holds."""
    _, run_dir, _ = release
    assert sorted(p.name for p in (run_dir / "traces").iterdir()) == [
        "controller-leader-outside-isr--isr_nonempty_subset.json",
        "controller-leader-outside-isr--leader_in_isr.json",
        "purgatory-small-wrong-expectation--on_complete_at_most_once.json",
    ]
    code, out, _ = run(
        [
            "replay",
            str(run_dir),
            "--entry",
            "controller-leader-outside-isr",
            "--property",
            "leader_in_isr",
            "--state",
            "-1",
        ],
        capsys,
    )
    assert code == 0 and "/brokers/topics" in out
    code, out, _ = run(["replay", str(run_dir), "--entry", "purgatory-small-wrong-expectation"], capsys)
    assert code == 0 and "on_complete_at_most_once: violation reproduced" in out
    code, _, err = run(["replay", str(run_dir), "--entry", "controller-leader-outside-isr"], capsys)
    assert code == 2 and err.count("\n") == 1 and "(it has: isr_nonempty_subset, leader_in_isr)" in err
    code, _, err = run(["replay", str(run_dir), "--entry", "controller-smal"], capsys)
    assert code == 2 and err.count("\n") == 1 and "the run saved no counterexample of it" in err
    code, _, err = run(["replay", str(run_dir)], capsys)
    assert code == 2 and "name the entry with --entry" in err


def test_shrink_takes_the_run_folder(
    release: tuple[Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, run_dir, _ = release
    argv = ["shrink", str(run_dir), "--entry", "controller-leader-outside-isr", "--property", "leader_in_isr"]
    code, out, _ = run(
        [*argv, "--out-dir", str(tmp_path), "--no-config", "--shrinker", "ddmin", "--quiet"], capsys
    )
    assert code == 0 and "controller: leader_in_isr:" in out
    assert (tmp_path / "controller-leader_in_isr-shrunk.json").is_file()


def test_the_entry_page_gives_the_commands_and_the_configuration_as_toml(
    release: tuple[Path, Path, str],
) -> None:
    """Each counterexample's block links its trace file and gives the commands; the state views
    are kept for the last two steps only; the configuration's TOML loads back to the same
    configuration (the names of Python's enums spelled as the files spell them)."""
    from explorer.config import load_config
    from explorer.core import config_to_dict
    from explorer.frontend import model_spec

    reports, run_dir, _ = release
    page = (run_dir / "entries" / "controller-leader-outside-isr.html").read_text()
    assert 'href="../traces/controller-leader-outside-isr--leader_in_isr.json"' in page
    assert (
        f"kafka-mc replay {reports}/{run_dir.name}/traces/controller-leader-outside-isr--leader_in_isr.json --state -1"
        in page
    )
    assert "SETTLED" not in page and "start = &quot;settled&quot;" in page
    doc = json.loads((run_dir / "report.json").read_text())
    for en in doc["entries"]:
        spec = model_spec(en["result"]["model"])
        back = load_config(spec.config_cls, values=tomllib.loads(en["config_toml"]))
        assert config_to_dict(back) == en["result"]["config"], en["name"]
        for v in en["result"]["violations"]:
            views = v.get("state_views")
            assert views is not None and all(x is None for x in views[:-2]) and all(views[-2:]), v["property"]


def test_a_subset_run_is_recorded_as_one_and_compared_like_with_like(
    release: tuple[Path, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    reports, run_dir, _ = release
    suite = run_dir.parent.parent / "suite.toml"
    latest = (reports / "latest").resolve()
    argv = ["release", "--suite", str(suite), "--report-dir", str(reports), "--quiet"]
    code, out, _ = run([*argv, "--entries", "controller-small"], capsys)
    assert code == 0 and out.splitlines()[-1].startswith("release: PASSED: 1/1 entries")
    assert "(a subset: 1 of the suite's 3 entries)" in out
    assert (reports / "latest").resolve() == latest  # latest stays the newest run of the whole suite
    new = max((p for p in reports.iterdir() if p.is_dir() and not p.is_symlink()), key=lambda p: p.name)
    doc = json.loads((new / "report.json").read_text())
    assert doc["scope"] == {"subset": True, "entries": ["controller-small"], "suite_entries": 3}
    ch = doc["changes"]
    assert ch["since"] == run_dir.name and [r["name"] for r in ch["entries"]] == ["controller-small"]
    assert ch["vanished_violations"] == [] and ch["states"] == [74, 74] and ch["coverage_compared"] is False
    index = (reports / "index.html").read_text()
    assert "<td>subset: controller-small</td>" in index and "<td>all 3</td>" in index


def test_history_charts_start_at_zero() -> None:
    """A 0.01% change is a flat line near the top, not a cliff: the y-axis starts at 0."""
    from explorer.report.history import _chart

    svg = _chart("states", ["a", "b"], {"states": [12_100_000.0, 12_101_210.0]})
    ys = [float(y) for y in re.findall(r'<circle cx="[0-9.]+" cy="([0-9.]+)"', svg)]
    assert len(ys) == 2 and abs(ys[0] - ys[1]) < 1 and ">0<" in svg and "+0.01%" in svg


def test_check_prints_a_trace_once(capsys: pytest.CaptureFixture[str]) -> None:
    """Three properties fail in the same state: their explanations each, their trace once."""
    argv = ["check", "controller", "--config", "configs/controller-small.toml", "--quiet"]
    code, out, _ = run([*argv, "--set", "max_restarts=1", "--set", "broker_epoch=false"], capsys)
    assert code == 1 and out.count("VIOLATION of ") == 3 and out.count("why: ") == 3
    assert out.count("broker 1: crashes") == 1
    assert "shortest counterexample of broker_views_match_zookeeper, context_matches_zookeeper" in out
    assert "properties undecided: the search stopped at its first violation" in out
    assert "unknown:" not in out


def test_continue_with_save_traces_prints_one_line_per_violation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "check",
        "--system",
        "tests.toys:grid",
        "--set",
        "limit=2",
        "--set",
        "terminal=false",
        "--continue",
    ]
    code, out, _ = run([*argv, "--save-traces", str(tmp_path)], capsys)
    assert code == 1 and "  0  initial state" not in out
    saved = [ln for ln in out.splitlines() if ln.startswith("VIOLATION of ")]
    assert len(saved) == 2 and all(ln.endswith(".json") and "steps): " in ln for ln in saved)
    assert f"next: kafka-mc replay {tmp_path}/" in out


def test_a_budget_stop_says_no_violation_in_n_states(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "check",
        "controller",
        "--config",
        "configs/controller-small.toml",
        "--quiet",
        "--max-states",
        "10",
    ]
    code, out, _ = run(argv, capsys)
    assert code == 3 and re.search(
        r"no violation in \d+ states \(incomplete: max_states reached\); \d+ properties undecided", out
    )
    assert "unknown:" not in out


def test_list_and_models_give_the_last_runs_costs(
    release: tuple[Path, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    reports, run_dir, _ = release
    suite = run_dir.parent.parent / "suite.toml"
    code, out, _ = run(["release", "--suite", str(suite), "--report-dir", str(reports), "--list"], capsys)
    assert code == 0 and re.search(r"controller-small .*last run: 74 states, [0-9.]+ s", out)
    from explorer.release_output import last_run, model_cost_lines
    from explorer.suite import load_suite

    lines = model_cost_lines("purgatory", load_suite(str(suite)), last_run((reports,)))
    assert re.fullmatch(r"    purgatory-small-wrong-expectation  4,074 states, [0-9.]+ s", lines[-1]), lines


def test_an_unreached_witness_is_not_called_a_violation(capsys: pytest.CaptureFixture[str]) -> None:
    """``unclean_leader_election=true`` on controller-small reaches no unclean election: its
    witness is reported unreached, not as a VIOLATION heading."""
    argv = ["check", "controller", "--config", "configs/controller-small.toml", "--quiet"]
    code, out, _ = run([*argv, "--set", "unclean_leader_election=true"], capsys)
    assert code == 1 and "UNREACHED witness unclean_election (reachable)" in out and "VIOLATION" not in out


def test_progress_gives_an_eta_from_the_last_run(
    release: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``check`` on the model and configuration a release entry ran to the end, and that entry in
    the next release, expect the state count the last run met (their progress line's ETA)."""
    from explorer.release_output import check_progress, entry_progress
    from explorer.search.progress import eta
    from explorer.suite import load_suite

    reports = release[0]
    monkeypatch.chdir(reports.parent)  # reports/latest: the last run of the whole suite
    small = str(ROOT / "configs" / "controller-small.toml")
    assert check_progress("controller", small, []).expected == 74
    assert check_progress("controller", small, ["max_crashes=0"]).expected is None  # another configuration
    (entry,) = [e for e in load_suite(str(reports.parent / "suite.toml")) if e.name == "controller-small"]
    assert entry_progress(entry).expected == 74
    assert eta(37, 10.0, 74) == "  50% of ~74, ETA 4 s"


def test_every_release_entrys_configuration_round_trips_through_its_toml() -> None:
    """The TOML the entry page shows for each configuration of the release suite loads back to
    the same configuration (every choice spelled as the files spell it, never Python's name)."""
    from explorer.config import load_config
    from explorer.core import config_to_dict
    from explorer.frontend import model_spec
    from explorer.release_output import config_toml
    from explorer.suite import load_suite

    entries = [e for e in load_suite(str(ROOT / "configs" / "release.toml")) if e.engine != "symbolic"]
    assert len(entries) > 40
    for e in entries:
        spec = model_spec(e.model)
        config = config_to_dict(load_config(spec.config_cls, e.config, e.set))
        text = config_toml(e.model, config)
        assert "KAFKA_2_X" not in text and "SETTLED" not in text, e.name
        assert config_to_dict(load_config(spec.config_cls, values=tomllib.loads(text))) == config, e.name
