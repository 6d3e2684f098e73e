"""The multi-process bfs (explorer/pbfs.py) gives the same CheckResult as the serial bfs."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
from collections.abc import Sequence
from typing import Any

import pytest

from explorer.cli import main
from explorer.config import load_config
from explorer.core import CheckResult, ExitReason, always, transition
from explorer.engines.bfs import check_bfs
from explorer.engines.pbfs import PbfsStats, check_pbfs
from explorer.frontend import model_spec
from tests.toys import Grid, LabelledGrid, Retransmit


def comparable(r: CheckResult) -> dict[str, Any]:
    """Everything of a result but timings and notes."""
    d = dataclasses.asdict(r)
    for k in ("seconds", "states_per_second", "notes"):
        d.pop(k)
    for lv in d["levels"]:
        lv.pop("seconds")
    return d


def same(
    system: Any, props: list[Any], workers: int = 2, serial_below: int = 2, batch: int = 512, **kw: Any
) -> CheckResult:
    """Run both engines, assert equal results, return the serial one."""
    a = check_bfs(system, props, **kw)
    st = PbfsStats()
    b = check_pbfs(system, props, workers=workers, serial_below=serial_below, batch=batch, stats=st, **kw)
    assert comparable(b) == comparable(a)
    assert any("collision odds" in n for n in b.notes)
    assert multiprocessing.active_children() == []  # no orphan workers
    return a


def build(model: str, path: str | None, overrides: Sequence[str] = ()) -> tuple[Any, list[Any]]:
    spec = model_spec(model)
    c = load_config(spec.config_cls, path, list(overrides))
    return spec.build(c), list(spec.properties(c))


# -- toys --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "system",
    [Grid(3), Grid(6), Grid(4, limit=5), Grid(5, terminal=False), Grid(4, reset=True), LabelledGrid(6)],
    ids=["grid3", "grid6", "limit", "deadlock", "reset", "labelled"],
)
@pytest.mark.parametrize("keep_going", [False, True])
def test_toys_equal_bfs(system: Grid, keep_going: bool) -> None:
    same(system, system.properties(), keep_going=keep_going)


def test_three_workers_and_in_driver_only() -> None:
    g = LabelledGrid(8, limit=12)
    same(g, g.properties(), workers=3, keep_going=True)
    same(g, g.properties(), serial_below=10_000)  # never forks


@pytest.mark.parametrize("max_states", [1, 5, 17, 30, 44])
@pytest.mark.parametrize("batch", [1, 3, 512])
def test_max_states_cut_mid_level(max_states: int, batch: int) -> None:
    g = LabelledGrid(8)
    r = same(g, g.properties(), max_states=max_states, batch=batch)
    assert r.budget == "max_states"


def test_max_depth() -> None:
    g = Grid(6)
    assert same(g, g.properties(), max_depth=4).budget == "max_depth"


def test_several_properties_same_parent_and_vacuity() -> None:
    g = Grid(6)
    props = [
        *g.properties(),
        always("a_small", lambda s: s[0] < 4, "a < 4", applies=lambda s: s[1] > 2),
        transition("b_step", lambda s, a, t: t[1] < 5, "b < 5", applies=lambda s, a, t: t[0] > 1),
        always("never_applies", lambda s: True, "vacuous", applies=lambda s: s[0] > 100),
    ]
    for kg in (False, True):
        same(g, props, keep_going=kg)
        same(g, props, keep_going=kg, max_states=12)


def test_initial_state_violation() -> None:
    g = Grid(3)
    same(g, [always("never", lambda s: False, "fails at once")])


def test_liveness_is_decided_by_the_workers() -> None:
    s = Retransmit(fair=False)
    r = check_pbfs(s, s.properties(), workers=2, serial_below=1)
    assert [v.property for v in r.violations] == ["delivered"]
    assert not any("serial bfs" in n for n in r.notes)  # no fall-back to one process


def test_bad_workers() -> None:
    with pytest.raises(ValueError):
        check_pbfs(Grid(2), [], workers=0)


# -- models ------------------------------------------------------------------------------------------

SMALL_CONFIGS = [
    ("controller", "configs/controller-small.toml", []),
    ("controller", "configs/controller-small.toml", ["max_session_expiries=1"]),
    ("purgatory", "configs/purgatory-small.toml", []),
    ("timing-wheel", "configs/timing-wheel-small.toml", []),
    ("simple-timing-wheel", "configs/simple-timing-wheel-small.toml", []),
]


@pytest.mark.slow  # 3.1 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("model, path, overrides", SMALL_CONFIGS)
def test_small_configs_equal_bfs(model: str, path: str, overrides: list[str]) -> None:
    system, props = build(model, path, overrides)
    same(system, props, keep_going=True, serial_below=8)


@pytest.mark.slow  # 5.2 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize(
    "mutant", ["no-epoch-bump", "epoch-reset", "no-leader-epoch-bump", "skip-replica-init"]
)
def test_controller_mutant_stops_at_first_violation(mutant: str) -> None:
    system, props = build(
        "controller", "configs/controller-small.toml", [f"mutant={mutant}", "max_session_expiries=1"]
    )
    r = same(system, props, serial_below=8)
    assert r.exit_reason is ExitReason.VIOLATION and r.violations
    same(system, props, serial_below=8, keep_going=True)


def test_controller_ref_max_states_cut() -> None:
    system, props = build("controller", "configs/controller-ref.toml")
    r = same(system, props, max_states=3_000, serial_below=50)
    assert r.budget == "max_states" and r.levels[-1].new_states < r.levels[-2].new_states * 10


# -- packed states (the workers' frontier and candidates as statepack blobs) ----------------------


@pytest.mark.parametrize("batch", [1, 3, 512])
@pytest.mark.parametrize("max_states", [None, 17, 44])
def test_packed_workers_equal_bfs(batch: int, max_states: int | None) -> None:
    # blobs of one state, of a few, of a whole level; levels cut mid-way; coverage labels
    g = LabelledGrid(8, limit=12)
    st = PbfsStats()
    a = check_bfs(g, g.properties(), keep_going=True, max_states=max_states)
    b = check_pbfs(
        g,
        g.properties(),
        workers=2,
        serial_below=2,
        batch=batch,
        visited="fingerprints",
        pack=True,
        keep_going=True,
        max_states=max_states,
        stats=st,
    )
    assert st.packed and comparable(b) == comparable(a)


@pytest.mark.slow  # 1.7 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("model, path, overrides", SMALL_CONFIGS[:2])
def test_packed_workers_equal_bfs_on_the_controller(model: str, path: str, overrides: list[str]) -> None:
    system, props = build(model, path, overrides)
    a = check_bfs(system, props, keep_going=True)
    b = check_pbfs(
        system, props, workers=2, serial_below=8, batch=64, visited="fingerprints", pack=True, keep_going=True
    )
    assert comparable(b) == comparable(a)


def test_packing_is_the_default_with_fingerprints_only() -> None:
    from explorer.search import statepack

    g = Grid(4)
    for visited, packed in (("fingerprints", statepack.ACTIVE), ("states", False)):
        st = PbfsStats()
        check_pbfs(g, g.properties(), workers=2, serial_below=2, visited=visited, stats=st)
        assert st.packed is packed


# -- CLI ---------------------------------------------------------------------------------------------


def test_cli_workers(tmp_path: Any) -> None:
    out = tmp_path / "r.json"
    code = main(
        [
            "check",
            "--system",
            "tests.toys:grid",
            "--set",
            "n=4",
            "--workers",
            "2",
            "--quiet",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    assert '"distinct_states": 25' in out.read_text()


@pytest.mark.parametrize("value", ["0", "abc", "-1"])
def test_cli_bad_workers(value: str, capsys: Any) -> None:
    assert main(["check", "--system", "tests.toys:grid", "--workers", value, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kafka-mc: error:") and "--workers" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--worker-states", "packed"],  # serial
        ["--workers", "2", "--worker-states", "objects"],  # without fingerprints
        ["--engine", "simulate", "--worker-states", "packed"],
    ],
)
def test_cli_worker_states_misuse(args: list[str], capsys: Any) -> None:
    assert main(["check", "--system", "tests.toys:grid", *args, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kafka-mc: error:") and "--worker-states" in err and err.count("\n") == 1


def test_cli_worker_states_same_result(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from explorer.engines.pbfs import SERIAL_BELOW_ENV

    monkeypatch.setenv(SERIAL_BELOW_ENV, "4")  # fork the workers early
    texts = []
    for how in ("packed", "objects"):
        out = tmp_path / f"{how}.json"
        argv = ["check", "--system", "tests.toys:grid", "--set", "n=9", "--workers", "2"]
        argv += ["--visited", "fingerprints", "--worker-states", how, "--quiet", "--json", str(out)]
        assert main(argv) == 0
        d = json.loads(out.read_text())
        for k in ("seconds", "states_per_second", "notes"):
            d.pop(k)
        for lv in d["levels"]:
            lv.pop("seconds")
        texts.append(d)
    assert texts[0] == texts[1] and texts[0]["distinct_states"] == 100


def test_cli_workers_other_engine(capsys: Any) -> None:
    assert main(["check", "--system", "tests.toys:grid", "--engine", "simulate", "--workers", "2"]) == 2


# -- slow --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_controller_admin_equal_bfs() -> None:
    system, props = build("controller", "configs/controller-admin.toml", ["liveness=false"])
    st = PbfsStats()
    a = check_bfs(system, props, keep_going=True)
    b = check_pbfs(system, props, workers=2, keep_going=True, stats=st, serial_below=100)
    assert comparable(b) == comparable(a)
    assert st.forked_at_depth is not None and min(st.parents) > 0


# -- failures, interrupts, time budget ---------------------------------------------------------------


class Boom(Grid):
    """A Grid whose successor function fails on one state (in whichever worker owns it)."""

    def successors(self, s: tuple[int, int]) -> Any:
        if s == (3, 2):
            raise ZeroDivisionError("model bug")
        return super().successors(s)


def test_worker_exception_is_raised_and_workers_end() -> None:
    g = Boom(6)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        check_pbfs(g, g.properties(), workers=2, serial_below=2)
    assert multiprocessing.active_children() == []


class Ticks:
    """A clock that advances one second per call and can raise Ctrl-C at a given call."""

    def __init__(self, interrupt_at: int | None = None):
        self.n, self.interrupt_at = 0, interrupt_at

    def __call__(self) -> float:
        self.n += 1
        if self.n == self.interrupt_at:
            raise KeyboardInterrupt
        return float(self.n)


def test_interrupt_ends_workers() -> None:
    g = LabelledGrid(40)
    r = check_pbfs(g, g.properties(), workers=2, serial_below=2, batch=1, clock=Ticks(interrupt_at=60))
    assert r.exit_reason is ExitReason.INTERRUPTED
    assert multiprocessing.active_children() == []


def test_max_seconds_consistent() -> None:
    g = LabelledGrid(40)
    r = check_pbfs(g, g.properties(), workers=2, serial_below=2, batch=4, max_seconds=60, clock=Ticks())
    assert r.exit_reason is ExitReason.BUDGET_EXHAUSTED and r.budget == "max_seconds"
    assert r.distinct_states == sum(lv.new_states for lv in r.levels) < 41 * 41
    assert r.coverage["actions"]["Inc"]["new_states"] == r.distinct_states - 1
    assert r.coverage["actions"]["Inc"]["enabled"] == r.generated_states - 1
    labels = r.coverage["labels"]["axis"]
    assert labels["a"] + labels["b"] == r.generated_states - 1
    assert multiprocessing.active_children() == []
