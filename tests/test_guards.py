"""Transition-property guards (``Property.guard``, ``transition_groups``).

Engines skip a guarded check where its guard is false, so a guard is sound only if the
check holds on every such transition. The controller's guards are checked for that on
every step from the first 5,000 states (20,000 in the slow run) of small configurations (including mutants that
break the guarded properties), and bfs and ``--workers`` give the same result with the
guards as without.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

import invariants.controller as spec
import invariants.controller_guards as G
from explorer.api import CheckOptions, check
from explorer.config import load_config
from explorer.core import PropertyKind, TransitionChecks, transition, transition_groups
from explorer.engines.bfs import check_bfs
from invariants.mutants.controller import ControllerConfig  # with the test-only mutant key
from model.controller import faults
from model.controller.actions import Crash, Deliver, ProcessEvent, ShutdownComplete, ZkServe
from tests.test_pbfs import comparable, same
from tests.toys import Grid

SMALL = "configs/controller-small.toml"
TWO = ["brokers=2", "replication_factor=2", "max_crashes=1", "max_restarts=1", "max_session_expiries=1"]


def _drops(s: Any, a: Any, t: Any) -> bool:
    return sum(t) >= sum(s)


def _on_first_counter(s: Any, a: Any, t: Any) -> bool:
    return a.which == 0


def _on_second_counter(s: Any, a: Any, t: Any) -> bool:
    return a.which == 1


def _no_step_to(cell: tuple[int, int]):
    def check(s: Any, a: Any, t: Any) -> bool:
        return t != cell

    return check


# -- the engine --------------------------------------------------------------------------------------


def test_groups_share_one_guard_and_keep_order() -> None:
    g = _on_first_counter
    props = [
        transition("a", _drops, "", guard=g),
        transition("b", _drops, ""),
        transition("c", _drops, "", guard=g),
    ]
    groups = transition_groups(props)
    assert [(guard, [p.name for _, p, _ in checks]) for guard, checks in groups] == [
        (g, ["a", "c"]),
        (None, ["b"]),
    ]


@pytest.mark.parametrize("workers", [1, 2])
def test_guard_true_where_check_fails_finds_it(workers: int) -> None:
    # (1, 0) is entered only by incrementing counter 0, where the guard holds
    props = [transition("never_1_0", _no_step_to((1, 0)), "", guard=_on_first_counter)]
    r = check(Grid(3), props, CheckOptions(workers=workers))
    assert [(v.property, v.length) for v in r.violations] == [("never_1_0", 1)]


@pytest.mark.parametrize("workers", [1, 2])
def test_engines_really_skip_where_the_guard_is_false(workers: int) -> None:
    # a wrong guard (false on the only failing step) hides the failure: the guard is trusted,
    # which is why every guard of a model is tested for soundness below
    props = [transition("never_1_0", _no_step_to((1, 0)), "", guard=_on_second_counter)]
    assert check(Grid(3), props, CheckOptions(workers=workers)).violations == []
    unguarded = [dataclasses.replace(p, guard=None) for p in props]
    assert len(check(Grid(3), unguarded, CheckOptions(workers=workers)).violations) == 1


def test_violations_on_one_step_come_in_property_order() -> None:
    # groups: [z, x] (guarded) then [y]; y and x fail on the same first step, and y comes
    # before x in the properties, so y comes first in the result, whatever the grouping
    props = [
        transition("z", _drops, "", guard=_on_first_counter),
        transition("y", _no_step_to((1, 0)), ""),
        transition("x", _no_step_to((1, 0)), "", guard=_on_first_counter),
    ]
    assert [[p.name for _, p, _ in checks] for _, checks in transition_groups(props)] == [["z", "x"], ["y"]]
    r = same(Grid(3), props, serial_below=100, keep_going=True)
    assert [v.property for v in r.violations] == ["y", "x"]


# -- the controller's guards -------------------------------------------------------------------------


def _edges(overrides: Sequence[str], path: str | None = SMALL, limit: int = 20_000):
    c = load_config(ControllerConfig, path, list(overrides))
    system = spec.build(c)
    props = [p for p in spec.properties(c) if p.kind is PropertyKind.TRANSITION]
    seen = set(system.init_states())
    frontier = list(seen)
    while frontier and len(seen) < limit:
        nxt = []
        for s in frontier:
            for a, t in system.successors(s):
                yield props, s, a, t
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt


GUARD_CASES = [
    (SMALL, []),
    (None, TWO),
    (None, [*TWO, "zk_write_fencing=partition-version", "session_expiry_handling=queued"]),
    (None, [*TWO, "broker_epoch=false"]),
    (None, [*TWO, "elector=legacy"]),
    (None, [*TWO, "mutant=epoch-reset"]),
    (None, [*TWO, "mutant=no-epoch-bump"]),
    (None, [*TWO, "mutant=no-leader-epoch-bump"]),
    (None, [*TWO, "mutant=no-controller-epoch-check"]),
    ("configs/controller-admin.toml", []),
    # every registered fault (model/controller/faults/), its budget at 1 on the two-broker
    # configuration: generated from the registry, so a new fault's steps are checked against
    # every guard without an edit here (the test also checks that the fault fired)
    *((None, [*TWO, f"{r.budget}=1"]) for r in faults.rules()),
]
#: the fault kind each generated case must exercise, by its budget override
FAULT_OF_CASE = {f"{r.budget}=1": r.kind for r in faults.rules()}


@pytest.mark.parametrize("limit", [5_000, pytest.param(20_000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("path, overrides", GUARD_CASES)
def test_controller_guards_are_sound(path: str | None, overrides: list[str], limit: int) -> None:
    """Where a guard is false its property holds; where it holds the check sometimes fails
    (in the mutants) and sometimes not, so the guards decide nothing by themselves (every step
    from the first ``limit`` states; 20,000 in the slow run)."""
    skipped: dict[str, int] = {}
    entered: dict[str, int] = {}
    names: set[str] = set()
    kinds: set[str] = set()
    for props, s, a, t in _edges(overrides, path, limit):
        kinds.add(type(a).__name__)
        for p in props:
            if p.guard is None:
                continue
            names.add(p.name)
            if p.guard(s, a, t):
                entered[p.name] = entered.get(p.name, 0) + 1
            else:
                assert p.check(s, a, t), (p.name, a)
                skipped[p.name] = skipped.get(p.name, 0) + 1
    assert names and set(skipped) == names == set(entered)  # every guard both skips and lets through
    assert {FAULT_OF_CASE[o] for o in overrides if o in FAULT_OF_CASE} <= kinds  # a fault case's fault fired


@pytest.mark.parametrize("path", ["configs/controller-admin-shutdown.toml", "configs/controller-admin.toml"])
def test_every_controller_transition_property_is_guarded(path: str) -> None:
    c = load_config(ControllerConfig, path, [])
    props = [p for p in spec.properties(c) if p.kind is PropertyKind.TRANSITION]
    guards = (G.zk_changed, G.delivers, G.controller_stepped, G.completes_shutdown)
    assert props and all(p.guard in guards for p in props)
    # one group per guard, not one per property (the shutdown guard only with controlled shutdowns)
    assert len(transition_groups(props)) == (4 if c.max_controlled_shutdowns else 3)
    # and a step calls at most one of them: the others are looked up by action type
    table = TransitionChecks(transition_groups(props))
    for tp in (Deliver, ZkServe, ProcessEvent, Crash, ShutdownComplete):
        called = [g for g, _ in table.for_type(tp) if g is not None]
        assert called == [G.zk_changed], (tp, called)


@pytest.mark.slow  # 1.4 to 1.6 CPU-s each
@pytest.mark.parametrize(
    "path, overrides, keep_going, only",
    [
        (SMALL, ["max_session_expiries=1", "mutant=epoch-reset"], True, None),
        (SMALL, ["max_session_expiries=1", "mutant=no-epoch-bump"], True, None),
        (SMALL, ["max_session_expiries=1", "mutant=no-leader-epoch-bump"], True, None),
        (None, [*TWO, "broker_epoch=false"], False, "brokers_reject_stale_broker_epoch"),
        (
            None,
            [*TWO, "zk_write_fencing=partition-version", "session_expiry_handling=queued"],
            False,
            "zk_writes_fenced",
        ),
    ],
)
def test_guarded_and_unguarded_results_are_equal(
    path: str | None, overrides: list[str], keep_going: bool, only: str | None
) -> None:
    c = load_config(ControllerConfig, path, overrides)
    props = [p for p in spec.properties(c) if only is None or p.name in (only, "one_controller_per_epoch")]
    unguarded = [dataclasses.replace(p, guard=None) for p in props]
    a = check_bfs(spec.build(c), props, keep_going=keep_going)
    b = check_bfs(spec.build(c), unguarded, keep_going=keep_going)
    assert comparable(a) == comparable(b)
    assert any(p.guard is not None for p in props if p.name in {v.property for v in a.violations})
    same(spec.build(c), props, keep_going=keep_going)
