"""``kafka-mc explore``: open a model, or a saved counterexample, in the browser.

``kafka-mc explore MODEL [--config F | --defaults] [--set K=V ...]`` starts at the model's
initial states (its reference configuration unless ``--config`` or ``--defaults``, as
``check``); ``kafka-mc explore --system pkg.mod:factory [--set K=V ...]`` does so for a system
of the user's. ``kafka-mc explore TRACE`` opens a counterexample at its violating step: a
trace file (``check --save-traces``, a release run's ``traces/``), a ``check --json`` result
(``--property`` picks one of its violations) or a release run folder with ``--entry`` (and
``--property``), exactly as ``replay`` takes them. A file names its model, it never loads it
(``docs/security.md``): a trace made with ``--system`` opens only with that same ``--system``.

It serves one page on 127.0.0.1 (a free port unless ``--port``; ``--host`` binds another
address, explicitly), prints its URL with the session's token, and stops on Ctrl-C (exit 0).

Example
-------
>>> build_parser().parse_args(["controller", "--port", "8080"]).port
8080
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import NoReturn

from explorer.config import load_config, parse_override
from explorer.core import config_to_dict
from explorer.datafiles import DataFileError, check_named_system
from explorer.explore.find import CANCEL
from explorer.explore.server import make_server
from explorer.explore.session import PathError, Session
from explorer.frontend import UsageError, model_spec, registry, resolve_system
from explorer.run_traces import trace_path_of
from explorer.search import stop_requested
from explorer.tracefile import ReplayError, load_trace

__all__ = ["EXPLORE_HELP", "build_parser", "explore_main", "load_session"]

EXPLORE_HELP = "walk a model's states, or a saved counterexample, in the browser"
_ROOT = Path(__file__).resolve().parents[2]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"explore: {message}")


def build_parser() -> argparse.ArgumentParser:
    """The arguments of ``kafka-mc explore``."""
    p = _Parser(
        prog="kafka-mc explore",
        description="Serve a page on 127.0.0.1 that walks a model's state space (MODEL, or --system) "
        "or a saved counterexample (TRACE: a trace file, a --json result or a release run folder with "
        "--entry), and print its URL. Ctrl-C stops it (exit 0); exit 2 for bad input.",
    )
    p.add_argument("target", nargs="?", help="a registered model, or a trace file, result file or run folder")
    p.add_argument("--config", metavar="FILE", help="the model's configuration (default: its reference one)")
    p.add_argument("--defaults", action="store_true", help="the model's built-in defaults, not its reference")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    p.add_argument("--system", metavar="MODULE:FACTORY", help="a TransitionSystem factory of yours")
    p.add_argument("--property", help="which violation of a result file (or a run folder's entry) to open")
    p.add_argument("--entry", help="a release run folder's entry whose counterexample to open")
    p.add_argument(
        "--host", default="127.0.0.1", help="the address to bind (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=_port, default=0, help="the port (default: a free one)")
    return p


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {text!r}")
    return int(text)


def _reference(model: str) -> str | None:
    path = _ROOT / "configs" / f"{model}-ref.toml"
    return str(path) if path.is_file() else None


def load_session(args: argparse.Namespace) -> tuple[Session, str]:
    """The session the command line names, and what it is in words; UsageError (one line)
    for anything it cannot open."""
    target = args.target
    is_model = target is not None and target in registry().MODEL_MODULES  # a model's name wins
    if (
        target is None
        or is_model
        or not (os.path.exists(target) or target.endswith(".json") or "/" in target)
    ):
        if args.property or args.entry:
            raise UsageError("--property and --entry go with a TRACE (a file or a run folder)")
        return _model_session(args)
    if args.config or args.defaults or args.set:
        raise UsageError(
            "a trace names its own configuration: --config, --defaults and --set go with a MODEL"
        )
    try:
        path = trace_path_of(target, args.entry, args.property)
        doc = load_trace(path, args.property)
        check_named_system(doc.get("system"), args.system, path)  # a file names, it never loads
    except (ReplayError, DataFileError) as e:
        raise UsageError(str(e)) from None
    config = doc.get("config") or {}
    if args.system:
        system, props = resolve_system(args.system, [f"{k}={json.dumps(v)}" for k, v in config.items()])
    else:
        spec = model_spec(str(doc["model"]))
        built = load_config(spec.config_cls, values=config)
        system, props = spec.build(built), spec.properties(built)
    try:
        session = Session(
            system, props, model=str(doc["model"]), config=config, system_ref=args.system, trace=doc
        )
    except PathError as e:
        raise UsageError(f"{path}: the counterexample does not replay on today's model: {e}") from None
    return session, f"{path}: {doc['property']} ({len(doc['steps']) - 1} steps)"


def _model_session(args: argparse.Namespace) -> tuple[Session, str]:
    if (args.target is None) == (args.system is None):
        raise UsageError("name a MODEL, a TRACE file or give --system package.module:factory")
    if args.system:
        if args.config or args.defaults:
            raise UsageError("--config and --defaults go with a MODEL (pass --set to the factory)")
        system, props = resolve_system(args.system, args.set)
        cfg = dict(parse_override(o) for o in args.set)
        return Session(system, props, model=args.system, config=cfg, system_ref=args.system), args.system
    if args.defaults and args.config:
        raise UsageError("--defaults and --config exclude each other")
    config_path = args.config if args.config or args.defaults else _reference(args.target)
    spec = model_spec(args.target)
    config = load_config(spec.config_cls, config_path, args.set)
    system, props = spec.build(config), spec.properties(config)
    session = Session(system, props, model=spec.name, config=config_to_dict(config))
    return session, f"{spec.name} ({config_path or 'built-in defaults'})"


def explore_main(argv: list[str]) -> int:
    """Run ``kafka-mc explore`` until Ctrl-C (or SIGTERM): exit 0; bad input raises
    UsageError (the CLI's one line, exit 2)."""
    args = build_parser().parse_args(argv)
    if args.host != "127.0.0.1":
        print(
            f"kafka-mc explore: binding {args.host}: the page is open to whoever reaches it there "
            "with the token",
            file=sys.stderr,
        )
    session, what = load_session(args)
    try:
        server = make_server(session, args.host, args.port)
    except OSError as e:
        raise UsageError(
            f"--host {args.host} --port {args.port}: cannot listen there ({e.strerror or e})"
        ) from None
    info = session.info()
    start = f"path={info['trace']['path']}" if "trace" in info else "path=0"
    thread = threading.Thread(target=server.serve_forever, name="kafka-mc-explore", daemon=True)
    thread.start()
    print(f"kafka-mc explore: {what}", flush=True)
    print(f"  open {server.url(start)}", flush=True)
    print("  Ctrl-C stops it", flush=True)
    try:
        while thread.is_alive():
            thread.join(0.25)
            asked = stop_requested()
            if asked is not None and asked != CANCEL:  # a signal while a search polled for it
                break
    except KeyboardInterrupt:
        pass
    server.shutdown()
    server.server_close()
    print("kafka-mc explore: stopped", flush=True)
    return 0
