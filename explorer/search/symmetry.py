"""Symmetry reduction for the exhaustive search (``--reduce symmetry``): every new state is
replaced by the representative of its orbit under the permutations the system declares, so
the search visits one state per orbit; counterexamples are mapped back to real traces.

A system supports the reduction when it has ``symmetries()``: the permutations other than
the identity of a group of renamings (of brokers, partitions, topics, ...) that map its
initial states onto themselves and commute with its rules: for every state ``s`` and
declared ``g``, the successor states of ``g(s)`` are the images under ``g`` of the
successor states of ``s``. Each ``g`` is a callable from state to state. Every property
checked must say it gives the same verdict on a state (or step) and on its images
(:attr:`explorer.core.Property.symmetric`); otherwise the reduction is off for the run, with
a note, as it is with ``eventually`` properties (the quotient graph does not keep the
cycles their fairness is judged on) and for a system that declares no symmetry.

The representative of ``s`` is the least of ``s`` and its images by canonical encoding
(:func:`explorer.encoding.encode`, injective, so the order is total): the same for every
state of one orbit, since the declared permutations and the identity form a group. Why the
reduced search gives the full search's verdicts: the orbits' graph (an edge between two
orbits when some state of one has a successor in the other) has the same paths from the
initial states as the full graph, up to renaming; a symmetric property holds on all of an
orbit or on none of it. So every violated property, witness and deadlock is found, at the
same breadth-first depth (the shortest counterexamples keep their length).

Example
-------
>>> class Pair:  # two interchangeable counters, each counting to 2
...     def init_states(self): return [(0, 0)]
...     def successors(self, s):
...         return [(("inc", i), s[:i] + (s[i] + 1,) + s[i + 1:]) for i in (0, 1) if s[i] < 2]
...     def symmetries(self): return [lambda s: (s[1], s[0])]
>>> canon, _ = symmetry_setup(Pair(), [], "symmetry")
>>> canon((2, 0)), canon((0, 2))
((0, 2), (0, 2))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from explorer import speedups
from explorer.core import Property, PropertyKind, TraceStep
from explorer.encoding import encode
from explorer.search.traces import build_trace, trace_step

__all__ = [
    "Canonicaliser",
    "build_trace_symmetric",
    "liveness_refusal",
    "path_trace",
    "reason_off",
    "symmetry_notes",
    "symmetry_setup",
]


def reason_off(system: Any, properties: Iterable[Property]) -> str | None:
    """Why symmetry reduction cannot run on ``system`` with ``properties`` (None: it can).

    >>> reason_off(object(), [])
    'the system declares no symmetries (symmetries())'
    """
    if not hasattr(system, "symmetries"):
        return "the system declares no symmetries (symmetries())"
    props = list(properties)
    live = [p.name for p in props if p.kind is PropertyKind.EVENTUALLY]
    if live:
        return f"eventually properties ({', '.join(live)}) need the full graph"
    asym = [p.name for p in props if not p.symmetric]
    if asym:
        return f"properties not declared symmetric: {', '.join(asym)}"
    return None


def liveness_refusal(system: Any, properties: Iterable[Property]) -> str | None:
    """Why ``--reduce symmetry`` is refused for a run with ``eventually`` (and leads-to)
    properties on a system that declares symmetries (None: no such property, or no symmetry
    to reduce by: the run is then the full one, with :func:`symmetry_setup`'s note).

    A lasso of the quotient graph lifts to a real lasso (its loop repeated until the composed
    renaming is the identity) and ``P``, ``Q`` read the same on an orbit when symmetric, but weak
    fairness is per action value: the renaming that maps a real state to its representative
    maps an action enabled all along a real loop to different actions of the representatives,
    so a loop fair in the quotient may starve an action in the full graph and a fair real loop
    may look unfair in the quotient. Refusing is the sound answer (docs/reduction.md).

    >>> from explorer.core import eventually
    >>> class Sym:
    ...     def symmetries(self): return [abs]
    >>> liveness_refusal(Sym(), [eventually("done", bool, "")])[:52]
    '--reduce symmetry: refused for eventually and leads-'
    >>> liveness_refusal(object(), [eventually("done", bool, "")]) is None
    True
    """
    live = [p.name for p in properties if p.kind is PropertyKind.EVENTUALLY]
    if not live or not hasattr(system, "symmetries"):
        return None
    return (
        f"--reduce symmetry: refused for eventually and leads-to properties ({', '.join(live)}): weak "
        "fairness is per action and a renaming maps the actions of a real loop to other actions of the "
        "representatives, so the quotient's lassos are not the full graph's (check them without "
        "--reduce, or leave them out with --properties)"
    )


class Canonicaliser:
    """Maps a state to its orbit's representative under ``perms`` (plus the identity).

    Counters: ``calls`` states canonicalised, ``moved`` of them whose representative is
    another state of their orbit.

    >>> c = Canonicaliser([lambda s: (s[1], s[0])])
    >>> c((1, 0)), c((0, 1)), c.calls, c.moved
    ((0, 1), (0, 1), 2, 1)
    """

    def __init__(self, perms: Iterable[Callable[[Any], Any]]) -> None:
        self.perms = list(perms)
        self.calls = 0
        self.moved = 0
        # the C encoder when built: the same bytes as explorer.encoding.encode (tested there)
        self.encode: Callable[[Any], bytes] = speedups.encode if speedups.ACTIVE else encode

    def __call__(self, s: Any) -> Any:
        self.calls += 1
        enc = self.encode
        best, key = s, None
        for g in self.perms:
            lazy = getattr(g, "smaller_image", None)
            if lazy is not None:  # the model decides without building the whole image
                t = lazy(s, best, enc)
                if t is not None:
                    best, key = t, None
                continue
            t = g(s)
            k = enc(t)
            if key is None:
                key = enc(best)
            if k < key:
                best, key = t, k
        if best is not s:
            self.moved += 1
        return best


def symmetry_setup(
    system: Any, properties: Iterable[Property], reduce: str
) -> tuple[Canonicaliser | None, list[str]]:
    """The canonicaliser of a search run with ``reduce`` (None: states are kept as they are)
    and the notes that say why it is off, when it is.

    >>> symmetry_setup(object(), [], "symmetry")
    (None, ['reduce symmetry: off for this run: the system declares no symmetries (symmetries())'])
    >>> symmetry_setup(object(), [], "none")
    (None, [])
    """
    if reduce != "symmetry":
        return None, []
    props = list(properties)
    why = reason_off(system, props)
    if why is not None:
        return None, [f"reduce symmetry: off for this run: {why}"]
    perms = list(system.symmetries())
    if not perms:
        return None, [
            "reduce symmetry: off for this run: the configuration has no symmetry "
            "(the system declares no permutation but the identity)"
        ]
    return Canonicaliser(perms), []


def symmetry_notes(canon: Canonicaliser | None) -> list[str]:
    """The result's note about a reduced search (none when it was not reduced).

    >>> symmetry_notes(Canonicaliser([abs]))[0][:59]
    'reduce symmetry: a group of 2 permutations; 0 of 0 states c'
    >>> symmetry_notes(None)
    []
    """
    if canon is None:
        return []
    return [
        f"reduce symmetry: a group of {len(canon.perms) + 1} permutations; {canon.moved} of "
        f"{canon.calls} states canonicalised were replaced by their representative; coverage "
        "counts the representatives' expansions"
    ]


def build_trace_symmetric(
    system: Any,
    parents: dict[Any, Any],
    end: Any,
    canon: Canonicaliser,
    extra: tuple[Any, Any] | None = None,
    last_step_fails: Callable[[Any, Any, Any], bool] | None = None,
) -> list[TraceStep]:
    """A real trace of ``system`` to a state of ``end``'s orbit, from the reduced search's
    ``parents`` (representatives): replayed from the initial representative, each step the
    first successor whose representative is the next one on the path. With ``extra``
    (a violating step ``(action, target)`` from ``end``), the trace ends with the step of the
    real last state that ``last_step_fails`` (the violated transition property) rejects
    among those leading into ``extra``'s orbit.

    Raises ``RuntimeError`` when no step matches: the system's declared symmetries are not
    symmetries of its rules.

    >>> class Pair:
    ...     def init_states(self): return [(0, 0)]
    ...     def successors(self, s):
    ...         return [(("inc", i), s[:i] + (s[i] + 1,) + s[i + 1:]) for i in (0, 1) if s[i] < 2]
    >>> c = Canonicaliser([lambda s: (s[1], s[0])])
    >>> parents = {(0, 0): None, (0, 1): (0, 0), (1, 1): (0, 1)}
    >>> [st.action for st in build_trace_symmetric(Pair(), parents, (1, 1), c)]
    [None, "('inc', 0)", "('inc', 1)"]
    """
    path = [end]
    while (p := parents[path[-1]]) is not None:
        path.append(p)
    path.reverse()
    steps: list[TraceStep] = []
    prev: Any = None
    for i, rep in enumerate(path):
        if prev is None:
            real, act = rep, None  # the representative of an initial state is an initial state
        else:
            found = next(((a, t) for a, t in system.successors(prev) if canon(t) == rep), None)
            if found is None:
                raise RuntimeError(
                    f"step {i}: no successor in the orbit of the reduced search's state; "
                    "are the system's symmetries() symmetries of its rules?"
                )
            act, real = found
        steps.append(trace_step(i, prev, act, real))
        prev = real
    if extra is not None:
        target = canon(extra[1])
        last = next(
            (
                (a, t)
                for a, t in system.successors(prev)
                if canon(t) == target and (last_step_fails is None or last_step_fails(prev, a, t))
            ),
            None,
        )
        if last is None:
            raise RuntimeError(
                "the violating step has no counterpart from the real trace's last state; "
                "are the system's symmetries() symmetries of its rules and properties?"
            )
        steps.append(trace_step(len(path), prev, last[0], last[1]))
    return steps


def path_trace(
    system: Any,
    path: list[Any],
    canon: Canonicaliser | None,
    extra: tuple[Any, Any] | None = None,
    prop: Property | None = None,
) -> list[TraceStep]:
    """The counterexample along a search's ``path`` of states from an initial one (then the
    step ``extra`` from its last state), actions recovered through ``successors``; with
    ``canon`` the path is of representatives, mapped back to real states (for a transition
    ``prop``, the last step one that the property rejects: :func:`build_trace_symmetric`).

    >>> class Line:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("inc", s + 1)]
    >>> [st.action for st in path_trace(Line(), [0, 1, 2], None, ("inc", 3))]
    [None, 'inc', 'inc', 'inc']
    """
    parents = {s: (path[i - 1] if i else None) for i, s in enumerate(path)}
    if canon is None:
        return build_trace(system, parents, path[-1], extra)
    fails = None
    if prop is not None and prop.kind is PropertyKind.TRANSITION:
        chk, guard = prop.check, prop.guard
        fails = lambda s, a, t: (guard is None or guard(s, a, t)) and not chk(s, a, t)  # noqa: E731
    return build_trace_symmetric(system, parents, path[-1], canon, extra, fails)
