"""The simple timing wheel's actions: one per statement of the demo's two threads (the caller's
``addTask`` / ``start`` / ``stop`` and the trigger's loop), each printed as a log line.
"""

from __future__ import annotations

from typing import NamedTuple

from explorer.core import effects
from model.action_text import java, says, says_if
from model.simple_timing_wheel.effects import Effect
from model.simple_timing_wheel.state import Exc

# ---------------------------------------------------------------- actions (log lines)


def _t(i: int | None) -> str:
    return f"task {i}"


def _set(elems: tuple[int, ...] | None) -> str:
    if elems is None:
        return "null"
    return "{" + ", ".join(str(e) for e in elems) + "}"


def _shown(value: object) -> str:
    """A field in a log line: a set (a tuple of tasks, or ``None``) as :func:`_set` shows it,
    anything else as Java does."""
    return _set(value) if value is None or isinstance(value, tuple) else java(value)  # type: ignore[arg-type]


@says("caller: addTask(task {task}, key {key}): lock.lock() acquires the lock (holds {holds})")
class AddTaskLock(NamedTuple):
    task: int
    key: int
    holds: int


@says(
    "caller: mod({key}, wheelSize) reads tick {tick} -> index {idx}; task.setIndex({idx}) "
    "leaves task.index 0 (this.index=index)"
)
class AddTaskMod(NamedTuple):
    task: int
    key: int
    tick: int
    idx: int


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


@says("caller: put(): mod({key}, wheelSize) reads tick {tick} again -> wheelIndex {idx}")
class PutMod(NamedTuple):
    task: int
    key: int
    tick: int
    idx: int


@says("caller: timeWheel[{idx}] = {{{task}}} (replaces {replaced})", _shown)
class PutWrite(NamedTuple):
    task: int
    idx: int
    replaced: tuple[int, ...] | None


@says("caller: taskId.incrementAndGet() -> {id}; taskMap.put({id}, task {task})")
class TaskIdIncrement(NamedTuple):
    task: int
    id: int


@says("caller: taskCount.incrementAndGet() -> {value}")
class TaskCountIncrement(NamedTuple):
    task: int
    value: int


@says("caller: addTask(task {task}): finally lock.unlock() (holds {holds})")
class AddTaskUnlock(NamedTuple):
    task: int
    holds: int


@says_if(
    "from_main",
    "caller: main's wheel.start(): start.get() -> {value}",
    "caller: addTask's start(): start.get() -> {value}",
)
class StartGet(NamedTuple):
    value: bool
    from_main: bool


@says_if(
    "success",
    'caller: start.compareAndSet(false, true) -> true; new Thread(TriggerJob) "start" started',
    "caller: start.compareAndSet(false, true) -> false",
)
class StartCas(NamedTuple):
    success: bool


@says("caller: stop(true): stop = true")
class StopForceSet(NamedTuple):
    pass


@says("caller: stop(true): executorService.shutdownNow(); stop returns")
class ShutdownNow(NamedTuple):
    pass


@says("caller: stop(false): taskCount.get() -> {value}")
class StopCountRead(NamedTuple):
    value: int


@says("caller: stop(false): lock.lock() acquires the lock (holds {holds})")
class StopLock(NamedTuple):
    holds: int


@says("caller: stop(false): condition.await() releases the lock and waits")
class ConditionAwait(NamedTuple):
    pass


@says("caller: condition.await() re-acquires the lock and returns")
class AwaitReacquire(NamedTuple):
    pass


@says("caller: stop(false): stop = true")
class StopGracefulSet(NamedTuple):
    pass


@says("caller: stop(false): finally lock.unlock() (holds {holds})")
class StopUnlock(NamedTuple):
    holds: int


@effects(Effect.STOP_RETURNS)
@says("caller: stop(false): executorService.shutdown(); stop returns")
class Shutdown(NamedTuple):
    pass


@says("trigger: while (!stop) reads stop = false; remove({idx})")
class LoopCheck(NamedTuple):
    idx: int


@says("trigger: while (!stop) reads stop = true; run() returns")
class LoopExit(NamedTuple):
    pass


class RemoveRead(NamedTuple):
    key: int
    found: tuple[int, ...] | None

    def __str__(self) -> str:
        tail = " -> return {}" if self.found is None else ""
        return f"trigger: remove({self.key}): tasksSet = timeWheel[{self.key}] -> {_set(self.found)}{tail}"


@says("trigger: for (Task task : tasksSet): iterator over {elems}", _shown)
class IteratorCreate(NamedTuple):
    elems: tuple[int, ...]


@says_if(
    "cycle",
    "trigger: next() -> task {task}, cycleNum {cycle}: not due this round",
    "trigger: next() -> task {task}, cycleNum 0: resultTaskSet.add(task {task})",
)
class IteratorNext(NamedTuple):
    task: int
    cycle: int


@says("trigger: hasNext() -> false; remove returns {result}", _shown)
class IteratorEnd(NamedTuple):
    result: tuple[int, ...]


@says_if(
    "dropped",
    "trigger: next() throws ConcurrentModificationException (resultTaskSet {dropped} dropped)",
    "trigger: next() throws ConcurrentModificationException",
    _shown,
)
class IteratorCME(NamedTuple):
    dropped: tuple[int, ...]


@says("trigger: task {task}.setCycleNum({cycle}); tempTasksSet.add(task {task})")
class TempAdd(NamedTuple):
    task: int
    cycle: int


@says("trigger: size2Notify(): lock.lock() (holds {holds})")
class Size2NotifyLock(NamedTuple):
    holds: int


@says("trigger: size2Notify(): taskCount.decrementAndGet() -> {value}")
class Size2NotifyDecrement(NamedTuple):
    value: int


@says_if(
    "woke",
    "trigger: size2Notify(): condition.signal() wakes the caller",
    "trigger: size2Notify(): condition.signal() with no waiter (lost)",
)
class ConditionSignal(NamedTuple):
    woke: bool


@says_if(
    "fixed",
    "trigger: size2Notify(): finally lock.unlock() (holds {holds})",
    "trigger: size2Notify(): finally lock.lock() again (holds {holds}; never released)",
)
class Size2NotifyFinally(NamedTuple):
    holds: int
    fixed: bool


@says("trigger: timeWheel[{key}] = tempTasksSet {elems}", _shown)
class PublishTemp(NamedTuple):
    key: int
    elems: tuple[int, ...]


@effects(Effect.FIRES_TASK)
@says("trigger: executorService.submit(task {task}): task fires at tick {tick}")
class Submit(NamedTuple):
    task: int
    tick: int


@says(
    "trigger: executorService.submit(task {task}) throws RejectedExecutionException "
    "(tasks {dropped} not submitted)",
    _shown,
)
class SubmitRejected(NamedTuple):
    task: int
    dropped: tuple[int, ...]


@says("trigger: ++index -> {idx}; tick.incrementAndGet() -> {tick}")
class TickIncrement(NamedTuple):
    tick: int
    idx: int


@says("trigger: TimeUnit.SECONDS.sleep(1)")
class Sleep(NamedTuple):
    pass


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
