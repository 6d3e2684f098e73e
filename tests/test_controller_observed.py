"""The probe of plausible mistakes' properties (``invariants/controller_observed.py``): each holds
on the model and fails, on the smallest configuration that shows it, once its mistake is made
(the mistake is a mutant of the catalogue, ``invariants/mutants/controller.py``)."""

from __future__ import annotations

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from invariants.controller_observed import observed_properties
from invariants.mutants.controller import ControllerConfig, build

# controller-admin-shutdown without faults: broker 0 (controller and leader) shuts down
SHUTDOWN = [
    "max_crashes=0",
    "max_restarts=0",
    "max_unclean_enables=0",
    "liveness=false",
]


def _run(path: str, overrides: list[str], name: str, mutant: str) -> tuple[int, list[tuple[str, int]], int]:
    """The distinct states of the model and the violations (property, steps) with ``mutant``."""
    c = load_config(ControllerConfig, path, overrides)
    props = [p for p in observed_properties(c, build(c)) if p.name == name]
    assert len(props) == 1
    ok = check_bfs(build(c), props, model="controller", config=c)
    assert ok.exit_reason.value == "complete" and ok.violations == []
    bad_c = load_config(ControllerConfig, path, [*overrides, f"mutant={mutant}"])
    bad = check_bfs(build(bad_c), props, model="controller", config=bad_c)
    return ok.distinct_states, [(v.property, len(v.trace) - 1) for v in bad.violations], bad.distinct_states


def test_controlled_shutdown_isr_property_catches_shutting_down_broker_kept() -> None:
    """``controlled_shutdown_isr_excludes_shutting_down`` holds when broker 0 shuts down, and
    fails at the controlled-shutdown election's write once the new ISR keeps broker 0."""
    states, violations, _ = _run(
        "configs/controller-admin-shutdown.toml",
        SHUTDOWN,
        "controlled_shutdown_isr_excludes_shutting_down",
        "cs-isr-keeps-shutting-down",
    )
    assert (states, violations) == (321, [("controlled_shutdown_isr_excludes_shutting_down", 4)])


# the release entry controller-topic-creation-replicated: topic 1 (two replicas) created after start
CREATION = ["topics=2", "topics_created_later=1", "assignment=[[0, 1], [0, 1]]"]
CREATION_STATES = 16783


@pytest.mark.parametrize(
    ("mutant", "killers"),
    [
        ("new-partition-isr-all-assigned", ["no_dead_broker_in_written_isr"]),
        ("new-partition-dead-leader", ["elected_leader_is_live", "leader_in_isr"]),
    ],
)
def test_new_partition_with_a_dead_replica_mistakes_fail(mutant: str, killers: list[str]) -> None:
    """A new partition created while one of its two replicas is down: its ISR holding the dead
    replica, or its leader the dead first replica, fails in 8 steps (broker 0 crashes, its
    session expires, broker 1 takes over, the topic is created and its state written)."""
    c = load_config(ControllerConfig, "configs/controller-small.toml", [*CREATION, f"mutant={mutant}"])
    bad = check_bfs(build(c), spec.properties(c), model="controller", config=c)
    assert [(v.property, len(v.trace) - 1) for v in bad.violations] == [(k, 8) for k in killers]


@pytest.mark.slow
def test_replicated_topic_creation_entry_holds_every_property() -> None:
    """The release entry ``controller-topic-creation-replicated`` holds every property in its
    pinned number of states (about 3 s)."""
    c = load_config(ControllerConfig, "configs/controller-small.toml", CREATION)
    ok = check_bfs(build(c), spec.properties(c), model="controller", config=c)
    assert ok.exit_reason.value == "complete" and ok.violations == []
    assert ok.distinct_states == CREATION_STATES


# the release entry controller-admin-create-after-delete: topic 0 may be deleted, topic 1 created
CREATE_AFTER_DELETE = ["topics_created_later=1", "liveness=false"]
CREATE_AFTER_DELETE_STATES = 84603


@pytest.mark.slow
def test_create_after_delete_entry_holds_and_catches_a_resurrected_topic() -> None:
    """The release entry ``controller-admin-create-after-delete`` holds every property in its
    pinned number of states, and a TopicChange that takes the deleted topic for a new one fails
    in 16 steps: the controller sends requests for the deleted topic's partition (about 15 s)."""
    c = load_config(ControllerConfig, "configs/controller-admin.toml", CREATE_AFTER_DELETE)
    ok = check_bfs(build(c), spec.properties(c), model="controller", config=c)
    assert ok.exit_reason.value == "complete" and ok.violations == []
    assert ok.distinct_states == CREATE_AFTER_DELETE_STATES
    bad_c = load_config(
        ControllerConfig,
        "configs/controller-admin.toml",
        [*CREATE_AFTER_DELETE, "mutant=topic-change-resurrects-deleted"],
    )
    bad = check_bfs(build(bad_c), spec.properties(bad_c), model="controller", config=bad_c, keep_going=True)
    assert {(v.property, len(v.trace) - 1) for v in bad.violations} >= {
        ("no_request_for_a_deleted_topic", 16)
    }


# the release entry controller-admin-reassign-delete: partition 0 reassigned to [1, 2] and its topic deleted
REASSIGN_DELETE = ["max_topic_deletions=1", "max_crashes=0", "liveness=false"]
REASSIGN_DELETE_STATES = 66822


def test_deletion_during_reassignment_property_catches_an_ineligible_topic_started() -> None:
    """``no_replica_deletion_while_reassigning`` fails in 15 steps once resumeDeletions starts a
    topic marked ineligible: the deletion's StopReplica reaches the replicas under reassignment."""
    c = load_config(
        ControllerConfig,
        "configs/controller-admin-reassign.toml",
        [*REASSIGN_DELETE, "mutant=deletion-starts-ineligible-topic"],
    )
    props = [p for p in observed_properties(c, build(c)) if p.name == "no_replica_deletion_while_reassigning"]
    assert len(props) == 1
    bad = check_bfs(build(c), props, model="controller", config=c)
    assert [(v.property, len(v.trace) - 1) for v in bad.violations] == [
        ("no_replica_deletion_while_reassigning", 15)
    ]


@pytest.mark.slow
def test_reassign_delete_entry_holds_every_property() -> None:
    """The release entry ``controller-admin-reassign-delete`` holds every property in its pinned
    number of states (about 8 s)."""
    c = load_config(ControllerConfig, "configs/controller-admin-reassign.toml", REASSIGN_DELETE)
    props = spec.properties(c)
    assert "no_replica_deletion_while_reassigning" in [p.name for p in props]
    ok = check_bfs(build(c), props, model="controller", config=c)
    assert ok.exit_reason.value == "complete" and ok.violations == []
    assert ok.distinct_states == REASSIGN_DELETE_STATES


def test_controlled_shutdown_answer_property_catches_followers_left_in_the_isr() -> None:
    """``controlled_shutdown_answered_after_followers_offline`` holds when broker 1, a follower,
    shuts down, and fails in 2 steps (its request, the controller's answer) once the controlled
    shutdown leaves the replicas it follows in the ISR. Answering before moving them (the probe's
    shutdown-respond-first) fails the same way."""
    states, violations, _ = _run(
        "configs/controller-admin-shutdown.toml",
        SHUTDOWN,
        "controlled_shutdown_answered_after_followers_offline",
        "cs-followers-stay-in-isr",
    )
    assert (states, violations) == (321, [("controlled_shutdown_answered_after_followers_offline", 2)])


def test_elected_leader_is_live_catches_a_dead_replica_elected() -> None:
    """``elected_leader_is_live`` holds on ``controller-small`` and fails once the offline
    election takes every assigned replica as live: the controller hands the partition to the ISR
    member it has just seen die."""
    states, violations, _ = _run(
        "configs/controller-small.toml", [], "elected_leader_is_live", "offline-election-ignores-liveness"
    )
    assert (states, violations) == (74, [("elected_leader_is_live", 8)])


# the release entry controller-admin-reassign-unnoticed-death: [0, 1] -> [1] on two brokers, two
# crashes and a restart; the unmutated model violates four properties there, as Kafka 2.x does
UNNOTICED_DEATH = [
    "brokers=2",
    "reassignment=[[1]]",
    "max_crashes=2",
    "max_restarts=1",
    "max_controller_epoch=3",
    "liveness=false",
]
UNNOTICED_DEATH_STATES = 164578  # 159,113 before KAFKA-4214's fix, 245,479 before the registration fix


@pytest.mark.slow
def test_reassignment_election_of_a_dead_target_fails_there() -> None:
    """On the entry ``controller-admin-reassign-unnoticed-death`` the reassignment election that
    ignores liveness (issue 35's probe: ``reassign-ignores-liveness``) elects the dead target
    (``elected_leader_is_live``, 14 steps): since KAFKA-4214's fix (issue 58) a new controller
    resumes the reassignment while its target is dead, reading an ISR that still holds it (the
    seeds' startup). Before, 0.10.0's refusal hid that path, and only a restarted broker applying
    a LeaderAndIsr before it registered (``serve_before_registration``, not Kafka 2.x) reached
    the election (26 steps), so the mutant survived the entry."""
    states, violations, _ = _run(
        "configs/controller-admin-reassign.toml",
        UNNOTICED_DEATH,
        "elected_leader_is_live",
        "reassign-ignores-liveness",
    )
    assert (states, violations) == (UNNOTICED_DEATH_STATES, [("elected_leader_is_live", 14)])


def test_a_broker_stopping_before_its_answer_fails_completes_after_answer() -> None:
    """``controlled_shutdown_completes_after_answer`` holds on ``controller-admin-shutdown`` (the
    release runs it) and fails on a ShutdownComplete taken right after the request, while the
    controller still has it queued, which the model does not enable there (issue 35's measure:
    system.py:344 int-1 at 907ad5d made a broker asking controller 0 count itself answered)."""
    from invariants.controller_observed import controlled_shutdown_completes_after_answer as prop

    c = load_config(ControllerConfig, "configs/controller-admin-shutdown.toml", SHUTDOWN)
    system = build(c)
    s = system.init_states()[0]
    a, t = next((a, t) for a, t in system.successors(s) if type(a).__name__ == "ControlledShutdown")
    assert not any(type(x).__name__ == "ShutdownComplete" for x, _ in system.successors(t))
    stop, u = system.brokers.shutdown_complete(t, a.broker)
    assert type(stop).__name__ == "ShutdownComplete" and prop(t, stop, u) is False


# the release entries controller-admin-shutdowns and controller-admin-shutdowns-selectors-0.8: two
# brokers, two controlled shutdowns, the controller's first
SHUTDOWNS = [
    "brokers=2",
    "replication_factor=2",
    "max_crashes=0",
    "max_restarts=0",
    "max_session_expiries=0",
    "send_update_metadata=false",
    "max_controlled_shutdowns=2",
    "liveness=true",
]


@pytest.mark.slow  # 0.9 CPU-s in a loaded default run (2026-11-29)
def test_two_shutdowns_part_the_0_8_and_2x_controlled_shutdown_selectors() -> None:
    """After the first controller's controlled shutdown, the broker rejoins its partition's ISR by
    fetching and then stops; the new controller, which read it dead at failover, shuts down too.
    Kafka 2.x's strategy picks only a live ISR member and elects nobody (1,759 states, every
    property holds); seed 000's ``ControlledShutdownLeaderSelector`` takes ``newIsr.headOption``
    and hands the partition to the stopped broker: ``elected_leader_is_live`` fails in 18 steps.
    The 907ad5d measure's survivor ``state_machines.py:154`` (0.8 configurations running the 2.x
    strategies) gives the 2.x verdict on the 0.8 entry and so fails its expected violation."""
    props = spec.properties
    runs = {}
    for sel in ("2.x", "0.8"):
        c = load_config(ControllerConfig, None, [*SHUTDOWNS, f"leader_selectors={sel}"])
        r = check_bfs(build(c), props(c), model="controller", config=c, keep_going=True)
        runs[sel] = (r.distinct_states, [(v.property, len(v.trace) - 1) for v in r.violations])
    assert runs == {"2.x": (1759, []), "0.8": (1771, [("elected_leader_is_live", 18)])}


@pytest.mark.slow  # 4.2 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("faults", [0, 1])
def test_a_controlled_shutdown_acting_on_a_single_replica_partition_fails_skips_single_replica(
    monkeypatch: pytest.MonkeyPatch, faults: int
) -> None:
    """``controlled_shutdown_skips_single_replica_partitions`` holds where broker 0 shuts down
    holding topic 1's only replica next to topic 0's two (with a crash and a restart: the release
    entry ``controller-admin-shutdown-single-replica``) and fails in 2 steps once
    ``doControlledShutdown`` acts on every partition of the broker (the 907ad5d measure's survivor
    ``election.py:645`` or-drop#0: ``len(assignment) <= 1`` dropped)."""
    import model.controller.admin as admin

    c = load_config(
        ControllerConfig,
        None,
        [
            "brokers=2", "topics=2", "assignment=[[0, 1], [0]]", f"max_crashes={faults}", f"max_restarts={faults}",
            "max_session_expiries=0", "send_update_metadata=false", "max_controlled_shutdowns=1",
        ],
    )  # fmt: skip
    props = [
        p
        for p in observed_properties(c, build(c))
        if p.name == "controlled_shutdown_skips_single_replica_partitions"
    ]
    assert len(props) == 1
    if faults:  # the release entry: about 3 s
        ok = check_bfs(build(c), props, model="controller", config=c)
        assert (ok.exit_reason.value, ok.violations, ok.distinct_states) == ("complete", [], 57371)
    real = admin.controlled_shutdown_partition_action

    def acts_on_all(assignment: tuple[int, ...], *args: object) -> object:
        return real(assignment * 2 if len(assignment) == 1 else assignment, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(admin, "controlled_shutdown_partition_action", acts_on_all)
    bad = check_bfs(build(c), props, model="controller", config=c)
    assert [(v.property, len(v.trace) - 1) for v in bad.violations] == [
        ("controlled_shutdown_skips_single_replica_partitions", 2)
    ]
