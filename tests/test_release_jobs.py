"""The release's entries side by side and with fingerprints (issue 56).

* :func:`explorer.release_jobs.run_jobs`: results in the items' order whatever order they end in,
  a job's exception raised in the caller, an interrupt that stops the running jobs and starts no
  more (cheap jobs: the mechanism, in the default run); a release of real entries with
  ``--jobs 2`` interrupted by SIGINT from outside (slow);
* the release's bfs entries run with ``visited = "fingerprints"`` (``RELEASE_VISITED``; with
  eventually properties the graph recorded as fingerprints): on the suite's entries that run fast,
  every field of the result but timings and notes (counts, levels, coverage, properties, each
  counterexample's steps and fingerprints, liveness lassos), the verdict, and what the report
  draws of each counterexample equal the exact set's (``visited = "states"``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from explorer import release
from explorer.release_jobs import longest_first, run_jobs
from explorer.search import clear_stop
from explorer.suite import load_suite
from tests.test_pbfs import comparable

ROOT = Path(__file__).resolve().parent.parent
SUITE = {e.name: e for e in load_suite(str(ROOT / "configs" / "release.toml"))}

#: the suite's fast entries (each well under a second), one of each kind: plain, violations
#: expected (with pinned lengths), symmetry-reduced (and one with eventually properties below)
FAST = [
    "controller-small",
    "controller-symmetric-partitions",
]
#: the suite's entries under about 60,000 states (the slow comparison; controller-ref and the
#: larger ones are compared by the release itself: benchmarks/bench_release.py's entries)
SMALL = [
    "timing-wheel-ref",
    "simple-timing-wheel-ref",
    "controller-topic-creation",
    "controller-topic-creation-replicated",
    "controller-metadata",
    "controller-spare-brokers",
    "controller-cold-start-symmetric",
    "controller-cold-start-symmetric-metadata",
    "controller-records",
    "controller-records-restart",
    "controller-unclean-election",
    "controller-admin-strict-transitions",
    "controller-zk-connection-loss-cold-start",
]


def _slow(i: int) -> int:
    time.sleep(0.05 * i)
    return i * i


def _sleep(seconds: int) -> int:
    time.sleep(seconds)
    return seconds


def _raise(i: int) -> int:
    if i == 1:
        raise ValueError("job 1 failed")
    return i


def test_results_come_back_in_the_items_order_whatever_order_they_end_in() -> None:
    ended: list[int] = []
    out, interrupted = run_jobs(
        [3, 0, 2, 1],
        _slow,
        jobs=2,
        order=[0, 1, 2, 3],
        not_run=lambda i: -1,
        on_done=lambda i, r, t: ended.append(i),
    )
    assert out == [9, 0, 4, 1] and not interrupted and sorted(ended) == [0, 1, 2, 3]
    assert ended[0] == 1  # item 0 sleeps longest, item 1 not at all: it ends first


def test_what_a_job_prints_is_handed_over_with_its_result() -> None:
    texts: dict[int, str] = {}

    def talk(i: int) -> int:
        print(f"job {i} says hello")
        return i

    run_jobs([0, 1], talk, jobs=2, not_run=lambda i: -1, on_done=lambda i, r, t: texts.__setitem__(i, t))
    assert texts == {0: "job 0 says hello\n", 1: "job 1 says hello\n"}


def test_a_job_that_raises_raises_in_the_caller() -> None:
    with pytest.raises(ValueError, match="job 1 failed"):
        run_jobs([0, 1, 2], _raise, jobs=2, not_run=lambda i: -1)


def test_an_interrupt_stops_the_running_jobs_and_starts_no_more() -> None:
    """SIGINT while jobs run: forwarded once to each worker (here, sleeping outside any search,
    they raise KeyboardInterrupt), none started after it, the rest not run."""
    started: list[int] = []
    t = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t.start()
    try:
        out, interrupted = run_jobs(
            [30, 30, 30],
            _sleep,
            jobs=2,
            not_run=lambda i: None,
            on_start=started.append,
        )
    finally:
        t.cancel()
        clear_stop()  # as the next command's stop_on_signals does
    assert interrupted and out == [None, None, None] and started == [0, 1]


def test_longest_first_orders_by_the_last_run_then_the_budget() -> None:
    names = ["small", "ref", "new"]
    assert longest_first(names, {"small": 0.5, "ref": 300.0}, [300, 1800, 60]) == [1, 2, 0]
    assert longest_first(names, {}, [300, 1800, 300]) == [1, 0, 2]


def _same_as_the_exact_set(name: str, passes: bool = True) -> None:
    e = SUITE[name]
    a = release.run_entry(e, visited="states")
    b = release.run_entry(e)
    assert release.RELEASE_VISITED == "fingerprints" and any("collision odds" in n for n in b.result.notes)
    assert comparable(b.result) == comparable(a.result)
    assert (b.status, b.message, b.requirements) == (a.status, a.message, a.requirements)
    assert (b.arrows, b.views) == (a.arrows, a.views)
    assert b.status == "pass" or not passes


@pytest.mark.slow  # 1.3 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("name", FAST)
def test_fast_entries_with_fingerprints_equal_the_exact_set(name: str) -> None:
    _same_as_the_exact_set(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL)
def test_small_entries_with_fingerprints_equal_the_exact_set(name: str) -> None:
    _same_as_the_exact_set(name)


def test_an_entry_with_eventually_properties_records_its_graph_as_fingerprints() -> None:
    """``controller-admin-reassign-follower`` checks liveness (its configuration file turns it on):
    with fingerprints its graph is recorded as fingerprints and decided as ``--workers`` decides
    it; the same result as the exact set's edges."""
    e = SUITE["controller-admin-reassign-follower"]
    assert "liveness=true" not in e.set
    _same_as_the_exact_set(e.name)
    x = release.run_entry(e)
    assert any(p["kind"] == "eventually" for p in x.result.properties.values())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["controller-admin", "controller-admin-shutdowns-selectors-0.8"])
def test_entries_with_eventually_properties_with_fingerprints_equal_the_exact_set(name: str) -> None:
    """A liveness entry whose properties hold (27,663 states) and one whose lassos are found."""
    _same_as_the_exact_set(name, passes=False)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from ``/proc``)."""
    out = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as fh:
                if d.isdigit() and int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d))
        except (OSError, ValueError):
            continue
    return out


@pytest.mark.slow
def test_a_release_with_two_jobs_interrupted_writes_its_report(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the release alone) while two entries run side by side: both stop with a
    partial result, the third never starts, the report is written, exit 3."""
    names = "timing-wheel-ref,purgatory-ref,controller-small"
    p = subprocess.Popen(
        [sys.executable, "-m", "explorer", "release", "--entries", names, "--jobs", "2", "--report-dir", "r"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert p.stdout is not None
    deadline = time.monotonic() + 60  # both searches under way: two workers (a start is said on a
    while len(_children(p.pid)) < 2 and time.monotonic() < deadline:  # terminal only)
        time.sleep(0.1)
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    out = p.stdout.read()
    assert p.wait(timeout=120) == 3, out
    doc: dict[str, Any] = json.loads(next((tmp_path / "r").glob("2*/report.json")).read_text())
    status = {en["name"]: (en["status"], en["result"]["exit_reason"]) for en in doc["entries"]}
    assert status["controller-small"][0] == "not-run" and doc["interrupted"]
    assert {status["timing-wheel-ref"], status["purgatory-ref"]} == {("budget", "interrupted")}
    assert [en["name"] for en in doc["entries"]] == names.split(",")
