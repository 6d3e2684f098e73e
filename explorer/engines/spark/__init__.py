"""The ``spark`` engine: the ``bfs`` search as Spark jobs, with the same answers.

The search is the one :func:`explorer.engines.bfs.check_bfs` makes, level by level, and it
returns the same :class:`~explorer.core.CheckResult`: the same distinct and generated
counts, per-level frontiers, coverage, property statuses, and the same shortest
counterexamples (the very same traces: parents are chosen as ``bfs`` chooses them).

How a level runs
----------------
Every state of a BFS level has a *rank*, its position in the order in which ``bfs``
would have found it; a new state's *key* is ``(parent rank, successor index)`` of the
first transition (in that order) that reaches it, packed into one int64. The
persisted RDD holds, per partition, the blocks of *fresh candidates* (keys and
pickled states) the partitions sent it at the previous level. A level is one Spark
job:

1. each partition picks its winners from its blocks with the level's sorted keys (a
   broadcast; their positions are the ranks) and expands them in rank order:
   ``successors``, ``transition`` properties, coverage, fingerprints;
2. successors already seen in the partition, or first seen at an earlier level (each
   Python worker keeps a copy of the visited set, merged from per-level broadcasts),
   are dropped; the rest are checked as new states and sent, pickled once, to the
   partition owning their fingerprint (the only shuffle);
3. the driver receives ``(key, fingerprint, check hash, action kind)`` of every fresh
   candidate (an accumulator), keeps the smallest key per fingerprint (``bfs``'s first
   discovery; differing check hashes are a collision), sorts the winners into the
   next ranks and broadcasts their keys and fingerprints.

The driver writes ``level-NNNNN.npz`` (fingerprint, parent fingerprint and key of
every new state, in rank order) under the run directory. Counterexamples are
rebuilt from those files: the path of keys is followed back to an initial state and
then replayed forward through ``successors``, every step's fingerprint compared with
the stored one (a mismatch raises :class:`FingerprintCollisionError`). ``eventually``
properties are checked after a complete search on the edges written per level as
fingerprint records (:mod:`~explorer.engines.spark.liveness`).

When the first violation (without ``keep_going``) or ``max_states`` stops ``bfs``
in the middle of a level, the level is re-evaluated up to that state (a second small
job), so even the counts of a stopped search equal those of ``bfs``. ``max_seconds``
is checked between levels and cancels a running level at the deadline (counts then
stop at the last whole level).

Small levels run in the driver (``local_frontier``), exactly as ``bfs`` does, with
fingerprints; the search moves to Spark once a frontier reaches that size. The
persisted RDD is checkpointed reliably every ``checkpoint_every`` Spark levels, which
cuts its lineage; a lost executor's partitions are recomputed from the last
checkpoint.

Example
-------
>>> from tests.toys import Grid
>>> g = Grid(3, limit=3)
>>> r = check_spark(g, g.properties(), master="local[2]")  # doctest: +SKIP
>>> r.engine, r.distinct_states, r.violations[0].length  # doctest: +SKIP
('spark', 10, 3)

Modules
-------
:mod:`~explorer.engines.spark.session` (Java, master, the session and its start in the background),
:mod:`~explorer.engines.spark.fingerprints` (fast fingerprints),
:mod:`~explorer.engines.spark.partitions` (what executors run),
:mod:`~explorer.engines.spark.levels` (level files, trace paths, winners, the partitions' balance),
:mod:`~explorer.engines.spark.deltas` (the visited set's deltas to the tasks, persisted levels),
:mod:`~explorer.engines.spark.liveness` (``eventually`` properties: the graph's records written
and read), :mod:`~explorer.engines.spark.driver` (the expander under the shared level loop) and
:mod:`~explorer.engines.spark.result` (the result).
"""

from __future__ import annotations

from explorer.engines.spark.driver import check_spark, run
from explorer.engines.spark.fingerprints import FingerprintCollisionError, state_fingerprint
from explorer.engines.spark.session import SparkSetupError, check_java, probe_master, spark_session
from explorer.search import collision_odds

__all__ = [
    "FingerprintCollisionError",
    "SparkSetupError",
    "check_java",
    "check_spark",
    "collision_odds",
    "probe_master",
    "run",
    "spark_session",
    "state_fingerprint",
]
