"""The contracts everything else hangs off: systems, actions, properties, results.

A model is a :class:`TransitionSystem`: ``init_states()`` and ``successors(s)``, the
latter yielding ``(action, next_state)`` pairs in a deterministic order. Properties are
:class:`Property` values built in ``invariants/``; engines return a :class:`CheckResult`.

Example
-------
>>> class Counter:
...     def init_states(self):
...         return [0]
...     def successors(self, s):
...         return [(Step(s), s + 1)] if s < 2 else []
...     def is_terminal(self, s):
...         return s == 2
>>> class Step(Action):
...     __slots__ = ("n",)
...     def __init__(self, n): self.n = n
...     def __str__(self): return f"counter goes from {self.n} to {self.n + 1}"
>>> [str(a) for a, _ in Counter().successors(0)]
['counter goes from 0 to 1']
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = [
    "EFFECTS_ATTR",
    "Action",
    "ActionGuard",
    "CheckResult",
    "ExitReason",
    "LevelStats",
    "ModelSpec",
    "Property",
    "PropertyKind",
    "TraceStep",
    "TransitionChecks",
    "TransitionSystem",
    "Violation",
    "action_kind",
    "always",
    "config_to_dict",
    "diff_states",
    "effects",
    "effects_of",
    "eventually",
    "leads_to",
    "reachable",
    "render_state",
    "transition",
]

S = TypeVar("S")
A = TypeVar("A", covariant=True)


class Action:
    """Base class for actions: small immutable values whose ``str`` reads like a log line.

    Subclasses are usually ``NamedTuple`` or frozen dataclasses; this base only
    supplies :attr:`kind`, the name under which coverage counts the action.

    >>> class Tick(Action):
    ...     def __str__(self): return "clock advances"
    >>> Tick().kind
    'Tick'
    """

    __slots__ = ()

    @property
    def kind(self) -> str:
        """The action's kind for coverage: by default its class name."""
        return type(self).__name__


def action_kind(action: Any) -> str:
    """Return the coverage kind of any action value (its ``kind`` or class name).

    >>> action_kind(3)
    'int'
    """
    kind = getattr(action, "kind", None)
    return kind if isinstance(kind, str) else type(action).__name__


@runtime_checkable
class TransitionSystem(Protocol[S, A]):
    """A finite, deterministic transition system: the only way engines see a model.

    Optional methods an engine uses when present:

    - ``is_terminal(s) -> bool``: a state with no successor that is a proper end
      (not a deadlock);
    - ``action_kinds() -> Iterable[str]``: every action kind the model can take,
      so coverage can name the ones never enabled;
    - ``properties() -> Iterable[Property]``: for user systems loaded by ``--system``;
    - ``successors_labelled(s)``: ``successors`` with a tuple of coverage labels per
      transition, ``(action, next_state, labels)``; every engine then counts each label
      once per explored transition into ``coverage["labels"]``
      (:func:`explorer.search.label_counting`);
    - ``coverage_labels() -> Iterable[tuple]``: the labels a full coverage hits (the
      report lists those never hit);
    - ``sequence_arrow(action) -> (from_actor, to_actor, label)``: an action's arrow in
      the report's sequence diagrams.
    - ``report_layout() -> dict``: how the release report draws the model (its state
      machines' titles and positions, label sections as tables, step-table columns per
      actor); :mod:`explorer.report.layout` documents the keys.
    """

    def init_states(self) -> Iterable[S]:
        """The initial states, in a deterministic order."""
        ...

    def successors(self, s: S) -> Iterable[tuple[A, S]]:
        """Every enabled ``(action, next_state)`` pair of ``s``, in a deterministic order."""
        ...


class PropertyKind(enum.StrEnum):
    """What a property is evaluated over."""

    ALWAYS = "always"  #: a predicate that must hold in every reachable state
    TRANSITION = "transition"  #: a predicate over every explored (s, action, s')
    REACHABLE = "reachable"  #: a witness: some reachable state must satisfy it
    EVENTUALLY = "eventually"  #: liveness under fairness (engine support to come)
    DEADLOCK = "deadlock"  #: built in: a non-terminal state without successors


@dataclass(frozen=True, slots=True)
class Property:
    """A named property of a model, defined in ``invariants/``.

    ``check`` takes a state (``always``, ``reachable``, ``eventually``) or
    ``(s, action, s2)`` (``transition``) and returns True when the state is good
    (for ``reachable``: when it is the witness sought). ``doc`` is one line naming
    the Kafka guarantee and where the seeds state it. ``applies`` (optional) says
    for which states the property is not vacuous; coverage counts those.

    >>> p = always("small", lambda s: s < 10, "the counter stays below 10")
    >>> p.kind.value, p.check(3)
    ('always', True)
    """

    name: str
    kind: PropertyKind
    check: Callable[..., bool]
    doc: str
    applies: Callable[..., bool] | None = None
    #: for ``eventually``: the states from which ``check`` must eventually hold
    #: (None: the initial states), i.e. ``trigger ~> check`` (leads-to)
    trigger: Callable[[Any], bool] | None = None
    #: for ``eventually``: the weakly fair action kinds (None: the system's
    #: ``fair_action_kinds()``, or every kind if it has none)
    fairness: tuple[str, ...] | None = None
    #: for ``transition``: a cheap test ``guard(s, action, s2)`` outside which ``check``
    #: holds by construction (e.g. "the step changed ZooKeeper"). Engines may skip
    #: ``check`` where the guard is false; properties sharing one guard object have it
    #: evaluated once per transition (:func:`transition_groups`). None: always checked.
    guard: Callable[[Any, Any, Any], bool] | None = None
    #: for partial-order reduction (``--reduce por``): the location kinds of the system's
    #: footprints (``por_footprints()``) that ``check`` reads; a step that changes none of
    #: them cannot change its verdict (for ``transition``: a step that changes none of them
    #: satisfies it). An entry ``"@name"`` says ``check`` holds wherever the system's guard
    #: ``name`` does not (steps never enabled there cannot turn it true). None: it reads
    #: everything, so every step is visible to it (no reduction).
    reads: frozenset[str] | None = None
    #: for symmetry reduction (``--reduce symmetry``): ``check`` (and ``applies``, ``guard``
    #: and ``trigger``) give the same verdict on a state, or a step, and on its image under
    #: every permutation the system's ``symmetries()`` declares (a property over all brokers
    #: or all partitions alike). False: the reduction is off for a run that checks it.
    symmetric: bool = False
    #: says why a failing state (or step) fails, in the model's words: ``explain(s)``, or
    #: ``explain(s, action, s2)`` for ``transition``; for ``eventually`` it is given the state
    #: the counterexample ends (or cycles) in, where the goal does not hold. It returns a line
    #: or a few (a string, or an iterable of strings) naming the entities and values at fault.
    #: None: :func:`explorer.explain.explain_failure` lists the state fields ``check`` read.
    explain: Callable[..., Any] | None = None
    #: for incremental checking (:mod:`explorer.search.incremental`): for ``always``, the slices
    #: of the state ``check`` reads (``"zk.epoch"``, ``"nodes[].ctx"``, or a whole field
    #: ``"acked"``), and the serial search skips ``check`` on a state whose slices are all its
    #: parent's objects; for ``transition``, slices outside which ``check`` holds, and the
    #: search skips it on a step that changes none of them. None: evaluated everywhere.
    slices: frozenset[str] | None = None


def always(
    name: str,
    check: Callable[[Any], bool],
    doc: str,
    applies: Callable[[Any], bool] | None = None,
    *,
    explain: Callable[[Any], Any] | None = None,
) -> Property:
    """An invariant: ``check(s)`` holds in every reachable state; ``explain(s)`` (optional) says
    why a state where it fails does (:attr:`Property.explain`).

    >>> p = always("p", bool, "non-zero", explain=lambda s: f"the counter is {s}")
    >>> p.kind.value, p.explain(0)
    ('always', 'the counter is 0')
    """
    return Property(name, PropertyKind.ALWAYS, check, doc, applies, explain=explain)


def transition(
    name: str,
    check: Callable[[Any, Any, Any], bool],
    doc: str,
    applies: Callable[[Any, Any, Any], bool] | None = None,
    guard: Callable[[Any, Any, Any], bool] | None = None,
    *,
    explain: Callable[[Any, Any, Any], Any] | None = None,
) -> Property:
    """A step property: ``check(s, action, s2)`` holds for every explored transition;
    ``explain(s, action, s2)`` (optional) says why a step where it fails does.

    ``guard`` (optional) must be false only on transitions where ``check`` holds
    anyway; engines then skip ``check`` there (see :attr:`Property.guard`).

    >>> transition("up", lambda s, a, t: t >= s, "never decreases").kind.value
    'transition'
    >>> changed = lambda s, a, t: t != s
    >>> transition("up", lambda s, a, t: t >= s, "never decreases", guard=changed).guard is changed
    True
    """
    return Property(name, PropertyKind.TRANSITION, check, doc, applies, guard=guard, explain=explain)


def transition_groups(
    props: Iterable[Property],
) -> list[tuple[Callable[[Any, Any, Any], bool] | None, list[tuple[int, Property, Callable[..., bool]]]]]:
    """The ``transition`` properties of ``props`` grouped by their guard (one evaluation each).

    Each group is ``(guard, [(index in props, property, check), ...])``; groups come in
    the order of their first property, and properties keep their order within a group.
    Engines evaluate a group's checks only where its guard (when not None) holds.

    >>> g = lambda s, a, t: t != s
    >>> ps = [transition("a", bool, "", guard=g), always("x", bool, ""),
    ...       transition("b", bool, ""), transition("c", bool, "", guard=g)]
    >>> [(guard is g, [(i, p.name) for i, p, _ in checks]) for guard, checks in transition_groups(ps)]
    [(True, [(0, 'a'), (3, 'c')]), (False, [(2, 'b')])]
    """
    groups: dict[Any, list[tuple[int, Property, Callable[..., bool]]]] = {}
    for i, p in enumerate(props):
        if p.kind is PropertyKind.TRANSITION:
            groups.setdefault(p.guard, []).append((i, p, p.check))
    return list(groups.items())


T = TypeVar("T")

#: the class attribute :func:`effects` sets: the effects an action class declares
EFFECTS_ATTR = "__effects__"


def effects(*declared: enum.Enum) -> Callable[[type[T]], type[T]]:
    """Declare what every step of the decorated action class does: its *effects*, members of
    the model's own ``Enum`` (the controller's are ``model.controller.effects.Effect``).
    Properties, guards (:class:`ActionGuard`) and coverage select steps by effect, never by
    class, so a new action class that declares an effect is seen wherever that effect is.

    An effect member may name, as ``fields``, the fields every action with that effect has
    (the ZooKeeper request applied, the broker it reaches, ...): the declaration is refused
    when the class lacks one. Declaring again adds to what the class declared (the fault
    registry declares a fault's effects this way).

    >>> class Does(enum.Enum):
    ...     TICKS = "ticks"
    ...     @property
    ...     def fields(self): return ("n",)
    >>> @effects(Does.TICKS)
    ... class Tick(Action):
    ...     n = 0
    >>> effects_of(Tick) == {Does.TICKS}, effects_of(Tick()) == {Does.TICKS}, effects_of(3)
    (True, True, frozenset())
    >>> effects(Does.TICKS)(int)
    Traceback (most recent call last):
    ...
    TypeError: int declares ticks but has no field n
    """
    for e in declared:
        if not isinstance(e, enum.Enum):
            raise TypeError(f"effects: members of an Enum, got {e!r}")

    def declare(cls: type[T]) -> type[T]:
        for e in declared:
            missing = [f for f in getattr(e, "fields", ()) if not hasattr(cls, f)]
            if missing:
                raise TypeError(f"{cls.__name__} declares {e.value} but has no field {', '.join(missing)}")
        setattr(cls, EFFECTS_ATTR, frozenset(getattr(cls, EFFECTS_ATTR, ())) | frozenset(declared))
        return cls

    return declare


def effects_of(action: Any) -> frozenset[Any]:
    """The effects an action (or action class) declares with :func:`effects` (none when it
    declares none).

    >>> effects_of(int)
    frozenset()
    """
    tp = action if isinstance(action, type) else type(action)
    return getattr(tp, EFFECTS_ATTR, frozenset())


class ActionGuard:
    """A transition guard decided by the action's type: true on an action that declares one of
    the effects among ``selectors`` (:func:`effects`; a model's guards select so, by what a
    step does) or is of one of the classes among them (or a subclass), where
    ``then(s, action, s2)`` also holds (``then`` None: always there). Engines look its verdict
    up per action type (:class:`TransitionChecks`) instead of calling it per transition; where
    ``then`` is None they call nothing at all. Two guards of the same selectors and ``then``
    are equal, so properties built in different modules share one group.

    >>> class Ping: pass
    >>> g = ActionGuard(Ping)
    >>> g(None, Ping(), None), g(None, 3, None), g == ActionGuard(Ping)
    (True, False, True)
    >>> ActionGuard(Ping, then=lambda s, a, t: t > s)(1, Ping(), 0)
    False
    >>> class Does(enum.Enum):
    ...     PINGS = "pings"
    >>> Pong = effects(Does.PINGS)(type("Pong", (), {}))
    >>> ActionGuard(Does.PINGS)(None, Pong(), None), ActionGuard(Does.PINGS).matches(Ping)
    (True, False)
    """

    __slots__ = ("effects", "then", "types")

    def __init__(self, *selectors: type | enum.Enum, then: Callable[[Any, Any, Any], bool] | None = None):
        if not selectors or not all(isinstance(t, (type, enum.Enum)) for t in selectors):
            raise TypeError(f"ActionGuard: one or more effects or action classes, got {selectors!r}")
        self.types = tuple(t for t in dict.fromkeys(selectors) if isinstance(t, type))
        self.effects = frozenset(e for e in selectors if isinstance(e, enum.Enum))
        self.then = then

    def matches(self, tp: type) -> bool:
        """Whether a step of action class ``tp`` is selected (before ``then``)."""
        return issubclass(tp, self.types) or not self.effects.isdisjoint(effects_of(tp))

    def __call__(self, s: Any, a: Any, t: Any) -> bool:
        return self.matches(type(a)) and (self.then is None or self.then(s, a, t))

    def _key(self) -> tuple[Any, ...]:
        return (frozenset(self.types), self.effects, self.then)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActionGuard) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        then = "" if self.then is None else f", then={getattr(self.then, '__name__', self.then)}"
        names = [t.__name__ for t in self.types] + sorted(str(e) for e in self.effects)
        return f"ActionGuard({', '.join(names)}{then})"

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.types, self.effects, self.then)

    def __setstate__(self, st: tuple[Any, ...]) -> None:
        self.types, self.effects, self.then = st


class TransitionChecks:
    """The groups of transition checks to run on a step, looked up once per action type.

    Built from ``(guard, [item, ...])`` groups (:func:`transition_groups`; an item is a
    tuple with the property's index first and its check third). For an action type,
    :meth:`for_type` gives the groups to evaluate: the items of every :class:`ActionGuard`
    without ``then`` that matches the type (by the effects it declares, or its class), merged
    into one unguarded group in property order; an :class:`ActionGuard` with ``then`` as
    ``(then, items)``; every other group as it is
    (its guard still called per step); groups whose action guard cannot match are left out.

    >>> class Ping: pass
    >>> class Pong: pass
    >>> other = lambda s, a, t: True
    >>> tc = TransitionChecks([(ActionGuard(Ping), [(0, "a", bool)]), (other, [(1, "b", bool)]),
    ...                        (ActionGuard(Ping, Pong), [(2, "c", bool)])])
    >>> [(g is other, [i[0] for i in items]) for g, items in tc.for_type(Ping)]
    [(False, [0, 2]), (True, [1])]
    >>> [(g is None, [i[0] for i in items]) for g, items in tc.for_type(int)]
    [(False, [1])]
    >>> tc.drop(tc.for_type(Ping)[0][1][0]); [[i[0] for i in items] for _, items in tc.for_type(Ping)]
    [[2], [1]]
    """

    def __init__(self, groups: Iterable[tuple[Callable[[Any, Any, Any], bool] | None, list[Any]]]):
        self.groups = [(g, list(items)) for g, items in groups]
        #: action type -> the groups to evaluate on a step of that type (filled as types are met)
        self.table: dict[type, list[tuple[Callable[[Any, Any, Any], bool] | None, list[Any]]]] = {}
        #: how many checks are left (an attribute, read on every step)
        self.count = sum(len(items) for _, items in self.groups)

    def __bool__(self) -> bool:
        return self.count > 0

    def for_type(self, tp: type) -> list[tuple[Callable[[Any, Any, Any], bool] | None, list[Any]]]:
        """The groups to evaluate on a step whose action is of type ``tp`` (cached)."""
        got = self.table.get(tp)
        if got is not None:
            return got
        merged: list[Any] = []
        out: list[tuple[Callable[[Any, Any, Any], bool] | None, list[Any]]] = []
        for g, items in self.groups:
            if not items:
                continue
            if isinstance(g, ActionGuard):
                if not g.matches(tp):
                    continue
                if g.then is None:
                    merged.extend(items)
                    continue
                out.append((g.then, items))
            else:
                out.append((g, items))
        if merged:
            out.insert(0, (None, sorted(merged, key=lambda item: item[0])))
        self.table[tp] = out
        return out

    def drop(self, item: Any) -> None:
        """Stop checking ``item`` (its property already failed in this process)."""
        self.groups = [(g, [x for x in items if x is not item]) for g, items in self.groups]
        self.count = sum(len(items) for _, items in self.groups)
        self.table.clear()


def reachable(name: str, check: Callable[[Any], bool], doc: str) -> Property:
    """A witness: some reachable state satisfies ``check``; fails if none does.

    >>> reachable("two", lambda s: s == 2, "the counter reaches 2").kind.value
    'reachable'
    """
    return Property(name, PropertyKind.REACHABLE, check, doc)


def eventually(
    name: str,
    check: Callable[[Any], bool],
    doc: str,
    *,
    trigger: Callable[[Any], bool] | None = None,
    fairness: Iterable[str] | None = None,
    explain: Callable[[Any], Any] | None = None,
) -> Property:
    """Liveness: every weakly fair behaviour reaches a state satisfying ``check``; ``explain(s)``
    (optional) says why the state a counterexample ends or cycles in is not the goal.

    With ``trigger`` it is a leads-to property: from every reachable state where
    ``trigger`` holds, every weakly fair continuation reaches ``check``. Weak
    fairness is per action (each action value of a fair kind that stays enabled
    is eventually taken); ``fairness`` names the fair kinds.

    >>> p = eventually("done", bool, "terminates", trigger=lambda s: s == 0)
    >>> p.kind.value, p.trigger(0)
    ('eventually', True)
    """
    fair = None if fairness is None else tuple(fairness)
    return Property(
        name, PropertyKind.EVENTUALLY, check, doc, trigger=trigger, fairness=fair, explain=explain
    )


def leads_to(
    name: str,
    p: Callable[[Any], bool],
    q: Callable[[Any], bool],
    doc: str,
    *,
    fairness: Iterable[str] | None = None,
    explain: Callable[[Any], Any] | None = None,
) -> Property:
    """Leads-to, TLC's ``P ~> Q``: whenever ``p`` holds, ``q`` eventually holds (in that state
    or a later one), on every behaviour weakly fair in ``fairness`` (None: the system's
    ``fair_action_kinds()``). An :func:`eventually` property whose trigger is ``p`` and goal
    ``q``; its counterexample is a lasso: a prefix from an initial state through a ``p``-state,
    then a loop (``loop_start``) in which ``q`` never holds, or a behaviour that ends without
    ``q``. ``explain(s)`` says why ``q`` fails in the state the lasso loops in.

    >>> p = leads_to("served", lambda s: s == 1, lambda s: s == 2, "a request is served")
    >>> p.kind.value, p.trigger(1), p.check(2)
    ('eventually', True, True)
    """
    return eventually(name, q, doc, trigger=p, fairness=fairness, explain=explain)


@dataclass(frozen=True)
class ModelSpec:
    """A named model as the CLI knows it: its config type, system and properties.

    ``build(config)`` returns the TransitionSystem; ``properties(config)`` the list
    of properties to check; ``summary`` is one line for ``kafka-mc models``.
    """

    name: str
    summary: str
    config_cls: type
    build: Callable[[Any], Any]
    properties: Callable[[Any], list[Property]]


class ExitReason(enum.StrEnum):
    """Why an engine stopped."""

    COMPLETE = "complete"
    VIOLATION = "violation"
    BUDGET_EXHAUSTED = "budget_exhausted"
    INTERRUPTED = "interrupted"


@dataclass
class TraceStep:
    """One step of a counterexample: the action taken (None for the initial state),
    the resulting state's fingerprint, its rendering and what changed."""

    index: int
    action: str | None
    action_kind: str | None
    fingerprint: str
    state: Any
    changes: list[str]


@dataclass
class Violation:
    """A property that failed, with its shortest known trace.

    For ``reachable`` properties that were never witnessed the trace is empty.
    """

    property: str
    kind: str
    doc: str
    message: str
    length: int
    trace: list[TraceStep]
    #: for a liveness lasso: the index of the step whose state the trace returns to
    loop_start: int | None = None
    #: why it fails, in the model's words (:mod:`explorer.explain`): the entities and values at
    #: fault in the failing state or step, one line each
    explanation: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, prop: Property, message: str, trace: list[TraceStep]) -> Violation:
        """The violation of ``prop`` shown by ``trace`` (its length: the trace's steps)."""
        return cls(prop.name, prop.kind.value, prop.doc, message, len(trace) - 1, trace)


@dataclass
class LevelStats:
    """Statistics of one BFS level (depth): states first seen there, transitions."""

    depth: int
    frontier: int
    generated: int
    new_states: int
    seconds: float


@dataclass
class CheckResult:
    """The one result every engine returns; :meth:`to_json` gives the JSON document."""

    model: str
    config: dict[str, Any]
    engine: str
    exit_reason: ExitReason
    distinct_states: int
    generated_states: int
    max_depth: int
    seconds: float
    states_per_second: float
    violations: list[Violation] = field(default_factory=list)
    witnesses: dict[str, int] = field(default_factory=dict)
    properties: dict[str, dict[str, Any]] = field(default_factory=dict)
    levels: list[LevelStats] = field(default_factory=list)
    coverage: dict[str, Any] = field(default_factory=dict)
    budget: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 all holds and search complete; 1 violated; 3 budget ran out or interrupted."""
        if self.violations:
            return 1
        if self.exit_reason is ExitReason.COMPLETE:
            return 0
        return 3

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict (the documented schema in README.md)."""
        d = dataclasses.asdict(self)
        d["exit_reason"] = self.exit_reason.value
        d["exit_code"] = self.exit_code
        d["schema"] = "kafka-mc/check-result/1"
        return d


def _is_record(v: Any) -> bool:
    return (isinstance(v, tuple) and hasattr(v, "_fields")) or (
        dataclasses.is_dataclass(v) and not isinstance(v, type)
    )


def _fields(v: Any) -> list[tuple[str, Any]]:
    if isinstance(v, tuple):
        return list(zip(v._fields, v))  # type: ignore[attr-defined]
    return [(f.name, getattr(v, f.name)) for f in dataclasses.fields(v)]


def render_state(v: Any) -> Any:
    """A JSON-friendly rendering of a state: records become dicts, enums their names.

    >>> from typing import NamedTuple
    >>> class P(NamedTuple):
    ...     x: int
    ...     y: tuple[int, ...]
    >>> render_state(P(1, (2, 3)))
    {'x': 1, 'y': [2, 3]}
    """
    if _is_record(v):
        return {k: render_state(x) for k, x in _fields(v)}
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, tuple):
        return [render_state(x) for x in v]
    return v


def describe(v: Any) -> str:
    """A value as one readable line (the cells of a counterexample's step table): a record
    whose class defines ``__str__`` reads as the model words it; other records as
    ``Name(field=value, ...)``; enums by name; tuples in parentheses.

    >>> from typing import NamedTuple
    >>> class P(NamedTuple):
    ...     x: int
    ...     y: tuple[int, ...]
    >>> describe(P(1, (2, 3))), describe((P(0, ()),)), describe(None)
    ('P(x=1, y=(2, 3))', '(P(x=0, y=()),)', 'None')
    """
    if _is_record(v):
        if type(v).__str__ is not object.__str__:
            return str(v)
        return f"{type(v).__name__}(" + ", ".join(f"{k}={describe(x)}" for k, x in _fields(v)) + ")"
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, tuple):
        inner = ", ".join(describe(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    return repr(v)


def _short(v: Any) -> str:
    return describe(v)


def diff_states(old: Any, new: Any, path: str = "") -> list[str]:
    """List what changed between two states as ``path: old -> new`` lines.

    Records and equal-length tuples are compared field by field.

    >>> diff_states((1, (2, 3)), (1, (2, 4)))
    ['[1][1]: 3 -> 4']
    """
    if old == new and type(old) is type(new):
        return []
    if _is_record(old) and type(old) is type(new) and type(old).__str__ is object.__str__:
        # field by field, unless the model words the value itself (its class defines __str__)
        out: list[str] = []
        for (k, a), (_, b) in zip(_fields(old), _fields(new)):
            out += diff_states(a, b, f"{path}.{k}" if path else k)
        return out
    if (
        isinstance(old, tuple)
        and isinstance(new, tuple)
        and not _is_record(old)
        and len(old) == len(new)
        and len(old) > 0
    ):
        out = []
        for i, (a, b) in enumerate(zip(old, new)):
            out += diff_states(a, b, f"{path}[{i}]")
        return out
    return [f"{path or 'state'}: {_short(old)} -> {_short(new)}"]


def config_to_dict(config: Any) -> dict[str, Any]:
    """A JSON-friendly dict of a config dataclass.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class C:
    ...     n: int = 1
    >>> config_to_dict(C())
    {'n': 1}
    """
    if config is None:
        return {}
    if dataclasses.is_dataclass(config):
        return {f.name: render_state(getattr(config, f.name)) for f in dataclasses.fields(config)}
    if isinstance(config, Mapping):
        return dict(config)
    return {"value": repr(config)}
