"""The CPU budget of the default test run, kept by construction.

Every test is timed in CPU seconds (this process plus the child processes it waited
for: forked ``--workers``, CLI subprocesses), not wall seconds, so a loaded machine
does not make the guard flaky. A test that carries none of the cost markers (``slow``,
``quality``, ``spark``, ``spark_cluster``, ``heavy``, ``deep``) belongs to the
default run and must stay under ``KAFKA_MC_TEST_CPU_LIMIT`` CPU seconds (default 5);
one that goes over fails with a message naming the marker to use. The terminal summary
lists the slowest tests of the run by CPU.

``KAFKA_MC_TEST_CPU_LIMIT=0`` turns the guard off (the summary stays);
``KAFKA_MC_TEST_CPU_REPORT=FILE`` writes every test's CPU seconds to FILE as JSON.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Generator
from typing import Any

import pytest

from explorer import native  # its import hook is in place before any test imports the model

# The suite, and every process it starts, runs the pure-Python model: the reference (issue 56).
# tests/test_native.py compares a compiled build with it, removing the variable in its subprocesses.
os.environ.setdefault(native.PURE_ENV, "1")

#: The markers that take a test out of the default run (pyproject's ``addopts``).
COST_MARKERS = ("slow", "quality", "spark", "spark_cluster", "deep", "heavy", "zookeeper")

_CPU_KEY = pytest.StashKey[float]()

#: the tests of the guard itself run pytest in a temporary project
pytest_plugins = ("pytester",)


def _cpu_now() -> float:
    """CPU seconds used so far by this process and its reaped children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


_LIMIT_KEY = pytest.StashKey[float]()


def pytest_configure(config: pytest.Config) -> None:
    """Read the CPU limit once, so a test that changes the environment does not change it."""
    config.stash[_LIMIT_KEY] = _limit()


def _limit() -> float:
    raw = os.environ.get("KAFKA_MC_TEST_CPU_LIMIT", "5")
    try:
        value = float(raw)
    except ValueError:
        raise pytest.UsageError(f"KAFKA_MC_TEST_CPU_LIMIT={raw!r} is not a number of seconds") from None
    if not value >= 0 or value == float("inf"):
        raise pytest.UsageError(f"KAFKA_MC_TEST_CPU_LIMIT={raw!r} must be a finite number >= 0")
    return value


#: Markers whose tests ``.ci/run`` runs (``-m ci``), unless ``heavy`` or ``deep``.
CI_MARKERS = ("slow", "quality", "spark", "spark_cluster")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``ci`` every slow, quality and spark test that is neither ``heavy`` nor ``deep``
    (and ``slow`` every ``heavy`` one).

    Runs before ``-m`` deselects, so ``pytest -m ci`` is CI's selection.
    """
    for item in items:
        if item.get_closest_marker("heavy") and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)  # heavy is a kind of slow: `tox -e slow` runs it
        if any(item.get_closest_marker(m) for m in CI_MARKERS) and not (
            item.get_closest_marker("heavy") or item.get_closest_marker("deep")
        ):
            item.add_marker(pytest.mark.ci)


def _is_default(item: pytest.Item) -> bool:
    return not any(item.get_closest_marker(m) for m in COST_MARKERS)


_times: dict[str, float] = {}
_over: list[tuple[str, float]] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """Time setup, call and teardown of one test in CPU seconds; fail a default-run test over the limit.

    The figure travels on the teardown report (``user_properties``), so it reaches the
    summary from ``pytest-xdist`` workers too.
    """
    if call.when == "setup":
        item.stash[_CPU_KEY] = _cpu_now()
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    used = _cpu_now() - item.stash.get(_CPU_KEY, _cpu_now())
    if call.when == "teardown":
        report.user_properties.append(("cpu_seconds", used))
    if call.when != "call" or not report.passed:
        return
    limit = item.config.stash[_LIMIT_KEY]
    if limit == 0 or not _is_default(item):
        return
    if used > limit:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} used {used:.1f} CPU seconds, over the default run's limit of "
            f"{limit:g} (KAFKA_MC_TEST_CPU_LIMIT). Shrink its configuration so it shows the same "
            "thing on a smaller bound, or mark it @pytest.mark.slow (or quality / spark / deep) "
            "so that `tox -e slow` and .ci/run's `ci` selection run it instead."
        )
        report.user_properties.append(("over_cpu_limit", used))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the CPU figures (in the controller process, under xdist too)."""
    for key, value in report.user_properties:
        if key == "cpu_seconds" and report.when == "teardown":
            _times[report.nodeid] = float(value)
        elif key == "over_cpu_limit":
            _over.append((report.nodeid, float(value)))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """List the slowest tests by CPU, and the total; write the JSON report if asked."""
    if not _times:
        return
    total = sum(_times.values())
    slowest = sorted(_times.items(), key=lambda kv: -kv[1])[:10]
    tr = terminalreporter
    tr.write_sep("-", f"CPU: {total:.1f} s in {len(_times)} tests; slowest")
    for nodeid, cpu in slowest:
        tr.write_line(f"{cpu:8.2f} s  {nodeid}")
    for nodeid, cpu in _over:
        tr.write_line(f"over the CPU limit: {nodeid} ({cpu:.1f} s)")
    path = os.environ.get("KAFKA_MC_TEST_CPU_REPORT")
    if path:
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"total_cpu": total, "wall": time.time() - _START, "tests": _times}, f, indent=1)
        os.replace(tmp, path)


_START = time.time()
