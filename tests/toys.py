"""Tiny hand-made transition systems for engine and CLI tests (and ``--system``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar, NamedTuple

from explorer.core import Property, always, reachable, transition


class Inc(NamedTuple):
    """Increment one of two counters."""

    which: int

    def __str__(self) -> str:
        return f"counter {self.which} increments"


class Reset(NamedTuple):
    """Reset both counters (never enabled unless ``reset`` is on)."""

    def __str__(self) -> str:
        return "both counters reset"


class Grid:
    """Two counters in ``0..n``; state ``(a, b)``. (n+1)**2 states, depth 2n.

    With ``terminal=False`` the corner ``(n, n)`` is a deadlock.
    """

    def __init__(self, n: int = 3, terminal: bool = True, reset: bool = False, limit: int | None = None):
        self.n, self.terminal, self.reset, self.limit = n, terminal, reset, limit

    def init_states(self) -> list[tuple[int, int]]:
        return [(0, 0)]

    def successors(self, s: tuple[int, int]) -> Iterator[tuple[object, tuple[int, int]]]:
        a, b = s
        if a < self.n:
            yield Inc(0), (a + 1, b)
        if b < self.n:
            yield Inc(1), (a, b + 1)
        if self.reset and a == self.n and b == self.n:
            yield Reset(), (0, 0)

    def is_terminal(self, s: tuple[int, int]) -> bool:
        return self.terminal and s == (self.n, self.n)

    def action_kinds(self) -> list[str]:
        return ["Inc", "Reset"]

    def properties(self) -> list[Property]:
        props = [
            transition(
                "monotone", lambda s, a, t: sum(t) >= sum(s) or isinstance(a, Reset), "sum never drops"
            ),
            reachable("corner", lambda s: s == (self.n, self.n), "the far corner is reached"),
        ]
        if self.limit is not None:
            lim = self.limit
            props.append(always("sum_below_limit", lambda s: s[0] + s[1] < lim, f"a + b < {lim}"))
        return props


class LabelledGrid(Grid):
    """A Grid whose transitions carry coverage labels (``successors_labelled``): which
    counter moved and, on the diagonal, a ``diagonal`` label; ``("axis", "never")`` is
    declared but never hit."""

    def successors_labelled(
        self, s: tuple[int, int]
    ) -> Iterator[tuple[object, tuple[int, int], tuple[tuple[str, ...], ...]]]:
        for a, t in self.successors(s):
            labels: tuple[tuple[str, ...], ...] = (("axis", "a" if t[0] != s[0] else "b"),)
            if t[0] == t[1]:
                labels += (("diagonal", "entered"),)
            yield a, t, labels

    def coverage_labels(self) -> list[tuple[str, ...]]:
        return [("axis", "a"), ("axis", "b"), ("axis", "never")]


def labelled_grid(n: int = 2) -> LabelledGrid:
    """Factory for ``kafka-mc check --system tests.toys:labelled_grid``."""
    return LabelledGrid(n)


def grid(n: int = 3, terminal: bool = True, reset: bool = False, limit: int | None = None) -> Grid:
    """Factory for ``kafka-mc check --system tests.toys:grid --set n=4``."""
    return Grid(n, terminal, reset, limit)


def not_a_system() -> int:
    """A factory that returns something that is no TransitionSystem."""
    return 3


class Retransmit:
    """A message that may be lost and resent: delivered only under fairness.

    State (sent, delivered); ``fair=False`` declares no fair action, so stalling
    forever is a legal behaviour and ``delivered`` fails as a lasso.
    """

    def __init__(self, fair: bool = True):
        self.fair = fair

    def init_states(self) -> list[tuple[bool, bool]]:
        return [(False, False)]

    def successors(self, s: tuple[bool, bool]) -> list[tuple[str, tuple[bool, bool]]]:
        sent, delivered = s
        if delivered:
            return []
        if not sent:
            return [("send", (True, False)), ("stall", s)]
        return [("deliver", (True, True)), ("lose", (True, False))]

    def is_terminal(self, s: tuple[bool, bool]) -> bool:
        return s[1]

    def fair_action_kinds(self) -> list[str]:
        return ["str"] if self.fair else []

    def properties(self) -> list[Property]:
        from explorer.core import eventually

        return [eventually("delivered", lambda s: s[1], "the message is eventually delivered")]


class Requests:
    """A client's requests to a server that may poll instead of serving: ``served`` (leads-to:
    a pending request is eventually served) holds when the server's steps are weakly fair and
    fails as a lasso (a request, then polls forever) when none is.

    State (pending, served so far, at most 2).
    """

    def __init__(self, fair: bool = True):
        self.fair = fair

    def init_states(self) -> list[tuple[bool, int]]:
        return [(False, 0)]

    def successors(self, s: tuple[bool, int]) -> list[tuple[str, tuple[bool, int]]]:
        pending, n = s
        if pending:
            return [("serve", (False, n + 1)), ("poll", s)]
        return [("request", (True, n))] if n < 2 else [("idle", s)]

    def fair_action_kinds(self) -> list[str]:
        return ["str"] if self.fair else []

    def properties(self) -> list[Property]:
        from explorer.core import leads_to

        return [
            leads_to("served", lambda s: s[0], lambda s: not s[0], "a pending request is eventually served")
        ]


def requests(fair: bool = True) -> Requests:
    """Factory for ``kafka-mc check --system tests.toys:requests --set fair=false``."""
    return Requests(fair)


def retransmit(fair: bool = True) -> Retransmit:
    """Factory for ``kafka-mc check --system tests.toys:retransmit --set fair=false``."""
    return Retransmit(fair)


class Light(NamedTuple):
    """The traffic light's state: its colour and how many cars crossed on red."""

    colour: str
    ran_red: int


class Switch(NamedTuple):
    """The light changes colour."""

    to: str

    def __str__(self) -> str:
        return f"the light turns {self.to}"


class Cross(NamedTuple):
    """A car crosses (on red when it should not)."""

    def __str__(self) -> str:
        return "a car crosses"


class TrafficLight:
    """A light cycling Red -> Green -> Amber -> Red, where a car may cross on any colour (at most
    ``cars`` times on red): a model of its own that draws its own report (``report_layout``):
    the ``light`` state machine under the title ``TrafficLight`` with given positions, a
    ``crossings`` table, step-table columns per field of the state."""

    CYCLE: ClassVar[dict[str, str]] = {"Red": "Green", "Green": "Amber", "Amber": "Red"}

    def __init__(self, cars: int = 1) -> None:
        self.cars = cars

    def init_states(self) -> list[Light]:
        return [Light("Red", 0)]

    def successors_labelled(self, s: Light) -> Iterator[tuple[object, Light, tuple[tuple[str, ...], ...]]]:
        to = self.CYCLE[s.colour]
        yield Switch(to), s._replace(colour=to), (("state_machines", "light", f"{s.colour}->{to}"),)
        if s.ran_red < self.cars or s.colour != "Red":
            red = s.colour == "Red"
            t = s._replace(ran_red=s.ran_red + red)
            yield Cross(), t, (("crossings", s.colour, "on red" if red else "allowed"),)

    def successors(self, s: Light) -> Iterator[tuple[object, Light]]:
        for a, t, _ in self.successors_labelled(s):
            yield a, t

    def coverage_labels(self) -> list[tuple[str, ...]]:
        return [("state_machines", "light", f"{a}->{b}") for a, b in self.CYCLE.items()]

    def sequence_arrow(self, a: object) -> tuple[str, str, str]:
        return ("car", "light", str(a)) if isinstance(a, Cross) else ("light", "light", str(a))

    def properties(self) -> list[Property]:
        return [always("nobody_runs_red", lambda s: s.ran_red == 0, "no car crosses on red")]

    def report_layout(self) -> dict[str, object]:
        return {
            "heading": "Traffic light coverage",
            "state_machines": {
                "light": {"title": "TrafficLight", "positions": {"Red": [100, 60], "Green": [400, 60], "Amber": [250, 220]}}
            },
            "tables": [
                {"section": "crossings", "title": "Crossings per colour", "row": "colour",
                 "columns": [["allowed", "allowed"], ["on red", "on red"]], "missing": "0"}
            ],
            "actors": [[r"(?=ran_red)", "the cars"], [r"(?=colour)", "the light"]],
        }  # fmt: skip


def traffic_light(cars: int = 1) -> TrafficLight:
    """Factory for ``kafka-mc check --system tests.toys:traffic_light``."""
    return TrafficLight(cars)
