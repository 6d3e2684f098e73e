"""The ``simulate`` engine: seeded random walks, for configurations too large to exhaust.

Each walk starts from an initial state and takes up to ``depth`` steps, each step
choosing among the enabled successors at random, by the weight of the action's kind.
The only source of randomness is one :class:`random.Random` seeded with ``seed``; the
successors come in the model's deterministic order and no choice depends on
``hash()`` or on the iteration order of a set or dict, so the same seed (and the same
system, properties and options) gives the same walks on every machine and in every
process.

What is checked
---------------
- ``always`` properties on every state a walk visits and, one step ahead, on every
  successor generated at a state visited for the first time (each distinct state is
  checked once);
- ``transition`` properties on every transition generated at a state visited for
  the first time (as ``bfs`` does, every generated transition), so a bad step is
  found when the walk stands next to it;
- ``reachable`` properties: a witness is recorded when a visited state satisfies it;
- deadlock: a visited state without successors that the system does not call
  terminal.

A violation's trace is the walk from its initial state to the bad state (or through
the bad transition), with every cycle of the walk cut out (a walk that returns to a
state it visited before continues from the first visit, which keeps every step
enabled). The steps are :class:`~explorer.core.TraceStep` values exactly as ``bfs``
renders them, so :func:`explorer.tracefile.replay_steps` and ``kafka-mc replay``
accept them.

Weights and faults
------------------
``weights`` maps an action kind (:func:`explorer.core.action_kind`, by default the
action's class name) to a non-negative weight (default 1): an enabled action is
chosen with probability proportional to its kind's weight. A kind of weight 0 is
never chosen; a state whose enabled actions all weigh 0 ends the walk (it is not a
deadlock).

``fault_probabilities`` names **fault sites**: a fault site is an action kind, named
exactly as in ``weights`` and coverage (for example ``BrokerCrash`` or
``SessionExpire``), mapped to a probability in ``[0, 1]``. At every step, for each
fault site with at least one enabled action (in the order the model generates
them), the walk draws whether that fault happens now, with the site's probability;
the first site that fires is taken (one of its enabled actions, by weight). If none
fires, the fault sites' actions are left out of the step's choice. When only
fault-site actions are enabled and none fired, one of them is taken anyway (the
walk does not stop; the choice is recorded as *forced*). Every fault taken is
recorded, and the faults of the violating walk are listed in the result's notes.

``swarm=True`` turns on swarm testing: at the start of every walk each action kind's
weight is multiplied by a factor drawn from ``SWARM_FACTORS`` (0.05, 1 or 20), so
each walk strongly favours some kinds and starves others. Uniform walks over a
model of interleaved threads keep every thread moving at the same pace and rarely
take the lopsided schedules that expose races; swarm walks do.

Result
------
A simulation never shows that a property holds. Without a violation the exit reason
is ``budget_exhausted`` with ``budget="walks"`` (or ``"max_seconds"`` when time ran
out first), so the CLI exits 3, never 0; properties not violated have status
``unknown``. ``distinct_states`` counts distinct states visited, ``generated_states``
the steps taken, ``max_depth`` the longest walk; ``levels[d]`` gives, per step index
``d``, the walks that reached it (``frontier``), the successors generated there and
the states first visited there. ``coverage`` is as in ``bfs`` (``enabled``: enabled
transitions generated at visited states; ``new_states``: steps that reached a state
not visited before), plus ``taken`` (steps taken per kind) and ``simulate`` (the
seed, walks run, the violating walk (numbered from 1), faults offered and taken per site).

Example
-------
>>> from explorer.core import always
>>> class Ring:
...     def init_states(self): return [0]
...     def successors(self, s): return [("inc", (s + 1) % 8), ("dec", (s - 1) % 8)]
>>> r = check_simulate(Ring(), [always("not4", lambda s: s != 4, "never 4")], seed=1, walks=20, depth=10)
>>> r.exit_reason.value, r.violations[0].trace[-1].state
('violation', 4)
>>> r.exit_code
1
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from explorer.config import did_you_mean
from explorer.core import (
    CheckResult,
    ExitReason,
    LevelStats,
    Property,
    PropertyKind,
    action_kind,
)
from explorer.engines.base import CheckOptions
from explorer.engines.options import SimulateOptions
from explorer.search import (
    DEADLOCK_PROPERTY,
    Coverage,
    Progress,
    cut_cycles,
    sampled_result,
    trace_steps,
)
from explorer.search.coverage import Expansions
from explorer.search.results import Finding, Sampled

__all__ = [
    "SWARM_FACTORS",
    "SimulationProgress",
    "check_simulate",
    "parse_probability",
    "parse_weight",
    "run",
]

#: swarm testing: the factors a walk's weight of each action kind is multiplied by
SWARM_FACTORS = (0.05, 1.0, 20.0)

#: successor lists kept for revisits (the cache is cleared when it holds this many states)
_CACHE_LIMIT = 100_000


class SimulationProgress(Progress):
    """A one-line progress display for simulations (stderr, only on a terminal).

    >>> import io
    >>> p = SimulationProgress(io.StringIO(), force=True, interval=0)
    >>> p.update(3, 10, 250, 40, 1000.0)
    >>> p.stream.getvalue().strip()
    'walk 3/10  steps 250  distinct 40  1,000 steps/s'
    """

    def update(self, walk: int, walks: int, steps: int, distinct: int, rate: float) -> None:  # type: ignore[override]
        """Show the current walk, steps taken, distinct states and steps/s."""
        if self.enabled:
            self.show(f"walk {walk}/{walks}  steps {steps:,}  distinct {distinct:,}  {rate:,.0f} steps/s")


def _parse_kind_number(text: str, what: str, high: float, out_of_range: str) -> tuple[str, float]:
    kind, sep, raw = text.partition("=")
    kind = kind.strip()
    if not sep or not kind:
        raise ValueError(f"{what} {text}: expected KIND=NUMBER")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{what} {text}: {raw.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{what} {text}: must be finite")
    if not 0.0 <= value <= high:
        raise ValueError(f"{what} {text}: {out_of_range}")
    return kind, value


def parse_weight(text: str) -> tuple[str, float]:
    """Parse ``--weight KIND=W`` (W >= 0); ValueError with one line otherwise.

    >>> parse_weight("BrokerCrash=0.5")
    ('BrokerCrash', 0.5)
    """
    return _parse_kind_number(text, "--weight", math.inf, "must not be negative")


def parse_probability(text: str) -> tuple[str, float]:
    """Parse ``--fault KIND=P`` (0 <= P <= 1); ValueError with one line otherwise.

    >>> parse_probability("SessionExpire=0.05")
    ('SessionExpire', 0.05)
    """
    return _parse_kind_number(text, "--fault", 1.0, "a probability must be between 0 and 1")


@dataclass
class _Found:
    prop: Property
    states: list[Any]  # the walk up to the bad state (or up to the bad transition's source)
    actions: list[Any]
    walk: int
    raw_length: int
    message: str
    faults: list[str]


def _known_kinds(name: str, by_kind: Mapping[str, float] | None, declared: list[str] | None) -> None:
    """ValueError unless every action kind ``by_kind`` names is one the system declares."""
    for k in by_kind or {}:
        if declared is not None and k not in declared:
            raise ValueError(
                f"{name}: unknown action kind {k!r}{did_you_mean(k, declared)} (known: {', '.join(declared)})"
            )


def check_simulate(system: Any, properties: Iterable[Property], **options: Any) -> CheckResult:
    """Run ``walks`` seeded random walks of at most ``depth`` steps and check ``properties``.

    ``options``: those of :class:`~explorer.engines.base.CheckOptions` that apply (``model``,
    ``config``, ``max_seconds``, ``keep_going``, ``deadlock``, ``progress``, ``clock``) and the
    engine's own (:class:`~explorer.engines.options.SimulateOptions`: ``seed``, ``walks``,
    ``depth``, ``weights``, ``fault_probabilities``, ``swarm``, ``cut_loops``).

    Stops at the first violation unless ``keep_going``, in which case walks go on
    until the budget and the shortest trace found of every violated property is kept.
    ``weights`` and ``fault_probabilities`` are keyed by action kind (see the module
    doc); when the system has ``action_kinds()`` an unknown kind is a ValueError.
    ``cut_loops=False`` keeps the walk's cycles in the traces. ``swarm=True`` (swarm
    testing) multiplies, at the start of each walk, every action kind's weight by a
    factor drawn from :data:`SWARM_FACTORS`, so that each walk favours some kinds
    and starves others: it reaches interleavings a uniform walk almost never takes.

    >>> from explorer.core import always
    >>> class Line:  # 0 -> 1 -> ... -> 5, then stuck
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("step", s + 1)] if s < 5 else []
    ...     def is_terminal(self, s): return s == 5
    >>> r = check_simulate(Line(), [always("lt3", lambda s: s < 3, "")], seed=7, walks=5, depth=10)
    >>> r.violations[0].property, r.violations[0].length, r.coverage["simulate"]["violating_walks"]
    ('lt3', 3, {'lt3': 1})
    >>> r2 = check_simulate(Line(), [always("lt9", lambda s: s < 9, "")], seed=7, walks=5, depth=10)
    >>> r2.exit_reason.value, r2.budget, r2.exit_code, r2.properties["lt9"]["status"]
    ('budget_exhausted', 'walks', 3, 'unknown')
    """
    return run(system, properties, CheckOptions.of("simulate", options))


def run(system: Any, properties: Iterable[Property], options: CheckOptions) -> CheckResult:
    """The ``simulate`` engine behind :func:`explorer.api.check`: random walks.

    ``options.engine_options`` are the engine's own (a mapping or
    :class:`~explorer.engines.options.SimulateOptions`); a progress line is shown when
    ``options.progress`` is set (as walks, not levels).

    >>> from tests.toys import Grid
    >>> r = run(Grid(3), Grid(3).properties(), CheckOptions(engine="simulate", engine_options={"walks": 5}))
    >>> r.engine, r.budget
    ('simulate', 'walks')
    """
    o = SimulateOptions.of(options.engine_options)
    why = options.refusal()
    if why is not None:
        raise ValueError(why)
    max_seconds, keep_going, deadlock, clock = (
        options.max_seconds,
        options.keep_going,
        options.deadlock,
        options.clock,
    )
    if max_seconds is not None and max_seconds <= 0:
        raise ValueError(f"max_seconds: must be positive, got {max_seconds:g}")
    given = options.progress
    progress = (
        given
        if given is None or isinstance(given, SimulationProgress)
        else SimulationProgress(given.stream, given.interval, given.tty, given.log_every)
    )
    seed, walks, depth, swarm, cut_loops = o.seed, o.walks, o.depth, o.swarm, o.cut_loops
    declared = list(system.action_kinds()) if hasattr(system, "action_kinds") else None
    _known_kinds("weights", o.weights, declared)
    _known_kinds("fault_probabilities", o.fault_probabilities, declared)
    weight_of = dict(o.weights or {})
    walk_weights = weight_of
    fault_p = dict(o.fault_probabilities or {})

    props = list(properties)
    always_p = [p for p in props if p.kind is PropertyKind.ALWAYS]
    trans_p = [p for p in props if p.kind is PropertyKind.TRANSITION]
    reach_p = [p for p in props if p.kind is PropertyKind.REACHABLE]
    applies_counts: dict[str, int] = {p.name: 0 for p in props if p.applies is not None}
    applies_state = [(p.name, p.applies) for p in always_p if p.applies is not None]
    applies_trans = [(p.name, p.applies) for p in trans_p if p.applies is not None]

    rng = random.Random(seed)
    is_terminal = getattr(system, "is_terminal", None)
    inits = list(system.init_states())
    if not inits:
        raise ValueError("the system has no initial state")

    visited: set[Any] = set()  # states some walk stood on
    checked: set[Any] = set()  # states the always-properties were evaluated on
    found: dict[str, _Found] = {}
    witnesses: dict[str, int] = {}
    pending_reach = list(reach_p)
    cov = Coverage()
    new_by = cov.new
    # successors cached; those of a state visited for the first time checked and counted
    expansions = Expansions(system, cov, _CACHE_LIMIT)
    taken: dict[str, int] = {}
    fault_offered: dict[str, int] = {k: 0 for k in fault_p}
    fault_taken: dict[str, int] = {k: 0 for k in fault_p}
    fault_forced: dict[str, int] = {k: 0 for k in fault_p}
    reach_depth: list[int] = []
    gen_depth: list[int] = []
    new_depth: list[int] = []
    trans_evaluated = 0
    steps_total = 0
    longest = 0
    walks_run = 0
    budget: str | None = "walks"
    reason = ExitReason.BUDGET_EXHAUSTED
    start = clock()
    deadline = None if max_seconds is None else start + max_seconds
    stop = False
    faults: list[str] = []  # the faults taken in the current walk
    seen_in_walk: set[str] = set()  # properties already recorded in the current walk
    path_s: list[Any] = []  # the current walk's states and actions
    path_a: list[Any] = []

    def record(f: _Found) -> None:
        nonlocal stop
        old = found.get(f.prop.name)
        if old is None or len(f.states) < len(old.states):
            found[f.prop.name] = f
        if not keep_going:
            stop = True

    def violated(p: Property, d: int, step: tuple[Any, Any] | None, message: str) -> None:
        """``p`` failed at the walk's ``d``-th state or (``step``) on the step ahead of it."""
        seen_in_walk.add(p.name)
        if step is None:
            record(_Found(p, list(path_s), list(path_a), walks_run, d, message, faults[:]))
            return
        a, t = step
        extra = [f"step {d + 1}: {a}"] if fault_p and action_kind(a) in fault_p else []
        record(_Found(p, [*path_s, t], [*path_a, a], walks_run, d + 1, message, [*faults, *extra]))

    def check_state(t: Any, d: int, step: tuple[Any, Any] | None) -> None:
        """The ``always`` properties and their ``applies`` on a state not checked before."""
        checked.add(t)
        for p in always_p:
            if p.name not in seen_in_walk and not p.check(t):
                violated(p, d, step, f"{p.name} does not hold")
        for name, ap in applies_state:
            if ap(t):
                applies_counts[name] += 1

    def bump(lst: list[int], d: int, n: int = 1) -> None:
        while len(lst) <= d:
            lst.append(0)
        lst[d] += n

    try:
        for w in range(walks):
            if stop:
                break
            walks_run = w + 1
            if swarm:
                # kinds in a deterministic order: declared, else in the order first seen
                known = declared if declared is not None else [action_kind(a) for a in cov.sample.values()]
                walk_weights = {k: weight_of.get(k, 1.0) * rng.choice(SWARM_FACTORS) for k in known}
            s = inits[rng.randrange(len(inits))] if len(inits) > 1 else inits[0]
            path_s[:] = [s]
            path_a.clear()
            faults.clear()
            seen_in_walk.clear()
            d = 0
            while True:
                bump(reach_depth, d)
                if s not in visited:
                    visited.add(s)
                    bump(new_depth, d)
                # ---- check the state ----
                if s not in checked:
                    check_state(s, d, None)
                if pending_reach:
                    for p in list(pending_reach):
                        if p.check(s):
                            witnesses[p.name] = len(cut_cycles(path_s, path_a)[1]) if cut_loops else d
                            pending_reach.remove(p)
                if stop:
                    break
                # ---- successors (checked once per distinct state) ----
                succ, first = expansions.get(s)
                if first:
                    bump(gen_depth, d, len(succ))
                    for a, t in succ:
                        if trans_p:
                            trans_evaluated += 1
                            for p in trans_p:
                                if p.name not in seen_in_walk and not p.check(s, a, t):
                                    violated(p, d, (a, t), f"{p.name} does not hold")
                            for name, ap in applies_trans:
                                if ap(s, a, t):
                                    applies_counts[name] += 1
                        if always_p and t not in checked:
                            check_state(t, d, (a, t))
                    if stop:
                        break
                n = len(succ)
                if n == 0:
                    dead = deadlock and not (is_terminal is not None and is_terminal(s))
                    if dead and "deadlock" not in seen_in_walk:
                        violated(DEADLOCK_PROPERTY, d, None, "no successor (deadlock)")
                    break
                if d >= depth or stop:
                    break
                # ---- choose the next step ----
                choice = _choose(rng, succ, walk_weights, fault_p, fault_offered, fault_taken, fault_forced)
                if choice is None:
                    break
                idx, fault_kind, forced = choice
                a, t = succ[idx]
                if fault_kind is not None:
                    faults.append(f"step {d + 1}: {a}{' (forced)' if forced else ''}")
                kind = action_kind(a)
                taken[kind] = taken.get(kind, 0) + 1
                if t not in visited:
                    new_by[type(a)] += 1
                path_s.append(t)
                path_a.append(a)
                s = t
                d += 1
                steps_total += 1
                if (steps_total & 255) == 0:
                    now = clock()
                    if deadline is not None and now >= deadline:
                        budget = "max_seconds"
                        stop = True
                        break
                    if progress is not None:
                        el = now - start
                        progress.update(
                            w + 1, walks, steps_total, len(visited), steps_total / el if el else 0.0
                        )
            longest = max(longest, d)
    except KeyboardInterrupt:
        reason, budget = ExitReason.INTERRUPTED, None
    finally:
        if progress is not None:
            progress.close()

    seconds = clock() - start
    violations: list[Finding] = []
    notes: list[str] = [
        f"simulate: seed {seed}, {walks_run} of {walks} walks of at most {depth} steps"
        f"{' (swarm)' if swarm else ''}, "
        f"{steps_total} steps taken; a simulation never shows that a property holds"
    ]
    violating_walks: dict[str, int] = {}
    for f in found.values():
        is_step = f.prop.kind is PropertyKind.TRANSITION
        states, actions = cut_cycles(f.states, f.actions, is_step) if cut_loops else (f.states, f.actions)
        trace = trace_steps(states, actions)
        violations.append((f.prop, f.message, trace))
        violating_walks[f.prop.name] = f.walk
        where = f"{f.prop.name}: found in walk {f.walk} (seed {seed}) after {f.raw_length} steps"
        if len(trace) - 1 != f.raw_length:
            where += f", {len(trace) - 1} once its cycles are cut"
        notes.append(where + "; faults taken: " + ("; ".join(f.faults) if f.faults else "none"))

    levels = [
        LevelStats(
            d,
            reach_depth[d],
            gen_depth[d] if d < len(gen_depth) else 0,
            new_depth[d] if d < len(new_depth) else 0,
            0.0,
        )
        for d in range(len(reach_depth))
    ]
    seen = Sampled(
        visited, cov, taken, steps_total, longest, witnesses, applies_counts, len(checked), trans_evaluated
    )
    seen.labels = expansions.labels
    cov_simulate = {
        "seed": seed,
        "walks": walks,
        "walks_run": walks_run,
        "depth": depth,
        "steps": steps_total,
        "steps_per_second": steps_total / seconds if seconds > 0 else 0.0,
        "weights": dict(sorted(weight_of.items())),
        "swarm": swarm,
        "violating_walks": violating_walks,
        "faults": {
            k: {
                "probability": fault_p[k],
                "offered": fault_offered[k],
                "taken": fault_taken[k],
                "forced": fault_forced[k],
            }
            for k in sorted(fault_p)
        },
    }
    end = (reason, budget, seconds)
    return sampled_result(system, props, violations, seen, options, end, cov_simulate, notes, levels)


def _weighted(rng: random.Random, idxs: list[int], ws: list[float]) -> int | None:
    total = math.fsum(ws)
    if total <= 0:
        return None
    x = rng.random() * total
    acc = 0.0
    for i, w in zip(idxs, ws):
        acc += w
        if x < acc:
            return i
    return next((i for i, w in zip(reversed(idxs), reversed(ws)) if w > 0), None)


def _choose(
    rng: random.Random,
    succ: list[tuple[Any, Any]],
    weight_of: dict[str, float],
    fault_p: dict[str, float],
    offered: dict[str, int],
    taken: dict[str, int],
    forced_n: dict[str, int],
) -> tuple[int, str | None, bool] | None:
    """Pick the index of the next step; return (index, fault kind or None, forced)."""
    n = len(succ)
    if not weight_of and not fault_p:
        return (rng.randrange(n) if n > 1 else 0), None, False
    kinds = [action_kind(a) for a, _ in succ]
    if fault_p:
        sites: list[str] = []
        for k in kinds:
            if k in fault_p and k not in sites:
                sites.append(k)
        for k in sites:
            offered[k] += 1
            if rng.random() < fault_p[k]:
                idxs = [i for i in range(n) if kinds[i] == k]
                i = _weighted(rng, idxs, [weight_of.get(k, 1.0)] * len(idxs))
                if i is not None:
                    taken[k] += 1
                    return i, k, False
        rest = [i for i in range(n) if kinds[i] not in fault_p]
        if rest:
            ws = [weight_of.get(kinds[i], 1.0) for i in rest]
            if all(x == 1.0 for x in ws):
                return rest[rng.randrange(len(rest))], None, False
            i = _weighted(rng, rest, ws)
            if i is not None:
                return i, None, False
        # only fault actions (or only weightless other actions) are enabled: take a fault anyway
        faulty = [i for i in range(n) if kinds[i] in fault_p]
        i = _weighted(rng, faulty, [weight_of.get(kinds[j], 1.0) for j in faulty]) if faulty else None
        if i is None:
            return None
        taken[kinds[i]] += 1
        forced_n[kinds[i]] += 1
        return i, kinds[i], True
    ws = [weight_of.get(k, 1.0) for k in kinds]
    if all(x == 1.0 for x in ws):
        return (rng.randrange(n) if n > 1 else 0), None, False
    i = _weighted(rng, list(range(n)), ws)
    return None if i is None else (i, None, False)
