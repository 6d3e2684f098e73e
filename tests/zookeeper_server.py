"""A real ZooKeeper server for the tests (issue 32): a fresh standalone server on 127.0.0.1 with a
temporary data folder, a free port and a short tick, started as its own process group and
always stopped (the context manager's exit, an ``atexit`` hook for an interrupted run, and the
kernel's parent-death signal when the test process is killed outright), so no JVM outlives it.

The server is Debian's ``zookeeper`` package (3.8, ``apt-get install zookeeper``; ``.ci/run``
installs it), run as ``java -cp /usr/share/java/zookeeper.jar ZooKeeperServerMain PORT DIR
TICK``; nothing is downloaded. :func:`missing` says in one line why a server cannot be started
here (no Java, no package, no ``kazoo``), for the tests to skip with it.

>>> missing() is None or missing().startswith("no ")
True
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

#: where Debian's package puts the server (and the jars its manifest names)
JAR = Path(os.environ.get("KAFKA_MC_ZOOKEEPER_JAR", "/usr/share/java/zookeeper.jar"))
MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
#: milliseconds per tick: sessions time out between 2 and 20 ticks
TICK_MS = 200

_RUNNING: set[ZooKeeperServer] = set()


def missing() -> str | None:
    """Why no server can be started here (one line), or None."""
    if shutil.which("java") is None:
        return "no java on PATH (the server needs Java 17)"
    if not JAR.exists():
        return f"no ZooKeeper server at {JAR} (install Debian's package: apt-get install zookeeper)"
    try:
        import kazoo  # noqa: F401
    except ImportError:
        return "no kazoo (pip install -e '.[dev]')"
    return None


#: a server's folder is named after the process that owns it: PREFIX<pid>-<random>
PREFIX = "kafka-mc-zk-"


def _remove_stale_folders() -> None:
    """Remove the folders of servers whose owning process is gone (killed outright, it could
    not remove its own)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*-*"):
        try:
            owner = int(folder.name[len(PREFIX) :].split("-", 1)[0])
        except ValueError:
            continue
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            pass  # another user's process: alive


def _die_with_parent() -> None:
    """In the server's process before ``exec``: the kernel kills it when the test process dies,
    however it dies (``kill -9``, a SIGTERM that skips ``atexit``; Linux's ``PR_SET_PDEATHSIG``)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ZooKeeperServer:
    """One standalone server; ``with ZooKeeperServer() as zk: zk.hosts``."""

    def __init__(self, start_timeout: float = 60.0) -> None:
        self.port = free_port()
        self.hosts = f"127.0.0.1:{self.port}"
        _remove_stale_folders()
        self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ZooKeeperServer:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Start the server and wait until it serves a session (or raise, stopped)."""
        with open(self.folder / "server.log", "wb") as log:
            self.proc = subprocess.Popen(
                [
                    "java",
                    "-Xmx256m",
                    "-cp",
                    str(JAR),
                    MAIN,
                    str(self.port),
                    str(self.folder / "data"),
                    str(TICK_MS),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: stop() kills the whole JVM
                preexec_fn=_die_with_parent,
            )
        log.close()
        _RUNNING.add(self)
        deadline = time.monotonic() + self.start_timeout
        from kazoo.client import KazooClient

        while True:
            if self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"ZooKeeper exited at start (code {self.proc.returncode})")
            client = KazooClient(hosts=self.hosts, timeout=2.0)
            try:
                client.start(timeout=1.0)
                client.stop()
                client.close()
                return
            except Exception:
                client.close()
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"ZooKeeper did not serve on {self.hosts} within {self.start_timeout:.0f} s"
                    ) from None
                time.sleep(0.2)

    def stop(self) -> None:
        """Kill the server's process group, wait for it, remove its folder (idempotent)."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)
        _RUNNING.discard(self)


@atexit.register
def _stop_all() -> None:  # an interrupted run still stops its servers
    for server in list(_RUNNING):
        server.stop()
