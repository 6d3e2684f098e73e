"""Tests of the purgatory model: golden counts, mutants, config errors, hand-built steps."""

from __future__ import annotations

from pathlib import Path

import pytest

import invariants.purgatory as spec_module
from explorer.config import ConfigError, load_config
from explorer.core import ExitReason
from explorer.encoding import encode
from explorer.engines.bfs import check_bfs
from invariants.mutants.purgatory import MUTANTS, PurgatoryConfig  # with the test-only mutant key
from model.purgatory.actions import ACTION_KINDS
from model.purgatory.state import (
    C_CHECK,
    C_NEXT,
    C_START,
    E_ON_EXPIRATION,
    FC_CAS,
    IDLE,
    M_CLEAR,
    M_GETSET,
    M_TRYLOCK,
    M_WHILE,
    MAYBE,
    P_KEY,
    PATH_CHECK_AND_COMPLETE,
    PATH_SECOND_TRY,
    RUN,
    T_ADD,
    T_ADDED,
    T_CANCEL,
    T_NONE,
    T_RECHECK,
    Op,
    Thread,
)
from model.purgatory.system import PurgatorySystem

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "configs" / "purgatory-small.toml"
REF = ROOT / "configs" / "purgatory-ref.toml"
SPEC = spec_module.SPEC

SMALL_STATES = 4068
REF_STATES = 183775
MULTI_KEY_STATES = 33023
TWO_FETCHERS_STATES = 120370

ALL_WITNESSES = {
    "completed_on_first_try",
    "completed_on_second_try",
    "completed_by_check_and_complete",
    "completed_by_expiry",
    "try_lock_failed_pending_set",
    "lost_cas_race",
    "timer_entry_of_completed_op_cancelled",
    "completed_op_left_watched_at_end",
}

#: mutant -> the one property it must break
MUTANT_BREAKS = {
    "no_cas": "on_complete_at_most_once",
    "expire_unchecked": "on_expiration_only_if_expiry_won",
    "no_retry": "no_lost_wakeup",
    "no_second_try": "no_lost_wakeup",
    "no_remove": "completed_removed_by_next_traversal",
    "no_timer": "every_op_completed_once_at_end",
}


def run(config: PurgatoryConfig):
    return check_bfs(SPEC.build(config), SPEC.properties(config), model="purgatory", config=config)


def small(**kw) -> PurgatoryConfig:
    return load_config(PurgatoryConfig, SMALL, values=kw or None)


def props_by_name(config: PurgatoryConfig) -> dict:
    return {p.name: p for p in SPEC.properties(config)}


# ----------------------------------------------------------------------------- golden runs


def test_small_golden() -> None:
    r = run(small())
    assert r.exit_reason is ExitReason.COMPLETE
    assert r.violations == []
    assert r.distinct_states == SMALL_STATES
    assert set(r.witnesses) == ALL_WITNESSES
    assert r.coverage["never_enabled"] == ["LeadershipLost"]
    assert r.coverage["undeclared"] == []
    for name in ("on_complete_at_most_once", "no_lost_wakeup", "every_op_completed_once_at_end"):
        assert not r.properties[name].get("vacuous"), name


@pytest.mark.slow
def test_ref_golden() -> None:
    config = load_config(PurgatoryConfig, REF)
    r = run(config)
    assert r.exit_reason is ExitReason.COMPLETE
    assert r.violations == []
    assert r.distinct_states == REF_STATES
    assert set(r.witnesses) == ALL_WITNESSES
    assert r.coverage["never_enabled"] == []
    assert r.coverage["undeclared"] == []
    assert not any(entry.get("vacuous") for entry in r.properties.values())


@pytest.mark.slow
def test_multi_key_golden() -> None:
    """One produce request on two partitions: the watch loop's 'if completed return false'."""
    r = run(small(partitions=2, keys_per_op=2))
    assert r.exit_reason is ExitReason.COMPLETE
    assert r.violations == []
    assert r.distinct_states == MULTI_KEY_STATES


@pytest.mark.slow
def test_two_fetchers_golden() -> None:
    """Two followers' fetches, each followed by checkAndComplete on its own fetcher thread."""
    r = run(small(fetchers=2, replicas=3))
    assert r.exit_reason is ExitReason.COMPLETE
    assert r.violations == []
    assert r.distinct_states == TWO_FETCHERS_STATES
    assert set(r.witnesses) == ALL_WITNESSES


def test_timer_disabled_holds_without_expiry_witnesses() -> None:
    r = run(small(expiry=False))
    assert r.exit_reason is ExitReason.COMPLETE, [v.property for v in r.violations]
    assert "completed_by_expiry" not in r.properties
    assert "lost_cas_race" not in r.properties


def test_no_progress_op_waits_for_expiry() -> None:
    """No fetch ever happens: the op completes only by expiry, and all properties hold."""
    r = run(small(fetch_budget=0))
    assert r.exit_reason is ExitReason.COMPLETE, [v.property for v in r.violations]
    assert set(r.witnesses) == {"completed_by_expiry"}


# ----------------------------------------------------------------------------- mutants


def test_every_mutant_has_an_expectation() -> None:
    assert set(MUTANT_BREAKS) == set(MUTANTS.names()) - {"none"}


@pytest.mark.parametrize("mutant", sorted(MUTANT_BREAKS))
def test_mutant_breaks_its_property(mutant: str) -> None:
    r = run(small(mutant=mutant))
    assert r.exit_reason is ExitReason.VIOLATION
    assert [v.property for v in r.violations] == [MUTANT_BREAKS[mutant]]
    assert r.violations[0].length > 0


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(MUTANT_BREAKS))
def test_mutant_breaks_its_property_in_ref(mutant: str) -> None:
    config = load_config(PurgatoryConfig, REF, values={"mutant": mutant})
    r = run(config)
    assert [v.property for v in r.violations] == [MUTANT_BREAKS[mutant]]


def test_no_retry_trace_shows_the_lost_wakeup() -> None:
    r = run(small(mutant="no_retry"))
    actions = [step.action for step in r.violations[0].trace if step.action]
    assert any("lock.tryLock() = false" in a for a in actions)
    assert any("tryCompletePending.getAndSet(true) = false, retry = false" in a for a in actions)


# ----------------------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"keys_per_op": 2}, "keys_per_op: must be at most partitions (1), got 2"),
        ({"handlers": 2}, "handlers: must be at most ops (1), got 2"),
        ({"leader_changes": 2}, "leader_changes: must be at most partitions (1), got 2"),
        ({"ops": 2}, "required_offsets: needs one value per op (2), got 1"),
        ({"required_offsets": [2]}, "required_offsets[0]: must be at most max_offset (1), got 2"),
        ({"mutant": "nope"}, "mutant: expected one of none, no_cas"),
        ({"fetchers": 3}, "fetchers: must be at most 2, got 3"),
        ({"colour": 1}, "unknown key 'colour'"),
    ],
)
def test_config_errors(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        small(**overrides)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_config_from_set_overrides() -> None:
    c = load_config(PurgatoryConfig, REF, overrides=["fetchers=2", "expiry=false"])
    assert (c.fetchers, c.expiry, c.ops) == (2, False, 2)


# ----------------------------------------------------------------------------- hand-built states


@pytest.fixture
def sys1() -> PurgatorySystem:
    return PurgatorySystem(small())


def by_kind(sys: PurgatorySystem, s, kind: str):
    found = [(a, t) for a, t in sys.successors(s) if type(a).__name__ == kind]
    assert len(found) == 1, [str(a) for a, _ in sys.successors(s)]
    return found[0]


def test_state_is_encodable_and_deterministic(sys1: PurgatorySystem) -> None:
    s0 = sys1.init_states()[0]
    assert encode(s0) == encode(sys1.init_states()[0])
    first = [(str(a), t) for a, t in sys1.successors(s0)]
    assert first == [(str(a), t) for a, t in sys1.successors(s0)]
    assert set(sys1.action_kinds()) <= set(ACTION_KINDS)


def test_try_lock_fails_and_sets_pending(sys1: PurgatorySystem) -> None:
    s0 = sys1.init_states()[0]
    # the handler (thread 0) holds op 0's lock; the fetcher (thread 1) is about to tryLock
    op = Op(acks=1, lock=0)
    handler = Thread(M_CLEAR, op=0, ctx=MAYBE)  # between its tryLock and tryCompletePending.set(false)
    fetcher = Thread(M_TRYLOCK, op=0, ctx=MAYBE, key=0)
    s = s0._replace(threads=(handler, fetcher, *s0.threads[2:]), ops=(op,), watched=(1,), order=((0,),))
    a, t = by_kind(sys1, s, "TryLock")
    assert not a.acquired and t.threads[1].pc == M_GETSET
    a, t = by_kind(sys1, t, "GetAndSetPending")
    assert not a.old and a.retry and t.ops[0].pending
    assert t.threads[1].pc == M_WHILE and t.threads[1].retry
    a, t = by_kind(sys1, t, "LoopCheck")
    assert a.again and t.threads[1].pc == M_TRYLOCK


def test_expiry_loses_cas_and_skips_on_expiration(sys1: PurgatorySystem) -> None:
    s0 = sys1.init_states()[0]
    op = Op(acks=0, completed=True, completions=1, by=PATH_CHECK_AND_COMPLETE)
    executor = Thread(FC_CAS, op=0, ctx=RUN)
    s = s0._replace(threads=(*s0.threads[:3], executor), ops=(op,))
    a, t = by_kind(sys1, s, "CompareAndSet")
    assert not a.won and t.ops[0].lost_cas and t.threads[3] == Thread()
    mutated = SPEC.build(small(mutant="expire_unchecked"))
    a, t = by_kind(mutated, s, "CompareAndSet")
    assert t.threads[3].pc == E_ON_EXPIRATION
    a, t = by_kind(mutated, t, "OnExpiration")
    assert not props_by_name(small())["on_expiration_only_if_expiry_won"].check(t)


def test_timer_add_after_completion_is_cancelled(sys1: PurgatorySystem) -> None:
    s0 = sys1.init_states()[0]
    # op 0 was completed by the fetcher between the handler's "if (!isCompleted)" and the add
    op = Op(acks=0, completed=True, completions=1, by=PATH_CHECK_AND_COMPLETE)
    handler = Thread(T_ADD, op=0)
    s = s0._replace(threads=(handler, *s0.threads[1:]), ops=(op,), watched=(1,), order=((0,),), est=1)
    a, t = by_kind(sys1, s, "TimerAdd")
    assert t.ops[0].timer == T_ADDED and t.threads[0].pc == T_RECHECK
    a, t = by_kind(sys1, t, "TimerRecheck")
    assert a.completed and t.threads[0].pc == T_CANCEL
    assert props_by_name(small())["timer_entry_of_completed_op_cancelled"].check(t)
    a, t = by_kind(sys1, t, "TimerCancel")
    assert a.removed and t.ops[0].timer == T_NONE and t.threads[0] == Thread(next=1)


def test_iterator_walks_watch_order_and_removes_completed() -> None:
    sys = PurgatorySystem(small(ops=2, required_offsets=[1, 1]))
    s0 = sys.init_states()[0]
    ops = (Op(acks=1, completed=True, completions=1, by=PATH_SECOND_TRY), Op(acks=1))
    fetcher = Thread(C_START, key=0)
    s = s0._replace(threads=(s0.threads[0], fetcher, *s0.threads[2:]), ops=ops, order=((1, 0),), watched=(3,))
    a, t = by_kind(sys, s, "IteratorStart")
    assert a.first == 1 and t.threads[1].snap == 1 and t.threads[1].pc == C_NEXT
    a, t = by_kind(sys, t, "IteratorNext")
    assert (a.cur, a.nxt) == (1, 0) and t.threads[1].pc == C_CHECK
    a, t = by_kind(sys, t, "WatchedCheck")
    assert not a.completed and t.threads[1].pc == M_TRYLOCK
    # skip op 1's maybeTryComplete: pretend it returned false
    t = t._replace(threads=(t.threads[0], Thread(C_NEXT, op=1, key=0, nxt=0, snap=1), *t.threads[2:]))
    a, t = by_kind(sys, t, "IteratorNext")
    assert (a.removed, a.cur, a.nxt) == (-1, 0, -1)
    a, t = by_kind(sys, t, "WatchedCheck")
    assert a.completed and t.watched == (2,)
    a, t2 = by_kind(sys, t, "CheckAndCompleteDone")
    prop = props_by_name(small(ops=2, required_offsets=[1, 1]))["completed_removed_by_next_traversal"]
    assert prop.check(t, a, t2) and t2.threads[1] == Thread()


def test_purge_removes_only_completed() -> None:
    sys = PurgatorySystem(small(ops=2, required_offsets=[1, 1]))
    s0 = sys.init_states()[0]
    ops = (Op(acks=1), Op(acks=0, completed=True, completions=1, by=PATH_SECOND_TRY))
    s = s0._replace(ops=ops, order=((0, 1),), watched=(3,), est=2)
    a, t = by_kind(sys, s, "PurgeStart")
    assert (a.est, a.delayed) == (2, 0) and t.est == 0 and t.threads[sys.reaper] == Thread(P_KEY, i=0)
    a, t = by_kind(sys, t, "PurgeKey")
    assert a.removed == 2 and t.watched == (1,) and t.threads[sys.reaper].pc == IDLE


def test_lost_wakeup_property_on_crafted_state(sys1: PurgatorySystem) -> None:
    s0 = sys1.init_states()[0]
    # HW reached, handler done, fetcher idle, yet op 0 is not completed: a lost wake-up
    s = s0._replace(
        threads=(Thread(next=1), *s0.threads[1:]), leo=((1,),), ops=(Op(acks=1),), watched=(1,), order=((0,),)
    )
    p = props_by_name(small())["no_lost_wakeup"]
    assert p.applies(s) and not p.check(s)
    # while the fetcher still runs checkAndComplete on the key, it is not (yet) lost
    busy = s._replace(threads=(s.threads[0], Thread(C_START, key=0), *s.threads[2:]))
    assert p.check(busy) and not p.applies(busy)


def test_at_most_once_on_crafted_state(sys1: PurgatorySystem) -> None:
    s0 = sys1.init_states()[0]
    s = s0._replace(ops=(Op(acks=0, completed=True, completions=2),))
    assert not props_by_name(small())["on_complete_at_most_once"].check(s)


def test_action_strings_read_like_log_lines(sys1: PurgatorySystem) -> None:
    s0 = sys1.init_states()[0]
    texts = [str(a) for a, _ in sys1.successors(s0)]
    assert texts == [
        "handler 0: tryCompleteElseWatch(op 0) starts: tryComplete() partition 0 HW 0 < requiredOffset 1, "
        "acks pending; tryComplete() returns false",
        "fetcher 0: follower 1 of partition 0 fetches: LEO 0 -> 1, HW 0 -> 1",
    ]
