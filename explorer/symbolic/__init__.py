"""The ``symbolic`` engine: z3 proofs that run the model's own Python functions.

A proof here never re-states a model rule in z3 by hand. It runs the model's plain
Python function over *symbolic values* (:class:`Sym`): each wraps a z3 expression, and
``==``, ``<``, ``+``, ``//``, ``%``, ``&``, ``|`` ... build z3 terms instead of
computing. When the function branches on a symbolic condition (``if``, ``and``,
``not``, ``in``, ``while``), ``bool()`` asks the :class:`PathExplorer`, which follows one
feasible side and later re-runs the function from the start to follow the other. So
every feasible path of the function is enumerated (up to explicit budgets), each with
its path condition and its result (whose leaves are z3 terms); a contract, written
independently as a z3 formula over the inputs, is then checked on every path. A
counterexample is a z3 model: concrete inputs for which the function breaks the
contract, rendered as plain values.

Integer semantics
-----------------
Integers are z3 ``Int`` (mathematical integers) with Python's floor ``//`` and ``%``
(encoded by their definition ``a == q*b + r``, ``0 <= r < b`` for ``b > 0``, with fresh
``q``, ``r``: this keeps the non-linear arithmetic in a form z3 decides quickly). With
``long_range=True`` every arithmetic result is also recorded as a *side condition*:
it must lie in ``[LONG_MIN, LONG_MAX]`` (no overflow of a signed 64-bit Scala ``Long``)
and a division must agree with Scala's truncating one. A proof discharges the side
conditions on every path, so under its stated preconditions the integer results are
exactly the 64-bit two's-complement results Kafka computes. (Bit-blasting 64-bit
division and multiplication directly takes z3 minutes per query; this encoding takes
milliseconds and states the no-overflow conditions explicitly.)

Entry points
------------
- :class:`PathExplorer` and :func:`prove_paths`: enumerate the paths of a function and
  check a contract on each (a :class:`ProofOutcome`);
- :class:`Obligation`: a named proof with a doc line; :func:`check_symbolic` runs the
  obligations of a target and returns the shared :class:`~explorer.core.CheckResult`;
- :func:`fresh_z3_context` and :func:`isolated`: run a proof in a z3 context of its own.

One z3 context per proof
------------------------
z3's search depends on the state of the context a query is posed in: the ids of the
terms made earlier (freed ids are reused), its caches. With one shared context a proof's
outcome and time depended on everything run before it in the process (a timing-wheel
query that takes a second alone ran into its limit after other proofs). So every
obligation :func:`check_symbolic` runs, and every ``prove_*`` function of the proof
modules (decorated with :func:`isolated`), runs in a fresh context: z3 terms made without
an explicit ``ctx=`` (all of them here: :class:`Sym`'s operators, the proofs' inputs)
land in it. A term from another context (kept in a module-level constant, say) fails
loudly with z3's "context mismatch" instead of silently sharing state.

The explorer knows no Kafka: proof targets live in ``invariants/proofs_*.py`` (each
module's ``PROOF_TARGETS``), found through :data:`PROOF_MODULES`.

Example
-------
>>> x = sym_int("x")
>>> def sign(v):
...     if v < 0:
...         return -1
...     return 0 if v == 0 else 1
>>> out = prove_paths(lambda: sign(x), lambda r: r * x >= 0)
>>> out.status, out.paths
('held', 3)
>>> out = prove_paths(lambda: sign(x), lambda r: r == 1, assumptions=[x.x >= -5])
>>> out.status, out.counterexample["x"] <= 0
('violated', True)

Modules
-------
:mod:`~explorer.symbolic.context` (z3 contexts, errors), :mod:`~explorer.symbolic.values`
(symbolic values), :mod:`~explorer.symbolic.paths` (path exploration),
:mod:`~explorer.symbolic.proofs` (contracts on paths, obligations) and
:mod:`~explorer.symbolic.targets` (proof targets, :func:`check_symbolic`); the engine
behind ``--engine symbolic`` is :mod:`explorer.engines.symbolic`.
"""

from __future__ import annotations

from explorer.symbolic.context import (
    LONG_MAX,
    LONG_MIN,
    BudgetExceeded,
    SymbolicError,
    fresh_z3_context,
    isolated,
)
from explorer.symbolic.paths import Path, PathExplorer
from explorer.symbolic.proofs import Obligation, ProofOutcome, model_value, prove_paths, render_counterexample
from explorer.symbolic.targets import PROOF_MODULES, check_symbolic, list_targets
from explorer.symbolic.values import Sym, SymArray, concrete, path_value, sym_bool, sym_int, z

__all__ = [
    "LONG_MAX",
    "LONG_MIN",
    "PROOF_MODULES",
    "BudgetExceeded",
    "Obligation",
    "Path",
    "PathExplorer",
    "ProofOutcome",
    "Sym",
    "SymArray",
    "SymbolicError",
    "check_symbolic",
    "concrete",
    "fresh_z3_context",
    "isolated",
    "list_targets",
    "model_value",
    "path_value",
    "prove_paths",
    "render_counterexample",
    "sym_bool",
    "sym_int",
    "z",
]
