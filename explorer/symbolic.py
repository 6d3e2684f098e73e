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
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

import z3

from explorer.core import CheckResult, ExitReason, TraceStep, Violation

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

LONG_MIN = -(2**63)
"""Scala's ``Long.MinValue``."""
LONG_MAX = 2**63 - 1
"""Scala's ``Long.MaxValue``."""

#: modules whose ``PROOF_TARGETS`` (name -> obligations factory) the engine knows
PROOF_MODULES: tuple[str, ...] = ("invariants.proofs_election", "invariants.proofs_timing")


class SymbolicError(Exception):
    """A function did something the harness cannot follow symbolically.

    For example hashing a symbolic value, using one as a list index, or branching on a
    symbolic condition outside :meth:`PathExplorer.explore`.
    """


class BudgetExceeded(Exception):
    """A path budget (paths, decisions per path, deadline) ran out."""


# ----------------------------------------------------------------------------------------
# One z3 context per proof.

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _check_z3_default_context() -> None:
    """z3's ``main_ctx()`` must read (and lazily fill) the module global ``_main_ctx``."""
    zmod = z3.z3
    ok = (
        hasattr(zmod, "_main_ctx")
        and z3.main_ctx.__globals__ is vars(zmod)
        and "_main_ctx" in z3.main_ctx.__code__.co_names
    )
    if not ok:  # pragma: no cover - a z3 whose Python API changed
        raise RuntimeError("z3.main_ctx() no longer uses z3.z3._main_ctx: fresh_z3_context needs updating")


@contextmanager
def fresh_z3_context() -> Iterator[None]:
    """Within the block, z3's default context (``z3.main_ctx()``) is a new one.

    Every z3 term, sort and solver made without ``ctx=`` in the block belongs to it, so
    what z3 does in the block does not depend on what was made before in the process
    (see the module doc). The previous default context is restored on exit; terms made
    in the block stay valid (each keeps its context alive) but cannot be combined with
    terms of the restored one. Blocks nest.

    The new context is made by z3 itself on first use (``main_ctx()`` creates one when
    its module global ``z3.z3._main_ctx`` is None, which this sets): a z3 context costs
    about 17 MB, and a block that makes no term (an outer :func:`isolated` call whose
    inner calls are isolated too) makes none. Not thread-safe, since that global is
    process-wide.

    >>> outer = z3.Int("x")
    >>> with fresh_z3_context():
    ...     inner = z3.Int("x")
    ...     inner.ctx is z3.main_ctx(), inner.ctx is not outer.ctx
    (True, True)
    >>> z3.main_ctx() is outer.ctx
    True
    """
    _check_z3_default_context()
    zmod = z3.z3
    saved = zmod._main_ctx
    zmod._main_ctx = None
    try:
        yield
    finally:
        zmod._main_ctx = saved


def isolated(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorator: every call of ``fn`` runs in :func:`fresh_z3_context`.

    For a function that builds its z3 terms itself and returns none (a ``prove_*``
    function returning a :class:`ProofOutcome` of plain values), not for one taking or
    returning terms. ``fn.__wrapped__`` is the undecorated function.

    >>> @isolated
    ... def context_of_a_new_term() -> z3.Context:
    ...     return z3.Int("x").ctx
    >>> context_of_a_new_term() is z3.main_ctx(), context_of_a_new_term.__wrapped__() is z3.main_ctx()
    (False, True)
    """

    @functools.wraps(fn)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with fresh_z3_context():
            return fn(*args, **kwargs)

    return run


# ----------------------------------------------------------------------------------------
# Symbolic values.

_ACTIVE: list[PathExplorer] = []


def _ctx() -> PathExplorer:
    if not _ACTIVE:
        raise SymbolicError("a symbolic condition was used outside PathExplorer.explore()")
    return _ACTIVE[-1]


def z(v: Any, like: z3.ExprRef | None = None) -> z3.ExprRef:
    """The z3 term of a value: a :class:`Sym`'s expression, or a Python constant.

    ``like`` picks the sort of a constant (a bit-vector of the same width, say).

    >>> z(3), z(True), z(sym_int("y") + 1)
    (3, True, y + 1)
    """
    if isinstance(v, Sym):
        return v.x
    if isinstance(v, z3.ExprRef):
        return v
    if isinstance(v, bool):
        return z3.BoolVal(v)
    if isinstance(v, int):
        if like is not None and z3.is_bv(like):
            return z3.BitVecVal(v, like.size())
        return z3.IntVal(int(v))
    raise SymbolicError(f"cannot turn {v!r} ({type(v).__name__}) into a z3 term")


def _num(v: Any) -> bool:
    return isinstance(v, Sym | int)


def _is_value(x: z3.ExprRef) -> bool:
    return z3.is_int_value(x) or z3.is_bv_value(x) or z3.is_true(x) or z3.is_false(x)


def _bits(x: z3.ExprRef) -> z3.BitVecRef:
    return x if z3.is_bv(x) else z3.Int2BV(x, 64)


class Sym:
    """A symbolic int or bool: a z3 expression whose operators build z3 terms.

    ``bool()`` of a symbolic condition forks the current path (see :class:`PathExplorer`).
    Integers are z3 ``Int`` with Python's floor division; bit operations on ints go
    through 64-bit vectors. A :class:`Sym` cannot be hashed or used as a list index.

    >>> a, b = sym_int("a"), sym_int("b")
    >>> (a + 2 * b).x
    a + 2*b
    >>> (a < b).x
    a < b
    """

    __slots__ = ("x",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, x: z3.ExprRef):
        self.x = x

    def __repr__(self) -> str:
        return f"Sym({self.x})"

    # -- arithmetic ----------------------------------------------------------------------
    def _bin(self, o: Any, op: str, reflected: bool = False) -> Any:
        if not _num(o):
            return NotImplemented
        a, b = self.x, z(o, self.x)
        if reflected:
            a, b = b, a
        if z3.is_bool(a) or z3.is_bool(b):
            if op in ("&", "|", "^") and z3.is_bool(a) and z3.is_bool(b):
                return Sym({"&": z3.And, "|": z3.Or, "^": z3.Xor}[op](a, b))
            a = z3.If(a, 1, 0) if z3.is_bool(a) else a
            b = z3.If(b, 1, 0) if z3.is_bool(b) else b
        # identities keep terms syntactically equal (x + 0 is x), so repeated divisions share facts
        if op in ("+", "-") and z3.is_int_value(b) and b.as_long() == 0:
            return Sym(a)
        if op == "+" and z3.is_int_value(a) and a.as_long() == 0:
            return Sym(b)
        if op == "*" and z3.is_int_value(b) and b.as_long() == 1:
            return Sym(a)
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif op in ("//", "%"):
            q, rem = _division(a, b)
            r = q if op == "//" else rem
        elif op in ("&", "|", "^", "<<", ">>"):
            ba, bb = _bits(a), _bits(b)
            f = {
                "&": lambda: ba & bb,
                "|": lambda: ba | bb,
                "^": lambda: ba ^ bb,
                "<<": lambda: ba << bb,
                ">>": lambda: ba >> bb,
            }[op]
            r = f()
            if not z3.is_bv(a):
                r = z3.BV2Int(r, is_signed=True)
        else:  # pragma: no cover - closed set of operators
            raise SymbolicError(op)
        if _ACTIVE and op in ("+", "-", "*"):
            _ACTIVE[-1]._arith(r, f"{op}")
        if _is_value(a) and _is_value(b):
            r = z3.simplify(r)
        return Sym(r)

    def __add__(self, o: Any) -> Any:
        return self._bin(o, "+")

    def __radd__(self, o: Any) -> Any:
        return self._bin(o, "+", True)

    def __sub__(self, o: Any) -> Any:
        return self._bin(o, "-")

    def __rsub__(self, o: Any) -> Any:
        return self._bin(o, "-", True)

    def __mul__(self, o: Any) -> Any:
        return self._bin(o, "*")

    def __rmul__(self, o: Any) -> Any:
        if isinstance(o, list):  # ``[c] * n`` with a symbolic n: an array of c's
            if len(o) != 1:
                raise SymbolicError("only [c] * n is supported for a symbolic n")
            return SymArray(o[0])
        return self._bin(o, "*", True)

    def __floordiv__(self, o: Any) -> Any:
        return self._bin(o, "//")

    def __rfloordiv__(self, o: Any) -> Any:
        return self._bin(o, "//", True)

    def __mod__(self, o: Any) -> Any:
        return self._bin(o, "%")

    def __rmod__(self, o: Any) -> Any:
        return self._bin(o, "%", True)

    def __and__(self, o: Any) -> Any:
        return self._bin(o, "&")

    def __rand__(self, o: Any) -> Any:
        return self._bin(o, "&", True)

    def __or__(self, o: Any) -> Any:
        return self._bin(o, "|")

    def __ror__(self, o: Any) -> Any:
        return self._bin(o, "|", True)

    def __xor__(self, o: Any) -> Any:
        return self._bin(o, "^")

    def __rxor__(self, o: Any) -> Any:
        return self._bin(o, "^", True)

    def __lshift__(self, o: Any) -> Any:
        return self._bin(o, "<<")

    def __rlshift__(self, o: Any) -> Any:
        return self._bin(o, "<<", True)

    def __rshift__(self, o: Any) -> Any:
        return self._bin(o, ">>")

    def __rrshift__(self, o: Any) -> Any:
        return self._bin(o, ">>", True)

    def __neg__(self) -> Sym:
        return Sym(-self.x)

    def __invert__(self) -> Sym:
        if z3.is_bool(self.x):
            return Sym(z3.Not(self.x))
        return Sym(-self.x - 1)

    # -- comparisons ---------------------------------------------------------------------
    def _cmp(self, o: Any, op: str) -> Any:
        if not _num(o):
            if op == "==":
                return False
            if op == "!=":
                return True
            return NotImplemented
        a, b = self.x, z(o, self.x)
        if z3.is_bool(a) != z3.is_bool(b):
            a = z3.If(a, 1, 0) if z3.is_bool(a) else a
            b = z3.If(b, 1, 0) if z3.is_bool(b) else b
        r = {
            "==": lambda: a == b,
            "!=": lambda: a != b,
            "<": lambda: a < b,
            "<=": lambda: a <= b,
            ">": lambda: a > b,
            ">=": lambda: a >= b,
        }[op]()
        return Sym(r)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return self._cmp(o, "==")

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return self._cmp(o, "!=")

    def __lt__(self, o: Any) -> Any:
        return self._cmp(o, "<")

    def __le__(self, o: Any) -> Any:
        return self._cmp(o, "<=")

    def __gt__(self, o: Any) -> Any:
        return self._cmp(o, ">")

    def __ge__(self, o: Any) -> Any:
        return self._cmp(o, ">=")

    # -- the fork --------------------------------------------------------------------------
    def __bool__(self) -> bool:
        x = self.x
        if not z3.is_bool(x):
            x = x != z(0, x)
        return _ctx().decide(x)

    def __index__(self) -> int:
        v = z3.simplify(self.x)
        if z3.is_int_value(v):
            return int(v.as_long())
        raise SymbolicError(f"a symbolic int ({self.x}) was used as an index or size")


class SymArray:
    """A list whose positions may be symbolic: ``[c] * n`` for a symbolic ``n`` builds one.

    Reads give an ``If`` chain over the writes (latest first); writes append. With
    ``base`` (a z3 array) the initial contents are unknown.

    >>> arr = SymArray(-1)
    >>> i = sym_int("i")
    >>> arr[i] = 5
    >>> arr[3].x
    If(3 == i, 5, -1)
    """

    __slots__ = ("base", "default", "stores")

    def __init__(self, default: Any, stores: Iterable[tuple[Any, Any]] = (), base: z3.ArrayRef | None = None):
        self.default = default
        self.stores: list[tuple[Any, Any]] = list(stores)
        self.base = base  # unknown initial contents (a z3 array), else ``default`` everywhere

    def __iter__(self) -> Any:
        raise SymbolicError("a SymArray has no concrete length to iterate over")

    def __getitem__(self, i: Any) -> Any:
        if self.base is not None:
            out = z3.Select(self.base, z(i))
            for k, v in self.stores:
                out = z3.If(z(i) == z(k), z(v), out)
            return Sym(out)
        out = z(self.default)
        for k, v in self.stores:
            if isinstance(k, int) and isinstance(i, int):
                if k == i:
                    out = z(v)
                continue
            out = z3.If(z(i) == z(k), z(v), out)
        if not isinstance(i, Sym) and not any(isinstance(k, Sym) for k, _ in self.stores):
            v = z3.simplify(out)
            if z3.is_int_value(v):
                return int(v.as_long())
        return Sym(out)

    def __setitem__(self, i: Any, v: Any) -> None:
        self.stores.append((i, v))

    def __repr__(self) -> str:
        return f"SymArray({self.default!r}, {self.stores!r})"


def sym_int(name: str) -> Sym:
    """A fresh symbolic integer (z3 ``Int``).

    >>> sym_int("n").x.sort()
    Int
    """
    return Sym(z3.Int(name))


def sym_bool(name: str) -> Sym:
    """A fresh symbolic boolean.

    >>> sym_bool("flag").x.sort()
    Bool
    """
    return Sym(z3.Bool(name))


def path_value(b: Any) -> bool | None:
    """Inside a goal or an explored function: the value a free boolean has on this path.

    None when it is not decided (or outside an exploration).

    >>> path_value(z3.Bool("p")) is None
    True
    """
    if not _ACTIVE:
        return None
    return _ACTIVE[-1].value_on_path(z(b))


def concrete(v: Any) -> Any:
    """A Python value with every :class:`Sym` leaf replaced by its z3 term (for messages).

    >>> concrete((sym_int("a"), 1))
    (a, 1)
    """
    if isinstance(v, Sym):
        return v.x
    if isinstance(v, tuple):
        items = [concrete(x) for x in v]
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
    return v


def _division(a: z3.ExprRef, b: z3.ExprRef) -> tuple[z3.ExprRef, z3.ExprRef]:
    """Floor quotient and remainder of ``a // b``, as fresh terms with defining facts."""
    sa, sb = z3.simplify(a), z3.simplify(b)
    if z3.is_int_value(sa) and z3.is_int_value(sb) and sb.as_long() != 0:
        x, y = sa.as_long(), sb.as_long()
        return z3.IntVal(x // y), z3.IntVal(x % y)
    if z3.is_bv(a):
        return a / b, z3.SRem(a, b)
    return _ctx().division(a, b)


# ----------------------------------------------------------------------------------------
# Path exploration.


@dataclass
class _Frame:
    cond: z3.BoolRef
    choice: bool
    alt_pending: bool
    alt_model: z3.ModelRef | None
    pushed: bool
    free: int | None = None  # ast id of a free boolean decided here
    free_neg: bool = False  # the condition was the boolean's negation


@dataclass
class Path:
    """One explored path: its decisions, the function's result and side conditions."""

    index: int
    decisions: list[tuple[z3.BoolRef, bool]]
    result: Any
    error: BaseException | None
    side_conditions: list[tuple[str, z3.BoolRef]]

    @property
    def conditions(self) -> list[z3.BoolRef]:
        """The path condition: each decision's condition or its negation."""
        return [c if v else z3.Not(c) for c, v in self.decisions]


class PathExplorer:
    """Enumerate every feasible path of a function of symbolic values (depth first).

    Each run re-executes the function from the start; decisions already taken on the
    current path are replayed, a new decision follows a feasible side and remembers
    whether the other one is feasible too. One z3 solver holds the assumptions and, in
    nested scopes, the path condition. It works in z3's current default context (a fresh
    one inside :func:`fresh_z3_context`): the inputs must belong to it.

    Parameters
    ----------
    assumptions : iterable of z3 Bool
        Preconditions on the inputs.
    distinct : sequence of z3 terms
        Terms known to be pairwise different (also added as an assumption): equality
        tests between two of them are decided without the solver.
    free : sequence of z3 Bool constants
        Booleans no assumption mentions: a first test of one is decided without the solver.
    long_range : bool
        Record a side condition for each ``+ - * // %``: the result fits a 64-bit ``Long``
        and ``//``/``%`` agree with Scala's truncating division.
    max_paths, max_decisions : int
        Budgets (paths in total; decisions on one path).
    deadline : float or None
        ``time.perf_counter()`` value after which exploration stops.
    query_timeout_s : float
        Limit of one solver query; an ``unknown`` is retried ``retries`` times in fresh
        solvers with other random seeds (limits doubling), then ends the proof as ``unknown``.
    retries : int
        Fresh-solver retries of an ``unknown`` query.

    Examples
    --------
    >>> x = sym_int("x")
    >>> ex = PathExplorer([x.x >= 0, x.x <= 2])
    >>> sorted(p.result for p in ex.explore(lambda: 0 if x == 0 else (1 if x == 1 else 2)))
    [0, 1, 2]
    """

    def __init__(
        self,
        assumptions: Iterable[z3.BoolRef] = (),
        *,
        distinct: Sequence[z3.ExprRef] = (),
        free: Sequence[z3.BoolRef] = (),
        long_range: bool = False,
        max_paths: int = 1_000_000,
        max_decisions: int = 100_000,
        deadline: float | None = None,
        query_timeout_s: float = 10.0,
        retries: int = 4,
    ):
        self.solver = z3.Solver()
        self.query_timeout_s = query_timeout_s
        self.retries = retries
        self._last_model: z3.ModelRef | None = None
        self.assumptions = list(assumptions)
        ctx = self.solver.ctx
        for t in (*self.assumptions, *distinct, *free):
            if isinstance(t, z3.AstRef) and t.ctx is not ctx:
                raise SymbolicError(
                    f"{_short(t, 80)} belongs to another z3 context than the current default one "
                    "(made before a fresh_z3_context / isolated proof began?)"
                )
        if len(distinct) > 1:
            self.assumptions.append(z3.Distinct(*distinct))
        self.solver.add(*self.assumptions)
        self._distinct = {t.get_id() for t in distinct}
        self._free = {b.get_id(): b for b in free}
        self.long_range = long_range
        self.max_paths = max_paths
        self.max_decisions = max_decisions
        self.deadline = deadline
        self._frames: list[_Frame] = []
        self._pos = 0
        self._model: z3.ModelRef | None = None
        self._stale = True
        self._divs: dict[tuple[int, int], tuple[z3.ExprRef, z3.ExprRef, int]] = {}
        self._div_names = 0
        self._side: list[tuple[str, z3.BoolRef]] = []
        self._decided_free: dict[int, bool] = {}
        self._memo: dict[int, tuple[z3.ExprRef, tuple[str, Any, bool]]] = {}
        self.paths = 0
        self.solver_checks = 0

    # -- hooks used by Sym ---------------------------------------------------------------
    def _arith(self, r: z3.ExprRef, op: str) -> None:
        if self.long_range and not z3.is_bv(r):
            self._side.append((f"no Long overflow in {r}", z3.And(r >= LONG_MIN, r <= LONG_MAX)))

    def division(self, a: z3.ExprRef, b: z3.ExprRef) -> tuple[z3.ExprRef, z3.ExprRef]:
        """Fresh quotient and remainder of Python's ``a // b`` with their defining facts."""
        key = (a.get_id(), b.get_id())
        hit = self._divs.get(key)
        if hit is None:
            n = self._div_names
            self._div_names += 1
            q, r = z3.Int(f"q!{n}"), z3.Int(f"r!{n}")
            fact = z3.And(
                z3.Implies(b != 0, a == q * b + r),
                z3.Implies(b > 0, z3.And(r >= 0, r < b)),
                z3.Implies(b < 0, z3.And(r <= 0, r > b)),
            )
            self.solver.add(fact)  # in the current scope; forgotten when it is popped
            self._divs[key] = (q, r, len(self._frames))
            self._stale = True
        else:
            q, r, _ = hit
        self._side.append((f"{a} // {b}: divisor is not zero", b != 0))
        if self.long_range:
            self._side.append(
                (f"{a} // {b}: Scala's truncating division agrees", z3.Or(r == 0, (a >= 0) == (b > 0)))
            )
            self._side.append((f"no Long overflow in {a} // {b}", z3.And(q >= LONG_MIN, q <= LONG_MAX)))
        return q, r

    def decide(self, cond: z3.BoolRef) -> bool:
        """Branch on ``cond``: replay the recorded choice, or take a new feasible one."""
        i = self._pos
        self._pos += 1
        if i < len(self._frames):
            f = self._frames[i]
            if f.free is not None:
                self._decided_free[f.free] = f.choice != f.free_neg
            return f.choice
        if i >= self.max_decisions:
            raise BudgetExceeded(f"more than {self.max_decisions} decisions on one path")
        choice, alt, alt_model, push, free, neg = self._new_decision(cond)
        if push:
            self.solver.push()
            self.solver.add(cond if choice else z3.Not(cond))
        self._frames.append(_Frame(cond, choice, alt, alt_model, push, free, neg))
        if free is not None:
            self._decided_free[free] = choice != neg
        return choice

    def _new_decision(
        self, cond: z3.BoolRef
    ) -> tuple[bool, bool, z3.ModelRef | None, bool, int | None, bool]:
        kind, payload, neg = self._classify(cond)
        if kind == "const":
            return payload, False, None, False, None, False
        if kind == "lit":  # a free boolean
            bid = payload
            if bid in self._decided_free:
                return self._decided_free[bid] != neg, False, None, False, None, False
            value = True
            if self._model is not None and not self._stale:
                value = z3.is_true(self._model.eval(self._free[bid], model_completion=True))
            return value != neg, True, None, True, bid, neg
        cond = payload
        # the solver
        guess: bool | None = None
        if self._model is not None and not self._stale:
            guess = z3.is_true(self._model.eval(cond, model_completion=True))
        if guess is None:
            if self._check(cond):
                m = self._last_model
                other = self._check(z3.Not(cond))
                om = self._last_model if other else None
                self._model, self._stale = m, False
                return True, other, om, True, None, False
            return False, False, None, True, None, False
        other = self._check(cond if not guess else z3.Not(cond))
        om = self._last_model if other else None
        return guess, other, om, True, None, False

    def _classify(self, cond: z3.ExprRef) -> tuple[str, Any, bool]:
        """("const", value, _), ("lit", free boolean id, negated) or ("solver", term, _).

        Memoised by AST id (the AST is kept alive so its id is never reused)."""
        key = cond.get_id()
        hit = self._memo.get(key)
        if hit is not None:
            return hit[1]
        c = self._reduce(cond)
        out: tuple[str, Any, bool]
        if z3.is_true(c) or z3.is_false(c):
            out = ("const", z3.is_true(c), False)
        else:
            neg = z3.is_not(c)
            core = c.arg(0) if neg else c
            if z3.is_const(core) and core.get_id() in self._free:
                out = ("lit", core.get_id(), neg)
            else:
                out = ("solver", c, False)
        self._memo[key] = (cond, out)
        return out

    def _reduce(self, c: z3.ExprRef) -> z3.ExprRef:
        """Fold what needs no solver: constants and equalities between terms known
        distinct (also under ``If`` over them, which leaves the ``If``'s condition)."""
        if z3.is_true(c) or z3.is_false(c):
            return c
        if z3.is_not(c):
            r = self._reduce(c.arg(0))
            if z3.is_true(r):
                return z3.BoolVal(False)
            if z3.is_false(r):
                return z3.BoolVal(True)
            return z3.Not(r) if r is not c.arg(0) else c
        if (z3.is_eq(c) or z3.is_distinct(c)) and c.num_args() == 2:
            r = self._eq(c.arg(0), c.arg(1))
            if r is not None:
                if z3.is_distinct(c):
                    return (
                        z3.BoolVal(False)
                        if z3.is_true(r)
                        else (z3.BoolVal(True) if z3.is_false(r) else z3.Not(r))
                    )
                return r
            return z3.simplify(c)
        if z3.is_const(c) and c.get_id() in self._free:
            return c
        return z3.simplify(c)

    def _eq(self, x: z3.ExprRef, y: z3.ExprRef) -> z3.ExprRef | None:
        """``x == y`` when x, y are distinct-family terms or ``If(c, ., .)`` over them."""
        d = self._distinct
        if x.get_id() in d and y.get_id() in d:
            return z3.BoolVal(x.get_id() == y.get_id())
        for u, w in ((x, y), (y, x)):
            if w.get_id() in d and z3.is_app_of(u, z3.Z3_OP_ITE):
                c = self._reduce(u.arg(0))
                t, e = self._eq(u.arg(1), w), self._eq(u.arg(2), w)
                if t is None or e is None:
                    return None
                if z3.is_true(c):
                    return t
                if z3.is_false(c):
                    return e
                if z3.is_true(t) and z3.is_false(e):
                    return c
                if z3.is_false(t) and z3.is_true(e):
                    return z3.Not(c)
                if z3.is_false(t) and z3.is_false(e):
                    return z3.BoolVal(False)
                if z3.is_true(t) and z3.is_true(e):
                    return z3.BoolVal(True)
                return None
        return None

    def value_on_path(self, b: z3.ExprRef) -> bool | None:
        """The value a free boolean was given on the current path (None: not decided)."""
        return self._decided_free.get(b.get_id())

    def _set_timeout(self) -> None:
        limit = self.query_timeout_s
        if self.deadline is not None:
            limit = min(limit, max(0.05, self.deadline - time.perf_counter()))
        self.solver.set("timeout", int(limit * 1000))

    def _query(self, extra: z3.BoolRef) -> z3.ModelRef | None:
        """Path condition and ``extra``: a model, or None when unsatisfiable.

        Non-linear queries can make z3's incremental solver give up; such a query is
        retried in fresh solvers (the same assertions, other random seeds) before the
        proof is declared ``unknown``.
        """
        self.solver_checks += 1
        self._set_timeout()
        r = self.solver.check(extra)
        if r == z3.sat:
            return self.solver.model()
        if r == z3.unsat:
            return None
        reason = self.solver.reason_unknown()
        assertions = self.solver.assertions()
        for seed in range(1, self.retries + 1):
            if self.deadline is not None and time.perf_counter() > self.deadline:
                break
            fresh = z3.Solver()
            fresh.set("random_seed", seed)
            limit = self.query_timeout_s * 2**seed
            if self.deadline is not None:
                limit = min(limit, max(0.05, self.deadline - time.perf_counter()))
            fresh.set("timeout", int(limit * 1000))
            fresh.add(assertions)
            fresh.add(extra)
            r = fresh.check()
            if r == z3.sat:
                return fresh.model()
            if r == z3.unsat:
                return None
        raise BudgetExceeded(f"z3 returned unknown: {reason}")

    def _check(self, extra: z3.BoolRef) -> bool:
        self._last_model = self._query(extra)
        return self._last_model is not None

    # -- after a run -----------------------------------------------------------------------
    def simplify_on_path(self, goal: z3.BoolRef) -> z3.BoolRef:
        """``goal`` with the free booleans decided on this path replaced by their values."""
        if not self._decided_free:
            return goal
        pairs = [(self._free[i], z3.BoolVal(v)) for i, v in self._decided_free.items()]
        return z3.simplify(z3.substitute(goal, *pairs))

    def find(self, cond: z3.BoolRef) -> z3.ModelRef | None:
        """On the current path: a model of path condition and ``cond``, or None.

        Valid while a :class:`Path` from :meth:`explore` is being looked at.
        """
        return self._query(cond)

    def _backtrack(self) -> bool:
        frames = self._frames
        while frames and not frames[-1].alt_pending:
            f = frames.pop()
            if f.pushed:
                self.solver.pop()
            self._forget_divisions()
        if not frames:
            return False
        f = frames[-1]
        if f.pushed:
            self.solver.pop()
        self._forget_divisions()
        f.choice = not f.choice
        f.alt_pending = False
        self.solver.push()
        self.solver.add(f.cond if f.choice else z3.Not(f.cond))
        f.pushed = True
        self._model, self._stale = f.alt_model, f.alt_model is None or f.free is not None
        return True

    def _forget_divisions(self) -> None:
        depth = len(self._frames)
        for k in [k for k, (_, _, d) in self._divs.items() if d > depth]:
            del self._divs[k]
        # a division recorded at exactly this depth lived in the popped scope too
        for k in [k for k, (_, _, d) in self._divs.items() if d == depth]:
            del self._divs[k]

    def explore(self, fn: Callable[[], Any]) -> Iterator[Path]:
        """Run ``fn`` once per feasible path; yield each :class:`Path` (solver positioned on it)."""
        _ACTIVE.append(self)
        try:
            while True:
                if self.deadline is not None and time.perf_counter() > self.deadline:
                    raise BudgetExceeded("the deadline passed")
                if self.paths >= self.max_paths:
                    raise BudgetExceeded(f"more than {self.max_paths} paths")
                self._pos = 0
                self._side = []
                self._decided_free = {}
                error: BaseException | None = None
                result: Any = None
                try:
                    result = fn()
                except (SymbolicError, BudgetExceeded):
                    raise
                except Exception as exc:
                    error = exc
                # drop decisions recorded beyond this run (none in a deterministic function)
                self.paths += 1
                conds = [(f.cond, f.choice) for f in self._frames[: self._pos]]
                _ACTIVE.pop()
                try:
                    yield Path(self.paths - 1, conds, result, error, list(self._side))
                finally:
                    _ACTIVE.append(self)
                if not self._backtrack():
                    return
        finally:
            _ACTIVE.pop()


# ----------------------------------------------------------------------------------------
# Proofs.


def model_value(m: z3.ModelRef, t: Any) -> Any:
    """The value of a term (or :class:`Sym`, or Python constant) in a z3 model.

    >>> s = z3.Solver(); x = z3.Int("x"); s.add(x == 4); _ = s.check()
    >>> model_value(s.model(), Sym(x) + 1)
    5
    """
    if isinstance(t, tuple):
        items = [model_value(m, x) for x in t]
        return type(t)(*items) if hasattr(t, "_fields") else tuple(items)
    if not isinstance(t, Sym | z3.ExprRef):
        return t
    v = m.eval(z(t), model_completion=True)
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_bv_value(v):
        return v.as_signed_long()
    return str(v)


def _short(t: z3.ExprRef, limit: int = 240) -> str:
    text = " ".join(str(t).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def render_counterexample(cex: dict[str, Any]) -> str:
    """A counterexample as readable ``name = value`` lines.

    >>> print(render_counterexample({"assignment": (1, 2), "unclean": True}))
    assignment = (1, 2)
    unclean = True
    """
    return "\n".join(f"{k} = {v!r}" for k, v in cex.items())


@dataclass
class ProofOutcome:
    """What one proof found: ``held``, ``violated`` (with a counterexample) or ``unknown``."""

    status: str
    seconds: float = 0.0
    paths: int = 0
    counterexample: dict[str, Any] | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def merge(self, other: ProofOutcome) -> ProofOutcome:
        """Combine two sub-proofs (the first failure wins)."""
        status = self.status
        if status == "held":
            status = other.status
        cex, msg = self.counterexample, self.message
        if self.status == "held" and other.status != "held":
            cex, msg = other.counterexample, other.message
        return ProofOutcome(status, self.seconds + other.seconds, self.paths + other.paths, cex, msg)


def prove_paths(
    fn: Callable[[], Any],
    goal: Callable[[Any], Any],
    *,
    assumptions: Iterable[z3.BoolRef] = (),
    distinct: Sequence[z3.ExprRef] = (),
    free: Sequence[z3.BoolRef] = (),
    render: Callable[[z3.ModelRef, Any], dict[str, Any]] | None = None,
    long_range: bool = False,
    max_paths: int = 1_000_000,
    deadline: float | None = None,
) -> ProofOutcome:
    """Prove ``goal(result)`` on every feasible path of ``fn()`` under ``assumptions``.

    ``goal`` returns a z3 Bool, a :class:`Sym` or a Python bool; side conditions
    recorded on the path (division by zero; with ``long_range`` the 64-bit ones) are
    proved too. A path on which ``fn`` raised is a violation. ``render(model, result)``
    turns a counterexample model into named concrete values (default: every constant
    of the model).

    >>> n = sym_int("n")
    >>> prove_paths(lambda: n * n, lambda r: r >= 0).status
    'held'
    """
    t0 = time.perf_counter()
    ex = PathExplorer(
        assumptions,
        distinct=distinct,
        free=free,
        long_range=long_range,
        max_paths=max_paths,
        deadline=deadline,
    )

    def cex(m: z3.ModelRef, result: Any) -> dict[str, Any]:
        if render is not None:
            return render(m, result)
        return {str(d): model_value(m, d()) for d in sorted(m.decls(), key=str) if d.arity() == 0}

    try:
        for path in ex.explore(fn):
            if path.error is not None:
                m = ex.find(z3.BoolVal(True))
                assert m is not None
                return ProofOutcome(
                    "violated",
                    time.perf_counter() - t0,
                    ex.paths,
                    cex(m, None),
                    f"the function raised {type(path.error).__name__}: {path.error}",
                )
            for label, sc in path.side_conditions:
                m = ex.find(z3.Not(sc))
                if m is not None:
                    return ProofOutcome(
                        "violated", time.perf_counter() - t0, ex.paths, cex(m, path.result), label
                    )
            _ACTIVE.append(ex)  # the goal may branch (e.g. ``in``): decided on this path
            try:
                g = goal(path.result)
            finally:
                _ACTIVE.pop()
            g = ex.simplify_on_path(z(g) if not isinstance(g, bool) else z3.BoolVal(g))
            if z3.is_true(g):
                continue
            # conjunct by conjunct: smaller queries, and the message names the failing part
            for part in g.children() if z3.is_and(g) else [g]:
                m = ex.find(z3.Not(part))
                if m is not None:
                    return ProofOutcome(
                        "violated",
                        time.perf_counter() - t0,
                        ex.paths,
                        cex(m, path.result),
                        f"the contract does not hold: {_short(part)}",
                    )
    except BudgetExceeded as exc:
        return ProofOutcome("unknown", time.perf_counter() - t0, ex.paths, None, str(exc))
    return ProofOutcome(
        "held", time.perf_counter() - t0, ex.paths, details={"solver_checks": ex.solver_checks}
    )


@dataclass(frozen=True)
class Obligation:
    """A named proof: ``run(deadline)`` returns a :class:`ProofOutcome`.

    ``doc`` is one line naming the guarantee and the seed; ``bounds`` says for which
    inputs it is proved.

    >>> ob = Obligation("trivial", "1 + 1 is 2", "none", lambda d: ProofOutcome("held"))
    >>> ob.run(None).status
    'held'
    """

    name: str
    doc: str
    bounds: str
    run: Callable[[float | None], ProofOutcome]
    #: a refutation is expected (a mutant shown to fail); it then counts as evidence
    expect_violation: bool = False


def list_targets() -> dict[str, Callable[..., list[Obligation]]]:
    """Every proof target of :data:`PROOF_MODULES`: name -> obligations factory.

    >>> sorted(list_targets())[:2]
    ['controller-election', 'election-rules']
    """
    out: dict[str, Callable[..., list[Obligation]]] = {}
    for mod in PROOF_MODULES:
        out.update(importlib.import_module(mod).PROOF_TARGETS)
    return out


def _resolve(target: str) -> Callable[..., list[Obligation]]:
    if ":" in target:
        mod, _, name = target.partition(":")
        factory: Callable[..., list[Obligation]] = getattr(importlib.import_module(mod), name)
        return factory
    targets = list_targets()
    if target not in targets:
        raise ValueError(f"unknown proof target {target!r} (known: {', '.join(sorted(targets))})")
    return targets[target]


def _fingerprint(state: Any) -> str:
    data = json.dumps(state, sort_keys=True, default=repr).encode()
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def check_symbolic(
    target: str,
    *,
    config: dict[str, Any] | None = None,
    timeout_s: float | None = 600.0,
    only: Iterable[str] | None = None,
) -> CheckResult:
    """Run the proof obligations of ``target`` and return the shared CheckResult.

    Each obligation runs in a z3 context of its own (:func:`fresh_z3_context`) and is a
    property (kind ``proof``) with status ``held``, ``violated`` or ``unknown``
    (budget), its seconds, paths and bounds. A refutation is a
    :class:`~explorer.core.Violation` whose trace is one step: the counterexample's
    concrete values. ``target`` is a name of :func:`list_targets` or
    ``package.module:factory``; ``config`` is passed to the factory (its bound keys);
    ``only`` picks obligations by name.

    >>> r = check_symbolic("timing-wheel", only=["overflow_wheel_parameters"])
    >>> r.engine, r.exit_reason.value, r.properties["overflow_wheel_parameters"]["status"]
    ('symbolic', 'complete', 'held')
    """
    factory = _resolve(target)
    cfg = dict(config or {})
    obligations = factory(**cfg)
    if only is not None:
        wanted = set(only)
        obligations = [o for o in obligations if o.name in wanted]
    t0 = time.perf_counter()
    deadline = None if timeout_s is None else t0 + timeout_s
    props: dict[str, dict[str, Any]] = {}
    violations: list[Violation] = []
    notes: list[str] = []
    total_paths = 0
    reason = ExitReason.COMPLETE
    for ob in obligations:
        if deadline is not None and time.perf_counter() > deadline:
            props[ob.name] = {"kind": "proof", "doc": ob.doc, "status": "unknown", "bounds": ob.bounds}
            reason = ExitReason.BUDGET_EXHAUSTED
            continue
        with fresh_z3_context():  # the outcome must not depend on the obligations run before
            out = ob.run(deadline)
        total_paths += out.paths
        entry: dict[str, Any] = {
            "kind": "proof",
            "doc": ob.doc,
            "status": out.status,
            "seconds": round(out.seconds, 3),
            "paths": out.paths,
            "bounds": ob.bounds,
        }
        if out.details:
            entry["details"] = out.details
        if out.message:
            entry["message"] = out.message
        if ob.expect_violation:
            entry["expect_violation"] = True
        props[ob.name] = entry
        notes.append(f"{ob.name}: {out.status} in {out.seconds:.2f} s ({out.paths} paths; {ob.bounds})")
        if out.status == "unknown":
            reason = ExitReason.BUDGET_EXHAUSTED
        if out.status == "violated" and not ob.expect_violation:
            state = out.counterexample or {}
            step = TraceStep(0, None, None, _fingerprint(state), state, [])
            msg = out.message + ("\n" + render_counterexample(state) if state else "")
            violations.append(Violation(ob.name, "proof", ob.doc, msg, 0, [step]))
        if out.status == "held" and ob.expect_violation:
            notes.append(f"{ob.name}: the mutant was expected to be refuted but held")
    if violations:
        reason = ExitReason.VIOLATION
    seconds = time.perf_counter() - t0
    return CheckResult(
        model=target,
        config=cfg,
        engine="symbolic",
        exit_reason=reason,
        distinct_states=0,
        generated_states=total_paths,
        max_depth=0,
        seconds=seconds,
        states_per_second=0.0,
        violations=violations,
        properties=props,
        notes=notes,
    )
