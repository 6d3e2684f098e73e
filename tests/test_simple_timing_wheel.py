"""The seed 004 simple timing-wheel demo: golden counts, the demo's bugs, mutants, steps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from explorer.config import ConfigError, load_config
from explorer.core import CheckResult
from explorer.encoding import fingerprint
from explorer.engines.bfs import check_bfs
from invariants import get_model
from invariants.mutants.simple_timing_wheel import MUTANTS, SimpleTimingWheelConfig  # with the mutant key
from invariants.simple_timing_wheel import SPEC, added_count, projected_fire_tick
from model.simple_timing_wheel.state import (
    Caller,
    CallerPc,
    Exc,
    Executor,
    Owner,
    State,
    StopMode,
    TaskState,
    Trigger,
    TriggerPc,
)
from model.simple_timing_wheel.system import SimpleTimingWheel

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
SMALL = CONFIGS / "simple-timing-wheel-small.toml"
REF = CONFIGS / "simple-timing-wheel-ref.toml"


def _cfg(path: Path | None = None, **values: Any) -> SimpleTimingWheelConfig:
    cfg: SimpleTimingWheelConfig = load_config(SimpleTimingWheelConfig, path, values=values or None)
    return cfg


def _run(cfg: SimpleTimingWheelConfig, keep_going: bool = True) -> CheckResult:
    return check_bfs(
        SPEC.build(cfg), SPEC.properties(cfg), model="simple-timing-wheel", config=cfg, keep_going=keep_going
    )


def _lengths(r: CheckResult) -> dict[str, int]:
    return {v.property: v.length for v in r.violations}


# ------------------------------------------------------------------ golden runs


def test_registered() -> None:
    assert get_model("simple-timing-wheel") is SPEC


def test_small_golden() -> None:
    r = _run(_cfg(SMALL))
    assert r.distinct_states == 9370
    assert _lengths(r) == {
        "no_task_lost": 25,
        "lateness_bounded": 49,
        "deadlock": 48,
        "graceful_stop_waits": 57,
        "task_count_consistent": 62,
        "stop_terminates_trigger": 65,
    }
    assert r.witnesses == {"task_fires": 34, "task_goes_round": 19, "cme_thrown": 22}


@pytest.mark.slow
def test_ref_golden() -> None:
    r = _run(_cfg(REF))
    assert r.exit_reason.value == "violation"
    assert r.distinct_states == 192621
    assert _lengths(r) == {
        "no_task_lost": 25,
        "task_count_consistent": 38,
        "no_early_fire": 47,
        "lateness_bounded": 49,
        "deadlock": 56,
        "graceful_stop_waits": 70,
        "stop_terminates_trigger": 87,
    }
    # never violated by the demo: shown able to fail by mutants and a mode-none config below
    # (keep_going explores everything, so they hold in every reachable state)
    assert r.properties["no_double_fire"]["status"] == "held"
    assert r.properties["schedule_consistent"]["non_vacuous"] is True
    assert r.witnesses == {"task_fires": 34, "task_goes_round": 19, "cme_thrown": 22}
    # the demo's stop(false) can never get past condition.await(): size2Notify keeps the lock
    assert set(r.coverage["never_enabled"]) == {
        "StopForceSet",
        "ShutdownNow",
        "AwaitReacquire",
        "StopGracefulSet",
        "StopUnlock",
        "LoopExit",
    }


def test_demo_main_single_task_is_clean() -> None:
    # main() as printed: one task with key 10, no stop (wheel shrunk to 4 buckets)
    r = _run(_cfg(max_ticks=12))
    assert r.exit_reason.value == "complete"
    assert r.distinct_states == 146
    assert r.witnesses == {"task_fires": 71, "task_goes_round": 23}


def _actions(r: CheckResult, prop: str) -> list[str]:
    (v,) = [v for v in r.violations if v.property == prop]
    return [s.action or "" for s in v.trace[1:]]


def test_remove_replaces_set_while_add_task_adds_to_old_one() -> None:
    r = _run(_cfg(REF), keep_going=False)
    acts = _actions(r, "no_task_lost")
    assert len(acts) == 25
    assert "caller: tasks.add(task 1) to set {0}; the trigger's iterator over it is now stale" in acts
    assert acts[-2] == "trigger: timeWheel[1] = tempTasksSet {0}"
    assert acts[-1] == "trigger: hasNext() -> false; remove returns {}"


def test_second_mod_race_puts_task_in_wrong_bucket() -> None:
    # no stop: the caller can finish while tasks are pending, so the bucket placement is judged
    r = _run(_cfg(delays=(5, 2), max_ticks=8))
    assert r.distinct_states == 7938
    assert _lengths(r) == {
        "no_task_lost": 31,
        "lateness_bounded": 49,
        "deadlock": 56,
        "schedule_consistent": 65,
    }
    lost = _actions(r, "no_task_lost")
    assert lost[-2] == "caller: put(): mod(2, wheelSize) reads tick 3 again -> wheelIndex 1"
    assert lost[-1] == "caller: timeWheel[1] = {1} (replaces {0})"


def test_size2notify_keeps_the_lock_so_caller_deadlocks() -> None:
    r = _run(_cfg(delays=(1, 1), max_ticks=2))
    acts = _actions(r, "deadlock")
    assert any("finally lock.lock() again (holds 2; never released)" in a for a in acts)
    last = r.violations[[v.property for v in r.violations].index("deadlock")].trace[-1].state
    assert last["caller"]["pc"] == "ADD_LOCK" and last["lock_owner"] == "TRIGGER"


def test_cme_retry_fires_task_a_round_early() -> None:
    r = _run(_cfg(REF), keep_going=False)
    assert [v.property for v in r.violations] == ["no_task_lost"]
    r = _run(_cfg(delays=(5, 1, 1), max_ticks=2, stop_mode="none", hash_order="insertion"))
    acts = _actions(r, "no_early_fire")
    assert "trigger: next() throws ConcurrentModificationException" in acts
    assert acts[-1] == "trigger: executorService.submit(task 0): task fires at tick 1"


def test_lost_signal_with_fixed_size2notify() -> None:
    cfg = _cfg(delays=(1,), max_ticks=3, stop_mode="graceful", fixed_size2notify=True)
    r = _run(cfg)
    acts = _actions(r, "deadlock")
    i = acts.index("trigger: size2Notify(): condition.signal() with no waiter (lost)")
    assert acts[i + 2] == "caller: stop(false): lock.lock() acquires the lock (holds 1)"
    assert acts[i + 3] == "caller: stop(false): condition.await() releases the lock and waits"
    assert r.violations[[v.property for v in r.violations].index("deadlock")].length == 35


def test_fixed_size2notify_lets_graceful_stop_complete() -> None:
    cfg = _cfg(delays=(2,), max_ticks=4, stop_mode="graceful", fixed_size2notify=True)
    r = _run(cfg)
    assert r.coverage["actions"]["AwaitReacquire"]["enabled"] > 0
    assert r.coverage["actions"]["LoopExit"]["enabled"] > 0
    # the fix does not save stop(false): taskCount reaches 0 before the submit, and the signal can be lost
    assert _lengths(r) == {
        "graceful_stop_waits": 27,
        "no_task_lost": 32,
        "task_count_consistent": 32,
        "stop_terminates_trigger": 38,
        "deadlock": 39,
    }
    # a caller parked in await when the tick bound cuts the trigger off, with the signal still to
    # come, is a bound artefact, not a deadlock
    r = _run(_cfg(delays=(2,), max_ticks=1, stop_mode="graceful", fixed_size2notify=True))
    assert _lengths(r) == {"task_fires": 0}


def test_force_stop() -> None:
    r = _run(_cfg(delays=(1,), max_ticks=3, stop_mode="force"))
    assert r.exit_reason.value == "complete"
    assert r.properties["stop_terminates_trigger"]["status"] == "held"
    assert r.coverage["actions"]["SubmitRejected"]["enabled"] > 0  # abandoned by stop(true): not a loss


# ------------------------------------------------------------------ mutants


CLEAN: dict[str, Any] = {"delays": (5,), "max_ticks": 10}


def test_clean_baseline() -> None:
    assert _run(_cfg(**CLEAN)).exit_reason.value == "complete"


@pytest.mark.parametrize(
    ("mutant", "values", "prop", "length"),
    [
        ("early_cycle", CLEAN, "no_early_fire", 25),
        ("late_bucket", CLEAN, "lateness_bounded", 54),
        ("late_bucket", {"delays": (5,), "max_ticks": 4}, "schedule_consistent", 32),
        ("double_fire", CLEAN, "no_double_fire", 70),
        ("drop_pending", CLEAN, "no_task_lost", 21),
        ("skip_count", CLEAN, "task_count_consistent", 7),
    ],
)
def test_mutant_violates_exactly_its_property(
    mutant: str, values: dict[str, Any], prop: str, length: int
) -> None:
    r = _run(_cfg(mutant=mutant, **values))
    # a mutant that drops or delays tasks may also leave the task_fires witness unreached
    # in the bounded run; only the safety properties must be exactly the intended one
    safety = {p: n for p, n in _lengths(r).items() if r.properties[p]["kind"] != "reachable"}
    assert safety == {prop: length}


def test_every_mutant_is_tested() -> None:
    assert set(MUTANTS.names()) == {
        "none",
        "early_cycle",
        "late_bucket",
        "double_fire",
        "drop_pending",
        "skip_count",
    }


# ------------------------------------------------------------------ config validation


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"wheel_size": 6}, "wheel_size: must be a power of two"),
        ({"wheel_size": 0}, "wheel_size: must be at least 1, got 0"),
        ({"delays": (1, 2, 3, 4, 5)}, "delays: at most 4 tasks"),
        ({"delays": (1, -1)}, "delays[1]: must be at least 0, got -1"),
        ({"stop_mode": "later"}, "stop_mode: expected one of none, force, graceful"),
        ({"mutant": "nope"}, "mutant: expected one of"),
        ({"max_ticks": 65}, "max_ticks: must be at most 64"),
    ],
)
def test_config_errors(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=r"^" + message.replace("[", r"\[").replace("]", r"\]")):
        _cfg(**values)


def test_config_from_toml_and_overrides() -> None:
    cfg = load_config(SimpleTimingWheelConfig, SMALL, overrides=["stop_mode=force", "delays=[2]"])
    assert cfg.stop_mode is StopMode.FORCE and cfg.delays == (2,) and cfg.wheel_size == 4


# ------------------------------------------------------------------ hand-built states


def _base(cfg: SimpleTimingWheelConfig, **kw: Any) -> State:
    s = next(iter(SimpleTimingWheel(cfg).init_states()))
    return s._replace(**kw)


def _step(sys: SimpleTimingWheel, s: State, who: str) -> tuple[Any, State]:
    for a, t in sys.successors(s):
        if str(a).startswith(who):
            return a, t
    raise AssertionError(f"{who} has no step")


def test_init_states_one_per_hash_order() -> None:
    sys = SimpleTimingWheel(_cfg(delays=(1, 2, 3)))
    assert sorted(s.ranks for s in sys.init_states()) == [
        (0, 1, 2),
        (0, 2, 1),
        (1, 0, 2),
        (1, 2, 0),
        (2, 0, 1),
        (2, 1, 0),
    ]
    sys = SimpleTimingWheel(_cfg(delays=(1, 2, 3), hash_order="insertion"))
    assert [s.ranks for s in sys.init_states()] == [(0, 1, 2)]


def test_add_to_iterated_set_makes_next_throw_cme() -> None:
    cfg = _cfg(delays=(1, 1), hash_order="insertion")
    sys = SimpleTimingWheel(cfg)
    placed = TaskState(0, True, 0, None, 0)
    s = _base(
        cfg,
        tick=1,
        task_count=1,
        started=True,
        lock_owner=Owner.CALLER,
        lock_holds=1,
        wheel=(None, 0, None, None),
        heap=((0,), ()),
        tasks=(placed, TaskState(0, False, 0, None, 0)),
        caller=Caller(CallerPc.ADD_SET_ADD, 1, idx=1, tasks=0),
        trigger=Trigger(TriggerPc.ITER_NEXT, 1, tasks_set=0, temp=1, remaining=(0,)),
    )
    a, s1 = _step(sys, s, "caller")
    assert str(a) == "caller: tasks.add(task 1) to set {0}; the trigger's iterator over it is now stale"
    assert s1.trigger.stale and s1.wheel[1] is not None and s1.heap[s1.wheel[1]] == (0, 1)
    a, s2 = _step(sys, s1, "trigger")
    assert str(a) == "trigger: next() throws ConcurrentModificationException"
    assert s2.trigger == Trigger(TriggerPc.CATCH, 1, exc=Exc.CME)
    a, s3 = _step(sys, s2, "trigger")
    assert s3.trigger == Trigger(TriggerPc.HEAD, 1) and s3.tick == 1  # index and tick not advanced
    # exhausted iterator: the add is not seen, no exception, and the set is dropped with the task
    ex = s._replace(trigger=s.trigger._replace(remaining=()), wheel=(None, 1, None, None))
    _, e1 = _step(sys, ex, "caller")
    a, e2 = _step(sys, e1, "trigger")
    assert str(a) == "trigger: hasNext() -> false; remove returns {}"
    assert e2.heap == ((),) and all(1 not in h for h in e2.heap)


def test_size2notify_relocks_and_signal_without_waiter_is_lost() -> None:
    cfg = _cfg(delays=(1,))
    sys = SimpleTimingWheel(cfg)
    s = _base(
        cfg,
        task_count=1,
        started=True,
        wheel=(None, 0, None, None),
        heap=((0,), ()),
        tasks=(TaskState(0, True, 0, None, 0),),
        caller=Caller(CallerPc.DONE, 1),
        trigger=Trigger(TriggerPc.N_LOCK, 1, tasks_set=0, temp=1, result=(0,), current=0),
    )
    _, s = _step(sys, s, "trigger")
    assert (s.lock_owner, s.lock_holds) == (Owner.TRIGGER, 1)
    a, s = _step(sys, s, "trigger")
    assert s.task_count == 0 and s.trigger.pc is TriggerPc.N_SIGNAL
    a, s = _step(sys, s, "trigger")
    assert str(a) == "trigger: size2Notify(): condition.signal() with no waiter (lost)"
    a, s = _step(sys, s, "trigger")
    assert (s.lock_owner, s.lock_holds) == (Owner.TRIGGER, 2)  # finally lock.lock(): reentrant, kept


def test_signal_wakes_waiter_which_needs_the_lock() -> None:
    cfg = _cfg(delays=(1,), stop_mode="graceful", fixed_size2notify=True)
    sys = SimpleTimingWheel(cfg)
    s = _base(
        cfg,
        started=True,
        lock_owner=Owner.TRIGGER,
        lock_holds=1,
        heap=((0,), ()),
        wheel=(None, 0, None, None),
        tasks=(TaskState(0, True, 0, None, 0),),
        caller=Caller(CallerPc.WAITING, 1),
        trigger=Trigger(TriggerPc.N_SIGNAL, 1, tasks_set=0, temp=1, result=(0,), current=0),
    )
    assert [str(a) for a, _ in sys.successors(s)] == [
        "trigger: size2Notify(): condition.signal() wakes the caller"
    ]
    _, s = _step(sys, s, "trigger")
    assert s.caller.pc is CallerPc.REACQUIRE
    assert [str(a) for a, _ in sys.successors(s)] == [
        "trigger: size2Notify(): finally lock.unlock() (holds 0)"
    ]
    _, s = _step(sys, s, "trigger")
    a, s = _step(sys, s, "caller")
    assert str(a) == "caller: condition.await() re-acquires the lock and returns"
    assert (s.lock_owner, s.lock_holds) == (Owner.CALLER, 1)


def test_await_releases_the_lock() -> None:
    cfg = _cfg(delays=(1,), stop_mode="graceful")
    sys = SimpleTimingWheel(cfg)
    s = _base(cfg, lock_owner=Owner.CALLER, lock_holds=1, caller=Caller(CallerPc.GRACE_AWAIT, 1))
    _, s = _step(sys, s, "caller")
    assert (s.lock_owner, s.lock_holds, s.caller.pc) == (Owner.NONE, 0, CallerPc.WAITING)
    assert list(sys.successors(s)) == []
    assert not sys.is_terminal(s)


def test_submit_after_shutdown_is_rejected() -> None:
    cfg = _cfg(delays=(1, 2))
    sys = SimpleTimingWheel(cfg)
    s = _base(
        cfg,
        executor=Executor.SHUTDOWN,
        caller=Caller(CallerPc.DONE, 2),
        trigger=Trigger(TriggerPc.SUBMIT, 1, result=(0, 1)),
    )
    a, s = _step(sys, s, "trigger")
    assert str(a) == (
        "trigger: executorService.submit(task 0) throws RejectedExecutionException (tasks {0, 1} not submitted)"
    )
    assert s.trigger == Trigger(TriggerPc.CATCH, 1, exc=Exc.REJECTED)


def test_tick_bound_and_stop_at_loop_head() -> None:
    cfg = _cfg(delays=(1,), max_ticks=2)
    sys = SimpleTimingWheel(cfg)
    s = _base(cfg, tick=2, started=True, caller=Caller(CallerPc.DONE, 1), trigger=Trigger(TriggerPc.HEAD, 2))
    assert list(sys.successors(s)) == [] and sys.is_terminal(s)
    s = s._replace(stop=True)
    a, s = _step(sys, s, "trigger")
    assert str(a) == "trigger: while (!stop) reads stop = true; run() returns"
    assert s.trigger.pc is TriggerPc.EXITED and sys.is_terminal(s)
    blocked = _base(
        cfg,
        tick=2,
        started=True,
        lock_owner=Owner.TRIGGER,
        lock_holds=2,
        caller=Caller(CallerPc.ADD_LOCK, 0),
        trigger=Trigger(TriggerPc.HEAD, 2),
    )
    assert list(sys.successors(blocked)) == [] and not sys.is_terminal(blocked)


def test_put_overwrites_a_slot_and_heap_is_canonical() -> None:
    cfg = _cfg(delays=(1, 2))
    sys = SimpleTimingWheel(cfg)
    s = _base(
        cfg,
        tick=3,
        started=True,
        lock_owner=Owner.CALLER,
        lock_holds=1,
        wheel=(None, 1, None, None),
        heap=((1,), (0,)),
        tasks=(TaskState(0, True, 0, None, 0), TaskState(0, True, 0, None, 0)),
        caller=Caller(CallerPc.PUT_WRITE, 1, idx=2, new_set=0, wheel_index=1),
        trigger=Trigger(TriggerPc.SLEEP, 3),
    )
    a, s1 = _step(sys, s, "caller")
    assert str(a) == "caller: timeWheel[1] = {1} (replaces {0})"
    assert s1.heap == ((1,),) and s1.wheel == (None, 0, None, None) and s1.caller.new_set is None
    # the same program state with the heap numbered the other way round is the same state
    t = s._replace(wheel=(None, 0, None, None), heap=((0,), (1,)), caller=s.caller._replace(new_set=1))
    _, t1 = _step(sys, t, "caller")
    assert t1 == s1 and fingerprint(t1) == fingerprint(s1)


def test_set_index_leaves_index_untouched_and_mod_reads_tick() -> None:
    cfg = _cfg(delays=(5,))
    sys = SimpleTimingWheel(cfg)
    s = _base(cfg, tick=2, lock_owner=Owner.CALLER, lock_holds=1, caller=Caller(CallerPc.ADD_MOD, 0))
    a, s = _step(sys, s, "caller")
    assert str(a) == (
        "caller: mod(5, wheelSize) reads tick 2 -> index 3; task.setIndex(3) leaves task.index 0 (this.index=index)"
    )
    assert s.caller.idx == 3 and s.tasks[0].added_tick == 2


def test_helpers() -> None:
    cfg = _cfg(delays=(5, 1))
    s = _base(cfg, caller=Caller(CallerPc.ADD_UNLOCK, 1))
    assert added_count(s) == 2
    assert added_count(s._replace(caller=Caller(CallerPc.TASK_COUNT, 1))) == 1
    s = _base(
        cfg,
        tick=1,
        wheel=(None, 0, None, None),
        heap=((0,),),
        tasks=(TaskState(0, True, 0, None, 0), TaskState(0, False, None, None, 0)),
        trigger=Trigger(TriggerPc.HEAD, 1),
    )
    assert projected_fire_tick(s, 0, 4) == 1
    assert projected_fire_tick(s, 1, 4) is None
    assert projected_fire_tick(s._replace(trigger=Trigger(TriggerPc.TICK, 1)), 0, 4) is None


def test_action_kinds_cover_every_action_class() -> None:
    sys = SimpleTimingWheel(_cfg(SMALL))
    r = _run(_cfg(SMALL))
    assert set(r.coverage["actions"]) <= set(sys.action_kinds())
    assert r.coverage["undeclared"] == []
