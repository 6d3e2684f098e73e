"""Source mutants: small syntactic changes to a model's Python source, generated from its AST.

Each :class:`SourceMutant` changes one place of one file and has two names: its id
``file:line:col:operator`` (the file relative to the project root, the node's 1-based line
and 0-based column), which says where it is in the code a run measured, and its key
``file::Anchor@path:operator`` (the innermost enclosing function, class or named assignment by
qualified name, and the path of fields and indexes from it to the node), which an edit outside
that function leaves as it is: moving the function, lines added above it, comments, docstrings,
reformatting. Tables that must outlive edits (the equivalent mutants) are keyed by it. The
operators:

========== ============================================================================
operator   change
========== ============================================================================
``lt-le``  a comparison operator swapped (``<``/``<=``, ``>``/``>=``, ``==``/``!=``;
           named ``<from>-<to>``, with ``#k`` for the k-th operator of a chain)
``and-or`` a boolean ``and`` made ``or`` (``or-and`` the reverse)
``drop``   an assignment or expression statement of a function body replaced by ``pass``
           (docstrings are kept)
``not-if`` an ``if`` (or ``elif``) condition negated
``int+1``  a small integer constant (0..8) plus one; ``int-1`` minus one
``ret-flip`` ``return True`` made ``return False`` and the reverse
``and-drop`` one operand of an ``and`` (``or-drop``: of an ``or``) removed, ``#k`` the k-th: a
           condition left out of a chain
``swap-args`` two neighbouring positional arguments of a call swapped (``#i``: arguments i
           and i+1), where both are plain names or attributes and neither a role
           (``self``, ``c``, ``cfg``, a state: :data:`ROLE_NAMES`), so likely of one type
========== ============================================================================

Generation is deterministic: the same source gives the same mutants in the same order
(by file, line, column, operator). :func:`apply_mutant` rewrites only the mutated node's
text (UTF-8 byte offsets from the AST), so the rest of the file stays as written. Nodes
inside f-strings are left alone (their positions are unreliable before Python 3.12).

>>> src = "def f(x):\\n    return x < 2\\n"
>>> [m.operator for m in generate("m.py", src)]
['lt-le', 'int+1', 'int-1']
>>> print(apply_mutant(src, generate("m.py", src)[0]), end="")
def f(x):
    return (x <= 2)
"""

from __future__ import annotations

import ast
import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "OPERATORS",
    "SourceMutant",
    "apply_mutant",
    "generate",
    "generate_files",
    "is_key",
    "resolve_keys",
    "sample",
]

_CMP = {
    ast.Lt: (ast.LtE, "lt", "le"),
    ast.LtE: (ast.Lt, "le", "lt"),
    ast.Gt: (ast.GtE, "gt", "ge"),
    ast.GtE: (ast.Gt, "ge", "gt"),
    ast.Eq: (ast.NotEq, "eq", "ne"),
    ast.NotEq: (ast.Eq, "ne", "eq"),
}
#: the operator families (an id's operator starts with one of these)
OPERATORS = (
    "cmp",
    "and-or",
    "or-and",
    "drop",
    "not-if",
    "int+1",
    "int-1",
    "ret-flip",
    "and-drop",
    "or-drop",
    "swap-args",
)
#: integer constants mutated by plus/minus one
SMALL_INTS = range(0, 9)


@dataclass(frozen=True)
class SourceMutant:
    """One change at one node: the file (relative path), the node's position, the operator,
    a one-line description of the change, and the node's place in the file's syntax tree
    (``Anchor@path``: :func:`_locations`)."""

    file: str
    line: int
    col: int
    operator: str
    description: str
    place: str = ""

    @property
    def id(self) -> str:
        """``file:line:col:operator``, stable while the file's text above the node is."""
        return f"{self.file}:{self.line}:{self.col}:{self.operator}"

    @property
    def key(self) -> str:
        """``file::Anchor@path:operator``, stable while the anchor's own syntax tree is: the
        innermost function, class or named module/class-level assignment holding the node
        (qualified name) and the fields and list indexes leading from it to the node.

        >>> [m.key for m in generate("m.py", "def f(x):\\n    return x < 2\\n")]
        ['m.py::f@body[0].value:lt-le', 'm.py::f@body[0].value.comparators[0]:int+1', 'm.py::f@body[0].value.comparators[0]:int-1']
        """
        return f"{self.file}::{self.place}:{self.operator}"


def _in_fstring(tree: ast.AST) -> set[int]:
    """The ids of every node inside an f-string."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out |= {id(n) for n in ast.walk(node)}
    return out


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _function_statements(tree: ast.AST) -> Iterable[ast.stmt]:
    """Assignments and expression statements anywhere inside a function body (not docstrings)."""
    seen: set[int] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if id(node) in seen or node is fn:
                continue
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
                if isinstance(node, ast.AnnAssign) and node.value is None:
                    continue
                if _is_docstring(node):
                    continue
                seen.add(id(node))
                yield node


def _mutants_of(file: str, tree: ast.AST) -> list[SourceMutant]:
    skip = _in_fstring(tree)
    places = _locations(tree)
    out: list[SourceMutant] = []

    def add(node: ast.AST, op: str, desc: str) -> None:
        line, col = node.lineno, node.col_offset  # type: ignore[attr-defined]
        out.append(SourceMutant(file, line, col, op, desc, places[id(node)]))

    # annotations are never evaluated by the models: leave their constants alone
    for node in ast.walk(tree):
        for ann in _annotations(node):
            skip |= {id(n) for n in ast.walk(ann)}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Compare):
            for k, cmp in enumerate(node.ops):
                if type(cmp) in _CMP:
                    _, a, b = _CMP[type(cmp)]
                    suffix = f"#{k}" if len(node.ops) > 1 else ""
                    add(node, f"{a}-{b}{suffix}", f"comparison {a} made {b}")
        elif isinstance(node, ast.BoolOp):
            word = "and" if isinstance(node.op, ast.And) else "or"
            add(
                node,
                "and-or" if word == "and" else "or-and",
                f"`{word}` made `{'or' if word == 'and' else 'and'}`",
            )
            for j in range(len(node.values)):
                add(node, f"{word}-drop#{j}", f"operand {j + 1} of an `{word}` removed")
        elif isinstance(node, ast.Call):
            for i in range(len(node.args) - 1):
                x, y = node.args[i], node.args[i + 1]
                if _swappable(x) and _swappable(y) and ast.dump(x) != ast.dump(y):
                    add(node, f"swap-args#{i}", f"arguments {i + 1} and {i + 2} swapped")
        elif isinstance(node, ast.If):
            add(node.test, "not-if", "`if` condition negated")
        elif isinstance(node, ast.Return):
            v = node.value
            if isinstance(v, ast.Constant) and isinstance(v.value, bool):
                add(v, "ret-flip", f"`return {v.value}` made `return {not v.value}`")
        elif isinstance(node, ast.Constant) and type(node.value) is int and node.value in SMALL_INTS:
            add(node, "int+1", f"constant {node.value} made {node.value + 1}")
            add(node, "int-1", f"constant {node.value} made {node.value - 1}")
    for stmt in _function_statements(tree):
        if id(stmt) not in skip:
            add(stmt, "drop", f"statement dropped ({type(stmt).__name__})")
    return out


#: names that stand for a role, not a value (the component, the controller of the step, the
#: configuration, a state): swapping one with a value is a type error, not a plausible slip
ROLE_NAMES = frozenset({"self", "cls", "c", "cfg", "config", "ctx", "system", "sys", "s", "t", "state"})


def _swappable(e: ast.expr) -> bool:
    """An argument a ``swap-args`` mutant may move: a plain name or attribute that is no role.

    >>> _swappable(ast.parse("a.b", mode="eval").body), _swappable(ast.parse("c", mode="eval").body)
    (True, False)
    """
    if isinstance(e, ast.Name):
        return e.id not in ROLE_NAMES
    return isinstance(e, ast.Attribute) and e.attr not in ROLE_NAMES


def _annotations(node: ast.AST) -> list[ast.expr]:
    out: list[ast.expr] = []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if node.returns is not None:
            out.append(node.returns)
        a = node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
            if arg is not None and arg.annotation is not None:
                out.append(arg.annotation)
    elif isinstance(node, ast.AnnAssign):
        out.append(node.annotation)
    return out


def generate(file: str, source: str) -> list[SourceMutant]:
    """Every mutant of one file's source, sorted by (line, column, operator).

    >>> [(m.line, m.operator) for m in generate("x.py", "def f(a, b):\\n    y = a and b\\n    return True\\n")]
    [(2, 'drop'), (2, 'and-drop#0'), (2, 'and-drop#1'), (2, 'and-or'), (3, 'ret-flip')]
    """
    tree = ast.parse(source, file)
    # one mutant per id: of two nodes at one position (``f(a, b).g(c, d)``'s calls) the first
    # met, the one apply_mutant changes
    muts = {m.id: m for m in reversed(_mutants_of(file, tree))}
    return sorted(muts.values(), key=lambda m: (m.line, m.col, m.operator))


def generate_files(root: Path, files: Sequence[Path]) -> list[SourceMutant]:
    """Every mutant of the files (paths under ``root``; ids name them relative to it), in file order."""
    out: list[SourceMutant] = []
    for f in sorted(files):
        rel = f.resolve().relative_to(root.resolve()).as_posix()
        out += generate(rel, f.read_text(encoding="utf-8"))
    return out


def _anchor_name(child: ast.AST, parent: ast.AST, field: str) -> str | None:
    """The name ``child`` anchors keys at, or None: a function's or class's name; for any other
    statement of a module's or class's body, the names it assigns (``X = ...``, ``X: T = ...``,
    ``A, B = ...``: ``A,B``), else ``<Kind:digest>`` (its kind and a digest of its syntax tree,
    which no line or column enters), so that no key depends on what lies above it there.

    >>> body = ast.parse("A, B = 1, 2\\nif A:\\n    pass\\n").body
    >>> [_anchor_name(s, ast.Module(), "body") for s in body]
    ['A,B', '<If:bf345026>']
    """
    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return child.name
    if field != "body" or not isinstance(parent, (ast.Module, ast.ClassDef)):
        return None
    targets: list[ast.expr] = []
    if isinstance(child, ast.Assign):
        targets = list(child.targets)
    elif isinstance(child, ast.AnnAssign):
        targets = [child.target]
    names: list[str] = []
    for t in targets:
        for e in t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]:
            names.append(e.id if isinstance(e, ast.Name) else "")
    if names and all(names):
        return ",".join(names)
    digest = hashlib.sha1(ast.dump(child).encode("utf-8")).hexdigest()[:8]
    return f"<{type(child).__name__}:{digest}>"


def _locations(tree: ast.AST) -> dict[int, str]:
    """Every node's place, ``Anchor@path``, by ``id(node)``: the anchor is the innermost
    function, class or statement of a module's or class's body holding the node
    (:func:`_anchor_name`), by qualified name (``Class.method``; a name met again in the file
    gets ``#2``, ``#3``, ...), and the path the fields and list indexes that lead from the
    anchor's node to it. Lines, columns and whatever lies outside the anchor play no part.

    >>> tree = ast.parse("class A:\\n    N = 3\\n    def f(self):\\n        return self.x < 2\\n")
    >>> sorted(v for v in _locations(tree).values() if "@body" in v or "@value" in v)[:3]
    ['A.N@value', 'A.f@body[0]', 'A.f@body[0].value']
    """
    out: dict[int, str] = {}
    seen: dict[str, int] = {}

    def visit(node: ast.AST, anchor: str, path: tuple[str, ...], scope: str) -> None:
        out[id(node)] = f"{anchor}@{'.'.join(path)}"
        for field, value in ast.iter_fields(node):
            items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
            for i, child in items:
                if not isinstance(child, ast.AST):
                    continue
                name = _anchor_name(child, node, field)
                if name is None:
                    visit(child, anchor, (*path, field if i is None else f"{field}[{i}]"), scope)
                    continue
                qual = f"{scope}.{name}" if scope else name
                seen[qual] = seen.get(qual, 0) + 1
                qual += f"#{seen[qual]}" if seen[qual] > 1 else ""
                named_scope = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                visit(child, qual, (), qual if named_scope else scope)

    visit(tree, "<module>", (), "")
    return out


def is_key(name: str) -> bool:
    """Whether ``name`` is a source mutant's :attr:`SourceMutant.key` (not an id or a
    catalogue name).

    >>> is_key("m.py::f@body[0].value:lt-le"), is_key("m.py:2:11:lt-le"), is_key("stuck")
    (True, False, False)
    """
    file, sep, rest = name.partition("::")
    return bool(sep) and "@" in rest and bool(file)


def resolve_keys(keys: dict[str, str], root: Path) -> dict[str, str]:
    """``keys`` (an equivalent-mutant table: mutant -> reason) with every
    :attr:`SourceMutant.key` turned into the :attr:`SourceMutant.id` of the mutant it names in
    the code under ``root`` as it is now; ids and catalogue names are kept as they are, and
    so is a key that names no mutant of today's code (its file, function or node gone), so
    that the table's test reports it as stale.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "m.py").write_text("X = 1\\n\\ndef f(a):\\n    return a < 2\\n")
    >>> resolve_keys({"m.py::f@body[0].value:lt-le": "why", "m.py::g@body[0].value:lt-le": "gone"}, d)
    {'m.py:4:11:lt-le': 'why', 'm.py::g@body[0].value:lt-le': 'gone'}
    """
    by_file: dict[str, dict[str, str]] = {}
    out: dict[str, str] = {}
    for name, why in keys.items():
        if not is_key(name):
            out[name] = why
            continue
        rel = name.partition("::")[0]
        if rel not in by_file:
            path = root / rel
            text = path.read_text(encoding="utf-8") if path.is_file() else ""
            by_file[rel] = {m.key: m.id for m in generate(rel, text)}
        out[by_file[rel].get(name, name)] = why
    return out


def sample(mutants: Sequence[SourceMutant], n: int | None, seed: int) -> list[SourceMutant]:
    """``n`` of the mutants chosen with ``random.Random(seed)`` (all when n is None or larger),
    kept in generation order.

    >>> ms = generate("x.py", "def f(a):\\n    return a < 1 or a > 5\\n")
    >>> sample(ms, 2, 7) == sample(ms, 2, 7), len(sample(ms, 2, 7)), len(sample(ms, None, 0)) == len(ms)
    (True, 2, True)
    """
    if n is None or n >= len(mutants):
        return list(mutants)
    picked = sorted(random.Random(seed).sample(range(len(mutants)), n))
    return [mutants[i] for i in picked]


def _find(tree: ast.AST, m: SourceMutant) -> ast.AST:
    """The node a mutant changes (the statement, test, comparison, bool op or constant)."""
    kinds: tuple[type, ...]
    op = m.operator
    if op == "drop":
        kinds = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)
    elif op in ("and-or", "or-and") or "-drop#" in op:
        kinds = (ast.BoolOp,)
    elif op.startswith("swap-args"):
        kinds = (ast.Call,)
    elif op.startswith("int") or op == "ret-flip":
        kinds = (ast.Constant,)
    elif op == "not-if":
        kinds = (ast.expr,)
    else:
        kinds = (ast.Compare,)
    if op == "not-if":
        cands: list[ast.AST] = [n.test for n in ast.walk(tree) if isinstance(n, ast.If)]
    else:
        cands = [n for n in ast.walk(tree) if isinstance(n, kinds)]
    for n in cands:
        if getattr(n, "lineno", None) == m.line and getattr(n, "col_offset", None) == m.col:
            if op.startswith("int") and type(getattr(n, "value", None)) is not int:
                continue
            if op == "ret-flip" and not isinstance(getattr(n, "value", None), bool):
                continue
            if op in ("and-or", "or-and") and isinstance(getattr(n, "op", None), ast.And) != (op == "and-or"):
                continue
            if "-drop#" in op and isinstance(getattr(n, "op", None), ast.And) != op.startswith("and"):
                continue
            return n
    raise ValueError(f"{m.id}: no such node in the source (has the file changed?)")


def _replacement(node: ast.AST, m: SourceMutant) -> str:
    op = m.operator
    if op == "drop":
        return "pass"
    if op == "not-if":
        return f"(not ({ast.unparse(node)}))"
    if "-drop#" in op:
        assert isinstance(node, ast.BoolOp)
        drop = int(op.partition("#")[2])
        rest = [v for i, v in enumerate(node.values) if i != drop]
        return f"({ast.unparse(rest[0] if len(rest) == 1 else ast.BoolOp(op=node.op, values=rest))})"
    if op.startswith("swap-args"):
        assert isinstance(node, ast.Call)
        at = int(op.partition("#")[2])
        args = list(node.args)
        args[at], args[at + 1] = args[at + 1], args[at]
        return ast.unparse(ast.Call(func=node.func, args=args, keywords=node.keywords))
    if op in ("and-or", "or-and"):
        assert isinstance(node, ast.BoolOp)
        new = ast.BoolOp(op=ast.Or() if op == "and-or" else ast.And(), values=node.values)
        return f"({ast.unparse(new)})"
    if op.startswith("int"):
        assert isinstance(node, ast.Constant) and type(node.value) is int
        value: int = node.value
        return f"({value + (1 if op == 'int+1' else -1)})"
    if op == "ret-flip":
        assert isinstance(node, ast.Constant)
        return str(not node.value)
    assert isinstance(node, ast.Compare)
    k = op.partition("#")[2]
    idx = int(k) if k else 0
    ops = list(node.ops)
    ops[idx] = _CMP[type(ops[idx])][0]()
    return f"({ast.unparse(ast.Compare(left=node.left, ops=ops, comparators=node.comparators))})"


def apply_mutant(source: str, m: SourceMutant) -> str:
    """The source with mutant ``m`` applied: the node's text replaced, everything else kept.

    >>> src = "def f(a):\\n    if a == 1:\\n        a += 1\\n    return a\\n"
    >>> ms = {x.operator: x for x in generate("f.py", src)}
    >>> print(apply_mutant(src, ms["not-if"]).splitlines()[1])
        if (not (a == 1)):
    >>> print(apply_mutant(src, ms["drop"]).splitlines()[2])
            pass
    """
    tree = ast.parse(source)
    node = _find(tree, m)
    data = source.encode("utf-8")
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    a = starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
    b = starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
    out = data[:a] + _replacement(node, m).encode("utf-8") + data[b:]
    text = out.decode("utf-8")
    ast.parse(text)  # the mutant must still be Python
    return text
