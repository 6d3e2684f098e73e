"""Shrinking counterexamples: fewer steps, a smaller configuration, a runnable test.

:func:`shrink_trace` takes a violating trace (from ``simulate``, ``hypothesis`` or
``bfs``) and minimises it in three phases, each keeping a trace that replays step by
step (every action, named by its text, enabled in turn) and ends where the same
property fails:

1. **steps**: delta debugging (ddmin) over the action sequence. A candidate is the
   trace with some steps removed; it is replayed by action text from the initial
   state, and accepted when every step is enabled and the property fails at the end
   of some prefix (the candidate is then cut at the first such prefix). Steps of
   *fault* kinds (``fault_kinds=``, or the system's ``fault_kinds()`` when it has
   one) are tried for removal first, so of two equally short traces the one with
   fewer faults is kept. The result is 1-minimal: removing any single step breaks it.
2. **configuration** (``shrink_config=True``): each int key is tried at its lower
   bound, halfway down and one less; each list key without each of its items (bools,
   strings and enums, which select variants and mutants, are left alone). A smaller
   configuration is validated as ``load_config`` does and accepted when the current
   action texts still replay to a violation in it, or else when a bounded ``bfs``
   (``bfs_max_states``) finds a violation of the same property in it (its shortest).
   Passes repeat until no key shrinks.
3. **shortest** (``use_bfs=True``): a ``bfs`` bounded by the current length and
   ``bfs_max_states`` searches the final configuration for a shorter violation; if it
   finds one, that (shortest) trace replaces the ddmin result, and ddmin runs once more.

Properties that can be shrunk: ``always``, ``transition`` and the built-in
``deadlock``; an ``eventually`` / leads-to counterexample, a lasso, is shortened by
:mod:`explorer.search.lasso_shrink` instead (its prefix, then its loop, each candidate checked
whole as ``kafka-mc replay`` checks a lasso; the configuration kept). The result (:class:`Shrunk`) gives the minimal trace as readable steps
(:meth:`Shrunk.readable`), as a replayable trace file (:meth:`Shrunk.trace_document`,
schema ``kafka-mc/trace/1``) and as a runnable pytest module
(:meth:`Shrunk.pytest_source`). The generated test has two modes: ``bug`` (the
default) asserts that the property **is violated** at the end of the trace, so it
passes while the bug exists and fails once the trace no longer reproduces it (use it
to pin a known bug, or a mutant); ``fixed`` asserts the opposite (the trace no longer
replays, or the property holds at its end), as a regression test after a fix.

:func:`shrink_main` is ``kafka-mc shrink TRACE.json [--out-dir DIR] [--no-config]``.

Example
-------
>>> from explorer.core import always
>>> class Pair:  # two counters; either may increment, or reset itself
...     def init_states(self): return [(0, 0)]
...     def successors(self, s):
...         a, b = s
...         return [("a+1", (a + 1, b)), ("b+1", (a, b + 1)), ("a=0", (0, b))]
>>> bad = always("a_below_2", lambda s: s[0] < 2, "a stays below 2")
>>> long = [None, "b+1", "a+1", "a=0", "a+1", "b+1", "a+1"]
>>> out = shrink_trace(Pair(), None, long, "a_below_2", properties=[bad], shrink_config=False)
>>> [s.action for s in out.steps], out.original_length
([None, 'a+1', 'a+1'], 6)
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from explorer.config import ConfigError, load_config
from explorer.core import ModelSpec, Property, TraceStep, Violation, config_to_dict
from explorer.datafiles import DataFileError, check_named_system
from explorer.encoding import fingerprint
from explorer.engines.base import ModelError
from explorer.engines.bfs import check_bfs
from explorer.explain import explain_end, explain_violations
from explorer.frontend import SECONDS, Bounded, UsageError, check_output_dir, model_spec, system_factory
from explorer.run_traces import trace_path_of
from explorer.search import safeio, trace_steps
from explorer.search.shrinking import (
    SHRINKABLE,
    Checker,
    ShrinkError,
    config_size,
    ddmin,
    minimise_steps,
    replay_actions,
)
from explorer.shrunk import Shrunk, identifier, pytest_source, show_value
from explorer.tracefile import ReplayError, load_trace, replay_steps, trace_file_name, write_json_atomic

__all__ = [
    "ShrinkError",
    "Shrunk",
    "Target",
    "ddmin",
    "pytest_source",
    "replay_actions",
    "shrink_main",
    "shrink_trace",
    "target_for",
]

#: the step shrinkers ``shrink_trace(shrinker=...)`` and ``kafka-mc shrink --shrinker`` accept
SHRINKERS = ("hypothesis", "ddmin")


# --------------------------------------------------------------------------- targets


@dataclass
class Target:
    """How to rebuild the system and its properties from configuration values.

    ``build(values)`` returns ``(system, properties, config_dict)`` (raising
    ConfigError, ValueError or TypeError for a bad configuration); ``config_cls`` is
    the model's config dataclass (None for a ``--system`` factory or a bare system).
    """

    model: str
    build: Callable[[dict[str, Any]], tuple[Any, list[Property], dict[str, Any]]]
    config_cls: type | None = None
    system_ref: str | None = None


def _spec_target(spec: ModelSpec) -> Target:
    def build(values: dict[str, Any]) -> tuple[Any, list[Property], dict[str, Any]]:
        cfg = load_config(spec.config_cls, values=values)
        return spec.build(cfg), list(spec.properties(cfg)), config_to_dict(cfg)

    return Target(spec.name, build, spec.config_cls)


def _factory_target(ref: str) -> Target:
    """The target of a ``--system package.module:factory`` the user gave (imported by
    :func:`explorer.frontend.system_factory`, the one place a named module is imported)."""
    try:
        factory = system_factory(ref)
    except UsageError as e:
        raise ShrinkError(str(e).removeprefix("--system ")) from None

    def build(values: dict[str, Any]) -> tuple[Any, list[Property], dict[str, Any]]:
        try:
            system = factory(**values)
            props = list(system.properties()) if hasattr(system, "properties") else []
        except SystemExit as e:  # a model error (exit 4), not the end of kafka-mc
            raise ModelError(f"--system {ref}: the factory called sys.exit({e.code!r})") from None
        return system, props, dict(values)

    return Target(ref, build, None, ref)


def _registered_target(name: str) -> Target:
    """The target of the registered model ``name`` (looked up in the registry, never imported by
    name): what a trace file's ``model`` may choose."""
    try:
        return _spec_target(model_spec(name))
    except UsageError as e:
        raise ShrinkError(str(e)) from None


def target_for(what: Any, properties: Iterable[Property] | None = None) -> Target:
    """A :class:`Target` from a model name, a :class:`ModelSpec`, a ``module:factory``
    reference, a factory callable (called with the config values as keywords) or a
    system instance (its configuration cannot shrink).

    >>> t = target_for("tests.toys:grid")
    >>> system, props, cfg = t.build({"n": 2})
    >>> t.system_ref, cfg, sorted(p.name for p in props)
    ('tests.toys:grid', {'n': 2}, ['corner', 'monotone'])
    """
    if isinstance(what, Target):
        return what
    if isinstance(what, ModelSpec):
        return _spec_target(what)
    if isinstance(what, str):
        if ":" in what:
            return _factory_target(what)
        return _registered_target(what)
    if hasattr(what, "init_states") and hasattr(what, "successors"):
        fixed = list(properties) if properties is not None else None

        def build_fixed(values: dict[str, Any]) -> tuple[Any, list[Property], dict[str, Any]]:
            props = fixed if fixed is not None else list(getattr(what, "properties", list)())
            return what, props, dict(values)

        return Target(getattr(what, "name", type(what).__name__), build_fixed)
    if callable(what):

        def build_call(values: dict[str, Any]) -> tuple[Any, list[Property], dict[str, Any]]:
            system = what(**values)
            props = list(properties) if properties is not None else list(system.properties())
            return system, props, dict(values)

        return Target(getattr(what, "__name__", "system"), build_call)
    raise ShrinkError(f"cannot shrink with {what!r}: expected a model name, a ModelSpec or a factory")


# --------------------------------------------------------------------------- replay


# --------------------------------------------------------------------------- shrinking


def _config_candidates(
    values: dict[str, Any], config_cls: type | None
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Smaller configurations ``(key, label, values)``: each int key lower, each list key
    without one item."""
    bounds: dict[str, int] = {}
    ints: list[str] = []
    lists: list[str] = []
    if config_cls is not None and dataclasses.is_dataclass(config_cls):
        hints = typing.get_type_hints(config_cls)
        for f in dataclasses.fields(config_cls):
            tp = hints.get(f.name)
            v = values.get(f.name)
            if tp is int and isinstance(v, int) and not isinstance(v, bool):
                ints.append(f.name)
                lo = f.metadata.get("min")
                bounds[f.name] = lo if isinstance(lo, int) else 0
            elif typing.get_origin(tp) is tuple and isinstance(v, list):
                lists.append(f.name)
    else:
        for k, v in values.items():
            if isinstance(v, int) and not isinstance(v, bool):
                ints.append(k)
                bounds[k] = 0
            elif isinstance(v, list):
                lists.append(k)
    for k in ints:
        v = values[k]
        lo = bounds[k]
        tried: list[int] = []
        for c in (lo, (lo + v) // 2, v - 1):
            if lo <= c < v and c not in tried:
                tried.append(c)
                yield k, f"{k} {v} -> {c}", {**values, k: c}
    for k in lists:
        v = values[k]
        for i in range(len(v)):
            yield k, f"{k} without item {i} ({show_value(v[i])})", {**values, k: v[:i] + v[i + 1 :]}


def _bfs_shortest(
    system: Any, props: list[Property], name: str, max_depth: int | None, max_states: int, seconds: float
) -> tuple[list[Any], list[Any]] | None:
    if seconds <= 0:
        return None
    chosen = [] if name == "deadlock" else [p for p in props if p.name == name]
    r = check_bfs(
        system,
        chosen,
        deadlock=name == "deadlock",
        max_depth=max_depth,
        max_states=max_states,
        max_seconds=seconds,
    )
    v = next((v for v in r.violations if v.property == name and v.trace), None)
    if v is None:
        return None
    steps = [{"action": s.action, "fingerprint": s.fingerprint} for s in v.trace]
    states = replay_steps(system, steps)
    actions = [s.action for s in v.trace[1:]]
    return states, actions


def _to_dicts(steps: Sequence[Any]) -> list[dict[str, Any]]:
    out = []
    for s in steps:
        if isinstance(s, TraceStep):
            out.append({"action": s.action, "fingerprint": s.fingerprint})
        elif isinstance(s, dict):
            out.append(s)
        else:
            out.append({"action": s})
    return out


def shrink_trace(
    target: Any,
    config: Any,
    steps: Sequence[Any],
    property_name: str,
    *,
    properties: Iterable[Property] | None = None,
    shrink_config: bool = True,
    use_bfs: bool = True,
    bfs_max_states: int = 50_000,
    max_seconds: float = 60.0,
    fault_kinds: Iterable[str] | None = None,
    fixed_keys: Iterable[str] = (),
    shrinker: str = "hypothesis",
) -> Shrunk:
    """Minimise a violating trace of ``property_name`` and, where it can, its configuration.

    ``target`` is a model name, a :class:`ModelSpec`, a ``module:factory`` string, a
    factory or a system (see :func:`target_for`); ``config`` a config dataclass, a
    dict of values, or None (defaults). ``steps`` are trace steps (``TraceStep`` or
    dicts with ``action`` and, for step 0, ``fingerprint``), or action texts with
    None first. Raises :class:`ShrinkError` when the trace does not replay to a
    violation. ``max_seconds`` bounds the whole shrink (phases left are skipped).
    ``fixed_keys`` are configuration keys never changed (for example a bound that
    the property itself reads, which would otherwise shrink to a trivial failure).
    ``shrinker`` is ``"hypothesis"`` (steps and configuration shrunk together by
    Hypothesis, :mod:`explorer.search.shrink_hypothesis`, then ddmin as a 1-minimality pass) or
    ``"ddmin"`` (the hand-written phases only).

    >>> out = shrink_trace("tests.toys:grid", {"n": 4, "limit": 3},
    ...                    [None] + ["counter 1 increments", "counter 0 increments"] * 3,
    ...                    "sum_below_limit", shrink_config=False)
    >>> out.length, out.original_length
    (3, 6)
    >>> config, steps = out
    """
    start = time.monotonic()
    deadline = start + max_seconds

    def left() -> float:
        return deadline - time.monotonic()

    tgt = target_for(target, properties)
    keep = set(fixed_keys)
    values = config_to_dict(config) if config is not None else {}
    try:
        system, props, values = tgt.build(values)
    except (ConfigError, ValueError, TypeError) as e:
        raise ShrinkError(f"configuration: {e}") from None
    checker = Checker(system, props, property_name)
    dsteps = _to_dicts(steps)
    if not dsteps:
        raise ShrinkError("the trace has no steps")
    init_fp = dsteps[0].get("fingerprint")
    actions = [str(s.get("action")) for s in dsteps[1:]]
    faults = set(fault_kinds) if fault_kinds is not None else set(getattr(system, "fault_kinds", list)())
    kinds = [s.get("action_kind") for s in dsteps[1:]]
    original_length = len(actions)
    original_config = dict(values)
    got = replay_actions(system, checker, actions, init_fp)
    if got is None:
        raise ShrinkError(
            f"the trace does not replay to a violation of {property_name} (a step is not enabled, "
            "or the property holds throughout)"
        )
    notes: list[str] = []

    def minimise(
        system: Any, checker: Checker, acts: list[str], fp: str | None, kinds: list[Any]
    ) -> list[str]:
        return minimise_steps(system, checker, acts, fp, kinds, faults, deadline)

    if shrinker not in SHRINKERS:
        raise ShrinkError(f"shrinker {shrinker!r}: expected one of {', '.join(SHRINKERS)}")
    states, acts_obj = got
    acts = [str(a) for a in acts_obj]
    n0 = len(acts)
    from explorer.core import action_kind

    alphabet = list(acts)
    alphabet_kinds = [action_kind(a) for a in acts_obj]
    # ddmin first: cheap, and it hands Hypothesis a short example (a Hypothesis run costs
    # about one replay per candidate, and the candidates grow with the trace)
    acts = minimise(system, checker, acts, init_fp, kinds)
    notes.append(
        f"steps: {original_length} -> {len(acts)} by ddmin"
        + (f" (cut at {n0})" if n0 < original_length else "")
    )
    best = replay_actions(system, checker, acts, init_fp)
    assert best is not None

    def shorter_by_bfs(label: str) -> None:
        nonlocal best, acts
        assert best is not None
        if not use_bfs or len(best[1]) <= 1 or left() <= 0:
            return
        found = _bfs_shortest(system, props, property_name, len(best[1]) - 1, bfs_max_states, left())
        if found is not None and len(found[1]) < len(best[1]):
            notes.append(
                f"bfs: a shorter trace in the {label} configuration ({len(best[1])} -> {len(found[1])} steps)"
            )
            best = found
            acts = [str(a) for a in found[1]]

    shorter_by_bfs("original")

    # ---- configuration: smaller, with a trace no longer than the current one ----
    def shrink_configuration() -> None:
        nonlocal values, system, props, checker, best, acts, init_fp
        assert best is not None
        if not (shrink_config and values):
            return
        before = dict(values)
        changed = True
        while changed and left() > 0:
            changed = False
            for key_name, label, cand in _config_candidates(values, tgt.config_cls):
                if left() <= 0:
                    break
                if key_name in keep:
                    continue
                if config_size(cand) >= config_size(values):
                    continue
                try:
                    c_system, c_props, c_values = tgt.build(cand)
                    c_checker = Checker(c_system, c_props, property_name)
                except (ConfigError, ValueError, TypeError, ShrinkError):
                    continue
                found = replay_actions(c_system, c_checker, acts)
                how = "the same steps"
                if found is None and use_bfs:
                    found = _bfs_shortest(c_system, c_props, property_name, len(acts), bfs_max_states, left())
                    how = "bfs"
                if found is None or len(found[1]) > len(acts):
                    continue
                values, system, props, checker = c_values, c_system, c_props, c_checker
                best = found
                acts = [str(a) for a in found[1]]
                notes.append(f"config: {label} ({how}: {len(acts)} steps)")
                changed = True
                break
        if values != before:
            init_fp = f"{fingerprint(best[0][0]):016x}"
            acts = minimise(system, checker, acts, init_fp, [None] * len(acts))
            best = replay_actions(system, checker, acts, init_fp) or best
            shorter_by_bfs("final")

    shrink_configuration()

    # Hypothesis last: it starts from what the hand-written phases reached and, ranking length
    # first, keeps only what is no longer (so it never ends longer than they do); what it
    # changed in the configuration may open more: the configuration phase runs again
    if shrinker == "hypothesis" and left() > 0:
        from explorer.search.shrink_hypothesis import hypothesis_shrink, shrinkable_keys

        init_fp = f"{fingerprint(best[0][0]):016x}"
        replayed = best
        keys = shrinkable_keys(values, tgt.config_cls, keep if shrink_config else set(values))
        h = hypothesis_shrink(
            tgt.build,
            values,
            keys,
            acts,
            property_name,
            init_fp=init_fp,
            kinds=[action_kind(a) for a in replayed[1]],
            faults=faults,
            max_seconds=max(left() * 0.6, 0.0),
            alphabet=alphabet,
            alphabet_kinds=alphabet_kinds,
        )
        before_h = dict(values)
        if h is None:
            notes.append("hypothesis: the trace did not fail as a Hypothesis example (ddmin's result stands)")
        else:
            if h.values != values:
                system, props, values = tgt.build(h.values)
                checker = Checker(system, props, property_name)
            init_fp = f"{fingerprint(h.states[0]):016x}"
            changed_keys = [k for k in values if values[k] != before_h.get(k)]
            config_note = ", ".join(
                f"{k} {show_value(before_h[k])} -> {show_value(values[k])}" for k in changed_keys
            )
            notes.append(
                f"steps: {len(acts)} -> {len(h.actions)} by Hypothesis ({h.runs} runs"
                + (", time budget reached" if h.timed_out else "")
                + ")"
                + (f"; config: {config_note}" if changed_keys else "")
            )
            changed = h.texts != acts or bool(changed_keys)
            acts = h.texts
            if changed:
                polished = minimise(system, checker, acts, init_fp, [action_kind(a) for a in h.actions])
                if len(polished) < len(acts):
                    notes.append(f"steps: {len(acts)} -> {len(polished)} by ddmin after Hypothesis")
                acts = polished
            best = replay_actions(system, checker, acts, init_fp)
            assert best is not None
            if changed:
                shrink_configuration()

    if left() <= 0:
        notes.append(f"time budget of {max_seconds:g} s ran out: the result may not be minimal")

    states, acts_obj = best
    prop = checker.prop
    return Shrunk(
        model=tgt.model,
        config=values,
        property=property_name,
        kind=prop.kind.value if prop is not None else "deadlock",
        doc=prop.doc if prop is not None else "every non-terminal state has a successor",
        steps=trace_steps(states, acts_obj),
        original_length=original_length,
        original_config=original_config,
        system_ref=tgt.system_ref,
        notes=notes,
        explanation=explain_end(prop, states, acts_obj),
    )


# --------------------------------------------------------------------------- CLI


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kafka-mc shrink",
        description="Shrink a counterexample (a trace file of check --save-traces, or one violation of "
        "a --json result): fewer steps (ddmin, faults first), a bounded bfs for a shorter interleaving, "
        "a smaller configuration, then Hypothesis over steps and configuration together; write the "
        "shrunk trace and a pytest test that reproduces it. Exit 0 when shrunk, 1 when the trace no "
        "longer replays to its violation, 2 on bad input.",
    )
    p.add_argument(
        "trace", help="a trace file (--save-traces), a result file (--json) or a release run folder"
    )
    p.add_argument("--property", help="which violation of a result file (or a run folder's entry) to shrink")
    p.add_argument("--entry", help="a release run folder's entry whose counterexample to shrink")
    p.add_argument(
        "--system",
        metavar="MODULE:FACTORY",
        help="shrink a trace made with --system on this factory (it must be the one the file names: "
        "a file never chooses the code kafka-mc runs)",
    )
    p.add_argument(
        "--out-dir", metavar="DIR", help="where to write the outputs (default: the trace's directory)"
    )
    p.add_argument("--no-config", action="store_true", help="shrink the steps only, keep the configuration")
    p.add_argument(
        "--keep", action="append", default=[], metavar="KEY", help="a config key never to change (repeatable)"
    )
    p.add_argument("--no-bfs", action="store_true", help="no bounded bfs (ddmin over the steps only)")
    p.add_argument(
        "--shrinker",
        choices=SHRINKERS,
        default="hypothesis",
        help="hypothesis (default: steps and configuration shrunk together by Hypothesis) or ddmin",
    )
    p.add_argument("--mode", choices=("bug", "fixed"), default="bug", help="what the generated test asserts")
    p.add_argument("--max-seconds", type=SECONDS, default=60.0, metavar="S", help="time budget (default 60)")
    p.add_argument(
        "--bfs-max-states",
        type=Bounded(int, 1, 10**9),
        default=50_000,
        metavar="N",
        help="state budget of each bfs",
    )
    p.add_argument("--quiet", action="store_true", help="print only the summary line")
    return p


def _shrink_lasso_doc(target: Target, doc: dict[str, Any], max_seconds: float) -> Shrunk:
    """The shrunk lasso of a liveness trace file's ``doc`` (:func:`explorer.search.lasso_shrink.shrink_lasso`:
    its prefix, then its loop, each by delta debugging, every candidate checked whole as
    ``kafka-mc replay`` checks a lasso). Its configuration is kept (a note says so)."""
    from explorer.search.lasso_shrink import shrink_lasso

    config = dict(doc.get("config") or {})
    system, props, cfg = target.build(config)
    prop = next((p for p in props if p.name == doc.get("property")), None)
    if prop is None:
        raise ShrinkError(f"property {doc.get('property')!r} is not checked in the trace's configuration")
    steps = doc["steps"]
    got = shrink_lasso(
        system,
        prop,
        [str(st["action"]) for st in steps[1:]],
        doc.get("loop_start"),
        init_fp=steps[0].get("fingerprint"),
        max_seconds=max_seconds,
    )
    trace = trace_steps(got.states, got.actions)
    v = Violation(
        prop.name, prop.kind.value, prop.doc, "", len(got.actions), trace, loop_start=got.loop_start
    )
    explain_violations(system, props, [v])
    return Shrunk(
        target.model,
        cfg,
        prop.name,
        prop.kind.value,
        prop.doc,
        v.trace,
        len(steps) - 1,
        config,
        target.system_ref,
        notes=[
            "a lasso: its prefix and its loop shrunk by delta debugging, each candidate checked whole "
            "(the loop closes and is weakly fair, Q never holds in it, P before it); the configuration is kept"
        ],
        explanation=list(v.explanation),
        loop_start=got.loop_start,
    )


def shrink_main(argv: Sequence[str] | None = None) -> int:
    """``kafka-mc shrink TRACE.json [--out-dir DIR] [--no-config]``; returns the exit code.

    Writes ``<model>-<property>-shrunk.json`` (a trace file, named as ``check --save-traces``
    names them) and ``test_<name>_shrunk.py`` (a
    pytest module, ``--mode bug`` or ``fixed``) to ``--out-dir``, prints the length
    before and after and the readable trace. Exit codes: 0 shrunk; 1 the trace no
    longer replays to its violation; 2 bad input (one line on stderr).
    """
    try:
        try:
            args = _parser().parse_args(argv)
        except SystemExit as e:  # --help: printed by argparse
            return e.code if isinstance(e.code, int) else 0
        if not math.isfinite(args.max_seconds):
            raise _UsageError(f"--max-seconds: must be a finite number, got {args.max_seconds:g}")
        if args.max_seconds <= 0:
            raise _UsageError(f"--max-seconds: must be positive, got {args.max_seconds:g}")
        if args.bfs_max_states <= 0:
            raise _UsageError(f"--bfs-max-states: must be positive, got {args.bfs_max_states}")
        try:  # a trace or result file, or a release's run folder with --entry (explorer.run_traces)
            args.trace = trace_path_of(args.trace, args.entry, args.property)
            doc = load_trace(args.trace, args.property)
        except ReplayError as e:
            raise _UsageError(str(e)) from None
        out_dir = args.out_dir if args.out_dir is not None else os.path.dirname(os.path.abspath(args.trace))
        try:  # a folder, or one to make (when the outputs are written) in a writable folder
            check_output_dir(out_dir, "--out-dir")
        except UsageError as e:
            raise _UsageError(str(e)) from None
        prop = str(doc.get("property"))
        unknown_keep = [k for k in args.keep if k not in (doc.get("config") or {})]
        if unknown_keep:
            keys = ", ".join(doc.get("config") or {}) or "none"
            raise _UsageError(
                f"--keep {unknown_keep[0]}: not a key of the trace's configuration (keys: {keys})"
            )
        if doc.get("kind") not in (*SHRINKABLE, "eventually"):
            raise _UsageError(
                f"{args.trace}: property {prop} is {doc.get('kind')}: only {', '.join(SHRINKABLE)} shrink"
            )
        try:  # a file names, it never loads: a --system trace shrinks on the --system the user gives
            check_named_system(doc.get("system"), args.system, args.trace)
        except DataFileError as e:
            raise _UsageError(str(e)) from None
        target = _factory_target(args.system) if args.system else _registered_target(str(doc.get("model")))
        # the trace must replay exactly (fingerprints) before it is shrunk
        try:
            system, _, _ = target.build(dict(doc.get("config") or {}))
        except (ConfigError, ValueError, TypeError) as e:
            raise _UsageError(f"{args.trace}: configuration: {e}") from None
        try:
            replay_steps(system, doc["steps"])
        except ReplayError as e:
            print(f"kafka-mc shrink: the trace no longer replays: {e}", file=sys.stderr)
            return 1
        try:
            if doc.get("kind") == "eventually":  # a lasso: its prefix and loop (explorer.search.lasso_shrink)
                out = _shrink_lasso_doc(target, doc, args.max_seconds)
            else:
                out = shrink_trace(
                    target,
                    dict(doc.get("config") or {}),
                    doc["steps"],
                    prop,
                    shrink_config=not args.no_config,
                    use_bfs=not args.no_bfs,
                    bfs_max_states=args.bfs_max_states,
                    max_seconds=args.max_seconds,
                    fixed_keys=args.keep,
                    shrinker=args.shrinker,
                )
        except ShrinkError as e:
            if "does not replay to a violation" in str(e):
                print(f"kafka-mc shrink: {e}", file=sys.stderr)
                return 1
            raise _UsageError(str(e)) from None
    except (_UsageError, ShrinkError) as e:
        print(f"kafka-mc: error: {e}", file=sys.stderr)
        return 2
    stem = identifier(f"{out.model.rsplit(':', 1)[-1]}_{out.property}")
    trace_path = os.path.join(out_dir, trace_file_name(out.model, out.property, "-shrunk"))
    test_path = os.path.join(out_dir, f"test_{stem}_shrunk.py")
    os.makedirs(out_dir, exist_ok=True)
    write_json_atomic(trace_path, out.trace_document())
    source = out.pytest_source(args.mode).encode("utf-8")  # links replaced, never written through:
    safeio.write_atomic(test_path, source, tmp=test_path + ".tmp", sync=False)
    changes = out.config_changes()
    print(
        f"{out.model}: {out.property}: {out.original_length} steps -> {out.length} steps"
        + (f"; config: {', '.join(changes)}" if changes else "")
    )
    if not args.quiet:
        print(out.readable())
        for note in out.notes:
            print(f"  note: {note}")
    print(f"trace saved to {trace_path}")
    print(f"pytest test ({args.mode} mode) saved to {test_path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(shrink_main())
