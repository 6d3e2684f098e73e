"""Issue 55, item 1: every violation explains itself. Each safety and liveness property of every
registered model has its own ``explain`` (``invariants/controller_explain.py``,
``invariants/timing_explain.py``); a violation found by a search carries its explanation, which
names an entity of the failing state (a broker, partition, session, znode, task, operation,
key, bucket...); a property without one is explained by the state fields its predicate read.

The fast tests make properties fail with the catalogue's mutants on small configurations; the
slow one goes through every (mutant, configuration, property) triple known to fail."""

from __future__ import annotations

import glob
import importlib
import re
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from explorer.config import load_config
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
