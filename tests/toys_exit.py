"""User modules that call ``sys.exit`` (issue 53): kafka-mc treats that as a model error
(exit 4, one line), not as the end of the run. ``KAFKA_MC_TEST_EXIT_AT`` chooses where:
``import`` (while the module is imported), else the factory or the search call it."""

from __future__ import annotations

import os
import sys
from typing import Any

if os.environ.get("KAFKA_MC_TEST_EXIT_AT") == "import":
    sys.exit(0)


def exits_in_factory(**_: Any) -> Any:
    """A factory that ends the process, with exit status 0, instead of returning a system."""
    sys.exit(0)


class _ExitsLater:
    """A system whose successors call ``sys.exit(0)`` from the second level on."""

    def init_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> list[tuple[str, int]]:
        if s >= 1:
            sys.exit(0)
        return [("step", s + 1)]


def exits_in_search(**_: Any) -> Any:
    """A system whose search reaches ``sys.exit(0)``."""
    return _ExitsLater()
