"""One z3 context per proof, and the errors and bounds of the symbolic harness.

See :mod:`explorer.symbolic` ("One z3 context per proof") for why every proof runs in
a context of its own.

Example
-------
>>> LONG_MAX == 2**63 - 1
True
"""

from __future__ import annotations

import functools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import ParamSpec, TypeVar

import z3

__all__ = [
    "LONG_MAX",
    "LONG_MIN",
    "BudgetExceeded",
    "SymbolicError",
    "fresh_z3_context",
    "interruptible",
    "isolated",
    "short_term",
]

LONG_MIN = -(2**63)
"""Scala's ``Long.MinValue``."""
LONG_MAX = 2**63 - 1
"""Scala's ``Long.MaxValue``."""


class SymbolicError(Exception):
    """A function did something the harness cannot follow symbolically.

    For example hashing a symbolic value, using one as a list index, or branching on a
    symbolic condition outside :meth:`PathExplorer.explore`.
    """


class BudgetExceeded(Exception):
    """A path budget (paths, decisions per path, deadline) ran out."""


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _check_z3_default_context() -> None:
    """z3's ``main_ctx()`` must read (and lazily fill) the module global ``_main_ctx``."""
    zmod = z3.z3
    ok = (
        hasattr(zmod, "_main_ctx")
        and z3.main_ctx.__globals__ is vars(zmod)
        and "_main_ctx" in z3.main_ctx.__code__.co_names
    )
    if not ok:  # pragma: no cover - a z3 whose Python API changed
        raise RuntimeError("z3.main_ctx() no longer uses z3.z3._main_ctx: fresh_z3_context needs updating")


@contextmanager
def fresh_z3_context() -> Iterator[None]:
    """Within the block, z3's default context (``z3.main_ctx()``) is a new one.

    Every z3 term, sort and solver made without ``ctx=`` in the block belongs to it, so
    what z3 does in the block does not depend on what was made before in the process
    (see the module doc). The previous default context is restored on exit; terms made
    in the block stay valid (each keeps its context alive) but cannot be combined with
    terms of the restored one. Blocks nest.

    The new context is made by z3 itself on first use (``main_ctx()`` creates one when
    its module global ``z3.z3._main_ctx`` is None, which this sets): a z3 context costs
    about 17 MB, and a block that makes no term (an outer :func:`isolated` call whose
    inner calls are isolated too) makes none. Not thread-safe, since that global is
    process-wide.

    >>> outer = z3.Int("x")
    >>> with fresh_z3_context():
    ...     inner = z3.Int("x")
    ...     inner.ctx is z3.main_ctx(), inner.ctx is not outer.ctx
    (True, True)
    >>> z3.main_ctx() is outer.ctx
    True
    """
    _check_z3_default_context()
    zmod = z3.z3
    saved = zmod._main_ctx
    zmod._main_ctx = None
    try:
        yield
    finally:
        zmod._main_ctx = saved


def isolated(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorator: every call of ``fn`` runs in :func:`fresh_z3_context`.

    For a function that builds its z3 terms itself and returns none (a ``prove_*``
    function returning a :class:`ProofOutcome` of plain values), not for one taking or
    returning terms. ``fn.__wrapped__`` is the undecorated function.

    >>> @isolated
    ... def context_of_a_new_term() -> z3.Context:
    ...     return z3.Int("x").ctx
    >>> context_of_a_new_term() is z3.main_ctx(), context_of_a_new_term.__wrapped__() is z3.main_ctx()
    (False, True)
    """

    @functools.wraps(fn)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with fresh_z3_context():
            return fn(*args, **kwargs)

    return run


def short_term(t: z3.ExprRef, limit: int = 240) -> str:
    """A z3 term on one line, cut to ``limit`` characters.

    >>> short_term(z3.Int("x") + 1)
    'x + 1'
    """
    text = " ".join(str(t).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, the first Ctrl-C (or SIGTERM) stops a running z3 query and reaches
    Python's own handler, instead of being taken by z3.

    By default z3 installs its own SIGINT handler for the length of a query: a Ctrl-C there
    cancels the query, which returns ``unknown`` as if it had run out of time (an obligation
    that reads ``unknown`` as "no counterexample" or "not refuted" then reports a verdict the
    interrupt made up), and Python never learns of the signal. Here z3's handler is off
    (``ctrl_c`` false), Python's C-level handler writes the signal to a wake-up pipe, and a
    thread reading it interrupts z3's current default context: the query returns at once and
    Python's handler runs (``KeyboardInterrupt``, or the stop flag of
    :mod:`explorer.search.stopping`). Outside the main thread it only turns z3's handler off.

    >>> with interruptible():
    ...     z3.Solver().check()
    sat
    """
    z3.set_param("ctrl_c", False)
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except ValueError:  # pragma: no cover - no wake-up fd where signals cannot be handled
        os.close(r)
        os.close(w)
        yield
        return
    stops = {int(signal.SIGINT), int(signal.SIGTERM)}

    def watch() -> None:
        while True:
            try:
                got = os.read(r, 64)
            except OSError:
                return
            if not got:  # the block ended: the write end is closed
                return
            ctx = z3.z3._main_ctx
            if ctx is not None and stops.intersection(got):
                ctx.interrupt()
            if old >= 0:  # whoever used the wake-up fd before still hears of the signal
                with suppress(OSError):
                    os.write(old, got)

    watcher = threading.Thread(target=watch, name="z3-interrupt", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(old)
        os.close(w)
        watcher.join(timeout=1.0)
        os.close(r)
