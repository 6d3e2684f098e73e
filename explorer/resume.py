"""``kafka-mc check --resume DIR``: the command line of a resumed run, from its checkpoint.

The checkpoint's ``manifest.json`` records, in its ``run`` section, what the command line named
(model, ``--config``, ``--set``, the engine and its options). A resumed run takes them from
there, each checked as data: of the type its option has, and never a ``--system`` the user did
not give (a file names, it never loads: :func:`explorer.datafiles.check_named_system`). An
option given again on the command line must equal the checkpoint's, but ``--max-seconds``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from explorer.datafiles import DataFileError, check_named_system
from explorer.frontend import UsageError

__all__ = ["RESUMED", "RESUMED_TYPES", "resume_args"]


#: what ``--resume DIR`` takes from the checkpoint (the command line may repeat it, not change it)
RESUMED = (
    "model",
    "system",
    "config",
    "defaults",
    "set",
    "engine",
    "workers",
    "max_depth",
    "max_states",
    "max_seconds",
    "keep_going",
    "no_deadlock",
    "visited",
    "frontier_batch",
    "checkpoint_every",
)


#: the types of the ``run`` values of a manifest that are not text (or absent)
RESUMED_TYPES: dict[str, tuple[type, ...]] = {
    "defaults": (bool, type(None)),
    "keep_going": (bool, type(None)),
    "no_deadlock": (bool, type(None)),
    "set": (list,),
    "engine": (str,),
    "workers": (int,),
    "max_depth": (int, type(None)),
    "max_states": (int, type(None)),
    "max_seconds": (int, float, type(None)),
    "frontier_batch": (int, type(None)),
    "checkpoint_every": (int, float, type(None)),
}


def resume_args(args: argparse.Namespace, defaults: argparse.Namespace) -> None:
    """Fill ``args`` from the checkpoint's manifest for ``--resume DIR``; UsageError (exit 2)
    on an option given on the command line that differs from the checkpoint's, except
    ``--max-seconds`` (the whole run's, over every session), which may give it more time.
    ``defaults`` is the parser's ``check`` with no options (what "not given" looks like).

    >>> resume_args(argparse.Namespace(resume="/nonexistent", checkpoint=None), argparse.Namespace())
    Traceback (most recent call last):
    ...
    explorer.frontend.UsageError: --resume /nonexistent: no checkpoint there (no manifest.json)
    """
    from explorer.search.checkpoint import CheckpointError, read_manifest, refuse_links

    try:
        run = read_manifest(refuse_links(Path(args.resume), "--resume")).get("run") or {}
    except CheckpointError as e:
        raise UsageError(str(e)) from None
    if not run or not isinstance(run, dict):
        raise UsageError(f"--resume {args.resume}: the checkpoint was not written by kafka-mc check")
    if args.checkpoint is not None and os.path.abspath(args.checkpoint) != os.path.abspath(args.resume):
        raise UsageError(f"--checkpoint {args.checkpoint}: conflicts with --resume {args.resume}")
    for key in RESUMED:  # data from a file: each value of the type its option has
        kinds = RESUMED_TYPES.get(key, (str, type(None)))
        value = run.setdefault(key, []) if key == "set" else run.get(key)
        bad = isinstance(value, bool) and bool not in kinds
        if (
            bad
            or not isinstance(value, kinds)
            or (isinstance(value, list) and not all(isinstance(x, str) for x in value))
        ):
            shown = repr(value)[:60]
            raise UsageError(
                f"--resume {args.resume}: manifest.json run.{key} is not a valid value ({shown})"
            )
    try:  # a file names, it never loads: a --system checkpoint resumes on the --system given
        check_named_system(run.get("system"), args.system, f"--resume {args.resume}: manifest.json run")
    except DataFileError as e:
        raise UsageError(str(e)) from None
    for key in RESUMED:
        given, stored = getattr(args, key), run.get(key)
        if key == "config" and given is not None and stored is not None:
            given = os.path.abspath(given)
        if key == "max_seconds" and given != getattr(defaults, key):
            continue  # a time budget may change: more time for a run that ran out (all sessions')
        if given != getattr(defaults, key) and given != stored:
            flag = "MODEL" if key == "model" else "--" + key.replace("_", "-")
            raise UsageError(
                f"{flag} {given}: conflicts with the checkpoint's {stored} (options come from it)"
            )
        setattr(args, key, stored)
    args.checkpoint, args.resuming = args.resume, True
