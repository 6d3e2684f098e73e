"""Incremental property checking (issue 56, ``explorer/search/incremental.py``): the declared
slices cover what each property reads, the C masks equal the pure-Python ones, and the serial
search finds the same counts, witnesses and first violations with it as without it."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.core import PropertyKind, always
from explorer.engines.bfs import check_bfs
from explorer.search import incremental
from explorer.search.incremental import Slicer, slices_read
from explorer.search.monitor import PropertyMonitor
from invariants.controller_slices import SLICES
from invariants.mutants.controller import ControllerConfig

SMALL = "configs/controller-small.toml"
TWO = ["brokers=2", "replication_factor=2", "max_crashes=1", "max_restarts=1", "max_session_expiries=1"]


def _reachable(c: ControllerConfig, limit: int) -> tuple[Any, list[tuple[Any, Any]]]:
    """The system of ``c`` and (parent, child) pairs of the steps from its first ``limit``
    states, breadth first (:func:`_steps` has their actions)."""
    sys, steps = _steps(c, limit)
    return sys, [(s, t) for s, _, t in steps]


def _steps(c: ControllerConfig, limit: int) -> tuple[Any, list[tuple[Any, Any, Any]]]:
    """The system of ``c`` and the steps (s, a, t) from its first ``limit`` states."""
    sys = spec.build(c)
    init = sys.init_states()
    seen = dict.fromkeys(init)
    front, pairs = list(init), []
    while front and len(seen) < limit:
        nxt = []
        for s in front:
            for a, t in sys.successors(s):
                pairs.append((s, a, t))
                if t not in seen:
                    seen[t] = s
                    nxt.append(t)
        front = nxt
    return sys, pairs


CONFIGS = [
    (SMALL, ["max_session_expiries=1", "max_records=1"]),
    (None, TWO),
    ("configs/controller-admin.toml", []),
]


@pytest.mark.parametrize("path, overrides", CONFIGS)
def test_declared_slices_cover_reads(path: str | None, overrides: list[str]) -> None:
    """Every declared property reads, on sampled reachable states, only slices it declares."""
    c = load_config(ControllerConfig, path, overrides)
    _, pairs = _reachable(c, 1500)
    slicer = Slicer.of(pairs[0][0])
    assert slicer is not None
    props = [p for p in spec.sliced_properties(c) if p.slices is not None and p.kind is PropertyKind.ALWAYS]
    assert {p.name for p in props} <= set(SLICES) and len(props) >= 10
    states = random.Random(0).sample([t for _, t in pairs], 200)
    for p in props:
        declared = slicer.mask(p.slices)
        assert declared != -1, f"{p.name} names a slice the state lacks"
        for s in states:
            for name in slices_read(p.check, s, slicer):
                assert name != "state" and slicer.mask([name]) & ~declared == 0, (p.name, name)


@pytest.mark.parametrize("path, overrides", CONFIGS)
def test_transitions_hold_outside_their_slices(path: str | None, overrides: list[str]) -> None:
    """Every declared transition property holds on each step of a prefix that changes none of
    its slices (what lets the search skip it there)."""
    c = load_config(ControllerConfig, path, overrides)
    _, steps = _steps(c, 1500)
    slicer = Slicer.of(steps[0][0])
    assert slicer is not None
    props = [
        p for p in spec.sliced_properties(c) if p.slices is not None and p.kind is PropertyKind.TRANSITION
    ]
    assert len(props) >= 12
    for p in props:
        mask = slicer.mask(p.slices)
        assert mask != -1, f"{p.name} names a slice the state lacks"
        skipped = [(s, a, t) for s, a, t in steps if not slicer.changed(s, t) & mask]
        assert skipped
        assert all(p.check(s, a, t) for s, a, t in skipped), p.name


def test_an_undeclared_read_is_caught() -> None:
    """The coverage check above can fail: a property reading a slice it does not declare."""
    c = load_config(ControllerConfig, SMALL, [])
    sys = spec.build(c)
    s = sys.init_states()[0]
    slicer = Slicer.of(s)
    assert slicer is not None
    read = slices_read(lambda s: s.zk.epoch > 0 and s.crashes >= 0, s, slicer)
    assert read == {"zk.epoch", "crashes"}
    assert slicer.mask(read) & ~slicer.mask(["zk.epoch"]) != 0


@pytest.mark.parametrize("path, overrides", CONFIGS)
def test_c_masks_equal_python(path: str | None, overrides: list[str]) -> None:
    """The accelerator's masks are the pure-Python reference's on every step of a prefix."""
    if incremental.ACTIVE != "C":
        pytest.skip("explorer._incremental is not built")
    c = load_config(ControllerConfig, path, overrides)
    _, pairs = _reachable(c, 1000)
    slicer = Slicer.of(pairs[0][0])
    assert slicer is not None and slicer._c is not None
    seen = 0
    masker = slicer.masker()  # the C Masker: the same mask, its last step remembered
    assert masker is not slicer.changed
    for s, t in pairs:
        got = slicer.changed(s, t)
        assert got == slicer.changed_py(s, t)
        assert masker(s, t) == got and masker(s, t) == got
        seen |= got
    assert len(slicer.names(seen)) > 10  # the steps changed many slices, each compared
    s, t = pairs[-1]
    assert masker(t, s) == slicer.changed_py(t, s) and masker(s, s) == slicer.changed_py(s, s)


def _both(
    c: ControllerConfig, monkeypatch: pytest.MonkeyPatch, declared: bool = False, **kw: Any
) -> tuple[Any, Any]:
    """The serial bfs on ``c`` with every property (slices declared; ``declared``: only those
    with slices), incremental and full."""
    props = [p for p in spec.sliced_properties(c) if p.slices is not None or not declared]
    res = []
    for inc in (True, False):
        monkeypatch.setattr(PropertyMonitor, "incremental", inc)
        res.append(check_bfs(spec.build(c), props, model="controller", config=c, **kw))
    return res[0], res[1]


def _same(a: Any, b: Any) -> None:
    assert a.exit_reason == b.exit_reason and a.distinct_states == b.distinct_states
    assert a.witnesses == b.witnesses
    assert [(v.property, v.length, [str(x.action) for x in v.trace]) for v in a.violations] == [
        (v.property, v.length, [str(x.action) for x in v.trace]) for v in b.violations
    ]


# mutants and variants that break declared properties (tests/test_controller.py pins each)
BREAKING = [
    pytest.param(
        SMALL, ["mutant=no-epoch-bump", "max_session_expiries=1"], "one_controller_per_epoch", id="epoch"
    ),
    pytest.param(
        SMALL, ["mutant=skip-replica-init", "max_session_expiries=1"], "valid_transitions", id="init"
    ),
    pytest.param(
        SMALL,
        ["mutant=failover-keeps-old-epoch", "max_session_expiries=1"],
        "controller_znode_valid",
        id="old",
    ),
    pytest.param(
        SMALL,
        ["mutant=leader-outside-isr", "max_session_expiries=1", "session_expiry_handling=queued"],
        "leader_in_isr",
        id="leader-outside-isr",
    ),
    pytest.param(
        None, [*TWO, "session_expiry_handling=queued"], "controller_znode_valid", id="queued-expiry"
    ),
]


@pytest.mark.parametrize("path, overrides, prop", BREAKING)
def test_incremental_finds_the_same_violations(
    path: str | None, overrides: list[str], prop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The declared properties on a breaking model: the same first violation (the pinned
    property, its trace step by step) after the same states as full checking."""
    c = load_config(ControllerConfig, path, overrides)
    inc, full = _both(c, monkeypatch, declared=True)
    assert prop in [v.property for v in full.violations]
    _same(inc, full)


def test_a_wrong_declaration_changes_the_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a property that reads ``crashes`` but declares another slice is
    skipped on the crash step, so incremental checking misses its shortest violation (it
    meets a later one, on a step that changes ``zk.epoch``)."""
    c = load_config(ControllerConfig, SMALL, [])
    prop = always("no_crash", lambda s: s.crashes == 0, "no broker crashes")
    results = []
    for slices in (frozenset({"crashes"}), frozenset({"zk.epoch"})):
        monkeypatch.setattr(PropertyMonitor, "incremental", True)
        p = dataclasses.replace(prop, slices=slices)
        results.append(check_bfs(spec.build(c), [p], model="controller", config=c))
    monkeypatch.setattr(PropertyMonitor, "incremental", False)
    full = check_bfs(spec.build(c), [prop], model="controller", config=c)
    _same(results[0], full)
    assert [v.length for v in full.violations] == [1]
    assert [v.length for v in results[1].violations] != [1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "path, overrides",
    [
        (SMALL, ["max_records=1"]),
        (None, TWO),
        ("configs/controller-admin.toml", []),
        ("configs/controller-admin-preferred.toml", []),
        ("configs/controller-ref.toml", ["max_states=60000"]),
    ],
)
def test_incremental_matches_full_on_reference_configs(
    path: str | None, overrides: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reference configurations (controller-ref's first 60,000 states): the same result."""
    budget = [o for o in overrides if o.startswith("max_states=")]
    c = load_config(ControllerConfig, path, [o for o in overrides if o not in budget])
    kw: dict[str, Any] = {"keep_going": True}
    if budget:
        kw["max_states"] = int(budget[0].split("=")[1])
    inc, full = _both(c, monkeypatch, **kw)
    _same(inc, full)


def test_kinds_without_slices_are_evaluated() -> None:
    """A property without slices gets every bit: it is checked on every state."""
    c = load_config(ControllerConfig, SMALL, [])
    s = spec.build(c).init_states()[0]
    slicer = Slicer.of(s)
    assert slicer is not None
    assert slicer.mask(None) & slicer.changed(s, s) != 0
    kinds = (PropertyKind.ALWAYS, PropertyKind.TRANSITION)
    assert all(p.kind in kinds for p in spec.sliced_properties(c) if p.slices is not None)


def test_gated_properties_are_grouped_in_order() -> None:
    """Consecutive properties whose checks share a gate (``gated``) are one group in
    ``check_child``: the gate once a state, the bodies only where it holds; a property between
    two of them splits the run; the findings and their order are ``check_state``'s."""
    from invariants.controller_guards import gated

    calls: list[str] = []

    def gate(s: Any) -> bool:
        calls.append("gate")
        return bool(s.b)

    def body(name: str, bad: int) -> Any:
        def check(s: Any) -> bool:
            calls.append(name)
            return s.a != bad

        check.__name__ = name
        return gated(gate)(check)

    class S(tuple):  # a record of two fields, as the slicer reads them
        _fields = ("a", "b")
        a = property(lambda self: self[0])
        b = property(lambda self: self[1])

    props = [
        always("g1", body("g1", 1), ""),
        always("g2", body("g2", 2), ""),
        dataclasses.replace(always("plain", lambda s: s.a != 3, ""), slices=frozenset({"b"})),
        always("g3", body("g3", 1), ""),
    ]
    inc = PropertyMonitor(props, keep_going=True)
    full = PropertyMonitor(props, keep_going=True)
    s0 = S((0, 0))
    inc.check_state(s0, 0)
    full.check_state(s0, 0)
    calls.clear()
    # "plain" skipped (its slice b unchanged), so g1, g2, g3 are one run; the gate fails
    inc.check_child(S((1, 0)), 1, s0)
    assert calls == ["gate"] and not inc.found
    calls.clear()
    inc.check_child(S((1, 1)), 2, s0)  # "plain" evaluated: it splits the run
    assert calls == ["gate", "g1", "g2", "gate", "g3"]
    full.check_state(S((1, 1)), 2)
    for i, s in enumerate([S((2, 1)), S((3, 1))], 3):
        inc.check_child(s, i, s0)
        full.check_state(s, i)
    assert list(inc.found) == list(full.found) == ["g1", "g3", "g2", "plain"]
    assert [(f.at, f.message) for f in inc.found.values()] == [(f.at, f.message) for f in full.found.values()]


@pytest.mark.parametrize(
    "path, overrides, prop",
    [
        (SMALL, ["mutant=failover-dead-leader-online"], "no_leaderless_partition_when_quiet"),
        (None, [*TWO, "max_session_expiries=0", "mutant=bounce-off-by-one"], "broker_views_match_zookeeper"),
    ],
)
def test_gated_groups_find_the_same_violations(
    path: str | None, overrides: list[str], prop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every property (the "once quiet" ones grouped under their gate) on mutants that break
    them, with ``--continue``: the same first violation of each, trace by trace, as full
    checking."""
    c = load_config(ControllerConfig, path, overrides)
    inc, full = _both(c, monkeypatch, keep_going=True)
    assert prop in [v.property for v in full.violations]
    _same(inc, full)
