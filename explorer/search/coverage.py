"""Coverage counting shared by the engines: per action kind and per coverage label.

An engine counts, per action type, how often it was enabled and how often it led to a
new state (:class:`Coverage`), and, for a system with ``successors_labelled``, how
often each coverage label was hit (:func:`label_counting`); :func:`coverage_of` turns
both into the result's JSON ``coverage`` section.

Example
-------
>>> cov = Coverage(enabled={str: 3}, new={str: 2}, sample={str: "inc"})
>>> coverage_of(cov, ["str", "int"])
{'actions': {'str': {'enabled': 3, 'new_states': 2}}, 'declared_action_kinds': ['str', 'int'], 'never_enabled': ['int'], 'undeclared': []}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from explorer.core import action_kind

__all__ = ["Coverage", "Expansions", "coverage_of", "declared_labels", "label_counting", "nest_labels"]


@dataclass
class Coverage:
    """Raw per-action-type counters of an engine run (see :func:`coverage_of`)."""

    enabled: dict[type, int] = field(default_factory=dict)
    new: dict[type, int] = field(default_factory=dict)
    sample: dict[type, Any] = field(default_factory=dict)

    def count(self, steps: Iterable[tuple[Any, Any]]) -> None:
        """Count the transitions ``steps`` (``(action, target)``) as enabled by their action's
        type, the first of a type its sample (the search loops count inline, as fast).

        >>> c = Coverage(); c.count([("a", 1), (2, 2), ("b", 3)]); c.enabled, c.sample
        ({<class 'str'>: 2, <class 'int'>: 1}, {<class 'str'>: 'a', <class 'int'>: 2})
        """
        for a, _ in steps:
            tp = type(a)
            if tp not in self.enabled:
                self.new[tp] = 0
                self.sample[tp] = a
            self.enabled[tp] = self.enabled.get(tp, 0) + 1


class Expansions:
    """The successors of the states a sampling engine (simulate, hypothesis) stands on, cached
    (the cache is cleared when it holds ``limit`` states), and each state's first expansion
    counted: its transitions in ``cov`` and, for a system with ``successors_labelled``, their
    labels in :attr:`labels` (None for a system without).

    >>> class Two:
    ...     def successors(self, s): return [("inc", s + 1)] if s < 2 else []
    >>> e = Expansions(Two(), Coverage())
    >>> e.get(0), e.get(0), e.cov.enabled, e.labels
    (([('inc', 1)], True), ([('inc', 1)], False), {<class 'str'>: 1}, None)
    """

    def __init__(self, system: Any, cov: Coverage, limit: int = 100_000):
        self.successors = system.successors
        self.labelled = getattr(system, "successors_labelled", None)
        self.cov, self.limit = cov, limit
        self.labels: dict[Any, int] | None = {} if self.labelled is not None else None
        self.cache: dict[Any, tuple[list[tuple[Any, Any]], list[Any] | None]] = {}
        self.expanded: set[Any] = set()

    def get(self, s: Any) -> tuple[list[tuple[Any, Any]], bool]:
        """``s``'s successors ``(action, target)``, and whether this is its first expansion."""
        cached = self.cache.get(s)
        if cached is None:
            if self.labelled is None:
                cached = (list(self.successors(s)), None)
            else:
                triples = list(self.labelled(s))
                cached = ([(a, t) for a, t, _ in triples], [lb for _, _, lb in triples])
            if len(self.cache) >= self.limit:
                self.cache.clear()
            self.cache[s] = cached
        if s in self.expanded:
            return cached[0], False
        self.expanded.add(s)
        if cached[1] is not None and self.labels is not None:
            counts = self.labels
            for labels in cached[1]:
                for lb in labels:
                    counts[lb] = counts.get(lb, 0) + 1
        self.cov.count(cached[0])
        return cached[0], True


def _defined_together(cls: type, fast: str, slow: str) -> bool:
    """Whether class ``cls`` has method ``fast`` from the class that also gives it ``slow`` (so a
    subclass or a wrapper that redefines ``slow`` alone is not bypassed by an inherited or
    delegated ``fast``).

    >>> class A:
    ...     def f(self): ...
    ...     def g(self): ...
    >>> class B(A):
    ...     def g(self): ...
    >>> _defined_together(A, "f", "g"), _defined_together(B, "f", "g"), _defined_together(int, "f", "g")
    (True, False, False)
    """
    owner = {name: next((k for k in cls.__mro__ if name in k.__dict__), None) for name in (fast, slow)}
    return owner[fast] is not None and owner[fast] is owner[slow]


def label_counting(system: Any, counts: dict[Any, int]) -> Callable[[Any], Iterator[tuple[Any, Any]]] | None:
    """``successors`` of a system that labels its transitions, counting the labels.

    A system may define ``successors_labelled(s)`` yielding ``(action, next_state,
    labels)``, ``labels`` a tuple of coverage labels (tuples of strings, the first
    naming a section: ``("state_machines", "partition", "NewPartition->OnlinePartition")``).
    The returned function yields ``(action, next_state)`` as ``successors`` does and adds
    one to ``counts[label]`` per label of every transition it yields; ``None`` when the
    system has no ``successors_labelled`` (engines then use ``successors`` unchanged). A
    system may instead define ``successors_counted(s, counts)``, which yields ``(action,
    next_state)`` and does that counting itself (the hot path of a labelled model: no
    wrapping generator).

    >>> class Lab:
    ...     def successors_labelled(self, s): return [("a", s + 1, (("sec", "x"),)), ("b", s, ())]
    >>> counts = {}
    >>> [a for a, _ in label_counting(Lab(), counts)(0)], counts
    (['a', 'b'], {('sec', 'x'): 1})
    >>> label_counting(object(), {}) is None
    True
    """
    if _defined_together(type(system), "successors_counted", "successors_labelled"):
        counted = system.successors_counted  # it counts its own labels: one generator fewer
        return lambda s: counted(s, counts)
    labelled = getattr(system, "successors_labelled", None)
    if labelled is None:
        return None

    def successors(s: Any) -> Iterator[tuple[Any, Any]]:
        for a, t, labels in labelled(s):
            if labels:
                for lb in labels:
                    counts[lb] = counts.get(lb, 0) + 1
            yield a, t

    return successors


def nest_labels(counts: dict[Any, int], expected: Iterable[Any] = ()) -> dict[str, Any]:
    """Label counts as nested JSON: ``("a", "b", "c") -> n`` becomes ``{"a": {"b": {"c": n}}}``.

    Labels in ``expected`` (a system's ``coverage_labels()``) that were never counted
    appear with 0. Keys are sorted; elements are turned into strings.

    >>> nest_labels({("elections", "offline", "isr"): 3}, [("elections", "offline", "none")])
    {'elections': {'offline': {'isr': 3, 'none': 0}}}
    """
    merged: dict[tuple[str, ...], int] = {tuple(map(str, k)): 0 for k in expected}
    for k, n in counts.items():
        key = tuple(map(str, k))
        merged[key] = merged.get(key, 0) + n
    out: dict[str, Any] = {}
    for key in sorted(merged):
        node = out
        for part in key[:-1]:
            nxt = node.setdefault(part, {})
            if not isinstance(nxt, dict):  # a shorter label ended here: keep its count under ""
                nxt = node[part] = {"": nxt}
            node = nxt
        leaf = key[-1] if key else ""
        if isinstance(node.get(leaf), dict):
            node[leaf][""] = merged[key]
        else:
            node[leaf] = merged[key]
    return out


def coverage_of(
    cov: Coverage,
    declared: Iterable[str] | None,
    labels: dict[Any, int] | None = None,
    expected_labels: Iterable[Any] = (),
) -> dict[str, Any]:
    """Turn raw per-type counters into the JSON coverage section.

    With ``labels`` (the counts of a system with ``successors_labelled``), the section
    also has ``labels`` (:func:`nest_labels`) and ``labels_never_hit``: the expected
    labels never counted, each as its parts joined by ``/``.
    """
    actions: dict[str, dict[str, int]] = {}
    for tp, n in cov.enabled.items():
        name = action_kind(cov.sample[tp])
        entry = actions.setdefault(name, {"enabled": 0, "new_states": 0})
        entry["enabled"] += n
        entry["new_states"] += cov.new.get(tp, 0)
    out: dict[str, Any] = {"actions": dict(sorted(actions.items()))}
    if declared is not None:
        declared = list(declared)
        out["declared_action_kinds"] = declared
        out["never_enabled"] = [k for k in declared if k not in actions]
        out["undeclared"] = sorted(k for k in actions if k not in declared)
    if labels is not None:
        expected = list(expected_labels)
        out["labels"] = nest_labels(labels, expected)
        hit = {tuple(map(str, k)) for k, n in labels.items() if n}
        out["labels_never_hit"] = sorted(
            "/".join(map(str, k)) for k in expected if tuple(map(str, k)) not in hit
        )
    return out


def declared_labels(system: Any) -> list[Any]:
    """The labels a system declares it can produce (``coverage_labels()``), or []."""
    fn = getattr(system, "coverage_labels", None)
    return list(fn()) if fn is not None else []
