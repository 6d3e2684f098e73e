"""The simple timing-wheel demo's named bugs: each a small override of one method of the demo.

Every mutant here is a subclass of :class:`~model.simple_timing_wheel.SimpleTimingWheel`
that replaces one method: the demo's ``mod()`` or ``cycleNum()``, or one statement of the
caller's or the trigger's thread. The tests that show which property each breaks are in
``tests/test_simple_timing_wheel.py``.

>>> from invariants.mutants.simple_timing_wheel import MUTANTS, SimpleTimingWheelConfig
>>> MUTANTS.system("early_cycle", SimpleTimingWheelConfig()).cycle_num(5)
0
>>> SimpleTimingWheelConfig(mutant="no-such-bug")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.config.ConfigError: mutant: expected one of none, early_cycle, ..., got 'no-such-bug'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from explorer.config import key
from invariants.mutants import Catalogue
from model.simple_timing_wheel import actions as demo
from model.simple_timing_wheel.state import CallerPc, State, TriggerPc
from model.simple_timing_wheel.state import SimpleTimingWheelConfig as ModelSimpleTimingWheelConfig
from model.simple_timing_wheel.system import SimpleTimingWheel, _insert, _set_heap

__all__ = ["MUTANTS", "SimpleTimingWheelConfig", "build"]

MUTANTS = Catalogue("simple-timing-wheel", SimpleTimingWheel)
"""Every simple-timing-wheel mutant by name (``none``: the demo as printed)."""


@MUTANTS.register(
    "early_cycle", "cycleNum() returns target/wheelSize - 1 (at least 0): a task fires one round early"
)
class EarlyCycle(SimpleTimingWheel):
    def cycle_num(self, target: int) -> int:
        return max(super().cycle_num(target) - 1, 0)


@MUTANTS.register("late_bucket", "mod() adds 2 to the index: a task fires two ticks late")
class LateBucket(SimpleTimingWheel):
    def mod(self, s: State, target: int) -> int:
        return super().mod(s, target + 2)


@MUTANTS.register(
    "double_fire", "remove() also keeps a due task in tempTasksSet: it fires again a round later"
)
class DoubleFire(SimpleTimingWheel):
    def _trigger_step(self, s: State) -> tuple[object, State] | None:
        step = super()._trigger_step(s)
        t = s.trigger
        if t.pc is TriggerPc.N_FINALLY and t.current is not None and t.temp is not None and step is not None:
            # size2Notify's finally, as a due task's: tempTasksSet.add(task) as well
            a, n = step
            return a, n._replace(heap=_set_heap(n.heap, t.temp, _insert(n.heap[t.temp], t.current, s.ranks)))
        return step


class TempAdd(demo.TempAdd):
    """``drop_pending``'s step: the cycle is counted down but the task is not re-added."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"trigger: (mutant) task {self.task}.setCycleNum({self.cycle}) but not re-added"


@MUTANTS.register("drop_pending", "remove() drops a task that is not yet due instead of re-adding it")
class DropPending(SimpleTimingWheel):
    def _trigger_step(self, s: State) -> tuple[object, State] | None:
        step = super()._trigger_step(s)
        if s.trigger.pc is TriggerPc.TEMP_ADD and step is not None:
            a, n = step  # at TEMP_ADD the trigger's step is a TempAdd
            return TempAdd(*cast(demo.TempAdd, a)), n._replace(heap=s.heap)  # tempTasksSet.add(task) left out
        return step


class TaskCountIncrement(demo.TaskCountIncrement):
    """``skip_count``'s step: taskCount stays as it was."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"caller: (mutant) skips taskCount.incrementAndGet(), taskCount stays {self.value}"


@MUTANTS.register("skip_count", "addTask() skips taskCount.incrementAndGet()")
class SkipCount(SimpleTimingWheel):
    def _caller_step(self, s: State) -> tuple[object, State] | None:
        c = s.caller
        if c.pc is CallerPc.TASK_COUNT:
            return TaskCountIncrement(c.task, s.task_count), s._replace(
                caller=c._replace(pc=CallerPc.ADD_UNLOCK)
            )
        return super()._caller_step(s)


@dataclass(frozen=True)
class SimpleTimingWheelConfig(ModelSimpleTimingWheelConfig):
    """``model.simple_timing_wheel.SimpleTimingWheelConfig`` plus the test-only ``mutant`` key
    (this module's catalogue); the configuration the CLI and the tests load."""

    mutant: str = key(
        "none",
        "test-only: inject a named bug (invariants/mutants/simple_timing_wheel.py)",
        choices=MUTANTS.names(),
    )


def build(config: ModelSimpleTimingWheelConfig) -> SimpleTimingWheel:
    """The system of ``config``, with its ``mutant`` when it names one.

    >>> type(build(SimpleTimingWheelConfig())).__name__
    'SimpleTimingWheel'
    """
    system: SimpleTimingWheel = MUTANTS.system(getattr(config, "mutant", "none"), config)
    return system
