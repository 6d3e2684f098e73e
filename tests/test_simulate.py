"""The simulate engine on tiny hand-made systems: determinism, traces, faults, budgets."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import NamedTuple

import pytest

from explorer.cli import main as cli_main
from explorer.core import ExitReason, always, reachable, transition
from explorer.encoding import fingerprint
from explorer.engines.simulate import (
    SimulationProgress,
    check_simulate,
    parse_probability,
    parse_weight,
)
from explorer.search import cut_cycles
from explorer.tracefile import replay_steps, trace_document, write_json_atomic
from tests.toys import Grid

ROOT = Path(__file__).resolve().parents[1]


class Work(NamedTuple):
    def __str__(self) -> str:
        return "worker makes progress"


class Crash(NamedTuple):
    def __str__(self) -> str:
        return "worker crashes and restarts"


class Flaky:
    """A worker that must make ``n`` steps of progress; it may crash (back to 0) up to
    ``crashes`` times. State ``(progress, crashes)``; done at progress ``n``."""

    def __init__(self, n: int = 4, crashes: int = 3):
        self.n, self.crashes = n, crashes

    def init_states(self) -> list[tuple[int, int]]:
        return [(0, 0)]

    def successors(self, s: tuple[int, int]) -> list[tuple[object, tuple[int, int]]]:
        p, c = s
        if p == self.n:
            return []
        out: list[tuple[object, tuple[int, int]]] = [(Work(), (p + 1, c))]
        if c < self.crashes:
            out.append((Crash(), (0, c + 1)))
        return out

    def is_terminal(self, s: tuple[int, int]) -> bool:
        return s[0] == self.n

    def action_kinds(self) -> list[str]:
        return ["Work", "Crash"]


AT_MOST_ONE_CRASH = always("at_most_one_crash", lambda s: s[1] < 2, "the worker crashes at most once")


def _sig(r: object) -> object:
    d = r.to_json()  # type: ignore[attr-defined]
    for k in ("seconds", "states_per_second"):
        d.pop(k)
    d["coverage"]["simulate"].pop("steps_per_second")
    return d


def test_same_seed_same_walks_and_other_seeds_differ() -> None:
    g = Grid(6, limit=9)
    runs = [check_simulate(g, g.properties(), seed=s, walks=30, depth=20, keep_going=True) for s in (5, 5, 6)]
    assert _sig(runs[0]) == _sig(runs[1])
    assert _sig(runs[0]) != _sig(runs[2])


def test_same_seed_same_walks_in_other_processes() -> None:
    code = (
        "import json\n"
        "from explorer.engines.simulate import check_simulate\n"
        "from tests.toys import Grid\n"
        "g = Grid(6, limit=9)\n"
        "r = check_simulate(g, g.properties(), seed=11, walks=40, depth=20, keep_going=True)\n"
        "print(json.dumps([r.distinct_states, r.generated_states,"
        " [[s.fingerprint for s in v.trace] for v in r.violations], r.coverage['taken']]))\n"
    )
    outs = set()
    for hashseed in ("0", "4242"):
        p = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={"PYTHONHASHSEED": hashseed, "PYTHONPATH": str(ROOT)},
        )
        outs.add(p.stdout.strip())
    g = Grid(6, limit=9)
    r = check_simulate(g, g.properties(), seed=11, walks=40, depth=20, keep_going=True)
    here = json.dumps(
        [
            r.distinct_states,
            r.generated_states,
            [[s.fingerprint for s in v.trace] for v in r.violations],
            r.coverage["taken"],
        ]
    )
    assert outs == {here}


def test_violation_trace_is_bfs_format_and_replays() -> None:
    g = Grid(4, limit=5)
    r = check_simulate(g, g.properties(), seed=3, walks=50, depth=20)
    assert r.engine == "simulate" and r.exit_reason is ExitReason.VIOLATION and r.exit_code == 1
    (v,) = r.violations
    assert v.property == "sum_below_limit" and v.length == 5  # a walk on the grid has no cycle
    first, last = v.trace[0], v.trace[-1]
    assert (first.index, first.action, first.action_kind, first.changes) == (0, None, None, [])
    assert last.action_kind == "Inc" and sum(last.state) == 5
    assert last.fingerprint == f"{fingerprint(tuple(last.state)):016x}"
    states = replay_steps(g, [asdict(s) for s in v.trace])
    assert sum(states[-1]) == 5
    assert any("found in walk" in n and "seed 3" in n for n in r.notes)
    assert r.coverage["simulate"]["violating_walks"] == {"sum_below_limit": 1}


def test_cli_replays_a_simulated_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = Grid(4, limit=3)
    r = check_simulate(g, g.properties(), seed=1, walks=10, depth=20)
    path = tmp_path / "t.json"
    write_json_atomic(
        path, trace_document("tests.toys:grid", {"n": 4, "limit": 3}, r.violations[0], "tests.toys:grid")
    )
    assert cli_main(["replay", str(path), "--system", "tests.toys:grid"]) == 0
    assert "sum_below_limit: violation reproduced" in capsys.readouterr().out


def test_transition_violation_ends_with_the_bad_step() -> None:
    g = Grid(2, reset=True)
    bad = transition("no_drop", lambda s, a, t: sum(t) >= sum(s), "sum never drops")
    r = check_simulate(g, [bad], seed=0, walks=20, depth=20)
    (v,) = r.violations
    assert v.length == 5 and v.trace[-1].action == "both counters reset" and v.trace[-1].state == [0, 0]
    assert replay_steps(g, [asdict(s) for s in v.trace])[-1] == (0, 0)


def test_cycles_are_cut_from_traces() -> None:
    g = Grid(2, reset=True)
    p = always("not_both_one", lambda s: s != (1, 1), "")
    raw = check_simulate(g, [p], seed=4, walks=50, depth=40, cut_loops=False)
    cut = check_simulate(g, [p], seed=4, walks=50, depth=40)
    assert cut.violations[0].length == 2
    assert raw.violations[0].length >= cut.violations[0].length
    assert cut_cycles([0, 1, 0, 1, 2], ["a", "b", "a", "c"]) == ([0, 1, 2], ["a", "c"])


def test_deadlock_unless_terminal_or_disabled() -> None:
    r = check_simulate(Grid(2, terminal=False), [], seed=0, walks=3)
    assert [v.property for v in r.violations] == ["deadlock"] and r.violations[0].length == 4
    assert r.violations[0].trace[-1].state == [2, 2]
    assert check_simulate(Grid(2), [], seed=0, walks=3).violations == []
    assert check_simulate(Grid(2, terminal=False), [], seed=0, walks=3, deadlock=False).violations == []


def test_without_violation_the_budget_is_reported_never_success() -> None:
    g = Grid(3)
    r = check_simulate(g, g.properties(), seed=0, walks=7, depth=4)
    assert r.exit_reason is ExitReason.BUDGET_EXHAUSTED and r.budget == "walks" and r.exit_code == 3
    assert r.properties["monotone"]["status"] == "unknown"
    assert r.properties["deadlock"]["status"] == "unknown"
    assert r.generated_states == 7 * 4 and r.max_depth == 4
    assert r.coverage["simulate"]["walks_run"] == 7
    assert [lv.frontier for lv in r.levels] == [7] * 5
    assert sum(lv.new_states for lv in r.levels) == r.distinct_states
    assert "never shows that a property holds" in r.notes[0]
    json.dumps(r.to_json())


def test_max_seconds_budget() -> None:
    g = Grid(50)
    r = check_simulate(g, g.properties(), seed=0, walks=10**6, depth=100, max_seconds=0.05)
    assert r.exit_reason is ExitReason.BUDGET_EXHAUSTED and r.budget == "max_seconds"
    assert r.coverage["simulate"]["walks_run"] < 10**6


def test_witnesses_and_coverage() -> None:
    g = Grid(2)
    r = check_simulate(g, g.properties(), seed=2, walks=5, depth=10)
    assert r.properties["corner"]["status"] == "witnessed" and r.witnesses == {"corner": 4}
    assert r.coverage["never_enabled"] == ["Reset"]
    assert r.coverage["taken"] == {"Inc": 20}
    assert r.coverage["actions"]["Inc"]["new_states"] == r.distinct_states - 1
    unreached = check_simulate(g, [reachable("far", lambda s: s == (9, 9), "")], seed=0, walks=2)
    assert unreached.properties["far"]["status"] == "unknown" and unreached.violations == []


def test_keep_going_collects_every_violated_property() -> None:
    g = Grid(3, terminal=False, limit=2)
    first = check_simulate(g, g.properties(), seed=0, walks=20)
    assert [v.property for v in first.violations] == ["sum_below_limit"]
    every = check_simulate(g, g.properties(), seed=0, walks=20, keep_going=True)
    assert sorted(v.property for v in every.violations) == ["deadlock", "sum_below_limit"]
    assert every.coverage["simulate"]["walks_run"] == 20


def test_fault_probabilities_control_fault_sites() -> None:
    f = Flaky()
    never = check_simulate(f, [AT_MOST_ONE_CRASH], seed=0, walks=200, fault_probabilities={"Crash": 0.0})
    assert never.violations == [] and never.coverage["taken"] == {"Work": 800}
    assert never.coverage["simulate"]["faults"]["Crash"]["taken"] == 0
    assert never.coverage["simulate"]["faults"]["Crash"]["offered"] == 800
    always_crash = check_simulate(f, [AT_MOST_ONE_CRASH], seed=0, walks=5, fault_probabilities={"Crash": 1.0})
    (v,) = always_crash.violations
    assert [s.action_kind for s in v.trace[1:]] == ["Crash", "Crash"]
    assert (
        "faults taken: step 1: worker crashes and restarts; step 2: worker crashes" in always_crash.notes[1]
    )


def test_only_faults_enabled_a_fault_is_forced() -> None:
    class OnlyCrash(Flaky):
        def successors(self, s: tuple[int, int]) -> list[tuple[object, tuple[int, int]]]:
            return [(Crash(), (0, s[1] + 1))] if s[1] < 2 else []

        def is_terminal(self, s: tuple[int, int]) -> bool:
            return s[1] == 2

    r = check_simulate(OnlyCrash(), [], seed=0, walks=1, fault_probabilities={"Crash": 0.0})
    assert r.coverage["simulate"]["faults"]["Crash"] == {
        "probability": 0.0,
        "offered": 2,
        "taken": 2,
        "forced": 2,
    }


def test_weights_bias_and_zero_weight_never_chosen() -> None:
    f = Flaky(n=3, crashes=1)
    heavy = check_simulate(f, [], seed=1, walks=200, weights={"Crash": 50.0})
    light = check_simulate(f, [], seed=1, walks=200, weights={"Crash": 0.02})
    assert heavy.coverage["taken"]["Crash"] > 150 > light.coverage["taken"].get("Crash", 0)
    none = check_simulate(f, [], seed=1, walks=50, weights={"Crash": 0})
    assert "Crash" not in none.coverage["taken"]
    # all-ones weights choose exactly as no weights at all
    g = Grid(5, limit=7)
    assert (
        _sig(check_simulate(g, g.properties(), seed=9, walks=20, weights={"Inc": 1.0}))["violations"]
        == _sig(check_simulate(g, g.properties(), seed=9, walks=20))["violations"]
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weights": {"Nope": 1.0}}, "weights: unknown action kind 'Nope'"),
        ({"weights": {"Work": -1.0}}, "weight of Work: must be at least 0"),
        ({"fault_probabilities": {"Crash": 1.5}}, "probability of Crash: at most 1"),
        ({"walks": 0}, "walks: a positive whole number, got 0"),
        ({"seed": "x"}, "seed: expected an integer"),
        ({"max_seconds": 0}, "max_seconds: must be positive"),
        ({"walk": 3}, "simulate engine option 'walk': unknown (did you mean 'walks'?)"),
        ({"max_depth": 3}, "--max-depth applies to exhaustive engines, not to --engine simulate"),
        ({"workers": 2}, "--workers applies to --engine bfs only, not to --engine simulate"),
    ],
)
def test_bad_options_are_one_line_errors(kwargs: dict[str, object], message: str) -> None:
    """One options type checks them, the same whether check_simulate or check was called."""
    from explorer.api import CheckOptions, check

    for go in (
        lambda: check_simulate(Flaky(), [], **kwargs),
        lambda: check(Flaky(), [], CheckOptions.of("simulate", kwargs)),
    ):
        with pytest.raises(ValueError) as e:
            go()
        assert str(e.value).startswith(message), str(e.value)


def test_option_parsers() -> None:
    assert parse_weight("Crash=2") == ("Crash", 2.0)
    assert parse_probability("Crash=0.25") == ("Crash", 0.25)
    for bad, fn in (("Crash", parse_weight), ("Crash=-1", parse_weight), ("Crash=2", parse_probability)):
        with pytest.raises(ValueError, match="Crash"):
            fn(bad)
    with pytest.raises(ValueError, match="not a number"):
        parse_weight("Crash=lots")


def test_progress_line_only_when_enabled() -> None:
    out = io.StringIO()
    g = Grid(40)
    check_simulate(
        g, [], seed=0, walks=50, depth=60, progress=SimulationProgress(out, force=True, interval=0)
    )
    text = out.getvalue()
    assert "walk " in text and "steps/s" in text and text.endswith("\r")
    quiet = io.StringIO()
    check_simulate(g, [], seed=0, walks=5, progress=SimulationProgress(quiet))
    assert quiet.getvalue() == ""


def test_swarm_walks_are_seeded_and_reach_lopsided_schedules() -> None:
    f = Flaky(n=6, crashes=4)
    four = always("under_four_crashes", lambda s: s[1] < 4, "")
    a = check_simulate(f, [four], seed=4, walks=100, swarm=True, keep_going=True)
    b = check_simulate(f, [four], seed=4, walks=100, swarm=True, keep_going=True)
    assert _sig(a) == _sig(b) and a.coverage["simulate"]["swarm"] is True and "(swarm)" in a.notes[0]
    # four crashes in a row are rare when crashes weigh 0.01; some swarm walks favour them
    uniform = [check_simulate(f, [four], seed=s, walks=100, weights={"Crash": 0.01}) for s in range(5)]
    swarm = [
        check_simulate(f, [four], seed=s, walks=100, weights={"Crash": 0.01}, swarm=True) for s in range(5)
    ]
    assert not any(r.violations for r in uniform) and all(r.violations for r in swarm)
