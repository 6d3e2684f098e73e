"""Why a property of the timing models fails, in Kafka's words: an ``explain`` for each safety
property of the timing wheel (``kafka.utils.timer``), the simple timing wheel (seed 004's
``TimeWheel``) and the purgatory (``DelayedOperationPurgatory``), naming the task, bucket,
wheel, operation, key or thread at fault (:attr:`explorer.core.Property.explain`).

Example
-------
>>> from model.timing_wheel import TimingWheel, TimingWheelConfig, EntryStatus
>>> s = TimingWheel(TimingWheelConfig()).init_states()[0]
>>> bad = s._replace(status=(EntryStatus.FIRED,) + s.status[1:], expiration=(5,) + s.expiration[1:],
...                  fired_at=(3,) + s.fired_at[1:])
>>> timing_wheel_explanations(TimingWheelConfig())["no_early_fire"](bad)
['task 0 ran at 3, before its expiration 5 (status FIRED)']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from explorer.core import Property
from model.timing_wheel import (
    CANCELLED_STATUSES,
    FIRED_STATUSES,
    FIRED_TWICE,
    IN_WHEEL,
    RAN_CANCELLED,
    WAITING,
    TWState,
)

__all__ = [
    "attach",
    "purgatory_explanations",
    "simple_timing_wheel_explanations",
    "timing_wheel_explanations",
]

_RAN = FIRED_STATUSES - {RAN_CANCELLED}


def attach(props: Iterable[Property], table: dict[str, Callable[..., Any]]) -> list[Property]:
    """``props`` with each one's ``explain`` from ``table`` where it has none.

    >>> from explorer.core import always
    >>> [p.explain(1) for p in attach([always("p", bool, "")], {"p": lambda s: f"s is {s}"})]
    ['s is 1']
    """
    return [
        p if p.explain is not None or p.name not in table else dataclasses.replace(p, explain=table[p.name])
        for p in props
    ]


def _buckets(s: TWState, i: int) -> list[str]:
    bit = 1 << i
    return [
        f"level {lv} bucket {ix}"
        for lv, w in enumerate(s.wheels)
        for ix, b in enumerate(w.buckets)
        if b & bit
    ]


def timing_wheel_explanations(config: Any) -> dict[str, Callable[..., Any]]:
    """Each timing-wheel property's ``explain``, by name (``config``: its ``TimingWheelConfig``)."""
    tick_ms, ws = config.tick_ms, config.wheel_size

    def task(s: TWState, i: int) -> str:
        return f"task {i} (status {s.status[i].name}, expiration {s.expiration[i]})"

    def no_early_fire(s: TWState) -> list[str]:
        return [
            f"task {i} ran at {fa}, before its expiration {e} (status {st.name})"
            for i, (st, e, fa) in enumerate(zip(s.status, s.expiration, s.fired_at, strict=True))
            if st in _RAN and fa < e
        ]

    def no_double_fire(s: TWState) -> list[str]:
        out = [f"task {i} ran twice" for i, st in enumerate(s.status) if st == FIRED_TWICE]
        out += [
            f"{task(s, i)} has run but is still linked in {', '.join(_buckets(s, i))}"
            for i, st in enumerate(s.status)
            if st in FIRED_STATUSES and _buckets(s, i)
        ]
        return out

    def bounded_lateness(s: TWState) -> list[str]:
        lag = config.reaper_lag
        out = []
        for i, (st, e, fa) in enumerate(zip(s.status, s.expiration, s.fired_at, strict=True)):
            if st in WAITING and s.now > e + lag:
                out.append(f"{task(s, i)} still waits at time {s.now}, more than {lag} ms after it was due")
            elif st in _RAN and fa > e + lag:
                out.append(f"task {i} ran at {fa}, more than {lag} ms after its expiration {e}")
        return out or [f"time {s.now}: " + ", ".join(task(s, i) for i in range(len(s.status)))]

    def no_task_lost(s: TWState) -> list[str]:
        out = []
        for i, st in enumerate(s.status):
            if st not in IN_WHEEL:
                continue
            where = _buckets(s, i)
            if len(where) != 1:
                out.append(
                    f"{task(s, i)} waits but is linked in {len(where)} buckets ({', '.join(where) or 'none'})"
                )
                continue
            bit = 1 << i
            for lv, w in enumerate(s.wheels):
                for ix, b in enumerate(w.buckets):
                    if b & bit and (lv, ix) not in s.queue:
                        out.append(
                            f"{task(s, i)} is in level {lv} bucket {ix}, which is not in the DelayQueue {s.queue}"
                        )
        return out

    def cancel_is_final(s: TWState) -> list[str]:
        out = [f"task {i} ran after it was cancelled" for i, st in enumerate(s.status) if st == RAN_CANCELLED]
        out += [
            f"{task(s, i)} is cancelled but still linked in {', '.join(_buckets(s, i))}"
            for i, st in enumerate(s.status)
            if st in CANCELLED_STATUSES and _buckets(s, i)
        ]
        return out

    def bucket_ranges(s: TWState) -> list[str]:
        out = []
        for lv, w in enumerate(s.wheels):
            for ix, mask in enumerate(w.buckets):
                x = w.expirations[ix]
                for i in range(len(s.status)):
                    if not mask >> i & 1 or s.status[i] not in IN_WHEEL:
                        continue
                    e = s.expiration[i]
                    if x < 0 or x % w.tick or not x <= e < x + w.tick or (x // w.tick) % ws != ix:
                        out.append(
                            f"{task(s, i)} is in level {lv} (tickMs {w.tick}) bucket {ix} whose expiration is {x}: "
                            f"its range [{x}, {x + w.tick}) and virtualId {x // w.tick if w.tick else '?'} % "
                            f"wheelSize {ws} do not fit"
                        )
        return out

    def overflow_wheel_params(s: TWState) -> list[str]:
        out = []
        p = s.wheels[0]
        if p.tick != tick_ms:
            out.append(f"level 0 has tickMs {p.tick}, not {tick_ms}")
        for lv, w in enumerate(s.wheels[1:], start=1):
            if w.tick != p.tick * ws or w.current_time != p.current_time - p.current_time % w.tick:
                out.append(
                    f"level {lv} has tickMs {w.tick} and currentTime {w.current_time}; its parent (tickMs {p.tick}, "
                    f"currentTime {p.current_time}) gives tickMs {p.tick * ws} and currentTime "
                    f"{p.current_time - p.current_time % (p.tick * ws)}"
                )
            p = w
        return out

    def reference_timer_order(s: TWState) -> list[str]:
        ran = [i for i, st in enumerate(s.status) if st in _RAN]
        if not ran:
            return []
        latest = max(ran, key=lambda i: s.expiration[i] // tick_ms)
        return [
            f"task {latest} (expiration {s.expiration[latest]}) ran while {task(s, i)}, due a whole tick earlier, waits"
            for i, st in enumerate(s.status)
            if st in WAITING and s.expiration[i] // tick_ms < s.expiration[latest] // tick_ms
        ]

    return {
        "no_early_fire": no_early_fire,
        "no_double_fire": no_double_fire,
        "bounded_lateness": bounded_lateness,
        "no_task_lost": no_task_lost,
        "cancel_is_final": cancel_is_final,
        "bucket_ranges": bucket_ranges,
        "overflow_wheel_params": overflow_wheel_params,
        "reference_timer_order": reference_timer_order,
    }


def simple_timing_wheel_explanations(
    config: Any, added_count: Callable[[Any], int], projected_fire_tick: Callable[[Any, int, int], int | None]
) -> dict[str, Callable[..., Any]]:
    """Each simple-timing-wheel property's ``explain``, by name (``config``: its configuration;
    ``added_count`` and ``projected_fire_tick``: ``invariants.simple_timing_wheel``'s, which the
    checks read too)."""
    from model.simple_timing_wheel.system import live_tasks

    delays, w = config.delays, config.wheel_size

    def task(s: Any, i: int) -> str:
        ts = s.tasks[i]
        return f"task {i} (delay {delays[i]}, added at tick {ts.added_tick}, fired {ts.fires} times)"

    def no_early_fire(s: Any, a: Any, t: Any) -> list[str]:
        ts = s.tasks[a.task]
        return [
            f"{a}: tick {a.tick} submits {task(s, a.task)}, due at tick {(ts.added_tick or 0) + delays[a.task]}"
        ]

    def lateness_bounded(s: Any, a: Any, t: Any) -> list[str]:
        ts = s.tasks[a.task]
        due = (ts.added_tick or 0) + delays[a.task]
        return [f"{a}: tick {a.tick} submits {task(s, a.task)}, due at tick {due}, more than one tick late"]

    def no_double_fire(s: Any, a: Any, t: Any) -> list[str]:
        return [f"{a}: {task(s, a.task)} is submitted again"]

    def no_task_lost(s: Any) -> list[str]:
        live = live_tasks(s)
        return [
            f"{task(s, i)} was placed and has not fired, but no wheel slot holds it (timeWheel {s.wheel})"
            for i, ts in enumerate(s.tasks)
            if ts.placed and ts.fires == 0 and i not in live
        ]

    def task_count_consistent(s: Any) -> list[str]:
        fired = sum(ts.fires for ts in s.tasks)
        return [
            f"taskCount is {s.task_count}, but {added_count(s)} tasks were added and {fired} fired "
            f"({added_count(s) - fired} should be pending)"
        ]

    def graceful_stop_waits(s: Any, a: Any, t: Any) -> list[str]:
        return [
            f"{a}: the graceful stop returns while {', '.join(task(s, i) for i, ts in enumerate(s.tasks) if ts.fires == 0)} "
            "has not fired"
        ]

    def stop_terminates_trigger(s: Any) -> list[str]:
        return [
            f"the caller thread returned from stop() (stop = {s.stop}), but the trigger thread is still at "
            f"{s.trigger.pc.name} at tick {s.tick}"
        ]

    def schedule_consistent(s: Any) -> list[str]:
        out = []
        for i, ts in enumerate(s.tasks):
            if ts.placed and ts.fires == 0 and ts.added_tick is not None:
                p = projected_fire_tick(s, i, w)
                due = ts.added_tick + delays[i]
                if p is not None and not due <= p <= due + 1:
                    out.append(f"{task(s, i)} would fire at tick {p}; it is due at tick {due}")
        return out

    return {
        "no_early_fire": no_early_fire,
        "lateness_bounded": lateness_bounded,
        "no_double_fire": no_double_fire,
        "no_task_lost": no_task_lost,
        "task_count_consistent": task_count_consistent,
        "graceful_stop_waits": graceful_stop_waits,
        "stop_terminates_trigger": stop_terminates_trigger,
        "schedule_consistent": schedule_consistent,
    }


def purgatory_explanations(sys: Any) -> dict[str, Callable[..., Any]]:
    """Each purgatory property's ``explain``, by name (``sys``: the ``PurgatorySystem``)."""

    def op(s: Any, o: int) -> str:
        x = s.ops[o]
        return (
            f"operation {o} (completed {x.completed}, onComplete {x.completions}x, onExpiration {x.expirations}x, "
            f"timer {x.timer.name if hasattr(x.timer, 'name') else x.timer})"
        )

    def on_complete_at_most_once(s: Any) -> list[str]:
        return [
            f"{op(s, o)}: onComplete ran {x.completions} times"
            for o, x in enumerate(s.ops)
            if x.completions > 1
        ]

    def on_expiration_only_if_expiry_won(s: Any) -> list[str]:
        return [
            f"{op(s, o)}: onExpiration ran without the expiry's forceComplete winning (paths {bin(x.by)})"
            for o, x in enumerate(s.ops)
            if x.expirations and not (x.expirations == 1 and x.by & _path_expiry())
        ]

    def no_lost_wakeup(s: Any) -> list[str]:
        checking = sys.checking_keys(s)
        return [
            f"{op(s, o)} is satisfied (its acks are in) and every handler finished with it, no checkAndComplete "
            f"runs on its keys, yet it is not completed"
            for o in range(sys.n_ops)
            if not checking & sys.key_mask[o]
            and sys.handler_finished(s, o)
            and sys.satisfied(s, o)
            and not s.ops[o].completed
        ]

    def completed_removed_by_next_traversal(s: Any, a: Any, t: Any) -> list[str]:
        left = [
            f"key {k}: watcher list still holds completed {', '.join(f'operation {o}' for o in range(sys.n_ops) if w >> o & 1)}"
            for k, w in enumerate(t.watched)
            if w & sys.completed_mask(t)
        ]
        return [f"the step: {a}", *(left or [f"watcher lists after it: {t.watched}"])]

    def every_op_completed_once_at_end(s: Any) -> list[str]:
        return [
            f"the purgatory is quiet, but {op(s, o)} completed {x.completions} times"
            for o, x in enumerate(s.ops)
            if x.completions != 1
        ]

    return {
        "on_complete_at_most_once": on_complete_at_most_once,
        "on_expiration_only_if_expiry_won": on_expiration_only_if_expiry_won,
        "no_lost_wakeup": no_lost_wakeup,
        "completed_removed_by_next_traversal": completed_removed_by_next_traversal,
        "every_op_completed_once_at_end": every_op_completed_once_at_end,
    }


def _path_expiry() -> int:
    from model.purgatory.state import PATH_EXPIRY

    return PATH_EXPIRY
