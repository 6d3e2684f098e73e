"""Path exploration: :class:`PathExplorer` runs a function over symbolic values again
and again until every feasible path of it has been followed, each a :class:`Path`.

Example
-------
>>> from explorer.symbolic.values import sym_int
>>> x = sym_int("x")
>>> ex = PathExplorer()
>>> [p.result for p in ex.explore(lambda: 1 if x > 0 else 2)]
[1, 2]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from explorer.symbolic.context import LONG_MAX, LONG_MIN, BudgetExceeded, SymbolicError, short_term
from explorer.symbolic.values import ACTIVE

__all__ = ["Path", "PathExplorer"]


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
    >>> from explorer.symbolic.values import sym_int
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
                    f"{short_term(t, 80)} belongs to another z3 context than the current default one "
                    "(made before a fresh_z3_context / isolated proof began?)"
                )
        if len(distinct) > 1:
            self.assumptions.append(z3.Distinct(*distinct))
        self.solver.add(*self.assumptions)
        self._distinct = {t.get_id() for t in distinct}
        self._free = {b.get_id(): b for b in free}
        self._free_objects = {id(b): (b, i) for i, b in self._free.items()}
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
        self._bool_values: tuple[z3.BoolRef, z3.BoolRef] | None = None  # False, True
        self.op_memo: dict[tuple[Any, ...], tuple[Any, Any, Any, Any]] = {}
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

    def replay(self) -> bool | None:
        """The recorded choice when the next decision replays one taken on this path
        (as :meth:`decide` would return it), else None and nothing changes."""
        i = self._pos
        if i >= len(self._frames):
            return None
        self._pos = i + 1
        f = self._frames[i]
        if f.free is not None:
            self._decided_free[f.free] = f.choice != f.free_neg
        return f.choice

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
            self._assert(cond, choice)
        self._frames.append(_Frame(cond, choice, alt, alt_model, push, free, neg))
        if free is not None:
            self._decided_free[free] = choice != neg
        return choice

    def _assert(self, cond: z3.BoolRef, choice: bool) -> None:
        """Add ``cond`` (``choice``) or its negation to the solver's current scope.

        Through the C API for a Bool term: ``Solver.add`` and ``z3.Not`` re-check its sort."""
        s = self.solver
        if not isinstance(cond, z3.BoolRef) or cond.ctx is not s.ctx:
            s.add(cond if choice else z3.Not(cond))
            return
        ref = s.ctx.ref()
        if choice:
            z3.Z3_solver_assert(ref, s.solver, cond.as_ast())
            return
        neg = z3.BoolRef(z3.Z3_mk_not(ref, cond.as_ast()), s.ctx)
        z3.Z3_solver_assert(ref, s.solver, neg.as_ast())

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
        hit = self._free_objects.get(id(b))  # the free constants themselves: no C call
        return self._decided_free.get(hit[1] if hit is not None and hit[0] is b else b.get_id())

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
        # z3.substitute's own sort checks cost more than the substitution: the pairs are
        # free Bool constants and Bool values, so call the C API directly
        ctx = goal.ctx
        tf = self._bool_values
        if tf is None:
            tf = self._bool_values = (z3.BoolVal(False, ctx), z3.BoolVal(True, ctx))
        decided = self._decided_free
        n = len(decided)
        src, dst = (z3.Ast * n)(), (z3.Ast * n)()
        free = self._free
        for k, (i, v) in enumerate(decided.items()):
            src[k] = free[i].as_ast()
            dst[k] = tf[v].as_ast()
        t = z3.z3._to_expr_ref(z3.Z3_substitute(ctx.ref(), goal.as_ast(), n, src, dst), ctx)
        return z3.simplify(t)

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
        self._assert(f.cond, f.choice)
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
        ACTIVE.append(self)
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
                ACTIVE.pop()
                try:
                    yield Path(self.paths - 1, conds, result, error, list(self._side))
                finally:
                    ACTIVE.append(self)
                if not self._backtrack():
                    return
        finally:
            ACTIVE.pop()
