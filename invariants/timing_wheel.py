"""Properties of the ``timing-wheel`` model (Kafka's TimingWheel + SystemTimer, seed 004).

Timing guarantees (DESIGN.md section 3): no task fires early or twice, lateness is
bounded, no task is lost, bucket ranges and overflow-wheel parameters are as seed 004
prints them, and tasks fire in the order of a reference priority-queue timer.

The lateness bound
------------------
With reaper lag K (config ``reaper_lag``: the clock never moves on while the
DelayQueue's head has been due for K ms or more), every uncancelled task with
expiration e runs at a wall-clock time ``<= e + K``, and while it waits ``now <= e + K``.
Why: a waiting task is either being added (the clock waits for that) or sits in a bucket
that is in the DelayQueue and whose expiration is ``<= e``; the clock cannot pass that expiration + K before the reaper
polls it; a flush re-adds the task at the poll's time, into a bucket whose expiration is
again ``<= e`` (or runs it). With ``tick_ms = 1`` a task also never runs before e, so it
runs in ``[e, e + K]``; with ``tick_ms > 1`` a level-0 bucket expires at
``floor(e / tick_ms) * tick_ms`` and the task runs up to ``tick_ms - 1`` ms early (a real
property of Kafka's code, found by ``no_early_fire``; Kafka's SystemTimer uses tickMs = 1).

Example
-------
>>> from model.timing_wheel import TimingWheelConfig
>>> [p.name for p in properties(TimingWheelConfig())][:3]
['no_early_fire', 'no_double_fire', 'bounded_lateness']
"""

from __future__ import annotations

from typing import Any

from explorer.core import ModelSpec, Property, always, reachable
from invariants.mutants.timing_wheel import TimingWheelConfig, build
from invariants.timing_explain import attach, timing_wheel_explanations
from model.timing_wheel import (
    CANCELLED,
    CANCELLED_IN_WHEEL,
    CANCELLED_STATUSES,
    FIRED,
    FIRED_ON_ADD,
    FIRED_STATUSES,
    FIRED_TWICE,
    IN_WHEEL,
    MOVED,
    RAN_CANCELLED,
    WAITING,
    TWState,
)

__all__ = ["SPEC", "entries_in_buckets", "entry_buckets", "properties"]

_UNCANCELLED_FIRED = FIRED_STATUSES - {RAN_CANCELLED}
_FIRED = FIRED_STATUSES


def entries_in_buckets(s: TWState) -> int:
    """Bitmask of the entries linked in any bucket of any wheel.

    >>> from model.timing_wheel import TimingWheel, TimingWheelConfig
    >>> entries_in_buckets(TimingWheel(TimingWheelConfig()).init_states()[0])
    0
    """
    m = 0
    for w in s.wheels:
        for b in w.buckets:
            m |= b
    return m


def entry_buckets(s: TWState, i: int) -> list[tuple[int, int]]:
    """Every ``(level, bucket)`` whose list holds entry ``i``.

    >>> from model.timing_wheel import TimingWheel, TimingWheelConfig
    >>> entry_buckets(TimingWheel(TimingWheelConfig()).init_states()[0], 0)
    []
    """
    bit = 1 << i
    return [(lv, ix) for lv, w in enumerate(s.wheels) for ix, b in enumerate(w.buckets) if b & bit]


def _status_mask(status: tuple[Any, ...], kinds: frozenset[Any]) -> int:
    m = 0
    for i, st in enumerate(status):
        if st in kinds:
            m |= 1 << i
    return m


def _no_early_fire(s: TWState) -> bool:
    status = s.status
    if _FIRED.isdisjoint(status):
        return True
    return all(fa >= e for st, e, fa in zip(status, s.expiration, s.fired_at) if st in _UNCANCELLED_FIRED)


def _any_fired(s: TWState) -> bool:
    return not _FIRED.isdisjoint(s.status)


def _no_double_fire(s: TWState) -> bool:
    status = s.status
    if _FIRED.isdisjoint(status):
        return True
    if FIRED_TWICE in status:
        return False
    return not (entries_in_buckets(s) & _status_mask(status, _FIRED))


def _make_lateness(lag: int) -> Any:
    def bounded_lateness(s: TWState) -> bool:
        now = s.now
        for st, e, fa in zip(s.status, s.expiration, s.fired_at):
            if st in WAITING:
                if now > e + lag:
                    return False
            elif st in _UNCANCELLED_FIRED and fa > e + lag:
                return False
        return True

    return bounded_lateness


def _any_uncancelled_added(s: TWState) -> bool:
    return not (WAITING.isdisjoint(s.status) and _UNCANCELLED_FIRED.isdisjoint(s.status))


def _no_task_lost(s: TWState) -> bool:
    status = s.status
    if IN_WHEEL.isdisjoint(status):
        return True
    waiting = _status_mask(status, IN_WHEEL)
    queue = s.queue
    seen = dup = 0
    for lv, w in enumerate(s.wheels):
        for ix, mask in enumerate(w.buckets):
            if mask:
                dup |= seen & mask
                seen |= mask
                if mask & waiting and (lv, ix) not in queue:
                    return False
    return not (waiting & dup) and waiting & seen == waiting


def _any_in_wheel(s: TWState) -> bool:
    return not IN_WHEEL.isdisjoint(s.status)


def _cancel_is_final(s: TWState) -> bool:
    status = s.status
    if CANCELLED_STATUSES.isdisjoint(status):
        return True
    if RAN_CANCELLED in status:
        return False
    return not (entries_in_buckets(s) & _status_mask(status, CANCELLED_STATUSES))


def _any_cancelled(s: TWState) -> bool:
    return not CANCELLED_STATUSES.isdisjoint(s.status)


def _make_bucket_ranges(ws: int) -> Any:
    def bucket_ranges(s: TWState) -> bool:
        status, exp = s.status, s.expiration
        for w in s.wheels:
            tick = w.tick
            for ix, mask in enumerate(w.buckets):
                if not mask:
                    continue
                x = w.expirations[ix]
                i = 0
                while mask:
                    if mask & 1 and status[i] in IN_WHEEL:
                        e = exp[i]
                        if x < 0 or x % tick or not (x <= e < x + tick) or (x // tick) % ws != ix:
                            return False
                    mask >>= 1
                    i += 1
        return True

    return bucket_ranges


def _make_overflow_params(tick_ms: int, ws: int) -> Any:
    def overflow_wheel_params(s: TWState) -> bool:
        wheels = s.wheels
        p = wheels[0]
        if p.tick != tick_ms:
            return False
        for w in wheels[1:]:
            if w.tick != p.tick * ws or w.current_time != p.current_time - p.current_time % w.tick:
                return False
            p = w
        return True

    return overflow_wheel_params


def _make_reference_order(tick_ms: int) -> Any:
    def reference_timer_order(s: TWState) -> bool:
        status = s.status
        if _UNCANCELLED_FIRED.isdisjoint(status) or WAITING.isdisjoint(status):
            return True
        exp = s.expiration
        latest = max(exp[i] // tick_ms for i, st in enumerate(status) if st in _UNCANCELLED_FIRED)
        return all(exp[i] // tick_ms >= latest for i, st in enumerate(status) if st in WAITING)

    return reference_timer_order


def properties(config: TimingWheelConfig) -> list[Property]:
    """The properties of the timing-wheel model under ``config``.

    The witness ``first_add_refused_expired`` is only asked for when some delay is
    below ``tick_ms`` (otherwise SystemTimer.add's first ``add`` cannot see an expired
    entry: the wheel's current time never passes the wall clock).

    >>> len(properties(TimingWheelConfig(delays=(0, 3)))) - len(properties(TimingWheelConfig()))
    1
    """
    tick, ws, lag = config.tick_ms, config.wheel_size, config.reaper_lag
    props = [
        always(
            "no_early_fire",
            _no_early_fire,
            "no task runs before its expiration, now + delayMs at SystemTimer.add (seed 004 时间轮处理逻辑)",
            applies=_any_fired,
        ),
        always(
            "no_double_fire",
            _no_double_fire,
            "a task runs at most once and a task that ran is in no bucket (TimerTaskList.flush unlinks)",
            applies=_any_fired,
        ),
        always(
            "bounded_lateness",
            _make_lateness(lag),
            f"an uncancelled task runs by expiration + reaper_lag ({lag} ms) and waits no longer "
            "(DelayQueue-driven advanceClock, seed 004)",
            applies=_any_uncancelled_added,
        ),
        always(
            "no_task_lost",
            _no_task_lost,
            "a waiting task is in exactly one bucket and that bucket is in the DelayQueue "
            "(setExpiration -> queue.offer, seed 004 TimingWheel.add)",
            applies=_any_in_wheel,
        ),
        always(
            "cancel_is_final",
            _cancel_is_final,
            "a cancelled task is in no bucket and never runs (TimingWheel.add refuses cancelled entries, "
            "seed 004; TimerTask.cancel)",
            applies=_any_cancelled,
        ),
        always(
            "bucket_ranges",
            _make_bucket_ranges(ws),
            "a waiting task's bucket is virtualId % wheelSize with expiration virtualId * tickMs and "
            "its range [expiration, expiration + tickMs) holds the task's expiration (seed 004)",
            applies=_any_in_wheel,
        ),
        always(
            "overflow_wheel_params",
            _make_overflow_params(tick, ws),
            "an overflow wheel has tickMs = parent interval and currentTime = the parent's currentTime "
            "rounded down to its tick (startMs = parent currentTime, addOverflowWheel, seed 004)",
            applies=lambda s: len(s.wheels) > 1,
        ),
        always(
            "reference_timer_order",
            _make_reference_order(tick),
            "tasks run in the order a priority-queue timer keyed by expiration runs them, up to the tick: "
            "none runs while an uncancelled task due a whole tick earlier waits (seed 004 DelayQueue)",
            applies=_any_fired,
        ),
        reachable(
            "overflow_wheel_created",
            lambda s: len(s.wheels) > 1,
            "an entry beyond the level-0 interval creates an overflow wheel (addOverflowWheel, seed 004)",
        ),
        reachable(
            "entry_moved_down",
            lambda s: MOVED in s.status,
            "an expired higher-level bucket's entry is re-added one level down or more (seed 004 执行)",
        ),
        reachable(
            "cancel_bucketed_entry",
            lambda s: CANCELLED_IN_WHEEL in s.status,
            "TimerTask.cancel unlinks an entry from its bucket",
        ),
        reachable(
            "cancel_races_add",
            lambda s: CANCELLED in s.status,
            "a task cancelled while its add is in flight is refused by TimingWheel.add and does not run",
        ),
        reachable(
            "entry_fired",
            lambda s: FIRED in s.status,
            "a flushed bucket's entry is refused as expired by add and runs (reinsert -> taskExecutor)",
        ),
    ]
    if max(config.delays) >= tick * ws * ws:
        props.append(
            reachable(
                "overflow_of_overflow_created",
                lambda s: len(s.wheels) > 2,
                "an entry beyond the level-1 interval creates a third wheel (seed 004: 3级时间轮)",
            )
        )
    if lag > 0:
        props.append(
            reachable(
                "runs_late_by_reaper_lag",
                lambda s: any(
                    st in _UNCANCELLED_FIRED and fa - e == lag
                    for st, e, fa in zip(s.status, s.expiration, s.fired_at)
                ),
                f"a task runs exactly reaper_lag ({lag} ms) late: the lateness bound is tight",
            )
        )
    if min(config.delays) < tick:
        props.append(
            reachable(
                "first_add_refused_expired",
                lambda s: FIRED_ON_ADD in s.status,
                "SystemTimer.add's timingWheel.add refuses an already expired entry, which runs at once",
            )
        )
    return attach(props, timing_wheel_explanations(config))  # each says why it fails (timing_explain.py)


SPEC = ModelSpec(
    name="timing-wheel",
    summary="Kafka's hierarchical TimingWheel with the SystemTimer's DelayQueue and reaper (seed 004)",
    config_cls=TimingWheelConfig,
    build=build,
    properties=properties,
)
