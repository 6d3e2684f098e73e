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

from model.facade import forward
from model.simple_timing_wheel.state import SimpleTimingWheelConfig, State
from model.simple_timing_wheel.system import SimpleTimingWheel

__all__ = ["SimpleTimingWheel", "SimpleTimingWheelConfig", "State"]

# every other public name of the submodules, found on first use (``from model.simple_timing_wheel import ...`` as before)
__getattr__, __dir__ = forward(__name__, ["actions", "state", "system"], globals())
