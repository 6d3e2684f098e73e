"""The lean bfs (``--visited fingerprints``: explorer/search/visited.py FingerprintVisited in the serial loop) gives the CheckResult of
the serial bfs, field for field but timings and notes; and its parts (fingerprint table in C
and in pure Python, parent log, frontier on disk) behave as documented."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from explorer.core import CheckResult, ExitReason, always, transition
from explorer.engines.base import ModelError
from explorer.engines.bfs import FingerprintCollisionError, check_bfs, check_lean
from explorer.engines.pbfs import HashCollisionError, check_pbfs
from explorer.search.visited import (
    NO_PARENT,
    FingerprintTable,
    ParentLog,
    PyFingerprintTable,
    load_table,
    save_table,
    table_buffer,
)
from tests.test_pbfs import SMALL_CONFIGS, Boom, build, comparable
from tests.toys import Grid, LabelledGrid, Retransmit


def same(system: Any, props: list[Any], batch: int = 3, **kw: Any) -> CheckResult:
    """Run bfs and the lean bfs (a tiny frontier batch, so levels go to disk); assert equal results."""
    a = check_bfs(system, props, **kw)
    b = check_lean(system, props, frontier_batch=batch, **kw)
    assert comparable(b) == comparable(a)
    assert any("collision odds" in n for n in b.notes)
    return a


# -- the fingerprint table ---------------------------------------------------------------------------


def test_tables_agree_with_a_set_and_with_each_other() -> None:
    rng = random.Random(7)
    keys = [rng.getrandbits(64) for _ in range(3000)] + [0, 1, 2**64 - 1]
    keys += rng.sample(keys, 500)  # duplicates
    c, py, ref = FingerprintTable(8), PyFingerprintTable(8), set()
    for k in keys:
        new = (k or 1) not in ref
        ref.add(k or 1)  # 0 is stored as 1
        assert c.add(k) is new and py.add(k) is new
    assert len(c) == len(py) == len(ref) and c.capacity == py.capacity
    assert bytes(table_buffer(c)) == bytes(table_buffer(py))  # the very same layout
    assert all(k in c and k in py for k in keys)
    assert sum(k in c for k in (rng.getrandbits(64) for _ in range(1000))) <= 1
    assert 8 * c.capacity / len(c) <= 15.1  # at most 15 bytes per fingerprint once grown


def test_table_saved_and_loaded(tmp_path: Path) -> None:
    t = FingerprintTable(16)
    fps = [t.add_state((i, (i % 3, None))) for i in range(100)]
    assert None not in fps and t.add_state((5, (2, None))) is None
    save_table(t, tmp_path / "t.bin")
    u = load_table(tmp_path / "t.bin", t.capacity, len(t))
    v = PyFingerprintTable(t.capacity, (tmp_path / "t.bin").read_bytes(), len(t))
    for fp in fps:
        assert fp in u and fp in v
    assert u.add_state((200, None)) is not None and len(u) == 101


def test_parent_log_records_and_truncate(tmp_path: Path) -> None:
    log = ParentLog(tmp_path / "p.bin")
    for i in range(10):
        log.append(NO_PARENT if i == 0 else i - 1, i, 1000 + i)
        if i == 5:
            log.flush(sync=True)
    assert log.record(3) == (2, 3, 1003) and log.record(8) == (7, 8, 1008)  # file, then buffer
    log.flush()
    log.close()
    again = ParentLog(tmp_path / "p.bin", resume_count=6)
    assert again.count == 6 and again.record(5) == (4, 5, 1005)
    with pytest.raises(ValueError):
        ParentLog(tmp_path / "p.bin", resume_count=7)


# -- same result as bfs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "system",
    [Grid(3), Grid(6), Grid(4, limit=5), Grid(5, terminal=False), Grid(4, reset=True), LabelledGrid(6)],
    ids=["grid3", "grid6", "limit", "deadlock", "reset", "labelled"],
)
@pytest.mark.parametrize("keep_going", [False, True])
def test_toys_equal_bfs(system: Grid, keep_going: bool) -> None:
    same(system, system.properties(), keep_going=keep_going)


@pytest.mark.parametrize("max_states", [1, 5, 17, 44])
def test_max_states_and_depth_cuts(max_states: int) -> None:
    g = LabelledGrid(8)
    assert same(g, g.properties(), max_states=max_states).budget == "max_states"
    assert same(g, g.properties(), max_depth=max_states % 7 + 1).budget == "max_depth"


def test_several_properties_vacuity_and_initial_violation() -> None:
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
    same(g, [always("never", lambda s: False, "fails at once")])


def test_liveness_is_the_plain_bfs() -> None:
    s = Retransmit(fair=False)
    r = check_lean(s, s.properties())
    assert [v.property for v in r.violations] == ["delivered"]
    assert comparable(r) == comparable(check_bfs(s, s.properties()))


@pytest.mark.slow
@pytest.mark.parametrize("model, path, overrides", SMALL_CONFIGS)
@pytest.mark.parametrize("batch", [7, 100_000])
def test_small_configs_equal_bfs(model: str, path: str, overrides: list[str], batch: int) -> None:
    system, props = build(model, path, overrides)
    same(system, props, batch=batch, keep_going=True)


@pytest.mark.parametrize(
    "mutant",
    [
        pytest.param("no-epoch-bump", marks=pytest.mark.slow),
        pytest.param("no-leader-epoch-bump", marks=pytest.mark.slow),
        pytest.param("skip-replica-init", marks=pytest.mark.slow),
    ],
)
def test_controller_mutant_counterexamples_equal(mutant: str) -> None:
    system, props = build(
        "controller", "configs/controller-small.toml", [f"mutant={mutant}", "max_session_expiries=1"]
    )
    r = same(system, props)
    assert r.exit_reason is ExitReason.VIOLATION and r.violations[0].trace
    same(system, props, keep_going=True, batch=50)


def test_controller_small_mutant_equal() -> None:
    system, props = build("controller", "configs/controller-small.toml", ["mutant=no-epoch-bump"])
    assert same(system, props, keep_going=True).violations


@pytest.mark.slow
def test_controller_ref_cut_mid_level() -> None:
    system, props = build("controller", "configs/controller-ref.toml")
    assert same(system, props, max_states=3_000, batch=500).budget == "max_states"


# -- the multi-process bfs with fingerprints (--workers N --visited fingerprints) -------------------


def same_workers(system: Any, props: list[Any], **kw: Any) -> CheckResult:
    """bfs and the 2-worker bfs keeping fingerprints in its driver: equal results."""
    a = check_bfs(system, props, **kw)
    b = check_pbfs(system, props, workers=2, serial_below=2, batch=3, visited="fingerprints", **kw)
    assert comparable(b) == comparable(a)
    assert any("64-bit fingerprints" in n for n in b.notes)
    return a


@pytest.mark.slow  # 1.3 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("keep_going", [False, True])
def test_workers_toys_equal_bfs(keep_going: bool) -> None:
    for g in (Grid(6), Grid(4, limit=5), Grid(5, terminal=False), LabelledGrid(8, limit=12)):
        same_workers(g, g.properties(), keep_going=keep_going)
        same_workers(g, g.properties(), keep_going=keep_going, max_states=17)


@pytest.mark.slow
def test_workers_controller_mutant_and_small_config() -> None:
    system, props = build("controller", "configs/controller-small.toml", ["mutant=no-epoch-bump"])
    assert same_workers(system, props).violations
    system, props = build(*SMALL_CONFIGS[1])
    same_workers(system, props, keep_going=True)


def test_workers_replay_mismatch_is_a_collision_error() -> None:
    g = Drifting()
    with pytest.raises(HashCollisionError, match="trace replay"):
        check_pbfs(g, g.properties(), workers=2, serial_below=2, visited="fingerprints")


# -- errors ------------------------------------------------------------------------------------------


def test_model_error_same_as_bfs() -> None:
    g = Boom(6)
    with pytest.raises(ModelError) as a:
        check_bfs(g, g.properties())
    with pytest.raises(ModelError) as b:
        check_lean(g, g.properties(), frontier_batch=2)
    assert a.value.message == b.value.message and a.value.trace == b.value.trace
    assert a.value.result is not None and b.value.result is not None
    assert comparable(a.value.result) == comparable(b.value.result)


class Drifting(Grid):
    """Successors in another order the second time a state is expanded: the search expands
    each state once, so only the replay of a trace sees the other order (as it would see
    another state after a fingerprint collision)."""

    def __init__(self) -> None:
        super().__init__(4, limit=5)
        self.seen: set[Any] = set()

    def successors(self, s: tuple[int, int]) -> Any:
        out = list(super().successors(s))
        again = s in self.seen
        self.seen.add(s)
        return out[::-1] if again else out


def test_replay_mismatch_is_a_collision_error() -> None:
    g = Drifting()
    with pytest.raises(FingerprintCollisionError, match="replay failed: step 1"):
        check_lean(g, g.properties())


@pytest.mark.slow
def test_controller_admin_equal_bfs_serial_and_workers() -> None:
    system, props = build("controller", "configs/controller-admin.toml", ["liveness=false"])
    a = check_bfs(system, props, keep_going=True)
    b = check_lean(system, props, keep_going=True, frontier_batch=500)
    c = check_pbfs(system, props, workers=2, keep_going=True, serial_below=100, visited="fingerprints")
    assert comparable(b) == comparable(a) == comparable(c)
