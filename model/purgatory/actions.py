"""The purgatory model's actions: one per statement of seed 004's ``DelayedOperation``,
``DelayedOperationPurgatory`` and the timer, each printed as a log line.
"""

from __future__ import annotations

from typing import NamedTuple

from model.purgatory.state import _PATH_NAMES, Pc, Thread

# ----------------------------------------------------------------------------- actions


class Submit(NamedTuple):
    who: str
    op: int
    partition: int
    hw: int
    required: int
    led: bool
    satisfied: bool
    last: bool
    all_done: bool

    def __str__(self) -> str:
        return f"{self.who}: tryCompleteElseWatch(op {self.op}) starts: " + _tc_text(self)


class TryCompleteCheck(NamedTuple):
    who: str
    op: int
    partition: int
    hw: int
    required: int
    led: bool
    satisfied: bool
    last: bool
    all_done: bool

    def __str__(self) -> str:
        return f"{self.who}: op {self.op} " + _tc_text(self)


def _tc_text(a: Submit | TryCompleteCheck) -> str:
    if not a.led:
        part = f"tryComplete() partition {a.partition}: no longer leader, error NOT_LEADER, acks done"
    elif a.satisfied:
        part = f"tryComplete() partition {a.partition} HW {a.hw} >= requiredOffset {a.required}, acks done"
    else:
        part = f"tryComplete() partition {a.partition} HW {a.hw} < requiredOffset {a.required}, acks pending"
    if a.last:
        part += "; no acks pending: forceComplete()" if a.all_done else "; tryComplete() returns false"
    return part


class CompareAndSet(NamedTuple):
    who: str
    op: int
    won: bool

    def __str__(self) -> str:
        res = "true" if self.won else "false (already completed): forceComplete returns false"
        return f"{self.who}: op {self.op} completed.compareAndSet(false, true) = {res}"


class ForceCompleteCancel(NamedTuple):
    who: str
    op: int
    removed: bool

    def __str__(self) -> str:
        what = "removes its timer entry" if self.removed else "finds no timer entry"
        return f"{self.who}: op {self.op} forceComplete: cancel() {what}"


class OnComplete(NamedTuple):
    who: str
    op: int
    path: int

    def __str__(self) -> str:
        return f"{self.who}: op {self.op} onComplete() (via {_PATH_NAMES[self.path]}); forceComplete returns true"


class WatchCheck(NamedTuple):
    who: str
    op: int
    key: int
    completed: bool

    def __str__(self) -> str:
        if self.completed:
            return f"{self.who}: op {self.op} isCompleted before watching key {self.key}: return false"
        return f"{self.who}: op {self.op} not completed, about to watch key {self.key}"


class Watch(NamedTuple):
    who: str
    op: int
    key: int
    first: bool

    def __str__(self) -> str:
        extra = "; estimatedTotalOperations.incrementAndGet()" if self.first else ""
        return f"{self.who}: watchForOperation(key {self.key}, op {self.op}){extra}"


class TryLock(NamedTuple):
    who: str
    op: int
    acquired: bool

    def __str__(self) -> str:
        return f"{self.who}: op {self.op} maybeTryComplete: lock.tryLock() = {str(self.acquired).lower()}"


class ClearPending(NamedTuple):
    who: str
    op: int

    def __str__(self) -> str:
        return f"{self.who}: op {self.op} tryCompletePending.set(false); tryComplete()"


class Unlock(NamedTuple):
    who: str
    op: int
    done: bool

    def __str__(self) -> str:
        return f"{self.who}: op {self.op} (done = {str(self.done).lower()}) lock.unlock()"


class GetPending(NamedTuple):
    who: str
    op: int
    value: bool
    retry: bool

    def __str__(self) -> str:
        return (
            f"{self.who}: op {self.op} tryCompletePending.get() = {str(self.value).lower()}, "
            f"retry = {str(self.retry).lower()}"
        )


class GetAndSetPending(NamedTuple):
    who: str
    op: int
    old: bool
    retry: bool

    def __str__(self) -> str:
        return (
            f"{self.who}: op {self.op} tryCompletePending.getAndSet(true) = {str(self.old).lower()}, "
            f"retry = {str(self.retry).lower()}"
        )


class LoopCheck(NamedTuple):
    who: str
    op: int
    completed: bool
    retry: bool
    again: bool
    done: bool

    def __str__(self) -> str:
        head = (
            f"{self.who}: op {self.op} while (!isCompleted && retry): "
            f"isCompleted = {str(self.completed).lower()}, retry = {str(self.retry).lower()}"
        )
        return head + (
            "; loop again" if self.again else f"; maybeTryComplete returns {str(self.done).lower()}"
        )


class TimerCheck(NamedTuple):
    who: str
    op: int
    completed: bool

    def __str__(self) -> str:
        if self.completed:
            return f"{self.who}: op {self.op} completed by another thread: tryCompleteElseWatch returns false"
        return f"{self.who}: op {self.op} not completed: add it to the timer"


class TimerAdd(NamedTuple):
    who: str
    op: int

    def __str__(self) -> str:
        return f"{self.who}: timeoutTimer.add(op {self.op})"


class TimerRecheck(NamedTuple):
    who: str
    op: int
    completed: bool

    def __str__(self) -> str:
        if self.completed:
            return f"{self.who}: op {self.op} completed meanwhile: cancel the timer task"
        return f"{self.who}: op {self.op} still not completed: tryCompleteElseWatch returns false"


class TimerCancel(NamedTuple):
    who: str
    op: int
    removed: bool

    def __str__(self) -> str:
        what = "removes its timer entry" if self.removed else "finds no timer entry"
        return f"{self.who}: op {self.op} cancel() {what}; tryCompleteElseWatch returns false"


class FollowerFetch(NamedTuple):
    who: str
    partition: int
    follower: int
    leo: int
    hw_before: int
    hw_after: int

    def __str__(self) -> str:
        return (
            f"{self.who}: follower {self.follower} of partition {self.partition} fetches: "
            f"LEO {self.leo - 1} -> {self.leo}, HW {self.hw_before} -> {self.hw_after}"
        )


class LeadershipLost(NamedTuple):
    who: str
    partition: int

    def __str__(self) -> str:
        return f"{self.who}: LeaderAndIsr makes this broker a follower of partition {self.partition}"


class IteratorStart(NamedTuple):
    who: str
    key: int
    first: int

    def __str__(self) -> str:
        head = f"{self.who}: checkAndComplete(key {self.key}): watchers.tryCompleteWatched() iterator"
        return head + (" finds no operation" if self.first < 0 else f" starts at op {self.first}")


class IteratorNext(NamedTuple):
    who: str
    key: int
    removed: int
    cur: int
    nxt: int

    def __str__(self) -> str:
        head = f"{self.who}: key {self.key}: "
        if self.removed >= 0:
            head += f"iter.remove() op {self.removed}; "
        after = "none" if self.nxt < 0 else f"op {self.nxt}"
        return head + f"iter.next() = op {self.cur} (next: {after})"


class CheckAndCompleteDone(NamedTuple):
    who: str
    key: int
    removed: int

    def __str__(self) -> str:
        head = f"{self.who}: key {self.key}: "
        if self.removed >= 0:
            head += f"iter.remove() op {self.removed}; "
        return head + "no next element: checkAndComplete returns"


class WatchedCheck(NamedTuple):
    who: str
    op: int
    key: int
    completed: bool

    def __str__(self) -> str:
        if self.completed:
            return f"{self.who}: key {self.key}: op {self.op} isCompleted: iter.remove()"
        return f"{self.who}: key {self.key}: op {self.op} not completed: maybeTryComplete()"


class TimerExpire(NamedTuple):
    op: int

    def __str__(self) -> str:
        return f"reaper: advanceClock: op {self.op}'s timer entry expires, handed to the executor"


class ExecutorRun(NamedTuple):
    op: int

    def __str__(self) -> str:
        return f"executor: op {self.op} run(): forceComplete()"


class OnExpiration(NamedTuple):
    op: int

    def __str__(self) -> str:
        return f"executor: op {self.op} onExpiration()"


class PurgeStart(NamedTuple):
    est: int
    delayed: int

    def __str__(self) -> str:
        return (
            f"reaper: estimatedTotalOperations {self.est} - delayed {self.delayed} > purgeInterval: "
            f"getAndSet({self.delayed}), purge watch lists"
        )


class PurgeKey(NamedTuple):
    key: int
    removed: int

    def __str__(self) -> str:
        gone = [o for o in range(self.removed.bit_length()) if self.removed >> o & 1]
        what = ", ".join(f"op {o}" for o in gone) if gone else "nothing"
        return f"reaper: purgeCompleted() on key {self.key} removes {what}"


_ALWAYS_KINDS = (
    Submit,
    TryCompleteCheck,
    CompareAndSet,
    ForceCompleteCancel,
    OnComplete,
    WatchCheck,
    Watch,
    TryLock,
    ClearPending,
    Unlock,
    GetPending,
    GetAndSetPending,
    LoopCheck,
    TimerCheck,
    TimerAdd,
    TimerRecheck,
    TimerCancel,
    FollowerFetch,
    LeadershipLost,
    IteratorStart,
    IteratorNext,
    CheckAndCompleteDone,
    WatchedCheck,
    TimerExpire,
    ExecutorRun,
    OnExpiration,
    PurgeStart,
    PurgeKey,
)
#: every action kind (class name) the model has
ACTION_KINDS = tuple(c.__name__ for c in _ALWAYS_KINDS)


_new = tuple.__new__


def _set(tup: tuple, i: int, v: object) -> tuple:
    return (*tup[:i], v, *tup[i + 1 :])


def _go(th: Thread, pc: Pc) -> Thread:
    """``th`` with its program counter moved to ``pc`` (a fast ``_replace``)."""
    return _new(Thread, (pc, *th[1:]))
