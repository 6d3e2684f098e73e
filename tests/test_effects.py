"""Steps are selected by what they do (issue 54, item 3): every controller action declares its
effects (``model/controller/effects.py``), and properties, guards and coverage select steps by
effect, so a new action with an effect is seen wherever the effect is.

The check: for every built-in action class, a synthetic fault is registered (a fresh action
class with the same fields and effects, unrelated to the built-in one by inheritance, whose rule
yields a twin of each of the system's steps of that class). On every step of small
configurations (with mutants, so that properties fail on some steps), every transition
property's guard and verdict, the engines' per-type table of checks and the coverage labels
and arrows are the same for the twin as for the original step. An exact-class selection
(``type(a) is ZkServe``) anywhere would see the original and miss the twin.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import invariants.controller as spec
import model.controller.actions as actions
import model.purgatory.actions as purgatory_actions
import model.simple_timing_wheel.actions as simple_timing_wheel_actions
import model.timing_wheel as timing_wheel
from explorer.config import load_config
from explorer.core import ActionGuard, PropertyKind, TransitionChecks, effects, effects_of, transition_groups
from invariants.mutants.controller import ControllerConfig  # with the test-only mutant key
from model.controller import faults
from model.controller.coverage import ZK_LABELLED_BY_TYPE, sequence_arrow, zk_labels
from model.controller.effects import Effect, delivered_message_of, zk_request_of

ROOT = Path(__file__).resolve().parents[1]
SMALL = "configs/controller-small.toml"
TWO = ["brokers=2", "replication_factor=2", "max_crashes=1", "max_restarts=1", "max_session_expiries=1"]

#: every action class of the controller (those ``actions.py`` defines)
BUILT_IN = [
    c
    for c in vars(actions).values()
    if isinstance(c, type) and c.__module__ == actions.__name__ and hasattr(c, "_fields")
]


def test_every_action_class_declares_an_effect_and_the_fields_it_names() -> None:
    assert len(BUILT_IN) >= 20
    for cls in BUILT_IN:
        assert effects_of(cls), cls.__name__
        for e in effects_of(cls):
            assert set(e.fields) <= set(cls._fields), (cls.__name__, e)
    # every effect is declared by some action class (no effect selects nothing)
    assert {e for c in BUILT_IN for e in effects_of(c)} == set(Effect)


def test_a_declaration_without_the_effect_s_fields_is_refused() -> None:
    class Incomplete(NamedTuple):
        broker: int

    with pytest.raises(TypeError, match="has no field session, req"):
        effects(Effect.APPLIES_ZK_REQUEST)(Incomplete)


def _twin_class(tp: Any) -> Any:
    """An action class with ``tp``'s fields and no relation to it but its declared effects."""
    fields: list[tuple[str, Any]] = [(f, Any) for f in tp._fields]
    twin: Any = NamedTuple(f"Synthetic{tp.__name__}", fields)  # type: ignore[misc]
    twin.__str__ = lambda self: str(tp(*self))  # type: ignore[method-assign,misc]  # reads as the step it mirrors
    return twin


def _mirror(tp: Any, twin: Any) -> Any:
    """The rule of the synthetic fault: a twin of each of the system's own steps of class ``tp``."""

    def enabled(system: Any, s: Any) -> Iterator[tuple[Any, Any]]:
        for a, t in system.successors(s):
            if type(a) is tp:
                yield twin(*a), t

    return enabled


@pytest.fixture(scope="module")
def twins() -> Iterator[dict[type, faults.FaultRule]]:
    """One synthetic fault per built-in action class, registered for the module's tests (their
    budget key is 0 in every configuration here, so no system runs them by itself)."""
    made: dict[type, faults.FaultRule] = {}
    try:
        for tp in BUILT_IN:
            twin = _twin_class(tp)
            faults.fault(twin, "max_duplicate_deliveries", effects=tuple(effects_of(tp)))(_mirror(tp, twin))
            made[tp] = next(r for r in faults.rules() if r.action is twin)
        yield made
    finally:
        for rule in made.values():
            faults._REGISTRY.pop(rule.kind, None)


def _all_guards(props: list[Any]) -> set[ActionGuard]:
    return {p.guard for p in props if isinstance(p.guard, ActionGuard)}


def test_guards_and_the_per_type_table_select_the_synthetic_steps(
    twins: dict[type, faults.FaultRule],
) -> None:
    """Statically, for every effect: each action guard of the controller's properties (on the
    configurations that use them all) matches a synthetic class exactly where it matches the
    built-in class of the same effects, and the engines' table of checks is the same."""
    for path in ("configs/controller-admin-shutdown.toml", "configs/controller-admin-rebalance.toml", SMALL):
        c = load_config(ControllerConfig, path, ["max_records=1", "max_admin_unclean_elections=1"])
        props = [p for p in spec.properties(c) if p.kind is PropertyKind.TRANSITION]
        table = TransitionChecks(transition_groups(props))
        for tp, rule in twins.items():
            for g in _all_guards(props):
                assert g.matches(rule.action) == g.matches(tp), (path, tp.__name__, g)
            mine = [(g, [i[0] for i in items]) for g, items in table.for_type(tp)]
            theirs = [(g, [i[0] for i in items]) for g, items in table.for_type(rule.action)]
            assert mine == theirs, (path, tp.__name__)
            assert ZK_LABELLED_BY_TYPE[rule.action] == ZK_LABELLED_BY_TYPE[tp]
    # and the guards do select: the delivery guard sees the duplicate-delivery fault too
    delivers = ActionGuard(Effect.DELIVERS_CONTROLLER_REQUEST)
    assert delivers.matches(twins[actions.Deliver].action)
    assert not delivers.matches(twins[actions.ZkServe].action)


GUARD_CASES = [
    (SMALL, ["max_session_expiries=1", "mutant=no-epoch-bump"]),
    (SMALL, ["max_session_expiries=1", "mutant=resign-keeps-channels"]),
    (None, [*TWO, "mutant=no-controller-epoch-check", "max_records=1"]),
    ("configs/controller-admin-shutdown.toml", []),
    ("configs/controller-admin.toml", ["max_admin_unclean_elections=1"]),
    ("configs/controller-admin-rebalance.toml", ["zk_responses=separate"]),
]


def _edges(system: Any, limit: int) -> Iterator[tuple[Any, Any, Any]]:
    seen = set(system.init_states())
    frontier = list(seen)
    while frontier and len(seen) < limit:
        nxt = []
        for s in frontier:
            for a, t in system.successors(s):
                yield s, a, t
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt


@pytest.mark.slow  # 1.8 CPU-s in a loaded default run (2026-11-29)
def test_properties_and_coverage_see_the_synthetic_steps(twins: dict[type, faults.FaultRule]) -> None:
    """On every step from the first 1,500 states of each case, the synthetic fault's twin of
    the step gets the same guard and verdict from every transition property, the same
    ZooKeeper labels and the same arrow; and some verdicts are failures (the mutants), so a
    property that missed the twin would show."""
    failed: dict[Effect, int] = {}
    seen: set[Effect] = set()
    for path, overrides in GUARD_CASES:
        c = load_config(ControllerConfig, path, overrides)
        system = spec.build(c)
        props = [p for p in spec.properties(c) if p.kind is PropertyKind.TRANSITION]
        for s, a, t in _edges(system, 1_500):
            tp = type(a)
            twin = twins[tp].action(*a)
            done = effects_of(tp)
            seen |= done
            for p in props:
                if p.guard is not None:
                    entered = p.guard(s, a, t)
                    assert entered == p.guard(s, twin, t), (p.name, str(a))
                    if not entered:  # the engines check nothing there (tests/test_guards.py)
                        continue
                verdict = p.check(s, a, t)
                assert verdict == p.check(s, twin, t), (p.name, str(a))
                if not verdict:
                    for e in done:
                        failed[e] = failed.get(e, 0) + 1
            assert zk_labels(system, s, a, t) == zk_labels(system, s, twin, t), str(a)
            if not hasattr(tp, "arrow"):
                assert sequence_arrow(a) == sequence_arrow(twin), str(a)
            assert zk_request_of(twin) == zk_request_of(a)
            assert delivered_message_of(twin) == delivered_message_of(a)
    assert seen >= set(Effect) - {Effect.TIME_PASSES}, set(Effect) - seen
    assert failed.get(Effect.APPLIES_ZK_REQUEST) and failed.get(Effect.DELIVERS_CONTROLLER_REQUEST), failed


def test_the_synthetic_fault_s_rule_yields_the_twins(twins: dict[type, faults.FaultRule]) -> None:
    """The registered rule is a fault like any other: its steps are the twins of the system's."""
    system = spec.build(load_config(ControllerConfig, SMALL, []))
    s = system.init_states()[0]
    rule = twins[actions.Crash]
    got = [(tuple(a), t) for a, t in rule.enabled(system, s)]
    assert got and got == [(tuple(a), t) for a, t in system.successors(s) if type(a) is actions.Crash]
    assert rule.effects == {Effect.CRASHES_BROKER}


# -- the grep target: no step is selected by its class -------------------------------------------

#: where steps are selected (every model's properties and guards, its explanations, the
#: catalogue mutants, coverage, the tests' configuration lists and the scenario census); a
#: selection of an action by class there is an error
SELECTING = [
    *sorted((ROOT / "invariants").rglob("*.py")),
    ROOT / "model/controller/coverage.py",
    ROOT / "tests/test_guards.py",
    ROOT / "tests/test_search_core.py",
    ROOT / "benchmarks/scenario_census.py",
]
#: the action classes of every model: the controller's, the timing wheels' and the purgatory's
OTHER_ACTIONS = [
    c
    for m in (simple_timing_wheel_actions, purgatory_actions, timing_wheel)
    for c in vars(m).values()
    if isinstance(c, type)
    and c.__module__ == m.__name__
    and hasattr(c, "_fields")
    and c.__name__ not in ("TWState", "Wheel")  # model/timing_wheel.py's state records
]
ACTION_NAMES = "|".join(sorted({c.__name__ for c in [*BUILT_IN, *OTHER_ACTIONS]}))
#: ``type(a) is X`` / ``type(a) in (...)`` / ``isinstance(a, X)`` on a step, or an action class in
#: an ``ActionGuard`` or ``isinstance``
EXACT_CLASS = re.compile(
    rf"type\((a|act|action|step)\) (is|in|not in|is not)\b|isinstance\((a|act|action|step), "
    rf"|ActionGuard\([^)]*\b({ACTION_NAMES})\b|isinstance\(\w+, \(?({ACTION_NAMES})\b"
)


def exact_class_selections(text: str) -> list[str]:
    """The lines of ``text`` that select a step by its class.

    >>> exact_class_selections("if type(a) is ZkServe:\\n    req = zk_request_of(a)")
    ['if type(a) is ZkServe:']
    >>> exact_class_selections("if type(req) is UpdateLeaderAndIsr:")
    []
    """
    return [line.strip() for line in text.splitlines() if EXACT_CLASS.search(line)]


def test_no_step_is_selected_by_its_class() -> None:
    assert len(SELECTING) > 20 and {"Submit", "Shutdown", "PurgeKey", "CheckAndCompleteDone"} <= {
        c.__name__ for c in OTHER_ACTIONS
    }
    found = {
        str(p.relative_to(ROOT)): hits for p in SELECTING if (hits := exact_class_selections(p.read_text()))
    }
    assert found == {}


@pytest.mark.parametrize(
    "line",
    [
        "    if type(a) is not Deliver or type(a.msg) is not StopReplicaRequest:",
        "    if isinstance(a, SessionExpire):",
        "delivers = ActionGuard(Deliver)",
        "    return type(a) in (ZkServe, ProcessEvent)",
        "    if isinstance(x, (ZkServe, Deliver)):",
        "        return type(a) is Submit and s.tasks[a.task].fires == 0",
        "        if type(a) is CheckAndCompleteDone:",
        "        return type(a) is not Shutdown or all(ts.fires > 0 for ts in s.tasks)",
        "fires = ActionGuard(Submit)",
        "            assert isinstance(a, demo.TempAdd)",
    ],
)
@pytest.mark.parametrize(
    "where",
    [
        "invariants/controller_guards.py",
        "invariants/simple_timing_wheel.py",
        "invariants/purgatory.py",
        "invariants/mutants/simple_timing_wheel.py",
        "tests/test_guards.py",
    ],
)
def test_the_grep_finds_a_planted_selection(line: str, where: str) -> None:
    text = (ROOT / where).read_text() + "\n" + line + "\n"
    assert ROOT / where in SELECTING and exact_class_selections(text) == [line.strip()]
