"""The spark engine starting its own session in the background while the driver runs levels.

Each case runs in a fresh interpreter: a SparkContext is one per process, and the other
spark tests share one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import json, os, sys, threading, time
sys.path.insert(0, {root!r})
import explorer.engines.spark.driver as driver
from explorer.engines.bfs import check_bfs
from explorer.engines.spark import check_spark, SparkSetupError
from tests.toys import Grid

DRIVER, GATING = os.getpid(), [False]


def starting():
    return any(t.name == "kafka-mc-spark-start" and t.is_alive() for t in threading.enumerate())


class SlowGrid(Grid):
    # a level takes long enough here for the session to come up between levels; with a gate,
    # the driver (not a Spark worker) expanding a state of that level or deeper waits for the
    # session's start to end, however slow the JVM is on this machine
    def successors(self, s):
        time.sleep({sleep})
        if {gate} is not None and GATING[0] and os.getpid() == DRIVER and sum(s) >= {gate}:
            t0 = time.time()
            while starting() and time.time() - t0 < 240:
                time.sleep(0.05)
        return super().successors(s)

driver.WAIT_UPTO = {wait_upto}
if {fail_after} is not None:  # a start that fails after a while, as a JVM that cannot start does
    import explorer.engines.spark.session as session

    def failing(master, *args):
        time.sleep({fail_after})
        raise SparkSetupError(f"cannot start Spark with master {{master}}: the JVM did not start")

    session.start_session = failing
g = SlowGrid({n})
GATING[0] = True
try:
    s = check_spark(g, g.properties(), master={master!r}, local_frontier={lf},
                    spark_conf={{"spark.driver.memory": "512m"}})
except SparkSetupError as e:
    print(json.dumps({{"error": str(e)}}))
    raise SystemExit(0)
GATING[0] = False
b = check_bfs(g, g.properties())
from pyspark import SparkContext
from explorer.engines.spark.session import SessionStarter
pending = SessionStarter._pending
if pending is not None:  # abandoned: it stops itself once up
    pending.thread.join()
print(json.dumps({{
    "same": (s.distinct_states, s.generated_states, s.max_depth, [v.property for v in s.violations])
    == (b.distinct_states, b.generated_states, b.max_depth, [v.property for v in b.violations]),
    "note": [n for n in s.notes if n.startswith("spark:") and "levels" in n][0],
    "stopped": SparkContext._active_spark_context is None,
    "started": SparkContext._gateway is not None,
    "abandoned": pending is not None,
}}))
"""


def _run(tmp_path: Path, **kw: object) -> dict[str, object]:
    args = {
        "sleep": 0.0,
        "wait_upto": 8,
        "n": 30,
        "master": "local[1]",
        "lf": 20,
        "root": str(ROOT),
        "fail_after": None,
        "gate": None,
    }
    args.update(kw)
    script = tmp_path / "case.py"
    script.write_text(SCRIPT.format(**args))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_driver_runs_levels_while_the_session_starts_and_the_answer_is_bfs_s(tmp_path: Path) -> None:
    # each state takes 10 ms: the session starts at level 4 (frontier local_frontier / 4);
    # level 19, the first whose frontier reaches local_frontier, runs in the driver as the
    # JVM is not up yet (levels 4 to 18 take about 2 s), and its states wait for the start to
    # end (a JVM can take longer than the whole search on a loaded machine); the levels
    # after it whose frontier reaches local_frontier then run on Spark
    got = _run(tmp_path, sleep=0.01, wait_upto=100, gate=19)
    assert got["same"] and got["stopped"]
    note = str(got["note"])
    assert "while the Spark session was starting" in note and "on Spark" in note
    assert " 0 on Spark" not in note


def test_a_search_that_outgrows_the_wait_waits_for_the_session(tmp_path: Path) -> None:
    # WAIT_UPTO = 1: at local_frontier the driver waits for the session, whatever its state
    got = _run(tmp_path, wait_upto=1)
    assert got["same"] and got["stopped"]
    assert "while the Spark session was starting" not in str(got["note"])
    assert " 0 on Spark" not in str(got["note"])


def test_a_session_started_but_never_used_is_stopped(tmp_path: Path) -> None:
    # the frontier reaches local_frontier / START_EARLY (the session starts) but never
    # local_frontier: every level runs in the driver, the search returns without waiting
    # for the JVM, and the session stops itself once up
    got = _run(tmp_path, n=8, lf=30)
    assert got["same"] and got["abandoned"] and got["started"] and got["stopped"]
    assert "all 17 levels ran in the driver (frontiers below 30)" in str(got["note"])


@pytest.mark.parametrize("sleep", [0.0, 0.01], ids=["search-ends-first", "start-fails-first"])
def test_a_failed_background_start_is_the_same_one_line_error(tmp_path: Path, sleep: float) -> None:
    # whether the search still runs when the start fails, or has ended in the driver while
    # waiting for the session, a search that reached local_frontier reports the failure
    # (the start is replaced by one that fails after a second, as a JVM that cannot start
    # does; the JVM's own refusals are tested in test_spark.py: they are caught before any work)
    got = _run(tmp_path, fail_after=1.0, sleep=sleep, wait_upto=100)
    msg = str(got["error"])
    assert "\n" not in msg and msg.startswith("cannot start Spark with master local[1]")
