"""Coverage label counting (``explorer.search.label_counting``): a system's own
``successors_counted`` (the controller's fast path) counts exactly what wrapping its
``successors_labelled`` counts, and is not used where a subclass or a wrapper redefines
``successors_labelled`` alone."""

from __future__ import annotations

from collections import deque
from typing import Any

from explorer.search import label_counting
from model.controller import ControllerConfig, ControllerSystem


def _counts(system: Any, succ_of: Any, limit: int = 3000) -> tuple[dict, list]:
    """Breadth first over ``limit`` states with ``succ_of(counts)``: (label counts, actions)."""
    counts: dict = {}
    succ = succ_of(counts)
    init = system.init_states()[0]
    seen, todo, actions = {init}, deque([init]), []
    while todo and len(seen) < limit:
        for a, t in succ(todo.popleft()):
            actions.append(str(a))
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return counts, actions


def test_own_counting_matches_the_wrapped_labels() -> None:
    system = ControllerSystem(ControllerConfig(max_topic_deletions=1, max_session_expiries=1))
    fast = _counts(system, lambda c: label_counting(system, c))

    def wrapped(counts: dict) -> Any:
        def succ(s: Any) -> Any:
            for a, t, labels in system.successors_labelled(s):
                for lb in labels:
                    counts[lb] = counts.get(lb, 0) + 1
                yield a, t

        return succ

    slow = _counts(system, wrapped)
    assert fast == slow and sum(fast[0].values()) > 1000


def test_a_wrapper_that_relabels_is_not_bypassed() -> None:
    class Relabelled(ControllerSystem):
        def successors_labelled(self, s: Any) -> Any:
            for a, t, _ in super().successors_labelled(s):
                yield a, t, (("mine", "step"),)

    system = Relabelled(ControllerConfig())
    counts, actions = _counts(system, lambda c: label_counting(system, c), limit=50)
    assert counts == {("mine", "step"): len(actions)}
