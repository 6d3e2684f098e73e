"""The README's examples do what they say: every command of every ``sh`` block under "Using it"
runs, in a scratch folder, in a fresh process, with the exit code the README gives it.

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


def readme_commands() -> list[str]:
    """The ``kafka-mc`` commands of the ``sh`` blocks under "Using it", in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Using it") : text.index("## Models")]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(" ".join(words))
    return commands


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
