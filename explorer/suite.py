"""The release suite's file: its entries, read and checked in full before anything runs.

A suite is TOML with one ``[[check]]`` table per entry::

    [[check]]
    name = "timing-wheel-ref"          # unique; used in the report and JUnit, and a file name:
                                       # 1 to 100 of A-Z a-z 0-9 . _ -, a letter or digit first
    model = "timing-wheel"             # a registered model (or, with engine "symbolic", a proof target)
    config = "timing-wheel-ref.toml"   # relative to the suite file
    set = ["tick_ms=1"]                # optional overrides
    engine = "bfs"
    max_seconds = 600                  # the entry's budget
    reduce = "none"                    # or "por" / "symmetry": a reduction (bfs; docs/reduction.md)
    full_states = 1234                 # with reduce: the full search's distinct states (the
                                       # report gives the reduction's factor; pinned in a test)
    expect = "hold"                    # or "violation": the model is known broken; or
                                       # "explore": a seeded, budgeted sampled run (below)
    violates = ["deadlock"]            # with expect = "violation": exactly these
    violates_at = { deadlock = 7 }     # optional (bfs): the shortest counterexample of an
                                       # expected violation, in steps: a shorter one is a new,
                                       # quicker way to break it, a longer one a changed flaw
    explore = { seed = 0, walks = 2000, depth = 150, swarm = true }  # with expect = "explore":
                                       # the simulate (or hypothesis) engine's options
    # required coverage (optional; an unmet requirement fails the entry):
    require_actions = "all"            # or a list: these action kinds must be enabled
    require_transitions = 0.5          # fraction of both state machines' edges taken, or a
                                       # list such as ["partition/OfflinePartition->OnlinePartition"]
    require_labels = ["elections/offline/isr"]  # coverage labels that must be hit
    require_witnesses = true           # every reachable property witnessed
    require_non_vacuous = true         # every guarded property applied at least once

Every mistake is a one-line :class:`~explorer.config.ConfigError` naming the entry and the
key, found before the first entry runs: whatever a run of an entry would refuse (its model,
configuration and overrides, a budget or reduction its engine does not take, an explore
option naming an unknown action kind, a requirement or expected violation its model or
proof target cannot meet) is asked when the suite loads. :mod:`explorer.release` runs the
entries and publishes the results.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

from explorer.config import ConfigError, did_you_mean, load_config, parse_override
from explorer.datafiles import DataFileError, read_toml
from explorer.engines.options import SAMPLING_ENGINES, refusal
from explorer.frontend import CHECK_ENGINES, registry
from explorer.search import REDUCTIONS

__all__ = ["SuiteEntry", "load_suite", "reduction_factor"]

_REQUIRE_KEYS = {
    "require_actions",
    "require_transitions",
    "require_labels",
    "require_witnesses",
    "require_non_vacuous",
}
_KEYS = {
    "name",
    "model",
    "config",
    "set",
    "engine",
    "max_seconds",
    "max_states",
    "reduce",
    "full_states",
    "expect",
    "violates",
    "violates_at",
    "explore",
    *_REQUIRE_KEYS,
}
#: the explore options keyed by action kind (the simulate engine's)
_KIND_OPTIONS = {"weights", "fault_probabilities"}
#: the engines an ``explore`` entry may run, with the options its ``explore`` table gives
_EXPLORE_ENGINES = ("simulate", "hypothesis")
_MACHINES = ("partition", "replica")
#: the registered model whose coverage labels name the state machines' edges
_STATE_MACHINE_MODEL = "controller"
#: an entry's name: it names a file (the entry's page ``entries/<name>.html``), so it is a short
#: plain file name, never a path, ``.``/``..``, an option (``-x``) or a name with a control character
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class SuiteEntry:
    """One check of a release suite (see the module docstring for the keys)."""

    name: str
    model: str
    config: str | None = None
    set: tuple[str, ...] = ()
    engine: str = "bfs"
    max_seconds: float | None = None
    max_states: int | None = None
    #: state-space reduction of the entry's bfs run (``none``, ``por`` or ``symmetry``, docs/reduction.md)
    reduce: str = "none"
    #: with a reduction: the distinct states of the full search, for the factor in the report
    full_states: int | None = None
    expect: str = "hold"
    violates: tuple[str, ...] = field(default=())
    #: with ``expect = "violation"`` (bfs): expected violation -> its shortest counterexample's steps
    violates_at: dict[str, int] = field(default_factory=dict)
    #: coverage requirements: key (``require_*``) -> value, as validated by :func:`load_suite`
    require: dict[str, Any] = field(default_factory=dict)
    #: with ``expect = "explore"``: the sampled engine's options (seed, walks, depth, ...)
    explore: dict[str, Any] = field(default_factory=dict)

    def engine_options(self) -> dict[str, Any] | None:
        """The options the entry's engine runs with (an ``explore`` entry's table; its
        Hypothesis runs keep no example database), or None for the engine's defaults.

        >>> SuiteEntry("x", "controller", engine="hypothesis", expect="explore", explore={"seed": 1}).engine_options()
        {'seed': 1, 'database': False}
        """
        if self.expect != "explore":
            return None
        extra = {"database": False} if self.engine == "hypothesis" else {}
        return {**self.explore, **extra}


def load_suite(path: str) -> list[SuiteEntry]:
    """Read and validate a suite file; ConfigError (one line) on anything wrong.

    >>> load_suite("/nonexistent.toml")
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: /nonexistent.toml: no such file
    """
    try:  # as data: bounded size and depth (explorer.datafiles)
        doc = read_toml(path)
    except DataFileError as e:
        raise ConfigError(str(e)) from None
    if not isinstance(doc, dict) or set(doc) - {"check"}:
        extra = sorted(set(doc) - {"check"})
        raise ConfigError(f"{path}: unknown top-level key {extra[0]!r} (a suite holds [[check]] tables)")
    checks = doc.get("check")
    if not isinstance(checks, list) or not checks or not all(isinstance(c, dict) for c in checks):
        raise ConfigError(f"{path}: no [[check]] entries")
    base = os.path.dirname(os.path.abspath(path))
    entries: list[SuiteEntry] = []
    seen: set[str] = set()
    for i, c in enumerate(checks):
        name = c.get("name")  # in the message when it can be shown on one line
        shown = isinstance(name, str) and name.isprintable() and 0 < len(name) <= 100
        where = f"{path}: check {i + 1}" + (f" ({name})" if shown else "")
        entries.append(_load_entry(where, base, c, seen))
    return entries


def _strings(where: str, c: dict[str, Any], key: str) -> tuple[str, ...]:
    """A list of non-empty strings under ``key`` (a string alone is an error, not its letters)."""
    v = c.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise ConfigError(f"{where}: {key} must be a list of non-empty strings, got {v!r}")
    return tuple(v)


def _violates_at(where: str, c: dict[str, Any], violates: tuple[str, ...]) -> dict[str, int]:
    """The ``violates_at`` table: names among ``violates``, each a positive number of steps."""
    v = c.get("violates_at", {})
    if not isinstance(v, dict):
        raise ConfigError(f"{where}: violates_at must be a table of property = steps, got {v!r}")
    for name, n in v.items():
        if name not in violates:
            raise ConfigError(f"{where}: violates_at: {name!r} is not in violates")
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ConfigError(f"{where}: violates_at: {name} must be a positive number of steps, got {n!r}")
    return dict(v)


def _number(where: str, c: dict[str, Any], key: str, integer: bool) -> Any:
    """A positive number (an int when ``integer``) under ``key``, or None when absent."""
    v = c.get(key)
    if v is None:
        return None
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    if isinstance(v, bool) or not ok or not math.isfinite(v) or v <= 0:
        kind = "a positive integer" if integer else "a positive number"
        raise ConfigError(f"{where}: {key} must be {kind}, got {v!r}")
    return v


def _load_entry(where: str, base: str, c: dict[str, Any], seen: set[str]) -> SuiteEntry:
    """One ``[[check]]`` table, checked in full (model, config file, overrides, engine, types)."""
    unknown = set(c) - _KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    for k in ("name", "model"):
        if not isinstance(c.get(k), str) or not c[k]:
            raise ConfigError(f"{where}: {k} must be a non-empty string")
    if not NAME_RULE.fullmatch(c["name"]):
        raise ConfigError(
            f"{where}: name must be 1 to 100 letters, digits, '.', '_' or '-', the first a letter or "
            f"digit (it names the file entries/<name>.html), got {c['name']!r:.60}"
        )
    if c["name"] in seen:
        raise ConfigError(f"{where}: duplicate name {c['name']!r}")
    seen.add(c["name"])
    expect = c.get("expect", "hold")
    if expect not in ("hold", "violation", "explore"):
        raise ConfigError(f"{where}: expect must be 'hold', 'violation' or 'explore', got {expect!r}")
    violates = _strings(where, c, "violates")
    if expect == "violation" and not violates:
        raise ConfigError(f"{where}: expect = 'violation' needs the list 'violates'")
    if expect != "violation" and violates:
        raise ConfigError(f"{where}: violates lists the expected violations of an expect = 'violation' entry")
    violates_at = _violates_at(where, c, violates)
    overrides = _strings(where, c, "set")
    engine = c.get("engine", "bfs")
    engines = (*CHECK_ENGINES, "symbolic")
    if not isinstance(engine, str) or engine not in engines:
        raise ConfigError(f"{where}: engine must be one of {', '.join(engines)}, got {engine!r}")
    if violates_at and engine != "bfs":
        raise ConfigError(
            f"{where}: violates_at needs engine 'bfs' (only it finds the shortest counterexample)"
        )
    max_seconds = _number(where, c, "max_seconds", integer=False)
    max_states = _number(where, c, "max_states", integer=True)
    explore = _explore_options(where, c, expect, engine)
    reduce = c.get("reduce", "none")
    if reduce not in REDUCTIONS or (reduce != "none" and engine != "bfs"):
        raise ConfigError(
            f"{where}: reduce must be one of {', '.join(REDUCTIONS)} (bfs only), got {reduce!r}"
        )
    full_states = _number(where, c, "full_states", integer=True)
    if full_states is not None and reduce == "none":
        raise ConfigError(f"{where}: full_states is the full search's count of a reduced entry (set reduce)")
    cfg = c.get("config")
    if cfg is not None and (not isinstance(cfg, str) or not cfg):
        raise ConfigError(f"{where}: config must be a non-empty file name, got {cfg!r}")
    config = None if cfg is None else os.path.join(base, cfg)
    require = _validate_requirements(where, c)
    _engine_takes(where, c, engine, max_states, reduce, require)
    model: str = c["model"]
    try:
        if engine == "symbolic":
            from explorer.symbolic import list_targets

            if model not in list_targets():  # a file names, it never loads: no module:function here
                how = (
                    " (a suite names registered targets only; prove it with `kafka-mc prove`)"
                    if ":" in model
                    else ""
                )
                raise ConfigError(
                    f"unknown proof target {model!r:.80}{how} (known: {', '.join(list_targets())})"
                )
            if config is not None:
                raise ConfigError("config: engine 'symbolic' takes a proof target and set, not a config file")
            from explorer.symbolic.targets import TargetConfigError, target_obligations

            try:  # every bound checked when the suite loads, not when the entry's turn comes
                obligations = target_obligations(model, dict(parse_override(o) for o in overrides))
            except TargetConfigError as e:
                raise ConfigError(f"set: {str(e).removeprefix(f'{model}: ')}") from None
            _known_names("violates", violates, [o.name for o in obligations], f"an obligation of {model}")
        else:
            reg = registry()
            if model not in reg.MODEL_MODULES:
                raise ConfigError(f"unknown model {model!r} (known models: {', '.join(reg.MODEL_MODULES)})")
            spec = reg.get_model(model)
            loaded = load_config(spec.config_cls, config, list(overrides))
            if violates:
                names = [p.name for p in spec.properties(loaded)] + ["deadlock"]
                _known_names("violates", violates, names, f"a property of {model}")
            kinds = isinstance(require.get("require_actions"), tuple) or explore.keys() & _KIND_OPTIONS
            if kinds or "require_transitions" in require:  # what the entry's own system declares
                system = spec.build(loaded)
                if kinds:
                    _check_action_kinds(model, system, require, explore)
                if "require_transitions" in require:
                    _check_transitions(model, system, require["require_transitions"])
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None
    return SuiteEntry(
        name=c["name"],
        model=model,
        config=config,
        set=overrides,
        engine=engine,
        max_seconds=max_seconds,
        max_states=max_states,
        reduce=reduce,
        full_states=full_states,
        expect=expect,
        violates=violates,
        violates_at=violates_at,
        require=require,
        explore=explore,
    )


def _explore_options(where: str, c: dict[str, Any], expect: str, engine: str) -> dict[str, Any]:
    """An ``explore`` entry's engine options, checked by the engine's options type; ConfigError
    (one line) naming the bad key or value.

    >>> _explore_options("s: check 1", {"explore": {"seed": 3, "walks": 10}}, "explore", "simulate")
    {'seed': 3, 'walks': 10}
    >>> _explore_options("s: check 1", {"explore": {"seed": 0, "walk": 10}}, "explore", "simulate")
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: s: check 1: explore: simulate engine option 'walk': unknown (did you mean 'walks'?); known: cut_loops, depth, fault_probabilities, seed, swarm, walks, weights
    """
    table = c.get("explore")
    if expect != "explore":
        if table is not None:
            raise ConfigError(f"{where}: explore is the options of an expect = 'explore' entry")
        return {}
    if engine not in _EXPLORE_ENGINES:
        raise ConfigError(
            f"{where}: an explore entry runs engine {' or '.join(_EXPLORE_ENGINES)}, got {engine!r}"
        )
    if (
        not isinstance(table, dict)
        or not isinstance(table.get("seed"), int)
        or isinstance(table.get("seed"), bool)
    ):
        raise ConfigError(
            f"{where}: explore must be a table with an integer seed (a run that can be repeated)"
        )
    if "database" in table:  # a release's Hypothesis run keeps none (SuiteEntry.engine_options)
        raise ConfigError(
            f"{where}: explore: database: a suite entry's Hypothesis run keeps no example database"
        )
    from explorer.engines.options import HypothesisOptions, SimulateOptions

    kind = SimulateOptions if engine == "simulate" else HypothesisOptions
    try:
        kind.of({**table, **({"database": False} if engine == "hypothesis" else {})})
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{where}: explore: {e}") from None
    return dict(table)


def reduction_factor(e: SuiteEntry, res: dict[str, Any]) -> float | None:
    """The full search's distinct states over the reduced search's, for a complete reduced
    run whose entry gives ``full_states`` (else None).

    >>> e = SuiteEntry("x", "controller", reduce="symmetry", full_states=300)
    >>> reduction_factor(e, {"distinct_states": 150, "exit_reason": "complete"})
    2.0
    >>> reduction_factor(e, {"distinct_states": 150, "exit_reason": "budget_exhausted"}) is None
    True
    """
    if e.reduce == "none" or e.full_states is None or not res.get("distinct_states"):
        return None
    if res.get("exit_reason") not in ("complete", "violation"):
        return None
    return round(e.full_states / res["distinct_states"], 3)


def _validate_requirements(where: str, c: dict[str, Any]) -> dict[str, Any]:
    """The entry's ``require_*`` keys, checked; ConfigError (one line) naming a bad one.

    >>> _validate_requirements("s: check 1", {"require_transitions": 0.5, "require_witnesses": True})
    {'require_transitions': 0.5, 'require_witnesses': True}
    >>> _validate_requirements("s: check 1", {"require_actions": "some"})
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: s: check 1: require_actions must be "all" or a list of action kinds, got 'some'
    """
    out: dict[str, Any] = {}
    for key in sorted(_REQUIRE_KEYS & set(c)):
        v = c[key]
        strings = isinstance(v, list) and all(isinstance(x, str) and x for x in v)
        if key == "require_actions":
            if v != "all" and not strings:
                raise ConfigError(
                    f'{where}: require_actions must be "all" or a list of action kinds, got {v!r}'
                )
            v = "all" if v == "all" else tuple(v)
        elif key == "require_transitions":
            if isinstance(v, bool) or (not (isinstance(v, (int, float)) and 0 <= v <= 1) and not strings):
                raise ConfigError(
                    f"{where}: require_transitions must be a fraction in [0, 1] or a list like "
                    f'["partition/OfflinePartition->OnlinePartition"], got {v!r}'
                )
            v = tuple(v) if strings else float(v)  # the edges are the model's: _check_transitions
        elif key == "require_labels":
            if not strings or any(len(x.split("/")) < 2 for x in v):
                raise ConfigError(
                    f'{where}: require_labels must be a list of label paths like "elections/offline/isr", got {v!r}'
                )
            v = tuple(v)
        elif not isinstance(v, bool):
            raise ConfigError(f"{where}: {key} must be true or false, got {v!r}")
        out[key] = v
    return out


def _state_machine_edges(system: Any) -> set[str]:
    """Every edge of the state machines a system declares, as ``machine/From->To``: read from
    its coverage labels (``state_machines/...``); empty when it declares none.

    >>> spec = registry().get_model(_STATE_MACHINE_MODEL)
    >>> "partition/OfflinePartition->OnlinePartition" in _state_machine_edges(spec.build(load_config(spec.config_cls)))
    True
    """
    labels = system.coverage_labels() if hasattr(system, "coverage_labels") else ()
    return {"/".join(lb[1:]) for lb in labels if lb[0] == "state_machines"}


def _check_transitions(model: str, system: Any, required: float | tuple[str, ...]) -> None:
    """``require_transitions`` asks for edges of state machines the model declares: a model
    without one could never meet it, and a name that is no edge could never be taken."""
    edges = _state_machine_edges(system)
    if not edges:
        raise ConfigError(
            f"require_transitions: {model} declares no state machine (no state_machines labels)"
        )
    for x in required if isinstance(required, tuple) else ():
        if x not in edges:
            raise ConfigError(
                f"require_transitions: {x!r} is no edge of the partition or replica state machine "
                "(write machine/From->To)"
            )


def _check_action_kinds(model: str, system: Any, require: dict[str, Any], explore: dict[str, Any]) -> None:
    """``require_actions`` and an explore table's ``weights`` and ``fault_probabilities`` name
    only action kinds the model declares (when it declares them): the simulate engine would
    refuse an unknown one only when the entry's turn came."""
    kinds = getattr(system, "action_kinds", None)
    if kinds is None:
        return
    declared = list(kinds())
    if isinstance(require.get("require_actions"), tuple):
        for k in require["require_actions"]:
            if k not in declared:
                raise ConfigError(
                    f"require_actions: {k!r} is not an action kind of {model} (kinds: {', '.join(sorted(declared))})"
                )
    from explorer.engines.simulate import _known_kinds  # the engine's own check, asked now

    try:
        for option in sorted(explore.keys() & _KIND_OPTIONS):
            _known_kinds(option, explore[option], declared)
    except ValueError as e:
        raise ConfigError(f"explore: {e}") from None


def _known_names(key: str, given: tuple[str, ...], known: list[str], what: str) -> None:
    """ConfigError naming the first of ``given`` not in ``known`` (with the nearest known name).

    >>> _known_names("violates", ("dedlock",), ["deadlock"], "a property of m")
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: violates: 'dedlock' is not a property of m (did you mean 'deadlock'?)
    """
    for name in given:
        if name not in known:
            raise ConfigError(f"{key}: {name!r} is not {what}{did_you_mean(name, known)}")


def _engine_takes(
    where: str, c: dict[str, Any], engine: str, max_states: int | None, reduce: str, require: dict[str, Any]
) -> None:
    """The entry's keys are ones its engine uses: a budget or requirement it would ignore, or
    a combination it refuses when it starts (:func:`explorer.engines.options.refusal`), is a
    one-line error now, not after the entries before it ran.

    >>> _engine_takes("s: check 2", {}, "simulate", 10, "none", {})
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: s: check 2: max_states applies to the exhaustive engines, not to engine simulate (a walk has no state set to bound)
    """
    if engine == "symbolic":
        for key in ("max_states", *sorted(require)):
            if key in c:
                raise ConfigError(
                    f"{where}: {key} applies to a search; engine 'symbolic' proves obligations (no states "
                    "to bound or cover)"
                )
        return
    if engine in SAMPLING_ENGINES and max_states is not None:
        raise ConfigError(
            f"{where}: max_states applies to the exhaustive engines, not to engine {engine} (a walk has no "
            "state set to bound)"
        )
    why = refusal(engine, reduce=reduce, max_states=max_states)
    if why is not None:
        raise ConfigError(f"{where}: {why}")
