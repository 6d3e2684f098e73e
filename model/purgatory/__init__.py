"""``DelayedOperation`` and ``DelayedOperationPurgatory`` (Kafka 2.x, seed 004) as threads.

Seed 004 prints ``forceComplete``, ``maybeTryComplete``, ``tryCompleteElseWatch``,
``checkAndComplete`` and ``DelayedProduce.tryComplete``; this model runs them on
concurrent threads, statement by statement, over shared memory:

- **request-handler threads** each submit their produce requests (``DelayedProduce``
  with acks=-1, op ``i`` on handler ``i mod handlers``) through
  ``tryCompleteElseWatch``: the first ``tryComplete()``; for every key "if completed
  return false", then ``watchForOperation`` (``estimatedTotalOperations`` is
  incremented with the first watch); the second try through ``maybeTryComplete()``;
  then "if not completed: ``timeoutTimer.add``, and if completed by now ``cancel()``";
- **fetcher threads** serve a follower fetch (one follower's log end offset rises by
  one; the leader's high watermark becomes the minimum over the ISR) or process a
  LeaderAndIsr that makes this broker a follower of a partition, and then call
  ``checkAndComplete(partition)``: ``tryCompleteWatched`` walks the key's watcher list
  with a weakly consistent ``ConcurrentLinkedQueue`` iterator (the next element is
  fixed when the current one is returned) and, for each operation, removes it if it
  is completed, else calls ``maybeTryComplete()`` and removes it if that returned true;
- the **reaper** (``ExpiredOperationReaper.advanceClock``) expires timer entries and,
  when ``estimatedTotalOperations - delayed > purgeInterval``, resets the estimate
  (``getAndSet(delayed)``) and runs ``purgeCompleted`` on every key's list in turn;
- the timer's **executor** runs an expired operation's ``run()``: ``if
  (forceComplete()) onExpiration()``.

Every atomic of the seed is its own step: ``completed.compareAndSet``,
``tryCompletePending.set / get / getAndSet``, ``lock.tryLock()``, ``lock.unlock()``,
the ``isCompleted`` reads, and the do-while test of ``maybeTryComplete``; each thread
keeps a program counter (:class:`Pc`) and its locals. ``tryComplete()`` checks one
partition per step (``DelayedProduce``: the partition's ``acksPending`` clears when the
high watermark reaches ``requiredOffset`` or the broker no longer leads it); the final
"no acks pending → forceComplete()" test reads only the operation's own fields (held
under its lock) and is folded into the last partition's step.

Abstractions (each keeps every interleaving of the shared steps above):

- The timer is abstract: an operation added to the timer may expire at any later
  step until it is cancelled; expiry hands it to the executor's queue (``cancel()``
  no longer reaches it then). The hierarchical timing wheel itself is checked by the
  separate ``timing-wheel`` model.
- ``watchForOperation`` is one step (it runs under ``watchersLock``) together with the
  ``estimatedTotalOperations`` increment that follows it; ``purgeCompleted`` of one
  key is one step. The removal of an empty ``Watchers`` object from ``watchersByKey``
  is not modelled: it happens under the same ``watchersLock`` as every add, so a
  thread still holding a removed object walks an empty list, which the iterator here
  over-approximates.
- The ISR is fixed (no shrink or expand); the leader's log end offset is
  ``max_offset`` from the start (the records were appended before the operations
  were created); losing leadership is permanent.
- ``onComplete`` and ``onExpiration`` only count their calls; ghost fields record
  which path called ``onComplete``, whether a ``compareAndSet`` was lost, and, for a
  ``checkAndComplete``, which operations were completed and watched when its iterator
  was created (``invariants/purgatory.py`` reads them).

Example
-------
>>> sys = PurgatorySystem(PurgatoryConfig(ops=1, partitions=1, fetchers=1))
>>> s0 = sys.init_states()[0]
>>> [str(a) for a, _ in sys.successors(s0)]  # doctest: +NORMALIZE_WHITESPACE
['handler 0: tryCompleteElseWatch(op 0) starts: tryComplete() partition 0 HW 0 < requiredOffset 1,
  acks pending; tryComplete() returns false',
 'fetcher 0: follower 1 of partition 0 fetches: LEO 0 -> 1, HW 0 -> 1']
"""

from __future__ import annotations

from model.facade import forward
from model.purgatory.state import PurgatoryConfig, State
from model.purgatory.system import PurgatorySystem

__all__ = ["PurgatoryConfig", "PurgatorySystem", "State"]

# every other public name of the submodules, found on first use (``from model.purgatory import ...`` as before)
__getattr__, __dir__ = forward(__name__, ["actions", "state", "system"], globals())
