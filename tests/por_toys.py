"""Toy systems with declared footprints, for the partial-order reduction tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from explorer.core import Property, always, reachable


class Step(NamedTuple):
    """Process ``proc`` takes one step."""

    proc: int

    def __str__(self) -> str:
        return f"process {self.proc} steps"


class _Fp(NamedTuple):
    reads: frozenset
    writes: frozenset

    def conflicts(self, other: _Fp) -> bool:
        return bool(self.writes & (other.reads | other.writes) or other.writes & self.reads)


class ProcFootprints:
    """The footprints of :class:`Procs`: process ``i`` reads and writes location ``("p{i}",)``."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.static = {i: _Fp(frozenset({(f"p{i}",)}), frozenset({(f"p{i}",)})) for i in range(k)}

    def class_of(self, a: Step) -> int:
        return a.proc

    def footprint(self, s: Any, a: Step, t: Any, changed: Any = None) -> _Fp:
        return self.static[a.proc]

    def dependent_classes(self, fp: _Fp) -> frozenset[int]:
        return frozenset(i for i, f in self.static.items() if fp.conflicts(f))

    def enabling_classes(self, s: Any, c: int) -> set[int]:
        return set()  # a finished process never runs again

    def changed_locs(self, s: tuple[int, ...], t: tuple[int, ...]) -> set[tuple]:
        return {(f"p{i}",) for i in range(self.k) if s[i] != t[i]}

    def guard_disabled(self, name: str) -> frozenset[str]:
        return frozenset()


class PlainProcs:
    """``k`` independent processes, each counting to ``n``; with ``cycle``, process 0 counts
    modulo ``n`` for ever (so the reduced search must not ignore the others). No footprints."""

    def __init__(self, k: int = 3, n: int = 3, cycle: bool = False) -> None:
        self.k, self.n, self.cycle = k, n, cycle

    def init_states(self) -> list[tuple[int, ...]]:
        return [(0,) * self.k]

    def successors(self, s: tuple[int, ...]) -> Iterator[tuple[Step, tuple[int, ...]]]:
        for i in range(self.k):
            if self.cycle and i == 0:
                yield Step(0), ((s[0] + 1) % self.n, *s[1:])
            elif s[i] < self.n:
                yield Step(i), (*s[:i], s[i] + 1, *s[i + 1 :])

    def is_terminal(self, s: tuple[int, ...]) -> bool:
        return True

    def properties(self, last: int | None = None) -> list[Property]:
        """Process ``last`` (default the last one) must stay below ``n`` (it does not), and
        a witness that it gets to ``n - 1``; both read only its location."""
        i = self.k - 1 if last is None else last
        reads = frozenset({f"p{i}"})
        bad = always(f"p{i}_below_n", lambda s: s[i] < self.n, "process stays below n")
        seen = reachable(f"p{i}_near_n", lambda s: s[i] == self.n - 1, "process gets near n")
        return [_with_reads(bad, reads), _with_reads(seen, reads)]


def _with_reads(p: Property, reads: frozenset[str]) -> Property:
    import dataclasses

    return dataclasses.replace(p, reads=reads)


class Procs(PlainProcs):
    """:class:`PlainProcs` with its footprints declared."""

    def por_footprints(self) -> ProcFootprints:
        return ProcFootprints(self.k)
