"""Named bugs (mutants) that show each property able to fail, kept out of ``model/``.

The models' production code holds no mutant checks. A mutant is a small override of a
model's classes (a subclass that replaces one method, usually a method named after the
Kafka method it stands for) registered by name in a :class:`Catalogue`. A model's
``invariants`` module adds the test-only config key ``mutant`` to its configuration (a
subclass of the model's config whose ``mutant`` choices are the catalogue's names) and
builds ``catalogue.build(config)``, so ``--set mutant=NAME`` selects a bug from the CLI,
trace files record it, and ``shrink`` and ``replay`` rebuild it.

Example
-------
>>> class Counter:
...     def step(self, n): return n + 1
>>> bugs = Catalogue("counter", Counter)
>>> @bugs.register("no-increment", "step returns its input unchanged")
... class NoIncrement(Counter):
...     def step(self, n): return n
>>> bugs.names()
('none', 'no-increment')
>>> type(bugs.system("no-increment")).__name__
'NoIncrement'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["NONE", "Catalogue", "Mutant"]

NONE = "none"
"""The name of the unmutated model."""


@dataclass(frozen=True)
class Mutant:
    """One registered bug: its name, one line saying what it breaks, and the class (or factory)
    that builds the mutated system from a configuration."""

    name: str
    doc: str
    build: Callable[..., Any]
    equivalent: str = ""  #: why the mutant cannot change behaviour (an equivalent mutant), if so


class Catalogue:
    """The mutants of one model, by name; ``none`` builds the model itself.

    ``register(name, doc)`` decorates a subclass of the model's system (or any factory
    ``config -> system``); ``system(name, *args)`` builds it.
    """

    def __init__(self, model: str, base: Callable[..., Any]) -> None:
        self.model = model
        self._mutants: dict[str, Mutant] = {NONE: Mutant(NONE, "the model as written", base)}

    def register(self, name: str, doc: str, *, equivalent: str = "") -> Callable[[Any], Any]:
        """Register the decorated class or factory as mutant ``name``."""

        def add(build: Any) -> Any:
            if name in self._mutants:
                raise ValueError(f"{self.model}: mutant {name!r} registered twice")
            self._mutants[name] = Mutant(name, doc, build, equivalent)
            return build

        return add

    def names(self) -> tuple[str, ...]:
        """Every registered name, ``none`` first, then in registration order."""
        return tuple(self._mutants)

    def __getitem__(self, name: str) -> Mutant:
        return self._mutants[name]

    def __iter__(self) -> Any:
        return iter(self._mutants.values())

    def __len__(self) -> int:
        return len(self._mutants)

    def system(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Build mutant ``name``'s system (``none``: the model's own)."""
        return self._mutants[name].build(*args, **kwargs)
