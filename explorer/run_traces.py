"""A release run's counterexamples as trace files, and the commands that open them.

Every counterexample a release finds (expected or not) is saved in its run folder as
``traces/<entry>--<property>.json``, a trace file of the format ``kafka-mc replay`` and
``kafka-mc shrink`` read (:mod:`explorer.tracefile`). Those two commands also take the run
folder itself with ``--entry NAME`` (and ``--property NAME`` when the entry saved more than
one): ``kafka-mc replay reports/latest --entry controller-0.8 --property leader_in_isr``.
The terminal and the entry's page print :func:`trace_commands`, the one list of what to do
with a saved counterexample.

Example
-------
>>> run_trace_name("controller-0.8", "leader_in_isr")
'controller-0.8--leader_in_isr.json'
>>> [c for c, _ in trace_commands("reports/r/traces/x--p.json")][2]
'kafka-mc replay reports/r/traces/x--p.json --state -1'
"""

from __future__ import annotations

import os
import shlex

from explorer.config import did_you_mean
from explorer.tracefile import ReplayError

__all__ = [
    "RUN_TRACES",
    "RunTraceError",
    "resolve_run_trace",
    "run_trace_name",
    "trace_commands",
    "trace_path_of",
]

#: the folder of a run folder that holds its trace files
RUN_TRACES = "traces"
_SEP = "--"


class RunTraceError(ReplayError):
    """A run folder, entry or property that names no saved trace: one line (a
    :class:`~explorer.tracefile.ReplayError`, so ``replay`` and ``shrink`` say it as they say a
    bad trace file's)."""


def run_trace_name(entry: str, prop: str) -> str:
    """The trace file of ``entry``'s counterexample of ``prop`` in a run's ``traces/`` folder.

    >>> run_trace_name("simple-timing-wheel-ref", "deadlock")
    'simple-timing-wheel-ref--deadlock.json'
    """
    return f"{entry}{_SEP}{prop}.json"


def trace_commands(path: str) -> list[tuple[str, str]]:
    """What to do with a saved counterexample: ``(command, what it does)``, in the order a
    person uses them: open it in the browser first (``kafka-mc explore``, issue 57).

    >>> for c, what in trace_commands("t/a b.json"): print(c, "#", what)
    kafka-mc explore 't/a b.json' # open it in the browser at its violating step: state, why, what else could happen
    kafka-mc replay 't/a b.json' # replay it step by step, checking every step
    kafka-mc replay 't/a b.json' --state -1 # the violating state in full
    kafka-mc replay 't/a b.json' --diff -2 -1 # what the last step changed
    kafka-mc shrink 't/a b.json' --out-dir shrunk/ # a shorter counterexample and a pytest test
    """
    q = shlex.quote(path)
    return [
        (
            f"kafka-mc explore {q}",
            "open it in the browser at its violating step: state, why, what else could happen",
        ),
        (f"kafka-mc replay {q}", "replay it step by step, checking every step"),
        (f"kafka-mc replay {q} --state -1", "the violating state in full"),
        (f"kafka-mc replay {q} --diff -2 -1", "what the last step changed"),
        (f"kafka-mc shrink {q} --out-dir shrunk/", "a shorter counterexample and a pytest test"),
    ]


def _saved(folder: str) -> dict[str, list[str]]:
    """entry -> properties of the traces saved in ``folder/traces`` (names of the scheme only)."""
    try:
        names = sorted(os.listdir(os.path.join(folder, RUN_TRACES)))
    except OSError:
        return {}
    out: dict[str, list[str]] = {}
    for n in names:
        if n.endswith(".json") and _SEP in n:
            entry, prop = n[: -len(".json")].rsplit(_SEP, 1)
            out.setdefault(entry, []).append(prop)
    return out


def resolve_run_trace(folder: str, entry: str | None, prop: str | None) -> str:
    """The trace file a run folder holds for ``entry`` and ``prop`` (``prop`` may be left out
    when the entry saved one counterexample); RunTraceError in one line naming what the
    folder holds otherwise.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "traces").mkdir()
    >>> _ = (d / "traces" / "e1--p.json").write_text("{}")
    >>> resolve_run_trace(str(d), "e1", None) == str(d / "traces" / "e1--p.json")
    True
    >>> resolve_run_trace(str(d), "e2", None)
    Traceback (most recent call last):
    ...
    explorer.run_traces.RunTraceError: --entry e2: the run saved no counterexample of it (entries with one: e1)
    """
    saved = _saved(folder)
    if not os.path.isdir(os.path.join(folder, RUN_TRACES)) and not os.path.isfile(
        os.path.join(folder, "report.json")
    ):
        raise RunTraceError(f"{folder}: a folder, but not a release run folder (no report.json)")
    if entry is None:
        listed = ", ".join(saved) or "none"
        raise RunTraceError(
            f"{folder}: a run folder: name the entry with --entry (entries with a trace: {listed})"
        )
    if entry not in saved:
        hint = did_you_mean(entry, list(saved))
        listed = ", ".join(saved) or "none"
        raise RunTraceError(
            f"--entry {entry}: the run saved no counterexample of it{hint} (entries with one: {listed})"
        )
    props = saved[entry]
    if prop is None:
        if len(props) > 1:
            raise RunTraceError(f"--entry {entry}: name one with --property (it has: {', '.join(props)})")
        prop = props[0]
    if prop not in props:
        hint = did_you_mean(prop, props)
        raise RunTraceError(
            f"--property {prop}: no counterexample of it in {entry}{hint} (it has: {', '.join(props)})"
        )
    return os.path.join(folder, RUN_TRACES, run_trace_name(entry, prop))


def trace_path_of(path: str, entry: str | None, prop: str | None) -> str:
    """The trace file ``replay`` or ``shrink`` is given: ``path`` itself, or, when it is a run
    folder, the one :func:`resolve_run_trace` finds there (``--entry`` names an entry of a run
    folder only).

    >>> trace_path_of("t/x.json", None, "p")
    't/x.json'
    >>> trace_path_of("t/x.json", "e", None)
    Traceback (most recent call last):
    ...
    explorer.run_traces.RunTraceError: --entry e: names an entry of a release run folder, and t/x.json is no folder
    """
    if os.path.isdir(path):
        return resolve_run_trace(path, entry, prop)
    if entry is not None:
        raise RunTraceError(
            f"--entry {entry}: names an entry of a release run folder, and {path} is no folder"
        )
    return path
