"""The duplicate-delivery fault (``model/controller/faults/duplicate_delivery.py``): a controller
request applied by its broker whose response is lost, so Kafka's ``RequestSendThread`` sends it
again. Off by default (no golden count moves); with a budget it is enabled, bounded, applies the
request without consuming it or running its response callback, replays from a trace, and every
property still holds on the small configurations (Kafka's epoch checks make the requests
idempotent)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.api import CheckOptions, check
from explorer.tracefile import replay_steps
from invariants.controller import properties
from model.controller import ControllerConfig, ControllerSystem
from model.controller.coverage import sequence_arrow
from model.controller.faults import rules, spent
from model.controller.faults.duplicate_delivery import DuplicateDelivery

ROOT = Path(__file__).resolve().parent.parent


def small(**sets: Any) -> ControllerConfig:
    d = tomllib.loads((ROOT / "configs" / "controller-small.toml").read_text())
    return ControllerConfig(**{**d, **sets})


def reachable(system: ControllerSystem) -> Iterator[tuple[Any, Any, Any]]:
    """Every (state, action, successor) of a breadth-first search."""
    seen = set(system.init_states())
    frontier = list(seen)
    while frontier:
        nxt = []
        for s in frontier:
            for a, t in system.successors(s):
                yield s, a, t
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt


def the_rule() -> Any:
    (rule,) = [r for r in rules() if r.action is DuplicateDelivery]
    return rule


def test_off_by_default() -> None:
    system = ControllerSystem(small())
    assert "DuplicateDelivery" not in system.action_kinds()
    assert not any(isinstance(a, DuplicateDelivery) for _, a, _ in reachable(system))


#: (overrides of controller-small, distinct states); budget 0 is controller-small's golden count
GOLDEN = [({}, 74), ({"max_duplicate_deliveries": 1}, 126), ({"max_duplicate_deliveries": 2}, 178)]


@pytest.mark.parametrize("sets,count", GOLDEN, ids=lambda x: str(x))
def test_state_counts_are_pinned_and_every_property_holds(sets: dict[str, Any], count: int) -> None:
    cfg = small(**sets)
    r = check(ControllerSystem(cfg), properties(cfg), CheckOptions(engine="bfs"))
    assert r.distinct_states == count
    assert not r.violations
    declared = "DuplicateDelivery" in r.coverage["declared_action_kinds"]
    assert declared == bool(sets)
    assert ("DuplicateDelivery" in r.coverage["actions"]) == bool(sets)


@pytest.mark.slow  # 0.8 CPU-s in a loaded default run (2026-11-29)
def test_the_step_applies_the_request_keeps_it_queued_and_loses_the_response() -> None:
    system = ControllerSystem(small(max_duplicate_deliveries=1, max_restarts=1))
    rule = the_rule()
    steps = 0
    for s, a, t in reachable(system):
        if not isinstance(a, DuplicateDelivery):
            continue
        steps += 1
        nb = system.nb
        i = a.sender * nb + a.dest
        assert t.chans == s.chans and s.chans[i][0] == a.msg  # still at the head, to be resent
        # the broker's side is what an ordinary delivery of the same request does
        (_, delivered) = system.replica_manager.deliver(s, a.sender, a.dest)
        assert t.nodes[a.dest]._replace(events=()) == delivered.nodes[a.dest]._replace(events=())
        # no response callback at the sender, whose node is otherwise untouched
        assert t.nodes[a.sender].events == s.nodes[a.sender].events
        assert spent(t, rule) == spent(s, rule) + 1 == 1
        assert sequence_arrow(a)[:2] == (f"broker {a.sender}", f"broker {a.dest}")
        assert str(a).startswith(f"broker {a.dest}: receives again ")
    assert steps > 100


def test_the_budget_bounds_the_fault_on_every_path() -> None:
    system = ControllerSystem(small(max_duplicate_deliveries=2))
    rule = the_rule()
    most = 0
    for s, a, t in reachable(system):
        if spent(s, rule) >= 2:
            assert not isinstance(a, DuplicateDelivery)
        most = max(most, spent(t, rule))
    assert most == 2


def test_a_trace_with_a_duplicate_replays() -> None:
    from explorer.encoding import fingerprint

    system = ControllerSystem(small(max_duplicate_deliveries=1))
    parent: dict[Any, Any] = {}
    target = None
    for s, a, t in reachable(system):
        if t not in parent and t not in system.init_states():
            parent[t] = (s, a)
        if isinstance(a, DuplicateDelivery) and target is None:
            target = t
    assert target is not None
    path = []
    cur = target
    while cur in parent:
        s, a = parent[cur]
        path.append({"action": str(a), "fingerprint": f"{fingerprint(cur):016x}"})
        cur = s
    path.append({"action": None, "fingerprint": f"{fingerprint(cur):016x}"})
    states = replay_steps(system, list(reversed(path)))
    assert states[-1] == target


@pytest.mark.slow  # 1.0 CPU-s in a loaded default run (2026-11-29)
def test_the_fault_grows_the_state_space() -> None:
    """The fault reaches states nothing else does (9,886 against 3,344 with a restart)."""
    counts = []
    for d in (0, 1):
        cfg = small(max_restarts=1, max_duplicate_deliveries=d)
        counts.append(check(ControllerSystem(cfg), [], CheckOptions(engine="bfs")).distinct_states)
    assert counts == [3344, 9886]


def test_the_budget_is_a_config_key_with_bounds() -> None:
    from explorer.config import ConfigError, load_config

    with pytest.raises((ConfigError, ValueError), match="max_duplicate_deliveries"):
        load_config(ControllerConfig, None, ["max_duplicate_deliveries=-1"])
