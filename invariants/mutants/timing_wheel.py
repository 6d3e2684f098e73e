"""The timing-wheel model's named bugs: each a small override of one step of Kafka's timer.

Every mutant here is a subclass of :class:`~model.timing_wheel.TimingWheel` that replaces
one method, most of them named after the Kafka method they stand for (``TimingWheel.add``'s
bucket choice, ``addOverflowWheel``, ``TimerTaskList.flush``, ``getDelay``). The tests that
show which property each breaks are in ``tests/test_timing_wheel.py``; the z3 proofs of
``invariants/proofs_timing.py`` refute three of them on the same code.

>>> from invariants.mutants.timing_wheel import MUTANTS, TimingWheelConfig
>>> type(MUTANTS.system("flush_forgets_readd", TimingWheelConfig())).__name__
'FlushForgetsReadd'
>>> TimingWheelConfig(mutant="no-such-bug")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.config.ConfigError: mutant: expected one of none, overflow_start_zero, ..., got 'no-such-bug'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.config import key
from invariants.mutants import Catalogue
from model.timing_wheel import (
    _RAN,
    _RAN_CANCELLED,
    _REFUSED_CANCELLED,
    FIRED_STATUSES,
    FIRED_TWICE,
    RAN_CANCELLED,
    EntryStatus,
    TimingWheel,
    TWState,
)
from model.timing_wheel import TimingWheelConfig as ModelTimingWheelConfig

__all__ = ["MUTANTS", "TimingWheelConfig", "build"]

MUTANTS = Catalogue("timing-wheel", TimingWheel)
"""Every timing-wheel mutant by name (``none``: the model as written)."""


# -- TimingWheel.add and addOverflowWheel --------------------------------------------------------


@MUTANTS.register("overflow_start_zero", "addOverflowWheel: startMs = 0 instead of the parent's currentTime")
class OverflowStartZero(TimingWheel):
    def add_overflow_wheel(self, wheels: list[Any], interval: Any, start_ms: Any) -> None:
        super().add_overflow_wheel(wheels, interval, 0)


@MUTANTS.register("bucket_index_off_by_one", "TimingWheel.add: bucket (virtualId + 1) % wheelSize")
class BucketIndexOffByOne(TimingWheel):
    def bucket_index(self, virtual_id: Any) -> Any:
        return super().bucket_index(virtual_id + 1)


# -- TimerTaskList.flush -------------------------------------------------------------------------


@MUTANTS.register("flush_forgets_readd", "TimerTaskList.flush unlinks entries but never re-adds them")
class FlushForgetsReadd(TimingWheel):
    def _flush(
        self,
        s: TWState,
        wheels: list[Any],
        queue: list[tuple[int, int]],
        status: list[EntryStatus],
        fired_at: list[int],
        lv: int,
        ix: int,
    ) -> list[tuple[int, int, int, int, str]]:
        w = self._mut(wheels, lv)
        w[3][ix] = 0
        w[2][ix] = -1
        return []


@MUTANTS.register("flush_keeps_entries", "TimerTaskList.flush re-adds entries without unlinking them")
class FlushKeepsEntries(TimingWheel):
    def _flush(
        self,
        s: TWState,
        wheels: list[Any],
        queue: list[tuple[int, int]],
        status: list[EntryStatus],
        fired_at: list[int],
        lv: int,
        ix: int,
    ) -> list[tuple[int, int, int, int, str]]:
        mask = self._mut(wheels, lv)[3][ix]
        flushed = super()._flush(s, wheels, queue, status, fired_at, lv, ix)
        wheels[lv][3][ix] |= mask  # the entries stay linked (and whatever a re-add linked there)
        return flushed

    def _add_entry(
        self,
        wheels: list[Any],
        queue: list[tuple[int, int]],
        status: list[EntryStatus],
        fired_at: list[int],
        entry: int,
        e: int,
        now: int,
        first: bool,
    ) -> tuple[int, int, int, str]:
        # a kept entry that ran already is flushed again: record that it runs a second time
        ran = status[entry] in FIRED_STATUSES
        r = super()._add_entry(wheels, queue, status, fired_at, entry, e, now, first)
        if ran and r[0] == _RAN:
            status[entry] = FIRED_TWICE
        return r


@MUTANTS.register("add_accepts_cancelled", "TimingWheel.add does not refuse a cancelled entry")
class AddAcceptsCancelled(TimingWheel):
    def _wheel_add(
        self, wheels: list[Any], queue: list[tuple[int, int]], entry: int, e: int, cancelled: bool
    ) -> tuple[bool, int, int]:
        return super()._wheel_add(wheels, queue, entry, e, False)


@MUTANTS.register("run_cancelled_on_refusal", "addTimerTaskEntry runs a refused entry even if cancelled")
class RunCancelledOnRefusal(TimingWheel):
    def _add_entry(
        self,
        wheels: list[Any],
        queue: list[tuple[int, int]],
        status: list[EntryStatus],
        fired_at: list[int],
        entry: int,
        e: int,
        now: int,
        first: bool,
    ) -> tuple[int, int, int, str]:
        r = super()._add_entry(wheels, queue, status, fired_at, entry, e, now, first)
        if r[0] != _REFUSED_CANCELLED:
            return r
        status[entry] = RAN_CANCELLED  # taskExecutor.submit without the `if (!cancelled)`
        if fired_at[entry] < 0:
            fired_at[entry] = now
        return _RAN_CANCELLED, -1, -1, ""


# -- the reaper's DelayQueue.poll ------------------------------------------------------------------


@MUTANTS.register("poll_before_expiry", "the reaper takes the queue's head whether it is due or not")
class PollBeforeExpiry(TimingWheel):
    def _due(self, expiration: int, t: int) -> bool:
        return True


@MUTANTS.register("delay_off_by_one", "TimerTaskList.getDelay: a bucket is due 1 ms after its expiration")
class DelayOffByOne(TimingWheel):
    def _due(self, expiration: int, t: int) -> bool:
        return super()._due(expiration + 1, t)


@MUTANTS.register("poll_any_expired", "the reaper takes any due bucket, not the earliest")
class PollAnyExpired(TimingWheel):
    def _poll(self, s: TWState, exps: list[int], head: int, out: list[tuple[Any, TWState]]) -> None:
        seen: set[tuple[int, int]] = set()
        for k, b in enumerate(s.queue):
            if b in seen or not self._due(exps[k], s.now):
                continue
            seen.add(b)
            out.append(self._reap(s, k))


@dataclass(frozen=True)
class TimingWheelConfig(ModelTimingWheelConfig):
    """``model.timing_wheel.TimingWheelConfig`` plus the test-only ``mutant`` key (this module's
    catalogue); the configuration the CLI and the tests load."""

    mutant: str = key(
        "none", "test-only: inject a named bug (invariants/mutants/timing_wheel.py)", choices=MUTANTS.names()
    )


def build(config: ModelTimingWheelConfig) -> TimingWheel:
    """The system of ``config``, with its ``mutant`` when it names one.

    >>> type(build(TimingWheelConfig())).__name__
    'TimingWheel'
    """
    system: TimingWheel = MUTANTS.system(getattr(config, "mutant", "none"), config)
    return system
