"""``DelayedOperation`` and ``DelayedOperationPurgatory`` (Kafka 2.x, seed 004) as threads.

Seed 004 prints ``forceComplete``, ``maybeTryComplete``, ``tryCompleteElseWatch``,
``checkAndComplete`` and ``DelayedProduce.tryComplete``; this model runs them on
concurrent threads, statement by statement, over shared memory:

- **request-handler threads** each submit their produce requests (``DelayedProduce``
  with acks=-1, op ``i`` on handler ``i mod handlers``) through
  ``tryCompleteElseWatch``: the first ``tryComplete()``; for every key "if completed
  return false", then ``watchForOperation`` (``estimatedTotalOperations`` is
  incremented with the first watch); the second try through ``maybeTryComplete()``;
  then "if not completed: ``timeoutTimer.add``, and if completed by now ``cancel()``";
- **fetcher threads** serve a follower fetch (one follower's log end offset rises by
  one; the leader's high watermark becomes the minimum over the ISR) or process a
  LeaderAndIsr that makes this broker a follower of a partition, and then call
  ``checkAndComplete(partition)``: ``tryCompleteWatched`` walks the key's watcher list
  with a weakly consistent ``ConcurrentLinkedQueue`` iterator (the next element is
  fixed when the current one is returned) and, for each operation, removes it if it
  is completed, else calls ``maybeTryComplete()`` and removes it if that returned true;
- the **reaper** (``ExpiredOperationReaper.advanceClock``) expires timer entries and,
  when ``estimatedTotalOperations - delayed > purgeInterval``, resets the estimate
  (``getAndSet(delayed)``) and runs ``purgeCompleted`` on every key's list in turn;
- the timer's **executor** runs an expired operation's ``run()``: ``if
  (forceComplete()) onExpiration()``.

Every atomic of the seed is its own step: ``completed.compareAndSet``,
``tryCompletePending.set / get / getAndSet``, ``lock.tryLock()``, ``lock.unlock()``,
the ``isCompleted`` reads, and the do-while test of ``maybeTryComplete``; each thread
keeps a program counter (:class:`Pc`) and its locals. ``tryComplete()`` checks one
partition per step (``DelayedProduce``: the partition's ``acksPending`` clears when the
high watermark reaches ``requiredOffset`` or the broker no longer leads it); the final
"no acks pending → forceComplete()" test reads only the operation's own fields (held
under its lock) and is folded into the last partition's step.

Abstractions (each keeps every interleaving of the shared steps above):

- The timer is abstract: an operation added to the timer may expire at any later
  step until it is cancelled; expiry hands it to the executor's queue (``cancel()``
  no longer reaches it then). The hierarchical timing wheel itself is checked by the
  separate ``timing-wheel`` model.
- ``watchForOperation`` is one step (it runs under ``watchersLock``) together with the
  ``estimatedTotalOperations`` increment that follows it; ``purgeCompleted`` of one
  key is one step. The removal of an empty ``Watchers`` object from ``watchersByKey``
  is not modelled: it happens under the same ``watchersLock`` as every add, so a
  thread still holding a removed object walks an empty list, which the iterator here
  over-approximates.
- The ISR is fixed (no shrink or expand); the leader's log end offset is
  ``max_offset`` from the start (the records were appended before the operations
  were created); losing leadership is permanent.
- ``onComplete`` and ``onExpiration`` only count their calls; ghost fields record
  which path called ``onComplete``, whether a ``compareAndSet`` was lost, and, for a
  ``checkAndComplete``, which operations were completed and watched when its iterator
  was created (``invariants/purgatory.py`` reads them).

Example
-------
>>> sys = PurgatorySystem(PurgatoryConfig(ops=1, partitions=1, fetchers=1))
>>> s0 = sys.init_states()[0]
>>> [str(a) for a, _ in sys.successors(s0)]  # doctest: +NORMALIZE_WHITESPACE
['handler 0: tryCompleteElseWatch(op 0) starts: tryComplete() partition 0 HW 0 < requiredOffset 1,
  acks pending; tryComplete() returns false',
 'fetcher 0: follower 1 of partition 0 fetches: LEO 0 -> 1, HW 0 -> 1']
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from explorer.config import ConfigError, key, validate

__all__ = [
    "ACTION_KINDS",
    "PATH_CHECK_AND_COMPLETE",
    "PATH_EXPIRY",
    "PATH_FIRST_TRY",
    "PATH_SECOND_TRY",
    "Ctx",
    "Op",
    "Pc",
    "PurgatoryConfig",
    "PurgatorySystem",
    "State",
    "Thread",
    "Timer",
]


class Pc(IntEnum):
    """Where a thread is: the next statement it executes."""

    IDLE = 0  #: between requests (a handler with ops left submits the next one)
    TC_CHECK = 1  #: tryComplete(): check partition ``i`` of the op (the last check decides)
    FC_CAS = 2  #: forceComplete(): completed.compareAndSet(false, true)
    # 3: the no_cas mutant's completed.set(true) after a plain get (invariants/mutants/purgatory.py)
    FC_CANCEL = 4  #: forceComplete(): cancel() the timer task
    FC_ON_COMPLETE = 5  #: forceComplete(): onComplete()
    W_CHECK = 6  #: tryCompleteElseWatch: if (operation.isCompleted) return false (key ``i``)
    W_ADD = 7  #: tryCompleteElseWatch: watchForOperation(key ``i``, operation)
    M_TRYLOCK = 8  #: maybeTryComplete: if (lock.tryLock())
    M_CLEAR = 9  #: maybeTryComplete: tryCompletePending.set(false), then tryComplete()
    M_UNLOCK = 10  #: maybeTryComplete: lock.unlock()
    M_GET = 11  #: maybeTryComplete: retry = tryCompletePending.get()
    M_GETSET = 12  #: maybeTryComplete: retry = !tryCompletePending.getAndSet(true)
    M_WHILE = 13  #: maybeTryComplete: while (!isCompleted && retry)
    T_CHECK = 14  #: tryCompleteElseWatch: if (!operation.isCompleted)
    T_ADD = 15  #: tryCompleteElseWatch: timeoutTimer.add(operation)
    T_RECHECK = 16  #: tryCompleteElseWatch: if (operation.isCompleted)
    T_CANCEL = 17  #: tryCompleteElseWatch: operation.cancel()
    C_START = 18  #: checkAndComplete(key): get the key's watchers, create the iterator
    C_NEXT = 19  #: tryCompleteWatched: iter.remove() if done, then hasNext / next()
    C_CHECK = 20  #: tryCompleteWatched: if (curr.isCompleted) iter.remove() else maybeTryComplete
    E_ON_EXPIRATION = 21  #: run(): onExpiration()
    P_KEY = 22  #: reaper: purgeCompleted() of key ``i``


class Timer(IntEnum):
    """Where an operation's timer task is."""

    NONE = 0  #: not in the timer (never added, cancelled, or already run)
    ADDED = 1  #: in the timer: it may expire, cancel() removes it
    EXPIRED = 2  #: expired and queued for the executor: cancel() no longer stops it


class Ctx(IntEnum):
    """Who called tryComplete / forceComplete (where they return to)."""

    FIRST = 0  #: tryCompleteElseWatch's first tryComplete()
    MAYBE = 1  #: maybeTryComplete (the second try, or checkAndComplete)
    RUN = 2  #: the timer task's run()


#: ghost bits of :attr:`Op.by`: which path ran onComplete
PATH_FIRST_TRY = 1
PATH_SECOND_TRY = 2
PATH_CHECK_AND_COMPLETE = 4
PATH_EXPIRY = 8
_PATH_NAMES = {
    PATH_FIRST_TRY: "first try",
    PATH_SECOND_TRY: "second try",
    PATH_CHECK_AND_COMPLETE: "checkAndComplete",
    PATH_EXPIRY: "expiry",
}

IDLE, TC_CHECK, FC_CAS, FC_CANCEL, FC_ON_COMPLETE = (
    Pc.IDLE,
    Pc.TC_CHECK,
    Pc.FC_CAS,
    Pc.FC_CANCEL,
    Pc.FC_ON_COMPLETE,
)
W_CHECK, W_ADD, M_TRYLOCK, M_CLEAR, M_UNLOCK, M_GET, M_GETSET, M_WHILE = (
    Pc.W_CHECK,
    Pc.W_ADD,
    Pc.M_TRYLOCK,
    Pc.M_CLEAR,
    Pc.M_UNLOCK,
    Pc.M_GET,
    Pc.M_GETSET,
    Pc.M_WHILE,
)
T_CHECK, T_ADD, T_RECHECK, T_CANCEL = Pc.T_CHECK, Pc.T_ADD, Pc.T_RECHECK, Pc.T_CANCEL
C_START, C_NEXT, C_CHECK, E_ON_EXPIRATION, P_KEY = (
    Pc.C_START,
    Pc.C_NEXT,
    Pc.C_CHECK,
    Pc.E_ON_EXPIRATION,
    Pc.P_KEY,
)
T_NONE, T_ADDED, T_EXPIRED = Timer.NONE, Timer.ADDED, Timer.EXPIRED
FIRST, MAYBE, RUN = Ctx.FIRST, Ctx.MAYBE, Ctx.RUN


@dataclass(frozen=True)
class PurgatoryConfig:
    """Bounds of the purgatory model.

    >>> PurgatoryConfig(ops=2, required_offsets=(1, 2), max_offset=2).required_offsets
    (1, 2)
    >>> PurgatoryConfig(keys_per_op=3)
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: keys_per_op: must be at most partitions (2), got 3
    """

    ops: int = key(2, "DelayedProduce operations (acks=-1) submitted", min=1, max=3)
    partitions: int = key(2, "partitions this broker leads; each is a watch key", min=1, max=3)
    keys_per_op: int = key(
        1,
        "partitions per produce request: op i watches partitions i, i+1, ... (mod partitions)",
        min=1,
        max=3,
    )
    replicas: int = key(
        2, "replicas per partition, all in the ISR: the leader and replicas-1 followers", min=1, max=3
    )
    max_offset: int = key(
        1, "the leader's log end offset (records appended before the ops exist)", min=1, max=3
    )
    required_offsets: tuple[int, ...] = key(
        (1, 1, 1),
        "requiredOffset of op i: the HW each of its partitions must reach (one per op)",
        min=1,
        max=3,
    )
    fetch_budget: int = key(-1, "follower fetches in all (each raises one LEO by one); -1: no budget", min=-1)
    leader_changes: int = key(0, "budget of 'this broker stops leading partition p' events", min=0, max=3)
    handlers: int = key(
        1, "request-handler threads; op i is submitted by handler i mod handlers", min=1, max=3
    )
    fetchers: int = key(
        1, "threads serving follower fetches, each followed by checkAndComplete", min=0, max=2
    )
    expiry: bool = key(True, "timerEnabled: ops are added to the timer and may expire")
    purge_interval: int = key(
        0, "purgeInterval: purge when estimatedTotalOperations - delayed exceeds it", min=0
    )

    def __post_init__(self) -> None:
        validate(self)
        if self.keys_per_op > self.partitions:
            raise ConfigError(
                f"keys_per_op: must be at most partitions ({self.partitions}), got {self.keys_per_op}"
            )
        if self.handlers > self.ops:
            raise ConfigError(f"handlers: must be at most ops ({self.ops}), got {self.handlers}")
        if self.leader_changes > self.partitions:
            raise ConfigError(
                f"leader_changes: must be at most partitions ({self.partitions}), got {self.leader_changes}"
            )
        if len(self.required_offsets) < self.ops:
            raise ConfigError(
                f"required_offsets: needs one value per op ({self.ops}), got {len(self.required_offsets)}"
            )
        for i, r in enumerate(self.required_offsets[: self.ops]):
            if r > self.max_offset:
                raise ConfigError(
                    f"required_offsets[{i}]: must be at most max_offset ({self.max_offset}), got {r}"
                )


class Thread(NamedTuple):
    """One thread's program counter and locals (unused ones keep their defaults)."""

    pc: Pc = IDLE
    op: int = -1  #: the operation it works on (fetcher: the iterator's current one)
    i: int = 0  #: key / partition index (tryComplete, watch loop) or key (purge)
    ctx: Ctx = FIRST  #: who called tryComplete / forceComplete
    retry: bool = False  #: maybeTryComplete's ``retry``
    done: bool = False  #: maybeTryComplete's ``done``
    key: int = -1  #: fetcher: the key of its checkAndComplete
    nxt: int = -1  #: fetcher: the iterator's next operation (-1: none)
    snap: int = 0  #: ghost (fetcher): ops completed and watched on ``key`` when the iterator began
    next: int = 0  #: handler: how many of its operations it has finished


class Op(NamedTuple):
    """One DelayedProduce: its atomics, its lock, its timer task, and ghost counters."""

    acks: int  #: bit j: acksPending of its j-th partition
    completed: bool = False  #: ``completed`` (AtomicBoolean)
    pending: bool = False  #: ``tryCompletePending`` (AtomicBoolean)
    lock: int = -1  #: the thread holding ``lock`` (-1: free)
    timer: Timer = T_NONE  #: its timer task
    completions: int = 0  #: onComplete() calls (saturates at 2)
    expirations: int = 0  #: onExpiration() calls (saturates at 2)
    by: int = 0  #: ghost: PATH_* bits of the paths that called onComplete
    lost_cas: bool = False  #: ghost: some forceComplete found it completed already


class State(NamedTuple):
    """The whole purgatory: threads, operations, partitions, watcher lists, estimate."""

    threads: tuple[Thread, ...]  #: handlers, fetchers, reaper, executor
    ops: tuple[Op, ...]
    leo: tuple[tuple[int, ...], ...]  #: per partition: each follower's log end offset
    led: tuple[bool, ...]  #: per partition: this broker still leads it
    order: tuple[tuple[int, ...], ...]  #: per key: ops in the order they were watched
    watched: tuple[int, ...]  #: per key: bitmask of the ops in its watcher list
    est: int  #: estimatedTotalOperations


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


# ----------------------------------------------------------------------------- system


class PurgatorySystem:
    """The purgatory transition system for one :class:`PurgatoryConfig`.

    Threads are numbered: handlers ``0 .. handlers-1``, then fetchers, then the
    reaper, then the executor.

    >>> sys = PurgatorySystem(PurgatoryConfig(ops=1, partitions=1))
    >>> sys.keys, sys.thread_names
    (((0,),), ('handler 0', 'fetcher 0', 'reaper', 'executor'))
    """

    def __init__(self, config: PurgatoryConfig) -> None:
        c = config
        self.config = c
        self.n_ops = c.ops
        self.n_keys = c.partitions
        #: per op: the partitions (watch keys) of its produce request
        self.keys = tuple(tuple((o + j) % c.partitions for j in range(c.keys_per_op)) for o in range(c.ops))
        #: per op: bitmask of its keys
        self.key_mask = tuple(sum(1 << k for k in ks) for ks in self.keys)
        self.required = tuple(c.required_offsets[: c.ops])
        self.followers = c.replicas - 1
        self.handlers = c.handlers
        self.fetchers = c.fetchers
        self.reaper = c.handlers + c.fetchers
        self.executor = self.reaper + 1
        #: per handler: the ops it submits, in order
        self.queues = tuple(tuple(o for o in range(c.ops) if o % c.handlers == h) for h in range(c.handlers))
        self.thread_names = (
            tuple(f"handler {h}" for h in range(c.handlers))
            + tuple(f"fetcher {f}" for f in range(c.fetchers))
            + ("reaper", "executor")
        )
        #: tryCompleteElseWatch calls timeoutTimer.add (timerEnabled)
        self.timer_add = c.expiry
        self.max_fetches = (
            c.fetch_budget if c.fetch_budget >= 0 else c.partitions * self.followers * c.max_offset
        )
        self._dispatch = {
            TC_CHECK: self._tc_check,
            FC_CAS: self._fc_cas,
            FC_CANCEL: self._fc_cancel,
            FC_ON_COMPLETE: self._fc_on_complete,
            W_CHECK: self._w_check,
            W_ADD: self._w_add,
            M_TRYLOCK: self._m_trylock,
            M_CLEAR: self._m_clear,
            M_UNLOCK: self._m_unlock,
            M_GET: self._m_get,
            M_GETSET: self._m_getset,
            M_WHILE: self._m_while,
            T_CHECK: self._t_check,
            T_ADD: self._t_add,
            T_RECHECK: self._t_recheck,
            T_CANCEL: self._t_cancel,
            C_START: self._c_start,
            C_NEXT: self._c_next,
            C_CHECK: self._c_check,
            E_ON_EXPIRATION: self._e_on_expiration,
            P_KEY: self._p_key,
        }

    # ------------------------------------------------------------------ contract

    def init_states(self) -> list[State]:
        """The one initial state: nothing submitted, every follower at LEO 0.

        >>> s = PurgatorySystem(PurgatoryConfig()).init_states()[0]
        >>> s.leo, s.watched, s.ops[0].acks
        (((0,), (0,)), (0, 0), 1)
        """
        n = len(self.thread_names)
        full = (1 << self.config.keys_per_op) - 1
        return [
            State(
                threads=(Thread(),) * n,
                ops=(Op(acks=full),) * self.n_ops,
                leo=((0,) * self.followers,) * self.n_keys,
                led=(True,) * self.n_keys,
                order=((),) * self.n_keys,
                watched=(0,) * self.n_keys,
                est=0,
            )
        ]

    def action_kinds(self) -> tuple[str, ...]:
        """The action kinds the model can take.

        >>> "CompareAndSet" in PurgatorySystem(PurgatoryConfig()).action_kinds()
        True
        """
        return ACTION_KINDS

    def successors(self, s: State) -> list[tuple[object, State]]:
        """Every enabled step of every thread, threads in index order."""
        out: list[tuple[object, State]] = []
        dispatch = self._dispatch
        for t, th in enumerate(s.threads):
            if th.pc == IDLE:
                self._idle(s, t, out)
            else:
                out.append(dispatch[th.pc](s, t, th))
        return out

    def is_terminal(self, s: State) -> bool:
        """A proper end: every thread idle and every handler through its operations.

        >>> sys = PurgatorySystem(PurgatoryConfig())
        >>> sys.is_terminal(sys.init_states()[0])
        False
        """
        return self.all_idle(s) and self.all_submitted(s)

    # ------------------------------------------------------------------ helpers read by invariants

    def high_watermark(self, s: State, p: int) -> int:
        """The leader's high watermark of partition ``p``: the minimum LEO over the ISR.

        >>> sys = PurgatorySystem(PurgatoryConfig())
        >>> sys.high_watermark(sys.init_states()[0], 0)
        0
        """
        leos = s.leo[p]
        return min(leos) if leos else self.config.max_offset

    def partition_ok(self, s: State, o: int, p: int) -> bool:
        """DelayedProduce's per-partition test: HW >= requiredOffset, or an error (not leader)."""
        return not s.led[p] or self.high_watermark(s, p) >= self.required[o]

    def satisfied(self, s: State, o: int) -> bool:
        """Whether tryComplete() of op ``o`` would find no acks pending now (a stable fact).

        >>> sys = PurgatorySystem(PurgatoryConfig(replicas=1))
        >>> sys.satisfied(sys.init_states()[0], 0)
        True
        """
        return all(self.partition_ok(s, o, p) for p in self.keys[o])

    def submitted(self, s: State, o: int) -> bool:
        """Whether op ``o``'s handler has started its tryCompleteElseWatch."""
        h = o % self.handlers
        th = s.threads[h]
        pos = o // self.handlers
        return th.next > pos or (th.next == pos and th.pc != IDLE)

    def handler_finished(self, s: State, o: int) -> bool:
        """Whether op ``o``'s tryCompleteElseWatch has returned."""
        return s.threads[o % self.handlers].next > o // self.handlers

    def all_submitted(self, s: State) -> bool:
        """Whether every handler has finished all its operations."""
        return all(s.threads[h].next == len(q) for h, q in enumerate(self.queues))

    def all_idle(self, s: State) -> bool:
        """Whether every thread is between requests."""
        return all(th.pc == IDLE for th in s.threads)

    def checking_keys(self, s: State) -> int:
        """Bitmask of the keys some fetcher is running checkAndComplete on."""
        m = 0
        for t in range(self.handlers, self.reaper):
            th = s.threads[t]
            if th.pc != IDLE:
                m |= 1 << th.key
        return m

    def delayed(self, s: State) -> int:
        """``timeoutTimer.size``: operations whose timer entry is in the timer."""
        return sum(1 for op in s.ops if op.timer == T_ADDED)

    def completed_mask(self, s: State) -> int:
        """Bitmask of the completed operations."""
        return sum(1 << o for o, op in enumerate(s.ops) if op.completed)

    def purge_due(self, s: State) -> bool:
        """The reaper's test: estimatedTotalOperations - delayed > purgeInterval."""
        return s.est - self.delayed(s) > self.config.purge_interval

    # ------------------------------------------------------------------ thread steps

    def _idle(self, s: State, t: int, out: list) -> None:
        if t < self.handlers:
            th = s.threads[t]
            q = self.queues[t]
            if th.next < len(q):
                o = q[th.next]
                a, s2 = self._tc_check(s, t, Thread(TC_CHECK, op=o, ctx=FIRST, next=th.next))
                out.append((Submit(*a), s2))
        elif t < self.reaper:
            who = self.thread_names[t]
            if sum(map(sum, s.leo)) < self.max_fetches:
                top = self.config.max_offset
                for p in range(self.n_keys):
                    if not s.led[p]:
                        continue
                    leos = s.leo[p]
                    for r, v in enumerate(leos):
                        if v < top:
                            before = min(leos)
                            nl = _set(leos, r, v + 1)
                            s2 = s._replace(
                                threads=_set(s.threads, t, Thread(C_START, key=p)), leo=_set(s.leo, p, nl)
                            )
                            out.append((FollowerFetch(who, p, r + 1, v + 1, before, min(nl)), s2))
            if s.led.count(False) < self.config.leader_changes:
                for p in range(self.n_keys):
                    if s.led[p]:
                        s2 = s._replace(
                            threads=_set(s.threads, t, Thread(C_START, key=p)), led=_set(s.led, p, False)
                        )
                        out.append((LeadershipLost(who, p), s2))
        elif t == self.reaper:
            if self.config.expiry:
                for o, op in enumerate(s.ops):
                    if op.timer == T_ADDED:
                        out.append(
                            (TimerExpire(o), s._replace(ops=_set(s.ops, o, op._replace(timer=T_EXPIRED))))
                        )
            delayed = self.delayed(s)
            if s.est - delayed > self.config.purge_interval:
                s2 = s._replace(threads=_set(s.threads, t, Thread(P_KEY, i=0)), est=delayed)
                out.append((PurgeStart(s.est, delayed), s2))
        else:
            for o, op in enumerate(s.ops):
                if op.timer == T_EXPIRED:
                    s2 = s._replace(
                        threads=_set(s.threads, t, Thread(FC_CAS, op=o, ctx=RUN)),
                        ops=_set(s.ops, o, op._replace(timer=T_NONE)),
                    )
                    out.append((ExecutorRun(o), s2))

    def _put(self, s: State, t: int, th: Thread, o: int = -1, op: Op | None = None) -> State:
        threads = s[0]
        threads = (*threads[:t], th, *threads[t + 1 :])
        if op is None:
            return _new(State, (threads, *s[1:]))
        ops = s[1]
        return _new(State, (threads, (*ops[:o], op, *ops[o + 1 :]), *s[2:]))

    def _finish_handler(self, th: Thread) -> Thread:
        return Thread(next=th.next + 1)

    def _tc_return(self, t: int, th: Thread, r: bool) -> Thread:
        """tryComplete() returns ``r`` to its caller."""
        if th.ctx == FIRST:
            return self._finish_handler(th) if r else Thread(W_CHECK, op=th.op, i=0, next=th.next)
        return th._replace(pc=M_UNLOCK, i=0, done=r)

    def _fc_return(self, t: int, th: Thread, r: bool) -> Thread:
        """forceComplete() returns ``r`` to its caller."""
        if th.ctx == RUN:
            return Thread(E_ON_EXPIRATION, op=th.op, ctx=RUN) if r else Thread()
        return self._tc_return(t, th, r)

    def _mtc_return(self, t: int, th: Thread, done: bool) -> Thread:
        """maybeTryComplete() returns ``done`` to its caller."""
        if t < self.handlers:
            if done:
                return self._finish_handler(th)
            return Thread(T_CHECK, op=th.op, next=th.next)
        return Thread(C_NEXT, op=th.op, done=done, key=th.key, nxt=th.nxt, snap=th.snap)

    def _tc_check(self, s: State, t: int, th: Thread):
        o, i = th.op, th.i
        op = s.ops[o]
        p = self.keys[o][i]
        led = s.led[p]
        hw = self.high_watermark(s, p)
        req = self.required[o]
        ok = not led or hw >= req
        acks = op.acks
        if ok:
            acks &= ~(1 << i)
        last = i + 1 == len(self.keys[o])
        if not last:
            th2 = th._replace(i=i + 1)
        elif acks == 0:
            th2 = th._replace(pc=FC_CAS, i=0)
        else:
            th2 = self._tc_return(t, th, False)
        a = (self.thread_names[t], o, p, hw, req, led, ok, last, last and acks == 0)
        if acks != op.acks:
            return TryCompleteCheck(*a), self._put(s, t, th2, o, op._replace(acks=acks))
        return TryCompleteCheck(*a), self._put(s, t, th2)

    def _fc_cas(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        who = self.thread_names[t]
        if op.completed:
            op2 = op if op.lost_cas else op._replace(lost_cas=True)
            return CompareAndSet(who, o, False), self._put(s, t, self._fc_return(t, th, False), o, op2)
        return CompareAndSet(who, o, True), self._put(
            s, t, _go(th, FC_CANCEL), o, op._replace(completed=True)
        )

    def _fc_cancel(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        removed = op.timer == T_ADDED
        a = ForceCompleteCancel(self.thread_names[t], o, removed)
        if removed:
            return a, self._put(s, t, _go(th, FC_ON_COMPLETE), o, op._replace(timer=T_NONE))
        return a, self._put(s, t, _go(th, FC_ON_COMPLETE))

    def _fc_on_complete(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        if th.ctx == RUN:
            path = PATH_EXPIRY
        elif th.ctx == FIRST:
            path = PATH_FIRST_TRY
        elif t < self.handlers:
            path = PATH_SECOND_TRY
        else:
            path = PATH_CHECK_AND_COMPLETE
        op2 = op._replace(completions=min(op.completions + 1, 2), by=op.by | path)
        return OnComplete(self.thread_names[t], o, path), self._put(
            s, t, self._fc_return(t, th, True), o, op2
        )

    def _w_check(self, s: State, t: int, th: Thread):
        o = th.op
        k = self.keys[o][th.i]
        if s.ops[o].completed:
            return WatchCheck(self.thread_names[t], o, k, True), self._put(s, t, self._finish_handler(th))
        return WatchCheck(self.thread_names[t], o, k, False), self._put(s, t, _go(th, W_ADD))

    def _w_add(self, s: State, t: int, th: Thread):
        o, i = th.op, th.i
        k = self.keys[o][i]
        if i + 1 < len(self.keys[o]):
            th2 = Thread(W_CHECK, op=o, i=i + 1, next=th.next)
        else:
            th2 = Thread(M_TRYLOCK, op=o, ctx=MAYBE, next=th.next)
        s2 = s._replace(
            threads=_set(s.threads, t, th2),
            order=_set(s.order, k, (*s.order[k], o)),
            watched=_set(s.watched, k, s.watched[k] | (1 << o)),
            est=s.est + 1 if i == 0 else s.est,
        )
        return Watch(self.thread_names[t], o, k, i == 0), s2

    def _m_trylock(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        if op.lock < 0:
            return TryLock(self.thread_names[t], o, True), self._put(
                s, t, _go(th, M_CLEAR), o, op._replace(lock=t)
            )
        return TryLock(self.thread_names[t], o, False), self._put(s, t, _go(th, M_GETSET))

    def _m_clear(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        th2 = th._replace(pc=TC_CHECK, i=0)
        a = ClearPending(self.thread_names[t], o)
        if op.pending:
            return a, self._put(s, t, th2, o, op._replace(pending=False))
        return a, self._put(s, t, th2)

    def _m_unlock(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        return Unlock(self.thread_names[t], o, th.done), self._put(
            s, t, _go(th, M_GET), o, op._replace(lock=-1)
        )

    def _m_get(self, s: State, t: int, th: Thread):
        o = th.op
        v = s.ops[o].pending
        retry = v
        return GetPending(self.thread_names[t], o, v, retry), self._put(
            s, t, th._replace(pc=M_WHILE, retry=retry)
        )

    def _m_getset(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        old = op.pending
        retry = not old
        a = GetAndSetPending(self.thread_names[t], o, old, retry)
        th2 = th._replace(pc=M_WHILE, retry=retry)
        if old:
            return a, self._put(s, t, th2)
        return a, self._put(s, t, th2, o, op._replace(pending=True))

    def _m_while(self, s: State, t: int, th: Thread):
        o = th.op
        c = s.ops[o].completed
        again = not c and th.retry
        a = LoopCheck(self.thread_names[t], o, c, th.retry, again, th.done)
        if again:
            return a, self._put(s, t, th._replace(pc=M_TRYLOCK, retry=False))
        return a, self._put(s, t, self._mtc_return(t, th, th.done))

    def _t_check(self, s: State, t: int, th: Thread):
        o = th.op
        if s.ops[o].completed:
            return TimerCheck(self.thread_names[t], o, True), self._put(s, t, self._finish_handler(th))
        return TimerCheck(self.thread_names[t], o, False), self._put(
            s, t, _go(th, T_ADD if self.timer_add else T_RECHECK)
        )

    def _t_add(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        return TimerAdd(self.thread_names[t], o), self._put(
            s, t, _go(th, T_RECHECK), o, op._replace(timer=T_ADDED)
        )

    def _t_recheck(self, s: State, t: int, th: Thread):
        o = th.op
        if s.ops[o].completed:
            return TimerRecheck(self.thread_names[t], o, True), self._put(s, t, _go(th, T_CANCEL))
        return TimerRecheck(self.thread_names[t], o, False), self._put(s, t, self._finish_handler(th))

    def _t_cancel(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        removed = op.timer == T_ADDED
        a = TimerCancel(self.thread_names[t], o, removed)
        if removed:
            return a, self._put(s, t, self._finish_handler(th), o, op._replace(timer=T_NONE))
        return a, self._put(s, t, self._finish_handler(th))

    def _iter_remove(self, s: State, k: int, ops: int) -> State:
        """``iter.remove()`` of the ops in bitmask ``ops`` from key ``k``'s watcher list
        (tryCompleteWatched, purgeCompleted)."""
        return s._replace(watched=_set(s.watched, k, s.watched[k] & ~ops))

    def _succ(self, s: State, k: int, after: int) -> int:
        """The first op watched on key ``k`` after ``after`` in watch order (-1: none)."""
        present = s.watched[k]
        order = s.order[k]
        start = 0 if after < 0 else order.index(after) + 1
        for o in order[start:]:
            if present >> o & 1:
                return o
        return -1

    def _c_start(self, s: State, t: int, th: Thread):
        k = th.key
        snap = s.watched[k] & self.completed_mask(s)
        first = self._succ(s, k, -1)
        return IteratorStart(self.thread_names[t], k, first), self._put(
            s, t, Thread(C_NEXT, key=k, nxt=first, snap=snap)
        )

    def _c_next(self, s: State, t: int, th: Thread):
        k = th.key
        removed = -1
        s1 = s
        if th.op >= 0 and th.done:
            removed = th.op
            s1 = self._iter_remove(s, k, 1 << th.op)
        who = self.thread_names[t]
        if th.nxt < 0:
            return CheckAndCompleteDone(who, k, removed), self._put(s1, t, Thread())
        cur = th.nxt
        nxt = self._succ(s1, k, cur)
        return IteratorNext(who, k, removed, cur, nxt), self._put(
            s1, t, Thread(C_CHECK, op=cur, key=k, nxt=nxt, snap=th.snap)
        )

    def _c_check(self, s: State, t: int, th: Thread):
        o, k = th.op, th.key
        who = self.thread_names[t]
        if s.ops[o].completed:
            th2 = th._replace(pc=C_NEXT, op=-1)
            return WatchedCheck(who, o, k, True), self._put(self._iter_remove(s, k, 1 << o), t, th2)
        return WatchedCheck(who, o, k, False), self._put(s, t, th._replace(pc=M_TRYLOCK, ctx=MAYBE))

    def _e_on_expiration(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        return OnExpiration(o), self._put(
            s, t, Thread(), o, op._replace(expirations=min(op.expirations + 1, 2))
        )

    def _p_key(self, s: State, t: int, th: Thread):
        k = th.i
        removed = s.watched[k] & self.completed_mask(s)
        th2 = Thread(P_KEY, i=k + 1) if k + 1 < self.n_keys else Thread()
        if removed:
            return PurgeKey(k, removed), self._put(self._iter_remove(s, k, removed), t, th2)
        return PurgeKey(k, removed), self._put(s, t, th2)
