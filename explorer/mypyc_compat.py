"""mypyc's class decorators for the modules a build may compile with mypyc (issue 56), without
making ``mypy_extensions`` a run-time dependency.

``mypyc_attr`` and ``trait`` are ``mypy_extensions``'s own when it is importable (it comes
with mypy, so always in a mypyc build: mypyc resolves a name imported through this module to
``mypy_extensions.mypyc_attr`` and obeys it). Without it they are decorators that return their
class unchanged, which is all ``mypy_extensions``'s do at run time anyway: the pure-Python model
behaves the same either way.

- ``@mypyc_attr(allow_interpreted_subclasses=True)`` on a compiled class lets interpreted
  classes subclass it: the seams (``model/controller/v08.py``, ``bugs/``, ``faults/``), the
  mutants (``invariants/mutants/``) and the tests all do. Without it a compiled class is final
  to Python code (``TypeError`` when the subclass is defined).
- ``@trait`` marks a class a compiled class may list as a second base (mypyc supports multiple
  inheritance only from traits): ``KafkaController(Component, ElectRules)``. A trait cannot be
  instantiated once compiled.

>>> @mypyc_attr(allow_interpreted_subclasses=True)
... class Component:
...     def step(self) -> int:
...         return 1
>>> @trait
... class Rules:
...     def epoch(self, e: int) -> int:
...         return e + 1
>>> class Controller(Component, Rules):
...     pass
>>> Controller().step(), Controller().epoch(4)
(1, 5)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["mypyc_attr", "trait"]

_T = TypeVar("_T")

try:
    from mypy_extensions import mypyc_attr, trait
except ImportError:  # pragma: no cover - mypy (and so mypy_extensions) is a dev dependency

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[_T], _T]:
        """Without mypy_extensions: a decorator that returns its class unchanged."""
        return lambda cls: cls

    def trait(cls: _T) -> _T:
        """Without mypy_extensions: the class unchanged."""
        return cls
