"""Running the release's entries side by side: one worker process per entry (issue 56).

:func:`run_jobs` runs a list of jobs, at most ``jobs`` at a time, each in a process of its own
forked for it (so whatever an entry's search held is returned to the system when it ends), in
the order asked (the release asks for the longest first), and hands each result to
``on_done`` as it arrives. It knows nothing of suites: the release's entry body is
:func:`explorer.release.run_entry`.

What a job prints is captured in its process and returned with its result (the caller prints
it when the job ends: two jobs never interleave their lines). A job that raises ends the run:
the other workers are killed and the exception is raised again in the caller (an exception
that does not pickle becomes a ``RuntimeError`` with its text).

Interrupts: while :func:`run_jobs` waits, SIGINT and SIGTERM only set a flag. The workers run
in process groups of their own (a Ctrl-C at the terminal reaches the caller only), so the first
signal is forwarded exactly once to each running worker, whose search stops between two states
with a partial result as it would in the foreground; no job is started after it, and the jobs
never started get ``not_run(item)``. A second signal kills the workers still running
(``not_run`` for theirs). A worker dies with its parent (``PR_SET_PDEATHSIG``).

Example
-------
>>> out = []
>>> results, interrupted = run_jobs([3, 1, 2], lambda x: x * 10, jobs=2, order=[2, 0, 1],
...                                 not_run=lambda x: None, on_done=lambda i, r, text: out.append(i))
>>> results, interrupted, sorted(out)
([30, 10, 20], False, [0, 1, 2])
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar, cast

from explorer.core import CheckResult
from explorer.release_output import started_line
from explorer.search import not_run_result, stopping, teardown
from explorer.search.pool import die_with_parent

__all__ = ["EntryRun", "default_jobs", "longest_first", "not_run_entry", "run_entries", "run_jobs"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class EntryRun:
    """What the release keeps of one entry's run (made in the entry's worker, sent back whole):
    its result, verdict and coverage requirements, the model's report layout, each
    counterexample's sequence-diagram arrows and full states (None: not drawn), and whether a
    signal stopped it."""

    result: CheckResult
    status: str
    message: str
    requirements: list[dict[str, Any]]
    layout: dict[str, Any] | None = None
    arrows: list[list[list[str]] | None] | None = None
    views: list[list[list[Any]] | None] | None = None
    interrupted: bool = False


def not_run_entry(e: Any, interrupted: bool = False) -> EntryRun:
    """The run of suite entry ``e`` that the release never ran (it was interrupted first)."""
    r = not_run_result(e.model, e.engine, "not run: the release was interrupted before this entry")
    return EntryRun(r, "not-run", "not run: the release was interrupted", [], interrupted=interrupted)


def run_entries(
    entries: Sequence[Any],
    work: Callable[[Any, bool], EntryRun],
    *,
    quiet: bool,
    jobs: int,
    previous: Mapping[str, Any] | None,
    show: Callable[[Any, EntryRun, int, int], None],
) -> tuple[list[EntryRun], bool]:
    """Every suite entry's run (``work(entry, quiet)``), in the suite's order, and whether a signal
    interrupted the release. ``jobs`` at a time in worker processes (quiet: no progress line),
    the longest first (by ``previous``'s report, else by ``max_seconds``); with ``jobs=1`` one
    after the other in this process, as they come. Unless ``quiet`` a line announces each entry as
    it starts; ``show(entry, run, k, n)`` prints it as the ``k``-th of ``n`` to end."""
    n = len(entries)
    started: list[int] = []
    ended: list[int] = []

    def start(i: int) -> None:
        started.append(i)
        if not quiet:  # a live line on a terminal only (explorer.release_output.started_line)
            started_line(entries[i], len(started), n)

    if jobs <= 1 or n <= 1:
        runs: list[EntryRun] = []
        for i, e in enumerate(entries):
            if runs and runs[-1].interrupted:
                runs.append(not_run_entry(e))
                continue
            start(i)
            runs.append(work(e, quiet))
            show(e, runs[-1], i + 1, n)
        return runs, any(x.interrupted for x in runs)
    seconds = {en["name"]: en["result"]["seconds"] for en in (previous or {}).get("entries", [])}
    order = longest_first([e.name for e in entries], seconds, [float(e.max_seconds or 0) for e in entries])

    def done(i: int, x: EntryRun, printed: str) -> None:
        ended.append(i)
        print(printed, end="")  # what the entry's worker printed (warnings), then its result
        show(entries[i], x, len(ended), n)

    runs, signalled = run_jobs(
        entries,
        lambda e: work(e, True),
        jobs=jobs,
        order=order,
        not_run=not_run_entry,
        on_start=start,
        on_done=done,
        stops=lambda x: x.interrupted,
    )
    return runs, signalled


def longest_first(names: Sequence[str], seconds: Mapping[str, float], estimate: Sequence[float]) -> list[int]:
    """The indices of ``names`` in the order to start them: the longest first, by ``seconds``
    (a previous run's) where known, else by ``estimate`` (the same index's); ties keep the order.

    >>> longest_first(["a", "b", "c"], {"a": 1.0, "c": 30.0}, [900, 5, 900])
    [2, 1, 0]
    """
    return sorted(range(len(names)), key=lambda i: -seconds.get(names[i], estimate[i]))


def default_jobs() -> int:
    """The processors this process may run on (at least 1): the release's default ``--jobs``.

    >>> default_jobs() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _child(work: Callable[[Any], Any], item: Any, conn: Connection, parent: int) -> None:
    """A worker: run ``work(item)`` with its output captured, send ``("ok", result, text)`` or
    ``("raised", exception, text)``, and exit without running the parent's exit handlers."""
    die_with_parent(parent)
    os.setpgrp()  # out of the terminal's group: the parent forwards one signal (module doc)
    stopping.clear_stop()
    teardown.keep_until_exit()  # the search is not freed object by object: os._exit below
    for sig in (signal.SIGINT, signal.SIGTERM):  # as in the foreground: stop the search, else raise
        signal.signal(sig, stopping._handler)
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            msg: tuple[str, Any, str] = ("ok", work(item), "")
    except BaseException as e:  # every failure is the caller's to raise
        msg = ("raised", e, "")
    msg = (msg[0], msg[1], buf.getvalue())
    try:
        conn.send(msg)
    except Exception as e:  # a result or an exception that does not pickle
        what = f"{type(msg[1]).__name__}: {msg[1]}" if msg[0] == "raised" else "its result"
        conn.send(("raised", RuntimeError(f"a release worker could not send {what} ({e})"), buf.getvalue()))
    conn.close()
    os._exit(0)


def run_jobs(
    items: Sequence[T],
    work: Callable[[T], R],
    *,
    jobs: int,
    order: Sequence[int] | None = None,
    not_run: Callable[[T], R],
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[int, R, str], None] | None = None,
    stops: Callable[[R], bool] | None = None,
) -> tuple[list[R], bool]:
    """``[work(x) for x in items]``, each in a forked worker process, at most ``jobs`` at once,
    started in ``order`` (indices into ``items``; default their order), and whether a signal
    interrupted the run (see the module's docstring). ``on_start(i)`` is called as job ``i``
    starts, ``on_done(i, result, printed)`` as it ends (``printed``: what it wrote to stdout).
    A result for which ``stops(result)`` holds (a worker stopped by a signal of its own) stops the
    run as a signal would: nothing more is started, the running workers are sent SIGINT.
    """
    todo = list(range(len(items)) if order is None else order)
    if sorted(todo) != list(range(len(items))):
        raise ValueError("order must name every item once")
    results: dict[int, R] = {}
    running: dict[Connection, tuple[int, Any]] = {}
    signals: list[int] = []
    ctx = multiprocessing.get_context("fork")

    def handler(signum: int, frame: Any) -> None:
        signals.append(signum)
        stopping.request_stop(signal.Signals(signum).name)

    main = threading.current_thread() is threading.main_thread()
    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)} if main else {}
    forwarded = 0
    try:
        while todo or running:
            while todo and len(running) < max(1, jobs) and not signals:
                i = todo.pop(0)
                if on_start is not None:
                    on_start(i)
                recv, send = ctx.Pipe(duplex=False)
                p = ctx.Process(target=_child, args=(work, items[i], send, os.getpid()), daemon=True)
                p.start()
                send.close()
                running[recv] = (i, p)
            if signals and forwarded < len(signals):
                for _, p in running.values():  # the first signal forwarded, the second kills
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(p.pid, signals[0] if forwarded == 0 else signal.SIGKILL)
                forwarded = len(signals)
            if not running:
                break
            for ready in wait(list(running), timeout=0.2):
                conn = cast(Connection, ready)
                i, p = running.pop(conn)
                kind: str
                value: Any
                text: str
                try:  # our own child's message (never a file's: nothing else writes this pipe)
                    kind, value, text = conn.recv()
                except (EOFError, OSError):
                    kind, value, text = "lost", None, ""
                except Exception as e:  # an exception whose class does not unpickle
                    kind, value, text = "raised", RuntimeError(f"a release worker's message: {e}"), ""
                conn.close()
                p.join()
                if kind == "raised" and isinstance(value, KeyboardInterrupt):
                    kind = "lost"  # stopped outside a search (the signal forwarded)
                if kind == "raised":
                    raise value
                if kind == "lost":
                    if signals:  # killed by the second signal
                        value = not_run(items[i])
                    else:
                        raise RuntimeError(f"a release worker died without a result (exit code {p.exitcode})")
                results[i] = value
                if on_done is not None:
                    on_done(i, value, text)
                if stops is not None and not signals and stops(value):
                    signals.append(signal.SIGINT)
    finally:
        for conn, (_, p) in running.items():
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGKILL)
            p.join()
            conn.close()
        for s, h in old.items():
            signal.signal(s, h)
    interrupted = bool(signals)
    return [results[i] if i in results else not_run(items[i]) for i in range(len(items))], interrupted
