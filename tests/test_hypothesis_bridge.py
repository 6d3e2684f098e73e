"""The Hypothesis bridge: any TransitionSystem as a RuleBasedStateMachine, shrunk traces,
the example database, and every registered model under the quick profile."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

import invariants
from explorer.config import load_config
from explorer.core import ExitReason, transition
from explorer.engines.hypo import PROFILES, PropertyFailure, check_hypothesis, database_key, state_machine_for
from explorer.tracefile import replay_steps
from tests.toys import Grid

ROOT = Path(__file__).resolve().parents[1]


def test_profiles_are_registered() -> None:
    quick, thorough = settings.get_profile("quick"), settings.get_profile("thorough")
    assert quick.max_examples == PROFILES["quick"]["max_examples"] < thorough.max_examples
    assert quick.stateful_step_count < thorough.stateful_step_count
    assert quick.deadline is None and thorough.deadline is None


@pytest.mark.slow  # 2.2 CPU-s in a loaded default run (2026-11-29)
def test_violation_is_shrunk_to_the_shortest_trace_and_replays() -> None:
    g = Grid(6, limit=4)
    r = check_hypothesis(g, g.properties(), seed=0, database=False)
    assert r.engine == "hypothesis" and r.exit_reason is ExitReason.VIOLATION and r.exit_code == 1
    (v,) = r.violations
    assert v.property == "sum_below_limit" and v.length == 4
    states = replay_steps(g, [asdict(s) for s in v.trace])
    assert sum(states[-1]) == 4
    assert "kafka-mc's shrinker (ddmin, bfs, Hypothesis over the steps) took it to 4" in r.notes[1]
    # asked for, Hypothesis shrinks the state machine's run itself (towards the first rule)
    native = check_hypothesis(g, g.properties(), seed=0, database=False, phases=list(Phase))
    assert native.violations[0].length == 4 and "Hypothesis shrank the failing run" in native.notes[1]


def test_one_rule_per_action_kind_with_its_parameters_drawn() -> None:
    from explorer.engines.hypo import state_machine_for

    spec = invariants.get_model("controller")
    config = load_config(spec.config_cls, ROOT / "configs" / "controller-small.toml")
    system = spec.build(config)
    machine = state_machine_for(system, [])
    rules = {name for name in vars(machine) if name.startswith("rule_")}
    assert rules == {f"rule_{k}" for k in system.action_kinds()}
    r = check_hypothesis(system, [], seed=0, database=False, max_examples=10)
    # the runs took steps of several kinds, each through its own rule
    assert len(r.coverage["taken"]) >= 4 and r.generated_states > 10


def test_transition_and_deadlock_failures() -> None:
    g = Grid(2, reset=True)
    bad = transition("no_drop", lambda s, a, t: sum(t) >= sum(s), "sum never drops")
    r = check_hypothesis(g, [bad], seed=1, database=False)
    (v,) = r.violations
    assert v.length == 5 and v.trace[-1].action == "both counters reset"
    d = check_hypothesis(Grid(2, terminal=False), [], seed=1, database=False)
    assert [(v.property, v.length) for v in d.violations] == [("deadlock", 4)]
    ok = check_hypothesis(Grid(2, terminal=False), [], seed=1, database=False, deadlock=False)
    assert ok.violations == []


def test_no_violation_is_a_budget_never_a_proof() -> None:
    g = Grid(3)
    r = check_hypothesis(g, g.properties(), seed=0, database=False, max_examples=10, stateful_step_count=8)
    assert r.exit_reason is ExitReason.BUDGET_EXHAUSTED and r.budget == "max_examples" and r.exit_code == 3
    assert r.properties["monotone"]["status"] == "unknown"
    assert r.properties["corner"]["status"] == "witnessed" and r.witnesses == {"corner": 6}
    assert r.coverage["hypothesis"]["max_examples"] == 10 and r.coverage["never_enabled"] == ["Reset"]
    assert 1 <= r.distinct_states <= 16 and r.max_depth <= 8


def test_machine_class_works_with_plain_hypothesis() -> None:
    g = Grid(3, limit=2)
    machine = state_machine_for(g, g.properties())
    assert hasattr(machine, "inv_sum_below_limit") and hasattr(machine, "inv_deadlock")
    with pytest.raises(PropertyFailure) as e:
        run_state_machine_as_test(machine, settings=settings(settings.get_profile("quick"), database=None))
    assert e.value.prop.name == "sum_below_limit" and len(e.value.actions) == 2


def test_failure_is_kept_in_the_database_and_replayed_first(tmp_path: Path) -> None:
    g = Grid(8, limit=11)
    db = tmp_path / "db"
    first = check_hypothesis(g, g.properties(), seed=3, database=db, max_examples=200, stateful_step_count=40)
    assert first.violations and first.violations[0].property == "sum_below_limit"
    assert any(db.rglob("*")), "the failing example was saved"
    # replay only (no generation): the saved example reproduces the violation at once
    again = check_hypothesis(g, g.properties(), database=db, phases=(Phase.reuse,))
    assert [(v.property, v.length) for v in again.violations] == [("sum_below_limit", 11)]
    assert again.coverage["hypothesis"]["runs"] <= 3
    # an empty database replays nothing, and another configuration has its own key
    empty = check_hypothesis(g, g.properties(), database=tmp_path / "empty", phases=(Phase.reuse,))
    assert empty.violations == []
    other = Grid(8, limit=12)
    assert database_key("", {"limit": 11}, g.properties(), g) != database_key(
        "", {"limit": 12}, other.properties(), other
    )


def test_bad_arguments() -> None:
    """One options type checks them, the same whether check_hypothesis or check was called."""
    from explorer.api import CheckOptions, check

    for kwargs, message in (
        ({"profile": "fast"}, "profile: unknown profile 'fast'"),
        ({"max_examples": 0}, "max_examples: a positive whole number"),
        ({"database": 3}, "database: expected a directory"),
        ({"max_states": 9}, "--max-states applies to exhaustive engines, not to --engine hypothesis"),
    ):
        with pytest.raises(ValueError, match=message):
            check_hypothesis(Grid(2), [], **kwargs)
        with pytest.raises(ValueError, match=message):
            check(Grid(2), [], CheckOptions.of("hypothesis", kwargs))


def _small_configs() -> list[tuple[str, Path | None]]:
    out = []
    for name in invariants.MODEL_MODULES:
        path = ROOT / "configs" / f"{name}-small.toml"
        out.append((name, path if path.exists() else None))
    return out


@pytest.mark.slow  # 4.8 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize(("name", "path"), _small_configs(), ids=[n for n, _ in _small_configs()])
def test_every_registered_model_runs_under_the_quick_profile(name: str, path: Path | None) -> None:
    try:
        spec = invariants.get_model(name)
    except ImportError as e:  # a model still being written
        pytest.skip(f"{name}: {e}")
    config = load_config(spec.config_cls, path)
    system, props = spec.build(config), spec.properties(config)
    r = check_hypothesis(system, props, model=name, config=config, seed=0, database=False)
    assert r.engine == "hypothesis" and r.model == name
    assert r.exit_reason in (ExitReason.VIOLATION, ExitReason.BUDGET_EXHAUSTED)
    assert r.distinct_states >= 1 and r.generated_states >= 1
    for v in r.violations:  # a found violation replays and still fails at its end
        states = replay_steps(system, [asdict(s) for s in v.trace])
        prop = next((p for p in props if p.name == v.property), None)
        if prop is not None and prop.kind.value == "always":
            assert not prop.check(states[-1])
