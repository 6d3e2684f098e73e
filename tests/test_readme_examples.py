"""The README's examples do what they say: every command of every ``sh`` block under "Using it"
runs, in a scratch folder, in a fresh process, with the exit code the README gives it; so does
every command of the tutorial, ``docs/tutorial.md`` (``TUTORIAL``), in its order.

The commands are read from the README itself; ``EXPECTED`` holds each one's exit codes and,
for the few that would take minutes here, the smaller bound they run with. A command added to
the README and missing here fails the test, so every example is run before it is published.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: command (as the README spells it, comments and line continuations removed) ->
#: (exit codes it may end with, arguments added to keep it to seconds here)
EXPECTED: dict[str, tuple[tuple[int, ...], list[str]]] = {
    "kafka-mc models": ((0,), []),
    "kafka-mc models controller": ((0,), []),
    "kafka-mc release --list": ((0,), []),
    "kafka-mc release --entries controller-small,timing-wheel-ref": ((0,), ["--quiet"]),
    "kafka-mc check timing-wheel": ((0,), []),
    "kafka-mc check purgatory --set ops=1 --max-seconds 60 --json result.json": ((0,), []),
    "kafka-mc check controller --config configs/controller-small.toml --set max_restarts=1 "
    "--set broker_epoch=false": ((1,), []),
    "kafka-mc check simple-timing-wheel --config configs/simple-timing-wheel-ref.toml "
    "--continue --save-traces traces/": ((1,), []),
    "kafka-mc replay traces/simple-timing-wheel-deadlock.json": ((0,), []),
    # the placeholder factory stands for a user's: the toy grid of tests/toys.py
    "kafka-mc check --system mypkg.mymodel:make_system --set n=3": ((0,), []),
    # one catalogue mutant instead of all of them against the two entries
    "kafka-mc mutate --suite configs/release.toml --entries controller-small,controller-admin "
    "--set controller-small:max_session_expiries=1 --max-seconds 120 --json mutation.json": (
        (0,),
        ["--mutants", "no-epoch-bump"],
    ),
    # two source mutants instead of 40 (a survivor makes it exit 1)
    "kafka-mc mutate --suite configs/release.toml --entries controller-small --no-catalogue "
    "--sample 40 --seed 20": ((0, 1), ["--sample", "2"]),
    # one entry instead of the whole suite
    "kafka-mc release --mutation mutation.json": ((0,), ["--entries", "controller-small", "--quiet"]),
    "kafka-mc prove --list": ((0,), []),
    # up to three replicas instead of six
    "kafka-mc prove election-rules": ((0,), ["--set", "max_replicas=3"]),
    "kafka-mc check timing-wheel --engine symbolic": ((0,), []),
    "kafka-mc check simple-timing-wheel --engine simulate --swarm --walks 400 --save-traces t/": ((1,), []),
    "kafka-mc shrink t/simple-timing-wheel-no_task_lost.json --out-dir t/": ((0,), []),
}


#: the tutorial's commands -> (exit codes, what its output must hold: the property and the
#: counterexample's length the page names, so a page whose claim no longer holds fails)
TUTORIAL: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "kafka-mc check controller --config configs/controller-small.toml": ((0,), ("74 distinct states",)),
    "kafka-mc check controller --config configs/controller-small.toml --set mutant=leader-outside-isr "
    "--save-traces traces/": (
        (1,),
        (
            "VIOLATION of leader_in_isr",
            "why: t0-0: broker 0 leads at leader epoch 1, but its ISR (1,) does not contain it",
            "shortest counterexample: 6 steps",
            "trace of leader_in_isr saved to traces/controller-leader_in_isr.json",
        ),
    ),
    "kafka-mc replay traces/controller-leader_in_isr.json": ((0,), ("leader_in_isr: violation reproduced",)),
    "kafka-mc replay traces/controller-leader_in_isr.json --state -1": (
        (0,),
        ("/brokers/topics/0/partitions/0/state: leader 0, leader epoch 1, ISR (1,)",),
    ),
    "kafka-mc replay traces/controller-leader_in_isr.json --diff -2 -1": ((0,), ("ISR (0, 1)", "ISR (1,)")),
    "kafka-mc shrink traces/controller-leader_in_isr.json --out-dir shrunk/": (
        (0,),
        (
            "saved to shrunk/controller-leader_in_isr-shrunk.json",
            "shrunk/test_controller_leader_in_isr_shrunk.py",
        ),
    ),
    # the variants: each on the bounds that show its bug, its property and length as the page says
    "kafka-mc check controller --config configs/controller-small.toml --set max_restarts=1 "
    "--set broker_epoch=false": ((1,), ("VIOLATION of broker_views_match_zookeeper", ": 8 steps")),
    "kafka-mc check controller --config configs/controller-small.toml --set max_session_expiries=1 "
    "--set elector=legacy": ((1,), ("VIOLATION of controller_znode_valid", ": 15 steps")),
    "kafka-mc check controller --config configs/controller-small.toml --set max_records=1 "
    "--set unclean_leader_election=true": ((1,), ("VIOLATION of no_acked_record_lost", ": 14 steps")),
    "kafka-mc check controller --config configs/controller-small.toml --set max_records=1 --set max_restarts=1 "
    "--set max_crashes=2 --set send_update_metadata=false --set follower_truncation=high-watermark": (
        (1,),
        ("VIOLATION of no_acked_record_lost", ": 17 steps"),
    ),
    "kafka-mc check controller --config configs/controller-small.toml --set max_session_expiries=1 "
    "--set session_expiry_handling=queued": ((1,), ("VIOLATION of controller_znode_valid", ": 10 steps")),
    "kafka-mc check controller --config configs/controller-small.toml --set max_session_expiries=1 "
    "--set max_restarts=1 --set session_expiry_handling=queued --set zk_write_fencing=partition-version "
    "--properties zk_writes_fenced": ((1,), ("VIOLATION of zk_writes_fenced", ": 13 steps")),
    "kafka-mc check controller --config configs/controller-small.toml --set max_crashes=0 "
    "--set send_update_metadata=false --set max_controlled_shutdowns=2 --set leader_selectors=0.8": (
        (1,),
        ("VIOLATION of elected_leader_is_live", ": 18 steps"),
    ),
    "kafka-mc check controller --config configs/controller-0.8.toml": (
        (1,),
        ("VIOLATION of context_matches_zookeeper", ": 7 steps"),
    ),
}

#: a variant key and its value -> the design the command runs without it (the fixed one)
VARIANT_KEYS = (
    "broker_epoch=false",
    "elector=legacy",
    "unclean_leader_election=true",
    "follower_truncation=high-watermark",
    "session_expiry_handling=queued",
    "leader_selectors=0.8",
)


def sh_commands(path: Path, start: str | None = None, end: str | None = None) -> list[str]:
    """The ``kafka-mc`` commands of the ``sh`` blocks of a Markdown file (between the headings
    ``start`` and ``end`` when given), in order."""
    text = path.read_text(encoding="utf-8")
    section = text[text.index(start) if start else 0 : text.index(end) if end else len(text)]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(" ".join(words))
    return commands


def readme_commands() -> list[str]:
    """The ``kafka-mc`` commands of the ``sh`` blocks under "Using it", in order."""
    return sh_commands(ROOT / "README.md", "## Using it", "## Models")


def test_every_tutorial_command_is_known() -> None:
    """docs/tutorial.md's commands are exactly :data:`TUTORIAL`'s, each with its exit code."""
    commands = sh_commands(ROOT / "docs" / "tutorial.md")
    assert [c for c in commands if c not in TUTORIAL] == [], "tutorial commands not in TUTORIAL"
    assert [c for c in TUTORIAL if c not in commands] == []


def test_every_readme_command_is_known() -> None:
    commands = readme_commands()
    assert len(commands) >= 15
    unknown = [c for c in commands if c not in EXPECTED]
    assert unknown == [], "README examples not in EXPECTED (add each with its exit code)"
    assert [c for c in EXPECTED if c not in commands] == []


@pytest.mark.slow
def test_readme_examples_run_with_their_exit_codes(tmp_path: Path) -> None:
    """Every example in the README's order (later ones read what earlier ones wrote: traces,
    mutation.json), from a scratch folder that sees the project's configs/."""
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KAFKA_MC_PROGRESS_EVERY": "600"}
    for command in readme_commands():
        codes, extra = EXPECTED[command]
        words = shlex.split(command.replace("mypkg.mymodel:make_system", "tests.toys:grid"))
        assert words[0] == "kafka-mc"
        r = subprocess.run(
            [sys.executable, "-m", "explorer", *words[1:], *extra],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode in codes, f"{command} {' '.join(extra)}: exit {r.returncode}\n{r.stderr[-2000:]}"


def _run(command: str, cwd: Path, path: str = str(ROOT)) -> subprocess.CompletedProcess[str]:
    """``command`` in a fresh process as the console script runs it: ``python3 -P`` (no folder
    of the command's own put on the import path), from ``cwd``, with ``path`` as PYTHONPATH (by
    default this checkout, whose code the tutorial's claims are about)."""
    env = {**os.environ, "PYTHONPATH": path, "KAFKA_MC_PROGRESS_EVERY": "600"}
    words = shlex.split(command)
    assert words[0] == "kafka-mc"
    return subprocess.run(
        [
            sys.executable,
            "-P",
            "-c",
            "import sys; from explorer.cli import main; sys.exit(main())",
            *words[1:],
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_tutorial_commands_run_with_their_exit_codes_and_claims(tmp_path: Path) -> None:
    """Every command of docs/tutorial.md in its order (later ones read the traces earlier ones
    wrote), with the exit code and the property and length the page names; each variant's
    command without its variant key searches the whole space with no property violated (the
    fixed design; a witness these bounds cannot reach aside), so the variant is what breaks it."""
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    for command in sh_commands(ROOT / "docs" / "tutorial.md"):
        codes, needles = TUTORIAL[command]
        r = _run(command, tmp_path)
        assert r.returncode in codes, (
            f"{command}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        )
        missing = [n for n in needles if n not in r.stdout]
        assert missing == [], f"{command}: {missing} not in\n{r.stdout[:3000]}"
        key = next((k for k in VARIANT_KEYS if f"--set {k}" in command), None)
        if key is not None:
            fixed = _run(command.replace(f"--set {key}", ""), tmp_path)
            # every property holds in the whole space (a witness these bounds cannot reach aside)
            held = "VIOLATION of" not in fixed.stdout and "undecided" not in fixed.stdout
            assert held and fixed.returncode in (0, 1), f"{command} without {key}:\n{fixed.stdout[:2000]}"


def test_a_system_module_is_found_from_the_working_folder_as_python_m_finds_it(tmp_path: Path) -> None:
    """``kafka-mc check --system tests.toys:grid`` from the project folder imports
    ``tests.toys`` as ``python3 -m explorer`` does, though the console script puts no folder
    of the user's on the import path (it failed with 'No module named tests')."""
    r = _run(
        "kafka-mc check --system tests.toys:grid --set n=3 --quiet", ROOT, path=""
    )  # kafka-mc as installed
    assert r.returncode == 0 and "(bfs): complete" in r.stdout, r.stderr


def test_the_readme_is_short_and_every_command_of_the_reference_is_known() -> None:
    """A newcomer's README (issue 55): at most 150 lines; the reference page it sends them to,
    docs/usage.md, holds no command the README's run does not run (each of its ``sh`` blocks'
    commands is one of :data:`EXPECTED`)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines"
    unknown = [c for c in sh_commands(ROOT / "docs" / "usage.md") if c not in EXPECTED]
    assert unknown == [], "docs/usage.md commands the README's test does not run"
