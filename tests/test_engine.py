"""The bfs engine on tiny hand-made systems: counts, traces, deadlock, budgets."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from explorer.core import ExitReason, always, reachable, transition
from explorer.encoding import EncodingError, encode, fingerprint
from explorer.engines.bfs import check_bfs
from tests.toys import Grid, Retransmit


def test_counts_and_levels() -> None:
    g = Grid(3)
    r = check_bfs(g, g.properties())
    assert r.exit_reason is ExitReason.COMPLETE and r.exit_code == 0
    assert r.distinct_states == 16
    assert r.generated_states == 1 + 2 * 3 * 4  # one initial + every edge of the 4x4 grid
    assert r.max_depth == 6
    assert [lv.new_states for lv in r.levels] == [1, 2, 3, 4, 3, 2, 1]
    assert r.properties["monotone"]["status"] == "held"
    assert r.properties["corner"]["status"] == "witnessed"
    assert r.witnesses == {"corner": 6}


def test_shortest_counterexample_with_changes() -> None:
    g = Grid(3, limit=3)
    r = check_bfs(g, g.properties())
    assert r.exit_reason is ExitReason.VIOLATION and r.exit_code == 1
    (v,) = r.violations
    assert v.property == "sum_below_limit" and v.length == 3
    assert [s.action for s in v.trace] == [
        None,
        "counter 0 increments",
        "counter 0 increments",
        "counter 0 increments",
    ]
    assert v.trace[1].changes == ["[0]: 0 -> 1"]
    assert v.trace[-1].state == [3, 0]
    assert v.trace[-1].fingerprint == f"{fingerprint((3, 0)):016x}"


def test_transition_property_trace_ends_with_the_bad_step() -> None:
    g = Grid(2, reset=True)
    bad = transition("no_drop", lambda s, a, t: sum(t) >= sum(s), "sum never drops")
    r = check_bfs(g, [bad])
    (v,) = r.violations
    assert v.length == 5  # four increments to (2, 2), then the reset
    assert v.trace[-1].action == "both counters reset"
    assert v.trace[-1].state == [0, 0]


def test_deadlock_detected_unless_terminal_or_disabled() -> None:
    r = check_bfs(Grid(2, terminal=False), [])
    assert [v.property for v in r.violations] == ["deadlock"]
    assert r.violations[0].length == 4
    assert check_bfs(Grid(2, terminal=True), []).exit_code == 0
    assert check_bfs(Grid(2, terminal=False), [], deadlock=False).exit_code == 0


def test_continue_collects_every_violated_property() -> None:
    g = Grid(3, terminal=False, limit=2)
    first = check_bfs(g, g.properties())
    assert [v.property for v in first.violations] == ["sum_below_limit"]
    every = check_bfs(g, g.properties(), keep_going=True)
    assert sorted(v.property for v in every.violations) == ["deadlock", "sum_below_limit"]
    assert every.distinct_states == 16


def test_unreached_witness_fails_a_complete_search() -> None:
    r = check_bfs(Grid(2), [reachable("never", lambda s: s == (9, 9), "impossible")])
    assert r.exit_code == 1
    assert r.properties["never"]["status"] == "unreached"
    assert r.violations[0].trace == []


@pytest.mark.parametrize(
    ("kwargs", "budget"),
    [
        ({"max_depth": 2}, "max_depth"),
        ({"max_states": 5}, "max_states"),
        ({"max_seconds": 1e-9}, "max_seconds"),
    ],
)
def test_budgets_end_with_explicit_reason(kwargs: dict[str, float], budget: str) -> None:
    r = check_bfs(Grid(30), [always("t", lambda s: True, "true")], **kwargs)  # type: ignore[arg-type]
    assert r.exit_reason is ExitReason.BUDGET_EXHAUSTED and r.budget == budget
    assert r.exit_code == 3
    assert r.properties["t"]["status"] == "unknown"
    assert r.distinct_states < 31 * 31


def test_violation_found_within_budget_still_reported() -> None:
    r = check_bfs(Grid(30, limit=2), [always("small", lambda s: sum(s) < 2, "")], max_depth=5)
    assert r.exit_code == 1 and r.violations[0].length == 2


def test_coverage_counts_and_never_enabled() -> None:
    r = check_bfs(Grid(2), [])
    assert r.coverage["actions"] == {"Inc": {"enabled": 12, "new_states": 8}}
    assert r.coverage["never_enabled"] == ["Reset"]


def test_vacuity_counted_with_applies() -> None:
    p = always("x", lambda s: True, "", applies=lambda s: s[0] > 5)
    r = check_bfs(Grid(2), [p])
    assert r.properties["x"]["vacuous"] is True and r.properties["x"]["non_vacuous"] is False


def test_result_is_json_serialisable() -> None:
    g = Grid(2, limit=1)
    doc = check_bfs(g, g.properties()).to_json()
    text = json.dumps(doc)
    back = json.loads(text)
    for k in (
        "model",
        "config",
        "engine",
        "exit_reason",
        "distinct_states",
        "generated_states",
        "max_depth",
        "seconds",
        "states_per_second",
        "violations",
        "coverage",
    ):
        assert k in back
    assert back["violations"][0]["trace"][0]["action"] is None


def test_fingerprint_identical_across_processes() -> None:
    from enum import IntEnum

    class Colour(IntEnum):
        RED = 1

    value = (1, -5, None, True, (2**70, (Colour.RED,)))
    here = fingerprint(value)
    code = (
        "from enum import IntEnum\n"
        "from explorer.encoding import fingerprint\n"
        "class Colour(IntEnum):\n    RED = 1\n"
        "print(fingerprint((1, -5, None, True, (2**70, (Colour.RED,)))))"
    )
    for seed in ("0", "12345"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={"PYTHONHASHSEED": seed},
            check=True,
        )
        assert int(out.stdout) == here


def test_encoding_distinguishes_shapes_and_rejects_unstable_values() -> None:
    assert encode((1, 2)) != encode(((1,), 2)) != encode((1, (2,)))
    assert encode(None) != encode(0)
    # values Python treats as equal (so bfs merges them) must encode equally
    from enum import IntEnum

    class Level(IntEnum):
        ONE = 1

    for a, b in [(True, 1), (False, 0), (Level.ONE, 1), ((True, Level.ONE), (1, 1))]:
        assert a == b and encode(a) == encode(b)
    for bad in ({1: 2}, {1}, [1], 1.5):
        with pytest.raises(EncodingError):
            encode(bad)


def test_eventually_holds_under_fairness_and_fails_without() -> None:
    from explorer.core import eventually

    goal = eventually("delivered", lambda s: s[1], "the message is delivered", fairness=["str"])
    r = check_bfs(Retransmit(), [goal])
    assert r.exit_code == 0 and r.properties["delivered"]["status"] == "held"

    unfair = eventually("delivered", lambda s: s[1], "", fairness=[])
    r = check_bfs(Retransmit(), [unfair])
    (v,) = r.violations
    assert v.kind == "eventually" and v.loop_start == 0
    assert [st.action for st in v.trace] == [None, "stall"]  # stalling forever is allowed without fairness


def test_leads_to_lasso_is_fair() -> None:
    from explorer.core import eventually

    class Spin(Retransmit):
        def successors(self, s: tuple[bool, bool]) -> list[tuple[str, tuple[bool, bool]]]:
            sent, delivered = s
            if delivered:
                return []
            if not sent:
                return [("send", (True, False))]
            return [("lose", (False, False)), ("retry", (True, False))]

    p = eventually("delivered", lambda s: s[1], "", trigger=lambda s: s[0], fairness=["str"])
    r = check_bfs(Spin(), [p])
    (v,) = r.violations
    # from the first sent state the loop Lose/Send (and Retry) never delivers
    assert v.loop_start == 1
    assert v.trace[v.loop_start].fingerprint == v.trace[-1].fingerprint
    loop_actions = {st.action for st in v.trace[v.loop_start + 1 :]}
    assert {"lose", "send", "retry"} <= loop_actions  # weak fairness: every always-enabled action is taken


def test_leads_to_lasso_found_below_many_shallow_trigger_states() -> None:
    """The stuck cycle is reachable only from a trigger state deeper than 70 others.

    The lasso search used to try only the 64 shallowest trigger states and crashed.
    """
    from explorer.core import eventually

    class Fan:
        def init_states(self) -> list[tuple]:
            return [("root",)]

        def successors(self, s: tuple) -> list[tuple[str, tuple]]:
            if s == ("root",):
                return [("fan", ("t", i)) for i in range(70)] + [("down", ("deep",))]
            if s[0] == "t":
                return [("finish", ("goal",))]
            if s == ("deep",):
                return [("trip", ("deep2",))]
            if s in (("deep2",), ("loop",)):
                return [("spin", ("loop",))]
            return [("stay", s)]

        def is_terminal(self, s: tuple) -> bool:
            return True

    p = eventually("done", lambda s: s == ("goal",), "", trigger=lambda s: s[0] in ("t", "deep2"))
    r = check_bfs(Fan(), [p])
    (v,) = r.violations
    assert [st.action for st in v.trace] == [None, "down", "trip", "spin", "spin"]
    assert v.loop_start == 3


def test_eventually_ends_without_goal() -> None:
    from explorer.core import eventually

    r = check_bfs(Grid(2), [eventually("never", lambda s: s == (9, 9), "")])
    (v,) = r.violations
    assert v.loop_start is None and v.length == 4


def test_continue_reports_held_for_properties_that_held() -> None:
    g = Grid(3, terminal=False, limit=2)
    r = check_bfs(g, g.properties(), keep_going=True)
    assert r.properties["monotone"]["status"] == "held"
    assert r.properties["sum_below_limit"]["status"] == "violated"
    stopped = check_bfs(g, g.properties())
    assert stopped.properties["monotone"]["status"] == "unknown"


@pytest.mark.slow  # 1.1 CPU-s in a loaded default run (2026-11-29)
def test_collector_paused_during_search_and_restored_after() -> None:
    import gc

    seen: list[tuple[bool, int]] = []

    def probe(s: tuple[int, int]) -> bool:
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        return True

    assert gc.isenabled()
    check_bfs(Grid(3), [always("probe", probe, "")])
    # every state after the initial one is checked inside the search: paused, nothing frozen yet
    assert len(seen) == 16 and all(state == (False, 0) for state in seen[1:])
    assert gc.isenabled() and gc.get_freeze_count() == 0  # enabled again, everything unfrozen
    gc.disable()
    try:
        check_bfs(Grid(3), [always("probe", probe, "")])
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()
    gc.freeze()  # a caller's frozen objects stay frozen
    try:
        n = gc.get_freeze_count()
        check_bfs(Grid(3), [always("probe", probe, "")])
        assert gc.get_freeze_count() == n and n > 0
    finally:
        gc.unfreeze()
