"""A toy for ``kafka-mc mutate --timeout-factor`` (``--system tests.toy_slow:make``): a counter
whose catalogue mutant ``slow`` takes a tenth of a second a step, as a mutant whose search
diverges takes far longer than the unmutated run."""

from __future__ import annotations

import time
from collections.abc import Iterator

from explorer.core import Property, always

#: the catalogue: ``none`` and the one slow mutant
MUTANTS = ("none", "slow")


class SlowCounter:
    """A counter from 0 to ``limit``; the ``slow`` mutant sleeps 0.1 s before each step."""

    def __init__(self, limit: int, mutant: str) -> None:
        self.limit, self.mutant = limit, mutant

    def init_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> Iterator[tuple[str, int]]:
        if self.mutant == "slow":
            time.sleep(0.1)
        if s < self.limit:
            yield "step", s + 1

    def is_terminal(self, s: int) -> bool:
        return True

    def properties(self) -> list[Property]:
        return [always("within_limit", lambda s: s <= self.limit, "the counter never passes its limit")]


def make(limit: int = 20, mutant: str = "none") -> SlowCounter:
    """The factory ``--system tests.toy_slow:make`` calls with the ``--set`` values."""
    return SlowCounter(limit, mutant)
