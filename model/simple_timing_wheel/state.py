"""The simple timing wheel's configuration (``SimpleTimingWheelConfig``), program counters of its
two threads and the state records, as seed 004's Java demo declares them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple

from explorer.config import ConfigError, key, validate


class StopMode(enum.StrEnum):
    """What ``main`` does after adding its tasks."""

    NONE = "none"  #: nothing (the demo's main)
    FORCE = "force"  #: stop(true)
    GRACEFUL = "graceful"  #: stop(false)


class HashOrder(enum.StrEnum):
    """How the identity hashes of the tasks order them in a ``HashSet``."""

    ALL = "all"  #: every permutation, one initial state each
    INSERTION = "insertion"  #: creation order


@dataclass(frozen=True)
class SimpleTimingWheelConfig:
    """Bounds and switches of the seed 004 simple timing-wheel demo.

    >>> SimpleTimingWheelConfig(wheel_size=3)
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: wheel_size: must be a power of two (mod() uses target & (wheelSize-1)), got 3
    """

    wheel_size: int = key(
        4, "TimingWheel(executor, wheelSize): number of buckets, a power of two", min=1, max=64
    )
    delays: tuple[int, ...] = key(
        (10,), "keys (delays in ticks) of the tasks main adds, in order", min=0, max=64
    )
    stop_mode: StopMode = key(
        StopMode.NONE, "after the adds main calls nothing, stop(true) or stop(false)", choices=list(StopMode)
    )
    max_ticks: int = key(
        12, "bound: the trigger thread stops at its loop head once tick reaches this", min=0, max=64
    )
    hash_order: HashOrder = key(
        HashOrder.ALL,
        "HashSet iteration order of the tasks: every permutation or creation order",
        choices=list(HashOrder),
    )
    fixed_size2notify: bool = key(False, "variant: size2Notify's finally calls lock.unlock() (as meant)")

    def __post_init__(self) -> None:
        validate(self)
        # validate() keeps a plain str equal to a StrEnum member as it is: make it the member
        object.__setattr__(self, "stop_mode", StopMode(self.stop_mode))
        object.__setattr__(self, "hash_order", HashOrder(self.hash_order))
        w = self.wheel_size
        if w & (w - 1):
            raise ConfigError(
                f"wheel_size: must be a power of two (mod() uses target & (wheelSize-1)), got {w}"
            )
        if len(self.delays) > 4:
            raise ConfigError(f"delays: at most 4 tasks can be explored, got {len(self.delays)}")


class Owner(enum.IntEnum):
    """Owner of the ``ReentrantLock``."""

    NONE = 0
    CALLER = 1
    TRIGGER = 2


class Executor(enum.IntEnum):
    """State of the ``ExecutorService``."""

    RUNNING = 0
    SHUTDOWN = 1  #: shutdown(): queued tasks still run, new submits rejected
    SHUTDOWN_NOW = 2  #: shutdownNow(): new submits rejected


class Exc(enum.IntEnum):
    """The exception the trigger thread's catch block is handling."""

    NONE = 0
    CME = 1  #: ConcurrentModificationException from HashSet's iterator
    REJECTED = 2  #: RejectedExecutionException from submit after shutdown


class CallerPc(enum.IntEnum):
    """Where the caller (main) thread is: the statement it executes next."""

    ADD_LOCK = 0  #: addTask: lock.lock()
    ADD_MOD = 1  #: addTask: index = mod(needBucketCount, wheelSize) (reads tick); setIndex
    ADD_GET = 2  #: addTask: tasks = get(index); if; cycleNum; (else: new HashSet, add)
    ADD_SET_ADD = 3  #: addTask: tasks.add(task)
    PUT_MOD = 4  #: put: wheelIndex = mod(key, wheelSize) (reads tick again)
    PUT_WRITE = 5  #: put: timeWheel[wheelIndex] = task
    TASK_ID = 6  #: addTask: taskId.incrementAndGet(); taskMap.put
    TASK_COUNT = 7  #: addTask: taskCount.incrementAndGet()
    ADD_UNLOCK = 8  #: addTask: finally lock.unlock()
    START_GET = 9  #: start: if (!start.get())
    START_CAS = 10  #: start: if (start.compareAndSet(false, true)) new Thread(...).start()
    FORCE_SET = 11  #: stop(true): stop = true
    FORCE_SHUTDOWN = 12  #: stop(true): executorService.shutdownNow()
    GRACE_COUNT = 13  #: stop(false): if (taskCount.get() > 0)
    GRACE_LOCK = 14  #: stop(false): lock.lock()
    GRACE_AWAIT = 15  #: stop(false): condition.await() (releases the lock)
    WAITING = 16  #: in condition.await(), waiting for a signal
    REACQUIRE = 17  #: in condition.await(), signalled, re-acquiring the lock
    GRACE_SET = 18  #: stop(false): stop = true
    GRACE_UNLOCK = 19  #: stop(false): finally lock.unlock()
    GRACE_SHUTDOWN = 20  #: stop(false): executorService.shutdown()
    DONE = 21  #: main returned


class TriggerPc(enum.IntEnum):
    """Where the trigger thread ``"start"`` is."""

    NOT_STARTED = 0
    HEAD = 1  #: while (!stop)
    REMOVE_READ = 2  #: remove: tasksSet = timeWheel[key]
    ITER_CREATE = 3  #: remove: for (Task task : tasksSet): iterator()
    ITER_NEXT = 4  #: remove: hasNext() / next()
    TEMP_ADD = 5  #: remove: setCycleNum(c - 1); tempTasksSet.add(task)
    N_LOCK = 6  #: size2Notify: lock.lock()
    N_DEC = 7  #: size2Notify: count = taskCount.decrementAndGet()
    N_SIGNAL = 8  #: size2Notify: condition.signal()
    N_FINALLY = 9  #: size2Notify: finally lock.lock() (sic)
    PUBLISH = 10  #: remove: timeWheel[key] = tempTasksSet (inside the loop, as printed)
    SUBMIT = 11  #: run: executorService.submit(task)
    TICK = 12  #: run: ++index; tick.incrementAndGet()
    SLEEP = 13  #: run: TimeUnit.SECONDS.sleep(1)
    CATCH = 14  #: run: catch (Exception e) { System.out.println(e.getMessage()); }
    EXITED = 15  #: run returned


#: trigger program counters at which remove()'s for-each iterator exists
ITERATING = frozenset(
    {
        TriggerPc.ITER_NEXT,
        TriggerPc.TEMP_ADD,
        TriggerPc.N_LOCK,
        TriggerPc.N_DEC,
        TriggerPc.N_SIGNAL,
        TriggerPc.N_FINALLY,
        TriggerPc.PUBLISH,
    }
)


class TaskState(NamedTuple):
    """One ``TaskEntry`` object plus the checker's history of it."""

    cycle: int  #: Task.cycleNum
    placed: bool  #: addTask has put it into a HashSet
    added_tick: int | None  #: history: the tick addTask's first mod() read
    fired_at: int | None  #: history: tick of its first accepted submit
    fires: int  #: history: number of accepted submits


class Caller(NamedTuple):
    """The main thread: program counter and the locals of the frame it is in."""

    pc: CallerPc
    task: int  #: the task addTask is adding (== len(delays) after the adds)
    idx: int = 0  #: addTask's local ``index`` (from the first mod())
    tasks: int | None = None  #: addTask's local ``tasks`` (a heap reference)
    new_set: int | None = None  #: addTask's ``newTaskSet`` until put
    wheel_index: int = 0  #: put's local ``wheelIndex`` (from the second mod())


class Trigger(NamedTuple):
    """The trigger thread: program counter and the locals of run / remove."""

    pc: TriggerPc
    idx: int = 0  #: run's local ``index`` (== remove's ``key``)
    tasks_set: int | None = None  #: remove's ``tasksSet`` (heap reference)
    temp: int | None = None  #: remove's ``tempTasksSet`` (heap reference)
    result: tuple[int, ...] = ()  #: ``resultTaskSet`` (local), then the tasks left to submit
    remaining: tuple[int, ...] = ()  #: the for-each iterator's elements not yet returned
    stale: bool = False  #: the iterated set was modified since the iterator was made
    current: int | None = None  #: the loop variable ``task``
    exc: Exc = Exc.NONE  #: the exception being handled in CATCH


class State(NamedTuple):
    """The whole program: shared fields, heap of HashSets, tasks, both threads."""

    tick: int  #: AtomicInteger tick
    task_id: int  #: AtomicInteger taskId
    task_count: int  #: AtomicInteger taskCount
    started: bool  #: AtomicBoolean start
    stop: bool  #: volatile boolean stop
    lock_owner: Owner  #: ReentrantLock owner
    lock_holds: int  #: ReentrantLock hold count
    executor: Executor
    wheel: tuple[int | None, ...]  #: timeWheel: heap references (None = null)
    heap: tuple[tuple[int, ...], ...]  #: HashSet objects: tasks in hash-rank order
    tasks: tuple[TaskState, ...]
    ranks: tuple[int, ...]  #: identity-hash rank of each task (HashSet iteration order)
    caller: Caller
    trigger: Trigger
