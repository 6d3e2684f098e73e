"""Issue 55, item 1: every violation explains itself. Each safety and liveness property of every
registered model has its own ``explain`` (``invariants/controller_explain.py``,
``invariants/timing_explain.py``); a violation found by a search carries its explanation, which
names an entity of the failing state (a broker, partition, session, znode, task, operation,
key, bucket...); a property without one is explained by the state fields its predicate read.

The fast tests make properties fail with the catalogue's mutants on small configurations; the
slow one goes through every (mutant, configuration, property) triple known to fail. Every other
property is broken by a ``Mistake`` (a catalogue mutant, a variant, or the test-local mistake of
the test that shows it failing), each search checking that property alone; a test walks the
registry and finds every non-witness property of every model broken here."""

from __future__ import annotations

import glob
import importlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from explorer.config import ConfigError, load_config
from explorer.core import always, transition
from explorer.engines.bfs import check_bfs
from explorer.explain import explain_failure, fields_read
from invariants import MODEL_MODULES, get_model

ROOT = Path(__file__).resolve().parents[1]

#: an entity of a failing state named with its number or name
ENTITY = re.compile(
    r"\b(broker \d+|brokers \d|t\d+-\d+|session \d+|task \d+|operation \d+|key \d+|level \d+|taskCount|trigger thread)\b|/[a-z_]+"
)


def _configs(model: str) -> list[Path]:
    return sorted(Path(p) for p in glob.glob(str(ROOT / "configs" / f"{model}-*.toml")))


@pytest.mark.parametrize("model", sorted(MODEL_MODULES))
def test_every_property_that_can_fail_on_a_state_has_its_own_explanation(model: str) -> None:
    """Walk the registry: in every configuration file of every model, each property but the
    witnesses (an unreached witness has no failing state) has a hand-written ``explain``."""
    spec = get_model(model)
    missing = set()
    seen = 0
    for path in _configs(model):
        config = load_config(spec.config_cls, str(path), [])
        for p in spec.properties(config):
            if p.kind.value != "reachable":
                seen += 1
                if p.explain is None:
                    missing.add(p.name)
    assert seen > 0 and missing == set()


def _violations(model: str, config: str, overrides: list[str]) -> list[Any]:
    spec = get_model(model)
    c = load_config(spec.config_cls, str(ROOT / config) if config else None, overrides)
    props = [p for p in spec.properties(c) if p.kind.value != "reachable"]
    r = check_bfs(
        spec.build(c), props, model=model, config=c, keep_going=True, deadlock=False, max_seconds=60
    )
    return r.violations


def _assert_explained(vs: list[Any], expect: set[str]) -> None:
    got = {v.property: v.explanation for v in vs}
    assert expect <= set(got), (expect - set(got), sorted(got))
    for name in expect:
        lines = got[name]
        assert lines and all(line.strip() for line in lines), (name, lines)
        assert ENTITY.search(" ".join(lines)), (name, lines)
        assert not lines[0].startswith("the predicate read"), (name, lines)  # its own words, not the fallback


FAST = [
    # controller-small with one session expiry (each run under a second)
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=failover-keeps-old-epoch"],
     {"context_matches_zookeeper", "controller_converges", "controller_znode_valid",
      "metadata_cache_matches_zookeeper", "replica_states_match_liveness"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=leader-outside-isr"],
     {"isr_nonempty_subset", "leader_in_isr"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=no-epoch-bump"],
     {"controller_epoch_won_once", "one_controller_per_epoch"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=offline-election-ignores-liveness"],
     {"elected_leader_is_live", "no_dead_broker_in_written_isr"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=broker-epoch-check-le"],
     {"broker_views_match_zookeeper", "brokers_record_accepted_epochs"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=resign-keeps-channels"],
     {"resigned_controller_sends_nothing"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=skip-replica-init"],
     {"valid_transitions"}),
    # the timing models' small configurations
    ("timing-wheel", "configs/timing-wheel-small.toml", ["mutant=flush_keeps_entries"],
     {"no_double_fire", "no_task_lost", "bucket_ranges"}),
    ("timing-wheel", "configs/timing-wheel-small.toml", ["mutant=poll_before_expiry"],
     {"no_early_fire", "reference_timer_order"}),
    ("timing-wheel", "configs/timing-wheel-small.toml", ["mutant=add_accepts_cancelled"], {"cancel_is_final"}),
    ("timing-wheel", "configs/timing-wheel-small.toml", ["mutant=delay_off_by_one"], {"bounded_lateness"}),
    ("simple-timing-wheel", "configs/simple-timing-wheel-small.toml", ["mutant=early_cycle"],
     {"no_early_fire", "no_task_lost"}),
    ("simple-timing-wheel", "configs/simple-timing-wheel-small.toml", ["mutant=skip_count"],
     {"task_count_consistent", "graceful_stop_waits"}),
    ("purgatory", "configs/purgatory-small.toml", ["mutant=no_cas"],
     {"on_complete_at_most_once", "every_op_completed_once_at_end"}),
    ("purgatory", "configs/purgatory-small.toml", ["mutant=no_retry"], {"no_lost_wakeup"}),
    ("purgatory", "configs/purgatory-small.toml", ["mutant=expire_unchecked"], {"on_expiration_only_if_expiry_won"}),
    ("purgatory", "configs/purgatory-small.toml", ["mutant=no_remove"], {"completed_removed_by_next_traversal"}),
]  # fmt: skip


@pytest.mark.slow  # 4.9 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize(("model", "config", "overrides", "expect"), FAST)
def test_a_violation_found_by_a_search_names_the_entity_at_fault(
    model: str, config: str, overrides: list[str], expect: set[str]
) -> None:
    _assert_explained(_violations(model, config, overrides), expect)


SLOW = [
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=epoch-reset"],
     {"controller_epoch_monotonic"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=resign-keeps-context"],
     {"context_only_while_active"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=isr-update-unconditional"],
     {"isr_order_kept", "leader_elected_from_isr"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=no-leader-epoch-bump"],
     {"leader_epoch_monotonic"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=dead-broker-not-removed"],
     {"no_leaderless_partition_when_quiet"}),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1", "mutant=no-reelect-on-controller-gone"],
     {"zookeeper_watches_fire"}),
    ("controller", "configs/controller-small.toml",
     ["max_session_expiries=1", "max_restarts=1", "max_records=1", "mutant=no-controller-epoch-check"],
     {"brokers_reject_stale_controller_epoch"}),
    # the release entry controller-admin-shutdowns-selectors-0.8 (seed 000's selectors, 1,934 states)
    ("controller", "", ["brokers=2", "replication_factor=2", "max_crashes=0", "max_restarts=0",
                        "max_session_expiries=0", "send_update_metadata=false", "max_controlled_shutdowns=2",
                        "leader_selectors=0.8"], {"elected_leader_is_live"}),
    ("simple-timing-wheel", "configs/simple-timing-wheel-ref.toml", [],
     {"no_task_lost", "task_count_consistent", "no_early_fire", "lateness_bounded", "graceful_stop_waits",
      "stop_terminates_trigger"}),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("model", "config", "overrides", "expect"), SLOW)
def test_more_violations_name_the_entity_at_fault(
    model: str, config: str, overrides: list[str], expect: set[str]
) -> None:
    _assert_explained(_violations(model, config, overrides), expect)


# -- every property of every model made to fail ----------------------------------------------------

#: overrides that turn on every optional property of the controller (the admin workflows, records,
#: liveness...): with each configuration file they give the registry's every property
EVERYTHING = {
    "controller": [
        "liveness=true", "max_topic_deletions=1", "max_reassignments=1", "max_preferred_elections=1",
        "auto_leader_rebalance=true", "max_controlled_shutdowns=1", "max_unclean_enables=1",
        "max_admin_unclean_elections=1", "max_records=1", "topics_created_later=1", "partitions_added_later=1",
        "offline_replicas_on_startup=true",
    ],
}  # fmt: skip


def _registry() -> dict[str, set[str]]:
    """Each model's non-witness properties, over its configuration files, the defaults and the
    overrides of ``EVERYTHING``."""
    out: dict[str, set[str]] = {}
    for model in sorted(MODEL_MODULES):
        spec = get_model(model)
        names = out.setdefault(model, set())
        for path in [None, *_configs(model)]:
            for extra in ([], EVERYTHING.get(model, [])):
                try:
                    config = load_config(spec.config_cls, str(path) if path else None, extra)
                except ConfigError:  # an override this file's bounds reject: the plain file covers it
                    continue
                names |= {p.name for p in spec.properties(config) if p.kind.value != "reachable"}
    return out


class Mistake(NamedTuple):
    """One property made to fail: the configuration, and where no catalogue mutant breaks it a
    test-local mistake (``system`` builds the system from the configuration; ``patch`` changes
    a function for the test's duration)."""

    model: str
    config: str
    overrides: list[str]
    prop: str
    system: Callable[[Any], Any] | None = None
    patch: Callable[[pytest.MonkeyPatch], None] | None = None


class _Plus:
    """The system with the extra steps ``extra(s)`` (``(action, state)`` pairs) from each state."""

    def __init__(self, sys: Any, extra: Callable[[Any], list[tuple[Any, Any]]]) -> None:
        self.sys = sys
        self.extra = extra

    def __getattr__(self, name: str) -> object:
        return getattr(self.sys, name)

    def successors(self, s: Any) -> list[tuple[Any, Any]]:
        return [*self.sys.successors(s), *self.extra(s)]

    def successors_labelled(self, s: Any) -> Iterator[tuple[Any, Any, tuple]]:
        yield from self.sys.successors_labelled(s)
        for a, t in self.extra(s):
            yield a, t, ()


def _stops_before_its_answer(sys: Any) -> Any:
    """A broker that stops (ShutdownComplete) while the controller it asked still has its
    ControlledShutdown queued (issue 35's measure: ``system.py:344`` int-1)."""

    def early(s: Any) -> list[tuple[Any, Any]]:
        return [
            sys.brokers.shutdown_complete(s, b)
            for b, n in enumerate(s.nodes)
            if n.alive and n.cs >= 3 and s.nodes[n.cs - 3].alive and s.nodes[n.cs - 3].ctx is not None
        ]

    return _Plus(sys, early)


def _acts_on_single_replica_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    """``doControlledShutdown`` acting on every partition of the broker (the measure's survivor
    ``election.py:645``: ``len(assignment) <= 1`` dropped)."""
    import model.controller.admin as admin

    real = admin.controlled_shutdown_partition_action

    def acts_on_all(assignment: tuple[int, ...], *args: object) -> object:
        return real(assignment * 2 if len(assignment) == 1 else assignment, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(admin, "controlled_shutdown_partition_action", acts_on_all)


def _controller_mistakes() -> list[Mistake]:
    """The controller's properties FAST and SLOW leave unbroken, each with the smallest failing
    case the other tests know (most under a second)."""
    from invariants.mutants.controller import BrokerAcceptsEqualLeaderEpoch, NoLeaderEpochBump, build
    from model.controller import ControllerSystem
    from tests import test_controller_fidelity as fid
    from tests import test_controller_replication as rep
    from tests import test_offline_partitions as off
    from tests.test_broker_memory import ForgetsBrokerEpoch

    small, admin = "configs/controller-small.toml", "configs/controller-admin.toml"
    two = ["brokers=2", "replication_factor=2", "max_crashes=1", "max_restarts=1", "max_session_expiries=1"]
    no_fault = ["max_crashes=0", "max_restarts=0", "max_session_expiries=0", "send_update_metadata=false"]
    reassign = [*no_fault, "brokers=3", "topics=1", "replication_factor=2", "max_reassignments=1"]
    shutdown = [*no_fault, "brokers=2", "topics=1", "replication_factor=2", "max_controlled_shutdowns=1"]
    cs = ["max_crashes=0", "max_restarts=0", "max_unclean_enables=0", "liveness=false"]
    expiry = ["liveness=true", "max_session_expiries=1"]
    leader_crash = [
        "brokers=3",
        "topics=1",
        "replication_factor=2",
        "assignment=[[1, 2]]",
        "max_crashes=1",
        "max_restarts=0",
        "max_session_expiries=0",
        "send_update_metadata=false",
        "liveness=true",
    ]
    rejoin = [
        "brokers=3",
        "replication_factor=3",
        "max_crashes=1",
        "max_restarts=1",
        "max_session_expiries=0",
        "send_update_metadata=false",
    ]
    single = [
        "brokers=2",
        "topics=2",
        "assignment=[[0, 1], [0]]",
        "max_crashes=0",
        "max_restarts=0",
        "max_session_expiries=0",
        "send_update_metadata=false",
        "max_controlled_shutdowns=1",
    ]
    C = "controller"
    return [
        # variants that bring back an older design (tests/test_controller.py)
        Mistake(C, "", [*two, "broker_epoch=false"], "brokers_reject_stale_broker_epoch"),
        Mistake(C, "", [*two, "zk_write_fencing=partition-version", "session_expiry_handling=queued"], "zk_writes_fenced"),
        Mistake(C, "", [*two, "unclean_leader_election=true", "max_records=1"], "no_acked_record_lost"),
        Mistake(C, "", [*two, "elector=legacy"], "controller_znode_removed_by_owner"),
        Mistake(C, "", [*two, "session_expiry_handling=queued", "mutant=ignores-newer-controller-state"],
                "no_write_over_newer_controller_state"),
        # the admin workflows' mutants (tests/test_controller_admin.py, test_controller_observed.py)
        Mistake(C, admin, ["mutant=delete-keeps-partition-state"], "deleted_topic_gone"),
        Mistake(C, "", [*reassign, "mutant=reassign-keeps-old-replica"], "reassignment_complete"),
        Mistake(C, "", [*shutdown, "mutant=cs-elects-shutting-down"], "controlled_shutdown_never_elects_shutting_down"),
        Mistake(C, "configs/controller-admin-preferred.toml", ["mutant=preferred-any-isr-replica"],
                "preferred_election_elects_preferred"),
        Mistake(C, "configs/controller-admin-preferred.toml", ["mutant=preferred-znode-kept"],
                "preferred_election_znode_removed"),
        Mistake(C, "configs/controller-admin-rebalance.toml", ["mutant=rebalance-counts-deleted-topics"],
                "auto_rebalance_follows_imbalance"),
        Mistake(C, "configs/controller-admin-shutdown.toml", [*cs, "mutant=cs-isr-keeps-shutting-down"],
                "controlled_shutdown_isr_excludes_shutting_down"),
        Mistake(C, "configs/controller-admin-shutdown.toml", [*cs, "mutant=cs-followers-stay-in-isr"],
                "controlled_shutdown_answered_after_followers_offline"),
        Mistake(C, "configs/controller-admin-shutdown.toml", cs, "controlled_shutdown_completes_after_answer",
                system=lambda c: _stops_before_its_answer(build(c))),
        Mistake(C, "", single, "controlled_shutdown_skips_single_replica_partitions",
                patch=_acts_on_single_replica_partitions),
        Mistake(C, "configs/controller-admin-reassign.toml",
                ["max_topic_deletions=1", "max_crashes=0", "liveness=false", "mutant=deletion-starts-ineligible-topic"],
                "no_replica_deletion_while_reassigning"),
        Mistake(C, admin, ["topics_created_later=1", "liveness=false", "mutant=topic-change-resurrects-deleted"],
                "no_request_for_a_deleted_topic"),
        Mistake(C, "", fid.UNCLEAN_SHUTDOWN, "admin_unclean_election_elects_leaderless",
                patch=lambda mp: fid._admin_unclean_elects(mp, (0, 1))),
        Mistake(C, admin, fid.STALE_DELETION, "stop_replica_response_answers_request",
                patch=fid._response_names_partition_0),
        # liveness: a lasso each (tests/test_controller_admin.py, test_controller_liveness.py)
        Mistake(C, "", [*leader_crash, "mutant=no-election-on-broker-failure"], "leader_eventually_elected"),
        Mistake(C, admin, ["max_crashes=0", "mutant=no-resume-after-replica-deletion"], "deletion_eventually_completes"),
        Mistake(C, admin, ["max_restarts=0", "mutant=no-reelect-on-controller-gone"], "controller_eventually_elected"),
        Mistake(C, "", [*reassign, "liveness=true", "mutant=no-reassign-isr-watch"], "reassignment_eventually_completes"),
        Mistake(C, small, [*expiry, "mutant=ctl-watch-not-rearmed"], "dead_leader_eventually_replaced"),
        Mistake(C, small, [*expiry, "mutant=ctl-watch-not-rearmed"], "one_controller_eventually_current"),
        Mistake(C, small, [*expiry, "mutant=ctl-watch-not-rearmed"], "isr_change_eventually_propagated"),
        Mistake(C, small, ["liveness=true", "max_restarts=1", "mutant=startup-skips-online-replicas"],
                "registered_broker_eventually_told"),
        Mistake(C, small, [*expiry, "mutant=expiry-no-reregister"], "expired_session_eventually_reregistered"),
        Mistake(C, small, [*expiry, "mutant=inactive-event-requeued"], "event_queue_eventually_drains"),
        Mistake(C, admin, ["max_crashes=0", "mutant=delete-keeps-topic-queued"], "marked_topic_eventually_deleted"),
        Mistake(C, "", [*reassign, "liveness=true", "mutant=no-reassign-isr-watch"], "reassignment_eventually_finished"),
        # the bug zoo's KAFKA-3143: a failover leaves a dead last ISR member leader (6,205 states)
        Mistake(C, small, ["max_session_expiries=1", "bug=KAFKA-3143"], "no_dead_leader_when_quiet"),
        # the bug zoo's KAFKA-1382: a leader's retried ISR write met BadVersion (18 states)
        Mistake(C, small, [*no_fault, "max_records=1", "max_zk_connection_losses=1", "bug=KAFKA-1382"],
                "leader_isr_matches_zookeeper"),
        # the bug zoo's KAFKA-4214: a resumed reassignment failed half-done (about 1,000 states)
        Mistake(C, "configs/controller-admin-reassign.toml",
                ["brokers=2", "replication_factor=1", "assignment=[[1]]", "reassignment=[[0]]", "liveness=false",
                 "bug=KAFKA-4214"], "reassignment_never_abandoned_midway"),
        # test-local mistakes of the fidelity, memory, replication and offline-partition tests
        Mistake(C, small, [], "active_controller_id_from_zookeeper",
                system=lambda c: ControllerSystem(c, controller=fid._ReadsTheWrongController)),
        Mistake(C, small, ["max_session_expiries=1"], "new_session_knows_no_controller",
                system=lambda c: ControllerSystem(c, brokers=fid._ExpiryBelievesBroker0)),
        Mistake(C, "", rejoin, "dead_broker_holds_no_process_memory",
                system=lambda c: fid._DeadBrokerStartsShutdown(build(c))),
        Mistake(C, small, ["max_restarts=1", "max_crashes=2"], "faults_within_budget",
                system=lambda c: fid._UncountedRestart(build(c))),
        Mistake(C, small, ["unclean_leader_election=true", "max_records=1"], "witnesses_follow_their_requests",
                system=lambda c: ControllerSystem(c, partition_state_machine=fid._StaticUncleanCountedDynamic)),
        Mistake(C, small, ["max_records=1"], "leader_hw_follows_isr",
                system=lambda c: rep._Wrong(build(c), rep._append_without_hw)),
        Mistake(C, small, rep.RECORDS_RESTART, "follower_log_is_leader_prefix",
                system=lambda c: rep._Wrong(build(c), rep._fetch_keeping_the_head)),
        Mistake(C, small, ["max_session_expiries=1", "max_crashes=0"], "broker_epoch_matches_registration",
                system=lambda c: ControllerSystem(c, zookeeper=ForgetsBrokerEpoch)),
        Mistake(C, small, [], "partition_offline_only_without_live_leader",
                system=lambda c: ControllerSystem(c, broker_lifecycle=off.EveryLeaderLost)),
        Mistake(C, admin, ["liveness=false"], "no_election_for_a_topic_being_deleted",
                system=lambda c: ControllerSystem(c, partition_state_machine=off.ElectsDeletedTopics)),
        Mistake(C, "", off.SHUTDOWN_SMALL, "shutting_down_brokers_are_live",
                system=lambda c: ControllerSystem(c, broker_lifecycle=off.KeepsShuttingDown)),
        # two catalogue mistakes at once: the new leader keeps the old leader epoch, and the
        # deposed leader, alive after its session expired, still leads that epoch
        Mistake(C, small, ["max_session_expiries=1"], "one_leader_per_epoch",
                system=lambda c: ControllerSystem(
                    c, partition_state_machine=NoLeaderEpochBump, replica_manager=BrokerAcceptsEqualLeaderEpoch)),
    ]  # fmt: skip


#: the timing models' properties FAST and SLOW leave unbroken (tests/test_simple_timing_wheel.py,
#: tests/test_timing_wheel.py): under 0.2 CPU-s each
TIMING_MISTAKES = [
    Mistake("simple-timing-wheel", "configs/simple-timing-wheel-small.toml", ["mutant=double_fire"], "no_double_fire"),
    Mistake("simple-timing-wheel", "", ["delays=[5]", "max_ticks=4", "mutant=late_bucket"], "schedule_consistent"),
    Mistake("timing-wheel", "", ["entries=3", "wheel_size=2", "delays=[0,1,3]", "mutant=overflow_start_zero"],
            "overflow_wheel_params"),
]  # fmt: skip

#: the few broken in the default run (each search a few dozen states)
FAST_MISTAKES = {
    "new_session_knows_no_controller",
    "broker_epoch_matches_registration",
    "schedule_consistent",
    "leader_isr_matches_zookeeper",
}


def _mistakes() -> list[Mistake]:
    return [*_controller_mistakes(), *TIMING_MISTAKES]


def _explained(m: Mistake, monkeypatch: pytest.MonkeyPatch) -> None:
    """Search ``m``'s configuration for ``m.prop`` alone (stopping at its first violation) and
    check the violation's explanation."""
    spec = get_model(m.model)
    c = load_config(spec.config_cls, str(ROOT / m.config) if m.config else None, m.overrides)
    props = [p for p in spec.properties(c) if p.name == m.prop]
    assert props, m.prop
    if m.patch is not None:
        m.patch(monkeypatch)
    system = m.system(c) if m.system is not None else spec.build(c)
    r = check_bfs(system, props, model=m.model, config=c, deadlock=False, max_seconds=60)
    _assert_explained(r.violations, {m.prop})


def _params(fast: bool) -> list[Any]:
    return [pytest.param(m, id=m.prop) for m in _mistakes() if (m.prop in FAST_MISTAKES) == fast]


@pytest.mark.parametrize("m", _params(fast=True))
def test_a_test_local_mistake_is_explained(m: Mistake, monkeypatch: pytest.MonkeyPatch) -> None:
    _explained(m, monkeypatch)


@pytest.mark.slow  # 0.1 to 2 CPU-s each, about 15 in all
@pytest.mark.parametrize("m", _params(fast=False))
def test_every_other_property_fails_with_an_explanation(m: Mistake, monkeypatch: pytest.MonkeyPatch) -> None:
    _explained(m, monkeypatch)


def test_every_property_of_every_model_is_made_to_fail_here() -> None:
    """Walk the registry: every non-witness property of every model is broken by FAST, SLOW or
    a mistake above, and none is broken twice among the mistakes."""
    broken: dict[str, set[str]] = {}
    for model, _, _, expect in [*FAST, *SLOW]:
        broken.setdefault(model, set()).update(expect)
    mistakes = _mistakes()
    assert len({(m.model, m.prop) for m in mistakes}) == len(mistakes)
    for m in mistakes:
        broken.setdefault(m.model, set()).add(m.prop)
    registry = _registry()
    assert {model: names - broken.get(model, set()) for model, names in registry.items()} == {
        model: set() for model in registry
    }


class Tank(NamedTuple):
    level: int
    limit: int


class Farm(NamedTuple):
    tanks: tuple[Tank, ...]
    day: int


def test_a_property_without_an_explanation_gets_the_fields_its_predicate_read() -> None:
    p = always("within", lambda s: all(t.level <= t.limit for t in s.tanks), "every tank within its limit")
    s = Farm((Tank(1, 5), Tank(7, 5)), 3)
    lines = explain_failure(p, (s,))
    assert lines == [
        "the predicate read: tanks[0].level = 1, tanks[0].limit = 5, tanks[1].level = 7, tanks[1].limit = 5"
    ]
    step = transition("days", lambda s, a, t: t.day >= s.day, "days never go back")
    assert explain_failure(step, (s, "rewind", s._replace(day=2))) == [
        "the step: rewind",
        "the predicate read: after: day = 2, before: day = 3",
    ]


def test_an_explanation_that_raises_falls_back_and_says_so() -> None:
    p = always("within", lambda s: s.day < 3, "early", explain=lambda s: 1 / 0)
    lines = explain_failure(p, (Farm((), 3),))
    assert lines == ["(its explanation failed: ZeroDivisionError: division by zero)"]


def test_a_predicate_that_cannot_be_watched_shows_the_state() -> None:
    # type() of a viewed record is not the record's class: the verdict differs, so no reads are claimed
    lines = fields_read(lambda s: type(s) is not Farm, (Farm((), 3),))
    assert lines == ["the state: Farm(tanks=(), day=3)"]


def test_a_user_model_violation_carries_the_fields_read_in_its_json(tmp_path: Path) -> None:
    import json

    from explorer.cli import main

    out = tmp_path / "r.json"
    code = main(["check", "--system", "tests.toys:grid", "--set", "limit=3", "--json", str(out), "--quiet"])
    doc = json.loads(out.read_text())
    assert code == 1 and doc["violations"]
    assert all(v["explanation"] for v in doc["violations"])
    assert any("the predicate read:" in v["explanation"][0] for v in doc["violations"])


def test_the_explanation_modules_cover_every_model() -> None:
    for model in MODEL_MODULES:
        importlib.import_module(MODEL_MODULES[model])  # each wires its explanations in properties()
