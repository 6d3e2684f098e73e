"""Source mutants' keys survive a refactor (issue 54, item 4): a mutant's key
(:attr:`explorer.mutation.source.SourceMutant.key`, the enclosing function's qualified name,
the mutated node's path in its syntax tree and the operator) is the same after the function is
moved, lines are added above it and comments inside it, where the keys of before (the line
offset below the ``def``, ``benchmarks/rekey_equivalent.py``'s :func:`legacy_anchored_id`, or
the plain ``file:line:col:operator`` id) name other places. The check runs on a moved copy of
every file the equivalent-mutant table names.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from benchmarks.rekey_equivalent import function_spans, legacy_anchored_id
from explorer.mutation.source import SourceMutant, apply_mutant, generate, is_key, resolve_keys

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "invariants" / "mutants" / "controller_equivalent.toml"
FILES = sorted(
    {k.split(":")[0] for k in tomllib.loads(TABLE.read_text(encoding="utf-8"))["equivalent"] if "/" in k}
)

Scheme = Callable[[SourceMutant, str], str]
_spans = cache(function_spans)
SCHEMES: dict[str, Scheme] = {
    "key": lambda m, src: m.key,
    "line offset below the def (before issue 54)": lambda m, src: legacy_anchored_id(m, _spans(src)),
    "file:line:col": lambda m, src: m.id,
}


def moved(source: str) -> str:
    """``source`` refactored without a change of meaning: a function and blank lines put above
    everything, and a comment line at the head of every function body (before its docstring)."""
    lines = source.splitlines(keepends=True)
    heads = sorted(
        (fn.body[0].lineno, fn.body[0].col_offset)
        for fn in ast.walk(ast.parse(source))
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.body[0].lineno > fn.lineno
    )
    for line, col in reversed(heads):
        lines.insert(line - 1, " " * col + "# a comment added in a refactor\n")
    return "def _added_above(x):\n    return x < 2\n\n\n" + "".join(lines)


@cache
def _both(file: str) -> tuple[str, str, list[SourceMutant], list[SourceMutant]]:
    """A file's source, its moved copy, and the mutants of each (those of the added function left out)."""
    source = (ROOT / file).read_text(encoding="utf-8")
    after = moved(source)
    return (
        source,
        after,
        generate(file, source),
        [m for m in generate(file, after) if "_added_above" not in m.key],
    )


def keys_survive(scheme: Scheme, file: str) -> bool:
    """Whether every mutant of ``file`` has the same name under ``scheme`` in its moved copy."""
    source, after, before_ms, after_ms = _both(file)
    assert len(before_ms) == len(after_ms) > 0
    return [scheme(m, source) for m in before_ms] == [scheme(m, after) for m in after_ms]


def test_the_table_names_files_to_move() -> None:
    assert len(FILES) >= 10 and all((ROOT / f).is_file() for f in FILES)


@pytest.mark.slow  # 1.5 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_only_the_key_survives_a_moved_function_body(scheme: str) -> None:
    survived = {f: keys_survive(SCHEMES[scheme], f) for f in FILES}
    if scheme == "key":
        assert all(survived.values()), [f for f, ok in survived.items() if not ok]
    else:  # the old schemes are shown failing the same check, on every file
        assert not any(survived.values()), [f for f, ok in survived.items() if ok]


def test_a_key_names_the_same_change_in_the_moved_copy(tmp_path: Path) -> None:
    """A key resolved in the moved copy (:func:`resolve_keys`) is the mutant that makes the same
    change there: the mutated line's text is the same."""
    file = "model/controller/broker.py"
    source = (ROOT / file).read_text(encoding="utf-8")
    (tmp_path / "model" / "controller").mkdir(parents=True)
    (tmp_path / file).write_text(moved(source), encoding="utf-8")
    after = {m.id: m for m in generate(file, moved(source))}
    for m in generate(file, source)[::25]:
        there = after[next(iter(resolve_keys({m.key: "why"}, tmp_path)))]
        assert there.id != m.id and there.key == m.key
        changed = apply_mutant(source, m).splitlines()[m.line - 1]
        assert apply_mutant(moved(source), there).splitlines()[there.line - 1] == changed


def test_keys_are_unique_and_name_no_line() -> None:
    source = (ROOT / "model/controller/zookeeper.py").read_text(encoding="utf-8")
    ms = generate("model/controller/zookeeper.py", source)
    assert len({m.key for m in ms}) == len(ms) > 100
    assert all(is_key(m.key) and f":{m.line}:" not in m.key for m in ms)
