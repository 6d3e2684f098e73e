"""Proofs over paths: :func:`prove_paths` checks a contract on every path of a function;
a :class:`ProofOutcome` says what it found, an :class:`Obligation` names a proof.

Example
-------
>>> from explorer.symbolic.values import sym_int
>>> x = sym_int("x")
>>> prove_paths(lambda: x * x, lambda r: r >= 0).status
'held'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import z3

from explorer.symbolic.context import BudgetExceeded, short_term
from explorer.symbolic.paths import PathExplorer
from explorer.symbolic.values import ACTIVE, Sym, z

__all__ = ["Obligation", "ProofOutcome", "model_value", "prove_paths", "render_counterexample"]


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

    >>> from explorer.symbolic.values import sym_int
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
            ACTIVE.append(ex)  # the goal may branch (e.g. ``in``): decided on this path
            try:
                g = goal(path.result)
            finally:
                ACTIVE.pop()
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
                        f"the contract does not hold: {short_term(part)}",
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
