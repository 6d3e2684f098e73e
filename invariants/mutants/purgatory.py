"""The purgatory model's named bugs: each a small override of one step of DelayedOperation.

Every mutant here is a subclass of :class:`~model.purgatory.PurgatorySystem` that replaces
one step (or, for ``no_retry``, the two statements that compute maybeTryComplete's
``retry``); ``no_cas`` adds a program counter and two action kinds of its own. The tests
that show which property each breaks are in ``tests/test_purgatory.py``.

>>> from invariants.mutants.purgatory import MUTANTS, PurgatoryConfig
>>> sorted(MUTANTS.system("no_cas", PurgatoryConfig()).action_kinds()).count("CompletedSet")
1
>>> PurgatoryConfig(mutant="no-such-bug")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.config.ConfigError: mutant: expected one of none, no_cas, ..., got 'no-such-bug'
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple, cast

from explorer.config import key
from invariants.mutants import Catalogue
from model.purgatory.actions import _go
from model.purgatory.state import E_ON_EXPIRATION, FC_CANCEL, M_TRYLOCK, RUN, T_CHECK, Pc, State, Thread
from model.purgatory.state import PurgatoryConfig as ModelPurgatoryConfig
from model.purgatory.system import PurgatorySystem

__all__ = ["MUTANTS", "CompletedGet", "CompletedSet", "PurgatoryConfig", "build"]

MUTANTS = Catalogue("purgatory", PurgatorySystem)
"""Every purgatory mutant by name (``none``: the model as written)."""


# -- forceComplete without compareAndSet -----------------------------------------------------------


class NoCasPc(IntEnum):
    """The program counter only ``no_cas`` has (3 is left free in :class:`~model.purgatory.Pc`)."""

    FC_SET = 3  #: forceComplete(): completed.set(true) after a plain get


FC_SET = cast(Pc, NoCasPc.FC_SET)


class CompletedGet(NamedTuple):
    who: str
    op: int
    value: bool

    def __str__(self) -> str:
        return f"{self.who}: op {self.op} completed.get() = {str(self.value).lower()} (mutant: no CAS)"


class CompletedSet(NamedTuple):
    who: str
    op: int

    def __str__(self) -> str:
        return f"{self.who}: op {self.op} completed.set(true) (mutant: no CAS)"


@MUTANTS.register(
    "no_cas", "forceComplete: `if (!completed.get) { completed.set(true); ... }` (check-then-set)"
)
class NoCas(PurgatorySystem):
    def __init__(self, config: ModelPurgatoryConfig) -> None:
        super().__init__(config)
        self._dispatch[FC_SET] = self._fc_set

    def action_kinds(self) -> tuple[str, ...]:
        kinds = list(super().action_kinds())
        at = kinds.index("CompareAndSet")
        kinds[at : at + 1] = ["CompletedGet", "CompletedSet"]
        return tuple(kinds)

    def _fc_cas(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        who = self.thread_names[t]
        if op.completed:
            op2 = op if op.lost_cas else op._replace(lost_cas=True)
            return CompletedGet(who, o, True), self._put(s, t, self._fc_return(t, th, False), o, op2)
        return CompletedGet(who, o, False), self._put(s, t, _go(th, FC_SET))

    def _fc_set(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        return CompletedSet(self.thread_names[t], o), self._put(
            s, t, _go(th, FC_CANCEL), o, op._replace(completed=True)
        )


# -- maybeTryComplete and tryCompleteElseWatch ---------------------------------------------------


@MUTANTS.register(
    "no_retry",
    "maybeTryComplete without the tryCompletePending retry (tryLock or give up: before KAFKA-6653)",
)
class NoRetry(PurgatorySystem):
    def _m_get(self, s: State, t: int, th: Thread):
        a, s2 = super()._m_get(s, t, th)
        return a._replace(retry=False), self._put(s2, t, s2.threads[t]._replace(retry=False))

    def _m_getset(self, s: State, t: int, th: Thread):
        a, s2 = super()._m_getset(s, t, th)
        return a._replace(retry=False), self._put(s2, t, s2.threads[t]._replace(retry=False))


@MUTANTS.register("no_second_try", "tryCompleteElseWatch: no maybeTryComplete() after watching")
class NoSecondTry(PurgatorySystem):
    def _w_add(self, s: State, t: int, th: Thread):
        a, s2 = super()._w_add(s, t, th)
        if s2.threads[t].pc == M_TRYLOCK:  # watched on its last key: go on to the timer
            s2 = self._put(s2, t, Thread(T_CHECK, op=th.op, next=th.next))
        return a, s2


@MUTANTS.register(
    "expire_unchecked", "run(): forceComplete(); onExpiration() whatever forceComplete returned"
)
class ExpireUnchecked(PurgatorySystem):
    def _fc_return(self, t: int, th: Thread, r: bool) -> Thread:
        if th.ctx == RUN:
            return Thread(E_ON_EXPIRATION, op=th.op, ctx=RUN)
        return super()._fc_return(t, th, r)


# -- the watcher lists and the timer ---------------------------------------------------------------


@MUTANTS.register("no_remove", "tryCompleteWatched and purgeCompleted never call iter.remove()")
class NoRemove(PurgatorySystem):
    def _iter_remove(self, s: State, k: int, ops: int) -> State:
        return s


@MUTANTS.register("no_timer", "tryCompleteElseWatch never calls timeoutTimer.add")
class NoTimer(PurgatorySystem):
    def __init__(self, config: ModelPurgatoryConfig) -> None:
        super().__init__(config)
        self.timer_add = False


@dataclass(frozen=True)
class PurgatoryConfig(ModelPurgatoryConfig):
    """``model.purgatory.PurgatoryConfig`` plus the test-only ``mutant`` key (this module's
    catalogue); the configuration the CLI and the tests load."""

    mutant: str = key(
        "none", "test-only: inject a named bug (invariants/mutants/purgatory.py)", choices=MUTANTS.names()
    )


def build(config: ModelPurgatoryConfig) -> PurgatorySystem:
    """The system of ``config``, with its ``mutant`` when it names one.

    >>> build(PurgatoryConfig(ops=1)).n_ops
    1
    """
    system: PurgatorySystem = MUTANTS.system(getattr(config, "mutant", "none"), config)
    return system
