"""The real-ZooKeeper fixture (``tests/zookeeper_server.py``) leaves nothing behind: no JVM and
no temporary folder, also when the test body fails; and it says in one line why it cannot run."""

from __future__ import annotations

import os
from pathlib import Path

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
