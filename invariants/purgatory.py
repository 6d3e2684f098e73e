"""Properties of the purgatory model (``model/purgatory.py``): seed 004's DelayedOperation.

Seed 004 states the guarantees: ``forceComplete`` "提供原子性操作 ... 只有第一个线程成功完成并返回true"
and calls ``onComplete`` "精准调用一次" (exactly once); ``run()`` is "forceComplete() and
then onExpiration()"; ``tryCompleteElseWatch``'s second try exists "这样，此延时操作就不会错过
未来的任何触发操作" (so the operation misses no later trigger); completed operations left in
watcher lists are "小问题 ... expirationReaper线程会定期清理掉它" (cleaned up by the reaper).

Safety properties
-----------------
``on_complete_at_most_once``
    For every operation, ``onComplete()`` has run at most once.
``on_expiration_only_if_expiry_won``
    ``onExpiration()`` runs at most once per operation, and only if ``onComplete()`` was
    called from the expiry path's own ``forceComplete()`` (so an operation completes by
    satisfaction or by expiry, never both).
``no_lost_wakeup``
    If an operation is satisfied (every partition's HW has reached its requiredOffset or
    the broker no longer leads it), its ``tryCompleteElseWatch`` has returned, and no
    fetcher is running a ``checkAndComplete`` on one of its keys, then it is completed.
    Every event that can satisfy it (a follower fetch, a leadership loss) is followed by
    ``checkAndComplete`` on that partition, so this says: once the triggering
    ``checkAndComplete`` and the submitting thread are done, nobody lost the wake-up.
``completed_removed_by_next_traversal``
    When a ``checkAndComplete(k)`` returns, every operation that was completed and in
    key ``k``'s watcher list when its iterator was created is no longer in that list;
    after the reaper's ``purgeCompleted`` of key ``k``, no operation completed at that
    moment is in ``k``'s list.
``every_op_completed_once_at_end``
    In a quiescent state (every thread idle, every request submitted, no timer entry
    pending, no purge due), every operation has run ``onComplete()`` exactly once, except
    that with the timer disabled an operation that is not satisfied stays uncompleted.

Witnesses (reachable)
---------------------
An operation completed on the first try, on the second try (``maybeTryComplete`` in
``tryCompleteElseWatch``), by ``checkAndComplete`` from a fetcher, by expiry; a failed
``tryLock`` that set ``tryCompletePending``; a lost ``compareAndSet``; a timer entry of an
operation completed between the "not completed" test and ``timeoutTimer.add``, removed
by the re-check; and a proper end state where a completed operation is still watched
(the purge heuristic leaves it there until the next traversal of its key).
"""

from __future__ import annotations

from typing import Any

from explorer.core import ModelSpec, Property, always, reachable, transition
from invariants.mutants.purgatory import PurgatoryConfig, build
from invariants.timing_explain import attach, purgatory_explanations
from model.purgatory.effects import Effect, does
from model.purgatory.state import (
    PATH_CHECK_AND_COMPLETE,
    PATH_EXPIRY,
    PATH_FIRST_TRY,
    PATH_SECOND_TRY,
    Pc,
    State,
    Timer,
)
from model.purgatory.system import PurgatorySystem

__all__ = ["SPEC", "build", "properties", "quiescent"]


def quiescent(sys: PurgatorySystem, s: State) -> bool:
    """Every thread idle, every request submitted, no timer entry pending, no purge due.

    >>> sys = build(PurgatoryConfig())
    >>> quiescent(sys, sys.init_states()[0])
    False
    """
    if not sys.is_terminal(s):
        return False
    if sys.config.expiry and any(op.timer != Timer.NONE for op in s.ops):
        return False
    return not sys.purge_due(s)


def properties(config: PurgatoryConfig) -> list[Property]:
    """The safety properties and witnesses of the purgatory model for ``config``.

    >>> [p.name for p in properties(PurgatoryConfig())][:3]
    ['on_complete_at_most_once', 'on_expiration_only_if_expiry_won', 'no_lost_wakeup']
    """
    sys = PurgatorySystem(config)
    n_ops = sys.n_ops
    key_mask = sys.key_mask
    expiry = config.expiry
    thread_index = {name: t for t, name in enumerate(sys.thread_names)}

    def at_most_once(s: State) -> bool:
        return all(op.completions <= 1 for op in s.ops)

    def some_completed(s: State) -> bool:
        return any(op.completions for op in s.ops)

    def expiry_won(s: State) -> bool:
        return all(op.expirations == 0 or (op.expirations == 1 and op.by & PATH_EXPIRY) for op in s.ops)

    def some_expired(s: State) -> bool:
        return any(op.expirations for op in s.ops)

    # The engine evaluates a property's check and then its ``applies`` on the same state:
    # each pair shares one computation through a one-entry cache.
    wake_cache: list = [None, False, False]  # state, holds, applies

    def wakeup(s: State) -> list:
        if wake_cache[0] is not s:
            checking = sys.checking_keys(s)
            holds, applies = True, False
            for o in range(n_ops):
                if not checking & key_mask[o] and sys.handler_finished(s, o) and sys.satisfied(s, o):
                    applies = True
                    if not s.ops[o].completed:
                        holds = False
            wake_cache[:] = [s, holds, applies]
        return wake_cache

    def no_lost_wakeup(s: State) -> bool:
        return wakeup(s)[1]

    def wakeup_applies(s: State) -> bool:
        return wakeup(s)[2]

    def removed_by_traversal(s: State, a: Any, t: State) -> bool:
        if does(a, Effect.ENDS_WATCHER_TRAVERSAL):
            th = s.threads[thread_index[a.who]]
            return not (th.snap & t.watched[a.key])
        if does(a, Effect.PURGES_KEY):
            return not (t.watched[a.key] & sys.completed_mask(t))
        return True

    def traversal_applies(s: State, a: Any, t: State) -> bool:
        return does(a, Effect.ENDS_WATCHER_TRAVERSAL) or does(a, Effect.PURGES_KEY)

    end_cache: list = [None, False]  # state, quiescent

    def at_end(s: State) -> bool:
        if end_cache[0] is not s:
            end_cache[:] = [s, quiescent(sys, s)]
        return end_cache[1]

    def once_at_end(s: State) -> bool:
        if not at_end(s):
            return True
        for o, op in enumerate(s.ops):
            if op.completions != 1 and (expiry or sys.satisfied(s, o)):
                return False
        return True

    def has_path(path: int):
        return lambda s: any(op.by & path for op in s.ops)

    def left_watched_at_end(s: State) -> bool:
        done = sys.completed_mask(s)
        if not done or not any(w & done for w in s.watched) or not sys.all_idle(s):
            return False
        return sys.is_terminal(s) and not sys.successors(s)

    def recheck_cancels(s: State) -> bool:
        for t in range(sys.handlers):
            th = s.threads[t]
            if th.pc == Pc.T_CANCEL and s.ops[th.op].timer == Timer.ADDED:
                return True
        return False

    props = [
        always(
            "on_complete_at_most_once",
            at_most_once,
            "forceComplete's compareAndSet lets onComplete run at most once per operation (seed 004)",
            applies=some_completed,
        ),
        always(
            "on_expiration_only_if_expiry_won",
            expiry_won,
            "run() calls onExpiration only when its own forceComplete won: completion by satisfaction "
            "or by expiry, never both (seed 004)",
            applies=some_expired,
        ),
        always(
            "no_lost_wakeup",
            no_lost_wakeup,
            "a satisfied operation is completed once its tryCompleteElseWatch and every checkAndComplete "
            "on its keys have returned (second try + tryCompletePending retry, seed 004)",
            applies=wakeup_applies,
        ),
        transition(
            "completed_removed_by_next_traversal",
            removed_by_traversal,
            "checkAndComplete(k) removes every op completed and watched on k when it began; purgeCompleted "
            "of k removes every completed op (seed 004: the reaper cleans them up)",
            applies=traversal_applies,
        ),
        always(
            "every_op_completed_once_at_end",
            once_at_end,
            "in a quiescent state every operation ran onComplete exactly once (unsatisfied ones may wait "
            "when the timer is disabled) (seed 004)",
            applies=at_end,
        ),
    ]
    # Witnesses, each where this configuration can reach it at all (a missing one in a
    # configuration that could reach it would be reported as unreached).
    changing = (
        config.fetchers >= 1 and sys.followers >= 1 and (sys.max_fetches > 0 or config.leader_changes > 0)
    )
    can_first = sys.followers == 0 or changing
    timed = sys.timer_add
    witnesses = [
        (
            can_first,
            "completed_on_first_try",
            has_path(PATH_FIRST_TRY),
            "tryCompleteElseWatch's first tryComplete() completes an operation",
        ),
        (
            changing,
            "completed_on_second_try",
            has_path(PATH_SECOND_TRY),
            "tryCompleteElseWatch's maybeTryComplete() after watching completes an operation",
        ),
        (
            changing,
            "completed_by_check_and_complete",
            has_path(PATH_CHECK_AND_COMPLETE),
            "a fetcher's checkAndComplete completes a watched operation",
        ),
        (
            timed and sys.followers >= 1,
            "completed_by_expiry",
            has_path(PATH_EXPIRY),
            "the timer task's run() completes an operation and calls onExpiration",
        ),
        (
            changing,
            "try_lock_failed_pending_set",
            lambda s: any(op.pending for op in s.ops),
            "a thread's lock.tryLock() fails and it sets tryCompletePending for the lock holder",
        ),
        (
            timed and changing,
            "lost_cas_race",
            lambda s: any(op.lost_cas for op in s.ops),
            "a forceComplete loses the completed.compareAndSet race and returns false",
        ),
        (
            timed and changing,
            "timer_entry_of_completed_op_cancelled",
            recheck_cancels,
            "an operation completes between 'if (!isCompleted)' and timeoutTimer.add; the re-check cancels it",
        ),
        (
            changing and config.purge_interval < config.ops,
            "completed_op_left_watched_at_end",
            left_watched_at_end,
            "a proper end state still has a completed operation in a watcher list (purge is a heuristic)",
        ),
    ]
    props += [reachable(name, check, doc) for cond, name, check, doc in witnesses if cond]
    return attach(props, purgatory_explanations(sys))  # each says why it fails (timing_explain.py)


SPEC = ModelSpec(
    name="purgatory",
    summary="DelayedOperationPurgatory + DelayedProduce (acks=-1) threads, statement by statement (seed 004)",
    config_cls=PurgatoryConfig,
    build=build,
    properties=properties,
)
