"""A model package's facade: its entry points imported eagerly, every other public name of its
submodules found on first use (PEP 562), so ``from model.controller import Crash`` keeps
working without a facade that repeats each submodule's list of names.

Example
-------
>>> import types
>>> pkg = types.ModuleType("pkg")
>>> pkg.__getattr__, pkg.__dir__ = forward("model", ["facade"], {})
>>> pkg.__getattr__("forward") is forward
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["forward"]


def forward(
    package: str, submodules: Iterable[str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name the package does not define
    is looked up among the public names of ``submodules`` (in order; the first that has it),
    and kept in ``namespace`` (the package's globals) once found."""
    subs = tuple(submodules)

    def _getattr(name: str) -> Any:
        if not name.startswith("_"):
            for sub in subs:
                mod = importlib.import_module(f"{package}.{sub}")
                if name in vars(mod):
                    value = vars(mod)[name]
                    namespace[name] = value
                    return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def _dir() -> list[str]:
        names = set(namespace)
        for sub in subs:
            names |= {n for n in vars(importlib.import_module(f"{package}.{sub}")) if not n.startswith("_")}
        return sorted(names)

    return _getattr, _dir
