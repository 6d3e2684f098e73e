"""The real-ZooKeeper fixture (``tests/zookeeper_server.py``) leaves nothing behind: no JVM and
no temporary folder, also when the test body fails; and it says in one line why it cannot run."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import zookeeper_server
from tests.zookeeper_server import ZooKeeperServer, missing


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie of ours would still answer: reaped by Popen.wait in stop()
    return False


@pytest.mark.zookeeper
@pytest.mark.skipif(missing() is not None, reason=f"zookeeper: {missing()}")
def test_the_server_is_stopped_and_its_folder_removed_even_on_failure() -> None:
    from kazoo.client import KazooClient

    server = ZooKeeperServer()
    with pytest.raises(RuntimeError, match="the body failed"), server:
        assert server.proc is not None
        pid, folder = server.proc.pid, server.folder
        client = KazooClient(hosts=server.hosts, timeout=4.0)
        client.start(timeout=10)
        client.create("/x", b"1", ephemeral=True)
        client.stop()
        client.close()
        raise RuntimeError("the body failed")
    assert _gone(pid) and not Path(folder).exists()
    assert server not in zookeeper_server._RUNNING
    server.stop()  # stopping twice is harmless


def test_missing_says_why_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(zookeeper_server.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(zookeeper_server, "JAR", tmp_path / "no-such.jar")
    assert missing() == (
        f"no ZooKeeper server at {tmp_path / 'no-such.jar'} (install Debian's package: apt-get install zookeeper)"
    )
    monkeypatch.setattr(zookeeper_server.shutil, "which", lambda name: None)
    assert missing() == "no java on PATH (the server needs Java 17)"


@pytest.mark.zookeeper
@pytest.mark.skipif(missing() is not None, reason=f"zookeeper: {missing()}")
def test_the_server_dies_with_a_killed_test_process(tmp_path: Path) -> None:
    """A test process killed outright (SIGKILL: no finalizer, no atexit) takes its server along."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "hold.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})\n"
        "from tests.zookeeper_server import ZooKeeperServer\n"
        "z = ZooKeeperServer(); z.start()\n"
        "print(z.proc.pid, z.folder, flush=True)\n"
        "time.sleep(600)\n"
    )
    holder = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    pid_text, folder = holder.stdout.readline().split()
    pid = int(pid_text)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=10)
    deadline = time.monotonic() + 20
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _gone(pid)
    # the next server started removes the folder the killed process could not
    assert Path(folder).exists()
    with ZooKeeperServer():
        assert not Path(folder).exists()


class _FakeServer:
    """A TCP server on 127.0.0.1 that answers every connection with ``answer()`` (what a
    ZooKeeper server says to ``conf``) and records the words it was sent."""

    def __init__(self, answer: Callable[[], str]) -> None:
        import socket
        import threading

        self.answer = answer
        self.words: list[str] = []
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = int(self.sock.getsockname()[1])
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.words.append(conn.recv(4).decode())
                conn.sendall(self.answer().encode())

    def close(self) -> None:
        import socket

        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread: nothing listens
        self.sock.close()


def _conf(data_dir: Path | str) -> str:
    return f"clientPort=2181\nsecureClientPort=-1\ndataDir={data_dir}/version-2\ndataDirSize=0\n"


def test_a_server_that_is_not_the_fixtures_own_is_recognised(tmp_path: Path) -> None:
    """The fixture asks the server on its port ``conf`` and believes it its own only when the
    answer names its own data folder: another fixture's server (another dataDir) is refused,
    no answer is 'not yet'. No Java needed."""
    server = ZooKeeperServer()
    other = _FakeServer(lambda: _conf(tmp_path / "another-fixture" / "data"))
    own = _FakeServer(lambda: _conf(server.folder / "data"))
    try:
        server.port = other.port
        assert server.answers_as_own() is False and other.words == ["conf"]
        server.port = own.port
        assert server.answers_as_own() is True
        own.close()
        assert server.answers_as_own() is None  # nothing listens: not (yet) a verdict
    finally:
        other.close()
        own.close()
        server.stop()


def _pretend_java(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Start ``sleep`` where the fixture starts Java, and count the starts; the session check
    (kazoo) always succeeds: what is tested is whose server answers ``conf``."""
    import subprocess

    launched: list[int] = []
    real = subprocess.Popen

    def popen(args: Any, **kw: Any) -> Any:
        launched.append(1)
        kw.pop("preexec_fn", None)
        return real(["sleep", "60"], **kw)

    monkeypatch.setattr(zookeeper_server.subprocess, "Popen", popen)
    monkeypatch.setattr(ZooKeeperServer, "_serves_a_session", lambda self: True)
    return launched


def test_the_fixture_moves_to_another_port_when_its_port_was_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A port probed free and taken before the server bound it: the server answering there is
    another's, so the fixture stops its own and starts again on another port."""
    launched = _pretend_java(monkeypatch)
    server = ZooKeeperServer(start_timeout=10)
    intruder = _FakeServer(lambda: _conf("/elsewhere/data"))
    own = _FakeServer(lambda: _conf(server.folder / "data"))
    ports = iter([own.port])
    monkeypatch.setattr(zookeeper_server, "free_port", lambda: next(ports))
    server.port, server.hosts = intruder.port, f"127.0.0.1:{intruder.port}"
    try:
        server.start()
        assert server.port == own.port and server.hosts == f"127.0.0.1:{own.port}" and len(launched) == 2
    finally:
        server.stop()
        intruder.close()
        own.close()


def test_the_fixture_gives_up_in_one_line_when_every_port_is_anothers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    launched = _pretend_java(monkeypatch)
    intruder = _FakeServer(lambda: _conf("/elsewhere/data"))
    monkeypatch.setattr(zookeeper_server, "free_port", lambda: intruder.port)
    server = ZooKeeperServer(start_timeout=10)
    folder = server.folder
    try:
        with pytest.raises(RuntimeError) as err:
            server.start()
        assert "\n" not in str(err.value) and "another server" in str(err.value), err.value
        assert len(launched) == zookeeper_server.START_ATTEMPTS
        assert server.proc is None and not folder.exists() and server not in zookeeper_server._RUNNING
    finally:
        intruder.close()
        server.stop()
