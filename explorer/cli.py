"""The ``kafka-mc`` command line.

Commands: ``check`` (explore a model and check its properties), ``models`` (list the
models and their config keys), ``replay`` (re-execute a saved counterexample),
``release`` (run a suite of checks: the main job) and ``mutate`` (which mutants of a model
the checks kill, ``explorer/mutation/command.py``); ``explore`` serves a page that walks one (``explorer/explore/``).

Exit codes: 0 every property holds and the search completed; 1 a property is
violated (or a trace no longer replays); 2 usage or configuration error; 3 a budget
ran out, or the run was interrupted (Ctrl-C, SIGTERM), before any violation was found;
4 the system's own code raised during the search (or its states are not immutable values).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from explorer.api import CheckOptions
from explorer.config import ConfigError, describe_keys, did_you_mean, load_config
from explorer.core import CheckResult, Violation
from explorer.datafiles import DataFileError, check_named_system, model_digest
from explorer.frontend import (
    MAX_WORKERS,
    MUTATE_HELP,
    SECONDS,
    SEED,
    Bounded,
    EngineError,
    ModelError,
    UsageError,
    check_output_dir,
    check_output_path,
    format_result,
    listdir_or_none,
    model_spec,
    names,
    positive,
    registry,
    resolve_system,
    run_check,
    run_proofs,
    say_if_interrupted,
    verify_trace,
    wrap_columns,
)
from explorer.release_output import check_progress, model_costs
from explorer.resume import RESUMED, resume_args
from explorer.run_traces import trace_path_of
from explorer.search import Progress, stop_on_signals, stop_requested, teardown
from explorer.search.progress import log_every_from_env
from explorer.state_view import step_view, view_steps
from explorer.tracefile import ReplayError, load_trace, trace_document, trace_file_name, write_json_atomic

__all__ = ["EXIT_MODEL_ERROR", "build_parser", "main", "reference_config"]

#: the exit code of a run whose system raised (or broke the state contract)
EXIT_MODEL_ERROR = 4

PROJECT_ROOT = Path(__file__).resolve().parents[1]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _cmd_models(args: argparse.Namespace) -> int:
    """``kafka-mc models [NAME] [--json]``: every model with its keys and defaults, in lines
    that fit the terminal (100 columns when it is not one); with NAME, one model's keys in
    full (type, default, bounds, meaning)."""
    reg = registry()
    names = list(reg.MODEL_MODULES)
    if args.name is not None and args.name not in names:
        raise UsageError(
            f"unknown model {args.name!r}{did_you_mean(args.name, names)} (models: {', '.join(names)})"
        )
    out: list[dict[str, Any]] = []
    for name in names if args.name is None else [args.name]:
        spec = reg.get_model(name)
        ref = reference_config(name)
        out.append(
            {
                "name": name,
                "summary": spec.summary,
                "reference_config": None if ref is None else str(ref.relative_to(PROJECT_ROOT)),
                "keys": [
                    dict(zip(("key", "type", "default", "meaning"), row))
                    for row in describe_keys(spec.config_cls)
                ],
            }
        )
    if args.json:
        print(json.dumps(out if args.name is None else out[0], indent=1))
        return 0
    width = shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100
    width = max(60, min(width, 160))
    for m in out:
        print(wrap_columns(f"{m['name']}: {m['summary']}", width, "", "    "))
        if m["reference_config"]:
            print(f"    reference configuration: {m['reference_config']}")
        if args.name is None:
            keys = " ".join(
                f"{k['key']}={k['default'].split(' (')[0]}" for k in m["keys"] if k["key"] != "mutant"
            )
            print(wrap_columns(keys, width, "    keys: ", "          "))
        else:
            for k in m["keys"]:
                print(
                    wrap_columns(f"{k['key']} ({k['type']}, default {k['default']})", width, "  ", "      ")
                )
                print(wrap_columns(k["meaning"], width, "      ", "      "))
        if args.name is not None:  # what its release entries cost in the last run
            print("\n".join(["", *model_costs(args.name, PROJECT_ROOT)]).rstrip())
        print()
    if args.name is None:
        print("`kafka-mc models NAME`: one model's keys in full (type, default, bounds, meaning).")
    return 0


def reference_config(model: str) -> Path | None:
    """The model's reference configuration shipped in ``configs/``, if there is one.

    >>> reference_config("timing-wheel").name
    'timing-wheel-ref.toml'
    """
    path = PROJECT_ROOT / "configs" / f"{model}-ref.toml"
    return path if path.is_file() else None


def _cmd_check(args: argparse.Namespace) -> int:
    if args.resume is not None:
        resume_args(args, build_parser().parse_args(["check"]))
    if (args.model is None) == (args.system is None):
        raise UsageError("name a MODEL or give --system package.module:factory (not both)")
    if args.defaults and args.config is not None:
        raise UsageError("--defaults and --config exclude each other")
    used_reference = None
    if args.model is not None and args.config is None and not args.defaults and args.engine != "symbolic":
        used_reference = reference_config(args.model)
        if used_reference is not None:
            args.config = str(used_reference)
    if args.config is not None and not args.config.strip():
        raise UsageError("--config: empty file name")
    check_output_path(args.json, "--json")
    if args.save_traces is not None:
        check_output_dir(args.save_traces, "--save-traces")
        older = sorted(f for f in listdir_or_none(args.save_traces) if f.endswith(".json"))
        if older and not args.overwrite_traces:
            raise UsageError(
                f"--save-traces {args.save_traces}: already holds {len(older)} trace file(s) ({older[0]}, ...); "
                "name an empty folder, or add --overwrite-traces"
            )
    if args.engine == "symbolic":
        if args.system is not None or args.config is not None:
            raise UsageError("--engine symbolic takes a proof TARGET and --set, not --system or --config")
        result = run_proofs(args.model, args.set, None, args.max_seconds, None if args.quiet else Progress())
        print(format_result(result))
        if args.json:
            write_json_atomic(args.json, result.to_json())
        return result.exit_code
    options = CheckOptions(
        engine=args.engine,
        max_depth=args.max_depth,
        max_states=args.max_states,
        max_seconds=args.max_seconds,
        keep_going=args.keep_going,
        deadlock=not args.no_deadlock,
        workers=args.workers,
        reduce=args.reduce,
        progress=None
        if args.quiet
        else check_progress(args.model, args.config, args.set),  # ETA: the last release
        engine_options=_engine_options(args),
    )
    try:
        where = {"system_ref": args.system, "config_path": args.config, "overrides": args.set}
        result, _, _ = run_check(args.model, options, **where, only=args.properties)
    except ModelError as e:
        return _model_error(args, e)
    try:
        if used_reference is not None:
            print(f"configuration: {used_reference} (the reference; --config FILE or --defaults to change)")
        print(format_result(result, traces=not (args.keep_going and args.save_traces)), flush=True)
    except BrokenPipeError:  # `kafka-mc check ... | head`: the reader left; the outputs still get written
        _stdout_gone()
    say_if_interrupted(result)
    _write_outputs(args, result)
    return result.exit_code


def _write_outputs(args: argparse.Namespace, result: CheckResult, error: ModelError | None = None) -> None:
    """``--json`` and ``--save-traces`` of a run (with a model error: its trace and line too)."""
    doc = result.to_json()
    if args.system:
        doc["system"] = args.system
    doc["digest"] = model_digest(doc.get("model"), doc.get("config"))  # checked when it is replayed
    violations = list(result.violations)
    if error is not None:
        doc["exit_code"] = EXIT_MODEL_ERROR
        doc["model_error"] = {"message": error.message, "trace": [vars(st) for st in error.trace]}
        if error.trace:
            violations.append(
                Violation(
                    "model-error",
                    "model_error",
                    error.message,
                    error.message,
                    len(error.trace) - 1,
                    error.trace,
                )
            )
    if args.json:
        write_json_atomic(args.json, doc)
    if args.save_traces:
        if any(v.trace for v in violations):
            os.makedirs(args.save_traces, exist_ok=True)  # a missing folder is made when a trace is written
        brief = args.keep_going and error is None  # --continue: one line per violation, the rest in the file
        saved = []
        for v in violations:
            if v.trace:
                saved.append(os.path.join(args.save_traces, trace_file_name(result.model, v.property)))
                write_json_atomic(saved[-1], trace_document(result.model, result.config, v, args.system))
                said = (
                    f"VIOLATION of {v.property} ({v.length} steps):"
                    if brief
                    else f"trace of {v.property} saved to"
                )
                print(f"{said} {saved[-1]}")
        if saved:
            print(
                f"next: kafka-mc replay {saved[0]} --state -1 (its violating state), kafka-mc shrink {saved[0]}, kafka-mc explore {saved[0]}"
            )


def _model_error(args: argparse.Namespace, e: ModelError) -> int:
    """Exit 4: the partial result, the trace to the state whose expansion raised, one line on stderr."""
    if e.result is not None:
        print(format_result(e.result))
        if e.trace:
            print(f"\nMODEL ERROR: {e.message}")
            print(f"  trace to the state whose expansion raised: {len(e.trace) - 1} steps")
            for st in e.trace:
                print(f"  {st.index:>3}  {st.action or 'initial state'}")
        _write_outputs(args, e.result, e)
    print(f"kafka-mc: model error: {e.message}", file=sys.stderr)
    return EXIT_MODEL_ERROR


def _engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The engine-specific options given on the command line, checked for the engine."""
    sim = {"walks": args.walks, "depth": args.depth, "swarm": args.swarm or None}
    hyp = {
        "profile": args.profile,
        "max_examples": args.max_examples,
        "stateful_step_count": args.steps,
        "database": args.database,
    }
    given_sim = [k for k, v in sim.items() if v is not None] + (["weight"] if args.weight else [])
    given_sim += ["fault"] if args.fault else []
    given_hyp = [k for k, v in hyp.items() if v is not None] + (["no_database"] if args.no_database else [])
    if given_sim and args.engine != "simulate":
        raise UsageError(f"--{given_sim[0].replace('_', '-')} applies to --engine simulate only")
    if given_hyp and args.engine != "hypothesis":
        flag = {"stateful_step_count": "steps"}.get(given_hyp[0], given_hyp[0])
        raise UsageError(f"--{flag.replace('_', '-')} applies to --engine hypothesis only")
    lean = _lean_options(args)
    spk = {
        "master": args.master,
        "partitions": args.partitions,
        "checkpoint_dir": args.checkpoint_dir,
        "checkpoint_every": args.checkpoint_every if args.engine == "spark" else None,
        "run_dir": args.run_dir,
        "local_frontier": args.local_frontier,
    }
    given_spk = [k for k, v in spk.items() if v is not None] + (["spark_conf"] if args.spark_conf else [])
    if given_spk and args.engine != "spark":
        raise UsageError(f"--{given_spk[0].replace('_', '-')} applies to --engine spark only")
    if args.seed is not None and args.engine not in ("simulate", "hypothesis"):
        raise UsageError("--seed applies to --engine simulate or hypothesis only")
    if args.engine == "simulate":
        from explorer.engines.simulate import parse_probability, parse_weight

        out: dict[str, Any] = {k: v for k, v in sim.items() if v is not None}
        out["seed"] = 0 if args.seed is None else args.seed
        try:
            if args.weight:
                out["weights"] = dict(parse_weight(w) for w in args.weight)
            if args.fault:
                out["fault_probabilities"] = dict(parse_probability(f) for f in args.fault)
        except ValueError as e:
            raise UsageError(str(e)) from None
        return out
    if args.engine == "spark":
        positive("--partitions", args.partitions)
        positive("--checkpoint-every", args.checkpoint_every)
        if args.checkpoint_every is not None:
            if args.checkpoint_every != int(args.checkpoint_every):
                raise UsageError(f"--checkpoint-every: a number of levels, got {args.checkpoint_every:g}")
            spk["checkpoint_every"] = int(args.checkpoint_every)
        if args.local_frontier is not None and args.local_frontier < 0:
            raise UsageError(f"--local-frontier: must be 0 or more, got {args.local_frontier}")
        out = {k: v for k, v in spk.items() if v is not None}
        conf = {}
        for item in args.spark_conf:
            k, sep, v = item.partition("=")
            if not sep or not k:
                raise UsageError(f"--spark-conf {item}: expected KEY=VALUE")
            conf[k] = v
        if conf:
            out["spark_conf"] = conf
        return out
    if args.engine == "hypothesis":
        out = {k: v for k, v in hyp.items() if v is not None}
        if args.no_database:
            out["database"] = False
        if args.seed is not None:
            out["seed"] = args.seed
        return out
    return lean


def _lean_options(args: argparse.Namespace) -> dict[str, Any]:
    """The lean bfs's engine options (``--visited``, ``--frontier-batch``, ``--checkpoint``...)."""
    given = [
        f
        for f, v in (
            ("--visited", args.visited),
            ("--frontier-batch", args.frontier_batch),
            ("--checkpoint", args.checkpoint),
            ("--worker-states", args.worker_states),
        )
        if v is not None
    ]
    if given and args.engine != "bfs":
        raise UsageError(f"{given[0]} applies to --engine bfs only")
    if args.checkpoint_every is not None and args.engine != "spark" and args.checkpoint is None:
        raise UsageError("--checkpoint-every applies to --checkpoint DIR (bfs) or --engine spark")
    if args.engine != "bfs":
        return {}
    if args.checkpoint is not None and args.visited == "states":
        raise UsageError("--checkpoint needs --visited fingerprints (the states are not saved)")
    if args.checkpoint is not None and not args.checkpoint.strip():
        raise UsageError("--checkpoint: empty folder name")
    lean = args.visited == "fingerprints" or args.checkpoint is not None
    if args.frontier_batch is not None and not lean:
        raise UsageError("--frontier-batch applies to --visited fingerprints")
    positive("--frontier-batch", args.frontier_batch)
    if args.checkpoint_every is not None and args.checkpoint_every < 0:
        raise UsageError(f"--checkpoint-every: seconds, 0 or more, got {args.checkpoint_every:g}")
    if args.worker_states is not None and (not lean or args.workers == 1):
        raise UsageError("--worker-states applies to --workers N with --visited fingerprints")
    if not lean:
        return {}
    if args.workers != 1 and args.frontier_batch is not None:
        raise UsageError(
            "--frontier-batch works with the serial bfs only (with --workers the levels stay in the workers)"
        )
    out: dict[str, Any] = {"visited": "fingerprints"}
    if args.frontier_batch is not None:
        out["frontier_batch"] = args.frontier_batch
    if args.worker_states is not None:  # tuning: the result is the same either way
        out["pack"] = args.worker_states == "packed"
    if args.checkpoint is not None:
        out["checkpoint"] = args.checkpoint
        if args.checkpoint_every is not None:
            out["checkpoint_every"] = args.checkpoint_every
        out["resume"] = bool(getattr(args, "resuming", False))
        out["run_info"] = {k: getattr(args, k) for k in RESUMED}
        if args.config is not None:  # a resumed run may start in another folder
            out["run_info"]["config"] = os.path.abspath(args.config)
    return out


def _cmd_prove(args: argparse.Namespace) -> int:
    if args.list:
        from explorer.symbolic import list_targets

        for name, factory in list_targets().items():
            doc = (factory.__doc__ or "").strip().splitlines()
            print(f"{name}: {doc[0] if doc else ''}")
        return 0
    if args.target is None:
        raise UsageError("name a TARGET (see kafka-mc prove --list)")
    check_output_path(args.json, "--json")
    result = run_proofs(
        args.target, args.set, args.only, args.max_seconds, None if args.quiet else Progress()
    )
    print(format_result(result))
    say_if_interrupted(result)
    if args.json:
        write_json_atomic(args.json, result.to_json())
    return result.exit_code


def _cmd_own(args: argparse.Namespace) -> int:  # shrink and explore parse their own arguments
    return _dispatch([args.command, *args.args])


def _cmd_replay(args: argparse.Namespace) -> int:
    try:  # a trace or result file, or a release's run folder with --entry (explorer.run_traces)
        args.trace = trace_path_of(args.trace, args.entry, args.property)
        doc = load_trace(args.trace, args.property)
        # a file names, it never loads: a --system trace replays on the --system the user gives
        check_named_system(doc.get("system"), args.system, args.trace)
    except (ReplayError, DataFileError) as e:
        raise UsageError(str(e)) from None
    asked = [args.state] if args.state is not None else args.diff or []
    try:  # --state K, --diff K1 K2: the full state at a step, or what changed between two
        views = view_steps(asked, len(doc["steps"]))
    except ValueError as e:
        raise UsageError(f"{args.trace}: {e}") from None
    if args.system:
        overrides = [f"{k}={json.dumps(v)}" for k, v in doc.get("config", {}).items()]
        system, props = resolve_system(args.system, overrides)
    else:
        spec = model_spec(str(doc.get("model")))
        config = load_config(spec.config_cls, values=doc.get("config") or {})
        system, props = spec.build(config), spec.properties(config)
    try:
        states = verify_trace(system, doc["steps"])
    except ReplayError as e:
        print(f"replay failed: {e}", file=sys.stderr)
        return 1
    if views:
        print(step_view(system, states, doc["steps"], views))
        return 0
    print(
        f"{doc['model']}: {len(states) - 1} steps replayed; every action, state and change matches the trace"
    )
    for i, st in enumerate(doc["steps"]):
        print(f"  {i:>3}  {st.get('action') or 'initial state'}")
        for ch in st.get("changes", []):
            print(f"         {ch}")
    prop = next((p for p in props if p.name == doc["property"]), None)
    if prop is None:
        if doc["property"] == "deadlock":
            last = states[-1]
            dead = not list(system.successors(last)) and not getattr(system, "is_terminal", lambda s: False)(
                last
            )
            print("deadlock reproduced" if dead else "deadlock NOT reproduced: the last state can move")
            return 0 if dead else 1
        print(f"property {doc['property']!r} is not defined by this model any more", file=sys.stderr)
        return 1
    if prop.kind.value == "eventually":  # a lasso, or a behaviour that ends (explorer.search.liveness)
        from explorer.search.liveness import replay_lasso

        ok, lines = replay_lasso(system, prop, states, doc["steps"], doc.get("loop_start"))
        print("\n".join(lines))
    elif prop.kind.value == "always":
        ok = not prop.check(states[-1])
    elif prop.kind.value == "transition" and len(states) > 1:
        prev, last = states[-2], states[-1]
        acts = [a for a, t in system.successors(prev) if t == last and str(a) == doc["steps"][-1]["action"]]
        ok = bool(acts) and not prop.check(prev, acts[0], last)
    else:
        ok = prop.check(states[-1])
    print(f"{doc['property']}: {'violation reproduced' if ok else 'violation NOT reproduced'}")
    return 0 if ok else 1


def _cmd_release(args: argparse.Namespace) -> int:
    from explorer.release import load_suite, run_release, select_entries

    if args.list:  # with each entry's states and time in the last run (explorer.release_output)
        from explorer.release_output import last_run, list_lines

        entries = select_entries(load_suite(args.suite), args.entries, args.suite)
        print("\n".join(list_lines(entries, last_run((args.report_dir, PROJECT_ROOT / "reports")))))
        return 0
    return run_release(
        args.suite,
        report_dir=args.report_dir,
        quiet=args.quiet,
        mutation=args.mutation,
        entries_named=args.entries,
        compare=args.compare,
        verbose=args.verbose,
        jobs=args.jobs,
    )


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``kafka-mc`` (its errors raise UsageError).

    ``verb``: the verb about to be parsed, when known; the ``mutate`` verb's options (and
    the mutation harness they import) are built only for it or when ``verb`` is None.
    """
    p = _Parser(prog="kafka-mc", description="Model checker for the ZooKeeper-based Kafka controller.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    c = sub.add_parser(
        "check",
        help="explore a model exhaustively and check its properties",
        description="Check a model's properties in one configuration, exhaustively (bfs, spark) or by sampling "
        "(simulate, hypothesis), and print the verdict, the coverage and each violation's shortest trace. Exit "
        "0 when all hold, 1 on a violation, 3 when a budget ran out or on an interrupt, 2 on bad input.",
    )
    c.add_argument("model", nargs="?", help="a model name (see `kafka-mc models`)")
    c.add_argument("--system", metavar="MODULE:FACTORY", help="check a user TransitionSystem instead")
    c.add_argument(
        "--config",
        metavar="FILE",
        help="a TOML configuration file (default: the model's reference, configs/MODEL-ref.toml)",
    )
    c.add_argument("--defaults", action="store_true", help="start from the model's built-in defaults instead")
    c.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    c.add_argument(
        "--engine",
        default="bfs",
        help="bfs (exhaustive), spark (distributed bfs), simulate (random walks), hypothesis "
        "(Hypothesis's stateful testing), symbolic (z3 proofs of a proof TARGET; see `kafka-mc prove --list`)",
    )
    c.add_argument(
        "--workers",
        type=Bounded(int, 1, MAX_WORKERS),
        default=1,
        metavar="N",
        help="bfs: expand states in N worker processes (default 1, the serial engine); same result",
    )
    c.add_argument(
        "--reduce",
        default="none",
        metavar="KIND",
        help="bfs: none (default), por (partial-order reduction) or symmetry (one state per orbit of the model's symmetries); docs/reduction.md",
    )
    c.add_argument("--max-depth", type=Bounded(int, 1, 10**9), metavar="N", help="stop after N BFS levels")
    c.add_argument(
        "--max-states", type=Bounded(int, 1, 10**15), metavar="N", help="stop after N distinct states"
    )
    c.add_argument("--max-seconds", type=SECONDS, metavar="S", help="stop after S seconds")
    c.add_argument(
        "--continue", dest="keep_going", action="store_true", help="collect every violated property"
    )
    c.add_argument("--no-deadlock", action="store_true", help="do not report states without successors")
    c.add_argument("--properties", type=names, metavar="NAMES", help="check only these (comma-separated)")
    c.add_argument("--json", metavar="FILE", help="write the CheckResult as JSON")
    c.add_argument("--save-traces", metavar="DIR", help="write each counterexample as a trace file")
    c.add_argument(
        "--overwrite-traces",
        action="store_true",
        help="let --save-traces write into a folder that already holds trace files",
    )
    c.add_argument("--quiet", action="store_true", help="no progress line")
    ln = c.add_argument_group("lean bfs: fingerprints, frontier on disk, checkpoints (see docs/scale.md)")
    ln.add_argument(
        "--visited",
        choices=("states", "fingerprints"),
        help="bfs visited set: states (default, a dict of states) or fingerprints (~16 B/state; "
        "with --workers: in the driver)",
    )
    ln.add_argument(
        "--frontier-batch",
        type=Bounded(int, 1, 10**9),
        metavar="N",
        help="fingerprints: states of a level kept in memory (50000)",
    )
    ln.add_argument(
        "--checkpoint", metavar="DIR", help="write snapshots to DIR (implies --visited fingerprints)"
    )
    ln.add_argument(
        "--worker-states",
        choices=("packed", "objects"),
        help="--workers with fingerprints: the workers hold their levels packed (default with the C "
        "accelerator: about a third of the memory, about 1.25x the CPU) or as objects",
    )
    ln.add_argument("--resume", metavar="DIR", help="continue the checkpoint in DIR (its options apply)")
    sp = c.add_argument_group("spark engine (see docs/spark.md)")
    sp.add_argument("--master", help="Spark master URL (default local[*])")
    sp.add_argument(
        "--partitions", type=Bounded(int, 1, 10**5), metavar="N", help="partitions (default: total cores)"
    )
    sp.add_argument(
        "--checkpoint-dir", metavar="DIR", help="reliable checkpoint directory (shared on a cluster)"
    )
    sp.add_argument(
        "--checkpoint-every",
        type=Bounded(float, 0, 1e9),
        metavar="N",
        help="spark: levels between checkpoints (default 8); bfs --checkpoint: seconds (default 600)",
    )
    sp.add_argument("--run-dir", metavar="DIR", help="where each level's states are written")
    sp.add_argument(
        "--local-frontier",
        type=Bounded(int, 0, 10**12),
        metavar="N",
        help="levels below N states run in the driver",
    )
    sp.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting")
    g = c.add_argument_group("simulate engine")
    g.add_argument("--seed", type=SEED, help="random seed (simulate, hypothesis)")
    g.add_argument("--walks", type=Bounded(int, 1, 10**9), help="number of random walks (default 100)")
    g.add_argument("--depth", type=Bounded(int, 1, 10**7), help="steps per walk (default 50)")
    g.add_argument("--weight", action="append", default=[], metavar="KIND=W", help="weight of an action kind")
    g.add_argument(
        "--fault", action="append", default=[], metavar="KIND=P", help="probability of a fault site"
    )
    g.add_argument("--swarm", action="store_true", help="vary the kinds' weights per walk (swarm testing)")
    h = c.add_argument_group("hypothesis engine")
    h.add_argument("--profile", choices=("quick", "thorough"), help="settings profile (default quick)")
    h.add_argument("--max-examples", type=Bounded(int, 1, 10**9), metavar="N", help="examples to run")
    h.add_argument("--steps", type=Bounded(int, 1, 10**6), metavar="N", help="steps per example")
    h.add_argument("--database", metavar="DIR", help="example database (default .hypothesis/examples)")
    h.add_argument("--no-database", action="store_true", help="keep no example database")
    c.set_defaults(func=_cmd_check)

    m = sub.add_parser(
        "models",
        help="list the models, their config keys, defaults and meaning",
        description="List every model with its summary, reference configuration and config keys with "
        "their defaults; `models NAME` gives one model's keys in full (type, default, bounds, meaning), "
        "`--json` the same as JSON. Exit 0, or 2 for an unknown model.",
    )
    m.add_argument("name", nargs="?", help="one model, its keys in full")
    m.add_argument("--json", action="store_true", help="as JSON")
    m.set_defaults(func=_cmd_models)

    r = sub.add_parser(
        "replay",
        help="re-execute a saved counterexample and print it",
        description="Re-execute a counterexample saved by `check --save-traces` (or one violation of a "
        "`check --json` result) against today's model, step by step, and print it. Exit 0 when every "
        "recorded action, state and change is recomputed the same and the violation still occurs; 1 "
        "when it no longer replays (naming the first step that differs).",
    )
    r.add_argument(
        "trace", help="a trace file (--save-traces), a result file (--json) or a release run folder"
    )
    r.add_argument("--property", help="which violation of a result file (or a run folder's entry) to replay")
    r.add_argument("--entry", help="a release run folder's entry whose counterexample to replay")
    r.add_argument(
        "--system",
        metavar="MODULE:FACTORY",
        help="replay a trace made with --system on this factory (it must be the one the file names: "
        "a file never chooses the code kafka-mc runs)",
    )
    shown = r.add_mutually_exclusive_group()
    step = Bounded(int, -(10**6), 10**6)  # a step; a negative one counts from the end
    shown.add_argument("--state", type=step, metavar="K", help="print the full state at step K (0: initial)")
    shown.add_argument("--diff", type=step, nargs=2, metavar=("K1", "K2"), help="what changed from K1 to K2")
    r.set_defaults(func=_cmd_replay)

    pr = sub.add_parser(
        "prove",
        help="z3 proofs for all inputs within bounds (election rules, timing wheel, ...)",
        description="Prove a target's obligations with z3 for all inputs within bounds, from the model's own "
        "code. Exit 0 when all are proved, 1 when one is refuted (its counterexample printed), 3 on a timeout.",
    )
    pr.add_argument("target", nargs="?", help="a proof target (see --list)")
    pr.add_argument("--list", action="store_true", help="list the proof targets")
    pr.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a bound of the target")
    pr.add_argument("--only", action="append", metavar="NAME", help="run only this proof (repeatable)")
    pr.add_argument("--max-seconds", type=SECONDS, metavar="S", help="stop after S seconds (default 600)")
    pr.add_argument("--json", metavar="FILE", help="write the CheckResult as JSON")
    pr.add_argument(
        "--quiet", action="store_true", help="no progress line (one line per obligation in a log)"
    )
    pr.set_defaults(func=_cmd_prove)

    own_parsers = {
        "shrink": "minimise a counterexample (steps, faults, configuration); see `kafka-mc shrink --help`",
        "explore": "walk a model's states, or a counterexample, in the browser (`kafka-mc explore --help`)",
    }
    for own, what in own_parsers.items():  # each parses its own arguments (_dispatch)
        sh = sub.add_parser(own, add_help=False, help=what)
        sh.add_argument("args", nargs=argparse.REMAINDER)
        sh.set_defaults(func=_cmd_own)

    rel = sub.add_parser(
        "release",
        help="run the release suite and publish its report",
        description="Run every entry of the release suite (configs/release.toml: each reference "
        "configuration with its expected verdict and coverage requirements, and the z3 proofs), print "
        "a summary and write reports/<run-id>/ (index.html, report.json, junit.xml). Exit 0 when every "
        "expectation is met, 1 on a violation or an unmet requirement, 3 when an entry ran out of budget "
        "or the run was interrupted.",
    )
    rel.add_argument("--suite", default=str(PROJECT_ROOT / "configs" / "release.toml"), help="the suite TOML")
    rel.add_argument("--report-dir", default="reports", help="where reports/<run-id>/ is written")
    rel.add_argument("--quiet", action="store_true", help="no progress line")
    rel.add_argument("--verbose", action="store_true", help="every entry's properties and requirements")
    rel.add_argument("--mutation", metavar="FILE", help="a `kafka-mc mutate --json` result to report")
    rel.add_argument(
        "--compare",
        metavar="RUN",
        help="the run the report's 'changed since' section compares with (a run id in --report-dir, "
        "or a run folder; default: the newest run there)",
    )
    rel.add_argument(
        "--entries", metavar="NAMES", help="run only these entries (comma-separated; see --list)"
    )
    rel.add_argument(
        "--list", action="store_true", help="list the suite's entries (model, engine, expectation)"
    )
    rel.add_argument(
        "--jobs",
        type=Bounded(int, 1, MAX_WORKERS),
        default=None,
        metavar="N",
        help="entries run side by side, each in a worker process of its own, the longest first "
        "(default: the processors available; 1: one after the other in this process)",
    )
    rel.set_defaults(func=_cmd_release)

    if verb in (None, "mutate"):
        from explorer.mutation.command import add_parser as add_mutate

        add_mutate(sub)
    else:  # only its name and line in `kafka-mc --help`: importing the harness costs 25 ms
        sub.add_parser("mutate", help=MUTATE_HELP)
    return p


def _stdout_gone() -> None:
    """Point stdout at /dev/null after its reader closed the pipe (so that the interpreter's
    last flush does not fail again)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (the console script exits with it).

    SIGINT and SIGTERM stop a search with its partial result (exit 3, see
    :mod:`explorer.search.stopping`).
    """
    start = time.monotonic()
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None and args[:1] == ["check"]:  # one search, then the process ends
        teardown.keep_until_exit()
    try:
        with stop_on_signals():
            code = _dispatch(args)
    except (UsageError, ConfigError) as e:
        print(f"kafka-mc: error: {_line(e)}", file=sys.stderr)
        code = 2
    except EngineError as e:
        print(f"kafka-mc: error: {_line(e)}", file=sys.stderr)
        code = 1
    except ModelError as e:
        print(f"kafka-mc: model error: {_line(e)}", file=sys.stderr)
        code = EXIT_MODEL_ERROR
    except KeyboardInterrupt:
        how = stop_requested() or "SIGINT"
        print(f"kafka-mc: interrupted by {how} after {time.monotonic() - start:.1f} s", file=sys.stderr)
        code = 3
    except BrokenPipeError:  # the reader of stdout left (`| head`): no message, as cat or grep
        _stdout_gone()
        code = 1
    except OSError as e:  # a file that vanished or a full disk while writing the outputs
        where = f" {e.filename}:" if e.filename else ""
        print(f"kafka-mc: error:{where} {e.strerror or e}", file=sys.stderr)
        code = 2
    except Exception as e:  # a model's (or our) code raised outside a search: one line, exit 4
        if os.environ.get("KAFKA_MC_TRACEBACK"):
            raise
        print(
            f"kafka-mc: model error: {type(e).__name__}: {_line(e)} (KAFKA_MC_TRACEBACK=1 shows where)",
            file=sys.stderr,
        )
        code = EXIT_MODEL_ERROR
    if argv is None:
        # the process ends here: its searches' memory goes back to the system at once
        # instead of being freed object by object (explorer.search.teardown)
        teardown.exit_process(code)
    return code


def _line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _dispatch(argv: list[str]) -> int:
    try:
        log_every_from_env()
    except ValueError as e:
        raise UsageError(str(e)) from None
    if argv[:1] in (["shrink"], ["explore"]):  # their own parsers, --help included
        from explorer.explore.command import explore_main
        from explorer.shrink import shrink_main

        return {"shrink": shrink_main, "explore": explore_main}[argv[0]](argv[1:])
    args = build_parser(argv[0] if argv and not argv[0].startswith("-") else "").parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    main()
