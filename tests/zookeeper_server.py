"""A real ZooKeeper server for the tests (issue 32): a fresh standalone server on 127.0.0.1 with a
temporary data folder, a free port and a short tick, started as its own process group and
always stopped (the context manager's exit, an ``atexit`` hook for an interrupted run, and the
kernel's parent-death signal when the test process is killed outright), so no JVM outlives it.

The server is Debian's ``zookeeper`` package (3.8, ``apt-get install zookeeper``; ``.ci/run``
installs it), run as ``java -cp /usr/share/java/zookeeper.jar ZooKeeperServerMain PORT DIR
TICK``; nothing is downloaded. :func:`missing` says in one line why a server cannot be started
here (no Java, no package, no ``kazoo``), for the tests to skip with it.

A port found free may be taken before the server binds it (by another fixture's server, in
another test process): the server answering there is then not this fixture's, and a test would
talk to a stranger. So the fixture believes a server its own only when it names its data folder
(each fixture's is a new temporary folder) in answer to the four-letter word ``conf``
(:meth:`ZooKeeperServer.answers_as_own`); another's answer makes it start again on another
port, :data:`START_ATTEMPTS` times at most.

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
#: the four-letter words the fixture's servers answer (``conf`` names the data folder)
FOUR_LETTER_WORDS = "conf,ruok,srvr"
#: ports tried before the fixture gives up on finding one no other server answers on
START_ATTEMPTS = 5

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


def four_letter_word(port: int, word: str, timeout: float = 2.0) -> str | None:
    """What the server on 127.0.0.1:``port`` answers to the four-letter word ``word`` (it
    closes the connection after it), or None when nothing answers there."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
            conn.sendall(word.encode("ascii"))
            chunks = []
            while chunk := conn.recv(65536):
                chunks.append(chunk)
    except OSError:
        return None
    return b"".join(chunks).decode("utf-8", "replace")


def data_dir_of(conf: str) -> str | None:
    """The data folder a ``conf`` answer names (without the ``version-2`` ZooKeeper appends),
    or None when it names none.

    >>> data_dir_of("clientPort=2181\\ndataDir=/tmp/zk/data/version-2\\ndataDirSize=0\\n")
    '/tmp/zk/data'
    """
    for line in conf.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "dataDir":
            path = value.strip()
            return str(Path(path).parent) if Path(path).name == "version-2" else path
    return None


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

    def answers_as_own(self) -> bool | None:
        """Whether the server answering on this fixture's port is its own: True when its
        ``conf`` names this fixture's data folder, False when it names another (another
        fixture's server took the port) or when something that is no ZooKeeper server listens
        there, None when nothing answers (yet)."""
        answer = four_letter_word(self.port, "conf")
        if answer is None or not answer.strip() or "not currently serving" in answer:
            return None  # nothing there, or a server still starting: no verdict yet
        named = data_dir_of(answer)
        return named is not None and os.path.realpath(named) == os.path.realpath(self.folder / "data")

    def _serves_a_session(self) -> bool:
        """Whether a client session can be opened on the server now."""
        from kazoo.client import KazooClient

        client = KazooClient(hosts=self.hosts, timeout=2.0)
        try:
            client.start(timeout=1.0)
            client.stop()
            return True
        except Exception:
            return False
        finally:
            client.close()

    def start(self) -> None:
        """Start the server and wait until it is this fixture's own (:meth:`answers_as_own`)
        and serves a session; on a port another server answers on, start again on another
        port; raise (one line, everything stopped) when it exits, does not answer in time, or
        another server answers on every port tried."""
        _RUNNING.add(self)
        for attempt in range(START_ATTEMPTS):
            if attempt:  # the port was taken in between: another one
                self.port = free_port()
                self.hosts = f"127.0.0.1:{self.port}"
            self._launch()
            if self._wait_until_own():
                return
            self._kill()
        self.stop()
        raise RuntimeError(
            f"ZooKeeper: another server answered on each of the {START_ATTEMPTS} ports tried "
            "(none names this fixture's data folder)"
        )

    def _wait_until_own(self) -> bool:
        """True once the server on the port is this fixture's and serves a session, False when
        another one answers there; raise (stopped) when ours exits or the time is up."""
        assert self.proc is not None
        deadline = time.monotonic() + self.start_timeout
        while True:
            own = self.answers_as_own()
            if own is False:
                return False
            if own and self._serves_a_session():
                return True
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.stop()
                raise RuntimeError(f"ZooKeeper exited at start (code {code})")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"ZooKeeper did not serve on {self.hosts} within {self.start_timeout:.0f} s"
                )
            time.sleep(0.2)

    def _launch(self) -> None:
        """Start the JVM on ``self.port`` (its log appended to the folder's ``server.log``)."""
        with open(self.folder / "server.log", "ab") as log:
            self.proc = subprocess.Popen(
                [
                    "java",
                    "-Xmx256m",
                    f"-Dzookeeper.4lw.commands.whitelist={FOUR_LETTER_WORDS}",
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

    def stop(self) -> None:
        """Kill the server's process group, wait for it, remove its folder (idempotent)."""
        self._kill()
        shutil.rmtree(self.folder, ignore_errors=True)
        _RUNNING.discard(self)

    def _kill(self) -> None:
        """Kill the server's process group and wait for it (the folder stays)."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@atexit.register
def _stop_all() -> None:  # an interrupted run still stops its servers
    for server in list(_RUNNING):
        server.stop()
