"""Issue 55, item 2: the full state at any step (explorer/state_view.py, the controller's tree in
model/controller/render.py) and ``kafka-mc replay TRACE --state K`` / ``--diff K1 K2``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from explorer.state_view import diff_trees, flatten, render_html, render_text, tree_of
from model.controller import ControllerConfig, ControllerSystem

ROOT = Path(__file__).resolve().parents[1]


def _small() -> ControllerSystem:
    return ControllerSystem(ControllerConfig(brokers=2))


def test_the_controller_state_names_its_znodes_and_brokers() -> None:
    sys_ = _small()
    text = render_text(tree_of(sys_, sys_.init_states()[0]))
    for want in (
        "/controller: broker 0 (ephemeral, owner session 1)",
        "/controller_epoch: 1 (zkVersion 1)",
        "/brokers/ids/1: ephemeral, owner session 2, broker epoch (czxid) 1",
        "/brokers/topics/0/partitions/0/state: leader 0, leader epoch 0, ISR (0, 1), controller epoch 1, zkVersion 1",
        "broker 0",
        "broker 1",
        "activeControllerId: 0",
        "partition state: OnlinePartition",
        "replica states: 0: OnlineReplica, 1: OnlineReplica",
        "waits on: nothing",
        "to broker 1: empty",
    ):
        assert want in text, want


def test_a_state_after_a_few_steps_shows_what_the_controller_waits_on() -> None:
    sys_ = ControllerSystem(ControllerConfig(brokers=2, max_crashes=1))
    s = sys_.init_states()[0]
    # broker 1 crashes, its session expires, the controller processes the BrokerChange
    for text in (
        "broker 1: crashes",
        "broker 1: ZooKeeper session 2 expires",
        "broker 0: controller processes",
    ):
        s = next(t for a, t in sys_.successors(s) if str(a).startswith(text))
    text = render_text(tree_of(sys_, s))
    assert "process: down" in text and "/brokers/ids/1: absent (last broker epoch 1)" in text
    assert "waits on: waits on processBrokerChange: getAllBrokerAndEpochsInCluster" in text
    assert "requests in flight: GetAllBrokersInCluster()" in text
    html = render_html(tree_of(sys_, s))
    assert html.startswith('<details class="state"') and "<script" not in html


def test_the_diff_names_exactly_the_changed_paths() -> None:
    sys_ = _small()
    s0 = sys_.init_states()[0]
    s1 = s0._replace(zk=s0.zk._replace(epoch=5), nodes=(s0.nodes[0]._replace(active_id=-1), s0.nodes[1]))
    got = diff_trees(tree_of(sys_, s0), tree_of(sys_, s1))
    assert got == [
        "ZooKeeper / /controller_epoch: 1 (zkVersion 1) -> 5 (zkVersion 1)",
        "broker 0 / controller / activeControllerId: 0 -> -1",
    ]
    assert diff_trees(tree_of(sys_, s0), tree_of(sys_, s0)) == []
    a, b = flatten(tree_of(sys_, s0)), flatten(tree_of(sys_, s1))
    assert {p for p in a if a[p] != b.get(p)} == {
        "ZooKeeper / /controller_epoch",
        "broker 0 / controller / activeControllerId",
    }


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("traces")
    run = subprocess.run(
        [sys.executable, "-m", "explorer", "check", "controller", "--config", "configs/controller-small.toml",
         "--set", "mutant=leader-outside-isr", "--quiet", "--save-traces", str(out / "t")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    (path,) = (out / "t").glob("*.json")
    return path


def _replay(trace: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "explorer", "replay", str(trace), *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def test_replay_state_prints_the_full_state_at_a_step(trace: Path) -> None:
    run = _replay(trace, "--state", "6")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("step 6 (ZooKeeper: applies write partition states")
    assert "/brokers/topics/0/partitions/0/state: leader 0, leader epoch 1, ISR (1,)" in run.stdout


def test_replay_diff_prints_what_changed_between_two_steps(trace: Path) -> None:
    run = _replay(trace, "--diff", "0", "2")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("step 0 (initial state) -> step 2 (")
    assert (
        "  ZooKeeper / /brokers/ids/1: ephemeral, owner session 2, broker epoch (czxid) 1 -> absent"
        in "\n".join(lines)
    )
    assert "  broker 1 / process: alive -> down" in lines


@pytest.mark.parametrize("args", [["--state", "99"], ["--diff", "0", "-99"]])
def test_a_step_out_of_range_is_a_one_line_usage_error(trace: Path, args: list[str]) -> None:
    run = _replay(trace, *args)
    assert run.returncode == 2 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and "out of range" in run.stderr
