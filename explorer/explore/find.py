"""The page's "find from here": a bounded search from the state a path reaches, with the project's own
search core (:func:`explorer.api.check`, engine ``bfs``), to the nearest violation of one
property, or the nearest state where a witness holds, or a deadlock.

The search runs in a thread of its own (one at a time per server), reports its progress
(depth, states) and can be cancelled: the cancel asks the engine to stop between two states
as a Ctrl-C would (:func:`explorer.search.request_stop`). Its budgets are bounded
(:data:`MAX_STATES`, :data:`MAX_SECONDS`), so no page can make the server search forever.
What it finds is a path: the one searched from, extended by the shortest way to the goal.

Example
-------
>>> from tests.toys import Grid
>>> from explorer.explore.session import Session
>>> s = Session(Grid(2), Grid(2).properties(), model="tests.toys:Grid", config={"n": 2})
>>> job = FindJob(s, [0], "corner", max_states=1000, max_seconds=10)
>>> job.run(); job.status()["found"]["path"], job.status()["found"]["steps"]
('0.0.0.0.0', 4)
"""

from __future__ import annotations

import io
import threading
import time
from typing import Any

from explorer.api import CheckOptions, check
from explorer.core import Property, PropertyKind, always
from explorer.search import clear_stop, request_stop, stop_requested
from explorer.search.progress import Progress

__all__ = ["CANCEL", "MAX_SECONDS", "MAX_STATES", "FindJob"]

#: the most states one "find from here" may visit, and the most seconds it may take
MAX_STATES = 2_000_000
MAX_SECONDS = 600.0
#: the stop request's name when the page cancels a search (a signal's is SIGINT or SIGTERM)
CANCEL = "cancel"


class _From:
    """The system started at one state: ``init_states`` is that state, everything else the
    system's own."""

    def __init__(self, system: Any, start: Any) -> None:
        self._system, self._start = system, start

    def init_states(self) -> list[Any]:
        return [self._start]

    def successors(self, s: Any) -> Any:
        return self._system.successors(s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._system, name)


class _Watch(Progress):
    """The search's progress, kept for the page to ask for (nothing is written)."""

    def __init__(self) -> None:
        super().__init__(stream=io.StringIO(), log_every=None)
        self.depth = 0
        self.states = 0

    def update(self, depth: int, frontier: int, distinct: int, rate: float, force: bool = False) -> None:
        self.depth, self.states = depth, distinct

    def show(self, line: str, force: bool = False) -> None:
        pass

    def note(self, line: str) -> None:
        pass


def goal_property(props: list[Property], name: str) -> tuple[Property | None, str]:
    """The property a search for ``name`` checks, and what it looks for: a violation of an
    ``always``, ``transition`` or ``eventually`` property; for a witness (``reachable``) the
    violation of its negation (a state where it holds); ``deadlock``: None (the engine's own
    deadlock check). ValueError for a name the model does not have.

    >>> from tests.toys import Grid
    >>> p, what = goal_property(Grid(2).properties(), "corner"); p.name, what
    ('reach:corner', 'a state where corner holds')
    """
    if name == "deadlock":
        return None, "a deadlock"
    p = next((q for q in props if q.name == name), None)
    if p is None:
        raise ValueError(f"property {name!r}: the model has no such property")
    if p.kind is PropertyKind.REACHABLE:
        w = p.check
        return always(f"reach:{p.name}", lambda s: not w(s), f"not {p.doc}"), f"a state where {p.name} holds"
    return p, f"a violation of {p.name}"


class FindJob:
    """One bounded search from the end of ``path`` for ``prop`` (see :func:`goal_property`);
    :meth:`run` it in a thread, ask :meth:`status` while it runs, :meth:`cancel` it."""

    def __init__(self, session: Any, path: list[int], prop: str, *, max_states: int, max_seconds: float):
        self.session, self.path, self.name = session, list(path), prop
        self.goal, self.what = goal_property(session.props, prop)
        self.max_states = max(1, min(int(max_states), MAX_STATES))
        self.max_seconds = max(0.1, min(float(max_seconds), MAX_SECONDS))
        self.watch = _Watch()
        self.started = time.monotonic()
        self.done = False
        self.cancelled = False
        self.result: dict[str, Any] | None = None

    def run(self) -> None:
        """Search (in the calling thread); the outcome is in :meth:`status`."""
        try:
            start = self.session.state(self.path)
            options = CheckOptions(
                engine="bfs",
                max_states=self.max_states,
                max_seconds=self.max_seconds,
                deadlock=self.goal is None,
                progress=self.watch,
                model="explore",
            )
            props = [] if self.goal is None else [self.goal]
            r = check(_From(self.session.system, start), props, options)
            self.result = self._outcome(r)
        except Exception as e:  # the model's code or a bad budget: one line for the page
            self.result = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        finally:
            if stop_requested() == CANCEL:
                clear_stop()
            self.done = True

    def _outcome(self, r: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "states": r.distinct_states,
            "depth": r.max_depth,
            "seconds": round(r.seconds, 3),
        }
        v = next((v for v in r.violations if v.trace), None)
        if v is not None:
            path = self.session.path_of_steps([vars(st) for st in v.trace], start=self.path)
            out["found"] = {
                "path": ".".join(str(i) for i in path),
                "steps": len(path) - len(self.path),
                "what": self.what,
                "loop_start": None if v.loop_start is None else len(self.path) - 1 + v.loop_start,
            }
        elif self.cancelled:
            out["none"] = f"cancelled after {r.distinct_states:,} states"
        elif r.budget:
            out["none"] = f"no {self.what[2:]} within {r.distinct_states:,} states ({r.budget} reached)"
        else:
            out["none"] = (
                f"no {self.what[2:]} is reachable from here ({r.distinct_states:,} states, all searched)"
            )
        return out

    def cancel(self) -> None:
        """Ask the search to stop between two states (its result says it was cancelled)."""
        if not self.done:
            self.cancelled = True
            request_stop(CANCEL)

    def status(self) -> dict[str, Any]:
        """The search's progress, then its outcome: ``found`` (the path to the goal), ``none``
        (why nothing was found) or ``error``."""
        out: dict[str, Any] = {
            "property": self.name,
            "what": self.what,
            "running": not self.done,
            "depth": self.watch.depth,
            "states": self.watch.states,
            "seconds": round(time.monotonic() - self.started, 1),
        }
        if self.done and self.result is not None:
            out.update(self.result)
        return out


def start(job: FindJob) -> threading.Thread:
    """Run ``job`` in a daemon thread."""
    t = threading.Thread(target=job.run, name="kafka-mc-explore-find", daemon=True)
    t.start()
    return t
