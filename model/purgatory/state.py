"""The purgatory model's configuration (``PurgatoryConfig``), program counters and state records
(threads, operations, the whole ``State``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from explorer.config import ConfigError, key, validate


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
