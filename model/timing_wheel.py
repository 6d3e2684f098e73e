"""Kafka's hierarchical timing wheel driven by the SystemTimer's DelayQueue (seed 004).

The model follows ``kafka.utils.timer`` of Kafka 2.x: ``SystemTimer.add`` /
``addTimerTaskEntry`` / ``advanceClock``, ``TimingWheel.add`` / ``addOverflowWheel`` /
``advanceClock`` and ``TimerTaskList.setExpiration`` / ``flush``, with the seed's
``TimingWheel.scala`` printed in seed 004 (lines 470-610) where it speaks.

Actors and steps
----------------
- **Callers** (one timer task per entry, added in id order since entries are
  interchangeable): ``SystemTimer.add`` builds a ``TimerTaskEntry`` whose expiration is
  ``now + delay`` (:class:`AddTask`); a later step runs ``addTimerTaskEntry``
  (:class:`InsertEntry`): ``timingWheel.add`` places the entry in a bucket, or refuses
  it (already expired, or cancelled); a refused entry that is not cancelled runs at once.
- **Cancel** (:class:`CancelTask`): ``TimerTask.cancel`` removes the entry from its
  bucket (the bucket keeps its expiration and stays in the DelayQueue), or, when it
  races with an add in flight, makes that add see a cancelled entry.
- **Clock** (:class:`ClockTick`): the wall clock ("now", ms) moves on by 1 up to
  ``max_clock``.
- **Reaper** (:class:`ReaperPoll`): ``ExpiredOperationReaper`` -> ``SystemTimer.advanceClock``
  polls the DelayQueue's earliest due bucket, advances the wheels to its expiration
  (``TimingWheel.advanceClock``, which also advances the overflow wheel) and flushes it
  (expiration reset to -1, every entry re-added through ``addTimerTaskEntry``). Each poll
  of the reaper's ``while (bucket != null)`` loop is one step.

Scheduling assumptions (documented bounds)
------------------------------------------
- ``reaper_lag`` (K): the clock does not move on while the DelayQueue's head has been
  due (by the DelayQueue's own ``getDelay``) for K ms or more: the reaper reacts within
  K ms. With an arbitrarily slow reaper, lateness is unbounded.
- An add in flight (``SystemTimer.add`` holds the read lock) finishes within the
  millisecond: the clock does not move and the reaper (write lock) does not run while
  one is in flight. Cancels take no timer lock and may interleave anywhere.
- A poll of the reaper's loop is one step, so an add may come between two polls of one
  loop (Kafka's write lock forbids that): a superset of Kafka's interleavings.
- The DelayQueue is a multiset of buckets ordered by their current expiration; among
  buckets of equal expiration the poll order is left open (Java's heap order).

State
-----
:class:`TWState` is flat: ``now``, the wheels (level 0 first, each a :class:`Wheel` of
``tick``, ``current_time``, per-bucket expirations and per-bucket entry bitmasks), the
DelayQueue as a sorted tuple of ``(level, bucket)`` and per-entry status, expiration
and fire time.

Example
-------
>>> cfg = TimingWheelConfig(tick_ms=1, wheel_size=3, entries=1, delays=(4,), max_clock=4)
>>> tw = TimingWheel(cfg)
>>> s = tw.init_states()[0]
>>> a, s = next(iter(tw.successors(s)))
>>> str(a)
'entry 0: SystemTimer.add at 0 ms with delay 4 ms (expiration 4)'
>>> a, s = next(iter(tw.successors(s)))
>>> str(a)
'entry 0: timingWheel.add puts expiration 4 in wheel 1 bucket 1 [3,6)'
>>> len(s.wheels), s.wheels[1].tick, s.queue
(2, 3, ((1, 1),))
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from explorer.config import ConfigError, key, validate
from model.action_text import thread_arrow

__all__ = [
    "CANCELLED_STATUSES",
    "FIRED_STATUSES",
    "IN_WHEEL",
    "WAITING",
    "AddTask",
    "CancelTask",
    "ClockTick",
    "EntryStatus",
    "InsertEntry",
    "ReaperPoll",
    "TWState",
    "TimingWheel",
    "TimingWheelConfig",
    "Wheel",
    "bucket_range",
]


class EntryStatus(enum.IntEnum):
    """Where a timer task's entry is in its life."""

    IDLE = 0  #: not yet given to SystemTimer.add
    ADDING = 1  #: TimerTaskEntry built (expiration fixed); addTimerTaskEntry not yet run
    ADDING_CANCELLED = 2  #: cancelled while its add was in flight
    PENDING = 3  #: in the bucket where its first add placed it
    MOVED = 4  #: in a bucket where a flush re-added it (one level down or more)
    CANCELLED = 5  #: cancelled before timingWheel.add, which refused it
    CANCELLED_IN_WHEEL = 6  #: TimerTask.cancel removed it from its bucket
    FIRED_ON_ADD = 7  #: its first add refused it as expired; SystemTimer.add ran it
    FIRED = 8  #: a flush re-added it, add refused it as expired; it ran
    # No step of the model produces the next two: the properties rule them out, and the named
    # bugs of invariants/mutants/timing_wheel.py that break them record them.
    FIRED_TWICE = 9  #: ran a second time
    RAN_CANCELLED = 10  #: ran although cancelled


IDLE, ADDING, ADDING_CANCELLED = EntryStatus.IDLE, EntryStatus.ADDING, EntryStatus.ADDING_CANCELLED
PENDING, MOVED = EntryStatus.PENDING, EntryStatus.MOVED
CANCELLED, CANCELLED_IN_WHEEL = EntryStatus.CANCELLED, EntryStatus.CANCELLED_IN_WHEEL
FIRED_ON_ADD, FIRED, FIRED_TWICE = EntryStatus.FIRED_ON_ADD, EntryStatus.FIRED, EntryStatus.FIRED_TWICE
RAN_CANCELLED = EntryStatus.RAN_CANCELLED

#: statuses of an entry sitting in the wheel
IN_WHEEL = frozenset({PENDING, MOVED})
#: statuses of an entry that has run
FIRED_STATUSES = frozenset({FIRED_ON_ADD, FIRED, FIRED_TWICE, RAN_CANCELLED})
#: statuses of a cancelled entry
CANCELLED_STATUSES = frozenset({ADDING_CANCELLED, CANCELLED, CANCELLED_IN_WHEEL, RAN_CANCELLED})
#: uncancelled entries with an expiration that have not run yet
WAITING = frozenset({ADDING, PENDING, MOVED})


@dataclass(frozen=True)
class TimingWheelConfig:
    """Bounds and switches of the ``timing-wheel`` model.

    >>> TimingWheelConfig(delays=())
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: delays: must list at least one delay
    """

    tick_ms: int = key(1, "tickMs of the level-0 wheel (Kafka's SystemTimer uses 1)", min=1, max=1000)
    wheel_size: int = key(3, "wheelSize, buckets per wheel (Kafka's SystemTimer uses 20)", min=2, max=64)
    entries: int = key(2, "number of timer tasks, each added once", min=1, max=16)
    delays: tuple[int, ...] = key((1, 4), "delays (ms) a task may be added with", min=0, max=10_000)
    max_clock: int = key(8, "bound on the wall clock 'now' (ms), advanced 1 ms at a time", min=0, max=10_000)
    max_cancels: int = key(1, "budget: at most this many tasks are cancelled", min=0, max=16)
    reaper_lag: int = key(0, "ms the reaper may take to poll a due bucket (the clock waits after)", min=0)

    def __post_init__(self) -> None:
        validate(self)
        if not self.delays:
            raise ConfigError("delays: must list at least one delay")
        if len(set(self.delays)) != len(self.delays):
            raise ConfigError(f"delays: must not repeat a delay, got {list(self.delays)}")


class Wheel(NamedTuple):
    """One level of the hierarchy: ``TimingWheel(tickMs, wheelSize, startMs, ...)``.

    ``expirations[i]`` is bucket i's ``TimerTaskList.expiration`` (-1 when unset);
    ``buckets[i]`` the bitmask of the entries linked in it.
    """

    tick: int
    current_time: int
    expirations: tuple[int, ...]
    buckets: tuple[int, ...]


class TWState(NamedTuple):
    """A state of the timer: clock, wheels, DelayQueue and the entries."""

    now: int
    wheels: tuple[Wheel, ...]
    queue: tuple[tuple[int, int], ...]  # DelayQueue: (level, bucket) pairs, sorted, repeats allowed
    status: tuple[EntryStatus, ...]
    expiration: tuple[int, ...]  # TimerTaskEntry.expirationMs, -1 before the add
    fired_at: tuple[int, ...]  # wall clock when it (first) ran, -1 if never


def bucket_range(w: Wheel, i: int) -> str:
    """The time range ``[start,end)`` of bucket ``i`` of wheel ``w``, from its expiration.

    >>> bucket_range(Wheel(3, 0, (-1, 3, -1), (0, 1, 0)), 1)
    '[3,6)'
    """
    x = w.expirations[i]
    return "[unset)" if x < 0 else f"[{x},{x + w.tick})"


class AddTask(NamedTuple):
    """``SystemTimer.add``: a TimerTaskEntry with expiration ``now + delay`` is built."""

    entry: int
    delay: int
    now: int
    expiration: int

    def __str__(self) -> str:
        return (
            f"entry {self.entry}: SystemTimer.add at {self.now} ms with delay {self.delay} ms "
            f"(expiration {self.expiration})"
        )


# outcomes of an addTimerTaskEntry call (_RAN_CANCELLED: only a named bug runs a cancelled entry)
_PLACED, _RAN, _REFUSED_CANCELLED, _CANCELLED_PLACED, _RAN_CANCELLED = range(5)


def _outcome_text(outcome: int, level: int, index: int, bucket: str) -> str:
    if outcome == _PLACED:
        return f"goes to wheel {level} bucket {index} {bucket}"
    if outcome == _CANCELLED_PLACED:
        return f"goes (cancelled) to wheel {level} bucket {index} {bucket}"
    if outcome == _RAN:
        return "is refused as expired and runs at once"
    if outcome == _RAN_CANCELLED:
        return "is refused and runs at once although cancelled"
    return "is refused as cancelled and does not run"


class InsertEntry(NamedTuple):
    """``addTimerTaskEntry`` of a new entry: ``timingWheel.add``, or run it at once."""

    entry: int
    expiration: int
    outcome: int
    level: int
    index: int  # type: ignore[assignment]  # Kafka's name; shadows tuple.index
    bucket: str

    def __str__(self) -> str:
        if self.outcome in (_PLACED, _CANCELLED_PLACED):
            what = "puts expiration" if self.outcome == _PLACED else "puts cancelled expiration"
            return (
                f"entry {self.entry}: timingWheel.add {what} {self.expiration} in wheel {self.level} "
                f"bucket {self.index} {self.bucket}"
            )
        return f"entry {self.entry}: addTimerTaskEntry: it {_outcome_text(self.outcome, 0, 0, '')}"


class CancelTask(NamedTuple):
    """``TimerTask.cancel``: unlink the entry from its bucket (or from an add in flight)."""

    entry: int
    level: int  # -1: the entry's add is in flight
    index: int  # type: ignore[assignment]  # Kafka's name; shadows tuple.index

    def __str__(self) -> str:
        if self.level < 0:
            return f"entry {self.entry}: TimerTask.cancel while its add is in flight"
        return f"entry {self.entry}: TimerTask.cancel removes it from wheel {self.level} bucket {self.index}"


class ClockTick(NamedTuple):
    """The wall clock moves on by 1 ms."""

    now: int

    def __str__(self) -> str:
        return f"clock: {self.now} ms -> {self.now + 1} ms"


class ReaperPoll(NamedTuple):
    """One poll of ``SystemTimer.advanceClock``: poll, ``advanceClock``, ``flush``."""

    now: int
    level: int
    index: int  # type: ignore[assignment]  # Kafka's name; shadows tuple.index
    expiration: int
    flushed: tuple[tuple[int, int, int, int, str], ...]  # (entry, outcome, level, index, range)

    def __str__(self) -> str:
        head = (
            f"reaper at {self.now} ms: DelayQueue yields wheel {self.level} bucket {self.index} "
            f"(expiration {self.expiration}); advanceClock({self.expiration}); flush"
        )
        if not self.flushed:
            return head + " (empty)"
        parts = [f"entry {e} {_outcome_text(o, lv, ix, r)}" for e, o, lv, ix, r in self.flushed]
        if len(parts) == 1:
            return head + ": " + parts[0]
        return head + ": " + "; ".join(parts)


def _set(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    return (*t[:i], v, *t[i + 1 :])


class TimingWheel:
    """The transition system of ``SystemTimer`` + ``TimingWheel`` (see the module doc).

    >>> tw = TimingWheel(TimingWheelConfig(entries=1, delays=(1,), max_clock=1))
    >>> [str(a) for a, _ in tw.successors(tw.init_states()[0])]
    ['entry 0: SystemTimer.add at 0 ms with delay 1 ms (expiration 1)', 'clock: 0 ms -> 1 ms']
    """

    def __init__(self, config: TimingWheelConfig):
        self.config = config
        self.tick = config.tick_ms
        self.ws = config.wheel_size
        self.delays = tuple(sorted(config.delays))
        self.max_clock = config.max_clock
        self.lag = config.reaper_lag
        self.max_cancels = config.max_cancels

    # -- the contract ----------------------------------------------------------------

    def init_states(self) -> list[TWState]:
        """One initial state: now 0, one empty wheel started at 0, no task added."""
        n, ws = self.config.entries, self.ws
        wheel0 = Wheel(self.tick, 0, (-1,) * ws, (0,) * ws)
        return [TWState(0, (wheel0,), (), (IDLE,) * n, (-1,) * n, (-1,) * n)]

    def sequence_arrow(self, action: object) -> tuple[str, str, str]:
        """The report's sequence diagrams: a lifeline per thread, each step on its own
        (:func:`model.action_text.thread_arrow`)."""
        return thread_arrow(action)

    def action_kinds(self) -> tuple[str, ...]:
        """Every action kind this model can take."""
        return ("AddTask", "InsertEntry", "CancelTask", "ClockTick", "ReaperPoll")

    def is_terminal(self, s: TWState) -> bool:
        """A state without successors is a proper end once the clock reached its bound."""
        return s.now >= self.max_clock

    def successors(self, s: TWState) -> Iterable[tuple[Any, TWState]]:
        """Every enabled step: add, insert, cancel, clock tick, reaper poll (in that order)."""
        out: list[tuple[Any, TWState]] = []
        now, status, exp = s.now, s.status, s.expiration
        # callers: the lowest idle entry may be added with any delay
        for i, st in enumerate(status):
            if st == IDLE:
                st2 = _set(status, i, ADDING)
                for d in self.delays:
                    e = now + d
                    out.append((AddTask(i, d, now, e), s._replace(status=st2, expiration=_set(exp, i, e))))
                break
        in_flight = False
        may_cancel = self.max_cancels > 0 and (
            CANCELLED_STATUSES.isdisjoint(status)
            or sum(st in CANCELLED_STATUSES for st in status) < self.max_cancels
        )
        for i, st in enumerate(status):
            if st in (ADDING, ADDING_CANCELLED):
                in_flight = True
                out.append(self._insert(s, i))
                if st == ADDING and may_cancel:
                    out.append((CancelTask(i, -1, -1), s._replace(status=_set(status, i, ADDING_CANCELLED))))
            elif may_cancel and st in IN_WHEEL:
                out.append(self._cancel(s, i))
        if in_flight:
            return out
        queue = s.queue
        if queue:
            wheels = s.wheels
            exps = [wheels[lv].expirations[ix] for lv, ix in queue]
            head = min(exps)
        # clock: waits while the DelayQueue's head has been due for reaper_lag ms or more
        if now < self.max_clock and not (queue and self._due(head, now - self.lag)):
            out.append((ClockTick(now), s._replace(now=now + 1)))
        if queue:
            self._poll(s, exps, head, out)
        return out

    # -- pieces ------------------------------------------------------------------------

    def _poll(self, s: TWState, exps: list[int], head: int, out: list[tuple[Any, TWState]]) -> None:
        """The reaper's ``DelayQueue.poll``: the earliest bucket (any of equal expiration) if it is
        due, flushed by :meth:`_reap`; ``exps`` are the expirations of ``s.queue``, ``head`` their
        minimum."""
        now = s.now
        seen: set[tuple[int, int]] = set()
        for k, b in enumerate(s.queue):
            x = exps[k]
            if x != head or b in seen or not self._due(x, now):
                continue
            seen.add(b)
            out.append(self._reap(s, k))

    def _due(self, expiration: int, t: int) -> bool:
        """DelayQueue.poll's test: the bucket's ``getDelay`` at time t is <= 0."""
        return expiration <= t

    # During one step the wheels are a list holding each level either as its (unchanged)
    # Wheel or, once touched, as a mutable [tick, current_time, expirations, buckets].

    @staticmethod
    def _mut(wheels: list[Any], level: int) -> list[Any]:
        w = wheels[level]
        if type(w) is not list:
            w = wheels[level] = [w[0], w[1], list(w[2]), list(w[3])]
        return w

    @staticmethod
    def advance_clock(wheels: list[Any], time_ms: Any) -> None:
        """``TimingWheel.advanceClock(timeMs)``, recursing into the overflow wheels.

        ``if (timeMs >= currentTime + tickMs) { currentTime = timeMs - (timeMs % tickMs);
        if (overflowWheel != null) overflowWheel.advanceClock(currentTime) }``; each wheel is
        ``(tickMs, currentTime, ...)`` and is made mutable in place. The z3 proofs run this
        same function over symbolic times.

        >>> ws = [[1, 0, None, None], [3, 0, None, None]]
        >>> TimingWheel.advance_clock(ws, 4); [w[1] for w in ws]
        [4, 3]
        """
        t_ms = time_ms
        for level in range(len(wheels)):
            wl = wheels[level]
            if t_ms >= wl[1] + wl[0]:
                t_ms = t_ms - t_ms % wl[0]
                TimingWheel._mut(wheels, level)[1] = t_ms
            else:
                break

    @staticmethod
    def _freeze(wheels: list[Any]) -> tuple[Wheel, ...]:
        return tuple(w if type(w) is Wheel else Wheel(w[0], w[1], tuple(w[2]), tuple(w[3])) for w in wheels)

    def _wheel_add(
        self, wheels: list[Any], queue: list[tuple[int, int]], entry: int, e: int, cancelled: bool
    ) -> tuple[bool, int, int]:
        """``TimingWheel.add`` from the root: (accepted, level, bucket index)."""
        ws = self.ws
        level = 0
        while True:
            w = wheels[level]
            tick, ct = w[0], w[1]
            if cancelled:
                return False, -1, -1
            if e < ct + tick:  # already expired
                return False, -1, -1
            interval = tick * ws
            if e < ct + interval:
                vid = e // tick
                ix = self.bucket_index(vid)
                w = self._mut(wheels, level)
                w[3][ix] |= 1 << entry
                if w[2][ix] != vid * tick:  # bucket.setExpiration(virtualId * tickMs) changed it
                    w[2][ix] = vid * tick
                    queue.append((level, ix))  # queue.offer(bucket)
                return True, level, ix
            if level + 1 == len(wheels):
                self.add_overflow_wheel(wheels, interval, ct)
            level += 1

    def bucket_index(self, virtual_id: Any) -> Any:
        """``TimingWheel.add``'s bucket: ``buckets((virtualId % wheelSize.toLong).toInt)``."""
        return virtual_id % self.ws

    def add_overflow_wheel(self, wheels: list[Any], interval: Any, start_ms: Any) -> None:
        """``addOverflowWheel``: ``new TimingWheel(tickMs = interval, wheelSize, startMs =
        currentTime, ...)``, whose ``currentTime = startMs - (startMs % tickMs)``."""
        ws = self.ws
        wheels.append([interval, start_ms - start_ms % interval, [-1] * ws, [0] * ws])

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
        """``SystemTimer.addTimerTaskEntry``: add to the wheel, else run unless cancelled."""
        st = status[entry]
        cancelled = st in CANCELLED_STATUSES
        ok, lv, ix = self._wheel_add(wheels, queue, entry, e, cancelled)
        if ok:
            if cancelled:
                outcome = _CANCELLED_PLACED
                if st == ADDING_CANCELLED:
                    status[entry] = CANCELLED
            else:
                outcome = _PLACED
                status[entry] = PENDING if first else MOVED
            t, _, x, _ = wheels[lv]
            return outcome, lv, ix, f"[{x[ix]},{x[ix] + t})"
        if cancelled:
            if st == ADDING_CANCELLED:
                status[entry] = CANCELLED
            return _REFUSED_CANCELLED, -1, -1, ""
        status[entry] = FIRED_ON_ADD if first else FIRED
        if fired_at[entry] < 0:
            fired_at[entry] = now
        return _RAN, -1, -1, ""

    def _insert(self, s: TWState, i: int) -> tuple[InsertEntry, TWState]:
        wheels, queue = list(s.wheels), list(s.queue)
        status, fired_at = list(s.status), list(s.fired_at)
        e = s.expiration[i]
        outcome, lv, ix, rng = self._add_entry(wheels, queue, status, fired_at, i, e, s.now, True)
        t = TWState(
            s.now, self._freeze(wheels), tuple(sorted(queue)), tuple(status), s.expiration, tuple(fired_at)
        )
        return InsertEntry(i, e, outcome, lv, ix, rng), t

    def _cancel(self, s: TWState, i: int) -> tuple[CancelTask, TWState]:
        bit = 1 << i
        wheels = list(s.wheels)
        where = (-1, -1)
        for lv, w in enumerate(wheels):
            b = w.buckets
            for ix, mask in enumerate(b):
                if mask & bit:
                    b = _set(b, ix, mask & ~bit)
                    if where[0] < 0:
                        where = (lv, ix)
            if b is not w.buckets:
                wheels[lv] = w._replace(buckets=b)
        t = s._replace(wheels=tuple(wheels), status=_set(s.status, i, CANCELLED_IN_WHEEL))
        return CancelTask(i, where[0], where[1]), t

    def _reap(self, s: TWState, k: int) -> tuple[ReaperPoll, TWState]:
        wheels, queue = list(s.wheels), list(s.queue)
        lv, ix = queue.pop(k)
        x = wheels[lv][2][ix]
        self.advance_clock(wheels, x)  # timingWheel.advanceClock(bucket.getExpiration())
        status, fired_at = list(s.status), list(s.fired_at)
        flushed = self._flush(s, wheels, queue, status, fired_at, lv, ix)
        t = TWState(
            s.now, self._freeze(wheels), tuple(sorted(queue)), tuple(status), s.expiration, tuple(fired_at)
        )
        return ReaperPoll(s.now, lv, ix, x, tuple(flushed)), t

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
        """``TimerTaskList.flush(reinsert)`` of bucket ``ix`` of wheel ``lv``: unlink every entry,
        re-add each through ``addTimerTaskEntry``, then ``expiration.set(-1L)``; returns what
        became of each entry."""
        w = self._mut(wheels, lv)
        mask = w[3][ix]
        w[3][ix] = 0
        flushed = []
        now, exp = s.now, s.expiration
        e_id = 0
        while mask:
            if mask & 1:
                r = self._add_entry(wheels, queue, status, fired_at, e_id, exp[e_id], now, False)
                flushed.append((e_id, *r))
            mask >>= 1
            e_id += 1
        w[2][ix] = -1
        return flushed
