"""Hypothesis as the shrinker of any counterexample (issue 34, item 1).

A violating trace, from whichever engine found it, becomes one example of a Hypothesis test
whose drawn choices are

1. the configuration's shrinkable keys: each int key as ``integers(lower bound, value)`` and
   each item of a list key as a boolean *keep it* (True in the original);
2. the initial state, when there are several (an index into ``init_states()``);
3. the steps: one integer each, 1 + an index into the **step table** (a fixed list of the
   trace's distinct action texts in order of first use), and 0 to end the trace (so lowering
   a step to 0 cuts the trace there). The table does not change while Hypothesis shrinks, so removing a
   step leaves every other step meaning what it meant; a step that is not enabled when its
   turn comes is skipped, not a failure, so a removal upstream never invalidates the rest.

The test replays those choices and fails (the example is *interesting*) when the same
property is violated, as :mod:`explorer.shrink` judges it. The trace is handed to Hypothesis
through the example database's public interface (:class:`~hypothesis.database.ExampleDatabase`)
as a *secondary* entry (an example that failed before, not a shrunk one, so Hypothesis
shrinks it), and Hypothesis's shrinker (deleting and reordering blocks of choices, lowering
integers, flipping booleans) minimises steps, the table entries they use (a lower entry is
a step first used earlier) and the configuration **together**; of the failing examples it
tries, the one kept has the fewest steps, then the fewest fault steps, then the smallest
configuration. Runs are deterministic (``@seed(0)``).

:func:`hypothesis_shrink` returns the smallest failing example seen (fewest steps, then
fewest fault steps, then the smallest configuration), or None when the trace does not
replay as an example (a Hypothesis whose database format changed: the caller then falls
back to ``ddmin``). It also gives :func:`reproduces`, which the generated pytest test uses to
check that the shrunk trace still fails through Hypothesis.

Example
-------
>>> from explorer.core import always
>>> class Pair:  # two counters; either may increment, or a resets itself
...     def init_states(self): return [(0, 0)]
...     def successors(self, s):
...         a, b = s
...         return [("a+1", (a + 1, b)), ("b+1", (a, b + 1)), ("a=0", (0, b))]
>>> bad = always("a_below_2", lambda s: s[0] < 2, "a stays below 2")
>>> build = lambda values: (Pair(), [bad], dict(values))
>>> out = hypothesis_shrink(build, {}, {}, ["b+1", "a+1", "a=0", "a+1", "b+1", "a+1"], "a_below_2")
>>> out.actions, out.runs > 1
(['a+1', 'a+1'], True)
"""

from __future__ import annotations

import contextlib
import tempfile
import time
import unittest
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from explorer.core import action_kind
from explorer.encoding import fingerprint
from explorer.search.shrinking import (
    Checker,
    ShrinkError,
    config_size,
    minimise_steps,
    replay_actions,
)

__all__ = [
    "HypothesisShrunk",
    "StepsShrunk",
    "hypothesis_home",
    "hypothesis_shrink",
    "reproduces",
    "shrink_steps",
    "shrinkable_keys",
]


@dataclass(frozen=True)
class ShrinkableKeys:
    """The configuration keys Hypothesis may draw: ints with their lower bounds, lists."""

    ints: dict[str, int] = field(default_factory=dict)
    lists: tuple[str, ...] = ()


def shrinkable_keys(
    values: dict[str, Any], config_cls: type | None, fixed: Iterable[str] = ()
) -> ShrinkableKeys:
    """Which keys of ``values`` can shrink: every int (down to its ``min`` bound, else 0)
    and every list (by dropping items), as ``config_cls`` types them; bools, strings and
    enums (variants and mutants) never, nor the ``fixed`` keys.

    >>> shrinkable_keys({"n": 3, "flag": True, "xs": [1, 2], "name": "a"}, None)
    ShrinkableKeys(ints={'n': 0}, lists=('xs',))
    """
    import dataclasses
    import typing

    keep = set(fixed)
    ints: dict[str, int] = {}
    lists: list[str] = []
    if config_cls is not None and dataclasses.is_dataclass(config_cls):
        hints = typing.get_type_hints(config_cls)
        for f in dataclasses.fields(config_cls):
            v = values.get(f.name)
            if f.name in keep:
                continue
            tp = hints.get(f.name)
            if tp is int and isinstance(v, int) and not isinstance(v, bool):
                lo = f.metadata.get("min")
                ints[f.name] = lo if isinstance(lo, int) and lo <= v else min(0, v)
            elif typing.get_origin(tp) is tuple and isinstance(v, list):
                lists.append(f.name)
    else:
        for k, v in values.items():
            if k in keep:
                continue
            if isinstance(v, int) and not isinstance(v, bool):
                ints[k] = min(0, v)
            elif isinstance(v, list):
                lists.append(k)
    return ShrinkableKeys(ints, tuple(lists))


@dataclass
class HypothesisShrunk:
    """The smallest failing example Hypothesis's shrink produced."""

    values: dict[str, Any]
    states: list[Any]
    actions: list[Any]
    runs: int
    seconds: float
    timed_out: bool = False

    @property
    def texts(self) -> list[str]:
        """The steps as action texts (what a trace file and ``replay_actions`` take)."""
        return [str(a) for a in self.actions]


Build = Callable[[dict[str, Any]], tuple[Any, list[Any], dict[str, Any]]]


class _Interesting(Exception):
    """Raised by the test when the drawn example violates the property."""


def _step_table(actions: Sequence[str], kinds: Sequence[Any], faults: set[str]) -> list[str]:
    """The fixed table of step texts, in order of first use (Hypothesis only lowers an index,
    so a step can be replaced by any step first used before it). ``kinds`` and ``faults`` do
    not order it: ordering faults last kept fault steps out of reach as replacements and
    cost length (13 -> 11 steps became 13 -> 13 on a controller variant); fewer faults are
    preferred where it counts, among examples of the same length (:func:`hypothesis_shrink`).
    """
    del kinds, faults
    return list(dict.fromkeys(actions))


def _choices(
    values: dict[str, Any], keys: ShrinkableKeys, init_index: int | None, steps: Sequence[int]
) -> tuple[Any, ...]:
    """The choice sequence that the test draws for the original example."""
    out: list[Any] = [values[k] for k in keys.ints]
    for k in keys.lists:
        out.extend(True for _ in values[k])
    if init_index is not None:
        out.append(init_index)
    out.extend(i + 1 for i in steps)
    out.append(0)
    return tuple(out)


class _SeedDatabase:
    """An example database that offers one example as a previously failing (secondary) one,
    so Hypothesis replays it first and shrinks it, and keeps nothing Hypothesis saves."""

    def __new__(cls, seed: bytes) -> Any:
        from hypothesis.database import ExampleDatabase

        class SeedDatabase(ExampleDatabase):
            def fetch(self, key: bytes) -> Iterable[bytes]:
                if key.endswith(b".secondary"):
                    yield seed

            def save(self, key: bytes, value: bytes) -> None:
                pass

            def delete(self, key: bytes, value: bytes) -> None:
                pass

            def move(self, src: bytes, dest: bytes, value: bytes) -> None:
                pass

        return SeedDatabase()


@contextlib.contextmanager
def hypothesis_home() -> Iterator[str]:
    """Run Hypothesis with its home (``.hypothesis``: the default example database, the cache
    of the local modules' constants, ...) in a temporary folder, deleted on leaving: nothing of
    it is left in the working directory, which is the user's. An example database given by
    path is kept where it says; the previous home is restored.

    >>> import os
    >>> from hypothesis.configuration import storage_directory
    >>> with hypothesis_home() as home:
    ...     inside = str(storage_directory("constants").path).startswith(home)
    >>> inside, os.path.exists(home)
    (True, False)
    """
    from hypothesis import configuration

    old = getattr(configuration, "__hypothesis_home_directory", None)
    with tempfile.TemporaryDirectory(prefix="kafka-mc-hypothesis-") as home:
        configuration.set_hypothesis_home_dir(home)
        try:
            yield home
        finally:
            configuration.set_hypothesis_home_dir(old)


def hypothesis_shrink(
    build: Build,
    values: dict[str, Any],
    keys: ShrinkableKeys | dict[str, Any],
    actions: Sequence[str],
    property_name: str,
    *,
    init_fp: str | None = None,
    kinds: Sequence[Any] = (),
    faults: Iterable[str] = (),
    max_seconds: float = 60.0,
    size_of: Callable[[dict[str, Any]], int] | None = None,
    shrink: bool = True,
    alphabet: Sequence[str] = (),
    alphabet_kinds: Sequence[Any] = (),
) -> HypothesisShrunk | None:
    """Shrink a violating trace (action texts from an initial state) and the configuration's
    ``keys`` together with Hypothesis; None if the trace does not fail as an example.

    ``build(values)`` returns ``(system, properties, values)`` and raises ConfigError,
    ValueError or TypeError for a configuration it refuses; ``faults`` are the action kinds
    to avoid (``kinds[i]`` is the kind of ``actions[i]``). ``max_seconds`` bounds the shrink:
    after it, the best example so far is returned with ``timed_out``. With ``shrink=False``
    the example is only replayed through Hypothesis (:func:`reproduces`). ``alphabet`` (with
    ``alphabet_kinds``) puts step texts in the table ahead of the trace's own, for example
    the original trace's steps when ``actions`` is already ddmin's result (Hypothesis only
    lowers an index, so a step can be replaced by the entries before it).

    >>> from explorer.core import always
    >>> class Up:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("up", s + 1), ("down", s - 1)]
    >>> p = always("below_2", lambda s: s < 2, "")
    >>> hypothesis_shrink(lambda v: (Up(), [p], v), {}, {}, ["up", "down", "up", "up"], "below_2").texts
    ['up', 'up']
    """
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis import strategies as st
    from hypothesis.database import choices_to_bytes
    from hypothesis.errors import HypothesisException
    from hypothesis.reporting import with_reporter

    from explorer.config import ConfigError

    if isinstance(keys, dict):
        keys = ShrinkableKeys()
    size = size_of or config_size
    fault_set = set(faults)
    table = _step_table([*alphabet, *actions], [*alphabet_kinds, *kinds], fault_set)
    index = {t: i for i, t in enumerate(table)}
    start = time.monotonic()
    deadline = start + max_seconds
    built: dict[str, Any] = {}

    def system_for(vals: dict[str, Any]) -> Any:
        k = repr(sorted(vals.items()))
        got = built.get(k)
        if got is None:
            try:
                system, props, vals2 = build(dict(vals))
                checker = Checker(system, props, property_name)
                inits = list(system.init_states())
            except (ConfigError, ValueError, TypeError, LookupError, ShrinkError):
                # a configuration the model refuses, or one without the property: not a candidate
                got = False
            else:
                got = (system, checker, vals2, inits, {})
            if len(built) > 256:
                built.clear()
            built[k] = got
        return got

    first = system_for(values)
    if not first:
        return None
    inits0 = first[3]
    init_index: int | None = None
    if len(inits0) > 1:
        fps = [f"{fingerprint(s):016x}" for s in inits0]
        init_index = fps.index(init_fp) if init_fp in fps else 0
    orig_choices = _choices(values, keys, init_index, [index[t] for t in actions])
    best: list[HypothesisShrunk] = []
    runs = [0]

    def rank(h: HypothesisShrunk) -> tuple[int, int, int]:
        nf = sum(1 for a in h.actions if _kind(a) in fault_set)
        return (len(h.actions), nf, size(h.values))

    def test(data: Any) -> None:
        runs[0] += 1
        if time.monotonic() > deadline:
            return  # out of time: nothing more is interesting; the best so far stands
        vals = dict(values)
        for k, lo in keys.ints.items():
            vals[k] = data.draw(st.integers(lo, values[k]))
        for k in keys.lists:
            vals[k] = [item for item in values[k] if data.draw(st.booleans())]
        got = system_for(vals)
        multi = init_index is not None
        idx = data.draw(st.integers(0, len(inits0) - 1)) if multi else 0
        picks: list[int] = []
        step = st.integers(0, len(table))
        while (i := data.draw(step)) != 0:  # one choice a step: 0 ends the trace
            picks.append(i - 1)
        if not got:
            return
        system, checker, vals2, inits, succ_cache = got
        s = inits[min(idx, len(inits) - 1)]
        states: list[Any] = [s]
        acts: list[Any] = []

        def successors(x: Any) -> list[tuple[Any, Any]]:
            out = succ_cache.get(x)
            if out is None:
                out = list(system.successors(x))
                if len(succ_cache) > 50_000:
                    succ_cache.clear()
                succ_cache[x] = out
            return out

        need = checker.kind == "deadlock"
        if checker.state_bad(s, successors(s) if need else None):
            _found(vals2, states, acts)
        for i in picks:
            text = table[i]
            same = [(a, t) for a, t in successors(s) if str(a) == text]
            if not same:
                continue  # not enabled here: skipped, the later steps keep their meaning
            a, t = next(
                (
                    (a, t)
                    for a, t in same
                    if checker.step_bad(s, a, t) or (checker.kind == "always" and checker.state_bad(t, None))
                ),
                same[0],
            )
            states.append(t)
            acts.append(a)
            if checker.step_bad(s, a, t):
                _found(vals2, states, acts)
            s = t
            if checker.state_bad(s, successors(s) if need else None):
                _found(vals2, states, acts)

    def _found(vals: dict[str, Any], states: list[Any], acts: list[Any]) -> None:
        h = HypothesisShrunk(dict(vals), list(states), list(acts), 0, 0.0)
        if not best or rank(h) < rank(best[0]):
            best[:] = [h]
        raise _Interesting

    # ``seed`` first: it resets the database, which the settings applied after it restore
    wrapped = settings(
        database=_SeedDatabase(choices_to_bytes(orig_choices)),
        phases=[Phase.reuse, Phase.shrink] if shrink else [Phase.reuse],
        deadline=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
        max_examples=10**6,
    )(seed(0)(given(st.data())(test)))
    try:
        with with_reporter(lambda _msg: None), hypothesis_home():  # nothing left in the cwd
            wrapped()
    except _Interesting:
        pass
    except HypothesisException:  # e.g. flaky at the deadline: the best example so far stands
        pass
    except unittest.SkipTest:  # no example ran: the database entry did not decode
        pass
    if not best:
        return None
    out = best[0]
    out.runs = runs[0]
    out.seconds = time.monotonic() - start
    out.timed_out = time.monotonic() > deadline
    return out


def _kind(action: Any) -> str:
    return action_kind(action)


def reproduces(build: Build, values: dict[str, Any], actions: Sequence[str], property_name: str) -> bool:
    """Whether the trace fails as a Hypothesis example (replayed, not shrunk): what the
    generated pytest test of ``kafka-mc shrink`` checks besides its plain replay.

    >>> from explorer.core import always
    >>> class Up:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("up", s + 1)]
    >>> p = always("below_2", lambda s: s < 2, "")
    >>> reproduces(lambda v: (Up(), [p], v), {}, ["up", "up"], "below_2")
    True
    >>> reproduces(lambda v: (Up(), [p], v), {}, ["up"], "below_2")
    False
    """
    out = hypothesis_shrink(build, values, ShrinkableKeys(), actions, property_name, shrink=False)
    return out is not None and out.texts == list(actions)


@dataclass
class StepsShrunk:
    """What :func:`shrink_steps` made of a trace: its states and actions, and what each phase did."""

    states: list[Any]
    actions: list[Any]
    notes: list[str] = field(default_factory=list)


def shrink_steps(
    system: Any,
    checker: Checker,
    actions: Sequence[str],
    init_fp: str | None = None,
    *,
    shortest: Callable[[int], tuple[list[Any], list[Any]] | None] | None = None,
    use_hypothesis: bool = True,
    max_seconds: float = 30.0,
) -> StepsShrunk:
    """Shrink a violating trace's steps in a fixed system (its configuration is not changed):
    ddmin (fault steps first), then ``shortest(bound)`` (a bounded search for a trace of at
    most ``bound`` steps, e.g. a bfs), then Hypothesis over a table of the trace's steps
    (:mod:`explorer.search.shrink_hypothesis`), then ddmin again. Raises :class:`ShrinkError`
    when the trace does not replay to a violation. ``str(action)`` of the results are texts
    that :func:`replay_actions` replays.
    """
    deadline = time.monotonic() + max_seconds
    got = replay_actions(system, checker, list(actions), init_fp)
    if got is None:
        raise ShrinkError(f"the trace does not replay to a violation of {checker.name}")
    acts_obj = got[1]
    faults = set(getattr(system, "fault_kinds", tuple)())
    kinds = [action_kind(a) for a in acts_obj]
    texts = [str(a) for a in acts_obj]
    alphabet = list(texts)
    notes: list[str] = []
    acts = minimise_steps(system, checker, texts, init_fp, kinds, faults, deadline)
    notes.append(f"steps: {len(actions)} -> {len(acts)} by ddmin")
    best = replay_actions(system, checker, acts, init_fp)
    assert best is not None
    if shortest is not None and len(best[1]) > 1 and time.monotonic() < deadline:
        found = shortest(len(best[1]) - 1)
        if found is not None and len(found[1]) < len(best[1]):
            notes.append(f"bfs: a shorter trace ({len(best[1])} -> {len(found[1])} steps)")
            best = found
    if use_hypothesis and len(best[1]) > 1 and time.monotonic() < deadline:
        fp = f"{fingerprint(best[0][0]):016x}"
        h = hypothesis_shrink(
            lambda values: (system, checker.props, dict(values)),
            {},
            ShrinkableKeys(),
            [str(a) for a in best[1]],
            checker.name,
            init_fp=fp,
            kinds=[action_kind(a) for a in best[1]],
            faults=faults,
            max_seconds=max(deadline - time.monotonic(), 0.0),
            alphabet=alphabet,
            alphabet_kinds=kinds,
        )
        if h is not None and len(h.actions) < len(best[1]):
            notes.append(f"steps: {len(best[1])} -> {len(h.actions)} by Hypothesis ({h.runs} runs)")
            polished = minimise_steps(
                system, checker, h.texts, fp, [action_kind(a) for a in h.actions], faults, deadline
            )
            best = replay_actions(system, checker, polished, fp) or (h.states, h.actions)
    return StepsShrunk(list(best[0]), list(best[1]), notes)
