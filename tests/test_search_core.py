"""The serial search is one loop composed of parts (issue 36): every allowed combination of
visited set (states, fingerprints), reduction (none, symmetry, por), frontier (in memory,
spilled) and checkpoint gives the result of the plain combination with the same reduction:
counts, levels, verdicts, witnesses, counterexample lengths and traces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from explorer.engines.base import CheckOptions
from explorer.engines.bfs import check_bfs
from explorer.search import checkpoint, serial
from explorer.search.monitor import PropertyMonitor
from explorer.search.serial import Budgets, breadth_first, finish
from explorer.search.visited import FingerprintVisited, StateVisited
from model.controller import faults
from tests.por_toys import Procs
from tests.test_checkpoint import Killed, arm
from tests.test_pbfs import SMALL_CONFIGS, build, comparable
from tests.test_symmetry import Counters, _replays, props
from tests.toys import Grid, LabelledGrid, Retransmit


def _toys() -> list[tuple[str, Any, list[Any]]]:
    procs = Procs(k=3, n=3)
    procs_cycle = Procs(k=3, n=3, cycle=True)
    return [
        ("counters", Counters(3, 2), props(4, 2)),
        ("procs", procs, procs.properties()),
        ("procs-cycle", procs_cycle, procs_cycle.properties()),
        ("grid", Grid(4, limit=5), Grid(4, limit=5).properties()),
        ("labelled-grid", LabelledGrid(5), LabelledGrid(5).properties()),
        ("retransmit", Retransmit(), Retransmit().properties()),
    ]


def _same_but_notes(a: Any, b: Any) -> None:
    assert comparable(a) == comparable(b)


@pytest.mark.parametrize("reduce", ["none", "symmetry", "por"])
@pytest.mark.parametrize("name, system, properties", _toys(), ids=[t[0] for t in _toys()])
def test_fingerprints_give_the_states_result_under_every_reduction(
    name: str, system: Any, properties: list[Any], reduce: str
) -> None:
    for keep_going in (True, False):
        exact = check_bfs(system, properties, keep_going=keep_going, reduce=reduce)
        lean = check_bfs(system, properties, keep_going=keep_going, reduce=reduce, visited="fingerprints")
        spilled = check_bfs(
            system, properties, keep_going=keep_going, reduce=reduce, visited="fingerprints", frontier_batch=3
        )
        _same_but_notes(lean, exact)
        _same_but_notes(spilled, exact)
        # eventually properties too: their graph recorded as fingerprints (issue 56)
        assert any("collision odds" in n for n in lean.notes)
        for v in lean.violations:
            assert _replays(system, v.trace), (name, v.property)


def test_the_reductions_really_reduce_with_fingerprints() -> None:
    """Not the same result because the reduction was dropped: it is there and it reduces."""
    c, p = Counters(3, 2), Procs(k=3, n=3)
    assert check_bfs(c, [], visited="fingerprints", reduce="symmetry").distinct_states == 10  # C(5, 3)
    assert check_bfs(c, [], visited="fingerprints").distinct_states == 27
    assert (
        check_bfs(p, p.properties(), visited="fingerprints", reduce="por", keep_going=True).distinct_states
        < 4**3
    )


@pytest.mark.slow  # 3.9 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("reduce", ["none", "symmetry"])
@pytest.mark.parametrize("model, path, overrides", SMALL_CONFIGS[:3])
def test_small_configurations_under_every_visited_set(
    model: str, path: str, overrides: list[str], reduce: str
) -> None:
    system, properties = build(model, path, overrides)
    exact = check_bfs(system, properties, keep_going=True, reduce=reduce)
    lean = check_bfs(
        system, properties, keep_going=True, reduce=reduce, visited="fingerprints", frontier_batch=50
    )
    _same_but_notes(lean, exact)


@pytest.mark.parametrize("reduce", ["symmetry", "por"])
def test_checkpoint_and_resume_under_a_reduction(tmp_path: Path, monkeypatch: Any, reduce: str) -> None:
    system = Counters(4, 2) if reduce == "symmetry" else Procs(k=4, n=3)
    properties = props(6, 2) if reduce == "symmetry" else system.properties()
    ref = check_bfs(system, properties, keep_going=True, reduce=reduce, visited="fingerprints")
    ck = tmp_path / "ck"
    kw: dict[str, Any] = dict(
        keep_going=True,
        reduce=reduce,
        visited="fingerprints",
        frontier_batch=2,
        checkpoint=ck,
        checkpoint_every=0.0,
    )
    arm(monkeypatch, [serial, checkpoint], ["state:3"])
    with pytest.raises(Killed):
        check_bfs(system, properties, **kw)
    arm(monkeypatch, [serial, checkpoint], [])
    _same_but_notes(check_bfs(system, properties, resume=True, **kw), ref)


def test_the_parts_compose_by_hand() -> None:
    """The loop and the result builder used directly, as an engine module uses them."""
    g = Grid(3, limit=3)
    out = breadth_first(g, PropertyMonitor(g.properties()), StateVisited(), budgets=Budgets(max_depth=10))
    r = finish(g, out, CheckOptions())
    assert comparable(r) == comparable(check_bfs(g, g.properties()))


def test_eventually_properties_are_decided_on_a_graph_of_fingerprints(tmp_path: Path) -> None:
    """With fingerprints the serial search records the graph eventually properties need as
    fingerprint records (as the workers do), in its work folder: the exact set's result."""
    g = Grid(2)
    from explorer.core import eventually

    live = [eventually("corner", lambda s: s == (2, 2), "reaches the corner")]
    out = breadth_first(g, PropertyMonitor(live), FingerprintVisited(tmp_path, g), work=tmp_path)
    assert out.decide_live is not None and out.edges is None
    assert sorted(p.name for p in (tmp_path / "live").iterdir())[0] == "edges-000000.npz"
    assert out.decide_live() == {"corner": None}
    if out.frozen:
        import gc

        gc.unfreeze()
    r = check_bfs(g, live, visited="fingerprints")
    assert r.properties["corner"]["status"] == "held"
    assert any("collision odds" in n for n in r.notes)  # the fingerprints were used
    _same_but_notes(r, check_bfs(g, live))


# -- the worker processes compose with the symmetry reduction -------------------------------


@pytest.mark.parametrize("visited", ["states", "fingerprints"])
@pytest.mark.parametrize(
    "name, system, properties", _toys()[:2] + _toys()[3:4], ids=["counters", "procs", "grid"]
)
def test_workers_with_symmetry_give_the_serial_reduced_result(
    name: str, system: Any, properties: list[Any], visited: str
) -> None:
    from explorer.engines.pbfs import check_pbfs

    for keep_going in (True, False):
        serial_r = check_bfs(system, properties, keep_going=keep_going, reduce="symmetry")
        workers_r = check_pbfs(
            system,
            properties,
            workers=2,
            serial_below=2,
            keep_going=keep_going,
            reduce="symmetry",
            visited=visited,
        )
        _same_but_notes(workers_r, serial_r)
        for v in workers_r.violations:
            assert _replays(system, v.trace), (name, v.property)


@pytest.mark.slow
def test_workers_with_symmetry_on_the_controller() -> None:
    import tomllib

    import invariants.controller as spec
    from explorer.engines.pbfs import check_pbfs
    from invariants.controller import ControllerConfig
    from tests.test_symmetry import SPARE

    with open(Path(__file__).resolve().parent.parent / "configs" / "controller-small.toml", "rb") as fh:
        cfg = ControllerConfig(**{**tomllib.load(fh), **SPARE})
    serial_r = check_bfs(spec.build(cfg), spec.properties(cfg), keep_going=True, reduce="symmetry")
    workers_r = check_pbfs(
        spec.build(cfg), spec.properties(cfg), workers=2, serial_below=500, keep_going=True, reduce="symmetry"
    )
    assert serial_r.distinct_states == 10_697  # the reduced count test_symmetry pins
    _same_but_notes(workers_r, serial_r)
    assert any("applied by each worker" in n for n in workers_r.notes)


def test_the_combination_rules_refuse_with_their_reason() -> None:
    from explorer.api import CheckOptions, check
    from explorer.engines.options import refusal

    g = Grid(2)
    with pytest.raises(ValueError, match="cycle proviso"):
        check(g, [], CheckOptions(workers=2, reduce="por"))
    with pytest.raises(ValueError, match="no state graph to reduce"):
        check(g, [], CheckOptions(engine="simulate", reduce="symmetry"))
    assert refusal("bfs", checkpoint=True, eventually=True, visited="fingerprints") is not None
    assert refusal("bfs", checkpoint=True, visited="states") is not None
    for ok in (
        dict(workers=2, reduce="symmetry"),
        dict(workers=2, reduce="symmetry", visited="fingerprints", checkpoint=True),
        dict(reduce="por", visited="fingerprints", checkpoint=True),
        dict(reduce="symmetry", visited="fingerprints"),
    ):
        assert refusal("bfs", **ok) is None, ok  # type: ignore[arg-type]


def test_engine_options_name_a_bad_key_or_value_in_one_line() -> None:
    from explorer.api import CheckOptions, check
    from explorer.engines.options import BfsOptions, SimulateOptions

    g = Grid(2)
    with pytest.raises(
        ValueError, match=r"^bfs engine option 'frontier_bacth': unknown \(did you mean 'frontier_batch'\?\)"
    ):
        check(g, [], CheckOptions(engine_options={"frontier_bacth": 3}))
    with pytest.raises(ValueError, match=r"^walks: a positive whole number, got 0$"):
        check(g, [], CheckOptions(engine="simulate", engine_options={"walks": 0}))
    with pytest.raises(ValueError, match=r"^frontier_batch: a positive whole number"):
        BfsOptions(frontier_batch=-1)
    with pytest.raises(ValueError, match="given the options of the simulate engine"):
        check(g, [], CheckOptions(engine_options=SimulateOptions()))
    r = check(g, [], CheckOptions(engine_options=BfsOptions(visited="fingerprints")))
    assert r.distinct_states == 9 and any("collision odds" in n for n in r.notes)


# -- the worker processes decide eventually properties themselves (no serial fall-back) --------


@pytest.mark.parametrize("visited", ["states", "fingerprints"])
@pytest.mark.parametrize("fair", [True, False])
def test_workers_decide_eventually_on_the_recorded_graph(visited: str, fair: bool) -> None:
    from explorer.engines.pbfs import check_pbfs

    system = Retransmit(fair)
    serial_r = check_bfs(system, system.properties(), keep_going=True)
    workers_r = check_pbfs(
        system, system.properties(), workers=2, serial_below=2, keep_going=True, visited=visited
    )
    _same_but_notes(workers_r, serial_r)
    assert workers_r.properties["delivered"]["status"] == ("held" if fair else "violated")
    assert not any("ran the serial bfs engine" in n for n in workers_r.notes)


@pytest.mark.slow
@pytest.mark.parametrize(
    "case", [0, 2, 4, 5], ids=["leader-L1", "deletion-L2", "controller-L3", "reassign-L4"]
)
def test_workers_find_the_controller_s_liveness_lassos(case: int) -> None:
    """The lassos of the catalogue's liveness breaks, found by two worker processes: the same
    property, length and loop start as serial bfs (traces replay step by step)."""
    from explorer.engines.pbfs import check_pbfs
    from invariants import controller as spec
    from tests.test_controller_admin import LIVENESS_BREAKS, _config

    entry = LIVENESS_BREAKS[case]  # a tuple, or a pytest.param (marked slow) holding one
    path, overrides, prop, length = getattr(entry, "values", entry)
    c = _config(path, overrides)
    props = [p for p in spec.properties(c) if p.name == prop]
    serial_r = check_bfs(spec.build(c), props, keep_going=False)
    workers_r = check_pbfs(spec.build(c), props, workers=2, serial_below=200, keep_going=False)
    _same_but_notes(workers_r, serial_r)
    v = workers_r.violations[0]
    assert (v.property, v.length) == (prop, length) and v.loop_start is not None
    assert _replays(spec.build(c), v.trace)


@pytest.mark.slow
def test_workers_with_eventually_on_controller_admin() -> None:
    """Issue 36's target: on controller-admin (27,663 states, every property, --continue) two
    worker processes give serial bfs's result (measured faster: benchmarks.bench_variants)."""
    from explorer.engines.pbfs import check_pbfs

    system, properties = build("controller", "configs/controller-admin.toml")
    assert any(p.kind.value == "eventually" for p in properties)
    serial_r = check_bfs(system, properties, keep_going=True)
    workers_r = check_pbfs(system, properties, workers=2, keep_going=True)
    assert serial_r.distinct_states == 17_671
    _same_but_notes(workers_r, serial_r)


# -- the differential: every allowed combination, the small configurations, a variant, mutants --

COMBINATIONS: list[dict[str, Any]] = [
    {"visited": "fingerprints"},
    {"visited": "fingerprints", "frontier_batch": 64},
    {"workers": 2},
    {"workers": 2, "visited": "fingerprints"},
]
DIFFERENTIAL_CONFIGS = [
    ("controller", "configs/controller-small.toml", []),
    ("controller", "configs/controller-small.toml", ["kafka_version=0.8"]),
    ("controller", "configs/controller-small.toml", ["mutant=no-epoch-bump"]),
    ("controller", "configs/controller-small.toml", ["mutant=leader-outside-isr"]),
    # every registered fault (model/controller/faults/), its budget at 1 on controller-small:
    # generated from the registry, so a new fault is in the differential without an edit here
    *(("controller", "configs/controller-small.toml", [f"{r.budget}=1"]) for r in faults.rules()),
    ("purgatory", "configs/purgatory-small.toml", []),
    ("timing-wheel", "configs/timing-wheel-small.toml", []),
]


@pytest.mark.slow
@pytest.mark.parametrize("keep_going", [True, False])
@pytest.mark.parametrize("model, path, overrides", DIFFERENTIAL_CONFIGS)
def test_every_combination_gives_serial_bfs_s_result(
    model: str, path: str, overrides: list[str], keep_going: bool
) -> None:
    """Issue 36's differential: counts, levels, verdicts, witnesses, coverage and counterexample
    lengths and traces of every allowed combination equal serial bfs's on the small
    configurations, the 0.8 variant, catalogue mutants and every registered fault."""
    from explorer.engines.pbfs import check_pbfs

    system, properties = build(model, path, overrides)
    ref = check_bfs(system, properties, keep_going=keep_going)
    for combo in COMBINATIONS:
        combo = dict(combo)
        workers = combo.pop("workers", 1)
        if workers == 1:
            r = check_bfs(system, properties, keep_going=keep_going, **combo)
        else:
            r = check_pbfs(
                system, properties, keep_going=keep_going, workers=workers, serial_below=50, **combo
            )
        assert comparable(r) == comparable(ref), (combo, workers)
