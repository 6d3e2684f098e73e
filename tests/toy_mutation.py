"""A toy model for the mutation harness's tests (``kafka-mc mutate --system
tests.toy_mutation:make``): a counter that climbs to a limit, with a tiny catalogue.

Its source is what the harness's source mutants change in the tests: negating the
first ``if`` of :meth:`Counter.successors` makes the mutant raise, which shows the
mutated copy (not this file) is what runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from explorer.core import Property, always, reachable

#: the catalogue: ``none`` and the named bugs ``make(mutant=NAME)`` builds
MUTANTS = ("none", "overflow", "stuck")


class Step(NamedTuple):
    """The counter goes up by one."""

    def __str__(self) -> str:
        return "step"


class Counter:
    """A counter from 0 to ``limit``; ``overflow`` lets it pass the limit, ``stuck`` never moves."""

    def __init__(self, limit: int = 3, mutant: str = "none") -> None:
        self.limit, self.mutant = limit, mutant

    def init_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> Iterator[tuple[Step, int]]:
        if s >= 0:
            pass
        else:
            raise RuntimeError("the mutated copy ran")
        top = self.limit + (1 if self.mutant == "overflow" else 0)
        if s < top and self.mutant != "stuck":
            yield Step(), s + 1

    def is_terminal(self, s: int) -> bool:
        return True

    def properties(self) -> list[Property]:
        return [
            always("within_limit", lambda s: s <= self.limit, "the counter never passes its limit"),
            reachable("at_limit", lambda s: s == self.limit, "the counter reaches its limit"),
        ]


def make(limit: int = 3, mutant: str = "none") -> Counter:
    """The factory ``--system tests.toy_mutation:make`` calls with the ``--set`` values."""
    if mutant not in MUTANTS:
        raise ValueError(f"mutant: expected one of {', '.join(MUTANTS)}, got {mutant!r}")
    return Counter(limit, mutant)


def unused_rule(s: int) -> bool:
    """Called by no check: a mutant here is "not covered" (no entry executes it)."""
    return s > 1
