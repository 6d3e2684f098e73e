"""The default run's CPU guard (the root ``conftest.py``) can fail: a test that burns more CPU
than ``KAFKA_MC_TEST_CPU_LIMIT`` fails with a message naming the markers to use, the same test
marked ``slow`` passes, and the summary lists the slowest tests. Also: ``-m ci`` selects the
slow, quality and spark tests except the ``heavy`` and ``deep`` ones."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

BURN = """
import time

import pytest


def burn() -> None:
    end = time.process_time() + 0.25
    while time.process_time() < end:
        pass


def test_cheap() -> None:
    assert 1 + 1 == 2


def test_burns() -> None:
    burn()


@pytest.mark.slow
def test_burns_marked_slow() -> None:
    burn()


@pytest.mark.slow
@pytest.mark.heavy
def test_heavy() -> None:
    pass


@pytest.mark.heavy
def test_heavy_alone() -> None:
    pass


@pytest.mark.spark
def test_spark() -> None:
    pass


@pytest.mark.deep
def test_deep() -> None:
    pass
"""

MARKERS = """
[pytest]
markers =
    slow: s
    heavy: h
    spark: p
    spark_cluster: c
    quality: q
    deep: d
    ci: ci
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest((ROOT / "conftest.py").read_text(encoding="utf-8"))
    pytester.makeini(MARKERS)
    pytester.makepyfile(test_burn=BURN)
    return pytester


def test_a_default_test_over_the_limit_fails_naming_the_marker(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAFKA_MC_TEST_CPU_LIMIT", "0.1")
    r = project.runpytest("-m", "not heavy and not spark and not deep")
    r.assert_outcomes(passed=2, failed=1, deselected=4)
    out = r.stdout.str()
    assert "test_burn.py::test_burns used " in out
    assert "@pytest.mark.slow" in out
    assert "CPU: " in out and "slowest" in out
    assert r.ret == 1


@pytest.mark.slow  # 0.7 CPU-s in a loaded default run (2026-11-29)
def test_no_limit_and_a_bad_limit(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_MC_TEST_CPU_LIMIT", "0")
    project.runpytest("-m", "not heavy and not spark and not deep").assert_outcomes(passed=3, deselected=4)
    monkeypatch.setenv("KAFKA_MC_TEST_CPU_LIMIT", "nan")
    r = project.runpytest()
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "KAFKA_MC_TEST_CPU_LIMIT='nan'" in r.stderr.str()


def test_ci_selects_the_costly_tests_but_heavy_and_deep(project: pytest.Pytester) -> None:
    r = project.runpytest("-m", "ci", "--collect-only", "-q")
    listed = {line.split("::")[1] for line in r.stdout.lines if "::" in line}
    assert listed == {"test_burns_marked_slow", "test_spark"}
    r = project.runpytest("-m", "slow", "--collect-only", "-q")
    listed = {line.split("::")[1] for line in r.stdout.lines if "::" in line}
    assert listed == {"test_burns_marked_slow", "test_heavy", "test_heavy_alone"}
