"""Build hook for the optional compiled parts: two C accelerators and the mypyc-compiled model.

All project metadata lives in pyproject.toml; this file only declares the extensions,
because ``ext-modules`` in pyproject.toml needs setuptools >= 74.1 (and is marked
experimental there). Every one is optional: if the compiler is missing or a build fails,
the install goes on without it and the pure-Python code runs.

* ``explorer._speedups`` and ``explorer._incremental`` (``optional=True``): without them,
  ``explorer.speedups`` and ``explorer.search.incremental`` use their pure-Python fallbacks.
* The model's hot modules compiled by mypyc (issue 56; the list is
  ``explorer/native.py``'s ``COMPILED_MODULES``, read here with ``ast``), when mypyc imports
  and ``KAFKA_MC_NO_MYPYC`` is unset. All or nothing: after a complete build,
  ``explorer/_native.json`` (the manifest: mypyc's version, the shared libraries, the sha256
  of each compiled ``.py``) is written beside the outputs; ``explorer.native`` uses the
  compiled modules only when it finds them all, built from exactly the sources on disk. When
  any part fails one line says so, the manifest says only why (``"built": false``), and pure
  Python runs.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
#: set (to anything but empty or 0) to skip the mypyc build
NO_MYPYC_ENV = "KAFKA_MC_NO_MYPYC"
#: the manifest, relative to the package root (build_lib, or the source tree in place)
MANIFEST = "explorer/_native.json"
#: mypyc's C optimisation level (-O3)
OPT_LEVEL = "3"
#: the manifest's format (explorer/native.py reads it)
SCHEMA = "kafka-mc/native/1"
#: commands that only describe the project: no mypyc for them (7 s each)
METADATA_ONLY = {"egg_info", "sdist", "dist_info"}


def compiled_modules() -> list[str]:
    """``explorer/native.py``'s ``COMPILED_MODULES``, read without importing the package."""
    tree = ast.parse((HERE / "explorer" / "native.py").read_text(encoding="utf-8"))
    target: ast.expr
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "COMPILED_MODULES" and value is not None:
            return list(ast.literal_eval(value))
    raise RuntimeError("explorer/native.py defines no COMPILED_MODULES")


def _say_not_built(reason: str) -> None:
    print(f"kafka-mc: the compiled model was not built ({reason}); running pure Python, about 1.2x slower")


class BuildExt(build_ext):
    """``build_ext`` that adds the mypyc extensions (mypyc runs only when this command is
    finalised: not for ``egg_info`` or ``sdist``), never fails the install for them, and writes
    the manifest (of the build, or of why there is none)."""

    extensions: list[Extension]  # set by build_ext.finalize_options

    def finalize_options(self) -> None:
        """Add the mypyc extensions, if mypyc generates them (setuptools then prepares them
        with the others)."""
        self._mypyc: list[Extension] = []
        self._mypyc_failed = ""
        self._manifest: dict[str, Any] | None = None
        self._not_built = "not asked to build"
        # egg_info and sdist finalise this command only to list the extensions' sources
        commands = set(self.distribution.commands)
        if not (commands and commands <= METADATA_ONLY):
            self._manifest, self._not_built = self._mypycify()
        if self._mypyc:
            self.distribution.ext_modules = [*(self.distribution.ext_modules or []), *self._mypyc]
        super().finalize_options()

    def run(self) -> None:
        """Build the C accelerators and, if it can, the compiled model; then the manifest."""
        t0 = time.monotonic()
        super().run()
        if self._mypyc and not self._mypyc_failed:
            print(f"kafka-mc: built {len(self._mypyc)} mypyc extensions in {time.monotonic() - t0:.0f} s")
        manifest = self._manifest
        reason = self._not_built or self._mypyc_failed or self._missing_output()
        if reason or manifest is None:
            # replaces a manifest that would vouch for old shims, and tells explorer.native (and
            # .ci/run's line) why there is no build
            manifest = {"schema": SCHEMA, "built": False, "reason": reason}
        for root in self._manifest_roots():
            path = Path(root) / MANIFEST
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        if reason:
            _say_not_built(reason)

    def _mypycify(self) -> tuple[dict[str, Any] | None, str]:
        """The mypyc extensions (into ``self._mypyc``) and the manifest, or why not."""
        if os.environ.get(NO_MYPYC_ENV, "") not in ("", "0"):
            return None, f"{NO_MYPYC_ENV} is set"
        try:
            from mypy.version import __version__ as mypy_version
            from mypyc.build import mypycify
        except ImportError as e:
            return None, f"mypyc is not installed: {e}"
        files = compiled_modules()
        # hashed before mypyc reads them: a source edited during the build leaves the manifest stale
        modules = {
            f.removesuffix(".py").replace("/", "."): {
                "source": f,
                "sha256": hashlib.sha256((HERE / f).read_bytes()).hexdigest(),
            }
            for f in files
        }
        t0 = time.monotonic()
        try:
            exts = mypycify(files, opt_level=OPT_LEVEL)
        except (Exception, SystemExit) as e:  # mypyc exits on a type error
            return None, f"mypyc failed: {type(e).__name__}: {e}"
        print(f"kafka-mc: mypyc generated C for {len(files)} modules in {time.monotonic() - t0:.0f} s")
        for ext in exts:
            ext.optional = True  # a failure is ours to report (build_extension), not the install's
        self._mypyc = exts
        shims = {ext.name for ext in exts}
        libs = sorted(ext.name for ext in exts if ext.name.endswith("__mypyc"))
        if not libs or not set(modules) <= shims:
            return None, "mypyc's extensions are not one shared library and a shim per module"
        manifest = {
            "schema": SCHEMA,
            "built": True,
            "mypyc": mypy_version,
            "opt_level": OPT_LEVEL,
            "shared_libraries": libs,
            "modules": modules,
        }
        return manifest, ""

    def build_extension(self, ext: Extension) -> None:
        """Build one extension; a mypyc one's failure is recorded, not raised."""
        if ext not in getattr(self, "_mypyc", []):
            super().build_extension(ext)
            return
        if self._mypyc_failed:
            return  # all or nothing: the rest would not be used
        try:
            super().build_extension(ext)
        except Exception as e:
            self._mypyc_failed = f"compiling {ext.name} failed: {type(e).__name__}: {e}"

    def copy_extensions_to_source(self) -> None:
        """In place: copy the mypyc extensions only when all were built."""
        if not self._mypyc_failed and not self._missing_output():
            super().copy_extensions_to_source()
            return
        saved = self.extensions
        self.extensions = [e for e in saved if e not in self._mypyc]
        try:
            super().copy_extensions_to_source()
        finally:
            self.extensions = saved

    def _missing_output(self) -> str:
        for ext in self._mypyc:
            path = Path(self.build_lib) / self.get_ext_filename(self.get_ext_fullname(ext.name))
            if not path.exists():
                return f"{path.name} was not built"
        return ""

    def _manifest_roots(self) -> list[str]:
        """Where the manifest goes: build_lib (what a wheel holds), and the source tree when
        the extensions are copied there (``--inplace``, ``pip install -e``)."""
        roots = [self.build_lib]
        if self.inplace or getattr(self, "editable_mode", False):
            roots.append(str(Path(self.get_finalized_command("build_py").get_package_dir("explorer")).parent))
        return roots


setup(
    ext_modules=[
        Extension(
            "explorer._speedups",
            sources=["explorer/_speedups.c"],
            optional=True,
        ),
        # incremental property checking's slice masks (explorer/search/incremental.py)
        Extension(
            "explorer._incremental",
            sources=["explorer/_incremental.c"],
            optional=True,
        ),
    ],
    cmdclass={"build_ext": BuildExt},
)
