"""Coverage labels (``successors_labelled``): engines count them, the controller records
its state-machine transitions, elections and ZooKeeper writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from explorer.search import nest_labels
from invariants.mutants.controller import ControllerConfig  # with the test-only mutant key
from model.controller import ControllerSystem
from model.controller.coverage import expected_labels, sequence_arrow, state_machine_graphs
from tests.toys import Grid, LabelledGrid

ROOT = Path(__file__).resolve().parents[1]
TOPICS = ["brokers=2", "topics=2", "replication_factor=2", "topics_created_later=1"]
TOPICS += ["max_restarts=0", "max_session_expiries=0"]


def controller(overrides: list[str] = (), path: str | None = None) -> tuple[ControllerSystem, Any]:
    c = load_config(ControllerConfig, path, list(overrides))
    return spec.build(c), c


def bfs_labels(overrides: list[str] = (), path: str | None = None) -> dict[str, Any]:
    system, c = controller(overrides, path)
    r = check_bfs(system, spec.properties(c), model="controller", config=c)
    assert r.exit_reason.value == "complete"
    return r.coverage["labels"]


def test_toy_labels_counted_per_explored_transition() -> None:
    r = check_bfs(LabelledGrid(2), [])
    # 12 transitions in a 3x3 grid, 6 along each axis; (1, 1) and (2, 2) are entered from two sides each
    assert r.coverage["labels"] == {"axis": {"a": 6, "b": 6, "never": 0}, "diagonal": {"entered": 4}}
    assert r.coverage["labels_never_hit"] == ["axis/never"]
    # without the hook there is no labels section at all
    assert "labels" not in check_bfs(Grid(2), []).coverage


def test_nest_labels_keeps_a_shorter_label_under_empty_key() -> None:
    assert nest_labels({("a",): 1, ("a", "b"): 2}) == {"a": {"": 1, "b": 2}}


def test_successors_labelled_is_successors_plus_labels() -> None:
    system, _ = controller(path=str(ROOT / "configs" / "controller-small.toml"))
    seen, todo = set(system.init_states()), list(system.init_states())
    while todo:
        s = todo.pop()
        plain = list(system.successors(s))
        labelled = list(system.successors_labelled(s))
        assert [(a, t) for a, t, _ in labelled] == plain
        for _, _t, labels in labelled:
            assert all(isinstance(x, tuple) and len(x) == 3 for x in labels)
        for _, t in plain:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert len(seen) == 74


def test_controller_small_state_machine_coverage() -> None:
    """One crash, topic present from the start: no NewPartition edge; the crashed leader's
    partition goes OfflinePartition -> OnlinePartition (failover / offline election)."""
    labels = bfs_labels(path=str(ROOT / "configs" / "controller-small.toml"))
    psm, rsm = labels["state_machines"]["partition"], labels["state_machines"]["replica"]
    graphs = state_machine_graphs()
    assert set(psm) == {f"{u}->{v}" for u, v in graphs["partition"].edges}
    assert set(rsm) == {f"{u}->{v}" for u, v in graphs["replica"].edges}
    assert psm["NewPartition->OnlinePartition"] == 0 and psm["NonExistentPartition->NewPartition"] == 0
    assert psm["OfflinePartition->OnlinePartition"] > 0
    assert rsm["OnlineReplica->OfflineReplica"] > 0 and rsm["OnlineReplica->OnlineReplica"] > 0
    assert all(rsm[e] == 0 for e in rsm if "Deletion" in e)  # topic deletion is off here
    assert labels["elections"]["offline"]["isr"] > 0 and "unclean" not in labels["elections"]["offline"]
    assert "invalid_transitions" not in labels
    zk = labels["zk_writes"]
    assert (
        zk["/controller_epoch"]["changed"] > 0 and zk["/brokers/topics/0/partitions/0/state"]["changed"] > 0
    )


def test_topic_creation_covers_new_partition_edges() -> None:
    """Fault-free topic creation: NonExistent -> New -> Online once, for both replicas, and
    one initial leader from the live replicas; no offline election."""
    labels = bfs_labels([*TOPICS, "max_crashes=0"])
    psm, rsm = labels["state_machines"]["partition"], labels["state_machines"]["replica"]
    assert psm["NonExistentPartition->NewPartition"] == 1 and psm["NewPartition->OnlinePartition"] == 1
    assert psm["OfflinePartition->OnlinePartition"] == 0
    assert rsm["NonExistentReplica->NewReplica"] == 2 and rsm["NewReplica->OnlineReplica"] == 2
    assert labels["elections"] == {"new_partition": {"isr": 1, "none": 0}, "offline": {"isr": 0, "none": 0}}
    assert labels["zk_writes"]["/brokers/topics/1"] == {"changed": 1}


def test_unclean_election_outcome_counted() -> None:
    """With unclean election on and the ISR shrunk to the crashed leader, some offline
    election picks a replica outside the ISR."""
    labels = bfs_labels(
        [*TOPICS[:3], "topics=1", "max_crashes=1", "max_restarts=0", "unclean_leader_election=true"]
    )
    assert labels["elections"]["offline"]["unclean"] > 0


def test_invalid_transition_attempt_is_labelled() -> None:
    """A mutant that leaves the replica states NonExistentReplica at failover: the controller
    then tries NonExistentReplica -> OnlineReplica, which the table forbids."""
    system, c = controller(
        ["brokers=2", "replication_factor=2", "max_crashes=1", "max_restarts=0", "mutant=skip-replica-init"]
    )
    r = check_bfs(system, spec.properties(c), keep_going=True)
    inv = r.coverage["labels"]["invalid_transitions"]["replica"]
    assert inv["NonExistentReplica->OnlineReplica"] > 0


def test_expected_labels_cover_both_tables() -> None:
    system, _ = controller(["unclean_leader_election=true"])
    labels = expected_labels(system)
    assert sum(x[0] == "state_machines" for x in labels) == 8 + 14  # the later 2.x replica table
    assert ("elections", "offline", "unclean") in labels


def _cli_json(tmp_path: Path, argv: list[str]) -> dict[str, Any]:
    """Run ``kafka-mc check`` in a child process (the sampling engines leave process state
    behind that made a fragile z3 doctest later in the session time out) and read its JSON."""
    out = tmp_path / "r.json"
    p = subprocess.run(
        [sys.executable, "-m", "explorer", "check", *argv, "--json", str(out), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode in (0, 1, 3), p.stderr[-2000:]  # 3: a sampling engine ends on its budget
    return json.loads(out.read_text())


@pytest.mark.slow  # 2.1 CPU-s in a loaded default run (2026-11-29)
def test_sampling_engines_count_a_subset_of_bfs_labels(tmp_path: Path) -> None:
    path = str(ROOT / "configs" / "controller-small.toml")
    full = bfs_labels(path=path)
    argv = ["controller", "--config", path, "--engine", "simulate", "--walks", "50", "--depth", "30"]
    sim = _cli_json(tmp_path, [*argv, "--seed", "1"])["coverage"]["labels"]
    for machine in ("partition", "replica"):
        for edge, n in sim["state_machines"][machine].items():
            assert n <= full["state_machines"][machine][edge], edge
    assert sim["state_machines"]["replica"]["OnlineReplica->OfflineReplica"] > 0
    argv = ["--system", "tests.toys:labelled_grid", "--engine", "hypothesis", "--max-examples", "20"]
    hyp = _cli_json(tmp_path, [*argv, "--seed", "1", "--no-database"])["coverage"]
    assert set(hyp["labels"]) == {"axis", "diagonal"} and hyp["labels_never_hit"] == ["axis/never"]
    assert 0 < hyp["labels"]["axis"]["a"] + hyp["labels"]["axis"]["b"] <= 12


@pytest.mark.parametrize(
    ("action", "arrow"),
    [
        ("Crash(0)", ("broker 0", "broker 0", "crashes")),
        ("AdminCreateTopic(1)", ("admin", "ZooKeeper", "create topic 1")),
    ],
)
def test_sequence_arrows(action: str, arrow: tuple[str, str, str]) -> None:
    import model.controller.actions as mc

    assert sequence_arrow(eval(action, vars(mc))) == arrow
    assert sequence_arrow(3) == ("system", "system", "3")


NO_FAULT = ["max_crashes=0", "max_restarts=0", "max_session_expiries=0", "send_update_metadata=false"]


def test_topic_deletion_labels_its_replica_edges_and_znodes() -> None:
    """controller-admin without its restart (606 states; 27,663 with it): the deletion edges of the
    later 2.x replica table and the admin znodes."""
    labels = bfs_labels(["max_restarts=0"], path=str(ROOT / "configs" / "controller-admin.toml"))
    rsm = labels["state_machines"]["replica"]
    for edge in (
        "OfflineReplica->ReplicaDeletionStarted",
        "OfflineReplica->ReplicaDeletionIneligible",
        "ReplicaDeletionStarted->ReplicaDeletionSuccessful",
        "ReplicaDeletionSuccessful->NonExistentReplica",
    ):
        assert rsm[edge] > 0, edge
    assert labels["state_machines"]["partition"]["OfflinePartition->NonExistentPartition"] > 0
    assert labels["zk_writes"]["/admin/delete_topics/0"]["changed"] > 0
    assert labels["zk_writes"]["/brokers/topics/0"]["changed"] > 0


@pytest.mark.slow  # 1.5 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize(
    ("overrides", "strategy", "path"),
    [
        ([*NO_FAULT, "brokers=3", "max_reassignments=1"], "reassign", "/admin/reassign_partitions"),
        ([*NO_FAULT, "brokers=2", "max_controlled_shutdowns=1"], "controlled_shutdown", None),
        (
            [*NO_FAULT, "brokers=2", "max_preferred_elections=1", "assignment=[[1, 0]]"],
            "preferred",
            "/admin/preferred_replica_election",
        ),
    ],
)
def test_elections_are_labelled_by_strategy(overrides: list[str], strategy: str, path: str | None) -> None:
    labels = bfs_labels(overrides)
    assert labels["elections"][strategy]["isr"] > 0
    assert set(labels["elections"]) == {"offline", "new_partition", strategy}
    if path is not None:
        assert labels["zk_writes"][path]["changed"] > 0
