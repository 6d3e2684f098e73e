"""Which lines of a model each suite entry executes, and what follows for a source mutant.

``kafka-mc mutate`` runs each entry of its suite once, unmutated, under line tracing
(:class:`LineTracer`, coverage.py's C tracer: about twice the entry's time, once per
measure). A source mutant then runs only against the entries that execute the statement it
changes (:func:`entries_reaching`), and one that no entry reaches is *not covered* at once,
as mutmut and cosmic-ray report it: it cannot be killed by these entries.

Why this is sound: the model is deterministic, so until the mutated statement first runs, a
mutant's run is the unmutated run step for step; an entry whose unmutated run never executes
any line of that statement (its header, for a compound statement) gives the same result on
the mutant. Statements that run when a module is imported (module and class bodies, a
function's decorators and defaults) are counted as reached by every entry, since which entry
first imported the module says nothing about which ones use what it defined. A function body
that runs at import (``__init_subclass__``, a decorator's) cannot be told apart so, so
``kafka-mc mutate`` traces each entry in a process of its own, where the import is its own.

Example
-------
>>> src = "X = 1\\n\\ndef f(a):\\n    if a > 1:\\n        return a\\n    return 0\\n"
>>> statement_lines(src, 4, 7), statement_lines(src, 5, 15), statement_lines(src, 1, 4)
((4,), (5,), None)
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import sys
from collections.abc import Iterable, Sequence
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any, TypeVar

E = TypeVar("E")

__all__ = [
    "LineTracer",
    "compiled_sources",
    "entries_for_mutant",
    "entries_reaching",
    "model_coverage",
    "statement_functions",
    "statement_lines",
    "unreached_keys_missing",
]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class LineTracer:
    """Line tracing of the files under ``root`` matching ``include`` (project-relative globs),
    one context per entry: ``start()``, then ``entry(name)`` before each entry, then
    ``lines()``: ``{entry: {file: [line, ...]}}`` (project-relative files)."""

    def __init__(self, root: Path, include: Sequence[str]) -> None:
        import coverage

        self.root = root.resolve()
        self._include = tuple(include)
        self._cov = coverage.Coverage(
            data_file=None, include=[str(self.root / g) for g in include], branch=False, config_file=False
        )

    def start(self) -> None:
        """Trace from now on (before the model is imported, so its import runs traced too)."""
        self._cov.start()

    def entry(self, name: str) -> None:
        """The lines executed from now on are ``name``'s."""
        self._cov.switch_context(name)

    def lines(self) -> dict[str, dict[str, list[int]]]:
        """Stop tracing; the executed lines per entry and file."""
        self._cov.stop()
        data = self._cov.get_data()
        out: dict[str, dict[str, list[int]]] = {}
        for path in data.measured_files():
            try:
                rel = Path(path).resolve().relative_to(self.root).as_posix()
            except ValueError:
                continue
            for line, contexts in (data.contexts_by_lineno(path) or {}).items():
                for ctx in contexts:
                    out.setdefault(ctx, {}).setdefault(rel, []).append(line)
        for files in out.values():
            for rel in files:
                files[rel].sort()
        if compiled := compiled_sources(self.root, self._include):
            raise RuntimeError(
                f"line tracing sees no line of compiled code, and {compiled[0]} ran from its mypyc build: "
                "trace the pure-Python model (KAFKA_MC_PURE_MODEL=1, explorer/native.py)"
            )
        return out


def compiled_sources(root: Path, include: Sequence[str]) -> list[str]:
    """The project-relative ``.py`` files matching ``include`` whose module this process loaded
    from an extension module (a mypyc build, issue 56) instead: their lines are never traced.

    >>> import tempfile
    >>> compiled_sources(Path(tempfile.mkdtemp()), ["*.py"])  # nothing of that tree is loaded
    []
    """
    out: list[str] = []
    for mod in list(sys.modules.values()):
        file = getattr(mod, "__file__", None)
        if not file or not file.endswith(tuple(EXTENSION_SUFFIXES)):
            continue
        name = getattr(mod, "__name__", "")
        source = Path(file).parent / (name.rpartition(".")[2] + ".py")
        try:
            rel = source.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
        if source.exists() and any(fnmatch.fnmatchcase(rel, g) for g in include):
            out.append(rel)
    return sorted(out)


@functools.cache
def _parsed(source: str) -> ast.Module:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child._kmc_parent = node  # type: ignore[attr-defined]
    return tree


def _inside_function_body(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` runs when a function is called (not when its module is imported)."""
    node: Any = stmt
    while True:
        parent = getattr(node, "_kmc_parent", None)
        if parent is None:
            return False
        if isinstance(parent, _FUNCTIONS) and node in getattr(parent, "body", ()):
            return True
        if isinstance(parent, ast.Lambda) and node is parent.body:
            return True
        node = parent


def statement_lines(source: str, line: int, col: int) -> tuple[int, ...] | None:
    """The lines of the innermost statement holding the node at ``line``:``col`` (only its
    header for a compound statement: the lines before its body), or None when that statement
    runs at import (every entry reaches it)."""
    best: ast.stmt | None = None
    for node in ast.walk(_parsed(source)):
        if not isinstance(node, ast.stmt) or node.end_lineno is None or node.end_col_offset is None:
            continue
        holds = (node.lineno, node.col_offset) <= (line, col) <= (node.end_lineno, node.end_col_offset)
        if holds and (best is None or (node.lineno, node.col_offset) >= (best.lineno, best.col_offset)):
            best = node  # statements nest: the holder that starts last is the innermost
    if best is None or not _inside_function_body(best):
        return None
    body = getattr(best, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        last = max(best.lineno, body[0].lineno - 1)
        return tuple(range(best.lineno, last + 1))
    return tuple(range(best.lineno, (best.end_lineno or best.lineno) + 1))


def entries_reaching(
    lines: dict[str, dict[str, list[int]]],
    entries: Iterable[str],
    file: str,
    source: str,
    line: int,
    col: int,
) -> list[str]:
    """The entries (in the order given) whose unmutated run executes the statement a mutant at
    ``file``:``line``:``col`` changes; every entry for a statement run at import.

    >>> src = "def f(a):\\n    return a + 1\\n"
    >>> entries_reaching({"e1": {"m.py": [1, 2]}, "e2": {"m.py": [1]}}, ["e1", "e2"], "m.py", src, 2, 11)
    ['e1']
    """
    span = statement_lines(source, line, col)
    names = list(entries)
    if span is None:
        return names
    want = set(span)
    return [e for e in names if want & set(lines.get(e, {}).get(file, ()))]


def entries_for_mutant(src: Any, entries: list[E], lines: dict[str, Any] | None, root: Path) -> list[E]:
    """The entries (each with a ``name``) a mutant runs against: for a source mutant (``src``,
    with ``file``, ``line`` and ``col`` relative to ``root``), when the entries' ``lines`` are
    known, those that execute the statement it changes, and those traced only in part; else all.
    """
    if src is None or lines is None:
        return entries
    source = (root / src.file).read_text(encoding="utf-8")
    names = [e.name for e in entries]  # type: ignore[attr-defined]
    reach = entries_reaching(lines["by_entry"], names, src.file, source, src.line, src.col)
    keep = set(reach) | set(lines.get("partial", ()))
    return [e for e in entries if e.name in keep]  # type: ignore[attr-defined]


def model_coverage(
    lines: dict[str, dict[str, list[int]]],
    root: Path,
    files: Iterable[str],
    why: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Statement coverage of ``files`` by all entries together: per file the statements (by
    their first line), how many ran, and the first lines of those that never did. A statement
    ran when any line of it (of its header, for a compound one) was executed.

    With ``why`` (``"file::Class.function"`` -> the reason no entry executes it, a catalogue's
    ``[unreached]`` table), each file also lists its missed statements by the function holding
    them (:func:`statement_functions`), with the reason when the catalogue gives one, and the
    totals count the missed statements ``explained``.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "m.py").write_text("def f():\\n    return 1\\n")
    >>> model_coverage({"e": {"m.py": [1]}}, d, ["m.py"])["files"]["m.py"]
    {'statements': 2, 'executed': 1, 'missed': [2]}
    >>> cov = model_coverage({"e": {"m.py": [1]}}, d, ["m.py"], {"m.py::f": "never called"})
    >>> cov["files"]["m.py"]["functions"], cov["explained"]
    ({'f': {'lines': [2], 'why': 'never called'}}, 1)
    """
    per: dict[str, Any] = {}
    total = hit = explained = 0
    for rel in files:
        source = (root / rel).read_text(encoding="utf-8")
        spans = _statements(source)
        ran_lines = {n for e in lines.values() for n in e.get(rel, ())}
        missed = sorted(first for first, span in spans.items() if not ran_lines & span)
        per[rel] = {"statements": len(spans), "executed": len(spans) - len(missed), "missed": missed}
        total += len(spans)
        hit += len(spans) - len(missed)
        if why is not None and missed:
            where = statement_functions(source)
            functions: dict[str, Any] = {}
            for n in missed:
                f = functions.setdefault(where.get(n, "<module>"), {"lines": [], "why": None})
                f["lines"].append(n)
            for name, f in functions.items():
                f["why"] = why.get(f"{rel}::{name}")
                explained += len(f["lines"]) if f["why"] else 0
            per[rel]["functions"] = functions
    return {
        "statements": total,
        "executed": hit,
        "fraction": round(hit / total, 4) if total else None,
        "files": per,
        **({"explained": explained} if why is not None else {}),
    }


def statement_functions(source: str) -> dict[int, str]:
    """The qualified name (``Class.method``) of the innermost function or class around each
    statement, by the statement's first line; module-level statements are absent.

    >>> statement_functions("X = 1\\nclass A:\\n    def f(self):\\n        return 2\\n")
    {2: 'A', 3: 'A', 4: 'A.f'}
    """
    out: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = name
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{name}.{child.name}" if name else child.name
                out[child.lineno] = name or inner
            elif isinstance(child, ast.stmt) and name:
                out.setdefault(child.lineno, name)
            visit(child, inner)

    visit(_parsed(source), "")
    return out


def unreached_keys_missing(why: dict[str, str], root: Path) -> list[str]:
    """The keys of an ``[unreached]`` table that name no function of the code as it is (a file
    gone, or no function of that qualified name in it).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "m.py").write_text("def f():\\n    return 1\\n")
    >>> unreached_keys_missing({"m.py::f": "a", "m.py::g": "b", "n.py::f": "c"}, d)
    ['m.py::g', 'n.py::f']
    """
    names: dict[str, set[str]] = {}
    bad = []
    for key in why:
        rel, _, qual = key.partition("::")
        if rel not in names:
            path = root / rel
            found = statement_functions(path.read_text(encoding="utf-8")).values() if path.is_file() else ()
            names[rel] = {*found, "<module>"} if path.is_file() else set()
        if qual not in names[rel]:
            bad.append(key)
    return bad


def _statements(source: str) -> dict[int, set[int]]:
    """Every statement but a docstring, by its first line: the lines a tracer may report for
    it (its header, for a compound statement)."""
    out: dict[int, set[int]] = {}
    for node in ast.walk(_parsed(source)):
        if not isinstance(node, ast.stmt):
            continue
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            continue  # a docstring
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = max(node.lineno, body[0].lineno - 1)
        else:
            last = node.end_lineno or node.lineno
        out.setdefault(node.lineno, set()).update(range(node.lineno, last + 1))
    return out
