"""Folders kafka-mc owns are opened without following links (issue 53, item 2).

A checkpoint folder, a release's report folder, ``shrink --out-dir``, ``--save-traces`` and the
search's work files may come from someone else (a checkpoint is copied between machines, a
report folder is shared). A symbolic link planted at a name kafka-mc writes, truncates or
deletes must not make it write, truncate or delete what the link points at: each test plants
one pointing at a *victim* outside the folder (a file with known content, or a folder with
files in it), runs the writer, and checks the victim is as it was and the writer either
refused in one line (exit 2) or replaced only the link.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from explorer.cli import main
from tests.test_checkpoint import kafka_mc

GRID = ["check", "--system", "tests.toys:Grid", "--set", "n=12"]
PRECIOUS = b"precious: not kafka-mc's to touch"


class Victims:
    """A file and a folder outside every folder kafka-mc owns, with known content."""

    def __init__(self, tmp: Path) -> None:
        self.file = tmp / "victim.txt"
        self.file.write_bytes(PRECIOUS)
        self.dir = tmp / "victim"
        self.dir.mkdir()
        for name in ("keep.txt", "W0.bin", "L000001-000000.bin", "R000000.bin"):
            (self.dir / name).write_bytes(PRECIOUS)

    def untouched(self) -> None:
        assert self.file.read_bytes() == PRECIOUS, "the victim file was written through a link"
        names = sorted(p.name for p in self.dir.iterdir())
        assert names == ["L000001-000000.bin", "R000000.bin", "W0.bin", "keep.txt"], names
        for p in self.dir.iterdir():
            assert p.read_bytes() == PRECIOUS, p


@pytest.fixture
def victims(tmp_path: Path) -> Victims:
    return Victims(tmp_path)


def _refused(capsys: pytest.CaptureFixture[str], code: int, name: str) -> None:
    """Exit 2, one line on stderr, naming ``name`` as a symbolic link."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (code, err)
    assert name in lines[0] and "symbolic link" in lines[0], lines[0]


# -- checkpoint folders ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A serial checkpoint killed mid-search (a snapshot to resume, levels still to go)."""
    ck = tmp_path_factory.mktemp("crashed") / "ck"
    r = kafka_mc(
        [*GRID, "--checkpoint", str(ck), "--checkpoint-every", "0", "--frontier-batch", "4", "--quiet"],
        crash="state:8",
    )
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert (ck / "CURRENT").exists()
    return ck


def _copy(ck: Path, tmp: Path) -> Path:
    out = tmp / "ck"
    shutil.copytree(ck, out)
    return out


def _resume(ck: Path, *extra: str) -> int:
    return main(["check", "--resume", str(ck), "--system", "tests.toys:Grid", "--quiet", *extra])


def _plant(at: Path, target: Path) -> None:
    if at.is_dir() and not at.is_symlink():
        shutil.rmtree(at)
    else:
        at.unlink(missing_ok=True)
    at.symlink_to(target)


@pytest.mark.parametrize(
    "name, kind",
    [
        ("lock", "file"),  # opened, truncated and written with the pid
        ("parents.bin", "file"),  # truncated to the records the snapshot knows
        ("frontier", "dir"),  # every file in it deleted as stale
        ("CURRENT.tmp", "file"),  # written, then renamed over CURRENT
        ("snap-999999", "dir"),  # an unused snapshot: removed
        ("tmp-999999", "dir"),  # an unfinished snapshot: removed
    ],
)
def test_resume_refuses_a_link_in_the_checkpoint_folder(
    crashed: Path,
    tmp_path: Path,
    victims: Victims,
    capsys: pytest.CaptureFixture[str],
    name: str,
    kind: str,
) -> None:
    ck = _copy(crashed, tmp_path)
    if name == "parents.bin":  # a longer file than the log: truncating it would cut it
        victims.file.write_bytes((ck / name).read_bytes() + PRECIOUS)
        expected = victims.file.read_bytes()
    _plant(ck / name, victims.file if kind == "file" else victims.dir)
    code = _resume(ck)
    if name == "parents.bin":
        assert victims.file.read_bytes() == expected, "the victim was truncated through a link"
        victims.file.write_bytes(PRECIOUS)
    victims.untouched()
    _refused(capsys, code, name)


def test_resume_refuses_a_link_among_a_snapshots_files(
    crashed: Path, tmp_path: Path, victims: Victims, capsys: pytest.CaptureFixture[str]
) -> None:
    """A snapshot's frontier file is hard-linked into ``frontier/`` on resume: through a link
    that would be the victim itself (even with its checksum right in ``snapshot.json``)."""
    ck = _copy(crashed, tmp_path)
    snap = ck / (ck / "CURRENT").read_text().strip()
    batch = sorted(snap.glob("F*.bin"))[0]
    data = batch.read_bytes()
    victims.file.write_bytes(data)  # the same bytes: the checksum matches
    _plant(batch, victims.file)
    code = _resume(ck)
    assert victims.file.read_bytes() == data
    _refused(capsys, code, batch.name)


def test_resume_with_workers_refuses_a_linked_frontier_folder(
    tmp_path: Path, victims: Victims, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ``--workers`` search writes each process's share to ``frontier/W<i>.bin`` at every
    snapshot and deletes it after: through a linked ``frontier`` that is the victim's folder."""
    ck = tmp_path / "ck"
    r = kafka_mc(
        [*GRID, "--checkpoint", str(ck), "--checkpoint-every", "0", "--workers", "2", "--quiet"],
        crash="state:8",
    )
    assert r.returncode == -signal.SIGKILL, r.stderr
    _plant(ck / "frontier", victims.dir)
    code = _resume(ck, "--workers", "2")
    victims.untouched()
    _refused(capsys, code, "frontier")


def test_a_new_checkpoint_refuses_a_linked_lock(
    tmp_path: Path, victims: Victims, capsys: pytest.CaptureFixture[str]
) -> None:
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "lock").symlink_to(victims.file)
    code = main([*GRID, "--checkpoint", str(ck), "--quiet"])
    victims.untouched()
    _refused(capsys, code, "lock")


# -- the search's own files, written inside those folders --------------------------------------


def test_the_parent_log_replaces_a_link_and_never_truncates_through_one(
    tmp_path: Path, victims: Victims
) -> None:
    from explorer.search.visited import NO_PARENT, ParentLog

    path = tmp_path / "parents.bin"
    path.symlink_to(victims.file)
    log = ParentLog(path)  # a new log: the link replaced by the log's own file
    assert not path.is_symlink()
    log.append(NO_PARENT, 0, 11)
    log.flush()
    victims.untouched()
    path.unlink()
    path.symlink_to(victims.file)
    with pytest.raises(OSError, match="symbolic link"):  # a resumed log: refused
        ParentLog(path, resume_count=1)
    path.unlink()
    path.write_bytes(b"")
    log = ParentLog(path)
    log.append(NO_PARENT, 0, 11)
    path.unlink()
    path.symlink_to(victims.file)
    with pytest.raises(OSError, match="symbolic link"):  # appended: refused
        log.flush()
    victims.untouched()


def test_a_spilled_frontier_batch_replaces_a_link(tmp_path: Path, victims: Victims) -> None:
    from explorer.search.frontier import LevelQueue

    work = tmp_path / "frontier"
    work.mkdir()
    (work / "L000001-000000.bin").symlink_to(victims.file)
    q = LevelQueue(work, 1, limit=2, chunk=2)
    for s in range(5):
        q.tail.append(s)
        if len(q.tail) >= q.threshold:
            q.spill()
    assert [list(b) for b in q.batches()] == [[0, 1], [2, 3], [4]]
    victims.untouched()


def test_a_workers_frontier_share_replaces_a_link(tmp_path: Path, victims: Victims) -> None:
    from explorer.search.pool import dump_share, load_share

    path = tmp_path / "W0.bin"
    path.symlink_to(victims.file)
    dump_share(path, [(0, 1)], [0])
    assert not path.is_symlink() and load_share(path) == ([(0, 1)], [0])
    victims.untouched()


def test_a_snapshot_replaces_links_at_its_own_names(tmp_path: Path, victims: Victims) -> None:
    from explorer.search.checkpoint import read_snapshot, write_manifest, write_snapshot
    from explorer.search.visited import new_table

    ck = tmp_path / "ck"
    ck.mkdir()
    write_manifest(ck, {})
    (ck / "tmp-000001").symlink_to(victims.dir)  # the name the snapshot is written under
    (ck / "snap-000000").symlink_to(victims.dir)  # an older snapshot: removed after
    (ck / "CURRENT.tmp").symlink_to(victims.file)
    write_snapshot(ck, 1, {"seq": 1}, new_table(), [])
    assert (ck / "CURRENT").read_text() == "snap-000001"
    assert read_snapshot(ck) is not None
    assert sorted(p.name for p in ck.iterdir()) == ["CURRENT", "manifest.json", "snap-000001"]
    victims.untouched()


# -- output folders ----------------------------------------------------------------------------


def test_release_files_replace_links(tmp_path: Path, victims: Victims) -> None:
    from explorer.release import _point_latest, _write_text_atomic

    reports = tmp_path / "reports"
    run = reports / "20240101-000000"
    run.mkdir(parents=True)
    (reports / f".index.html.{os.getpid()}.tmp").symlink_to(victims.file)
    (reports / "latest").symlink_to(victims.dir)
    (run / f".index.html.{os.getpid()}.tmp").symlink_to(victims.file)
    _write_text_atomic(reports / "index.html", "<html></html>")
    _write_text_atomic(run / "index.html", "<html></html>")
    _point_latest(str(reports), run.name)
    assert os.readlink(reports / "latest") == run.name
    assert (reports / "index.html").read_text() == "<html></html>"
    victims.untouched()


def test_shrink_out_dir_replaces_links(tmp_path: Path, victims: Victims) -> None:
    from explorer.shrink import shrink_main
    from tests.test_shrink import _trace_file

    trace = _trace_file(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    for name in (
        "test_grid_sum_below_limit_shrunk.py",
        "test_grid_sum_below_limit_shrunk.py.tmp",
        "tests.toys_grid-sum_below_limit-shrunk.json",
    ):
        (out / name).symlink_to(victims.file)
    argv = [str(trace), "--system", "tests.toys:grid", "--out-dir", str(out), "--no-config", "--quiet"]
    assert shrink_main(argv) == 0
    victims.untouched()
    assert sorted(p.name for p in out.iterdir() if not p.is_symlink()) == [
        "test_grid_sum_below_limit_shrunk.py",
        "tests.toys_grid-sum_below_limit-shrunk.json",
    ]  # the links replaced by the files; the temporary file's link removed


def test_save_traces_and_json_replace_links(tmp_path: Path, victims: Victims) -> None:
    from explorer.tracefile import write_json_atomic

    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "tests.toys_grid-sum_below_limit.json").symlink_to(victims.file)
    bad = ["check", "--system", "tests.toys:grid", "--set", "n=4", "--set", "limit=3", "--quiet"]
    assert main([*bad, "--save-traces", str(traces), "--overwrite-traces"]) == 1
    assert not (traces / "tests.toys_grid-sum_below_limit.json").is_symlink()
    out = tmp_path / "r.json"
    out.symlink_to(victims.file)
    write_json_atomic(out, {"a": 1})  # the API writer: the link replaced, never written through
    assert not out.is_symlink()
    victims.untouched()


def test_mutate_results_never_truncates_or_appends_through_a_link(tmp_path: Path, victims: Victims) -> None:
    from explorer.frontend import UsageError
    from explorer.mutation.command import _open_results

    results = tmp_path / "results.jsonl"
    results.symlink_to(victims.file)
    try:
        _open_results(results, [], False, False, False)
    except (UsageError, OSError) as e:
        refused = str(e)
    victims.untouched()
    assert "symbolic link" in refused and str(results) in refused, refused


def test_the_checkpoint_api_refuses_a_link_before_it_reads_or_locks(tmp_path: Path, victims: Victims) -> None:
    """``open_checkpoint`` (what :func:`explorer.api.check` reaches) checks the folder too."""
    from explorer.engines import CheckOptions
    from explorer.engines.options import BfsOptions
    from explorer.search.checkpoint import CheckpointError, open_checkpoint
    from tests.toys import Grid

    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "lock").symlink_to(victims.file)
    own = BfsOptions(checkpoint=ck, resume=True)
    with pytest.raises(CheckpointError, match="lock is a symbolic link"):
        open_checkpoint(Grid(3), [], CheckOptions(model="grid"), own, "lean")
    victims.untouched()
