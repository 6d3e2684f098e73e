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
