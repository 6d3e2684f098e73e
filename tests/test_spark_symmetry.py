"""The spark engine with the symmetry reduction (issue 36): the driver's levels and the Spark
tasks canonicalise every successor; the result is serial bfs's reduced result, the traces
mapped back to real states. Its own module: a test of tests/test_spark.py stops the shared
session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.engines.bfs import check_bfs
from explorer.engines.spark import SparkSetupError, check_java, check_spark, spark_session
from tests.test_spark import assert_same
from tests.toys import Grid

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    try:
        check_java()
    except SparkSetupError as e:
        pytest.skip(str(e))
    session = spark_session("local[2]", app_name="kafka-mc tests", conf={"spark.driver.memory": "1g"})
    yield session
    session.stop()


@pytest.mark.parametrize("local_frontier", [0, 3])
@pytest.mark.parametrize("keep_going", [True, False])
def test_symmetry_identical_to_reduced_bfs(spark: Any, local_frontier: int, keep_going: bool) -> None:
    from tests.test_symmetry import Counters, _replays, props

    system = Counters(3, 2)
    b = check_bfs(system, props(4, 2), keep_going=keep_going, reduce="symmetry")
    s = check_spark(
        system,
        props(4, 2),
        spark=spark,
        local_frontier=local_frontier,
        keep_going=keep_going,
        reduce="symmetry",
    )
    assert_same(b, s)
    assert b.distinct_states < 27  # reduced: not the same answer because nothing was reduced
    for v in s.violations:
        assert _replays(system, v.trace), v.property
    assert any("applied in the driver and the Spark tasks" in n for n in s.notes)


def test_symmetry_on_the_controller_identical_to_reduced_bfs(spark: Any) -> None:
    import tomllib

    import invariants.controller as spec
    from invariants.controller import ControllerConfig
    from tests.test_symmetry import SPARE

    with open(Path(__file__).resolve().parent.parent / "configs" / "controller-small.toml", "rb") as fh:
        cfg = ControllerConfig(**{**tomllib.load(fh), **SPARE})
    b = check_bfs(spec.build(cfg), spec.properties(cfg), keep_going=True, reduce="symmetry")
    s = check_spark(
        spec.build(cfg),
        spec.properties(cfg),
        spark=spark,
        local_frontier=200,
        keep_going=True,
        reduce="symmetry",
    )
    assert b.distinct_states == 10_697
    assert_same(b, s)


def test_por_is_refused_on_spark_with_its_reason() -> None:
    with pytest.raises(ValueError, match="Spark's tasks do not hold the visited set"):
        check_spark(Grid(2), [], reduce="por")
