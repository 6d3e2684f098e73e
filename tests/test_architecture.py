"""The import structure of the project (docs/architecture.md), checked on the source.

Every module under ``model/``, ``invariants/`` and ``explorer/`` is parsed (not
imported); every ``import`` statement counts, at module level or inside a function (a
lazy import is still a dependency). The checks: no import cycle among project modules;
every imported project module exists in this tree; ``model/`` uses only the explorer's
contracts; ``explorer/`` imports no model and no ``invariants`` module (the CLI, release
and shrink layer reaches models through the ``invariants`` registry, by name, with
importlib); each explorer module imports only its own layer or lower ones; no explorer
module is over 800 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("model", "invariants", "explorer")
MAX_LINES = 800
#: modules of model/ and explorer/ allowed over MAX_LINES, with the reason
LONG_MODULES: dict[str, str] = {}

#: the layers of explorer/, lowest first; a module may import its own layer or lower ones
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "contracts and results",
        (
            "explorer.core",
            "explorer.config",
            "explorer.encoding",
            "explorer.speedups",
            "explorer.mypyc_compat",
            "explorer.native",
            "explorer._speedups",
            "explorer._incremental",
            "explorer.tracefile",
            "explorer.datafiles",
            "explorer.explain",
            "explorer.state_view",
            "explorer.report",
            "explorer.run_traces",
        ),
    ),
    ("search machinery and the symbolic harness", ("explorer.search", "explorer.symbolic")),
    ("engines", ("explorer.engines",)),
    ("the check API", ("explorer.api",)),
    (
        "what the front ends share",
        (
            "explorer.frontend",
            "explorer.shrunk",
            "explorer.mutation.source",
            "explorer.suite",
            "explorer.mutation.line_coverage",
            "explorer.mutation.score",
            "explorer.mutation.results",
            "explorer.symmetry_probe",
        ),
    ),
    (
        "front ends",
        (
            "explorer.cli",
            "explorer.release",
            "explorer.release_jobs",
            "explorer.shrink",
            "explorer.mutation",
            "explorer.explore",
            "explorer.__main__",
            "explorer",
        ),
    ),
]
#: what model/ may import from the explorer (the contracts a model is written against, and
#: mypyc's class decorators: ``explorer.mypyc_compat``, issue 56)
MODEL_MAY_IMPORT = {"explorer.config", "explorer.speedups", "explorer.core", "explorer.mypyc_compat"}
#: what invariants/ may import from the explorer: the contracts and the proof harness
INVARIANTS_MAY_IMPORT = (
    "explorer.core",
    "explorer.config",
    "explorer.encoding",
    "explorer.speedups",
    "explorer.symbolic",
)
#: import cycles known and accepted for now, each with the reason (as sets of modules): none
KNOWN_CYCLES: dict[frozenset[str], str] = {}
#: explorer modules that may name the model registry to importlib.import_module
REGISTRY_USERS = {"explorer.frontend", "explorer.shrink"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


SOURCES = _sources()
PROJECT = set(SOURCES) | {"explorer._speedups", "explorer._incremental"}  # C accelerators: a .pyi, no .py


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """(imported module, line) for every import statement of the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_pkg = path.name == "__init__.py"
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_pkg else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub if sub in PROJECT else base, node.lineno))
    return out


def _project_imports() -> dict[str, list[tuple[str, int]]]:
    graph: dict[str, list[tuple[str, int]]] = {}
    for name, path in SOURCES.items():
        graph[name] = [(m, ln) for m, ln in _imports(name, path) if m.split(".")[0] in PACKAGES]
    return graph


IMPORTS = _project_imports()


def _layer(module: str) -> int:
    best = (-1, -1)  # (length of the matching prefix, layer)
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best[0]:
                best = (len(p), i)
    return best[1]


def test_every_imported_project_module_exists() -> None:
    # a stale path (say explorer.bfs) would otherwise be found in another checkout by an
    # editable install, and tests would pass against the wrong code
    missing = [
        f"{SOURCES[name].relative_to(ROOT)}:{ln}: {m}"
        for name, deps in IMPORTS.items()
        for m, ln in deps
        if m not in PROJECT and m not in PACKAGES
    ]
    assert missing == []


def test_no_import_cycle() -> None:
    g = nx.DiGraph()
    g.add_nodes_from(IMPORTS)
    g.add_edges_from((name, m) for name, deps in IMPORTS.items() for m, _ in deps if m != name)
    cycles = [c for c in nx.simple_cycles(g) if frozenset(c) not in KNOWN_CYCLES]
    assert cycles == [], f"import cycles: {cycles[:5]}"


def test_model_imports_only_the_contracts_of_the_explorer() -> None:
    bad = [
        f"{name}: {m}"
        for name, deps in IMPORTS.items()
        if name.split(".")[0] == "model"
        for m, _ in deps
        if m.split(".")[0] == "invariants" or (m.split(".")[0] == "explorer" and m not in MODEL_MAY_IMPORT)
    ]
    assert bad == []


def test_invariants_import_only_the_contracts_and_the_proof_harness() -> None:
    bad = [
        f"{name}: {m}"
        for name, deps in IMPORTS.items()
        if name.split(".")[0] == "invariants"
        for m, _ in deps
        if m.split(".")[0] == "explorer"
        and not any(m == p or m.startswith(p + ".") for p in INVARIANTS_MAY_IMPORT)
    ]
    assert bad == []


def test_explorer_imports_no_model_and_no_invariants() -> None:
    bad = [
        f"{name}: {m}"
        for name, deps in IMPORTS.items()
        if name.split(".")[0] == "explorer"
        for m, _ in deps
        if m.split(".")[0] in ("model", "invariants")
    ]
    assert bad == []


@pytest.mark.slow  # 1.1 CPU-s in a loaded default run (2026-11-29)
def test_only_the_front_ends_name_the_registry_to_importlib() -> None:
    named: list[str] = []
    for name, path in SOURCES.items():
        if not name.startswith("explorer"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).split(".")[0] in ("model", "invariants")
            ):
                named.append(name)
    assert set(named) <= REGISTRY_USERS, named


@pytest.mark.parametrize("name", sorted(n for n in SOURCES if n.split(".")[0] == "explorer"))
def test_explorer_module_imports_only_its_layer_or_lower(name: str) -> None:
    mine = _layer(name)
    assert mine >= 0, f"{name} is in no layer of LAYERS (add it, and to docs/architecture.md)"
    upward = [
        f"line {ln}: {m} ({LAYERS[_layer(m)][0]})"
        for m, ln in IMPORTS[name]
        if m.split(".")[0] == "explorer" and _layer(m) > mine
    ]
    assert upward == [], f"{name} ({LAYERS[mine][0]}) imports a higher layer"


def test_no_model_or_explorer_module_over_800_lines() -> None:
    long = {
        name: n
        for name, path in SOURCES.items()
        if name.split(".")[0] in ("model", "explorer")
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
        and name not in LONG_MODULES
    }
    assert long == {}


def test_every_package_is_installed() -> None:
    """pyproject.toml's package search finds every package (a non-editable install would miss
    one it does not find)."""
    import tomllib

    from setuptools import find_packages

    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    listed = set(find_packages(str(ROOT), include=find["include"]))
    found = {_module_name(p) for pkg in PACKAGES for p in (ROOT / pkg).rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)


#: the controller model's modules (issue 31: composed, not inherited)
CONTROLLER_MODULES = sorted(
    name for name in SOURCES if name.startswith("model.controller") or name == "invariants.mutants.controller"
)
#: a longest chain of project classes (a class, its project base, that one's project base)
MAX_INHERITANCE = 2


def _project_depth(cls: type) -> int:
    """How many project classes (``model``, ``invariants``) lie above ``cls`` in its longest
    chain of bases."""
    bases = [b for b in cls.__bases__ if b.__module__.split(".")[0] in ("model", "invariants")]
    return max((1 + _project_depth(b) for b in bases), default=0)


@pytest.mark.parametrize("module", CONTROLLER_MODULES)
def test_controller_classes_inherit_at_most_two_levels(module: str) -> None:
    """No class of the controller model (its mutants included) sits below more than two project
    classes: the controller, its components and actors are composed, and a variant or mutant
    subclasses one of them."""
    import importlib

    mod = importlib.import_module(module)
    deep = {
        name: _project_depth(obj)
        for name, obj in vars(mod).items()
        if isinstance(obj, type) and obj.__module__ == module and _project_depth(obj) > MAX_INHERITANCE
    }
    assert deep == {}


def test_the_inheritance_check_can_fail() -> None:
    class A:
        pass

    A.__module__ = "model.x"

    class B(A):
        pass

    B.__module__ = "model.x"

    class C(B):
        pass

    class D(C):
        pass

    assert _project_depth(C) == 2 and _project_depth(D) == 0  # D's base C is a test's class
    C.__module__ = "model.x"
    assert _project_depth(D) == 3 > MAX_INHERITANCE


#: issue 31: the controller model in modules a newcomer reads in one sitting
MAX_CONTROLLER_LINES = 500


def test_no_controller_module_over_500_lines() -> None:
    long = {
        name: n
        for name, path in SOURCES.items()
        if name.startswith("model.controller")
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_CONTROLLER_LINES
    }
    assert long == {}


@pytest.mark.parametrize("package", ["model.controller", "model.purgatory", "model.simple_timing_wheel"])
def test_model_facades_give_every_public_name_of_their_submodules(package: str) -> None:
    """A facade imports only its entry points, yet ``from model.controller import Crash`` (any
    public name of the submodules it forwards to, as the facades once listed by hand) still
    works and gives the defining module's object."""
    import importlib

    pkg = importlib.import_module(package)
    names = [n for n in dir(pkg) if not n.startswith("_")]
    assert len(names) > 20
    for name in names:
        assert getattr(pkg, name) is not None, name
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        _ = pkg.no_such_name
    if package == "model.controller":
        from model.controller.actions import Crash
        from model.controller.messages import Q_READ_CTL

        assert pkg.Crash is Crash and pkg.Q_READ_CTL == Q_READ_CTL
