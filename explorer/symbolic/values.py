"""Symbolic values: :class:`Sym` (an int or bool whose operators build z3 terms) and
:class:`SymArray`; a branch on one asks the active path explorer which side to take.

Example
-------
>>> x = sym_int("x")
>>> z(x + 1), z(3)
(x + 1, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

import z3

from explorer.symbolic.context import SymbolicError

__all__ = ["ACTIVE", "PathOracle", "Sym", "SymArray", "concrete", "path_value", "sym_bool", "sym_int", "z"]


class PathOracle(Protocol):
    """What symbolic values ask of the :class:`~explorer.symbolic.paths.PathExplorer`
    that is exploring them (the innermost active one)."""

    def decide(self, cond: z3.BoolRef) -> bool:
        """Branch on ``cond`` (take one feasible side, the other later)."""
        ...

    def division(self, a: z3.ExprRef, b: z3.ExprRef) -> tuple[z3.ExprRef, z3.ExprRef]:
        """Fresh quotient and remainder of ``a // b``."""
        ...

    def value_on_path(self, b: z3.ExprRef) -> bool | None:
        """The value ``b`` has on every input of the current path, or None."""
        ...

    def _arith(self, r: z3.ExprRef, op: str) -> None: ...

    #: results of Sym operators during this exploration: see :meth:`Sym._memo`
    op_memo: dict[tuple[Any, ...], tuple[Any, Any, Any, Any]]

    def replay(self) -> bool | None:
        """The recorded choice of the next decision when it replays one (else None: the
        caller then calls :meth:`decide` with the condition)."""
        ...


#: the path explorers currently running a function, innermost last
ACTIVE: list[PathOracle] = []


def _ctx() -> PathOracle:
    if not ACTIVE:
        raise SymbolicError("a symbolic condition was used outside PathExplorer.explore()")
    return ACTIVE[-1]


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

    def _memo(self, o: Any, op: str, build: Callable[[], tuple[Any, Any]]) -> tuple[Any, Any, Any, Any]:
        """``(self, o, result, hook term)`` of ``self op o``, built by ``build()`` (which
        returns the result and the term for the ``_arith`` hook, or None) once per
        exploration.

        A path explorer re-runs the function once per path over the same input objects:
        the terms are built once, and the same Sym objects come back. The table belongs
        to the innermost active explorer (none outside one: then nothing is kept); it
        keeps both operands alive, so their ids are not reused.
        """
        if not ACTIVE:
            return (self, o, *build())
        memo = ACTIVE[-1].op_memo
        key = (id(self), op, id(o)) if isinstance(o, Sym) else (id(self), op, type(o), o)
        hit = memo.get(key)
        if hit is None:
            if len(memo) >= 1_000_000:  # values made on one path only: keep it bounded
                memo.clear()
            hit = memo[key] = (self, o, *build())
            return hit
        if hit[3] is not None:
            ACTIVE[-1]._arith(hit[3], op[0])
        return hit

    def __repr__(self) -> str:
        return f"Sym({self.x})"

    # -- arithmetic ----------------------------------------------------------------------
    def _bin(self, o: Any, op: str, reflected: bool = False) -> Any:
        if not _num(o):
            return NotImplemented
        if op in ("//", "%"):  # fresh quotient/remainder facts belong to the current path
            return self._bin_build(o, op, reflected)

        def build() -> tuple[Any, Any]:
            hooks: list[z3.ExprRef] = []
            r = self._bin_build(o, op, reflected, hooks)
            return r, (hooks[0] if hooks else None)

        return self._memo(o, op + "r" if reflected else op, build)[2]

    def _bin_build(self, o: Any, op: str, reflected: bool, hooks: list[z3.ExprRef] | None = None) -> Any:
        """The result of ``self op o`` (``o`` on the left when ``reflected``); the term
        handed to the ``_arith`` hook, if any, is appended to ``hooks``."""
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
        if op in ("+", "-", "*"):
            if hooks is not None:
                hooks.append(r)
            if ACTIVE:
                ACTIVE[-1]._arith(r, f"{op}")
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
        return self._memo(o, op, lambda: (self._cmp_build(o, op), None))[2]

    def _cmp_build(self, o: Any, op: str) -> Sym:
        """The comparison ``self op o`` as a new term."""
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
        ctx = _ctx()
        choice = ctx.replay()  # a decision already taken on this path: no term needed
        if choice is not None:
            return choice
        x = self.x
        if not z3.is_bool(x):
            x = x != z(0, x)
        return ctx.decide(x)

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
    if not ACTIVE:
        return None
    return ACTIVE[-1].value_on_path(z(b))


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
