"""The one-off re-keying of issue 54's item 4: an equivalent-mutant table keyed the old way
(``file::Class.method:+offset:col:operator``, lines below the ``def``, or ``file:line:col:operator``)
rewritten with :attr:`explorer.mutation.source.SourceMutant.key` (``file::Anchor@path:operator``,
the mutated node's place in its function's syntax tree), every reason kept::

    python3 -m benchmarks.rekey_equivalent invariants/mutants/controller_equivalent.toml --rev HEAD

The old keys are read on the source at ``--rev`` (the commit the table was written for; the
working tree's files when ``--rev`` is empty): each must name exactly one mutant there, and its
new key must name that mutant back, or nothing is written. The ``[unreached]`` table is keyed by
``file::Class.function`` alone (no line: :func:`explorer.mutation.line_coverage.statement_functions`), so it needs no re-keying: each of its functions is only
checked to exist (on the working tree). The old scheme's reader, :func:`legacy_anchored_id`, stays here for the test
that shows it would not survive a moved function body (tests/test_mutant_keys.py).
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tomllib
from pathlib import Path

from explorer.mutation.line_coverage import unreached_keys_missing
from explorer.mutation.source import SourceMutant, generate

ROOT = Path(__file__).resolve().parents[1]


def function_spans(source: str) -> dict[str, tuple[int, int]]:
    """The old scheme's anchors: every function's qualified name -> its ``def`` line and last line.

    >>> function_spans("class A:\\n    def f(self):\\n        return 2\\n\\ndef g():\\n    pass\\n")
    {'A.f': (2, 3), 'g': (5, 6)}
    """
    out: dict[str, tuple[int, int]] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{name}.{child.name}" if name else child.name
                if not isinstance(child, ast.ClassDef):
                    out[qual] = (child.lineno, child.end_lineno or child.lineno)
                visit(child, qual)

    visit(ast.parse(source), "")
    return out


def legacy_anchored_id(m: SourceMutant, spans: dict[str, tuple[int, int]]) -> str:
    """The key the table used before issue 54: ``file::Class.method:+offset:col:operator``
    (offset: lines below the innermost function's ``def``), the plain id outside functions.

    >>> src = "def f(a):\\n    return a < 2\\n"
    >>> legacy_anchored_id(generate("m.py", src)[0], function_spans(src))
    'm.py::f:+1:11:lt-le'
    """
    inside = [(lo, q) for q, (lo, hi) in spans.items() if lo <= m.line <= hi]
    if not inside:
        return m.id
    lo, qual = max(inside)
    return f"{m.file}::{qual}:+{m.line - lo}:{m.col}:{m.operator}"


def legacy_id(key: str, source: str) -> str:
    """The plain id an old-scheme key names in ``source`` (a plain id is returned as it is).

    >>> legacy_id("m.py::f:+1:11:lt-le", "X = 1\\ndef f(a):\\n    return a < 2\\n")
    'm.py:3:11:lt-le'
    """
    rel, sep, rest = key.partition("::")
    qual, _, pos = rest.partition(":+")
    if not sep or not pos:
        return key
    spans = function_spans(source)
    if qual not in spans:
        raise ValueError(f"{key}: no function {qual} in {rel}")
    offset, _, col_op = pos.partition(":")
    return f"{rel}:{spans[qual][0] + int(offset)}:{col_op}"


def _source(rel: str, rev: str) -> str:
    if not rev:
        return (ROOT / rel).read_text(encoding="utf-8")
    return subprocess.run(
        ["git", "show", f"{rev}:{rel}"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def rekey(table: dict[str, str], rev: str) -> dict[str, str]:
    """Old key -> new key for every source-mutant key of an ``[equivalent]`` table (catalogue
    names are left out); a key naming no mutant, or several, is an error."""
    out: dict[str, str] = {}
    mutants: dict[str, list[SourceMutant]] = {}
    for key in table:
        if "/" not in key:  # a catalogue mutant's name
            continue
        rel = key.split(":")[0]
        if rel not in mutants:
            mutants[rel] = generate(rel, _source(rel, rev))
        plain = legacy_id(key, _source(rel, rev))
        found = [m for m in mutants[rel] if m.id == plain]
        if len(found) != 1:
            raise ValueError(f"{key}: names {len(found)} mutants of {rel} at {rev or 'the working tree'}")
        back = [m for m in mutants[rel] if m.key == found[0].key]
        if back != found:
            raise ValueError(f"{key}: its new key {found[0].key} names {len(back)} mutants")
        out[key] = found[0].key
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", type=Path)
    ap.add_argument(
        "--rev", default="HEAD", help="the commit whose source the old keys name ('' = working tree)"
    )
    args = ap.parse_args(argv)
    text = args.table.read_text(encoding="utf-8")
    doc = tomllib.loads(text)
    new = rekey(doc.get("equivalent", {}), args.rev)
    missing = unreached_keys_missing(doc.get("unreached", {}), ROOT)
    if missing:
        print(f"[unreached] {missing[0]}: no such function or class", file=sys.stderr)
        return 1
    for old, key in new.items():
        quoted = f'"{old}" = '
        if text.count(quoted) != 1:
            raise ValueError(f"{old}: not found once in {args.table}")
        text = text.replace(quoted, f'"{key}" = ')
    if tomllib.loads(text)["equivalent"] != {new.get(k, k): v for k, v in doc["equivalent"].items()}:
        raise ValueError("the rewritten table's reasons differ")
    args.table.write_text(text, encoding="utf-8")
    print(f"{len(new)} keys re-keyed, {len(doc.get('unreached', {}))} [unreached] functions found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
