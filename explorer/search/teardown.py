"""Ending a process without freeing its search object by object (issue 56).

A search keeps millions of small objects (the visited set, its states' records). Freed one by
one when the search's result is built, and then traversed by the collector's last pass when
the interpreter shuts down, they cost a CLI run of ``controller-ref`` about a fifth of its CPU
(1,000,000 states: 12.7 s after the answer was printed, for a 56 s search). The operating
system takes a process's memory back at once when it exits; Kafka's own ``Exit.halt`` ends
the JVM the same way.

So a process that will end right after one search (the ``kafka-mc`` command, a release
entry's worker) calls :func:`keep_until_exit`, and :func:`explorer.search.serial.finish` then
hands the search's parts to :func:`keep` instead of dropping them (they stay in the
collector's permanent generation, never traversed again); the process ends with
:func:`exit_process`: the exit handlers run (``atexit``: temporary folders, loggers, Spark),
the standard streams are flushed, and ``os._exit`` skips the interpreter's teardown. Only
when no other thread runs (a thread would be waited for by a normal exit): otherwise it is a
normal ``sys.exit``.

A library caller (``explorer.api.check`` in a long-lived process, the tests) never asks for
this: its searches are freed as before.

>>> keeping()
False
>>> keep(object())  # not keeping: nothing is held
False
>>> len(_KEPT)
0
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from typing import Any, NoReturn

__all__ = ["exit_process", "keep", "keep_until_exit", "keeping"]

#: what :func:`keep` holds until the process ends (the last search it was given)
_KEPT: list[Any] = []
_keeping = False


def keep_until_exit() -> None:
    """From now on, :func:`keep` holds what it is given until the process ends (call it only
    in a process that ends with :func:`exit_process` or ``os._exit`` after its search).

    >>> keeping()
    False
    """
    global _keeping
    _keeping = True


def keeping() -> bool:
    """Whether :func:`keep_until_exit` was called in this process.

    >>> isinstance(keeping(), bool)
    True
    """
    return _keeping


def keep(obj: Any) -> bool:
    """Hold ``obj`` until the process ends, when :func:`keeping`; True if it was kept. Only the
    last one given is held: a process that runs several searches (a shrinker's bounded ones
    after the main one) frees each when the next one is kept, so at most one finished search
    is held beside the running one.

    >>> keep("a search's parts")
    False
    """
    if _keeping:
        if _KEPT:
            previous = _KEPT.pop()
            if getattr(previous, "frozen", False):  # its cycles collectable again (a search's
                gc.unfreeze()  # Outcome says whether it froze; the next search did not)
                previous.frozen = False
            del previous
        _KEPT.append(obj)
    return _keeping


def exit_process(code: int) -> NoReturn:
    """End the process with ``code``: the ``atexit`` handlers run and the standard streams are
    flushed, then ``os._exit`` (the interpreter's teardown, freeing every object, is skipped).
    With another thread alive, a normal ``sys.exit(code)`` (which waits for it).

    >>> exit_process.__name__
    'exit_process'
    """
    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a reader that left, a stream closed by the command
            if code == 0:
                code = 1
    os._exit(code)
