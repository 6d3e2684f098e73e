"""The spark engine against a standalone cluster on 127.0.0.1 that loses its worker mid-run.

A master and a one-core worker are started from the pyspark package
(``$SPARK_HOME/bin/spark-class``); a check runs against them with a reliable
checkpoint directory; after a few levels the worker is killed by PID (its executor
goes with it) and another worker is started; the result must equal ``bfs``'s.
Everything started is stopped by PID, also when the test fails; every wait is
bounded. Run: ``python -m pytest tests/test_spark_cluster.py -m spark_cluster -q -p no:cacheprovider``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.engines.bfs import check_bfs
from explorer.engines.spark import SparkSetupError, check_java, check_spark, spark_session
from explorer.tracefile import replay_steps
from tests.timeouts import time_limit
from tests.toys import Grid

pytestmark = pytest.mark.spark_cluster

TEST_SECONDS = 900
START_SECONDS = 90  # bound for a master or worker to come up


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_port(port: int, proc: subprocess.Popen[bytes], seconds: float, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {seconds} s: {log.read_text()[-2000:]}")


def _start_time(pid: int) -> str | None:
    """The start time of a process (field 22 of /proc/PID/stat), to tell a reused PID apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _kill_if_same(pid: int, started: str | None) -> None:
    """SIGKILL ``pid`` only if it is still the process we saw (same start time)."""
    if started is not None and _start_time(pid) == started:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc), children first listed before theirs."""
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = (task / "children").read_text().split()
            except OSError:
                continue
            for k in kids:
                out.append(int(k))
                todo.append(int(k))
    return out


class Cluster:
    """Processes started for the test, each stopped by its PID."""

    def __init__(self, root: Path):
        import pyspark

        self.home = Path(pyspark.__file__).resolve().parent
        self.root = root
        self.procs: list[subprocess.Popen[bytes]] = []
        self.known: dict[int, str | None] = {}  # pid -> start time
        self.env = {
            **os.environ,
            "SPARK_HOME": str(self.home),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(root / "logs"),
            "SPARK_WORKER_DIR": str(root / "work"),
        }
        self.master_port = _free_port()
        self.master_url = f"spark://127.0.0.1:{self.master_port}"

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = self.root / f"{name}.log"
        with open(log, "wb") as fh:
            proc = subprocess.Popen(
                [str(self.home / "bin" / "spark-class"), *args],
                stdout=fh,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
        self.procs.append(proc)
        self.known[proc.pid] = _start_time(proc.pid)
        return proc

    def start_master(self) -> None:
        proc = self._start(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.master_port),
                "--webui-port",
                str(_free_port()),
            ],
        )
        _wait_port(self.master_port, proc, START_SECONDS, self.root / "master.log")

    def start_worker(self, name: str) -> subprocess.Popen[bytes]:
        port = _free_port()
        proc = self._start(
            name,
            [
                "org.apache.spark.deploy.worker.Worker",
                self.master_url,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--cores",
                "1",
                "--memory",
                "1g",
                "--webui-port",
                str(_free_port()),
                "--work-dir",
                str(self.root / "work"),
            ],
        )
        _wait_port(port, proc, START_SECONDS, self.root / f"{name}.log")
        return proc

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL a process and every process below it, by PID; reap it (bounded)."""
        kids = {k: _start_time(k) for k in _descendants(proc.pid)}
        self.known.update(kids)
        if proc.poll() is None:
            proc.kill()
        for pid, started in kids.items():
            _kill_if_same(pid, started)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)

    def stop_all(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                self.known.update({k: _start_time(k) for k in _descendants(proc.pid)})
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.kill(proc)
        for pid, started in self.known.items():  # executors and Python workers left behind
            _kill_if_same(pid, started)


@pytest.fixture(autouse=True)
def _bounded() -> Iterator[None]:
    with time_limit(TEST_SECONDS):
        yield


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    try:
        check_java()
    except SparkSetupError as e:
        pytest.skip(str(e))
    c = Cluster(tmp_path)
    request.addfinalizer(c.stop_all)
    c.start_master()
    yield c


def comparable(r: Any) -> dict[str, Any]:
    d = r.to_json()
    for k in ("seconds", "states_per_second", "engine", "notes"):
        d.pop(k)
    for lv in d["levels"]:
        lv.pop("seconds")
    return d


def test_losing_the_worker_mid_run_gives_the_bfs_answer(cluster: Cluster, tmp_path: Path) -> None:
    first = cluster.start_worker("worker-1")
    session = spark_session(
        cluster.master_url,
        app_name="kafka-mc cluster test",
        conf={
            "spark.executor.memory": "512m",
            "spark.driver.memory": "1g",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.sql.shuffle.partitions": "2",
        },
        executor_wait=START_SECONDS,
    )
    try:
        g = Grid(14, terminal=False, limit=20)
        props = g.properties()
        run_dir = tmp_path / "run"
        killed: dict[str, Any] = {}

        def lose_worker() -> None:
            # after a checkpoint and a few more levels, kill worker 1 and start worker 2
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                if len(list(run_dir.glob("level-*.npz"))) >= 9:
                    killed["at_level"] = len(list(run_dir.glob("level-*.npz")))
                    cluster.kill(first)
                    killed["second"] = cluster.start_worker("worker-2")
                    return
                time.sleep(0.05)

        thread = threading.Thread(target=lose_worker, daemon=True)
        thread.start()
        s = check_spark(
            g,
            props,
            spark=session,
            partitions=2,
            local_frontier=0,
            keep_going=True,
            run_dir=run_dir,
            checkpoint_dir=tmp_path / "checkpoints",
            checkpoint_every=3,
            max_seconds=600,
        )
        thread.join(timeout=120)
        assert "at_level" in killed, "the worker was not killed during the run"
        assert first.poll() is not None
        assert killed["at_level"] < s.max_depth, "the worker was killed after the search"
        assert list((tmp_path / "checkpoints").rglob("*")), "no reliable checkpoint was written"
        b = check_bfs(g, props, keep_going=True)
        assert comparable(b) == comparable(s)
        assert "on Spark (spark://127.0.0.1" in s.notes[-1]
        for v in s.violations:
            if v.trace:
                replay_steps(g, [{"action": st.action, "fingerprint": st.fingerprint} for st in v.trace])
    finally:
        session.stop()


def test_master_without_workers_is_a_one_line_error(cluster: Cluster) -> None:
    t0 = time.monotonic()
    with pytest.raises(SparkSetupError) as info:
        check_spark(
            Grid(2),
            [],
            master=cluster.master_url,
            local_frontier=0,
            executor_wait=5,
            spark_conf={"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"},
        )
    assert time.monotonic() - t0 < 120
    msg = str(info.value)
    assert "\n" not in msg and "no Spark executor registered" in msg
