"""Proof targets and running them: :func:`list_targets` finds the targets of the proof
modules (:data:`PROOF_MODULES`, by name: the explorer imports no Kafka), and
:func:`check_symbolic` runs a target's obligations into a :class:`~explorer.core.CheckResult`.

Example
-------
>>> "timing-wheel" in list_targets()
True
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib
import inspect
import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from explorer.config import did_you_mean
from explorer.core import CheckResult, ExitReason, TraceStep, Violation
from explorer.search.stopping import stop_requested
from explorer.symbolic.context import fresh_z3_context, interruptible
from explorer.symbolic.proofs import Obligation, render_counterexample

__all__ = ["PROOF_MODULES", "TargetConfigError", "check_symbolic", "list_targets", "target_obligations"]

#: modules whose ``PROOF_TARGETS`` (name -> obligations factory) the engine knows
PROOF_MODULES: tuple[str, ...] = ("invariants.proofs_election", "invariants.proofs_timing")


def list_targets() -> dict[str, Callable[..., list[Obligation]]]:
    """Every proof target of :data:`PROOF_MODULES`: name -> obligations factory.

    >>> sorted(list_targets())[:2]
    ['controller-election', 'election-rules']
    """
    out: dict[str, Callable[..., list[Obligation]]] = {}
    for mod in PROOF_MODULES:
        out.update(importlib.import_module(mod).PROOF_TARGETS)
    return out


def _resolve(target: str) -> Callable[..., list[Obligation]]:
    if ":" in target:
        mod, _, name = target.partition(":")
        factory: Callable[..., list[Obligation]] = getattr(importlib.import_module(mod), name)
        return factory
    targets = list_targets()
    if target not in targets:
        raise ValueError(f"unknown proof target {target!r} (known: {', '.join(sorted(targets))})")
    return targets[target]


def _fingerprint(state: Any) -> str:
    data = json.dumps(state, sort_keys=True, default=repr).encode()
    return hashlib.blake2b(data, digest_size=8).hexdigest()


class UnknownObligation(ValueError):
    """``only`` named an obligation the target does not have."""


class TargetConfigError(ValueError):
    """A bound of a proof target that it does not have, or a value it refuses (one line
    naming the key): bad input, not an error of the proof's code."""


def target_obligations(target: str, config: dict[str, Any]) -> list[Obligation]:
    """The obligations of ``target`` for the bounds ``config``; TargetConfigError (naming the
    key, with a "did you mean") for a key the target's factory does not take or a value it
    refuses.

    >>> target_obligations("controller-election", {"brokerz": 3})
    Traceback (most recent call last):
    ...
    explorer.symbolic.targets.TargetConfigError: controller-election: brokerz: unknown key \
(did you mean 'brokers'?) (known: brokers, max_k)
    >>> target_obligations("election-rules", {"max_replicas": 99})
    Traceback (most recent call last):
    ...
    explorer.symbolic.targets.TargetConfigError: election-rules: max_replicas: must be in 1..8, got 99
    """
    factory = _resolve(target)
    params = inspect.signature(factory).parameters.values()
    known = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    for key in config:
        if key not in known:
            where = f"(known: {', '.join(known)})" if known else "(the target has no bounds)"
            raise TargetConfigError(f"{target}: {key}: unknown key{did_you_mean(key, known)} {where}")
    try:
        return factory(**config)
    except (ValueError, TypeError) as e:
        raise TargetConfigError(f"{target}: {str(e).strip().splitlines()[0]}") from None


def check_symbolic(
    target: str,
    *,
    config: dict[str, Any] | None = None,
    timeout_s: float | None = 600.0,
    only: Iterable[str] | None = None,
    progress: Any = None,
) -> CheckResult:
    """Run the proof obligations of ``target`` and return the shared CheckResult.

    Each obligation runs in a z3 context of its own (:func:`fresh_z3_context`) and is a
    property (kind ``proof``) with status ``held``, ``violated`` or ``unknown``
    (budget), its seconds, paths and bounds. A refutation is a
    :class:`~explorer.core.Violation` whose trace is one step: the counterexample's
    concrete values. ``target`` is a name of :func:`list_targets` or
    ``package.module:factory``; ``config`` is passed to the factory (its bound keys);
    ``only`` picks obligations by name; ``progress`` (a :class:`~explorer.search.Progress`)
    is told of each obligation as it ends.

    >>> r = check_symbolic("timing-wheel", only=["overflow_wheel_parameters"])
    >>> r.engine, r.exit_reason.value, r.properties["overflow_wheel_parameters"]["status"]
    ('symbolic', 'complete', 'held')
    """
    cfg = dict(config or {})
    obligations = target_obligations(target, cfg)
    if only is not None:
        wanted = set(only)
        names = [o.name for o in obligations]
        for w in sorted(wanted - set(names)):
            shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
            raise UnknownObligation(
                f"{target}: no proof obligation {w!r}{did_you_mean(w, names)} (it has: {shown})"
            )
        obligations = [o for o in obligations if o.name in wanted]
    t0 = time.perf_counter()
    deadline = None if timeout_s is None else t0 + timeout_s
    props: dict[str, dict[str, Any]] = {}
    violations: list[Violation] = []
    notes: list[str] = []
    total_paths = 0
    reason = ExitReason.COMPLETE
    for ob in obligations:
        if reason is ExitReason.INTERRUPTED or (deadline is not None and time.perf_counter() > deadline):
            props[ob.name] = {"kind": "proof", "doc": ob.doc, "status": "unknown", "bounds": ob.bounds}
            if reason is not ExitReason.INTERRUPTED:
                reason = ExitReason.BUDGET_EXHAUSTED
            continue
        try:  # a Ctrl-C stops the proof running: no verdict for it (z3 must not take the signal)
            with interruptible(), fresh_z3_context():  # nor depend on the proofs run before
                out = ob.run(deadline)
            if stop_requested() is not None:  # a caller that polls: the signal only set the flag
                raise KeyboardInterrupt
        except (KeyboardInterrupt, ctypes.ArgumentError) as e:
            # a signal whose handler raised while ctypes converted an argument of a z3 call
            # reaches us wrapped: "ArgumentError: argument 2: KeyboardInterrupt"
            if (
                isinstance(e, ctypes.ArgumentError)
                and "KeyboardInterrupt" not in str(e)
                and not stop_requested()
            ):
                raise
            props[ob.name] = {"kind": "proof", "doc": ob.doc, "status": "unknown", "bounds": ob.bounds}
            notes.append(f"{ob.name}: interrupted")
            reason = ExitReason.INTERRUPTED
            continue
        total_paths += out.paths
        entry: dict[str, Any] = {
            "kind": "proof",
            "doc": ob.doc,
            "status": out.status,
            "seconds": round(out.seconds, 3),
            "paths": out.paths,
            "bounds": ob.bounds,
        }
        if out.details:
            entry["details"] = out.details
        if out.message:
            entry["message"] = out.message
        if ob.expect_violation:
            entry["expect_violation"] = True
        props[ob.name] = entry
        notes.append(f"{ob.name}: {out.status} in {out.seconds:.2f} s ({out.paths} paths; {ob.bounds})")
        if progress is not None:
            progress.note(
                f"proof {len(props)}/{len(obligations)} {ob.name}: {out.status} in {out.seconds:.1f} s"
            )
        if out.status == "unknown" and reason is not ExitReason.INTERRUPTED:
            reason = ExitReason.BUDGET_EXHAUSTED
        if out.status == "violated" and not ob.expect_violation:
            state = out.counterexample or {}
            step = TraceStep(0, None, None, _fingerprint(state), state, [])
            msg = out.message + ("\n" + render_counterexample(state) if state else "")
            violations.append(Violation(ob.name, "proof", ob.doc, msg, 0, [step]))
        if out.status == "held" and ob.expect_violation:
            notes.append(f"{ob.name}: the mutant was expected to be refuted but held")
    if violations:
        reason = ExitReason.VIOLATION
    seconds = time.perf_counter() - t0
    return CheckResult(
        model=target,
        config=cfg,
        engine="symbolic",
        exit_reason=reason,
        distinct_states=0,
        generated_states=total_paths,
        max_depth=0,
        seconds=seconds,
        states_per_second=0.0,
        violations=violations,
        properties=props,
        notes=notes,
    )
