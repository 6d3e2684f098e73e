"""``SimpleTimingWheel``: seed 004's Java demo (``TimingWheel.java``, ``Task.java``,
``TaskEntry.java``) as a transition system, statement by statement, with its helpers.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from model.action_text import thread_arrow
from model.simple_timing_wheel.actions import (
    _ACTION_KINDS,
    AddTaskGet,
    AddTaskLock,
    AddTaskMod,
    AddTaskSetAdd,
    AddTaskUnlock,
    AwaitReacquire,
    CatchPrint,
    ConditionAwait,
    ConditionSignal,
    IteratorCME,
    IteratorCreate,
    IteratorEnd,
    IteratorNext,
    LoopCheck,
    LoopExit,
    PublishTemp,
    PutMod,
    PutWrite,
    RemoveRead,
    Shutdown,
    ShutdownNow,
    Size2NotifyDecrement,
    Size2NotifyFinally,
    Size2NotifyLock,
    Sleep,
    StartCas,
    StartGet,
    StopCountRead,
    StopForceSet,
    StopGracefulSet,
    StopLock,
    StopUnlock,
    Submit,
    SubmitRejected,
    TaskCountIncrement,
    TaskIdIncrement,
    TempAdd,
    TickIncrement,
)
from model.simple_timing_wheel.state import (
    ITERATING,
    Caller,
    CallerPc,
    Exc,
    Executor,
    HashOrder,
    Owner,
    SimpleTimingWheelConfig,
    State,
    StopMode,
    TaskState,
    Trigger,
    TriggerPc,
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

    def sequence_arrow(self, action: object) -> tuple[str, str, str]:
        """The report's sequence diagrams: a lifeline per thread, each step on its own
        (:func:`model.action_text.thread_arrow`)."""
        return thread_arrow(action)

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

    def _lock(self, s: State, who: Owner, **moved: Any) -> tuple[int, State] | None:
        """``lock.lock()`` by ``who``: ``None`` while the other thread holds the lock (blocked);
        else the hold count and ``s`` with the lock held and the ``moved`` fields replaced."""
        got = self._acquire(s, who)
        if got is None:
            return None
        return got[1], s._replace(lock_owner=got[0], lock_holds=got[1], **moved)

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
            locked = self._lock(s, Owner.CALLER, caller=c._replace(pc=CallerPc.ADD_MOD))
            if locked is None:
                return None  # blocked in lock.lock()
            return AddTaskLock(c.task, cfg.delays[c.task], locked[0]), locked[1]
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
            locked = self._lock(s, Owner.CALLER, caller=c._replace(pc=CallerPc.GRACE_AWAIT))
            return None if locked is None else (StopLock(locked[0]), locked[1])
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
            locked = self._lock(s, Owner.TRIGGER, trigger=t._replace(pc=TriggerPc.N_DEC))
            return None if locked is None else (Size2NotifyLock(locked[0]), locked[1])
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
