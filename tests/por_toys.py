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


class Op(NamedTuple):
    """One instruction: when variable ``guard`` holds ``value`` (``guard`` -1: always), set
    variable ``target`` to ``(target + add) % 3`` (``add`` 1 or 2) or to ``add - 3`` (3 to 5)."""

    guard: int
    value: int
    target: int
    add: int


class Run(NamedTuple):
    """Process ``proc`` executes its current instruction."""

    proc: int

    def __str__(self) -> str:
        return f"process {self.proc} runs"


class RandomProcs:
    """Processes running straight-line (or, with ``cycle``, looping) programs over shared
    variables 0..2, from a seed: a random test bed for the reduction. State: (pcs, vars)."""

    def __init__(self, seed: int, k: int = 3, nvars: int = 3, length: int = 3) -> None:
        import random

        rnd = random.Random(seed)
        self.k, self.nvars, self.length = k, nvars, length
        self.cycle = tuple(rnd.random() < 0.5 for _ in range(k))
        self.progs = tuple(
            tuple(
                Op(
                    rnd.choice([-1, *range(nvars)]),
                    rnd.randrange(3),
                    rnd.randrange(nvars),
                    rnd.choice([1, 2, 3, 4, 5]),
                )
                for _ in range(length)
            )
            for _ in range(k)
        )
        self.prop_vars = tuple(sorted(rnd.sample(range(nvars), rnd.choice([1, 2]))))
        self.targets = tuple(rnd.randrange(3) for _ in self.prop_vars)

    @classmethod
    def scripted(cls, progs: list[list[Op]], nvars: int, prop_vars: tuple[int, ...]) -> RandomProcs:
        """Straight-line programs given explicitly."""
        p = cls(0, k=len(progs), nvars=nvars, length=len(progs[0]))
        p.progs = tuple(tuple(prog) for prog in progs)
        p.cycle = (False,) * len(progs)
        p.prop_vars, p.targets = prop_vars, (0,) * len(prop_vars)
        return p

    def init_states(self) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        return [((0,) * self.k, (0,) * self.nvars)]

    def successors(self, s: tuple[tuple[int, ...], tuple[int, ...]]) -> Iterator[tuple[Run, Any]]:
        pcs, vs = s
        for i in range(self.k):
            if pcs[i] >= self.length:
                continue
            op = self.progs[i][pcs[i]]
            if op.guard >= 0 and vs[op.guard] != op.value:
                continue
            new = (vs[op.target] + op.add) % 3 if op.add < 3 else op.add - 3
            nvs = (*vs[: op.target], new, *vs[op.target + 1 :])
            pc = pcs[i] + 1
            if self.cycle[i] and pc == self.length:
                pc = 0
            yield Run(i), ((*pcs[:i], pc, *pcs[i + 1 :]), nvs)

    def is_terminal(self, s: Any) -> bool:
        return True

    def properties(self) -> list[Property]:
        """An invariant and a witness over ``prop_vars`` (the variables they read)."""
        pv, tg = self.prop_vars, self.targets
        reads = frozenset(f"v{v}" for v in pv)

        def hit(s: Any) -> bool:
            return all(s[1][v] == t for v, t in zip(pv, tg))

        bad = always("not_hit", lambda s: not hit(s), "the target values are never all held")
        seen = reachable("hit", hit, "the target values are all held")
        return [_with_reads(bad, reads), _with_reads(seen, reads)]

    def por_footprints(self) -> RandomFootprints:
        return RandomFootprints(self)


class RandomFootprints:
    """Footprints of :class:`RandomProcs`: process ``i`` owns ``("pc{i}",)``; an instruction
    reads its guard and target and writes its target."""

    def __init__(self, sys: RandomProcs) -> None:
        self.sys = sys
        self.static = {}
        for i, prog in enumerate(sys.progs):
            r = {(f"pc{i}",)} | {(f"v{op.guard}",) for op in prog if op.guard >= 0}
            w = {(f"pc{i}",)} | {(f"v{op.target}",) for op in prog}
            self.static[i] = _Fp(frozenset(r | w), frozenset(w))

    def class_of(self, a: Run) -> int:
        return a.proc

    def footprint(self, s: Any, a: Run, t: Any, changed: Any = None) -> _Fp:
        op = self.sys.progs[a.proc][s[0][a.proc]]
        r = {(f"pc{a.proc}",), (f"v{op.target}",)} | ({(f"v{op.guard}",)} if op.guard >= 0 else set())
        w = {(f"pc{a.proc}",), (f"v{op.target}",)}
        return _Fp(frozenset(r), frozenset(w))

    def dependent_classes(self, fp: _Fp) -> frozenset[int]:
        return frozenset(i for i, f in self.static.items() if fp.conflicts(f))

    def enabling_classes(self, s: Any, c: int) -> set[int]:
        pc = s[0][c]
        if pc >= self.sys.length:
            return set()  # finished for ever
        guard = self.sys.progs[c][pc].guard
        return {i for i, f in self.static.items() if (f"v{guard}",) in f.writes}

    def changed_locs(self, s: Any, t: Any) -> set[tuple]:
        out = {(f"pc{i}",) for i in range(self.sys.k) if s[0][i] != t[0][i]}
        return out | {(f"v{v}",) for v in range(self.sys.nvars) if s[1][v] != t[1][v]}

    def guard_disabled(self, name: str) -> frozenset[str]:
        return frozenset()
