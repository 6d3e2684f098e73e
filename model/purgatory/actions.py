"""The purgatory model's actions: one per statement of seed 004's ``DelayedOperation``,
``DelayedOperationPurgatory`` and the timer, each printed as a log line.
"""

from __future__ import annotations

from typing import NamedTuple

from explorer.core import effects
from model.action_text import says, says_if
from model.purgatory.effects import Effect
from model.purgatory.state import _PATH_NAMES, Pc, Thread

# ----------------------------------------------------------------------------- actions


class PartitionCheck(NamedTuple):
    """The fields of a ``DelayedProduce.tryComplete()`` step: one partition checked, and with
    the last one whether every ack is done (the step :class:`Submit` and
    :class:`TryCompleteCheck` share)."""

    who: str
    op: int
    partition: int
    hw: int
    required: int
    led: bool
    satisfied: bool
    last: bool
    all_done: bool

    def checked(self) -> str:
        """What ``tryComplete()`` found, as the log line's tail."""
        if not self.led:
            part = f"tryComplete() partition {self.partition}: no longer leader, error NOT_LEADER, acks done"
        elif self.satisfied:
            part = f"tryComplete() partition {self.partition} HW {self.hw} >= requiredOffset {self.required}, acks done"
        else:
            part = f"tryComplete() partition {self.partition} HW {self.hw} < requiredOffset {self.required}, acks pending"
        if self.last:
            part += "; no acks pending: forceComplete()" if self.all_done else "; tryComplete() returns false"
        return part


class Submit(PartitionCheck):
    """``tryCompleteElseWatch``'s first ``tryComplete()``."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"{self.who}: tryCompleteElseWatch(op {self.op}) starts: " + self.checked()


class TryCompleteCheck(PartitionCheck):
    """A later ``tryComplete()`` step of an operation."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"{self.who}: op {self.op} " + self.checked()


@says_if(
    "won",
    "{who}: op {op} completed.compareAndSet(false, true) = true",
    "{who}: op {op} completed.compareAndSet(false, true) = false (already completed): forceComplete returns false",
)
class CompareAndSet(NamedTuple):
    who: str
    op: int
    won: bool


@says_if(
    "removed",
    "{who}: op {op} forceComplete: cancel() removes its timer entry",
    "{who}: op {op} forceComplete: cancel() finds no timer entry",
)
class ForceCompleteCancel(NamedTuple):
    who: str
    op: int
    removed: bool


class OnComplete(NamedTuple):
    who: str
    op: int
    path: int

    def __str__(self) -> str:
        return f"{self.who}: op {self.op} onComplete() (via {_PATH_NAMES[self.path]}); forceComplete returns true"


@says_if(
    "completed",
    "{who}: op {op} isCompleted before watching key {key}: return false",
    "{who}: op {op} not completed, about to watch key {key}",
)
class WatchCheck(NamedTuple):
    who: str
    op: int
    key: int
    completed: bool


@says_if(
    "first",
    "{who}: watchForOperation(key {key}, op {op}); estimatedTotalOperations.incrementAndGet()",
    "{who}: watchForOperation(key {key}, op {op})",
)
class Watch(NamedTuple):
    who: str
    op: int
    key: int
    first: bool


@says("{who}: op {op} maybeTryComplete: lock.tryLock() = {acquired}")
class TryLock(NamedTuple):
    who: str
    op: int
    acquired: bool


@says("{who}: op {op} tryCompletePending.set(false); tryComplete()")
class ClearPending(NamedTuple):
    who: str
    op: int


@says("{who}: op {op} (done = {done}) lock.unlock()")
class Unlock(NamedTuple):
    who: str
    op: int
    done: bool


@says("{who}: op {op} tryCompletePending.get() = {value}, retry = {retry}")
class GetPending(NamedTuple):
    who: str
    op: int
    value: bool
    retry: bool


@says("{who}: op {op} tryCompletePending.getAndSet(true) = {old}, retry = {retry}")
class GetAndSetPending(NamedTuple):
    who: str
    op: int
    old: bool
    retry: bool


@says_if(
    "again",
    "{who}: op {op} while (!isCompleted && retry): isCompleted = {completed}, retry = {retry}; loop again",
    "{who}: op {op} while (!isCompleted && retry): isCompleted = {completed}, retry = {retry}"
    "; maybeTryComplete returns {done}",
)
class LoopCheck(NamedTuple):
    who: str
    op: int
    completed: bool
    retry: bool
    again: bool
    done: bool


@says_if(
    "completed",
    "{who}: op {op} completed by another thread: tryCompleteElseWatch returns false",
    "{who}: op {op} not completed: add it to the timer",
)
class TimerCheck(NamedTuple):
    who: str
    op: int
    completed: bool


@says("{who}: timeoutTimer.add(op {op})")
class TimerAdd(NamedTuple):
    who: str
    op: int


@says_if(
    "completed",
    "{who}: op {op} completed meanwhile: cancel the timer task",
    "{who}: op {op} still not completed: tryCompleteElseWatch returns false",
)
class TimerRecheck(NamedTuple):
    who: str
    op: int
    completed: bool


@says_if(
    "removed",
    "{who}: op {op} cancel() removes its timer entry; tryCompleteElseWatch returns false",
    "{who}: op {op} cancel() finds no timer entry; tryCompleteElseWatch returns false",
)
class TimerCancel(NamedTuple):
    who: str
    op: int
    removed: bool


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


@says("{who}: LeaderAndIsr makes this broker a follower of partition {partition}")
class LeadershipLost(NamedTuple):
    who: str
    partition: int


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
        after = "none" if self.nxt < 0 else f"op {self.nxt}"
        return _iterator_step(self) + f"iter.next() = op {self.cur} (next: {after})"


@effects(Effect.ENDS_WATCHER_TRAVERSAL)
class CheckAndCompleteDone(NamedTuple):
    who: str
    key: int
    removed: int

    def __str__(self) -> str:
        return _iterator_step(self) + "no next element: checkAndComplete returns"


def _iterator_step(a: IteratorNext | CheckAndCompleteDone) -> str:
    """The head of an iterator step's log line: the key, and the ``iter.remove()`` of the
    previous element if it removed one."""
    head = f"{a.who}: key {a.key}: "
    return head + f"iter.remove() op {a.removed}; " if a.removed >= 0 else head


@says_if(
    "completed",
    "{who}: key {key}: op {op} isCompleted: iter.remove()",
    "{who}: key {key}: op {op} not completed: maybeTryComplete()",
)
class WatchedCheck(NamedTuple):
    who: str
    op: int
    key: int
    completed: bool


@says("reaper: advanceClock: op {op}'s timer entry expires, handed to the executor")
class TimerExpire(NamedTuple):
    op: int


@says("executor: op {op} run(): forceComplete()")
class ExecutorRun(NamedTuple):
    op: int


@says("executor: op {op} onExpiration()")
class OnExpiration(NamedTuple):
    op: int


@says(
    "reaper: estimatedTotalOperations {est} - delayed {delayed} > purgeInterval: "
    "getAndSet({delayed}), purge watch lists"
)
class PurgeStart(NamedTuple):
    est: int
    delayed: int


@effects(Effect.PURGES_KEY)
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
