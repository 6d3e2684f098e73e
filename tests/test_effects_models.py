"""The simple timing wheel's and the purgatory's steps are selected by what they do (issue 54,
item 3), as the controller's are (tests/test_effects.py): their properties read the effects an
action class declares (``model/simple_timing_wheel/effects.py``, ``model/purgatory/effects.py``),
never its class. For every action class that declares an effect, a twin (a fresh class of the
same fields and effects, unrelated by inheritance) is judged like the original on every step of
small configurations (with a mutant, so that the properties fail on some): each transition
property's ``applies``, ``guard`` and check. An exact-class selection (``type(a) is Submit``)
would see the original and miss the twin.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import invariants.purgatory as purgatory_spec
import invariants.simple_timing_wheel as wheel_spec
import model.purgatory.actions as purgatory_actions
import model.simple_timing_wheel.actions as wheel_actions
from explorer.config import load_config
from explorer.core import PropertyKind, effects, effects_of
from model.purgatory.effects import Effect as PurgatoryEffect
from model.simple_timing_wheel.effects import Effect as WheelEffect

ROOT = Path(__file__).resolve().parents[1]


class Case(NamedTuple):
    spec: Any
    config: str
    overrides: tuple[str, ...]
    actions: Any
    effect_enum: Any


CASES = {
    "simple-timing-wheel": Case(
        wheel_spec,
        "configs/simple-timing-wheel-small.toml",
        ("mutant=early_cycle",),
        wheel_actions,
        WheelEffect,
    ),
    "purgatory": Case(
        purgatory_spec,
        "configs/purgatory-small.toml",
        ("mutant=no_remove", "ops=2", "required_offsets=[1, 1]", "purge_interval=1", "expiry=false"),
        purgatory_actions,
        PurgatoryEffect,
    ),
}


def declaring(module: Any) -> list[type]:
    """The action classes of ``module`` that declare an effect."""
    return [
        c for c in vars(module).values() if isinstance(c, type) and effects_of(c) and hasattr(c, "_fields")
    ]


def twin(cls: type) -> type:
    """A fresh action class with ``cls``'s fields and effects, not a subclass of it."""
    fresh = NamedTuple(f"Twin{cls.__name__}", [(f, Any) for f in cls._fields])  # type: ignore[attr-defined,misc]
    return effects(*effects_of(cls))(fresh)


def steps(case: Case) -> Iterator[tuple[Any, Any, Any, Any]]:
    """Every step ``(properties, s, a, t)`` of the case's reachable states whose action declares
    an effect."""
    config = load_config(case.spec.SPEC.config_cls, str(ROOT / case.config), list(case.overrides))
    system = case.spec.SPEC.build(config)
    props = [p for p in case.spec.SPEC.properties(config) if p.kind is PropertyKind.TRANSITION]
    seen = set(system.init_states())
    todo = list(seen)
    while todo:
        s = todo.pop()
        for a, t in system.successors(s):
            if effects_of(a):
                yield props, s, a, t
            if t not in seen:
                seen.add(t)
                todo.append(t)


def verdicts(props: list[Any], s: Any, a: Any, t: Any) -> list[tuple[bool, bool, bool]]:
    """Each transition property's (applies, guard, check) on the step."""
    return [
        (
            p.applies is None or bool(p.applies(s, a, t)),
            p.guard is None or bool(p.guard(s, a, t)),
            bool(p.check(s, a, t)),
        )
        for p in props
    ]


@pytest.mark.parametrize("name", CASES)
def test_every_effect_is_declared(name: str) -> None:
    case = CASES[name]
    assert {e for c in declaring(case.actions) for e in effects_of(c)} == set(case.effect_enum)


@pytest.mark.parametrize("name", CASES)
def test_the_properties_judge_a_twin_like_the_original(name: str) -> None:
    case = CASES[name]
    twins = {c: twin(c) for c in declaring(case.actions)}
    met: dict[Any, int] = {}
    failed = applied = 0
    for props, s, a, t in steps(case):
        got = verdicts(props, s, a, t)
        assert verdicts(props, s, twins[type(a)](*a), t) == got, (type(a).__name__, a)
        for e in effects_of(a):
            met[e] = met.get(e, 0) + 1
        applied += sum(ap for ap, _, _ in got)
        failed += sum(not ok for _, _, ok in got)
    # every effect is met, the properties apply to such steps and the mutant fails some
    assert set(met) == set(case.effect_enum) and applied > 0 and failed > 0, (met, applied, failed)
