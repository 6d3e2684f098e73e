"""Symmetry reduction (``--reduce symmetry``, ``explorer.search.symmetry``) on toys whose
symmetry is known: counts, verdicts, the length of counterexamples, traces mapped back to
real ones, and the cases where the reduction turns itself off."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from explorer.core import Property, always, reachable, transition
from explorer.engines.bfs import check_bfs
from explorer.search.symmetry import Canonicaliser, build_trace_symmetric, symmetry_setup


class Inc(NamedTuple):
    """Counter ``i`` goes up by one."""

    i: int


class Counters:
    """``n`` interchangeable counters, each counting from 0 to ``k``; every permutation of
    the counters is a symmetry."""

    def __init__(self, n: int, k: int) -> None:
        self.n, self.k = n, k

    def init_states(self) -> list[tuple[int, ...]]:
        return [(0,) * self.n]

    def successors(self, s: tuple[int, ...]) -> list[tuple[Inc, tuple[int, ...]]]:
        return [(Inc(i), (*s[:i], s[i] + 1, *s[i + 1 :])) for i in range(self.n) if s[i] < self.k]

    def is_terminal(self, s: tuple[int, ...]) -> bool:
        return True

    def symmetries(self) -> list[Callable[[tuple[int, ...]], tuple[int, ...]]]:
        perms = [p for p in itertools.permutations(range(self.n)) if list(p) != list(range(self.n))]
        return [_permuter(p) for p in perms]


def _permuter(p: tuple[int, ...]) -> Callable[[tuple[int, ...]], tuple[int, ...]]:
    def g(s: tuple[int, ...]) -> tuple[int, ...]:
        out = [0] * len(s)
        for i, v in enumerate(s):
            out[p[i]] = v
        return tuple(out)

    return g


class Deadlocking(Counters):
    """The counters, where a state with every counter at ``k`` is not terminal: a deadlock."""

    def is_terminal(self, s: tuple[int, ...]) -> bool:
        return any(v < self.k for v in s)


class OnlyFirst(Counters):
    """Only counter 0 moves: NOT symmetric, though it declares the counters' permutations."""

    def successors(self, s: tuple[int, ...]) -> list[tuple[Inc, tuple[int, ...]]]:
        return [(Inc(0), (s[0] + 1, *s[1:]))] if s[0] < self.k else []


def sym(p: Property) -> Property:
    return dataclasses.replace(p, symmetric=True)


def props(limit: int, k: int) -> list[Property]:
    return [
        sym(always("sum_small", lambda s: sum(s) < limit, "the counters add up to less than the limit")),
        sym(transition("one_step", lambda s, a, t: sum(t) == sum(s) + 1, "each step adds one")),
        sym(transition("no_top_step", lambda s, a, t: max(t) < k, "no counter reaches k")),
        sym(reachable("all_top", lambda s: min(s) == k, "every counter reaches k")),
    ]


def _replays(system: Any, trace: list[Any]) -> bool:
    """Every step of ``trace`` is a real step of ``system`` from its previous state."""
    from explorer.encoding import fingerprint

    init = {f"{fingerprint(s):016x}" for s in system.init_states()}
    if trace[0].fingerprint not in init:
        return False
    states = {f"{fingerprint(s):016x}": s for s in system.init_states()}
    prev = states[trace[0].fingerprint]
    for step in trace[1:]:
        nxt = {f"{fingerprint(t):016x}": (a, t) for a, t in system.successors(prev)}
        if step.fingerprint not in nxt or str(nxt[step.fingerprint][0]) != step.action:
            return False
        prev = nxt[step.fingerprint][1]
    return True


@pytest.mark.parametrize(("n", "k"), [(2, 2), (3, 3), (4, 2)])
def test_one_state_per_orbit(n: int, k: int) -> None:
    full = check_bfs(Counters(n, k), [], keep_going=True)
    red = check_bfs(Counters(n, k), [], keep_going=True, reduce="symmetry")
    assert full.distinct_states == (k + 1) ** n
    assert red.distinct_states == math.comb(n + k, n)  # the multisets of n values in 0..k
    assert red.max_depth == full.max_depth == n * k
    assert red.exit_reason.value == "complete"
    assert any(
        x.startswith(f"reduce symmetry: a group of {math.factorial(n)} permutations") for x in red.notes
    )


def test_same_verdicts_and_lengths_and_real_traces() -> None:
    system = Counters(3, 2)
    full = check_bfs(system, props(4, 2), keep_going=True)
    red = check_bfs(system, props(4, 2), keep_going=True, reduce="symmetry")
    assert {v.property for v in full.violations} == {v.property for v in red.violations}
    assert {v.property for v in red.violations} == {"sum_small", "no_top_step"}
    assert red.witnesses == full.witnesses == {"all_top": 6}
    for v in red.violations:
        w = next(x for x in full.violations if x.property == v.property)
        assert v.length == w.length  # the orbit graph keeps breadth-first distances
        assert _replays(system, v.trace)
    top = next(v for v in red.violations if v.property == "no_top_step")
    assert top.trace[-1].action is not None  # the violating step itself ends the trace


def test_deadlock_found_at_the_same_depth() -> None:
    full = check_bfs(Deadlocking(3, 1), [], keep_going=True)
    red = check_bfs(Deadlocking(3, 1), [], keep_going=True, reduce="symmetry")
    assert [v.property for v in red.violations] == [v.property for v in full.violations] == ["deadlock"]
    assert red.violations[0].length == full.violations[0].length == 3
    assert _replays(Deadlocking(3, 1), red.violations[0].trace)


def test_budgets_still_apply() -> None:
    red = check_bfs(Counters(4, 3), [], reduce="symmetry", max_states=10)
    assert red.exit_reason.value == "budget_exhausted" and red.distinct_states >= 10


def test_off_for_a_property_not_declared_symmetric() -> None:
    first_small = always("first_small", lambda s: s[0] < 2, "counter 0 stays below 2")
    red = check_bfs(Counters(2, 2), [first_small], keep_going=True, reduce="symmetry")
    full = check_bfs(Counters(2, 2), [first_small], keep_going=True)
    assert red.distinct_states == full.distinct_states == 9
    assert "reduce symmetry: off for this run: properties not declared symmetric: first_small" in red.notes
    assert [v.length for v in red.violations] == [v.length for v in full.violations] == [2]


def test_off_without_a_declaration_or_a_symmetry() -> None:
    class Plain:
        def init_states(self) -> list[int]:
            return [0]

        def successors(self, s: int) -> list[tuple[str, int]]:
            return [("inc", s + 1)] if s < 3 else []

        def is_terminal(self, s: int) -> bool:
            return True

    r = check_bfs(Plain(), [], reduce="symmetry")
    assert r.distinct_states == 4
    assert r.notes == ["reduce symmetry: off for this run: the system declares no symmetries (symmetries())"]

    class NoneDeclared(Counters):
        def symmetries(self) -> list[Callable[[tuple[int, ...]], tuple[int, ...]]]:
            return []

    r = check_bfs(NoneDeclared(2, 1), [], reduce="symmetry")
    assert r.distinct_states == 4
    assert any("the configuration has no symmetry" in x for x in r.notes)


def test_a_wrong_declaration_is_caught_when_a_trace_is_mapped_back() -> None:
    # only counter 0 moves, yet the counters are declared interchangeable: the reduced
    # search walks states the system never reaches, and mapping its counterexample back to
    # a real trace finds no step into the next orbit
    p = sym(always("sum_small", lambda s: sum(s) < 2, "the counters add up to less than 2"))
    with pytest.raises(RuntimeError, match="no successor in the orbit"):
        check_bfs(OnlyFirst(2, 2), [p], reduce="symmetry")
    assert check_bfs(OnlyFirst(2, 2), [p]).violations[0].length == 2


def test_canonicaliser_is_constant_on_orbits() -> None:
    system = Counters(3, 2)
    canon, notes = symmetry_setup(system, [], "symmetry")
    assert canon is not None and notes == []
    for s in itertools.product(range(3), repeat=3):
        orbit = {g(s) for g in system.symmetries()} | {s}
        assert {canon(t) for t in orbit} == {canon(s)}
        assert canon(s) in orbit


def test_trace_of_an_initial_state() -> None:
    c = Canonicaliser(Counters(2, 1).symmetries())
    steps = build_trace_symmetric(Counters(2, 1), {(0, 0): None}, (0, 0), c)
    assert len(steps) == 1 and steps[0].action is None


def test_cli_accepts_symmetry(tmp_path: Any) -> None:
    from explorer.cli import main

    out = tmp_path / "r.json"
    code = main(
        [
            "check",
            "timing-wheel",
            "--config",
            "configs/timing-wheel-small.toml",
            "--reduce",
            "symmetry",
            "--quiet",
            "--json",
            str(out),
        ]
    )
    import json

    notes = json.loads(out.read_text())["notes"]
    assert code == 0
    assert any(n.startswith("reduce symmetry: off for this run") for n in notes)


def test_release_entries_give_the_reduction_factor(tmp_path: Any) -> None:
    from explorer.config import ConfigError
    from explorer.release import load_suite, reduction_factor

    suite = tmp_path / "suite.toml"
    entry = '[[check]]\nname = "x"\nmodel = "controller"\nconfig = "{}"\n'.format(
        Path(__file__).resolve().parent.parent / "configs" / "controller-small.toml"
    )
    suite.write_text(entry + 'reduce = "symmetry"\nfull_states = 74\n')
    (e,) = load_suite(str(suite))
    assert (e.reduce, e.full_states) == ("symmetry", 74)
    assert reduction_factor(e, {"distinct_states": 37, "exit_reason": "complete"}) == 2.0
    suite.write_text(entry + "full_states = 74\n")
    with pytest.raises(ConfigError, match="full_states is the full search's count of a reduced entry"):
        load_suite(str(suite))
    suite.write_text(entry + 'reduce = "symmetry"\nfull_states = -1\n')
    with pytest.raises(ConfigError, match="full_states must be a positive integer"):
        load_suite(str(suite))


# -- the controller: the reduced and the full search agree -------------------------------------

SPARE = {"brokers": 4, "assignment": [[0, 1]], "max_restarts": 1, "send_update_metadata": False}


@pytest.mark.parametrize(
    ("sets", "full", "reduced"),
    [
        (SPARE, 19_467, 10_697),  # brokers 2 and 3 hold no replica: interchangeable
        ({**SPARE, "broker_epoch": False}, 19_083, 10_316),  # the fast bounce goes unseen
    ],
)
@pytest.mark.slow  # over a CPU-second: the ci selection runs it
def test_controller_reduced_search_agrees_with_the_full_one(
    sets: dict[str, Any], full: int, reduced: int
) -> None:
    import tomllib

    import invariants.controller as spec
    from invariants.controller import ControllerConfig

    with open(Path(__file__).resolve().parent.parent / "configs" / "controller-small.toml", "rb") as fh:
        cfg = ControllerConfig(**{**tomllib.load(fh), **sets})
    system = spec.build(cfg)
    assert len(system.symmetries()) == 1
    a = check_bfs(system, spec.properties(cfg), keep_going=True)
    b = check_bfs(spec.build(cfg), spec.properties(cfg), keep_going=True, reduce="symmetry")
    assert (a.distinct_states, b.distinct_states) == (full, reduced)
    assert {(v.property, v.length) for v in a.violations} == {(v.property, v.length) for v in b.violations}
    assert a.witnesses == b.witnesses
    assert a.max_depth == b.max_depth
    for v in b.violations:
        if v.trace:
            assert _replays(system, v.trace), v.property


def test_no_reference_configuration_has_a_symmetry() -> None:
    """So the release suite's factor for symmetry is 1.00 on all of them (docs/reduction.md)."""
    import invariants.controller as spec
    from explorer.config import load_config
    from invariants.controller import ControllerConfig

    root = Path(__file__).resolve().parent.parent / "configs"
    names = sorted(p.name for p in root.glob("controller-*.toml"))
    assert len(names) >= 10
    for name in names:
        cfg = load_config(ControllerConfig, root / name, [])
        assert spec.build(cfg).symmetries() == [], name


@pytest.mark.parametrize(
    "sets",
    [
        SPARE,
        {"brokers": 5, "assignment": [[0, 1]], "max_restarts": 1, "max_session_expiries": 1},  # a group of 6
        {
            "start": "cold",
            "brokers": 4,
            "partitions_per_topic": 2,
            "assignment": [[0, 1], [2, 3]],
            "max_restarts": 1,
            "send_update_metadata": False,
        },
    ],
)
@pytest.mark.slow  # over a CPU-second: the ci selection runs it
def test_controller_lazy_comparison_picks_the_least_image(sets: dict[str, Any]) -> None:
    """The controller decides ``g(s) < best`` without building the whole image
    (``Permutation.smaller_image``); the representative must be the least of the orbit by
    canonical encoding all the same, on breadth-first states and on random walks."""
    import random
    import tomllib

    import invariants.controller as spec
    from explorer.encoding import encode
    from invariants.controller import ControllerConfig

    with open(Path(__file__).resolve().parent.parent / "configs" / "controller-small.toml", "rb") as fh:
        cfg = ControllerConfig(**{**tomllib.load(fh), **sets})
    system = spec.build(cfg)
    perms = system.symmetries()
    assert perms
    canon = Canonicaliser(perms)
    seen: dict[Any, None] = {}
    frontier = list(system.init_states())
    while frontier and len(seen) < 1500:
        nxt = []
        for s in frontier:
            for _a, t in system.successors(s):
                if t not in seen:
                    seen[t] = None
                    nxt.append(t)
        frontier = nxt
    rng = random.Random(17)
    walks = []
    for _ in range(20):
        s = system.init_states()[0]
        for _ in range(40):
            succ = list(system.successors(s))
            if not succ:
                break
            s = rng.choice(succ)[1]
            walks.append(s)
    moved = 0
    for s in [*seen, *walks]:
        least = min([s, *(g(s) for g in perms)], key=encode)
        assert canon(s) == least
        moved += least != s
    assert moved > 0  # some states are not their own representative


@pytest.mark.slow
def test_the_release_suite_s_symmetric_entry_is_pinned() -> None:
    """``controller-spare-brokers`` in configs/release.toml: the reduced search gives the full
    one's verdicts in fewer states, and the suite's ``full_states`` is the full search's count."""
    import invariants.controller as spec
    from explorer.config import load_config
    from explorer.release import load_suite
    from invariants.controller import ControllerConfig

    root = Path(__file__).resolve().parent.parent / "configs"
    (entry,) = [e for e in load_suite(str(root / "release.toml")) if e.name == "controller-spare-brokers"]
    assert entry.reduce == "symmetry"
    cfg = load_config(ControllerConfig, entry.config, list(entry.set))
    full = check_bfs(spec.build(cfg), spec.properties(cfg), keep_going=True)
    red = check_bfs(spec.build(cfg), spec.properties(cfg), keep_going=True, reduce="symmetry")
    assert (full.distinct_states, red.distinct_states) == (entry.full_states, 11_604) == (20_374, 11_604)
    assert full.violations == red.violations == []
    assert full.witnesses == red.witnesses == {"failover": 8, "partition_offline_and_back": 13}
