"""The seed 004 "简易时间轮" Java demo, exactly as printed, as a two-thread transition system.

The demo (``TimingWheel.java``, ``Task.java``, ``TaskEntry.java`` and ``main``) is
modelled statement by statement, bugs included; nothing is fixed unless a named
variant (``fixed_size2notify``) asks for it; the test-only bugs are in
``invariants/mutants/simple_timing_wheel.py``.

Threads
-------
*caller*: ``main`` → ``addTask(task)`` for every configured delay (``addTask`` itself
calls ``start()``, which starts the trigger thread the first time) → ``wheel.start()``
→ per ``stop_mode`` nothing, ``stop(true)`` or ``stop(false)``.

*trigger* (the thread named ``"start"``): ``TriggerJob.run`` → ``while (!stop)`` →
``remove(index)`` (with ``size2Notify()`` for every due task) → ``executorService.submit``
for every returned task → ``++index`` → ``tick.incrementAndGet()`` → ``sleep(1)``; an
exception thrown in the body (``ConcurrentModificationException`` from the for-each
over the bucket's ``HashSet``, ``RejectedExecutionException`` from a submit after
shutdown) is caught, printed, and the loop goes round again *without* advancing
``index`` or ``tick``.

Granularity
-----------
One step per Java statement that touches state shared between the threads: a
read or write of a field of the wheel (``stop``, ``timeWheel[i]``), an operation on
an atomic (``tick``, ``taskId``, ``taskCount``, ``start``), a lock / condition
operation, an operation on a ``HashSet`` that the other thread can reach (``add``,
iterator creation, ``hasNext``/``next``), an executor call (``submit``,
``shutdown``, ``shutdownNow``) and ``sleep``. Purely local computation is merged
into the adjacent step:

- ``key = task.getKey()``, ``needBucketCount = key/1`` → merged into ``lock.lock()``;
- ``task.setIndex(index)`` → merged into ``mod()``; as printed it assigns
  ``this.index = index`` (the field to itself: the parameter is named ``cycleNum``),
  so ``task.index`` stays 0; nothing ever reads it, so the field is not in the state;
- the ``if (tasks != null)`` test, ``cycleNum()``, ``task.setCycleNum()`` (the task
  is not yet visible to the trigger) and, on the null branch, ``new HashSet`` +
  ``newTaskSet.add(task)`` → merged into ``get(index)``;
- ``taskMap.put(id, task)`` → merged into ``taskId.incrementAndGet()`` (only the
  caller touches ``taskMap``; it always maps ``1..taskId`` to the first tasks, so it
  is not stored), and ``return taskId.get()`` into the step that ends ``start()``
  (only the caller writes ``taskId``);
- ``new Thread(...)``, ``setName("start")``, ``thread.start()`` → merged into
  ``start.compareAndSet``;
- in ``remove``: ``new HashSet`` ×2 and the ``null`` test → merged into the read of
  ``timeWheel[key]``; ``task.getCycleNum() == 0`` and ``resultTaskSet.add(task)``
  (``resultTaskSet`` is local until returned; once published, a task's ``cycleNum``
  is touched only by the trigger) → merged into ``next()``;
  ``task.setCycleNum(c - 1)`` → merged into ``tempTasksSet.add(task)``;
- in ``size2Notify``: the ``if (count == 0)`` test → merged into
  ``decrementAndGet``; ``condition.signal()`` is its own step (taken only when
  ``count == 0``);
- in ``run``: ``++index`` / wrap-around → merged into ``tick.incrementAndGet()``
  (``index`` is local to the trigger), so at the loop head ``index == tick % wheelSize``;
  the for-each over the (local) result set is one step per ``submit``.

Memory model: sequentially consistent (every step sees the latest value); the
demo's unsynchronised ``HashSet`` accesses are data races whose weaker outcomes are
not modelled. ``Condition.await`` has no spurious wake-ups (AQS loops until
signalled).

Objects
-------
``timeWheel`` is an array of references to ``HashSet`` objects kept in a small heap
(``State.heap``; a set is a tuple of task numbers). ``remove()`` replaces
``timeWheel[key]`` by a new set while ``addTask`` may still hold the old one, so set
identity matters. After every step unreachable sets are dropped and the rest are
renumbered in the order they are first reached from the roots (the wheel slots, then
the caller's and the trigger's locals), so equal heaps get equal numbers.

A ``HashSet`` iterates in the order of its elements' hash buckets; ``Task``
inherits ``Object.hashCode`` (identity hash), arbitrary but fixed for a run. The
model therefore gives every task a hash *rank* in the initial state and iterates every
set in rank order: with ``hash_order = "all"`` there is one initial state per
permutation (every order Java could produce), with ``"insertion"`` one (ranks in
creation order, which is also the insertion order of every set). The for-each is
fail-fast as in ``HashMap.HashIterator``: creating the iterator snapshots the
elements and ``modCount``; ``hasNext()`` is ``next != null`` and never throws;
``next()`` throws ``ConcurrentModificationException`` if the set was modified since.
So an ``add`` by the caller during the loop makes the next ``next()`` throw, unless the
iterator was already exhausted (then the added task is silently left behind).

Executor: a task counts as *fired* at tick ``t`` when ``submit`` accepts it (the
pool then runs it); ``submit`` after ``shutdown``/``shutdownNow`` throws
``RejectedExecutionException``.

Bounds: ``wheel_size`` (the demo's default 64 would need 64 ticks to go round once,
so cycles are never exercised within a reachable bound; use 4), the ``delays``
added, ``stop_mode``, and ``max_ticks``: the trigger thread stops moving at its loop
head once ``tick == max_ticks`` (unless ``stop`` is set, then it may still exit).

Example
-------
>>> cfg = SimpleTimingWheelConfig(wheel_size=4, delays=(1,), max_ticks=2)
>>> sys = SimpleTimingWheel(cfg)
>>> s0 = next(iter(sys.init_states()))
>>> [str(a) for a, _ in sys.successors(s0)]
['caller: addTask(task 0, key 1): lock.lock() acquires the lock (holds 1)']
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from explorer.config import ConfigError, key, validate

__all__ = [
    "Caller",
    "CallerPc",
    "Exc",
    "Executor",
    "HashOrder",
    "Owner",
    "SimpleTimingWheel",
    "SimpleTimingWheelConfig",
    "State",
    "StopMode",
    "TaskState",
    "Trigger",
    "TriggerPc",
    "live_tasks",
    "trigger_bounded",
]


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


# ---------------------------------------------------------------- actions (log lines)


def _t(i: int | None) -> str:
    return f"task {i}"


def _set(elems: tuple[int, ...] | None) -> str:
    if elems is None:
        return "null"
    return "{" + ", ".join(str(e) for e in elems) + "}"


class AddTaskLock(NamedTuple):
    task: int
    key: int
    holds: int

    def __str__(self) -> str:
        return f"caller: addTask(task {self.task}, key {self.key}): lock.lock() acquires the lock (holds {self.holds})"


class AddTaskMod(NamedTuple):
    task: int
    key: int
    tick: int
    idx: int

    def __str__(self) -> str:
        return (
            f"caller: mod({self.key}, wheelSize) reads tick {self.tick} -> index {self.idx}; "
            f"task.setIndex({self.idx}) leaves task.index 0 (this.index=index)"
        )


class AddTaskGet(NamedTuple):
    task: int
    idx: int
    found: tuple[int, ...] | None
    cycle: int

    def __str__(self) -> str:
        tail = "not null" if self.found is not None else "null: newTaskSet = {" + str(self.task) + "}"
        return f"caller: get({self.idx}) -> {_set(self.found)} ({tail}); task {self.task}.setCycleNum({self.cycle})"


class AddTaskSetAdd(NamedTuple):
    task: int
    before: tuple[int, ...]
    in_wheel: bool
    cme_armed: bool

    def __str__(self) -> str:
        where = "" if self.in_wheel else " (no longer in the wheel)"
        arm = "; the trigger's iterator over it is now stale" if self.cme_armed else ""
        return f"caller: tasks.add(task {self.task}) to set {_set(self.before)}{where}{arm}"


class PutMod(NamedTuple):
    task: int
    key: int
    tick: int
    idx: int

    def __str__(self) -> str:
        return (
            f"caller: put(): mod({self.key}, wheelSize) reads tick {self.tick} again -> wheelIndex {self.idx}"
        )


class PutWrite(NamedTuple):
    task: int
    idx: int
    replaced: tuple[int, ...] | None

    def __str__(self) -> str:
        return f"caller: timeWheel[{self.idx}] = {{{self.task}}} (replaces {_set(self.replaced)})"


class TaskIdIncrement(NamedTuple):
    task: int
    id: int

    def __str__(self) -> str:
        return f"caller: taskId.incrementAndGet() -> {self.id}; taskMap.put({self.id}, task {self.task})"


class TaskCountIncrement(NamedTuple):
    task: int
    value: int

    def __str__(self) -> str:
        return f"caller: taskCount.incrementAndGet() -> {self.value}"


class AddTaskUnlock(NamedTuple):
    task: int
    holds: int

    def __str__(self) -> str:
        return f"caller: addTask(task {self.task}): finally lock.unlock() (holds {self.holds})"


class StartGet(NamedTuple):
    value: bool
    from_main: bool

    def __str__(self) -> str:
        who = "main's wheel.start()" if self.from_main else "addTask's start()"
        return f"caller: {who}: start.get() -> {str(self.value).lower()}"


class StartCas(NamedTuple):
    success: bool

    def __str__(self) -> str:
        if self.success:
            return 'caller: start.compareAndSet(false, true) -> true; new Thread(TriggerJob) "start" started'
        return "caller: start.compareAndSet(false, true) -> false"


class StopForceSet(NamedTuple):
    def __str__(self) -> str:
        return "caller: stop(true): stop = true"


class ShutdownNow(NamedTuple):
    def __str__(self) -> str:
        return "caller: stop(true): executorService.shutdownNow(); stop returns"


class StopCountRead(NamedTuple):
    value: int

    def __str__(self) -> str:
        return f"caller: stop(false): taskCount.get() -> {self.value}"


class StopLock(NamedTuple):
    holds: int

    def __str__(self) -> str:
        return f"caller: stop(false): lock.lock() acquires the lock (holds {self.holds})"


class ConditionAwait(NamedTuple):
    def __str__(self) -> str:
        return "caller: stop(false): condition.await() releases the lock and waits"


class AwaitReacquire(NamedTuple):
    def __str__(self) -> str:
        return "caller: condition.await() re-acquires the lock and returns"


class StopGracefulSet(NamedTuple):
    def __str__(self) -> str:
        return "caller: stop(false): stop = true"


class StopUnlock(NamedTuple):
    holds: int

    def __str__(self) -> str:
        return f"caller: stop(false): finally lock.unlock() (holds {self.holds})"


class Shutdown(NamedTuple):
    def __str__(self) -> str:
        return "caller: stop(false): executorService.shutdown(); stop returns"


class LoopCheck(NamedTuple):
    idx: int

    def __str__(self) -> str:
        return f"trigger: while (!stop) reads stop = false; remove({self.idx})"


class LoopExit(NamedTuple):
    def __str__(self) -> str:
        return "trigger: while (!stop) reads stop = true; run() returns"


class RemoveRead(NamedTuple):
    key: int
    found: tuple[int, ...] | None

    def __str__(self) -> str:
        tail = " -> return {}" if self.found is None else ""
        return f"trigger: remove({self.key}): tasksSet = timeWheel[{self.key}] -> {_set(self.found)}{tail}"


class IteratorCreate(NamedTuple):
    elems: tuple[int, ...]

    def __str__(self) -> str:
        return f"trigger: for (Task task : tasksSet): iterator over {_set(self.elems)}"


class IteratorNext(NamedTuple):
    task: int
    cycle: int

    def __str__(self) -> str:
        if self.cycle == 0:
            return f"trigger: next() -> task {self.task}, cycleNum 0: resultTaskSet.add(task {self.task})"
        return f"trigger: next() -> task {self.task}, cycleNum {self.cycle}: not due this round"


class IteratorEnd(NamedTuple):
    result: tuple[int, ...]

    def __str__(self) -> str:
        return f"trigger: hasNext() -> false; remove returns {_set(self.result)}"


class IteratorCME(NamedTuple):
    dropped: tuple[int, ...]

    def __str__(self) -> str:
        lost = f" (resultTaskSet {_set(self.dropped)} dropped)" if self.dropped else ""
        return f"trigger: next() throws ConcurrentModificationException{lost}"


class TempAdd(NamedTuple):
    task: int
    cycle: int

    def __str__(self) -> str:
        return f"trigger: task {self.task}.setCycleNum({self.cycle}); tempTasksSet.add(task {self.task})"


class Size2NotifyLock(NamedTuple):
    holds: int

    def __str__(self) -> str:
        return f"trigger: size2Notify(): lock.lock() (holds {self.holds})"


class Size2NotifyDecrement(NamedTuple):
    value: int

    def __str__(self) -> str:
        return f"trigger: size2Notify(): taskCount.decrementAndGet() -> {self.value}"


class ConditionSignal(NamedTuple):
    woke: bool

    def __str__(self) -> str:
        if self.woke:
            return "trigger: size2Notify(): condition.signal() wakes the caller"
        return "trigger: size2Notify(): condition.signal() with no waiter (lost)"


class Size2NotifyFinally(NamedTuple):
    holds: int
    fixed: bool

    def __str__(self) -> str:
        if self.fixed:
            return f"trigger: size2Notify(): finally lock.unlock() (holds {self.holds})"
        return f"trigger: size2Notify(): finally lock.lock() again (holds {self.holds}; never released)"


class PublishTemp(NamedTuple):
    key: int
    elems: tuple[int, ...]

    def __str__(self) -> str:
        return f"trigger: timeWheel[{self.key}] = tempTasksSet {_set(self.elems)}"


class Submit(NamedTuple):
    task: int
    tick: int

    def __str__(self) -> str:
        return f"trigger: executorService.submit(task {self.task}): task fires at tick {self.tick}"


class SubmitRejected(NamedTuple):
    task: int
    dropped: tuple[int, ...]

    def __str__(self) -> str:
        return (
            f"trigger: executorService.submit(task {self.task}) throws RejectedExecutionException "
            f"(tasks {_set(self.dropped)} not submitted)"
        )


class TickIncrement(NamedTuple):
    tick: int
    idx: int

    def __str__(self) -> str:
        return f"trigger: ++index -> {self.idx}; tick.incrementAndGet() -> {self.tick}"


class Sleep(NamedTuple):
    def __str__(self) -> str:
        return "trigger: TimeUnit.SECONDS.sleep(1)"


class CatchPrint(NamedTuple):
    exc: Exc

    def __str__(self) -> str:
        name = "ConcurrentModificationException" if self.exc is Exc.CME else "RejectedExecutionException"
        return f"trigger: catch ({name} e): System.out.println(e.getMessage()); loop again"


_ACTION_KINDS = (
    AddTaskLock,
    AddTaskMod,
    AddTaskGet,
    AddTaskSetAdd,
    PutMod,
    PutWrite,
    TaskIdIncrement,
    TaskCountIncrement,
    AddTaskUnlock,
    StartGet,
    StartCas,
    StopForceSet,
    ShutdownNow,
    StopCountRead,
    StopLock,
    ConditionAwait,
    AwaitReacquire,
    StopGracefulSet,
    StopUnlock,
    Shutdown,
    LoopCheck,
    LoopExit,
    RemoveRead,
    IteratorCreate,
    IteratorNext,
    IteratorEnd,
    IteratorCME,
    TempAdd,
    Size2NotifyLock,
    Size2NotifyDecrement,
    ConditionSignal,
    Size2NotifyFinally,
    PublishTemp,
    Submit,
    SubmitRejected,
    TickIncrement,
    Sleep,
    CatchPrint,
)


# ---------------------------------------------------------------- helpers


def _canon(s: State) -> State:
    """Drop unreachable HashSets and renumber the rest in root order."""
    heap = s.heap
    order: dict[int, int] = {}
    new_heap: list[tuple[int, ...]] = []

    def ref(r: int | None) -> int | None:
        if r is None:
            return None
        n = order.get(r)
        if n is None:
            n = len(new_heap)
            order[r] = n
            new_heap.append(heap[r])
        return n

    wheel = tuple(ref(r) for r in s.wheel)
    c, t = s.caller, s.trigger
    ct, cn = ref(c.tasks), ref(c.new_set)
    tt, tm = ref(t.tasks_set), ref(t.temp)
    if ct != c.tasks or cn != c.new_set:
        c = c._replace(tasks=ct, new_set=cn)
    if tt != t.tasks_set or tm != t.temp:
        t = t._replace(tasks_set=tt, temp=tm)
    return s._replace(wheel=wheel, heap=tuple(new_heap), caller=c, trigger=t)


def _insert(elems: tuple[int, ...], task: int, ranks: tuple[int, ...]) -> tuple[int, ...]:
    """``set.add(task)``: the set's tasks kept in hash-rank (iteration) order."""
    if task in elems:
        return elems
    return tuple(sorted((*elems, task), key=ranks.__getitem__))


def _set_task(tasks: tuple[TaskState, ...], i: int, ts: TaskState) -> tuple[TaskState, ...]:
    return (*tasks[:i], ts, *tasks[i + 1 :])


def _set_heap(
    heap: tuple[tuple[int, ...], ...], r: int, elems: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    return (*heap[:r], elems, *heap[r + 1 :])


def live_tasks(s: State) -> frozenset[int]:
    """Tasks that some live place still holds: a reachable HashSet or the trigger's result set.

    >>> cfg = SimpleTimingWheelConfig(delays=(1,))
    >>> live_tasks(next(iter(SimpleTimingWheel(cfg).init_states())))
    frozenset()
    """
    out: set[int] = set(s.trigger.result)
    for elems in s.heap:
        out.update(elems)
    return frozenset(out)


def _pending_in_wheel(s: State) -> int:
    """Unfired tasks in the sets the wheel's slots reference."""
    seen: set[int] = set()
    for ref in s.wheel:
        if ref is not None:
            seen.update(t for t in s.heap[ref] if s.tasks[t].fires == 0)
    return len(seen)


def trigger_bounded(s: State, config: SimpleTimingWheelConfig) -> bool:
    """The trigger thread is at its loop head, not stopped, and has used up ``max_ticks``.

    >>> cfg = SimpleTimingWheelConfig(delays=(1,), max_ticks=0)
    >>> s = next(iter(SimpleTimingWheel(cfg).init_states()))
    >>> trigger_bounded(s._replace(trigger=Trigger(TriggerPc.HEAD)), cfg)
    True
    """
    return s.trigger.pc is TriggerPc.HEAD and not s.stop and s.tick >= config.max_ticks


# ---------------------------------------------------------------- the system


class SimpleTimingWheel:
    """The demo's two threads interleaved statement by statement (see module docstring).

    >>> sys = SimpleTimingWheel(SimpleTimingWheelConfig(delays=(1, 2), hash_order="all"))
    >>> len(list(sys.init_states()))
    2
    """

    def __init__(self, config: SimpleTimingWheelConfig):
        self.config = config
        self.n = len(config.delays)
        self.mask = config.wheel_size - 1

    # -- contract --------------------------------------------------------------

    def action_kinds(self) -> list[str]:
        """Every action kind the model can take."""
        return [k.__name__ for k in _ACTION_KINDS]

    def init_states(self) -> Iterator[State]:
        """One state per identity-hash order of the tasks (or one, for ``insertion``)."""
        n = self.n
        if self.config.hash_order is HashOrder.ALL:
            orders = list(itertools.permutations(range(n)))
        else:
            orders = [tuple(range(n))]
        tasks = tuple(TaskState(0, False, None, None, 0) for _ in range(n))
        first = CallerPc.ADD_LOCK if n else CallerPc.START_GET
        for ranks in orders:
            yield State(
                tick=0,
                task_id=0,
                task_count=0,
                started=False,
                stop=False,
                lock_owner=Owner.NONE,
                lock_holds=0,
                executor=Executor.RUNNING,
                wheel=(None,) * self.config.wheel_size,
                heap=(),
                tasks=tasks,
                ranks=ranks,
                caller=Caller(first, 0),
                trigger=Trigger(TriggerPc.NOT_STARTED),
            )

    def successors(self, s: State) -> Iterator[tuple[object, State]]:
        """The caller's next statement (if enabled), then the trigger's."""
        c = self._caller_step(s)
        if c is not None:
            yield c
        t = self._trigger_step(s)
        if t is not None:
            yield t

    def is_terminal(self, s: State) -> bool:
        """Main returned and the trigger thread exited (or never started) or is stopped by ``max_ticks``.

        Any other state without successors is a deadlock: the caller blocked in
        ``lock.lock()`` or parked in ``condition.await()`` for good.
        """
        tp = s.trigger.pc
        if s.caller.pc is not CallerPc.DONE:
            # With fixed_size2notify a caller parked in stop(false)'s await at the tick bound
            # is only cut off by the bound when the tasks still in the wheel will bring
            # taskCount to 0 (and signal); in the demo as printed the trigger never releases
            # the lock, so the caller could not return from await anyway.
            return (
                self.config.fixed_size2notify
                and s.caller.pc is CallerPc.WAITING
                and trigger_bounded(s, self.config)
                and 0 < s.task_count <= _pending_in_wheel(s)
            )
        return tp is TriggerPc.EXITED or tp is TriggerPc.NOT_STARTED or trigger_bounded(s, self.config)

    # -- helpers -----------------------------------------------------------------

    def _after_start(self, s: State, c: Caller) -> Caller:
        """Where the caller goes when a start() call returns."""
        if c.task < self.n - 1:
            return Caller(CallerPc.ADD_LOCK, c.task + 1)
        if c.task == self.n - 1:
            return Caller(CallerPc.START_GET, self.n)  # main's own wheel.start()
        mode = self.config.stop_mode
        if mode is StopMode.FORCE:
            return Caller(CallerPc.FORCE_SET, self.n)
        if mode is StopMode.GRACEFUL:
            return Caller(CallerPc.GRACE_COUNT, self.n)
        return Caller(CallerPc.DONE, self.n)

    def _acquire(self, s: State, who: Owner) -> tuple[Owner, int] | None:
        if s.lock_owner is Owner.NONE:
            return who, 1
        if s.lock_owner is who:
            return who, s.lock_holds + 1
        return None

    def _release(self, s: State, who: Owner) -> tuple[Owner, int]:
        # IllegalMonitorStateException would be thrown otherwise; the demo never does that.
        assert s.lock_owner is who and s.lock_holds > 0, "unlock by a thread that does not hold the lock"
        holds = s.lock_holds - 1
        return (who if holds else Owner.NONE), holds

    def mod(self, s: State, target: int) -> int:
        """``mod(needBucketCount, wheelSize)``: the bucket ``(target + tick) & (wheelSize - 1)``."""
        return (target + s.tick) & self.mask

    def cycle_num(self, target: int) -> int:
        """``cycleNum(key, wheelSize)``: the rounds a task waits, ``target / wheelSize``."""
        return target // self.config.wheel_size

    def _stale_if_iterated(self, s: State, ref: int) -> Trigger:
        t = s.trigger
        if t.pc in ITERATING and t.tasks_set == ref and not t.stale:
            return t._replace(stale=True)
        return t

    # -- the caller (main) thread -------------------------------------------------

    def _caller_step(self, s: State) -> tuple[object, State] | None:
        c = s.caller
        pc = c.pc
        cfg = self.config
        if pc is CallerPc.ADD_LOCK:
            got = self._acquire(s, Owner.CALLER)
            if got is None:
                return None  # blocked in lock.lock()
            return (
                AddTaskLock(c.task, cfg.delays[c.task], got[1]),
                s._replace(lock_owner=got[0], lock_holds=got[1], caller=c._replace(pc=CallerPc.ADD_MOD)),
            )
        if pc is CallerPc.ADD_MOD:
            k = cfg.delays[c.task]
            index = self.mod(s, k)
            ts = s.tasks[c.task]._replace(added_tick=s.tick)
            return (
                AddTaskMod(c.task, k, s.tick, index),
                s._replace(
                    tasks=_set_task(s.tasks, c.task, ts), caller=c._replace(pc=CallerPc.ADD_GET, idx=index)
                ),
            )
        if pc is CallerPc.ADD_GET:
            k = cfg.delays[c.task]
            cycle = self.cycle_num(k)
            ref = s.wheel[c.idx]
            if ref is not None:
                ts = s.tasks[c.task]._replace(cycle=cycle)
                nxt = s._replace(
                    tasks=_set_task(s.tasks, c.task, ts),
                    caller=c._replace(pc=CallerPc.ADD_SET_ADD, tasks=ref),
                )
                return AddTaskGet(c.task, c.idx, s.heap[ref], cycle), nxt
            ts = s.tasks[c.task]._replace(cycle=cycle, placed=True)
            heap = (*s.heap, (c.task,))
            nxt = s._replace(
                heap=heap,
                tasks=_set_task(s.tasks, c.task, ts),
                caller=c._replace(pc=CallerPc.PUT_MOD, new_set=len(heap) - 1),
            )
            return AddTaskGet(c.task, c.idx, None, cycle), _canon(nxt)
        if pc is CallerPc.ADD_SET_ADD:
            ref = c.tasks
            assert ref is not None
            before = s.heap[ref]
            heap = _set_heap(s.heap, ref, _insert(before, c.task, s.ranks))
            ts = s.tasks[c.task]._replace(placed=True)
            trig = self._stale_if_iterated(s, ref)
            act = AddTaskSetAdd(c.task, before, ref in s.wheel, trig is not s.trigger)
            nxt = s._replace(
                heap=heap,
                tasks=_set_task(s.tasks, c.task, ts),
                trigger=trig,
                caller=c._replace(pc=CallerPc.TASK_ID, tasks=None),
            )
            return act, _canon(nxt)
        if pc is CallerPc.PUT_MOD:
            k = cfg.delays[c.task]
            wi = self.mod(s, k)
            return PutMod(c.task, k, s.tick, wi), s._replace(
                caller=c._replace(pc=CallerPc.PUT_WRITE, wheel_index=wi)
            )
        if pc is CallerPc.PUT_WRITE:
            wi = c.wheel_index
            old = s.wheel[wi]
            wheel = (*s.wheel[:wi], c.new_set, *s.wheel[wi + 1 :])
            put = PutWrite(c.task, wi, None if old is None else s.heap[old])
            return put, _canon(s._replace(wheel=wheel, caller=c._replace(pc=CallerPc.TASK_ID, new_set=None)))
        if pc is CallerPc.TASK_ID:
            return TaskIdIncrement(c.task, s.task_id + 1), s._replace(
                task_id=s.task_id + 1, caller=c._replace(pc=CallerPc.TASK_COUNT)
            )
        if pc is CallerPc.TASK_COUNT:
            cnt = s.task_count + 1
            return TaskCountIncrement(c.task, cnt), s._replace(
                task_count=cnt, caller=c._replace(pc=CallerPc.ADD_UNLOCK)
            )
        if pc is CallerPc.ADD_UNLOCK:
            owner, holds = self._release(s, Owner.CALLER)
            return AddTaskUnlock(c.task, holds), s._replace(
                lock_owner=owner, lock_holds=holds, caller=Caller(CallerPc.START_GET, c.task)
            )
        if pc is CallerPc.START_GET:
            got_start = StartGet(s.started, c.task == self.n)
            if s.started:
                return got_start, s._replace(caller=self._after_start(s, c))
            return got_start, s._replace(caller=c._replace(pc=CallerPc.START_CAS))
        if pc is CallerPc.START_CAS:
            if s.started:  # only the caller writes start, so this cannot happen; kept as printed
                return StartCas(False), s._replace(caller=self._after_start(s, c))
            return StartCas(True), s._replace(
                started=True, trigger=Trigger(TriggerPc.HEAD), caller=self._after_start(s, c)
            )
        if pc is CallerPc.FORCE_SET:
            return StopForceSet(), s._replace(stop=True, caller=c._replace(pc=CallerPc.FORCE_SHUTDOWN))
        if pc is CallerPc.FORCE_SHUTDOWN:
            return ShutdownNow(), s._replace(
                executor=Executor.SHUTDOWN_NOW, caller=c._replace(pc=CallerPc.DONE)
            )
        if pc is CallerPc.GRACE_COUNT:
            nxt_pc = CallerPc.GRACE_LOCK if s.task_count > 0 else CallerPc.GRACE_SHUTDOWN
            return StopCountRead(s.task_count), s._replace(caller=c._replace(pc=nxt_pc))
        if pc is CallerPc.GRACE_LOCK:
            got = self._acquire(s, Owner.CALLER)
            if got is None:
                return None
            return StopLock(got[1]), s._replace(
                lock_owner=got[0], lock_holds=got[1], caller=c._replace(pc=CallerPc.GRACE_AWAIT)
            )
        if pc is CallerPc.GRACE_AWAIT:
            # await() releases every hold (the caller holds exactly 1 here) and parks.
            assert s.lock_owner is Owner.CALLER and s.lock_holds == 1
            return ConditionAwait(), s._replace(
                lock_owner=Owner.NONE, lock_holds=0, caller=c._replace(pc=CallerPc.WAITING)
            )
        if pc is CallerPc.WAITING:
            return None  # parked until condition.signal()
        if pc is CallerPc.REACQUIRE:
            if s.lock_owner is not Owner.NONE:
                return None
            return AwaitReacquire(), s._replace(
                lock_owner=Owner.CALLER, lock_holds=1, caller=c._replace(pc=CallerPc.GRACE_SET)
            )
        if pc is CallerPc.GRACE_SET:
            return StopGracefulSet(), s._replace(stop=True, caller=c._replace(pc=CallerPc.GRACE_UNLOCK))
        if pc is CallerPc.GRACE_UNLOCK:
            owner, holds = self._release(s, Owner.CALLER)
            return StopUnlock(holds), s._replace(
                lock_owner=owner, lock_holds=holds, caller=c._replace(pc=CallerPc.GRACE_SHUTDOWN)
            )
        if pc is CallerPc.GRACE_SHUTDOWN:
            return Shutdown(), s._replace(executor=Executor.SHUTDOWN, caller=c._replace(pc=CallerPc.DONE))
        return None  # DONE

    # -- the trigger thread "start" ------------------------------------------------

    def _trigger_step(self, s: State) -> tuple[object, State] | None:
        t = s.trigger
        pc = t.pc
        if pc is TriggerPc.HEAD:
            if s.stop:
                return LoopExit(), s._replace(trigger=Trigger(TriggerPc.EXITED, t.idx))
            if s.tick >= self.config.max_ticks:
                return None  # the exploration bound, not a program state
            return LoopCheck(t.idx), s._replace(trigger=t._replace(pc=TriggerPc.REMOVE_READ))
        if pc is TriggerPc.REMOVE_READ:
            ref = s.wheel[t.idx]
            if ref is None:
                # return the empty resultTaskSet; the for-each over it submits nothing
                return RemoveRead(t.idx, None), s._replace(trigger=t._replace(pc=TriggerPc.TICK))
            heap = (*s.heap, ())
            nxt = s._replace(
                heap=heap,
                trigger=t._replace(pc=TriggerPc.ITER_CREATE, tasks_set=ref, temp=len(heap) - 1, result=()),
            )
            return RemoveRead(t.idx, s.heap[ref]), _canon(nxt)
        if pc is TriggerPc.ITER_CREATE:
            assert t.tasks_set is not None
            elems = s.heap[t.tasks_set]
            return IteratorCreate(elems), s._replace(
                trigger=t._replace(pc=TriggerPc.ITER_NEXT, remaining=elems, stale=False)
            )
        if pc is TriggerPc.ITER_NEXT:
            if not t.remaining:
                nxt_pc = TriggerPc.SUBMIT if t.result else TriggerPc.TICK
                nt = Trigger(nxt_pc, t.idx, result=t.result)
                return IteratorEnd(t.result), _canon(s._replace(trigger=nt))
            if t.stale:
                nt = Trigger(TriggerPc.CATCH, t.idx, exc=Exc.CME)
                return IteratorCME(t.result), _canon(s._replace(trigger=nt))
            task = t.remaining[0]
            cyc = s.tasks[task].cycle
            if cyc == 0:
                nt = t._replace(
                    pc=TriggerPc.N_LOCK,
                    remaining=t.remaining[1:],
                    current=task,
                    result=_insert(t.result, task, s.ranks),
                )
            else:
                nt = t._replace(pc=TriggerPc.TEMP_ADD, remaining=t.remaining[1:], current=task)
            return IteratorNext(task, cyc), s._replace(trigger=nt)
        if pc is TriggerPc.TEMP_ADD:
            cur = t.current
            assert cur is not None and t.temp is not None
            cyc = s.tasks[cur].cycle - 1
            tasks = _set_task(s.tasks, cur, s.tasks[cur]._replace(cycle=cyc))
            heap = _set_heap(s.heap, t.temp, _insert(s.heap[t.temp], cur, s.ranks))
            return TempAdd(cur, cyc), s._replace(
                tasks=tasks, heap=heap, trigger=t._replace(pc=TriggerPc.PUBLISH)
            )
        if pc is TriggerPc.N_LOCK:
            got = self._acquire(s, Owner.TRIGGER)
            if got is None:
                return None
            return Size2NotifyLock(got[1]), s._replace(
                lock_owner=got[0], lock_holds=got[1], trigger=t._replace(pc=TriggerPc.N_DEC)
            )
        if pc is TriggerPc.N_DEC:
            cnt = s.task_count - 1
            nxt_pc = TriggerPc.N_SIGNAL if cnt == 0 else TriggerPc.N_FINALLY
            return Size2NotifyDecrement(cnt), s._replace(task_count=cnt, trigger=t._replace(pc=nxt_pc))
        if pc is TriggerPc.N_SIGNAL:
            c = s.caller
            woke = c.pc is CallerPc.WAITING
            if woke:
                c = c._replace(pc=CallerPc.REACQUIRE)
            return ConditionSignal(woke), s._replace(caller=c, trigger=t._replace(pc=TriggerPc.N_FINALLY))
        if pc is TriggerPc.N_FINALLY:
            if self.config.fixed_size2notify:
                owner, holds = self._release(s, Owner.TRIGGER)
            else:
                got = self._acquire(s, Owner.TRIGGER)
                assert got is not None  # the trigger holds it already
                owner, holds = got
            return Size2NotifyFinally(holds, self.config.fixed_size2notify), s._replace(
                lock_owner=owner, lock_holds=holds, trigger=t._replace(pc=TriggerPc.PUBLISH)
            )
        if pc is TriggerPc.PUBLISH:
            k = t.idx
            assert t.temp is not None
            wheel = (*s.wheel[:k], t.temp, *s.wheel[k + 1 :])
            nxt = s._replace(wheel=wheel, trigger=t._replace(pc=TriggerPc.ITER_NEXT, current=None))
            return PublishTemp(k, s.heap[t.temp]), _canon(nxt)
        if pc is TriggerPc.SUBMIT:
            task = t.result[0]
            if s.executor is not Executor.RUNNING:
                nt = Trigger(TriggerPc.CATCH, t.idx, exc=Exc.REJECTED)
                return SubmitRejected(task, t.result), s._replace(trigger=nt)
            ts = s.tasks[task]
            ts = ts._replace(fires=ts.fires + 1, fired_at=s.tick if ts.fired_at is None else ts.fired_at)
            rest = t.result[1:]
            nt = t._replace(pc=TriggerPc.SUBMIT if rest else TriggerPc.TICK, result=rest)
            return Submit(task, s.tick), s._replace(tasks=_set_task(s.tasks, task, ts), trigger=nt)
        if pc is TriggerPc.TICK:
            index = (t.idx + 1) & self.mask
            return TickIncrement(s.tick + 1, index), s._replace(
                tick=s.tick + 1, trigger=Trigger(TriggerPc.SLEEP, index)
            )
        if pc is TriggerPc.SLEEP:
            return Sleep(), s._replace(trigger=t._replace(pc=TriggerPc.HEAD))
        if pc is TriggerPc.CATCH:
            return CatchPrint(t.exc), s._replace(trigger=Trigger(TriggerPc.HEAD, t.idx))
        return None  # NOT_STARTED, EXITED
