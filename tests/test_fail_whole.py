"""Issue 53, item 4: validate up front, fail whole. Every suite entry, explore table and name is
checked before the first entry runs (a suite error found after earlier entries ran leaves a
half-written run folder), and input nested too deeply is one line, exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main

#: a first entry that is good and quick: the bad second one must stop the suite before it runs
GOOD = '[[check]]\nname = "toy"\nmodel = "timing-wheel"\n\n'
SMALL = str(Path(__file__).resolve().parents[1] / "configs" / "controller-small.toml")
EXPLORE = f'model = "controller"\nconfig = "{SMALL}"\nengine = "simulate"\nexpect = "explore"\n'


def one_line(err: str, *needles: str, prefix: str = "kafka-mc: error: ") -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(prefix), err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], (n, lines[0])


@pytest.mark.parametrize(
    "second, needles",
    [
        # found only when the entry ran: the run folder was made and the first entry had run
        (
            f'name = "b"\n{EXPLORE}explore = {{ seed = 0, walks = 2, depth = 5 }}\nmax_states = 10\n',
            ["check 2 (b)", "max_states", "simulate"],
        ),
        (
            f'name = "b"\n{EXPLORE}explore = {{ seed = 0, walks = 2, depth = 5, weights = {{ Crsh = 2.0 }} }}\n',
            ["check 2 (b)", "explore: weights", "'Crsh'", "did you mean 'Crash'?"],
        ),
        (
            f'name = "b"\n{EXPLORE}explore = {{ seed = 0, walks = 2, fault_probabilities = {{ Nosuch = 0.1 }} }}\n',
            ["check 2 (b)", "explore: fault_probabilities", "'Nosuch'"],
        ),
        # found only when the report was written, after every entry ran
        (f'name = "{"x" * 300}"\nmodel = "timing-wheel"\n', ["check 2", "name", "100"]),
        # names that are no file name (each entry has its page entries/<name>.html)
        ('name = "a/b"\nmodel = "timing-wheel"\n', ["check 2 (a/b)", "name"]),
        ('name = ".."\nmodel = "timing-wheel"\n', ["check 2 (..)", "name"]),
        ('name = "-rf"\nmodel = "timing-wheel"\n', ["check 2 (-rf)", "name"]),
        ('name = "a\\u0000b"\nmodel = "timing-wheel"\n', ["check 2", "name"]),
        ('name = "a\\nb"\nmodel = "timing-wheel"\n', ["check 2", "name"]),
        # never found: the key was silently ignored, or the entry could only ever fail
        ('name = "b"\nmodel = "timing-wheel"\nviolates = ["deadlock"]\n', ["check 2 (b)", "violates"]),
        (
            'name = "b"\nmodel = "timing-wheel"\nrequire_transitions = ["partition/OfflinePartition->OnlinePartition"]\n',
            ["check 2 (b)", "require_transitions", "timing-wheel"],
        ),
        (
            'name = "b"\nmodel = "timing-wheel"\nrequire_transitions = 0.5\n',
            ["check 2 (b)", "require_transitions", "timing-wheel"],
        ),
        (
            'name = "b"\nmodel = "timing-wheel"\nengine = "symbolic"\nmax_states = 5\n',
            ["check 2 (b)", "max_states", "symbolic"],
        ),
        (
            'name = "b"\nmodel = "timing-wheel"\nengine = "symbolic"\nrequire_witnesses = true\n',
            ["check 2 (b)", "require_witnesses", "symbolic"],
        ),
        (
            'name = "b"\nmodel = "timing-wheel"\nengine = "symbolic"\nexpect = "violation"\nviolates = ["no_early_expire"]\n',
            ["check 2 (b)", "violates", "'no_early_expire'", "did you mean 'no_early_expiry'?"],
        ),
        (
            'name = "b"\nmodel = "timing-wheel"\nengine = "hypothesis"\nexpect = "explore"\n'
            'explore = { seed = 0, database = "db" }\n',
            ["check 2 (b)", "explore", "database"],
        ),
    ],
    ids=[
        "max-states-sampling",
        "weights-kind",
        "fault-kind",
        "name-too-long",
        "name-slash",
        "name-dotdot",
        "name-dash",
        "name-nul",
        "name-newline",
        "violates-without-violation",
        "transitions-no-state-machine",
        "transitions-fraction-no-state-machine",
        "symbolic-max-states",
        "symbolic-require",
        "symbolic-violates-name",
        "hypothesis-database",
    ],
)
def test_a_bad_second_entry_stops_the_suite_before_the_first_runs(
    second: str, needles: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 with one line naming the entry and the key; nothing printed, no entry run, and
    no run folder (the report folder is not even made)."""
    suite = tmp_path / "s.toml"
    suite.write_text(GOOD + "[[check]]\n" + second)
    rep = tmp_path / "rep"
    assert main(["release", "--quiet", "--suite", str(suite), "--report-dir", str(rep)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not rep.exists(), out
    one_line(err, *needles)


def test_every_entry_of_the_release_suite_has_a_valid_name() -> None:
    """The project's own suite satisfies the name rule (it loads: the rule is checked there)."""
    from explorer.suite import NAME_RULE, load_suite

    suite = Path(__file__).resolve().parents[1] / "configs" / "release.toml"
    names = [e.name for e in load_suite(str(suite))]
    assert len(names) > 40 and all(NAME_RULE.fullmatch(n) for n in names)


def test_an_entry_that_raises_at_run_time_leaves_no_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What no up-front check can see (the model raises during the second entry's search) still
    fails whole: exit 4, one line, and no run folder nor ``latest`` in the report folder (the
    folder is made when the report is written, named by the run's start)."""
    import explorer.release as release
    from explorer.api import ModelError

    real = release.run_check

    def second_raises(model: str, options: object, **kw: object) -> object:
        if model == "simple-timing-wheel":
            raise ModelError("simple-timing-wheel: the system raised KeyError during the search")
        return real(model, options, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(release, "run_check", second_raises)
    suite = tmp_path / "s.toml"
    suite.write_text(GOOD + '[[check]]\nname = "b"\nmodel = "simple-timing-wheel"\n')
    rep = tmp_path / "rep"
    assert main(["release", "--quiet", "--suite", str(suite), "--report-dir", str(rep)]) == 4
    one_line(capsys.readouterr().err, "simple-timing-wheel", "KeyError", prefix="kafka-mc: model error: ")
    assert not rep.exists() or list(rep.iterdir()) == [], list(rep.iterdir())


@pytest.mark.parametrize(
    "how",
    [
        ["--suite", "configs/release.toml", "--entries", "controller-small", "--set", "nosuch=1"],
        [
            "--suite",
            "configs/release.toml",
            "--entries",
            "controller-small",
            "--set",
            "controller-small:brokers=0",
        ],
        ["controller", "--config", "configs/controller-small.toml", "--set", "nosuch=1"],
    ],
    ids=["set", "scoped-set", "config-set"],
)
def test_mutate_checks_its_overrides_before_the_baseline_runs(
    how: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``mutate --set`` (every entry's, or ``ENTRY:KEY=VALUE``) is checked with each entry's
    configuration before any worker runs: exit 2, one line naming the key, no results file
    (it held a crashed baseline before, and the hint said to raise --max-seconds)."""
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    results = tmp_path / "res.jsonl"
    assert main(["mutate", *how, "--results", str(results), "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not results.exists()
    one_line(err, "--set", "brokers" if "brokers=0" in how[-1] else "nosuch")
    assert "max-seconds" not in err


DEEP = "[" * 10_000 + "]" * 10_000


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "timing-wheel", "--set", f"delays={DEEP}"],
        ["check", "--system", "tests.toys:grid", "--set", f"n={DEEP}"],
        ["prove", "election-rules", "--set", f"max_replicas={DEEP}"],
        [
            "mutate",
            "--suite",
            "configs/release.toml",
            "--entries",
            "controller-small",
            "--set",
            f"brokers={DEEP}",
        ],
    ],
    ids=["check", "check-system", "prove", "mutate"],
)
def test_a_set_value_nested_ten_thousand_deep_is_one_line(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--set x=[[[...]]]`` (10,000 deep) is refused in one line naming the key, exit 2 (it was
    a RecursionError: exit 4, 'model error'), whichever verb reads it."""
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    assert main(argv) == 2
    one_line(capsys.readouterr().err, "--set", "nested deeper than")


def test_a_suite_set_value_nested_deeply_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same value in a suite entry's ``set`` names the entry and is refused before any runs."""
    suite = tmp_path / "s.toml"
    suite.write_text(GOOD + f'[[check]]\nname = "b"\nmodel = "timing-wheel"\nset = ["delays={DEEP}"]\n')
    rep = tmp_path / "rep"
    assert main(["release", "--quiet", "--suite", str(suite), "--report-dir", str(rep)]) == 2
    assert not rep.exists()
    one_line(capsys.readouterr().err, "check 2 (b)", "nested deeper than")


class Switches:
    """Three switches, ``flip i`` toggles one; bad when all are on (three flips at least): a
    trace Hypothesis's shrinker draws fresh choices for, which is when it reads and caches the
    constants of the local modules (in ``.hypothesis/constants`` under its home)."""

    def init_states(self) -> list[tuple[int, ...]]:
        return [(0, 0, 0)]

    def successors(self, s: tuple[int, ...]) -> list[tuple[str, tuple[int, ...]]]:
        return [(f"flip {i}", tuple(1 - v if j == i else v for j, v in enumerate(s))) for i in range(3)]

    def properties(self) -> list[Any]:
        from explorer.core import always

        return [always("not_all_on", lambda s: sum(s) < 3, "some switch is off")]


def switches() -> Switches:
    """The factory of ``--system tests.test_fail_whole:switches``."""
    return Switches()


@pytest.mark.slow  # 1.8 CPU-s in a loaded default run (2026-11-29)
def test_shrink_leaves_nothing_of_hypothesis_in_the_working_directory(tmp_path: Path) -> None:
    """``kafka-mc shrink`` runs Hypothesis with its home in a temporary folder: no
    ``.hypothesis`` (example database, constants cache) appears where it was started, and the
    outputs go where they were asked to."""
    import os
    import subprocess
    import sys

    from explorer.engines.simulate import check_simulate
    from explorer.tracefile import trace_document, write_json_atomic

    root = Path(__file__).resolve().parents[1]
    v = check_simulate(Switches(), Switches().properties(), seed=3, walks=50, depth=40).violations[0]
    ref = "tests.test_fail_whole:switches"
    trace = tmp_path / "t.json"
    write_json_atomic(trace, trace_document(ref, {}, v, ref))
    cwd, out = tmp_path / "cwd", tmp_path / "out"
    cwd.mkdir()
    argv = [sys.executable, "-m", "explorer", "shrink", str(trace), "--system", ref, "--no-bfs"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    r = subprocess.run(
        [*argv, "--out-dir", str(out)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert "by Hypothesis" in r.stdout, r.stdout  # Hypothesis did run
    assert list(cwd.iterdir()) == []
    assert sorted(p.name for p in out.iterdir()) == [
        "test_switches_not_all_on_shrunk.py",
        "tests.test_fail_whole_switches-not_all_on-shrunk.json",
    ]


@pytest.mark.slow  # 1.7 CPU-s in a loaded default run (2026-11-29)
def test_the_hypothesis_engine_with_a_database_folder_leaves_nothing_in_the_working_directory(
    tmp_path: Path,
) -> None:
    """``check --engine hypothesis --database DIR`` keeps its examples in DIR and nothing else
    of Hypothesis's (its constants cache went to ``.hypothesis`` in the working directory)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    cwd, db = tmp_path / "cwd", tmp_path / "db"
    cwd.mkdir()
    argv = [sys.executable, "-m", "explorer", "check", "--system", "tests.test_fail_whole:switches"]
    argv += ["--engine", "hypothesis", "--seed", "0", "--database", str(db), "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr  # the violation is found (and kept in db)
    assert list(cwd.iterdir()) == [] and db.is_dir()
