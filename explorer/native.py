"""Which model runs: the modules mypyc compiled, or their Python sources (the reference).

``setup.py`` compiles the modules of :data:`COMPILED_MODULES` with mypyc when it can (issue 56:
about 1.2x faster serial search) and writes a manifest beside the outputs,
``explorer/_native.json``: the mypyc version, the shared libraries' module names and the
sha256 of each compiled module's ``.py``. This module decides once per process, lazily (at
the first import of a compiled module, or when :data:`ACTIVE` is read), whether those
compiled modules are used. They are, all of them, only when

* neither ``KAFKA_MC_PURE_MODEL`` nor ``KAFKA_MC_PURE_PYTHON`` is set (to anything but
  empty or ``0``);
* the manifest exists, records a build (not why there is none: ``"built": false``) and lists
  exactly :data:`COMPILED_MODULES`;
* each shared library and each module's shim (the extension module the import would load,
  found with :class:`importlib.machinery.PathFinder` against the parent package's path, so a
  copied tree is judged on its own files) exist;
* each module's ``.py`` beside its shim has the manifest's sha256.

Otherwise every one of them runs from its ``.py``. The pure-Python model stays the reference:
the test suite runs it (the root ``conftest.py`` sets ``KAFKA_MC_PURE_MODEL=1``), and so do
the mutation harness's workers, whose mutants and line tracing need the source. All or nothing:
compiled modules call each other directly, so a mix would not run the sources it seems to.

Python's own finder prefers an extension module to a ``.py`` of the same name, so a stale
shim would shadow an edited source. :func:`install` (called by ``explorer/__init__.py``,
which ``model/`` and ``invariants/`` import before anything else of theirs) therefore puts a
finder first on ``sys.meta_path`` that loads every module of ``model``, ``invariants`` and
``explorer`` that has a ``.py`` from that ``.py`` (a compiled one only when the decision is
to use the compiled model). C accelerators without a ``.py`` twin (``explorer._speedups``,
``explorer._incremental``) are not its business. A build whose sources changed since prints
one line to stderr and runs pure Python:

    kafka-mc: the compiled model is out of date (model/leader_selectors.py changed since it was built):
    running pure Python; rebuild with `pip install -e .`

:data:`ACTIVE` and :data:`REASON` say what was decided (like ``explorer.speedups.ACTIVE``):

>>> import explorer.native as native
>>> isinstance(native.ACTIVE, bool), native.ACTIVE or native.REASON != ""
(True, True)
>>> module_name("model/controller/zookeeper.py")
'model.controller.zookeeper'
>>> pure_requested({"KAFKA_MC_PURE_MODEL": "1"}), pure_requested({"KAFKA_MC_PURE_MODEL": "0"})
('KAFKA_MC_PURE_MODEL=1 is set', '')
"""

from __future__ import annotations

import _thread
import os
import sys
from collections.abc import Mapping, Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec, PathFinder, SourceFileLoader
from importlib.util import find_spec, spec_from_file_location
from types import ModuleType
from typing import Any

__all__ = [
    "ACTIVE",
    "COMPILED_MODULES",
    "MANIFEST",
    "PURE_ENV",
    "REASON",
    "Decision",
    "decide",
    "install",
    "module_name",
    "pure_requested",
]

#: The modules mypyc compiles, as project-relative paths: the one list (``setup.py`` reads it
#: from this file with ``ast``, without importing the package). The hot path of serial search
#: on controller-ref: the controller model, its properties, and the serial engine's loop.
COMPILED_MODULES: tuple[str, ...] = (
    "model/controller/zookeeper.py",
    "model/controller/network.py",
    "model/controller/base.py",
    "model/controller/effects.py",
    "model/controller/controller.py",
    "model/controller/election_rules.py",
    "model/controller/replica_manager.py",
    "model/controller/system.py",
    "model/controller/broker.py",
    "model/controller/broker_lifecycle.py",
    "model/controller/coverage.py",
    "model/controller/state_machines.py",
    "model/controller/topics.py",
    "model/controller/topic_deletion.py",
    "model/controller/cluster.py",
    "model/controller/admin.py",
    "model/controller/elector.py",
    # not model/election.py: the election-rule proofs (invariants/proofs_election.py) run its
    # functions on Z3-backed values, which compiled code does not call back (they report
    # "violated"); the compiled modules call it as Python
    "model/leader_selectors.py",
    "invariants/controller.py",
    "invariants/controller_convergence.py",
    "invariants/controller_failover.py",
    "invariants/controller_fidelity.py",
    "invariants/controller_guards.py",
    "invariants/controller_liveness.py",
    "invariants/controller_observed.py",
    "invariants/controller_reassign.py",
    "invariants/controller_replication.py",
    "invariants/controller_slices.py",
    "explorer/search/serial.py",
    "explorer/search/monitor.py",
    "explorer/search/incremental.py",
    "explorer/search/results.py",
)

#: the manifest ``setup.py`` writes after a complete build, beside this file
MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native.json")
#: the environment variable that selects the pure-Python model (``1``); the test suite and
#: the mutation harness's workers set it
PURE_ENV = "KAFKA_MC_PURE_MODEL"
#: ``explorer.speedups``' variable: it selects the pure-Python model too
PURE_PYTHON_ENV = "KAFKA_MC_PURE_PYTHON"
#: the packages whose modules the finder loads from their ``.py`` (unless compiled and chosen)
PACKAGES = ("model", "invariants", "explorer")
#: what a stale or incomplete build asks for
REBUILD = "rebuild with `pip install -e .`"

#: True when the compiled modules are in use (read lazily: the decision is made on first use)
ACTIVE: bool
#: why the compiled modules are not in use ("" when they are)
REASON: str


def module_name(path: str) -> str:
    """The dotted module name of a project-relative ``.py`` path.

    >>> module_name("invariants/controller.py")
    'invariants.controller'
    """
    return path.removesuffix(".py").replace("/", ".")


_NAMES: frozenset[str] = frozenset(module_name(p) for p in COMPILED_MODULES)


def pure_requested(environ: Mapping[str, str] = os.environ) -> str:
    """Why the environment asks for the pure-Python model, or "" when it does not.

    >>> pure_requested({}), pure_requested({"KAFKA_MC_PURE_PYTHON": "yes"})
    ('', 'KAFKA_MC_PURE_PYTHON=yes is set')
    """
    for var in (PURE_ENV, PURE_PYTHON_ENV):
        if environ.get(var, "") not in ("", "0"):
            return f"{var}={environ[var]} is set"
    return ""


class Decision:
    """Whether the compiled modules are used (``active``), why not (``reason``), and the
    line to print when a build exists but cannot be used (``warning``, "" for none).

    >>> Decision(False, "not built").warning
    ''
    """

    __slots__ = ("active", "reason", "warning")

    def __init__(self, active: bool, reason: str, warning: str = "") -> None:
        self.active = active
        self.reason = reason
        self.warning = warning

    def __repr__(self) -> str:
        return f"Decision(active={self.active}, reason={self.reason!r})"


def _is_extension(origin: str | None) -> bool:
    return origin is not None and origin.endswith(tuple(EXTENSION_SUFFIXES))


def _find_top(name: str, search_path: Sequence[str] | None) -> ModuleSpec | None:
    """What importing the top-level ``name`` would load (nothing imported): through
    ``sys.meta_path`` (an editable install's finder too), or :class:`PathFinder` on
    ``search_path`` when one is given."""
    if search_path is not None:
        return PathFinder.find_spec(name, list(search_path))
    try:
        return find_spec(name)
    except (ImportError, ValueError):
        return None


def _find(
    name: str, search_path: Sequence[str] | None, modules: Mapping[str, ModuleType]
) -> ModuleSpec | None:
    """What importing ``name`` would load, nothing imported (a shared library of a
    ``separate=True`` build lives in a package: ``explorer.search.serial__mypyc``)."""
    package = name.rpartition(".")[0]
    if not package:
        return _find_top(name, search_path)
    where = _package_path(package, search_path, modules)
    return PathFinder.find_spec(name, where) if where is not None else None


def _package_path(
    package: str, search_path: Sequence[str] | None, modules: Mapping[str, ModuleType]
) -> list[str] | None:
    """Where the submodules of ``package`` are found: its ``__path__`` when imported, else
    what the import would find (nothing imported); None if not found."""
    mod = modules.get(package)
    if mod is not None:
        return list(getattr(mod, "__path__", []))
    parent, _, _ = package.rpartition(".")
    if not parent:
        spec = _find_top(package, search_path)
    else:
        where = _package_path(parent, search_path, modules)
        spec = PathFinder.find_spec(package, where) if where is not None else None
    if spec is None or spec.submodule_search_locations is None:
        return None
    return list(spec.submodule_search_locations)


def _sha256(path: str) -> str:
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def decide(
    manifest: str | None = None,
    *,
    environ: Mapping[str, str] = os.environ,
    search_path: Sequence[str] | None = None,
    modules: Mapping[str, ModuleType] | None = None,
    compiled: Sequence[str] | None = None,
) -> Decision:
    """Decide whether the compiled modules can be used (nothing is imported or printed).

    ``manifest`` defaults to :data:`MANIFEST`, ``compiled`` to :data:`COMPILED_MODULES`;
    ``search_path`` (top-level names are looked up there with :class:`PathFinder` instead of
    through ``sys.meta_path``) and ``modules`` (for ``sys.modules``) let a test give a tree of
    its own.

    >>> decide("/nonexistent/_native.json", environ={})
    Decision(active=False, reason='not built (no /nonexistent/_native.json)')
    >>> decide(environ={"KAFKA_MC_PURE_MODEL": "1"}).reason
    'KAFKA_MC_PURE_MODEL=1 is set'
    """
    if why := pure_requested(environ):
        return Decision(False, why)
    manifest = MANIFEST if manifest is None else manifest
    if not os.path.exists(manifest):
        return Decision(False, f"not built (no {manifest})")
    loaded = sys.modules if modules is None else modules

    def unusable(what: str) -> Decision:
        reason = f"the compiled model is {what}"
        return Decision(False, reason, f"kafka-mc: {reason}: running pure Python; {REBUILD}")

    import json

    try:
        with open(manifest, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("built") is False:  # setup.py could not build it, and said why
            return Decision(False, f"not built ({data.get('reason')})")
        libs: list[str] = list(data["shared_libraries"])
        sources: dict[str, dict[str, str]] = dict(data["modules"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        return unusable(f"unreadable ({manifest}: {type(e).__name__}: {e})")
    wanted = {module_name(p): p for p in (COMPILED_MODULES if compiled is None else compiled)}
    if set(sources) != set(wanted):
        diff = sorted(set(sources) ^ set(wanted))
        return unusable(f"out of date (its list of modules differs from explorer/native.py's: {diff[0]})")
    for lib in libs:
        spec = _find(lib, search_path, loaded)
        if spec is None or not _is_extension(spec.origin):
            return unusable(f"incomplete (its shared library {lib} is missing)")
    for name, rel in wanted.items():
        last = name.rpartition(".")[2]
        spec = _find(name, search_path, loaded)
        if spec is None or not _is_extension(spec.origin):
            return unusable(f"incomplete (the compiled {name} is missing)")
        assert spec.origin is not None
        source = os.path.join(os.path.dirname(spec.origin), last + ".py")
        if not os.path.exists(source):
            return unusable(f"out of date ({rel} was removed since it was built)")
        if _sha256(source) != sources[name].get("sha256"):
            return unusable(f"out of date ({rel} changed since it was built)")
    return Decision(True, "")


_LOCK = _thread.allocate_lock()
_decision: Decision | None = None


def _decided() -> Decision:
    """The process's decision, made on first call (the warning printed then, once)."""
    global _decision
    if _decision is None:
        with _LOCK:
            if _decision is None:
                d = decide()
                if d.warning:
                    print(d.warning, file=sys.stderr, flush=True)
                _decision = d
    return _decision


def __getattr__(name: str) -> Any:
    """:data:`ACTIVE` and :data:`REASON`, decided on first use (PEP 562)."""
    if name == "ACTIVE":
        return _decided().active
    if name == "REASON":
        return _decided().reason
    raise AttributeError(f"module 'explorer.native' has no attribute {name!r}")


class SourceFirstFinder(MetaPathFinder):
    """A ``sys.meta_path`` finder: a module of :data:`PACKAGES` with a ``.py`` is loaded from
    it, never from an extension module of the same name, unless it is one of
    :data:`COMPILED_MODULES` and the compiled model is in use (then Python's own finder
    loads the shim). Packages, and C accelerators without a ``.py``, are left to Python.

    >>> import explorer.encoding
    >>> explorer.encoding.__spec__.origin.endswith("encoding.py")
    True
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """The ``.py``'s spec of ``fullname`` (None: Python's finders decide)."""
        top, dot, _ = fullname.partition(".")
        if not dot or top not in PACKAGES or path is None:
            return None
        if fullname in _NAMES and _decided().active:
            return None
        last = fullname.rpartition(".")[2]
        for entry in path:
            base = os.path.join(entry, last)
            if os.path.isfile(os.path.join(base, "__init__.py")):
                return None  # a package: as Python would find it
            source = base + ".py"
            if os.path.isfile(source):
                return spec_from_file_location(fullname, source, loader=SourceFileLoader(fullname, source))
        return None


_FINDER = SourceFirstFinder()


def install() -> None:
    """Put :class:`SourceFirstFinder` first on ``sys.meta_path`` (once; ``explorer/__init__.py``
    calls it). A compiled module imported before (``import model.leader_selectors`` with nothing of
    the explorer imported yet loads its shim) must agree with the decision: if it does not,
    the import fails rather than mix compiled and pure modules.

    >>> install(); sys.meta_path[0] is _FINDER
    True
    """
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    early = sorted(n for n in _NAMES if n in sys.modules and _loads_extension(n))
    if not early and any(k.endswith("__mypyc") for k in sys.modules):  # a shim's init under way
        early = sorted(lib for lib in _manifest_libraries() if lib in sys.modules)
    if early and not _decided().active:
        raise ImportError(
            f"kafka-mc: {early[0]} was loaded from its compiled build before explorer could check it, "
            f"and pure Python was chosen ({_decided().reason}); import explorer before the model, "
            f"or {REBUILD}"
        )


def _loads_extension(name: str) -> bool:
    """Whether module ``name``, already in ``sys.modules``, was loaded from an extension module
    (its compiled shim), not from its ``.py``. What it was loaded from, not where Python's own
    finder would find it now: with a build present and pure Python chosen, every module the
    finder loaded from its ``.py`` has a shim beside it, and a second :func:`install` must not
    take them for compiled ones."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
    return isinstance(origin, str) and _is_extension(origin)


def _manifest_libraries() -> list[str]:
    """The shared libraries the manifest names ([] without a readable manifest)."""
    import json

    try:
        with open(MANIFEST, encoding="utf-8") as f:
            return [str(lib) for lib in json.load(f)["shared_libraries"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []
