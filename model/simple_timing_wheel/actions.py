"""The simple timing wheel's actions: one per statement of the demo's two threads (the caller's
``addTask`` / ``start`` / ``stop`` and the trigger's loop), each printed as a log line.
"""

from __future__ import annotations

from typing import NamedTuple

from model.simple_timing_wheel.state import Exc

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
