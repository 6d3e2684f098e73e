"""The controller model's symmetries (``model/controller/symmetry.py``), checked on sampled
reachable states: each declared permutation is a bijection, the rules commute with it (the
successors of ``g(s)`` are the images of the successors of ``s``), and every property marked
``symmetric`` gives the same verdict on a state (or step) and on its image. Also the
configurations whose group must be trivial, and permutations that are wrong on purpose (a
field left out of the renaming, an order the model derives from ids) caught by the same check.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import random
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.core import Property, PropertyKind
from invariants.controller import SYMMETRIC, properties
from invariants.mutants.controller import ControllerConfig as MutantConfig
from invariants.mutants.controller import build
from model.controller import ControllerConfig, ControllerSystem, State
from model.controller import renamer as renamer_module
from model.controller import symmetry as sym
from model.controller.actions import Crash, SessionExpire
from model.controller.symmetry import Permutation, permute_state, symmetries

ROOT = Path(__file__).resolve().parents[1]

#: configurations with a non-trivial group: (keys, group order including the identity)
CASES: dict[str, tuple[dict[str, Any], int]] = {
    # brokers 2 and 3 hold no replica
    "spare_brokers": ({"brokers": 4, "assignment": ((0, 1),)}, 2),
    "three_spare_brokers": ({"brokers": 5, "assignment": ((0, 1),)}, 6),
    "two_expiries": ({"brokers": 4, "assignment": ((0, 1),), "max_session_expiries": 2}, 2),
    "cold_spare_brokers": ({"start": "cold", "brokers": 4, "assignment": ((0, 1),)}, 2),
    "records": ({"brokers": 4, "assignment": ((0, 1),), "max_records": 1}, 2),
    "unclean_no_metadata": (
        {
            "brokers": 4,
            "assignment": ((0, 1),),
            "unclean_leader_election": True,
            "send_update_metadata": False,
            "max_records": 1,
        },
        2,
    ),
    "separate_responses": ({"brokers": 4, "assignment": ((0, 1),), "zk_responses": "separate"}, 2),
    "kafka_0_8": ({"brokers": 4, "assignment": ((0, 1),), "kafka_version": "0.8"}, 2),
    # Kafka 2.3's startup (KAFKA-3143): checks no_dead_leader_when_quiet
    "offline_on_startup": ({"brokers": 4, "assignment": ((0, 1),), "offline_replicas_on_startup": True}, 2),
    # two partitions on disjoint brokers: brokers and partitions (or topics) swapped together
    # (one fault: with two, two replica brokers can fail together, see test_failure_order_matters)
    "mirrored_partitions": (
        {
            "start": "cold",
            "brokers": 4,
            "partitions_per_topic": 2,
            "assignment": ((0, 1), (2, 3)),
            "max_session_expiries": 0,
        },
        2,
    ),
    "mirrored_partitions_separate": (
        {
            "start": "cold",
            "brokers": 4,
            "partitions_per_topic": 2,
            "assignment": ((0, 1), (2, 3)),
            "max_session_expiries": 0,
            "zk_responses": "separate",
            "max_records": 1,
        },
        2,
    ),
    "mirrored_topics": (
        {
            "start": "cold",
            "brokers": 4,
            "topics": 2,
            "assignment": ((0, 1), (2, 3)),
            "max_session_expiries": 0,
        },
        2,
    ),
}

#: properties whose verdict may differ between a state and its image, with the reason; none
#: so far (every controller property reads all brokers and partitions alike)
NOT_SYMMETRIC: dict[str, str] = {}

#: the sample: (breadth-first states, random walks); the default run's, and the slow run's
SAMPLE = (600, 10)
FULL_SAMPLE = (1500, 25)
SAMPLES = [pytest.param(SAMPLE, id="sample"), pytest.param(FULL_SAMPLE, id="full", marks=pytest.mark.slow)]
#: the cases by name; five brokers' permutations (2 CPU-s a test) run in the slow run only
NAMES = [pytest.param(n, marks=pytest.mark.slow) if n == "three_spare_brokers" else n for n in sorted(CASES)]
WALK_DEPTH = 60


@functools.cache
def _system(name: str) -> ControllerSystem:
    return ControllerSystem(ControllerConfig(**CASES[name][0]))


@functools.cache
def _sample(name: str, size: tuple[int, int] = SAMPLE) -> tuple[State, ...]:
    """The first ``size[0]`` states in breadth-first order, then the states of ``size[1]`` seeded
    random walks from the initial state."""
    system = _system(name)
    return tuple(sample_states(system, size[0], size[1], WALK_DEPTH, seed=len(name)))


def sample_states(system: ControllerSystem, bfs: int, walks: int, depth: int, seed: int) -> list[State]:
    """Reachable states: breadth-first up to ``bfs`` states, then ``walks`` random walks."""
    init = system.init_states()
    seen = set(init)
    order = list(init)
    queue = collections.deque(init)
    while queue and len(order) < bfs:
        for _, t in system.successors(queue.popleft()):
            if t not in seen:
                seen.add(t)
                order.append(t)
                queue.append(t)
    rnd = random.Random(seed)
    for _ in range(walks):
        s = rnd.choice(init)
        for _ in range(depth):
            succ = list(system.successors(s))
            if not succ:
                break
            s = rnd.choice(succ)[1]
            if s not in seen:
                seen.add(s)
                order.append(s)
    return order


def equivariance_failures(
    system: ControllerSystem, states: Iterator[State] | tuple[State, ...], g: Callable[[State], State]
) -> int:
    """How many of ``states`` have successors whose images under ``g`` are not the successors
    of their image."""
    bad = 0
    for s in states:
        image = {g(t) for _, t in system.successors(s)}
        if image != {t for _, t in system.successors(g(s))}:
            bad += 1
    return bad


def _verdict(p: Property, *args: Any) -> tuple[bool, ...]:
    """What an engine sees of ``p`` on a state (or a step): applies, check (a transition
    property holds by construction where its guard is false), trigger."""
    out = [p.applies(*args) if p.applies is not None else True]
    if p.kind is PropertyKind.TRANSITION and p.guard is not None and not p.guard(*args):
        out.append(True)
    else:
        out.append(bool(p.check(*args)))
    if p.trigger is not None:
        out.append(bool(p.trigger(*args)))
    return tuple(out)


def asymmetric_properties(
    system: ControllerSystem, props: list[Property], states: tuple[State, ...], perms: list[Permutation]
) -> set[str]:
    """The properties whose verdict differs between some sampled state (or step) and its image."""
    bad: set[str] = set()
    steps = [p for p in props if p.kind is PropertyKind.TRANSITION]
    others = [p for p in props if p.kind is not PropertyKind.TRANSITION]
    for s in states:
        succ = list(system.successors(s))
        for g in perms:
            gs = g(s)
            for p in others:
                if p.name not in bad and _verdict(p, s) != _verdict(p, gs):
                    bad.add(p.name)
            if not steps:
                continue
            gsucc = list(system.successors(gs))
            for p in steps:
                if p.name in bad:
                    continue
                mine = {(g(t), _verdict(p, s, a, t)) for a, t in succ}
                theirs = {(t, _verdict(p, gs, a, t)) for a, t in gsucc}
                if mine != theirs:
                    bad.add(p.name)
    return bad


# -- the group --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_group_is_closed(name: str) -> None:
    system = _system(name)
    perms = system.symmetries()
    assert len(perms) + 1 == CASES[name][1]
    group = set(perms)
    for g in perms:
        assert not g.is_identity()
        assert g.inverse() in group or g.inverse().is_identity()
        for h in perms:
            gh = g.compose(h)
            assert gh.is_identity() or gh in group
    init = system.init_states()
    for g in perms:
        assert {g(s) for s in init} == set(init)


@pytest.mark.slow  # 4.9 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("size", SAMPLES)
@pytest.mark.parametrize("name", NAMES)
def test_permutations_are_bijections_and_commute_with_the_rules(name: str, size: tuple[int, int]) -> None:
    system = _system(name)
    states = _sample(name, size)
    assert len(states) > size[0]
    for g in system.symmetries():
        inv = g.inverse()
        for s in states:
            assert inv(g(s)) == s
        assert equivariance_failures(system, states, g) == 0, g


def _all_properties(cfg: ControllerConfig) -> list[Property]:
    """``cfg``'s properties and the ``eventually`` ones its ``liveness`` variant adds."""
    props = properties(cfg)
    names = {p.name for p in props}
    live = properties(dataclasses.replace(cfg, liveness=True))
    return props + [p for p in live if p.name not in names]


@pytest.mark.slow  # 4.9 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("size", SAMPLES)
@pytest.mark.parametrize("name", NAMES)
def test_properties_marked_symmetric_are_invariant(name: str, size: tuple[int, int]) -> None:
    system = _system(name)
    props = _all_properties(system.cfg)
    bad = asymmetric_properties(system, props, _sample(name, size)[: size[0] * 8 // 15], system.symmetries())
    assert bad == set(NOT_SYMMETRIC) & {p.name for p in props}, bad
    marked = {p.name for p in props if p.symmetric}
    assert not marked & bad
    assert marked == {p.name for p in props} - set(NOT_SYMMETRIC)


def test_marked_properties_were_checked() -> None:
    """Every property marked symmetric is checked by ``test_properties_marked_symmetric_are_invariant``
    on some configuration; the admin workflows' properties (no admin configuration declares a
    symmetry) are not marked."""
    checked = set()
    for keys, _ in CASES.values():
        checked |= {p.name for p in _all_properties(ControllerConfig(**keys))}
    assert checked - set(NOT_SYMMETRIC) == SYMMETRIC
    admin = ControllerConfig(max_topic_deletions=1, max_reassignments=1, max_preferred_elections=1)
    for p in properties(admin):
        assert p.symmetric == (p.name in SYMMETRIC), p.name
    assert any(not p.symmetric for p in properties(admin))


# -- configurations without symmetry ------------------------------------------------------


def _toml(name: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / "configs" / f"{name}.toml").read_text())


@pytest.mark.parametrize(
    "keys",
    [
        _toml("controller-ref"),  # broker 0 controls and leads, broker 1 follows, broker 2 alone
        {"brokers": 4, "assignment": ((0, 1),), "max_topic_deletions": 1},  # topics 0, 1, ... in order
        {"brokers": 4, "assignment": ((0, 1),), "max_controlled_shutdowns": 1},
        {"brokers": 4, "topics": 2, "assignment": ((0, 1), (0, 1)), "topics_created_later": 1},
        {"start": "cold", "brokers": 4, "topics": 2, "assignment": ((0, 1), (2, 3)), "unclean_topics": (0,)},
        # the ordered-assignment check: [0, 1] and [1, 0] are not the same list
        {"brokers": 2, "assignment": ((0, 1),)},
    ],
)
def test_trivial_group(keys: dict[str, Any]) -> None:
    system = ControllerSystem(ControllerConfig(**keys))
    assert system.symmetries() == []


def test_mutants_declare_no_symmetry() -> None:
    cfg = MutantConfig(brokers=4, assignment=((0, 1),), mutant="no-leader-epoch-bump")
    assert build(cfg).symmetries() == []
    assert build(MutantConfig(brokers=4, assignment=((0, 1),))).symmetries() != []


def test_symmetries_cached() -> None:
    system = ControllerSystem(ControllerConfig(**CASES["spare_brokers"][0]))
    assert system.symmetries() == system.symmetries() == symmetries(system.cfg, system.init_states())
    assert system.symmetries() is not system.symmetries()  # a copy each time


# -- why the group is restricted: permutations the model does not commute with --------------


def test_partitions_of_one_broker_keep_their_order() -> None:
    """Swapping two partitions both replicated on brokers 0 and 1 maps the configuration and the
    initial state onto themselves, but a LeaderAndIsr request lists its partitions in the order
    the controller handled them (phase by phase), so the swap has no image the model builds:
    ``symmetries`` leaves it out."""
    keys = {"brokers": 2, "partitions_per_topic": 2, "assignment": ((0, 1), (0, 1))}
    system = ControllerSystem(ControllerConfig(**keys))
    g = Permutation((0, 1), (1, 0), (0,))
    assert sym._preserves_config(system.cfg, g)
    assert {g(s) for s in system.init_states()} == set(system.init_states())
    assert system.symmetries() == []
    states = sample_states(system, 1500, 0, 0, seed=0)
    assert equivariance_failures(system, states, g) > 0


@pytest.mark.slow  # over a CPU-second: the ci selection runs it
def test_failure_order_matters() -> None:
    """With two faults, two replica-holding brokers can be found failed by one BrokerChange;
    ``onBrokerFailure`` handles them in id order, each with a ZooKeeper round trip, so a
    renaming that reverses them does not commute with the rules: ``symmetries`` keeps only the
    renamings that keep their order (here none but the identity)."""
    keys = {"start": "cold", "brokers": 4, "partitions_per_topic": 2, "assignment": ((0, 1), (2, 3))}
    system = ControllerSystem(ControllerConfig(**keys))
    g = Permutation((2, 3, 0, 1), (1, 0), (0,))
    assert {g(s) for s in system.init_states()} == set(system.init_states())
    assert system.symmetries() == []
    s = system.settled_state()
    for fault in (
        lambda a: isinstance(a, Crash) and a.broker == 1,
        lambda a: isinstance(a, SessionExpire) and a.broker == 3,
    ):
        s = next(t for a, t in system.successors(s) if fault(a))
    states = sample_states(_FromState(system, s), 3000, 0, 0, seed=0)
    assert equivariance_failures(system, states, g) > 0


class _FromState:
    """``system`` started in ``s``."""

    def __init__(self, system: ControllerSystem, s: State) -> None:
        self.system, self.s = system, s

    def init_states(self) -> list[State]:
        return [self.s]

    def successors(self, s: State) -> Any:
        return self.system.successors(s)


def test_a_field_left_out_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A renaming that forgets to re-index the controller context's live brokers is no longer
    equivariant, and the check finds it on the sampled states."""
    name = "spare_brokers"
    system = _system(name)
    (g,) = system.symmetries()
    states = _sample(name)
    real_ctx = renamer_module.Renamer.ctx

    def forgetful(self: Any, c: Any) -> Any:
        out = real_ctx(self, c)
        return out if out is None else out._replace(live=c.live)

    monkeypatch.setattr(renamer_module.Renamer, "ctx", forgetful)
    assert equivariance_failures(system, states, g) > 0


def test_permute_state_renames_everything() -> None:
    """A renaming and its inverse give back the state; a state with a broker down differs from
    its image."""
    system = _system("spare_brokers")
    (g,) = system.symmetries()
    s = system.init_states()[0]
    crashed = next(t for a, t in system.successors(s) if isinstance(a, Crash) and a.broker == 2)
    image = permute_state(crashed, g)
    assert image != crashed
    assert not image.nodes[3].alive and image.nodes[2].alive
    assert g.inverse()(image) == crashed
    assert dataclasses.is_dataclass(system.cfg)
