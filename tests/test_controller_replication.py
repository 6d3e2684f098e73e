"""The replication properties (``invariants/controller_replication.py``, issue 35): each holds on
the model, on the release entry that makes it live, and fails on a model with the mistake it is
there to catch (the source mutants ``replica_manager.py:200`` and ``:212`` of the measure)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from invariants.controller import properties
from invariants.controller_replication import replication_properties
from invariants.mutants.controller import ControllerConfig, build
from model.controller import State
from model.controller.actions import Fetch, Produce
from model.controller.config import FollowerTruncation

SMALL = "configs/controller-small.toml"
#: the release entry controller-records-restart
RECORDS_RESTART = ["max_records=1", "max_restarts=1", "max_crashes=2", "send_update_metadata=false"]
RECORDS_RESTART_STATES = 45048


def _set_rep(s: State, b: int, p: int, **fields: Any) -> State:
    n = s.nodes[b]
    reps = (*n.reps[:p], n.reps[p]._replace(**fields), *n.reps[p + 1 :])
    return s._replace(nodes=(*s.nodes[:b], n._replace(reps=reps), *s.nodes[b + 1 :]))


class _Wrong:
    """The model with one kind of step replaced by ``wrong(s, a, t)``."""

    def __init__(self, sys: Any, wrong: Callable[[State, Any, State], State]) -> None:
        self.sys = sys
        self.wrong = wrong

    def __getattr__(self, name: str) -> object:
        return getattr(self.sys, name)

    def successors(self, s: State) -> Iterator[tuple[Any, State]]:
        for a, t in self.sys.successors(s):
            yield a, self.wrong(s, a, t)

    def successors_labelled(self, s: State) -> Iterator[tuple[Any, State, tuple]]:
        for a, t, labels in self.sys.successors_labelled(s):
            yield a, self.wrong(s, a, t), labels


def _append_without_hw(s: State, a: Any, t: State) -> State:
    """An append that leaves the leader's high watermark where it was (and acknowledges nothing)."""
    if type(a) is not Produce:
        return t
    return _set_rep(t, a.broker, a.partition, hw=s.nodes[a.broker].reps[a.partition].hw)._replace(
        acked=s.acked
    )


def _fetch_keeping_the_head(s: State, a: Any, t: State) -> State:
    """A fetch whose follower compares the logs from offset 1: a first record that differs from
    the leader's is kept (the measure's ``replica_manager.py:212``, ``k = 1``)."""
    if type(a) is not Fetch:
        return t
    old = s.nodes[a.broker].reps[a.partition].log
    llog = t.nodes[a.leader].reps[a.partition].log
    if not old or llog[:1] == old[:1]:
        return t
    return _set_rep(t, a.broker, a.partition, log=old[:1] + llog[1:])


def _run(sys: Any, c: ControllerConfig, names: set[str]) -> Any:
    props = [p for p in properties(c) if p.name in names]
    assert {p.name for p in props} == names
    return check_bfs(sys, props, model="controller", config=c)


def test_registered_only_with_records_and_by_truncation() -> None:
    assert replication_properties(ControllerConfig()) == []
    names = [p.name for p in replication_properties(ControllerConfig(max_records=1))]
    assert names == ["leader_hw_follows_isr", "follower_log_is_leader_prefix"]
    hw_truncation = ControllerConfig(max_records=1, follower_truncation=FollowerTruncation.HIGH_WATERMARK)
    assert [p.name for p in replication_properties(hw_truncation)] == ["leader_hw_follows_isr"]


@pytest.mark.slow
def test_records_restart_entry_golden() -> None:
    """The release entry controller-records-restart: 51,508 states, every property held, the
    old leader's record truncated when it comes back (both replication properties live)."""
    c = load_config(ControllerConfig, SMALL, RECORDS_RESTART)
    r = check_bfs(build(c), properties(c), model="controller", config=c)
    assert r.exit_reason.value == "complete" and r.violations == []
    assert r.distinct_states == RECORDS_RESTART_STATES
    assert {"failover", "partition_offline_and_back", "acked_record"} <= set(r.witnesses)


def test_leader_hw_property_catches_an_append_that_does_not_advance_it() -> None:
    c = load_config(ControllerConfig, SMALL, ["max_records=1"])
    names = {"leader_hw_follows_isr"}
    assert _run(build(c), c, names).violations == []
    bad = _run(_Wrong(build(c), _append_without_hw), c, names)
    assert [v.property for v in bad.violations] == ["leader_hw_follows_isr"]
    assert bad.violations[0].trace[-1].action_kind == "Produce"


@pytest.mark.slow  # 0.8 CPU-s in a loaded default run (2026-11-29)
def test_truncation_property_catches_a_follower_keeping_a_divergent_record() -> None:
    c = load_config(ControllerConfig, SMALL, RECORDS_RESTART)
    names = {"follower_log_is_leader_prefix"}
    bad = _run(_Wrong(build(c), _fetch_keeping_the_head), c, names)
    assert [v.property for v in bad.violations] == ["follower_log_is_leader_prefix"]
    assert bad.violations[0].trace[-1].action_kind == "Fetch"
