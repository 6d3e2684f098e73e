"""The spark engine gives the answers of the bfs engine: counts, levels, traces, coverage.

Every test here shares one local Spark session (``local[2]``) and is marked ``spark``:
``python -m pytest tests/test_spark.py -m spark -q -p no:cacheprovider``.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import explorer.engines.spark.driver as spark_driver
import explorer.engines.spark.fingerprints as spark_fingerprints
from explorer.config import load_config
from explorer.core import CheckResult, ExitReason, always, transition
from explorer.encoding import encode, fingerprint
from explorer.engines.bfs import check_bfs
from explorer.engines.spark import (
    FingerprintCollisionError,
    SparkSetupError,
    check_java,
    check_spark,
    collision_odds,
    probe_master,
    spark_session,
    state_fingerprint,
)
from explorer.tracefile import replay_steps
from tests.timeouts import time_limit
from tests.toys import Grid, LabelledGrid

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[1]
TEST_SECONDS = 600  # no test may run longer than this (SIGALRM)


@pytest.fixture(autouse=True)
def _bounded() -> Iterator[None]:
    with time_limit(TEST_SECONDS):
        yield


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    try:
        check_java()
    except SparkSetupError as e:
        pytest.skip(str(e))
    session = spark_session(
        "local[2]",
        app_name="kafka-mc tests",
        conf={"spark.driver.memory": "1g", "spark.sql.shuffle.partitions": "2"},
    )
    yield session
    session.stop()


def comparable(r: CheckResult) -> dict[str, Any]:
    """The result minus what may differ between engines (timings, engine, notes)."""
    d = r.to_json()
    for k in ("seconds", "states_per_second", "engine", "notes"):
        d.pop(k)
    for lv in d["levels"]:
        lv.pop("seconds")
    return d


def assert_same(b: CheckResult, s: CheckResult) -> None:
    assert s.engine == "spark"
    db, ds = comparable(b), comparable(s)
    for key in db:
        assert db[key] == ds[key], key
    assert any("collision odds" in n for n in s.notes)


def assert_traces_replay(system: Any, r: CheckResult) -> None:
    for v in r.violations:
        if v.trace:
            states = replay_steps(
                system, [{"action": st.action, "fingerprint": st.fingerprint} for st in v.trace]
            )
            assert len(states) == v.length + 1


TOY_CASES: dict[str, tuple[Grid, Any, dict[str, Any]]] = {
    "complete": (Grid(3), None, {}),
    "always-violated": (Grid(3, limit=3), None, {}),
    "first-violation-stops-mid-level": (Grid(4, terminal=False, limit=3), None, {}),
    "continue-every-violation": (Grid(4, terminal=False, limit=3), None, {"keep_going": True}),
    "transition-violated": (
        Grid(2, reset=True),
        [transition("no_drop", lambda s, a, t: sum(t) >= sum(s), "sum never drops")],
        {},
    ),
    "deadlock-only": (Grid(3, terminal=False), [], {}),
    "no-deadlock": (Grid(3, terminal=False), [], {"deadlock": False}),
    "max-states-mid-level": (Grid(30), [always("t", lambda s: True, "true")], {"max_states": 50}),
    # a vacuity predicate still pending when the level is re-counted up to the stop
    "max-states-mid-level-applies": (
        Grid(30),
        [always("t", lambda s: True, "true", applies=lambda s: s[0] > 40)],
        {"max_states": 50},
    ),
    "max-depth": (Grid(30), [always("t", lambda s: True, "true")], {"max_depth": 5}),
    "vacuity": (Grid(2), [always("x", lambda s: True, "", applies=lambda s: s[0] > 5)], {}),
    # coverage labels (successors_labelled), also over a level cut short by a violation
    "labels-complete": (LabelledGrid(3), None, {}),
    "labels-stop-mid-level": (LabelledGrid(4, terminal=False, limit=3), None, {}),
}


@pytest.mark.parametrize("local_frontier", [0, 4])
@pytest.mark.parametrize("case", sorted(TOY_CASES))
def test_toys_identical_to_bfs(spark: Any, case: str, local_frontier: int) -> None:
    g, props, kwargs = TOY_CASES[case]
    props = g.properties() if props is None else props
    b = check_bfs(g, props, **kwargs)
    s = check_spark(g, props, spark=spark, local_frontier=local_frontier, **kwargs)
    assert_same(b, s)
    assert_traces_replay(g, s)
    if local_frontier == 0 and b.max_depth > 0:
        assert "0 levels in the driver" in s.notes[-1]


def small_configs() -> list[Any]:
    import invariants

    out = []
    for path in sorted((ROOT / "configs").glob("*-small.toml")):
        name = path.name[: -len("-small.toml")]
        if name in invariants.MODEL_MODULES:
            out.append(pytest.param(name, path, id=name))
    return out


@pytest.mark.parametrize("keep_going", [True, False], ids=["continue", "first"])
@pytest.mark.parametrize(("name", "path"), small_configs())
def test_small_configurations_identical_to_bfs(spark: Any, name: str, path: Path, keep_going: bool) -> None:
    import invariants

    spec = invariants.get_model(name)
    config = load_config(spec.config_cls, str(path))
    system, props = spec.build(config), spec.properties(config)
    b = check_bfs(system, props, model=name, config=config, keep_going=keep_going)
    s = check_spark(
        system,
        props,
        model=name,
        config=config,
        keep_going=keep_going,
        spark=spark,
        local_frontier=200,
        checkpoint_every=4,
    )
    assert_same(b, s)
    assert_traces_replay(system, s)
    if name == "controller":  # state machines, elections and ZooKeeper writes counted alike
        assert s.coverage["labels"]["state_machines"]["partition"]["OfflinePartition->OnlinePartition"] > 0


@pytest.mark.parametrize(
    ("kwargs", "budget"),
    [
        ({"max_depth": 3}, "max_depth"),
        ({"max_states": 40}, "max_states"),
        ({"max_seconds": 1e-9}, "max_seconds"),
    ],
)
def test_budgets_end_with_explicit_reason(spark: Any, kwargs: dict[str, Any], budget: str) -> None:
    g = Grid(30)
    props = [always("t", lambda s: True, "true")]
    s = check_spark(g, props, spark=spark, local_frontier=0, **kwargs)
    assert s.exit_reason is ExitReason.BUDGET_EXHAUSTED and s.budget == budget
    assert s.exit_code == 3
    assert s.properties["t"]["status"] == "unknown"
    if budget != "max_seconds":
        assert_same(check_bfs(g, props, **kwargs), s)


def test_max_seconds_cancels_a_running_level(spark: Any) -> None:
    class Slow(Grid):
        def successors(self, s: tuple[int, int]) -> Any:
            time.sleep(0.05)
            return super().successors(s)

    g = Slow(40)
    t0 = time.monotonic()
    s = check_spark(g, [], spark=spark, local_frontier=0, max_seconds=8)
    assert s.budget == "max_seconds" and s.exit_reason is ExitReason.BUDGET_EXHAUSTED
    assert time.monotonic() - t0 < 60
    assert s.distinct_states < 41 * 41


def test_run_directory_holds_level_files(spark: Any, tmp_path: Path) -> None:
    import numpy as np

    g = Grid(3, limit=3)
    s = check_spark(g, g.properties(), spark=spark, local_frontier=0, run_dir=tmp_path / "run")
    files = sorted((tmp_path / "run").glob("level-*.npz"))
    assert len(files) == s.max_depth + 1
    with np.load(files[1]) as z:
        assert list(z["fps"]) == [fingerprint((1, 0)), fingerprint((0, 1))]  # in bfs order
        assert list(z["parent_fps"]) == [fingerprint((0, 0))] * 2
        assert [int(k) & 0xFFFFF for k in z["keys"]] == [0, 1]


def test_levels_keep_candidates_local_while_balanced_and_move_some_when_not(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # from one initial state the first Spark frontier sits in one partition: that level
    # sends the last half of its candidates to the other partition (a shuffle); levels
    # predicted balanced keep their candidates where they were found; either way the
    # answer is bfs's
    import json

    import explorer.engines.spark.levels as spark_levels

    monkeypatch.setattr(spark_levels, "REBALANCE_FROM", 0)  # the toy's frontiers are small
    g = Grid(12)
    b = check_bfs(g, g.properties())
    s = check_spark(g, g.properties(), spark=spark, local_frontier=0, run_dir=tmp_path / "run")
    assert_same(b, s)
    profile = json.loads((tmp_path / "run" / "spark-profile.json").read_text())
    routes = [p["route"] for p in profile]
    assert profile[0]["frontier_shares"] in ([1, 0], [0, 1])
    assert routes[0] == "move" and any(min(p["frontier_shares"]) > 0 for p in profile[1:4])
    assert "local" in routes
    for p in profile:
        assert sum(p["frontier_shares"]) == p["frontier"]
        assert (p["route"] == "local") == (p["moves"] is None)


def test_small_frontiers_are_never_reshuffled(spark: Any, tmp_path: Path) -> None:
    # a frontier under REBALANCE_FROM states keeps its candidates where found, balanced or not
    import json

    g = Grid(12)
    assert_same(
        check_bfs(g, g.properties()),
        check_spark(g, g.properties(), spark=spark, local_frontier=0, run_dir=tmp_path / "run"),
    )
    profile = json.loads((tmp_path / "run" / "spark-profile.json").read_text())
    assert {p["route"] for p in profile} == {"local"} and profile[0]["frontier_shares"] in ([1, 0], [0, 1])


def test_collision_odds_reported(spark: Any) -> None:
    s = check_spark(Grid(3), [], spark=spark, local_frontier=0)
    assert collision_odds(16) == 16 * 16 / 2**65
    assert any(n.startswith("fingerprint collision odds 6.9e-18") for n in s.notes)


@pytest.mark.parametrize("local_frontier", [0, 10**9], ids=["spark", "driver"])
@pytest.mark.parametrize(
    ("alias", "of"),
    [((0, 1), (1, 0)), ((0, 2), (2, 0)), ((1, 1), (0, 2))],
    ids=["siblings", "cousins", "same-level"],
)
def test_forced_fingerprint_collision_is_detected(
    spark: Any, monkeypatch: pytest.MonkeyPatch, local_frontier: int, alias: Any, of: Any
) -> None:
    # two different states of one level share a fingerprint: the engine must notice
    real = state_fingerprint
    monkeypatch.setattr(spark_driver, "state_fingerprint", lambda s: real(of) if s == alias else real(s))
    g = Grid(3)
    with pytest.raises(FingerprintCollisionError, match="fingerprint collision"):
        check_spark(g, g.properties(), spark=spark, local_frontier=local_frontier)


def test_collision_with_an_older_level_is_caught_in_the_driver(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a state colliding with one of an earlier level is caught where states are kept
    real = state_fingerprint
    monkeypatch.setattr(spark_driver, "state_fingerprint", lambda s: real(s) % 3)
    g = Grid(6)
    with pytest.raises(FingerprintCollisionError, match="fingerprint collision"):
        check_spark(g, g.properties(), spark=spark, local_frontier=10**9)


class DriverDiffers:
    """A model that is not deterministic: Spark's workers step by 2, the driver by 1."""

    def __init__(self) -> None:
        self.driver_pid = os.getpid()

    def init_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> list[tuple[str, int]]:
        step = 1 if os.getpid() == self.driver_pid else 2
        return [("step", s + step)] if s < 4 else []

    def is_terminal(self, s: int) -> bool:
        return True


def test_trace_rebuild_rechecks_every_step(spark: Any) -> None:
    system = DriverDiffers()
    with pytest.raises(FingerprintCollisionError, match=r"step 1 .*fingerprint collision"):
        check_spark(system, [always("small", lambda s: s < 4, "")], spark=spark, local_frontier=0)


def test_fast_fingerprint_equals_the_canonical_one() -> None:
    import dataclasses
    import enum
    from typing import NamedTuple

    class Colour(enum.IntEnum):
        RED = 1

    class Mode(enum.Enum):
        ON = "on"

    class Rec(NamedTuple):
        a: int
        b: tuple[Any, ...]

    @dataclasses.dataclass(frozen=True)
    class Box:
        x: Any
        y: Any

    inner = Rec(-5, (None, True, Colour.RED))
    values = [
        (),
        (1, 2**70, -(2**70), 600, -129),
        Rec(3, (inner, inner, (inner,))),
        Box(inner, (Mode.ON, "text", False)),
        ((Box(1, 2),) * 3, tuple(range(200))),
    ]
    for v in values:
        for _ in range(2):  # the second time from the identity cache
            assert state_fingerprint(v) == fingerprint(v), v
            spark_fingerprints._SELF_CHECKS[0] = 0
    assert spark_fingerprints._FAST_OK[0]
    spark_fingerprints._SELF_CHECKS[0] = 500
    assert encode(True) == encode(1)


def test_unreachable_master_is_a_one_line_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    t0 = time.monotonic()
    with pytest.raises(SparkSetupError) as info:
        check_spark(Grid(2), [], master=f"spark://127.0.0.1:{port}", connect_timeout=5)
    assert time.monotonic() - t0 < 30
    msg = str(info.value)
    assert "\n" not in msg and f"cannot reach Spark master spark://127.0.0.1:{port}" in msg
    with pytest.raises(SparkSetupError, match="expected spark://host:port"):
        probe_master("spark://nohostport")


def test_a_malformed_local_master_is_a_one_line_error_before_any_work(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # caught by its form, not by the JVM (whose start would print its own stack trace first)
    with pytest.raises(SparkSetupError) as info:
        check_spark(Grid(2), [], master="local[two]")
    assert (
        str(info.value)
        == "bad Spark master local[two]: expected local, local[N], local[*] or local[N,RETRIES]"
    )
    assert capsys.readouterr().err == ""


def test_a_malformed_memory_setting_is_a_one_line_error_before_any_work(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SparkSetupError) as info:
        check_spark(Grid(2), [], master="local[1]", spark_conf={"spark.executor.memory": "2 gigs"})
    assert (
        str(info.value)
        == "bad Spark setting spark.executor.memory=2 gigs: expected a size such as 512m or 4g"
    )
    assert capsys.readouterr().err == ""


def _fake_java(directory: Path, version_line: str) -> Path:
    home = directory / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\nexit 0\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return home


@pytest.mark.parametrize(
    "version_line",
    ['openjdk version "11.0.21" 2023-10-17', 'java version "1.8.0_392"'],
    ids=["java11", "java8"],
)
def test_old_java_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version_line: str
) -> None:
    home = _fake_java(tmp_path, version_line)
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    with pytest.raises(SparkSetupError) as info:
        check_spark(Grid(2), [], master="local[1]")
    msg = str(info.value)
    assert "\n" not in msg and "Java 17" in msg and str(home) in msg


def test_missing_java_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(SparkSetupError, match=r"^Java 17 is needed for the spark engine, but no java"):
        check_spark(Grid(2), [], master="local[1]")


# -- eventually properties on Spark: edges as fingerprint records, SCCs over numpy arrays ------------


class Spin:
    """Sent messages may be lost and retried forever: ``delivered`` fails as a fair lasso."""

    def init_states(self) -> list[tuple[bool, bool]]:
        return [(False, False)]

    def successors(self, s: tuple[bool, bool]) -> list[tuple[str, tuple[bool, bool]]]:
        sent, delivered = s
        if delivered:
            return []
        if not sent:
            return [("send", (True, False))]
        return [("lose", (False, False)), ("retry", (True, False))]

    def is_terminal(self, s: tuple[bool, bool]) -> bool:
        return True


def _live_cases() -> dict[str, tuple[Any, list[Any]]]:
    from explorer.core import eventually
    from tests.toys import Retransmit

    delivered = eventually("delivered", lambda s: s[1], "the message is delivered", fairness=["str"])
    return {
        "fair-holds": (Retransmit(), [delivered]),
        "unfair-stall-lasso": (Retransmit(), [eventually("delivered", lambda s: s[1], "", fairness=[])]),
        "system-fairness": (Retransmit(fair=False), Retransmit(fair=False).properties()),
        "trigger-lasso": (
            Spin(),
            [eventually("delivered", lambda s: s[1], "", trigger=lambda s: s[0], fairness=["str"])],
        ),
        "ends-without-goal": (Grid(2), [eventually("never", lambda s: s == (9, 9), "")]),
        "grid-holds": (Grid(3), [eventually("corner", lambda s: s == (3, 3), "")]),
        "with-safety": (
            Grid(3, limit=3),
            [*Grid(3, limit=3).properties(), eventually("c", lambda s: s == (3, 3), "")],
        ),
    }


@pytest.mark.parametrize("local_frontier", [0, 10**9], ids=["spark", "driver"])
@pytest.mark.parametrize("case", sorted(_live_cases()))
def test_eventually_identical_to_bfs(spark: Any, case: str, local_frontier: int) -> None:
    system, props = _live_cases()[case]
    for keep_going in (False, True):
        b = check_bfs(system, props, keep_going=keep_going)
        s = check_spark(system, props, spark=spark, local_frontier=local_frontier, keep_going=keep_going)
        assert_same(b, s)
        assert_traces_replay(system, s)
        assert not any("bfs engine only" in n for n in s.notes)


def test_eventually_can_fail_on_spark(spark: Any) -> None:
    # the property is checked, not marked unchecked: an unfair stall is a lasso
    system, props = _live_cases()["unfair-stall-lasso"]
    s = check_spark(system, props, spark=spark, local_frontier=0)
    (v,) = s.violations
    assert v.kind == "eventually" and v.loop_start == 0 and s.properties["delivered"]["status"] == "violated"
    assert v.trace[-1].fingerprint == v.trace[v.loop_start].fingerprint


@pytest.mark.parametrize(
    ("overrides", "prop"),
    [
        (["mutant=no-election-on-broker-failure"], "leader_eventually_elected"),
        ([], "leader_eventually_elected"),
    ],
    ids=["mutant-lasso", "holds"],
)
def test_controller_liveness_identical_to_bfs(spark: Any, overrides: list[str], prop: str) -> None:
    from tests.test_controller_admin import LEADER_CRASH, _config, spec

    c = _config(None, [*LEADER_CRASH, *overrides])
    props = [p for p in spec.properties(c) if p.name == prop]
    b = check_bfs(spec.build(c), props, model="controller", config=c)
    s = check_spark(spec.build(c), props, model="controller", config=c, spark=spark, local_frontier=0)
    assert_same(b, s)
    assert_traces_replay(spec.build(c), s)


def test_cli_usage_error_compatible() -> None:
    # SparkSetupError carries one line; the CLI maps it to exit code 2 like UsageError
    assert issubclass(SparkSetupError, Exception)
    assert sys.modules["explorer.engines.spark"].__all__.count("SparkSetupError") == 1


@pytest.mark.spark
def test_cli_spark_engine_matches_bfs(tmp_path: Path) -> None:
    import json

    from explorer.cli import main

    out = {}
    for engine in ("bfs", "spark"):
        f = tmp_path / f"{engine}.json"
        extra = ["--master", "local[2]", "--local-frontier", "0", "--run-dir", str(tmp_path / "run")]
        argv = [
            "check",
            "timing-wheel",
            "--config",
            str(ROOT / "configs" / "timing-wheel-small.toml"),
            "--quiet",
        ]
        code = main([*argv, "--engine", engine, "--json", str(f), *(extra if engine == "spark" else [])])
        assert code == 0
        out[engine] = json.loads(f.read_text())
    for k in ("distinct_states", "generated_states", "max_depth", "exit_reason", "properties", "coverage"):
        assert out["spark"][k] == out["bfs"][k], k
