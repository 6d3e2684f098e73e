"""The rules a module compiled by mypyc must keep so that the compiled model behaves as its
Python source does (issue 56, docs/mypyc-trial.md), checked on the source (pure Python, cheap).

Compiled code calls what its types name directly, so an interpreted subclass (a seam of
``model/controller/v08.py``, ``bugs/`` or ``faults/``, a mutant of ``invariants/mutants/``, a
test's class) would be silently ignored where it overrides

- a ``staticmethod`` or ``classmethod`` of a compiled class (called without the vtable);
- a class attribute of a compiled class that is not declared ``ClassVar`` (compiled, it is an
  instance attribute whose default the native constructor sets: the subclass's class attribute
  is never read by compiled code);
- a method of a ``@trait`` (called through the class's own vtable);

and it could not subclass a compiled class at all that lacks
``@mypyc_attr(allow_interpreted_subclasses=True)``. Each rule was seen to break (or would
break) the compiled model: the ``fence-less-than`` mutant's static ``epoch_fence_holds``, 0.8's
``dead_removed_late`` and ``skips_topics_queued_up_for_deletion``, ``ElectRules`` tried as a
trait (its mutants' ``next_controller_epoch`` ignored).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.mypyc_compat import trait

ROOT = Path(__file__).resolve().parents[1]

try:  # the build's list (setup.py reads it), when this tree has it
    from explorer.native import COMPILED_MODULES
except ImportError:  # pragma: no cover - the list docs/mypyc-trial.md compiled
    COMPILED_MODULES = tuple(
        f"{m.replace('.', '/')}.py"
        for m in (
            *(
                f"model.controller.{n}"
                for n in [
                    "zookeeper",
                    "network",
                    "base",
                    "effects",
                    "controller",
                    "election_rules",
                    "replica_manager",
                    "system",
                    "broker",
                    "broker_lifecycle",
                    "coverage",
                    "state_machines",
                    "topics",
                    "topic_deletion",
                    "cluster",
                    "admin",
                    "elector",
                ]
            ),
            "model.election",
            "model.leader_selectors",
            "invariants.controller",
            *(
                f"invariants.controller_{n}"
                for n in [
                    "convergence",
                    "failover",
                    "fidelity",
                    "guards",
                    "liveness",
                    "observed",
                    "reassign",
                    "replication",
                    "slices",
                ]
            ),
            *(f"explorer.search.{n}" for n in ("serial", "monitor", "incremental", "results")),
        )
    )

COMPILED = {p[:-3].replace("/", ".") for p in COMPILED_MODULES}
#: the modules whose classes subclass the compiled ones (imported to find them)
SEAM_PACKAGES = ("model.controller", "invariants.mutants", "explorer.engines")


def _decorators(module: str) -> dict[str, set[str]]:
    """Each top-level class of ``module`` -> the names of its decorators (``mypyc_attr`` only
    when it allows interpreted subclasses)."""
    tree = ast.parse((ROOT / f"{module.replace('.', '/')}.py").read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names: set[str] = set()
            for d in node.decorator_list:
                if isinstance(d, ast.Name):
                    names.add(d.id)
                elif (
                    isinstance(d, ast.Call)
                    and isinstance(d.func, ast.Name)
                    and d.func.id == "mypyc_attr"
                    and any(
                        k.arg == "allow_interpreted_subclasses"
                        and isinstance(k.value, ast.Constant)
                        and k.value.value is True
                        for k in d.keywords
                    )
                ):
                    names.add("mypyc_attr")
            out[node.name] = names
    return out


DECORATORS = {m: _decorators(m) for m in sorted(COMPILED)}


def _class_vars(module: str) -> dict[str, set[str]]:
    """Each top-level class of ``module`` -> the names its body declares ``ClassVar`` (read from
    the source: a compiled class keeps no ``__annotations__``)."""
    tree = ast.parse((ROOT / f"{module.replace('.', '/')}.py").read_text(encoding="utf-8"))
    return {
        node.name: {
            stmt.target.id
            for stmt in node.body
            if isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and ast.unparse(stmt.annotation).startswith("ClassVar")
        }
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }


CLASS_VARS = {m: _class_vars(m) for m in sorted(COMPILED)}


def _import_seams() -> None:
    for pkg_name in SEAM_PACKAGES:
        pkg = importlib.import_module(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, pkg_name + "."):
            if "spark" not in info.name:  # pyspark is optional
                importlib.import_module(info.name)


def _compiled_classes() -> Iterator[type]:
    for module in sorted(COMPILED):
        mod = importlib.import_module(module)
        for name in DECORATORS[module]:
            yield getattr(mod, name)


def _is_compiled(cls: type) -> bool:
    return cls.__module__ in COMPILED


def _interpreted_subclasses(cls: type) -> Iterator[type]:
    seen: set[type] = set()
    todo: list[type] = list(cls.__subclasses__())
    while todo:
        sub = todo.pop()
        if sub not in seen:
            seen.add(sub)
            todo += sub.__subclasses__()
            if not _is_compiled(sub) and sub.__module__.split(".")[0] in ("model", "invariants", "explorer"):
                yield sub


def override_problems(sub: type) -> list[str]:
    """What interpreted class ``sub`` overrides that compiled code would not see (see the module
    docstring), and the compiled bases it has that do not allow interpreted subclasses.

    >>> from explorer.mypyc_compat import mypyc_attr
    >>> @mypyc_attr(allow_interpreted_subclasses=True)
    ... class Base:
    ...     flag = True
    ...     @staticmethod
    ...     def rule() -> int:
    ...         return 1
    >>> Base.__module__ = "model.controller.base"  # as if compiled
    >>> class Seam(Base):
    ...     flag = False
    ...     @staticmethod
    ...     def rule() -> int:
    ...         return 2
    >>> override_problems(Seam)
    ['Seam.flag overrides Base.flag, not declared ClassVar', 'Seam.rule overrides Base.rule, a staticmethod']
    """
    problems: list[str] = []
    for name in vars(sub):
        if name.startswith("__") and name.endswith("__"):
            continue
        for base in sub.__mro__[1:]:
            if not _is_compiled(base) or name not in vars(base):
                continue
            theirs = vars(base)[name]
            where = f"{sub.__name__}.{name} overrides {base.__name__}.{name}"
            if isinstance(theirs, staticmethod | classmethod):
                problems.append(f"{where}, a {type(theirs).__name__}")
            elif "trait" in DECORATORS.get(base.__module__, {}).get(base.__name__, set()):
                problems.append(f"{where}, of a trait")
            elif not callable(theirs) and not isinstance(theirs, property):
                declared = CLASS_VARS.get(base.__module__, {}).get(base.__name__)
                if declared is None:  # not a compiled module's source (a doctest's class)
                    declared = {
                        n
                        for n, a in vars(base).get("__annotations__", {}).items()
                        if str(a).startswith("ClassVar")
                    }
                if name not in declared:
                    problems.append(f"{where}, not declared ClassVar")
            break
    for base in sub.__mro__[1:]:
        marks = DECORATORS.get(base.__module__, {}).get(base.__name__)
        if _is_compiled(base) and marks is not None and "mypyc_attr" not in marks:
            problems.append(
                f"{sub.__name__} subclasses {base.__name__}, which does not allow interpreted subclasses"
            )
    return problems


@pytest.mark.parametrize("module", sorted(COMPILED))
def test_compiled_modules_have_their_sources(module: str) -> None:
    assert (ROOT / f"{module.replace('.', '/')}.py").is_file()


def test_no_interpreted_subclass_overrides_what_compiled_code_calls_directly() -> None:
    """Every seam, variant, bug, fault and mutant class (and the engines' classes) subclassing a
    compiled class keeps the rules of the module docstring."""
    _import_seams()
    found = {sub for cls in _compiled_classes() for sub in _interpreted_subclasses(cls)}
    assert len(found) > 60  # the mutants, bugs, 0.8 variant and hypothesis engine's stats
    problems = sorted({p for sub in found for p in override_problems(sub)})
    assert problems == []


def _test_subclasses() -> Iterator[tuple[str, ast.ClassDef, str]]:
    """(test file, class, compiled base's name) for each class of tests/ whose base (by name)
    is a compiled class."""
    compiled = {name for classes in DECORATORS.values() for name in classes}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for b in node.bases:
                    name = b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                    if name in compiled:
                        yield path.name, node, name


def test_the_tests_subclasses_keep_the_rules_too() -> None:
    """The tests' own seams (classes of tests/ subclassing a compiled class by name): the same
    rules, read from their source."""
    by_name = {cls.__name__: cls for cls in _compiled_classes()}
    problems: list[str] = []
    seen = 0
    for file, node, base_name in _test_subclasses():
        seen += 1
        base = by_name[base_name]
        names = {
            t.id
            for stmt in node.body
            for t in (
                [stmt.target]
                if isinstance(stmt, ast.AnnAssign)
                else stmt.targets
                if isinstance(stmt, ast.Assign)
                else []
            )
            if isinstance(t, ast.Name)
        } | {stmt.name for stmt in node.body if isinstance(stmt, ast.FunctionDef)}
        fake = type(node.name, (base,), {n: None for n in names})
        problems += [f"{file}: {p}" for p in override_problems(fake)]
    assert seen > 10
    assert problems == []


def test_the_rules_can_fail() -> None:
    """A static method, a plain class attribute and a trait's method overridden, and a base not
    open to interpreted subclasses: each is reported."""

    @trait
    class Rules:
        def epoch(self) -> int:
            return 1

    class Closed:
        pass

    for cls in (Rules, Closed):
        cls.__module__ = "model.controller.election_rules"
    DECORATORS["model.controller.election_rules"].update(Rules={"trait", "mypyc_attr"}, Closed=set())
    try:

        class Seam(Rules):
            def epoch(self) -> int:
                return 2

        class Open(Closed):
            pass

        assert override_problems(Seam) == ["Seam.epoch overrides Rules.epoch, of a trait"]
        assert override_problems(Open) == [
            "Open subclasses Closed, which does not allow interpreted subclasses"
        ]
    finally:
        del DECORATORS["model.controller.election_rules"]["Rules"]
        del DECORATORS["model.controller.election_rules"]["Closed"]
