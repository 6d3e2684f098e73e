"""The controller's footprint declaration (``model/controller/footprints.py``) and the property
read table (``invariants/controller_reads.py``) checked against the model on sampled reachable
states: independent actions commute and do not disable each other; every step changes only
locations its class declares; a disabled class stays disabled under steps outside its enabling
classes; a step that changes nothing a property reads leaves its verdict alone."""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.core import PropertyKind
from invariants.controller import properties
from invariants.controller_convergence import quiet
from invariants.mutants.controller import ControllerConfig, build
from model.controller.footprints import (
    QUIET_DISABLED_KINDS,
    Footprint,
    Footprints,
    changed_kinds,
    changed_locs,
)

CONFIGS = Path(__file__).resolve().parent.parent / "configs"

#: (configuration file, --set overrides, states sampled, stride)
SAMPLES = [
    ("controller-small.toml", {}, 64, 1),
    ("controller-ref.toml", {}, 1500, 5),
    ("controller-admin.toml", {}, 900, 6),
    ("controller-admin-reassign.toml", {}, 900, 6),
    ("controller-admin-shutdown.toml", {}, 900, 6),
    ("controller-admin-preferred.toml", {}, 900, 6),
    ("controller-small.toml", {"elector": "legacy", "zk_responses": "separate"}, 400, 2),
    ("controller-small.toml", {"session_expiry_handling": "queued", "max_session_expiries": 1}, 400, 2),
]


def config(name: str, sets: dict[str, Any]) -> ControllerConfig:
    with open(CONFIGS / name, "rb") as f:
        d = tomllib.load(f)
    d.update(sets)
    return ControllerConfig(**d)


def sample_states(system: Any, limit: int, stride: int) -> list[Any]:
    """The first ``limit`` states in breadth-first order, every ``stride``-th."""
    init = system.init_states()
    seen = set(init)
    frontier = list(init)
    out: list[Any] = []
    while frontier and len(out) < limit:
        nxt = []
        for s in frontier:
            out.append(s)
            for _, t in system.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return out[:limit:stride]


def after(system: Any, s: Any, a: Any) -> list[Any]:
    """The states action ``a`` (same type, same value) leads to from ``s``."""
    return [t for b, t in system.successors(s) if type(b) is type(a) and b == a]


def commutation_failures(system: Any, fp: Any, states: list[Any]) -> Iterator[str]:
    """Pairs of enabled actions declared independent that do not commute or disable each other."""
    for s in states:
        succ = list(system.successors(s))
        for (a, t), (b, u) in itertools.combinations(succ, 2):
            if not fp.independent(s, a, t, b, u):
                continue
            bt, au = after(system, t, b), after(system, u, a)
            if len(bt) != 1 or len(au) != 1 or bt[0] != au[0]:
                yield f"{a} | {b}"


@pytest.fixture(
    scope="module", params=SAMPLES, ids=lambda p: p[0] + "".join(f",{k}={v}" for k, v in p[1].items())
)
def sampled(request: Any) -> tuple[Any, Any, list[Any], ControllerConfig]:
    name, sets, limit, stride = request.param
    cfg = config(name, sets)
    system = build(cfg)
    return system, system.por_footprints(), sample_states(system, limit, stride), cfg


def test_independent_actions_commute(sampled: Any) -> None:
    system, fp, states, _ = sampled
    assert list(commutation_failures(system, fp, states)) == []


def test_the_commutation_check_catches_a_wrong_declaration() -> None:
    """Declaring every action independent of every other (empty footprints) is caught."""
    cfg = config("controller-ref.toml", {})
    system = build(cfg)

    class Careless(Footprints):
        def footprint(self, s: Any, a: Any, t: Any, changed: Any = None) -> Footprint:
            return Footprint(frozenset(), frozenset())

    assert next(commutation_failures(system, Careless(system), sample_states(system, 200, 4)), None)


def test_steps_change_only_what_their_class_declares(sampled: Any) -> None:
    system, fp, states, _ = sampled
    extra = {("acked",), ("history",), ("invalid",)}  # accumulators, first-wins
    if not fp.admin_done:
        extra.add(("done",))  # an accumulator too unless admin handlers read it
    for s in states:
        for a, t in system.successors(s):
            c = fp.class_of(a)
            static = fp.class_footprint(c)
            conc = fp.footprint(s, a, t)
            assert changed_locs(s, t) <= static.writes | extra, (str(a), changed_locs(s, t) - static.writes)
            assert conc.writes <= static.writes and conc.reads <= static.reads | conc.writes, str(a)


def test_disabled_classes_stay_disabled_without_their_enablers(sampled: Any) -> None:
    system, fp, states, _ = sampled
    for s in states[::3]:
        succ = list(system.successors(s))
        enabled = {fp.class_of(a) for a, _ in succ}
        for c in fp.classes:
            if c in enabled:
                continue
            enablers = fp.enabling_classes(s, c)
            for a, t in succ:
                if fp.class_of(a) in enablers:
                    continue
                woke = [b for b, _ in system.successors(t) if fp.class_of(b) == c]
                assert not woke, f"{c} enabled by {a} outside {sorted(enablers)}"


def test_steps_that_change_nothing_read_keep_each_verdict(sampled: Any) -> None:
    system, fp, states, cfg = sampled
    props = [p for p in properties(cfg) if p.kind is not PropertyKind.EVENTUALLY]
    assert all(p.reads is not None for p in props), [p.name for p in props if p.reads is None]
    checked = 0
    for s in states:
        for a, t in system.successors(s):
            kinds = {loc[0] for loc in fp.changed_locs(s, t)}
            for p in props:
                reads = {r for r in p.reads if not r.startswith("@")}
                if "@quiet" in p.reads and type(a).__name__ in QUIET_DISABLED_KINDS:
                    continue  # covered by test_quiet_disabled_kinds_are_never_enabled_when_quiet
                if kinds & reads:
                    continue
                checked += 1
                if p.kind is PropertyKind.TRANSITION:
                    assert p.check(s, a, t), (p.name, str(a))
                else:
                    assert p.check(s) == p.check(t), (p.name, str(a))
    assert checked


def test_quiet_disabled_kinds_are_never_enabled_when_quiet(sampled: Any) -> None:
    system, _, states, _ = sampled
    for s in states:
        if quiet(s):
            kinds = {type(a).__name__ for a, _ in system.successors(s)}
            assert not kinds & QUIET_DISABLED_KINDS


def test_the_visibility_shortcut_agrees_with_the_changed_locations(sampled: Any) -> None:
    """``changes_any`` (the reduction's visibility test, which stops at the first changed
    location of the kinds asked for) and ``changed_kinds`` agree with the kinds of
    ``changed_locs`` on every sampled step, for every kind alone and for the kinds each
    property reads."""
    system, fp, states, cfg = sampled
    kinds_asked = {frozenset({k}) for k in KINDS}
    kinds_asked |= {
        frozenset(r for r in p.reads if not r.startswith("@")) for p in properties(cfg) if p.reads
    }
    steps = 0
    for s in states:
        for _, t in system.successors(s):
            changed = {loc[0] for loc in changed_locs(s, t)}
            assert changed_kinds(s, t) == changed
            assert changed <= set(KINDS)
            for kinds in kinds_asked:
                assert fp.changes_any(s, t, kinds) == bool(changed & kinds), (sorted(kinds), sorted(changed))
            steps += 1
    assert steps > len(states)


#: every location kind of the declaration
KINDS = (
    "zk", "zks", "alive", "sess", "bep", "ctl", "ctx", "pend", "ev", "zo", "zi", "seen", "rep", "log",
    "cs", "mc", "ch", "acked", "produced", "crashes", "restarts", "expiries", "invalid", "history",
    "done", "shutdowns",
)  # fmt: skip
