"""The controller's symmetry reduction checked on configurations generated from the config's
keys, not from a hand-written list (issue 31, item 4): each key of ``ControllerConfig`` is
moved off its default (a flag flipped, each other choice of an enum, a bound raised by one)
on top of each base shape that has a non-trivial group; wherever the model still declares a
symmetry, every permutation must commute with the rules on sampled reachable states and
every property must give the same verdict on a state and its image. A key added to the
config, or an action kind added to the model, is checked here without anyone listing it; a
state field the renamer leaves out is caught (``test_symmetry_controller.py`` shows the
check failing on a field left out on purpose).

The default run checks a seeded sample of the variants; ``-m slow`` checks all of them.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import random
from typing import Any

import pytest

from explorer.config import ConfigError
from explorer.core import action_kind
from model.controller import ControllerConfig, ControllerSystem
from tests.test_symmetry_controller import (
    NOT_SYMMETRIC,
    _all_properties,
    asymmetric_properties,
    equivariance_failures,
    sample_states,
)

#: the shapes with a non-trivial group that every key is varied on: spare brokers (brokers 2
#: and 3 hold no replica), and two partitions on disjoint brokers
BASES: dict[str, dict[str, Any]] = {
    "spare": {"brokers": 4, "assignment": ((0, 1),)},
    "mirrored": {
        "start": "cold",
        "brokers": 4,
        "partitions_per_topic": 2,
        "assignment": ((0, 1), (2, 3)),
        "max_session_expiries": 0,
    },
}
#: the sample per variant: breadth-first states, random walks of ``WALK`` steps
BFS, WALKS, WALK = 150, 4, 40
#: variants the default run checks (a seeded sample; ``-m slow`` checks every one)
DEFAULT_SAMPLE = 6


def _moves(f: dataclasses.Field[Any], default: Any) -> list[Any]:
    """The values a key is moved to: a flag flipped, every other choice, a bound raised by
    one (when its maximum allows), a list key left alone (its items name brokers, partitions
    or topics, which only the base's shape can choose)."""
    meta = f.metadata
    if isinstance(default, bool):
        return [not default]
    if isinstance(default, enum.Enum) or meta.get("choices"):
        return [c for c in (meta.get("choices") or list(type(default))) if c != default]
    if isinstance(default, int):
        top = meta.get("max")
        return [default + 1] if top is None or default + 1 <= top else []
    return []


def variants() -> list[tuple[str, dict[str, Any]]]:
    """Every (name, keys) the keys generate over every base, the base itself first."""
    out: list[tuple[str, dict[str, Any]]] = []
    for base_name, base in BASES.items():
        out.append((base_name, dict(base)))
        start = ControllerConfig(**base)
        for f in dataclasses.fields(ControllerConfig):
            for value in _moves(f, getattr(start, f.name)):
                shown = value.value if isinstance(value, enum.Enum) else value
                out.append((f"{base_name}:{f.name}={shown}", {**base, f.name: value}))
    return out


VARIANTS = dict(variants())


@functools.cache
def _system(name: str) -> ControllerSystem | None:
    """The variant's system, None when the base's shape cannot take the moved key."""
    try:
        return ControllerSystem(ControllerConfig(**VARIANTS[name]))
    except (ConfigError, ValueError):
        return None


def _check(name: str, system: ControllerSystem | None = None) -> tuple[int, set[str]]:
    """Check one variant (on ``system`` when given, else its own); its group's order and the
    action kinds its sample enabled."""
    system = system or _system(name)
    if system is None:
        return 0, set()
    perms = system.symmetries()
    if not perms:
        return 1, set()
    states = tuple(sample_states(system, BFS, WALKS, WALK, seed=len(name)))
    for g in perms:
        inv = g.inverse()
        assert all(inv(g(s)) == s for s in states), (name, g)
        assert equivariance_failures(system, states, g) == 0, (name, g)
    props = _all_properties(system.cfg)
    bad = asymmetric_properties(system, props, states[: BFS // 2], perms)
    assert bad <= set(NOT_SYMMETRIC), (name, bad)
    kinds = {action_kind(a) for s in states for a, _ in system.successors(s)}
    return len(perms) + 1, kinds


def _names(sample: int | None) -> list[str]:
    names = sorted(VARIANTS)
    if sample is None:
        return names
    return sorted(random.Random(31).sample(names, min(sample, len(names))))


@pytest.mark.slow  # 1.6 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("name", _names(DEFAULT_SAMPLE))
def test_a_sample_of_the_generated_variants(name: str) -> None:
    _check(name)


@pytest.mark.slow
def test_every_generated_variant_and_what_they_cover() -> None:
    """Every variant: the checks hold wherever a symmetry is declared; most keys keep one
    (else the check would say little); and every action kind the model can take while a
    symmetry is declared is taken in some variant's sample, so a new action kind is checked
    by the same run."""
    groups: dict[str, int] = {}
    taken: set[str] = set()
    for name in VARIANTS:
        order, kinds = _check(name)
        groups[name] = order
        taken |= kinds
    symmetric = [n for n, k in groups.items() if k > 1]
    keys = {n.split(":")[1].split("=")[0] for n in symmetric if ":" in n}
    assert len(keys) >= len(dataclasses.fields(ControllerConfig)) // 2, sorted(keys)
    declared: set[str] = set()
    for n in symmetric:
        system = _system(n)
        assert system is not None
        declared |= set(system.action_kinds())
    assert declared - taken == set(), sorted(declared - taken)


def test_a_field_only_a_generated_variant_reaches_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A renaming that forgets the acknowledged records' partitions (their kind's method keeps
    them) passes on the base shape (no records there) and is caught on the variant the
    ``max_records`` key generates."""
    from model.controller import renamer

    monkeypatch.setattr(renamer.Renamer, "acked", lambda self, acked: acked)
    fresh = {
        n: ControllerSystem(ControllerConfig(**VARIANTS[n])) for n in ("mirrored", "mirrored:max_records=1")
    }
    assert _check("mirrored", fresh["mirrored"])[0] == 2
    with pytest.raises(AssertionError):
        _check("mirrored:max_records=1", fresh["mirrored:max_records=1"])
