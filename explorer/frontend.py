"""What the CLI and the release suite share: models by name, running a check or the
proofs of a target, and printing a result.

Both are thin users of :func:`explorer.api.check`; this module turns their inputs (a
model name or ``--system package.module:factory``, a config file, ``--set`` overrides,
flags) into a system and :class:`~explorer.engines.base.CheckOptions`, and engine errors
into :class:`UsageError` (exit code 2) or :class:`EngineError` (exit code 1). Models are
reached only through the registry module :data:`REGISTRY` (``invariants``), imported by
name: the explorer itself imports no model.

Example
-------
>>> from explorer.api import CheckOptions
>>> r, _, _ = run_check("timing-wheel", CheckOptions(max_depth=1), overrides=["tick_ms=1"])
>>> print(format_result(r).splitlines()[0])
timing-wheel (bfs): budget_exhausted (max_depth reached)
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import sys
import unicodedata
from collections.abc import Sequence
from typing import Any

from explorer.api import CheckOptions, EngineSetupError, ModelError, UntrustedResultError, check
from explorer.config import did_you_mean, load_config, parse_override
from explorer.core import CheckResult, ExitReason, ModelSpec
from explorer.datafiles import DataFileError, check_system_ref
from explorer.encoding import EncodingError, encode
from explorer.engines import ENGINES
from explorer.engines.options import refusal
from explorer.search import REDUCTIONS, Progress, codec, polled, stop_requested, trace_step
from explorer.tracefile import ReplayError, replay_steps

__all__ = [
    "CHECK_ENGINES",
    "MUTATE_HELP",
    "REGISTRY",
    "SECONDS",
    "SEED",
    "Bounded",
    "EngineError",
    "ModelError",
    "UsageError",
    "check_output_dir",
    "check_output_path",
    "check_state_values",
    "format_result",
    "listdir_or_none",
    "model_spec",
    "positive",
    "registry",
    "resolve_system",
    "run_check",
    "run_proofs",
    "system_factory",
    "system_module",
    "verify_trace",
    "wrap_columns",
]

#: Where model specs are registered (imported by name: the one place that joins the packages).
REGISTRY = "invariants"

#: ``kafka-mc mutate``'s line in ``kafka-mc --help`` (the CLI lists the verb without importing it)
MUTATE_HELP = "mutation testing: which mutants of a model do the checks kill?"
#: the most worker processes ``--workers`` forks
MAX_WORKERS = 256
#: the engines ``kafka-mc check`` runs on a system (``symbolic`` runs proof targets instead)
CHECK_ENGINES = tuple(name for name in ENGINES if name != "symbolic")


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit code 2."""


class EngineError(Exception):
    """An engine could not produce a trustworthy answer (e.g. a fingerprint collision):
    printed as one line, exit code 1."""


def registry() -> Any:
    """The model registry module (``invariants``): ``MODEL_MODULES`` and ``get_model``.

    >>> "timing-wheel" in registry().MODEL_MODULES
    True
    """
    return importlib.import_module(REGISTRY)


def model_spec(name: str) -> ModelSpec:
    """The registered model ``name``; UsageError naming the known models otherwise.

    >>> model_spec("timing-wheel").name
    'timing-wheel'
    """
    reg = registry()
    if name not in reg.MODEL_MODULES:
        known = ", ".join(reg.MODEL_MODULES)
        raise UsageError(
            f"unknown model {name!r}{did_you_mean(name, reg.MODEL_MODULES)} (known models: {known})"
        )
    spec: ModelSpec = reg.get_model(name)
    return spec


def resolve_system(ref: str, overrides: Sequence[str] = ()) -> tuple[Any, list[Any]]:
    """Load a user system ``package.module:factory``; return (system, properties).

    ``--set k=v`` overrides are passed to the factory as keyword arguments.
    Properties come from ``system.properties()`` when it exists.

    >>> system, props = resolve_system("tests.toys:Grid", ["n=2"])
    >>> len(list(system.init_states())), [p.name for p in props]
    (1, ['monotone', 'corner'])
    """
    factory = system_factory(ref)
    kwargs = dict(parse_override(o) for o in overrides)
    try:
        system = factory(**kwargs)
    except (TypeError, ValueError) as e:  # the arguments (--set) do not suit the factory
        raise UsageError(f"--system {ref}: {_one_line(e)}") from None
    except Exception as e:
        raise ModelError(f"--system {ref}: the factory raised {_one_line(e)}") from None
    except SystemExit as e:
        raise ModelError(f"--system {ref}: the factory called sys.exit({e.code!r})") from None
    if not (hasattr(system, "init_states") and hasattr(system, "successors")):
        raise UsageError(f"--system {ref}: the factory's result has no init_states/successors")
    try:
        props = list(system.properties()) if hasattr(system, "properties") else []
    except Exception as e:
        raise ModelError(f"--system {ref}: properties() raised {_one_line(e)}") from None
    except SystemExit as e:
        raise ModelError(f"--system {ref}: properties() called sys.exit({e.code!r})") from None
    check_state_values(system, f"--system {ref}")
    return system, props


def system_module(ref: str) -> Any:
    """The module of a ``--system package.module:factory`` **given on the command line** (or by a
    caller in Python): the one place kafka-mc imports a module a user names. A file may only name
    a system (:func:`explorer.datafiles.check_named_system`), never have it imported. UsageError
    for a reference that is not dotted Python names or a module that does not import; ModelError
    (exit 4) when importing it raises or calls ``sys.exit``.

    >>> system_module("tests.toys:Grid").__name__
    'tests.toys'
    >>> system_module("os:system('id')")
    Traceback (most recent call last):
    ...
    explorer.frontend.UsageError: --system: expected package.module:factory (dotted Python names), got "os:system('id')"
    """
    try:
        mod_name = check_system_ref(ref, "--system").partition(":")[0]
    except DataFileError as e:
        raise UsageError(str(e)) from None
    here = os.getcwd()  # as `python3 -m explorer` finds it: the console script's path lacks the folder
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)  # last: an installed module of the same name still wins
    try:
        module = importlib.import_module(mod_name)
    except ImportError as e:
        raise UsageError(f"--system {ref}: cannot import {mod_name} ({e})") from None
    except Exception as e:
        raise ModelError(f"--system {ref}: importing {mod_name} raised {_one_line(e)}") from None
    except SystemExit as e:
        raise ModelError(f"--system {ref}: importing {mod_name} called sys.exit({e.code!r})") from None
    codec.trust_package(mod_name.split(".")[0])  # its states may be in a checkpoint to resume
    return module


def system_factory(ref: str) -> Any:
    """The callable a ``--system package.module:factory`` names (its module imported by
    :func:`system_module`); UsageError when there is none.

    >>> system_factory("tests.toys:Grid").__name__
    'Grid'
    """
    module = system_module(ref)
    obj: Any = module
    for part in ref.partition(":")[2].split("."):
        obj = getattr(obj, part, None)
    if obj is None or not callable(obj):
        raise UsageError(f"--system {ref}: {module.__name__} has no callable {ref.partition(':')[2]!r}")
    return obj


def _one_line(e: BaseException) -> str:
    """``Type: first line of the message`` of an exception."""
    text = str(e).strip()
    return type(e).__name__ + (f": {text.splitlines()[0]}" if text else "")


def check_state_values(system: Any, where: str) -> None:
    """ModelError unless the initial states and their successors are immutable values
    (hashable, with a canonical encoding: ints, bools, None, str, enums, tuples,
    NamedTuples, frozen dataclasses). A mutable state object would be explored as an
    endless series of "new" states; a list would fail deep in the search.

    >>> class Lists:
    ...     def init_states(self): return [[0]]
    ...     def successors(self, s): return []
    >>> check_state_values(Lists(), "--system x:y")
    Traceback (most recent call last):
    ...
    explorer.engines.base.ModelError: --system x:y: initial state [0] is not an immutable value (cannot encode a list in a state: [0]); states are built from ints, bools, None, str, enums, tuples, NamedTuples and frozen dataclasses
    """

    def check(what: str, states: list[Any]) -> None:
        for s in states:
            try:
                encode(s)
                hash(s)
            except (TypeError, EncodingError) as e:
                shown = repr(s) if len(repr(s)) <= 80 else repr(s)[:77] + "..."
                raise ModelError(
                    f"{where}: {what} {shown} is not an immutable value ({str(e).splitlines()[0]}); "
                    "states are built from ints, bools, None, str, enums, tuples, NamedTuples and frozen dataclasses"
                ) from None

    try:
        inits = list(system.init_states())
        check("initial state", inits)
        firsts = [t for _, t in system.successors(inits[0])] if inits else []
    except ModelError:
        raise
    except Exception as e:
        raise ModelError(f"{where}: the system raised {_one_line(e)} computing its first states") from None
    except SystemExit as e:
        raise ModelError(
            f"{where}: the system called sys.exit({e.code!r}) computing its first states"
        ) from None
    check("successor of the first initial state", firsts)


class Bounded:
    """An argparse ``type``: a number read from text and bounded, so a command line cannot ask
    for ``nan`` seconds or 10^20 walks; the error is argparse's one line naming the option.
    Every numeric option of the CLI has one (a test holds the parser to that).

    >>> Bounded(int, 1, 256)("8"), Bounded(float, 0, 60, lo_open=True)("0.5")
    (8, 0.5)
    >>> Bounded(int, 1, 256)("1000")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be positive and at most 256, got 1000
    >>> Bounded(float, 0, 60, lo_open=True)("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number, got nan
    >>> Bounded(int, -2**63, 2**63 - 1).range_text()
    'from -9,223,372,036,854,775,808 to 9,223,372,036,854,775,807'
    """

    def __init__(self, kind: type, lo: float, hi: float, lo_open: bool = False):
        self.kind, self.lo, self.hi, self.lo_open = kind, lo, hi, lo_open
        self.__name__ = kind.__name__  # argparse names the type in some of its messages

    def range_text(self) -> str:
        """The accepted range in words."""
        lo, hi = (
            (f"{int(self.lo):,}", f"{int(self.hi):,}")
            if self.kind is int
            else (f"{self.lo:g}", f"{self.hi:g}")
        )
        if (self.kind is int and self.lo == 1) or (self.lo == 0 and self.lo_open):
            return f"positive and at most {hi}"
        return f"from {lo} to {hi}"

    def __call__(self, text: str) -> Any:
        import argparse

        try:
            value = self.kind(text)
        except (ValueError, OverflowError):
            what = "an integer" if self.kind is int else "a number"
            raise argparse.ArgumentTypeError(f"expected {what}, got {text[:40]!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
        if value < self.lo or (self.lo_open and value == self.lo) or value > self.hi:
            raise argparse.ArgumentTypeError(f"must be {self.range_text()}, got {text[:40]}")
        return value


#: a time budget: more than 0 seconds, at most about 31 years
SECONDS = Bounded(float, 0, 1e9, lo_open=True)
#: a seed: a 64-bit integer
SEED = Bounded(int, -(2**63), 2**63 - 1)


def names(text: str) -> list[str]:
    """An argparse ``type``: a comma-separated list of names (``check --properties``).

    >>> names("a, b")
    ['a', 'b']
    """
    import argparse  # as Bounded does: the CLI's start-up imports no more than it needs

    out = [n.strip() for n in text.split(",")]
    if not all(out):
        raise argparse.ArgumentTypeError(f"a comma-separated list of names, got {text!r}")
    return out


def positive(flag: str, value: float | None) -> None:
    """UsageError unless ``value`` is None or positive.

    >>> positive("--workers", 0)
    Traceback (most recent call last):
    ...
    explorer.frontend.UsageError: --workers: must be positive, got 0
    """
    if value is not None and not math.isfinite(value):
        raise UsageError(f"{flag}: must be a finite number, got {value:g}")
    if value is not None and value <= 0:
        raise UsageError(f"{flag}: must be positive, got {value:g}")


def _validate(o: CheckOptions) -> None:
    """The checks ``kafka-mc check`` makes on its options (messages name the flags)."""
    if o.engine not in CHECK_ENGINES:
        raise UsageError(
            f"--engine {o.engine}: unknown engine{did_you_mean(o.engine, ENGINES)} (available: {', '.join(ENGINES)})"
        )
    # the budgets asked first, so their refusal comes before the checks below
    why = refusal(o.engine, max_depth=o.max_depth, max_states=o.max_states)
    if why is not None:
        raise UsageError(why)
    positive("--workers", o.workers)
    if o.workers > MAX_WORKERS:
        raise UsageError(f"--workers: at most {MAX_WORKERS}, got {o.workers}")
    if o.reduce not in REDUCTIONS:
        raise UsageError(
            f"--reduce {o.reduce}: unknown reduction{did_you_mean(o.reduce, REDUCTIONS)} (available: {', '.join(REDUCTIONS)})"
        )
    why = o.refusal()  # engines.options.refusal: the one place these rules live
    if why is not None:
        raise UsageError(why)
    positive("--max-depth", o.max_depth)
    positive("--max-states", o.max_states)
    positive("--max-seconds", o.max_seconds)


def run_check(
    model: str | None,
    options: CheckOptions,
    *,
    system_ref: str | None = None,
    config_path: str | None = None,
    overrides: Sequence[str] = (),
    only: Sequence[str] | None = None,
) -> tuple[CheckResult, Any, list[Any]]:
    """Build the system (registered ``model`` or ``system_ref``), run :func:`explorer.api.check`
    on its properties (with ``only``: just those named, :func:`select_properties`).

    ``options.model`` and ``options.config`` are filled in from the model (or the
    factory and its ``overrides``). Returns (result, system, properties). Raises
    UsageError / ConfigError on bad input, EngineError when the engine cannot give a
    trustworthy answer.

    >>> run_check("timing-wheel", CheckOptions(engine="dfs"))
    Traceback (most recent call last):
    ...
    explorer.frontend.UsageError: --engine dfs: unknown engine (did you mean 'bfs'?) (available: bfs, spark, simulate, hypothesis, symbolic)
    """
    _validate(options)
    if options.engine != "bfs":  # the engines that poll for a signal (see explorer.search.stopping)
        return _run_check(model, options, system_ref, config_path, overrides, only)
    with polled():  # a signal while the system is built stops the search at its first state
        return _run_check(model, options, system_ref, config_path, overrides, only)


def _run_check(
    model: str | None,
    options: CheckOptions,
    system_ref: str | None,
    config_path: str | None,
    overrides: Sequence[str],
    only: Sequence[str] | None = None,
) -> tuple[CheckResult, Any, list[Any]]:
    if system_ref is not None:
        if config_path is not None:
            raise UsageError("--config cannot be used with --system (pass --set to the factory)")
        system, props = resolve_system(system_ref, overrides)
        name, cfg = system_ref, {"args": dict(parse_override(o) for o in overrides)}
    else:
        assert model is not None
        spec = model_spec(model)
        config = load_config(spec.config_cls, config_path, overrides)
        system, props = spec.build(config), spec.properties(config)
        name, cfg = spec.name, config
    if only is not None:
        props = select_properties(props, only)
    try:
        result = check(system, props, dataclasses.replace(options, model=name, config=cfg))
    except EngineSetupError as e:
        raise UsageError(str(e).splitlines()[0]) from None
    except UntrustedResultError as e:
        raise EngineError(str(e).splitlines()[0]) from None
    except (ModelError, OSError):  # OSError: the engine's own files (a checkpoint, a full disk)
        raise
    except ValueError as e:
        raise UsageError(str(e).splitlines()[0]) from None
    except Exception as e:  # an engine without its own account of the model's exceptions
        raise ModelError(f"{name}: the system raised {_one_line(e)} during the search") from None
    except SystemExit as e:  # a model calling sys.exit is a model error, not the end of kafka-mc
        raise ModelError(f"{name}: the system called sys.exit({e.code!r}) during the search") from None
    if system_ref is not None:
        result.config = cfg["args"]
    return result, system, props


def select_properties(props: Sequence[Any], names: Sequence[str]) -> list[Any]:
    """The properties of ``props`` named in ``names`` (``check --properties``), in their own
    order; UsageError naming the first unknown name.

    >>> from explorer.core import always
    >>> ps = [always("small", bool, ""), always("even", bool, "")]
    >>> [p.name for p in select_properties(ps, ["even"])]
    ['even']
    >>> select_properties(ps, ["smal"])
    Traceback (most recent call last):
    ...
    explorer.frontend.UsageError: --properties: unknown property 'smal' (did you mean 'small'?); this configuration checks: even, small
    """
    known = {p.name for p in props}
    for n in names:
        if n not in known:
            raise UsageError(
                f"--properties: unknown property {n!r}{did_you_mean(n, known)}; "
                f"this configuration checks: {', '.join(sorted(known)) or 'none'}"
            )
    wanted = set(names)
    return [p for p in props if p.name in wanted]


def run_proofs(
    target: str,
    overrides: Sequence[str],
    only: Sequence[str] | None,
    max_seconds: float | None,
    progress: Progress | None = None,
) -> CheckResult:
    """Run the z3 proofs of ``target`` (the ``symbolic`` engine); UsageError on bad input.

    >>> r = run_proofs("timing-wheel", [], ["overflow_wheel_parameters"], None)
    >>> r.engine, r.exit_code
    ('symbolic', 0)
    """
    from explorer.symbolic import list_targets

    targets = list_targets()
    if target not in targets and ":" not in target:
        raise UsageError(
            f"unknown proof target {target!r}{did_you_mean(target, targets)} (known targets: {', '.join(targets)})"
        )
    positive("--max-seconds", max_seconds)
    cfg = dict(parse_override(o) for o in overrides)
    options = CheckOptions(
        engine="symbolic",
        max_seconds=max_seconds,
        model=target,
        config=cfg,
        engine_options={"only": only or None},
        progress=progress,
    )
    from explorer.symbolic.targets import TargetConfigError, UnknownObligation

    try:
        return check(target, [], options)
    except (TypeError, TargetConfigError) as e:
        msg = str(e).splitlines()[0]
        raise UsageError(msg if msg.startswith(f"{target}: ") else f"{target}: {msg}") from None
    except UnknownObligation as e:
        raise UsageError(f"--only: {e}") from None


def format_result(r: CheckResult, *, steps: bool = True, verbose: bool = False, traces: bool = True) -> str:
    """A human-readable account of a result: summary, properties, counterexamples.

    Each counterexample is printed once: violations found on the same trace (the same
    states) share it. The properties a search did not decide (it stopped at a violation or a
    budget) are counted, not listed (``verbose`` lists them); a search stopped by its budget
    without a violation says so in one line. ``traces=False`` leaves the violations out (the
    caller prints one line each, as ``check --continue --save-traces`` does).

    >>> from explorer.api import check
    >>> from tests.toys import Grid
    >>> print(format_result(check(Grid(2), [])))  # doctest: +ELLIPSIS
     (bfs): complete
      9 distinct states, 13 generated, depth 4, ... s, ... states/s
      held: deadlock
      actions never enabled: Reset
    """
    lines = []
    head = f"{r.model} ({r.engine}): {r.exit_reason.value}"
    if r.budget:
        head += f" ({r.budget} reached)"
    lines.append(head)
    if r.engine == "symbolic":
        lines.append(
            f"  {len(r.properties)} proof obligations, {r.generated_states:,} paths, {r.seconds:.2f} s"
        )
    else:
        lines.append(
            f"  {r.distinct_states:,} distinct states, {r.generated_states:,} generated, depth {r.max_depth}, "
            f"{r.seconds:.2f} s, {r.states_per_second:,.0f} states/s"
        )
    by_status: dict[str, list[str]] = {}
    for name, p in r.properties.items():
        by_status.setdefault(p["status"], []).append(name)
    undecided = by_status.pop("unknown", []) if not verbose else []
    for status in ("held", "witnessed", "violated", "unreached", "unknown", "unchecked"):
        if status in by_status:
            lines.append(f"  {status}: {', '.join(by_status[status])}")
    if undecided:
        lines.append("  " + undecided_line(r, len(undecided)))
    vac = [n for n, p in r.properties.items() if p.get("vacuous")]
    if vac:
        lines.append(f"  vacuous (never applied): {', '.join(vac)}")
    never = r.coverage.get("never_enabled")
    if never:
        lines.append(f"  actions never enabled: {', '.join(never)}")
    for note in r.notes:
        lines.append(f"  note: {note}")
    if traces:
        lines += _violation_lines(r, steps)
    return "\n".join(lines)


def undecided_line(r: CheckResult, n: int) -> str:
    """What a search that stopped early leaves undecided, in one line: no violation in N
    states (incomplete, and why), or the properties a stop at a violation left unchecked.

    >>> from explorer.search import not_run_result
    >>> undecided_line(not_run_result("m", "bfs", "not run"), 3)
    'no violation in 0 states (incomplete: interrupted); 3 properties undecided'
    """
    if r.violations:
        return f"{n} properties undecided: the search stopped at its first violation (--continue searches on)"
    why = f"{r.budget} reached" if r.budget else r.exit_reason.value
    if r.engine in ("simulate", "hypothesis"):
        why += "; a sample: it proves nothing"
    return f"no violation in {r.distinct_states:,} states (incomplete: {why}); {n} properties undecided"


def _violation_lines(r: CheckResult, steps: bool) -> list[str]:
    """Each violation's heading and explanation; each counterexample once, after the last
    violation it shows (violations on the same states share it)."""
    lines: list[str] = []
    groups: dict[
        Any, list[Any]
    ] = {}  # a trace's states (or, without a trace, the violation) -> its violations
    for v in r.violations:
        key = (tuple(st.fingerprint for st in v.trace), v.loop_start) if v.trace else id(v)
        groups.setdefault(key, []).append(v)
    for vs in groups.values():
        for v in vs:
            lines.append("")
            if v.kind == "reachable" and not v.trace:
                lines.append(f"UNREACHED witness {v.property} (reachable): {v.doc}")
                lines.append(f"  {v.message}")
                continue
            lines.append(f"VIOLATION of {v.property} ({v.kind}): {v.doc}")
            if not v.trace:
                lines.append(f"  {v.message}")
                continue
            lines += [
                f"  why: {line}" if i == 0 else f"       {line}" for i, line in enumerate(v.explanation)
            ]
        v = vs[0]
        if not v.trace:
            continue
        names = ", ".join(x.property for x in vs)
        lines.append(f"  shortest counterexample{' of ' + names if len(vs) > 1 else ''}: {v.length} steps")
        if steps:
            for st in v.trace:
                lines.append(f"  {st.index:>3}  {st.action or 'initial state'}")
                for ch in st.changes:
                    lines.append(f"         {ch}")
                if v.loop_start is not None and st.index == v.loop_start:
                    lines.append("       --- loop: the steps below repeat forever, back to this state ---")
    return lines


def _plain(v: Any) -> Any:
    """``v`` as it reads back from a JSON file (tuples as lists, other values as text)."""
    return json.loads(json.dumps(v, default=str))


def verify_trace(system: Any, steps: list[dict[str, Any]]) -> list[Any]:
    """Replay ``steps`` and recompute each: the action, its kind, the state's fingerprint, its
    rendering and the changes must all be what the file records. Returns the states;
    ReplayError naming the first step (and field) that differs.

    >>> from tests.toys import Grid
    >>> from explorer.search import trace_steps
    >>> g = Grid(2)
    >>> s0 = next(iter(g.init_states())); a, s1 = next(iter(g.successors(s0)))
    >>> steps = [vars(st) for st in trace_steps([s0, s1], [a])]
    >>> len(verify_trace(g, steps))
    2
    >>> steps[1]["changes"] = ["edited"]
    >>> verify_trace(g, steps)
    Traceback (most recent call last):
    ...
    explorer.tracefile.ReplayError: step 1: changes differ: the trace says ['edited'], replaying gives ['[0]: 0 -> 1']
    """
    states = replay_steps(system, steps)
    prev = None
    for i, (st, s) in enumerate(zip(steps, states)):
        action = None
        if i > 0:
            action = next((a for a, t in system.successors(prev) if t == s and str(a) == st["action"]), None)
        got = _plain(dataclasses.asdict(trace_step(i, prev, action, s)))
        for field in ("index", "action", "action_kind", "fingerprint", "state", "changes"):
            if field in st and st[field] != got[field]:
                want, have = repr(st[field]), repr(got[field])
                want = want if len(want) <= 200 else want[:197] + "..."
                have = have if len(have) <= 200 else have[:197] + "..."
                raise ReplayError(
                    f"step {i}: {field} differ{'' if field == 'changes' else 's'}: "
                    f"the trace says {want}, replaying gives {have}"
                )
        prev = s
    return states


# -- output destinations and terminal text, shared by the verbs ---------------------------------


def check_output_path(path: str | None, flag: str) -> None:
    """UsageError unless ``path`` can be written as a regular file (it is replaced atomically:
    a symlink, a device or a pipe there would be replaced by a file, so they are refused)."""
    if path is None:
        return
    if not path.strip():
        raise UsageError(f"{flag}: empty file name")
    if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
        import stat

        mode = os.lstat(path).st_mode
        if not stat.S_ISREG(mode):
            kind = "a symlink" if stat.S_ISLNK(mode) else "not a regular file"
            raise UsageError(f"{flag} {path}: {kind}; name a regular file (it is replaced)")
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(directory):
        raise UsageError(f"{flag} {path}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a directory")
    if not os.access(directory, os.W_OK):
        raise UsageError(f"{flag} {path}: directory {directory} is not writable")
    _probe_folder(directory, flag, path)


def _probe_folder(directory: str, flag: str, path: str) -> None:
    """UsageError unless a file can really be made in ``directory`` (a read-only mount, a
    full disk, ``/proc``: what ``os.access`` does not tell); the probe file is removed."""
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(prefix=".kafka-mc-probe-", dir=directory)
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot write in {directory} ({e.strerror or e})") from None
    os.close(fd)
    os.unlink(probe)


def check_output_dir(path: str, flag: str) -> None:
    """An output folder must be a folder, or not exist yet under a writable existing folder
    (it is made when the first file is written, so a run refused later leaves nothing)."""
    if not path.strip():
        raise UsageError(f"{flag}: empty folder name")
    target = os.path.abspath(path)
    if os.path.exists(target) and not os.path.isdir(target):
        raise UsageError(f"{flag} {path}: not a directory")
    existing = target
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise UsageError(f"{flag} {path}: {existing} is not a directory")
    if not os.access(existing, os.W_OK):
        raise UsageError(f"{flag} {path}: {existing} is not writable")
    _probe_folder(existing, flag, path)


def listdir_or_none(path: str) -> list[str]:
    """The names in ``path``, or none where it does not exist yet."""
    return os.listdir(path) if os.path.isdir(path) else []


def wrap_columns(text: str, width: int, first: str, rest: str) -> str:
    """``text`` wrapped at word breaks to ``width`` terminal columns (a CJK character takes two).

    >>> print(wrap_columns("时间轮 a b c", 8, "", "  "))
    时间轮 a
      b c
    """

    def cols(t: str) -> int:
        return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in t)

    lines: list[str] = []
    line = first
    for word in text.split():
        fresh = line in (first, rest)
        candidate = line + word if fresh else f"{line} {word}"
        if cols(candidate) <= width or fresh:
            line = candidate
        else:
            lines.append(line)
            line = rest + word
    lines.append(line)
    return "\n".join(lines)


def say_if_interrupted(result: CheckResult) -> None:
    """One line on stderr when a signal cut ``result`` short (its partial result was printed):
    ``check`` and ``prove`` alike.

    >>> import contextlib
    >>> from explorer.search import not_run_result
    >>> with contextlib.redirect_stderr(sys.stdout):
    ...     say_if_interrupted(not_run_result("m", "bfs", "not run"))
    kafka-mc: interrupted by SIGINT after 0.0 s; the partial result is above
    """
    if result.exit_reason is ExitReason.INTERRUPTED:
        print(
            f"kafka-mc: interrupted by {stop_requested() or 'SIGINT'} after {result.seconds:.1f} s; "
            "the partial result is above",
            file=sys.stderr,
        )
