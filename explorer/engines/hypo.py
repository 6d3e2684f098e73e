"""The ``hypothesis`` engine: any TransitionSystem as a Hypothesis ``RuleBasedStateMachine``.

:func:`state_machine_for` turns a system and its properties into a state machine
class: ``@initialize`` picks an initial state; there is **one rule per action kind** the
system lists (``action_kinds()``), enabled by a precondition when the current state has a
step of that kind, whose parameters are drawn field by field (which broker, which session:
:func:`choose`), so removing a step while shrinking leaves the others meaning what they
meant (a choice names a kind and a broker, not a position in the successor list); steps of
kinds the system does not list go through one generic rule (``step``, an index into
those successors); each ``always`` property is an ``@invariant`` (one per property),
``transition`` properties are checked on the step taken, and a state without successors
fails as a deadlock unless the system calls it terminal (``idle`` then does nothing).
Each run reports the number of states no run had reached before to ``hypothesis.target``,
so generation leans toward runs that find new states.
A failure raises :class:`PropertyFailure`, which carries the run's states and
actions.

:func:`check_hypothesis` runs that machine under a settings profile and returns a
:class:`~explorer.core.CheckResult` (``engine="hypothesis"``). When a property
fails, the failing run (cycles cut, as in ``simulate``) goes through the shrinker every
counterexample goes through (:func:`explorer.shrink.shrink_trace`: ddmin, a bounded bfs,
then Hypothesis over a fixed table of the run's steps; Hypothesis's own shrinking of a
whole state-machine run is far slower, see ``check_hypothesis``); the result is a trace in
the same :class:`~explorer.core.TraceStep` format as ``bfs``, so ``kafka-mc replay``
accepts it.

Every failure found is kept in Hypothesis's example database (a
:class:`~hypothesis.database.DirectoryBasedExampleDatabase`, by default
``.hypothesis/examples`` under the working directory; pass ``database=`` a directory,
an ``ExampleDatabase`` or ``False``) under a key derived from the model name, its
configuration, its property names and its initial states' fingerprints, and is
replayed first the next time the same check runs.

Profiles (registered with :func:`hypothesis.settings.register_profile`):

``quick``
    the default test run: 25 examples of at most 30 steps, no deadline;
``thorough``
    for releases: 1000 examples of at most 200 steps, no deadline.

Like ``simulate``, this engine never shows that a property holds: without a
violation the exit reason is ``budget_exhausted`` with ``budget="max_examples"``
(exit code 3). ``distinct_states`` counts the distinct states any run visited,
``generated_states`` the steps taken, over every run Hypothesis made (generation
and shrinking).

Example
-------
>>> from explorer.core import always
>>> class Line:
...     def init_states(self): return [0]
...     def successors(self, s): return [("up", s + 1), ("stay", s)] if s < 6 else []
...     def is_terminal(self, s): return s == 6
>>> r = check_hypothesis(Line(), [always("lt4", lambda s: s < 4, "")], seed=1, database=False)
>>> r.violations[0].length, [s.action for s in r.violations[0].trace][1:]
(4, ['up', 'up', 'up', 'up'])
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import unittest
from collections.abc import Iterable
from typing import Any

from hypothesis import HealthCheck, Phase, settings, target
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.reporting import with_reporter
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from explorer.core import (
    CheckResult,
    ExitReason,
    Property,
    PropertyKind,
    action_kind,
    config_to_dict,
)
from explorer.encoding import fingerprint
from explorer.engines.base import CheckOptions
from explorer.engines.options import HYPOTHESIS_PROFILES, HypothesisOptions
from explorer.search import DEADLOCK_PROPERTY, cut_cycles, polled, sampled_result, stop_requested, trace_steps
from explorer.search.coverage import Expansions
from explorer.search.results import Finding, Sampled
from explorer.tracefile import ReplayError, replay_steps

__all__ = [
    "DEFAULT_DATABASE_DIR",
    "PROFILES",
    "PropertyFailure",
    "check_hypothesis",
    "database_key",
    "run",
    "state_machine_for",
]

#: where failing examples are kept unless ``database=`` says otherwise
DEFAULT_DATABASE_DIR = os.path.join(".hypothesis", "examples")

_COMMON: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": list(HealthCheck),
    "report_multiple_bugs": False,
    "print_blob": False,
}
#: the settings profiles this module registers, by name
PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"max_examples": 25, "stateful_step_count": 30, **_COMMON},
    "thorough": {"max_examples": 1000, "stateful_step_count": 200, **_COMMON},
}
assert tuple(PROFILES) == HYPOTHESIS_PROFILES  # the names the options check before a run
for _name, _kw in PROFILES.items():
    settings.register_profile(_name, **_kw)


class PropertyFailure(AssertionError):
    """A property failed in a state-machine run; carries the run's states and actions.

    ``states[i + 1]`` follows ``states[i]`` by ``actions[i]``; for a ``transition``
    property the last step is the bad one.
    """

    def __init__(self, prop: Property, message: str, states: list[Any], actions: list[Any]):
        super().__init__(f"{prop.name} ({prop.kind.value}): {message} after {len(actions)} steps")
        self.prop = prop
        self.message = message
        self.states = states
        self.actions = actions


class _Stats(Sampled):
    """What every run of one machine class saw (shared by its instances): what the result
    reports (:class:`~explorer.search.results.Sampled`), the runs."""

    def __init__(self) -> None:
        super().__init__()
        self.runs = 0
        #: when the run stops (``max_seconds``), and its progress line (``check_hypothesis``)
        self.deadline: float | None = None
        self.progress: Any = None
        self.started = time.perf_counter()

    def tick(self) -> None:
        """Every 64 steps: stop on a signal (:class:`KeyboardInterrupt`) or at the deadline
        (:class:`_OutOfTime`), and update the progress line."""
        if self.steps & 63:
            return
        if stop_requested() is not None:
            raise KeyboardInterrupt
        now = time.perf_counter()
        if self.deadline is not None and now >= self.deadline:
            raise _OutOfTime
        if self.progress is not None:
            rate = self.steps / max(now - self.started, 1e-9)
            self.progress.show(
                f"example {self.runs}  steps {self.steps:,}  distinct {len(self.visited):,}  {rate:,.0f} steps/s"
            )


class _OutOfTime(KeyboardInterrupt):
    """``max_seconds`` ran out in a step (a KeyboardInterrupt, which Hypothesis lets through at
    once: any other exception would be a failure of the example, to replay and shrink)."""


def _method_name(prop_name: str, taken: set[str], prefix: str = "inv_") -> str:
    base = prefix + (re.sub(r"\W", "_", prop_name) or "property")
    name, i = base, 2
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name


def _value_key(v: Any) -> tuple[int, int, str]:
    """An order of parameter values: ints by value, then anything else by its text."""
    if isinstance(v, int) and not isinstance(v, bool):
        return (0, v, "")
    return (1, 0, repr(v))


def _fields(action: Any) -> tuple[str, ...]:
    """The parameter names of an action: a NamedTuple's or a dataclass's fields, else none."""
    names = getattr(type(action), "_fields", None)
    if isinstance(names, tuple):
        return names
    dc_fields = getattr(type(action), "__dataclass_fields__", None)
    return tuple(dc_fields) if isinstance(dc_fields, dict) else ()


def choose(data: Any, kind: str, cands: list[tuple[Any, Any]]) -> tuple[Any, Any]:
    """Draw one of the enabled steps ``cands`` of one kind, parameter by parameter.

    Each field of the action (``broker``, then ``session``...) is drawn from the values the
    enabled steps have there, in a fixed order (ints by value), so the draw names a broker,
    not a position in the successor list; what the fields leave open is drawn by index.

    >>> from typing import NamedTuple
    >>> class Crash(NamedTuple):
    ...     broker: int
    >>> from hypothesis import given, strategies as st
    >>> seen = set()
    >>> @given(st.data())
    ... def t(data):
    ...     seen.add(choose(data, "Crash", [(Crash(2), "s2"), (Crash(0), "s0")])[0].broker)
    >>> t()
    >>> sorted(seen)
    [0, 2]
    """
    if len(cands) == 1:
        return cands[0]
    names = _fields(cands[0][0])
    if names and all(_fields(a) == names for a, _ in cands):
        for f in names:
            values = sorted({_value_key(getattr(a, f)): getattr(a, f) for a, _ in cands}.items())
            if len(values) > 1:
                keys = [k for k, _ in values]
                k = data.draw(st.sampled_from(keys), label=f"{kind}.{f}")
                cands = [(a, t) for a, t in cands if _value_key(getattr(a, f)) == k]
            if len(cands) == 1:
                return cands[0]
    cands = sorted(cands, key=lambda c: str(c[0]))
    return cands[data.draw(st.integers(0, len(cands) - 1), label=kind)]


def state_machine_for(
    system: Any,
    properties: Iterable[Property],
    *,
    deadlock: bool = True,
    name: str = "TransitionSystemMachine",
    per_kind: bool = True,
) -> type[RuleBasedStateMachine]:
    """Build a ``RuleBasedStateMachine`` class that walks ``system`` and checks ``properties``.

    The class has an attribute ``stats`` with what its runs saw (visited states,
    steps, coverage). Run it like any Hypothesis state machine, for example as a
    test case: ``TestMyModel = state_machine_for(system, props).TestCase``.

    >>> from hypothesis import settings
    >>> from hypothesis.stateful import run_state_machine_as_test
    >>> from explorer.core import always
    >>> class Two:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("inc", s + 1)] if s < 2 else []
    ...     def is_terminal(self, s): return s == 2
    >>> M = state_machine_for(Two(), [always("small", lambda s: s <= 2, "")])
    >>> run_state_machine_as_test(M, settings=settings(max_examples=5, database=None))
    >>> M.stats.visited == {0, 1, 2}
    True
    """
    props = list(properties)
    always_p = [p for p in props if p.kind is PropertyKind.ALWAYS]
    trans_p = [p for p in props if p.kind is PropertyKind.TRANSITION]
    reach_p = [p for p in props if p.kind is PropertyKind.REACHABLE]
    inits = list(system.init_states())
    if not inits:
        raise ValueError("the system has no initial state")
    is_terminal = getattr(system, "is_terminal", None)
    stats = _Stats()
    expansions = Expansions(system, stats.cov)
    stats.labels = expansions.labels
    for p in props:
        if p.applies is not None and p.kind in (PropertyKind.ALWAYS, PropertyKind.TRANSITION):
            stats.applies[p.name] = 0
    kinds_cache: dict[Any, frozenset[str]] = {}
    kinds_list = list(dict.fromkeys(getattr(system, "action_kinds", tuple)())) if per_kind else []
    listed = frozenset(kinds_list)
    taken_rule_names: set[str] = {"init", "step", "idle", "teardown"}
    rule_names = {k: _method_name(k, taken_rule_names, prefix="rule_") for k in kinds_list}

    def successors(s: Any) -> list[tuple[Any, Any]]:
        return expansions.get(s)[0]

    def enter(self: Any, s: Any) -> None:
        """Make ``s`` the current state; bookkeeping for coverage and witnesses."""
        self.state = s
        self.states.append(s)
        if s not in stats.visited:
            stats.visited.add(s)
            stats.always_evaluated += 1
            for p in always_p:
                if p.applies is not None and p.applies(s):
                    stats.applies[p.name] += 1
        for p in reach_p:
            if p.name not in stats.witnesses and p.check(s):
                stats.witnesses[p.name] = len(cut_cycles(self.states, self.actions)[1])
        stats.longest = max(stats.longest, len(self.actions))

    def __init__(self: Any) -> None:
        RuleBasedStateMachine.__init__(self)
        self.state = None
        self.states = []
        self.actions = []
        self.novel = 0
        stats.runs += 1

    @initialize(data=st.data())
    def init(self: Any, data: Any) -> None:
        i = data.draw(st.integers(0, len(inits) - 1), label="initial state") if len(inits) > 1 else 0
        enter(self, inits[i])

    def take(self: Any, a: Any, t: Any) -> None:
        """Take the step ``a`` to ``t``: coverage, transition properties, then enter ``t``."""
        s = self.state
        kind = action_kind(a)
        stats.taken[kind] = stats.taken.get(kind, 0) + 1
        stats.steps += 1
        stats.tick()
        if t not in stats.visited:
            stats.cov.new[type(a)] += 1
            self.novel += 1
        for p in trans_p:
            stats.trans_evaluated += 1
            if p.applies is not None and p.applies(s, a, t):
                stats.applies[p.name] += 1
            if not p.check(s, a, t):
                raise PropertyFailure(p, f"{p.name} does not hold", [*self.states, t], [*self.actions, a])
        self.actions.append(a)
        enter(self, t)

    def kinds_enabled(s: Any) -> frozenset[str]:
        got = kinds_cache.get(s)
        if got is None:
            got = frozenset(action_kind(a) for a, _ in successors(s))
            if len(kinds_cache) >= 100_000:
                kinds_cache.clear()
            kinds_cache[s] = got
        return got

    def make_kind_rule(kind: str) -> Any:
        """The rule that takes one enabled step of ``kind``, its parameters drawn field by field."""

        def enabled(self: Any) -> bool:
            return self.state is not None and kind in kinds_enabled(self.state)

        def take_kind(self: Any, data: Any) -> None:
            cands = [(a, t) for a, t in successors(self.state) if action_kind(a) == kind]
            a, t = choose(data, kind, cands)
            take(self, a, t)

        take_kind.__name__ = take_kind.__qualname__ = rule_names[kind]
        return precondition(enabled)(rule(data=st.data())(take_kind))

    def others_enabled(self: Any) -> bool:
        return self.state is not None and bool(kinds_enabled(self.state) - listed)

    def step(self: Any, data: Any) -> None:
        """One enabled step of a kind the system does not list (all of them when it lists none)."""
        succ = [(a, t) for a, t in successors(self.state) if action_kind(a) not in listed]
        i = data.draw(st.integers(0, len(succ) - 1), label="successor") if len(succ) > 1 else 0
        take(self, *succ[i])

    def idle_enabled(self: Any) -> bool:
        return self.state is None or not successors(self.state)

    def idle(self: Any) -> None:
        """A terminal state: nothing to do (a deadlock fails its invariant first)."""

    def teardown(self: Any) -> None:
        # guide generation toward runs that find states no run found before (issue 34, item 3)
        if self.states:
            target(float(self.novel), label="new states")

    def make_invariant(p: Property) -> Any:
        def check(self: Any) -> None:
            if self.state is not None and not p.check(self.state):
                raise PropertyFailure(p, f"{p.name} does not hold", list(self.states), list(self.actions))

        check.__name__ = check.__qualname__ = method_names[p.name]
        return invariant()(check)

    def no_deadlock(self: Any) -> None:
        s = self.state
        if s is None or successors(s):
            return
        if not (is_terminal is not None and is_terminal(s)):
            raise PropertyFailure(
                DEADLOCK_PROPERTY, "no successor (deadlock)", list(self.states), list(self.actions)
            )

    taken_names: set[str] = {"inv_deadlock"}
    method_names = {p.name: _method_name(p.name, taken_names) for p in always_p}
    namespace: dict[str, Any] = {
        "__init__": __init__,
        "init": init,
        "step": precondition(others_enabled)(rule(data=st.data())(step)),
        "idle": precondition(idle_enabled)(rule()(idle)),
        "teardown": teardown,
        "stats": stats,
        "system": system,
        "__module__": __name__,
    }
    for kind in kinds_list:
        namespace[rule_names[kind]] = make_kind_rule(kind)
    for p in always_p:
        namespace[method_names[p.name]] = make_invariant(p)
    if deadlock:
        namespace["inv_deadlock"] = invariant()(no_deadlock)
    return type(name, (RuleBasedStateMachine,), namespace)


def _shrunk_trace(
    system: Any, props: list[Property], name: str, trace: list[Any], seconds: float
) -> list[Any] | None:
    """A found failure's trace shrunk by :func:`explorer.search.shrinking.shrink_steps` (ddmin, a
    bfs bounded by the trace's length, Hypothesis over a fixed step table), or None if it does
    not replay (only a non-deterministic model gets there)."""
    from explorer.engines.bfs import check_bfs
    from explorer.search.shrink_hypothesis import shrink_steps
    from explorer.search.shrinking import Checker, ShrinkError

    def shortest(bound: int) -> tuple[list[Any], list[Any]] | None:
        chosen = [q for q in props if q.name == name]
        r = check_bfs(
            system,
            chosen,
            deadlock=name == "deadlock",
            max_depth=bound,
            max_states=50_000,
            max_seconds=seconds / 3,
        )
        v = next((v for v in r.violations if v.property == name and v.trace), None)
        if v is None:
            return None
        states = replay_steps(
            system, [{"action": st.action, "fingerprint": st.fingerprint} for st in v.trace]
        )
        return states, [st.action for st in v.trace[1:]]

    try:
        out = shrink_steps(
            system,
            Checker(system, props, name),
            [str(st.action) for st in trace[1:]],
            trace[0].fingerprint,
            shortest=shortest,
            max_seconds=seconds,
        )
    except ShrinkError:  # pragma: no cover - only a non-deterministic model gets here
        return None
    return trace_steps(out.states, out.actions)


def database_key(model: str, config: Any, properties: Iterable[Property], system: Any) -> bytes:
    """The example-database key of a check: model, configuration, property names and
    initial states' fingerprints (stable across processes and machines).

    >>> class One:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return []
    >>> database_key("m", {"n": 1}, [], One()) == database_key("m", {"n": 1}, [], One())
    True
    >>> database_key("m", {"n": 1}, [], One()) == database_key("m", {"n": 2}, [], One())
    False
    """
    doc = {
        "model": model or f"{type(system).__module__}.{type(system).__qualname__}",
        "config": config_to_dict(config),
        "properties": sorted(p.name for p in properties),
        "init": [f"{fingerprint(s):016x}" for s in system.init_states()],
    }
    text = json.dumps(doc, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).digest()


def _database(database: Any) -> ExampleDatabase | None:
    """The example database ``HypothesisOptions.database`` names (checked there)."""
    if database is False:
        return None
    if database is None:
        return DirectoryBasedExampleDatabase(DEFAULT_DATABASE_DIR)
    if isinstance(database, ExampleDatabase):
        return database
    return DirectoryBasedExampleDatabase(os.fspath(database))


def check_hypothesis(system: Any, properties: Iterable[Property], **options: Any) -> CheckResult:
    """Run ``system`` as a Hypothesis state machine under ``profile`` and check ``properties``.

    ``options``: those of :class:`~explorer.engines.base.CheckOptions` that apply (``model``,
    ``config``, ``deadlock``, ``max_seconds``, ``progress``) and the engine's own
    (:class:`~explorer.engines.options.HypothesisOptions`). ``max_examples`` and
    ``stateful_step_count`` override the profile; ``seed``
    makes the run reproducible (None: Hypothesis picks one); ``database`` is where
    failing examples are kept and replayed from (see the module doc); ``phases``
    restricts Hypothesis's phases (``(Phase.reuse,)`` only replays the database). A failure
    is shrunk by :func:`explorer.shrink.shrink_trace` within ``shrink_seconds`` (its steps
    by ddmin, a bounded bfs and Hypothesis over a fixed step table), unless ``phases``
    includes ``Phase.shrink``: then Hypothesis shrinks the state machine's run itself.
    ``max_seconds`` stops the run (``budget_exhausted``, budget ``max_seconds``) and a first
    SIGINT or SIGTERM (see :mod:`explorer.search.stopping`) at the next step; ``progress``
    (a :class:`~explorer.search.Progress`) shows examples, steps and distinct states.

    >>> from explorer.core import transition
    >>> class Two:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("inc", s + 1)] if s < 2 else []
    ...     def is_terminal(self, s): return s == 2
    >>> r = check_hypothesis(Two(), [transition("t", lambda s, a, t: True, "")], seed=0, database=False)
    >>> r.exit_reason.value, r.budget, r.distinct_states
    ('budget_exhausted', 'max_examples', 3)
    """
    return run(system, properties, CheckOptions.of("hypothesis", options))


def _check(
    system: Any, properties: Iterable[Property], options: CheckOptions, o: HypothesisOptions
) -> CheckResult:
    """The run itself (:func:`run` has checked the options and chosen Hypothesis's home)."""
    profile, seed, phases = o.profile, o.seed, o.phases
    model, config, deadlock = options.model, options.config, options.deadlock
    max_seconds, progress = options.max_seconds, options.progress
    props = list(properties)
    machine = state_machine_for(system, props, deadlock=deadlock)
    stats: _Stats = machine.stats  # type: ignore[attr-defined]
    kw: dict[str, Any] = {"database": _database(o.database)}
    if o.max_examples is not None:
        kw["max_examples"] = o.max_examples
    if o.stateful_step_count is not None:
        kw["stateful_step_count"] = o.stateful_step_count
    # Hypothesis's own shrinking of a stateful run re-runs the whole machine thousands of times
    # (3,512 runs, 104 s for one 27-step simple-timing-wheel failure); a found failure goes to
    # kafka-mc's shrinker instead (ddmin, bfs, then Hypothesis over a fixed step table, with a
    # time budget: explorer.shrink), unless the caller asks for Phase.shrink
    native_shrink = phases is not None and Phase.shrink in phases
    kw["phases"] = (
        tuple(phases) if phases is not None else tuple(ph for ph in Phase if ph is not Phase.shrink)
    )
    run_settings = settings(settings.get_profile(profile), **kw)

    def factory() -> RuleBasedStateMachine:
        return machine()

    factory._hypothesis_internal_add_digest = database_key(model, config, props, system)  # type: ignore[attr-defined]
    if seed is not None:
        factory._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]

    failure: PropertyFailure | None = None
    reason = ExitReason.BUDGET_EXHAUSTED
    budget: str | None = "max_examples"
    start = stats.started = time.perf_counter()
    stats.deadline = None if max_seconds is None else start + max_seconds
    stats.progress = progress
    try:
        with with_reporter(lambda _msg: None), polled():
            run_state_machine_as_test(factory, settings=run_settings)
    except PropertyFailure as e:
        failure = e
    except unittest.SkipTest:  # Hypothesis ran no example (e.g. only Phase.reuse, and nothing saved)
        pass
    except _OutOfTime:
        budget = "max_seconds"
    except KeyboardInterrupt:
        reason, budget = ExitReason.INTERRUPTED, None
    finally:
        if progress is not None:
            progress.close()
    if stop_requested() is not None and failure is None:  # a signal between two steps
        reason, budget = ExitReason.INTERRUPTED, None
    seconds = time.perf_counter() - start

    violations: list[Finding] = []
    notes = [
        f"hypothesis: profile {profile}, {run_settings.max_examples} examples of at most "
        f"{run_settings.stateful_step_count} steps, seed {seed if seed is not None else 'random'}, "
        f"{stats.runs} runs (generation and shrinking), {stats.steps} steps; "
        "a property-based run never shows that a property holds"
    ]
    if failure is not None:
        p = failure.prop
        states, actions = cut_cycles(failure.states, failure.actions, p.kind is PropertyKind.TRANSITION)
        trace = trace_steps(states, actions)
        found_length = len(trace) - 1
        if not native_shrink and found_length > 0:
            trace = _shrunk_trace(system, props, p.name, trace, o.shrink_seconds) or trace
        violations.append((p, failure.message, trace))
        try:  # the final replay's states must be what the steps reproduce
            replay_steps(system, [{"action": st.action, "fingerprint": st.fingerprint} for st in trace])
        except ReplayError as e:  # pragma: no cover - only a non-deterministic model gets here
            notes.append(f"warning: the shrunk trace does not replay ({e}); is the model deterministic?")
        notes.append(
            (
                f"{p.name}: Hypothesis shrank the failing run to {len(failure.actions)} steps"
                + (
                    f" ({found_length} once its cycles are cut)"
                    if found_length != len(failure.actions)
                    else ""
                )
                if native_shrink
                else f"{p.name}: Hypothesis found a {found_length}-step run (cycles cut); kafka-mc's shrinker "
                f"(ddmin, bfs, Hypothesis over the steps) took it to {len(trace) - 1}"
            )
            + (
                "; the example is kept in the example database and replayed first next time"
                if run_settings.database is not None
                else ""
            )
        )

    cov_hypothesis = {
        "profile": profile,
        "seed": seed,
        "max_examples": run_settings.max_examples,
        "stateful_step_count": run_settings.stateful_step_count,
        "runs": stats.runs,
        "steps": stats.steps,
    }
    return sampled_result(
        system, props, violations, stats, options, (reason, budget, seconds), cov_hypothesis, notes
    )


def run(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    """The ``hypothesis`` engine behind :func:`explorer.api.check`.

    Of the common options ``model``, ``config``, ``deadlock``, ``max_seconds`` and
    ``progress`` apply (the other budgets are Hypothesis's own: ``engine_options`` holds
    profile, seed, max_examples, stateful_step_count, database, phases, shrink_seconds).

    >>> from tests.toys import Grid
    >>> o = CheckOptions(engine="hypothesis", engine_options={"seed": 0, "database": False, "max_examples": 3})
    >>> run(Grid(2), [], o).engine
    'hypothesis'
    """
    o = HypothesisOptions.of(options.engine_options)
    why = options.refusal()
    if why is not None:
        raise ValueError(why)
    from explorer.search.shrink_hypothesis import hypothesis_home

    # Hypothesis's home (its constants cache, ...) is a temporary folder for the run: nothing
    # of it is left in the working directory; the example database is where ``database`` says
    with hypothesis_home():
        return _check(system, properties, options, o)
