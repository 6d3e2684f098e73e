"""Properties of the seed 004 "简易时间轮" Java demo (``model/simple_timing_wheel.py``).

The seed promises (seed 004, "简易时间轮"): a task added with delay ``key`` runs
``key`` ticks later ("当前指针推进到某一时刻，取出对应时刻的延时任务"), a task of a later
round waits with ``cycleNum - 1`` ("周期数减一继续存入时间轮"), ``taskCount`` is the
number of tasks in the wheel ("时间轮中任务数量"), and ``stop(false)`` blocks the main
thread until every pending task has run ("阻塞主线程，等待所有未完成的任务完成后，
唤醒主线程进行停止"). DESIGN.md §3 (Timing): no task fires early or twice, lateness
bounded by the tick, no task lost.

Reference points: a task's *due* tick is ``added_tick + key`` where ``added_tick`` is
the tick value addTask's own first ``mod()`` read (the value it scheduled against).
"Fired" means accepted by ``executorService.submit``. After a forced stop
(``stop(true)``) abandoning tasks is intended, so loss and ``taskCount`` are not
judged there.

Example
-------
>>> from explorer.engines.bfs import check_bfs
>>> cfg = SimpleTimingWheelConfig(delays=(1,), max_ticks=3)
>>> r = check_bfs(SPEC.build(cfg), SPEC.properties(cfg), keep_going=True)
>>> r.exit_reason.value, r.distinct_states, sorted(r.witnesses)
('complete', 54, ['task_fires'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explorer.core import ModelSpec, Property, always, reachable, transition
from invariants.mutants.simple_timing_wheel import SimpleTimingWheelConfig, build
from invariants.timing_explain import attach, simple_timing_wheel_explanations
from model.simple_timing_wheel.effects import Effect, does
from model.simple_timing_wheel.state import CallerPc, Exc, State, StopMode, TriggerPc
from model.simple_timing_wheel.system import SimpleTimingWheel, live_tasks, trigger_bounded

__all__ = ["SPEC", "added_count", "projected_fire_tick", "properties"]

#: caller program counters between taskCount.incrementAndGet() and the end of addTask
_PAST_COUNT = frozenset({CallerPc.ADD_UNLOCK, CallerPc.START_GET, CallerPc.START_CAS})


def added_count(s: State) -> int:
    """Tasks whose addTask has executed ``taskCount.incrementAndGet()`` (or its place).

    >>> from model.simple_timing_wheel import SimpleTimingWheel
    >>> s = next(iter(SimpleTimingWheel(SimpleTimingWheelConfig(delays=(1, 2))).init_states()))
    >>> added_count(s)
    0
    """
    c = s.caller
    return c.task + (1 if c.pc in _PAST_COUNT and c.task < len(s.tasks) else 0)


def projected_fire_tick(s: State, task: int, wheel_size: int) -> int | None:
    """The tick at which a task sitting in the wheel will fire if nothing else happens.

    Defined when the trigger thread is at its loop head (then ``index == tick % wheelSize``)
    and the task is in the set of some wheel slot: the trigger next visits slot ``b`` at
    ``tick + (b - tick) mod wheelSize``, then every ``wheelSize`` ticks, decrementing
    ``cycleNum`` until it is 0.

    >>> from model.simple_timing_wheel import SimpleTimingWheel
    >>> from model.simple_timing_wheel.state import Trigger
    >>> cfg = SimpleTimingWheelConfig(delays=(5,))
    >>> s = next(iter(SimpleTimingWheel(cfg).init_states()))
    >>> ts = s.tasks[0]._replace(cycle=1, placed=True)
    >>> s = s._replace(tick=2, heap=((0,),), wheel=(None, 0, None, None), tasks=(ts,),
    ...                trigger=Trigger(TriggerPc.HEAD, 2))
    >>> projected_fire_tick(s, 0, 4)
    9
    """
    if s.trigger.pc not in (TriggerPc.HEAD, TriggerPc.NOT_STARTED):
        return None
    for b, ref in enumerate(s.wheel):
        if ref is not None and task in s.heap[ref]:
            first = s.tick + (b - s.tick) % wheel_size
            return first + s.tasks[task].cycle * wheel_size
    return None


def _force_stopped(cfg: SimpleTimingWheelConfig) -> Callable[[State], bool]:
    if cfg.stop_mode is StopMode.FORCE:
        return lambda s: s.stop
    return lambda s: False


def properties(config: SimpleTimingWheelConfig) -> list[Property]:
    """The properties that apply to ``config`` (see the module docstring).

    >>> [p.name for p in properties(SimpleTimingWheelConfig(stop_mode="graceful", delays=(1, 5)))][:3]
    ['no_early_fire', 'lateness_bounded', 'no_double_fire']
    """
    cfg = config
    w = cfg.wheel_size
    keys = cfg.delays
    system = SimpleTimingWheel(cfg)
    forced = _force_stopped(cfg)

    def first_submit(s: State, a: Any, t: State) -> bool:
        return does(a, Effect.FIRES_TASK) and s.tasks[a.task].fires == 0

    def not_early(s: State, a: Any, t: State) -> bool:
        if not first_submit(s, a, t):
            return True
        ts = s.tasks[a.task]
        return ts.added_tick is not None and a.tick >= ts.added_tick + keys[a.task]

    def not_late(s: State, a: Any, t: State) -> bool:
        if not first_submit(s, a, t):
            return True
        ts = s.tasks[a.task]
        return ts.added_tick is not None and a.tick <= ts.added_tick + keys[a.task] + 1

    def not_twice(s: State, a: Any, t: State) -> bool:
        return not does(a, Effect.FIRES_TASK) or s.tasks[a.task].fires == 0

    def is_submit(s: State, a: Any, t: State) -> bool:
        return does(a, Effect.FIRES_TASK)

    def placed_pending(s: State) -> bool:
        return not forced(s) and any(ts.placed and ts.fires == 0 for ts in s.tasks)

    def not_lost(s: State) -> bool:
        if forced(s):
            return True
        live = None
        for i, ts in enumerate(s.tasks):
            if ts.placed and ts.fires == 0:
                if live is None:
                    live = live_tasks(s)
                if i not in live:
                    return False
        return True

    def count_applies(s: State) -> bool:
        return not s.trigger.result and not forced(s)

    def count_ok(s: State) -> bool:
        if not count_applies(s):
            return True
        return s.task_count == added_count(s) - sum(ts.fires for ts in s.tasks)

    def graceful_return(s: State, a: Any, t: State) -> bool:
        return does(a, Effect.STOP_RETURNS)

    def graceful_ok(s: State, a: Any, t: State) -> bool:
        return not does(a, Effect.STOP_RETURNS) or all(ts.fires > 0 for ts in s.tasks)

    def stop_applies(s: State) -> bool:
        return s.caller.pc is CallerPc.DONE and system.is_terminal(s)

    def stop_ok(s: State) -> bool:
        return not stop_applies(s) or s.trigger.pc in (TriggerPc.EXITED, TriggerPc.NOT_STARTED)

    def schedule_applies(s: State) -> bool:
        return system.is_terminal(s) and trigger_bounded(s, cfg)

    def schedule_ok(s: State) -> bool:
        if not schedule_applies(s):
            return True
        for i, ts in enumerate(s.tasks):
            if ts.placed and ts.fires == 0 and ts.added_tick is not None:
                p = projected_fire_tick(s, i, w)
                due = ts.added_tick + keys[i]
                if p is not None and not due <= p <= due + 1:
                    return False
        return True

    props = [
        transition(
            "no_early_fire",
            not_early,
            "a task with key k added at tick t is not submitted before tick t+k (seed 004: 推进到某一时刻取出对应时刻的任务)",
            applies=first_submit,
        ),
        transition(
            "lateness_bounded",
            not_late,
            "a task with key k added at tick t is first submitted by tick t+k+1 (DESIGN §3: lateness bounded by the tick)",
            applies=first_submit,
        ),
        transition(
            "no_double_fire",
            not_twice,
            "no task is submitted twice (DESIGN §3; seed 004: 取出，并把它从时间轮中删除掉)",
            applies=is_submit,
        ),
        always(
            "no_task_lost",
            not_lost,
            "an added task not yet fired is in a reachable bucket set or about to be submitted "
            "(seed 004: 周期数减一继续存入时间轮)",
            applies=placed_pending,
        ),
        always(
            "task_count_consistent",
            count_ok,
            "taskCount = tasks added - tasks fired whenever no due task awaits submission (seed 004: 时间轮中任务数量)",
            applies=count_applies,
        ),
        always(
            "schedule_consistent",
            schedule_ok,
            "at the tick bound every pending task sits in a bucket and round that fire it at its due tick "
            "(+1) (seed 004: mod() and cycleNum())",
            applies=schedule_applies,
        ),
    ]
    if cfg.stop_mode is StopMode.GRACEFUL:
        props.append(
            transition(
                "graceful_stop_waits",
                graceful_ok,
                "stop(false) returns only after every added task has been submitted "
                "(seed 004: 阻塞主线程，等待所有未完成的任务完成后，唤醒主线程进行停止)",
                applies=graceful_return,
            )
        )
    if cfg.stop_mode is not StopMode.NONE:
        props.append(
            always(
                "stop_terminates_trigger",
                stop_ok,
                "once stop() has returned the trigger thread exits (seed 004: 有启动就有停止)",
                applies=stop_applies,
            )
        )
    if keys:
        props.append(
            reachable("task_fires", lambda s: any(ts.fires for ts in s.tasks), "some task is submitted")
        )
    if any(k >= w for k in keys):
        props.append(
            reachable(
                "task_goes_round",
                lambda s: any(ts.placed and ts.cycle < k // w for ts, k in zip(s.tasks, keys)),
                "a task of a later round has its cycleNum decremented (周期数减一)",
            )
        )
    if len(keys) >= 2:
        props.append(
            reachable(
                "cme_thrown",
                lambda s: s.trigger.pc is TriggerPc.CATCH and s.trigger.exc is Exc.CME,
                "remove()'s for-each throws ConcurrentModificationException",
            )
        )
    # each says why it fails (timing_explain.py)
    return attach(props, simple_timing_wheel_explanations(config, added_count, projected_fire_tick))


SPEC = ModelSpec(
    name="simple-timing-wheel",
    summary="seed 004's 简易时间轮 Java demo as printed: caller and trigger threads, statement by statement",
    config_cls=SimpleTimingWheelConfig,
    build=build,
    properties=properties,
)
