"""Checkpoint folders of the lean ``bfs``: a manifest, consistent snapshots, atomic switches.

A checkpoint folder ``DIR`` holds

=====================  ===============================================================
``manifest.json``      written once when the run starts: the format, the model, its
                       configuration, every option of the search, and what the command
                       line named (model, ``--config``, ``--set``), so that
                       ``--resume DIR`` needs nothing else
``parents.bin``        the parent records (:class:`~explorer.search.visited.ParentLog`),
                       append-only: a snapshot notes how many records it knows
``frontier/``          the level being written, in batch files (:mod:`explorer.search.frontier`)
``snap-NNNNNN/``       a snapshot: ``state.bin`` (counters, levels, coverage, violations
                       found so far, ..., in the data encoding of
                       :mod:`explorer.search.codec`), ``table.bin`` (the fingerprint
                       table), the frontier's batch files ``F000000.bin``... (hard links,
                       so the run deleting its own copies does not touch them) and
                       ``snapshot.json``, written last: the format and every other file's
                       size and SHA-256, checked before anything of the snapshot is used
``CURRENT``            the name of the valid snapshot
``lock``               the pid of the run using the folder, which holds it locked (``flock``):
                       a second run on the folder is refused
=====================  ===============================================================

No file of a checkpoint is a pickle: a checkpoint is copied between machines, and what
``--resume`` reads builds data only (a crafted or damaged file is refused in one line).

A snapshot is written into ``tmp-NNNNNN/``, every file synced, renamed to
``snap-NNNNNN/``, and only then named in ``CURRENT`` (written to ``CURRENT.tmp`` and
renamed over it, an atomic step); older snapshots are removed after. A ``kill -9`` at
any moment leaves ``CURRENT`` naming a complete snapshot (or no snapshot yet).

Example
-------
>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> write_manifest(d, {"model": "toy"})
>>> read_manifest(d)["model"], read_snapshot(d)
('toy', None)
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import signal
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from explorer.core import config_to_dict
from explorer.datafiles import DataFileError, check_digest, digest, model_digest, read_json
from explorer.search import codec, safeio
from explorer.search.iopath import naming
from explorer.search.visited import load_table, save_table

__all__ = [
    "FORMAT",
    "LOCK_NAME",
    "SNAPSHOT_NAME",
    "CheckpointError",
    "as_json",
    "code_digest",
    "crash_point",
    "lock_folder",
    "module_code_digest",
    "open_checkpoint",
    "prepare_folder",
    "read_manifest",
    "read_snapshot",
    "refuse_links",
    "run_identity",
    "write_manifest",
    "write_snapshot",
]

#: the checkpoint format; a folder of another format is refused (2: no pickles, checksummed
#: snapshots)
FORMAT = 2
#: options a resumed run may change: the time budget (the whole run's, over every session)
RESUMABLE_BUDGETS = frozenset({"max_seconds"})
#: fault injection for tests: ``WHERE:N`` kills the process (SIGKILL) the N-th time the
#: search passes the point ``WHERE`` (see :func:`crash_point`)
CRASH_ENV = "KAFKA_MC_CRASH_AT"
_passes: dict[str, int] = {}


class CheckpointError(ValueError):
    """A checkpoint folder that cannot be used (one line naming it and why)."""


def crash_point(where: str) -> None:
    """Die by SIGKILL here if ``$KAFKA_MC_CRASH_AT`` is ``WHERE:N`` and this is the N-th pass.

    Only the tests set it; a run without it is not affected.

    >>> crash_point("level")  # the variable is not set: nothing happens
    """
    spec = os.environ.get(CRASH_ENV)
    if not spec:
        return
    name, _, n = spec.partition(":")
    if name != where:
        return
    _passes[where] = _passes.get(where, 0) + 1
    if str(_passes[where]) == n:
        os.kill(os.getpid(), signal.SIGKILL)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path: Path, data: bytes) -> None:
    with naming(path):  # through NAME.tmp, a new file (a link there is replaced, never written through)
        safeio.write_atomic(path, data, tmp=path.with_name(path.name + ".tmp"))


#: the lock file of a checkpoint folder: held (``flock``) by the run using the folder
LOCK_NAME = "lock"
#: what a checkpoint writes in its folder (besides ``snap-*`` and ``tmp-*``); anything else
#: makes a folder "not empty" for ``--checkpoint``
_OWN = frozenset(
    {"manifest.json", "manifest.json.tmp", "parents.bin", "frontier", "CURRENT", "CURRENT.tmp", LOCK_NAME}
)
#: the checkpoint folders this process holds the lock of (real path -> open descriptor)
_held: dict[str, int] = {}


def lock_folder(folder: Path, flag: str) -> None:
    """Take ``folder``'s exclusive lock for the rest of this process's life (forked workers
    share it and die with it); a folder another run holds is a one-line CheckpointError naming
    that run's pid. Taking it again in the same process is a no-op.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); lock_folder(d, "--checkpoint"); lock_folder(d, "--resume")
    >>> (d / LOCK_NAME).read_text().strip() == str(os.getpid())
    True
    """
    key = os.path.realpath(folder)
    if key in _held:
        return
    try:
        fd = safeio.open_lock(Path(folder) / LOCK_NAME)  # never a link's target (it is truncated)
    except safeio.LinkError:
        raise CheckpointError(f"{flag} {folder}: {LOCK_NAME} is a symbolic link; {_NO_LINK}") from None
    except OSError as e:
        raise CheckpointError(f"{flag} {folder}: cannot create its lock file ({e.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise CheckpointError(
            f"{flag} {folder}: in use by process {holder} (a run holds its lock); wait for it to end, or stop it"
        ) from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as e:  # a full disk: the folder is not taken
        os.close(fd)
        raise CheckpointError(f"{flag} {folder}: cannot write its lock file ({e.strerror or e})") from None
    _held[key] = fd


#: why a link in a checkpoint folder is refused
_NO_LINK = "kafka-mc follows no link inside a checkpoint folder (remove it, or copy what it points at)"


def refuse_links(folder: Path, flag: str) -> Path:
    """``folder`` (for chaining) if no entry of it, nor of its sub-folders (``frontier/``,
    ``snap-*/``, ``tmp-*/``), is a symbolic link; else a one-line :class:`CheckpointError`
    naming the first. A checkpoint comes from elsewhere: a link in it would make the run
    truncate, write or delete what it points at (the lock, the parent log, the frontier).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / "frontier").mkdir(); refuse_links(d, "--resume") == d
    True
    >>> (d / "parents.bin").symlink_to("/etc/passwd"); refuse_links(d, "--resume")
    Traceback (most recent call last):
    ...
    explorer.search.checkpoint.CheckpointError: --resume ...: parents.bin is a symbolic link; kafka-mc follows \
no link inside a checkpoint folder (remove it, or copy what it points at)
    """
    link = safeio.find_link(folder)
    if link is not None:
        raise CheckpointError(f"{flag} {folder}: {link.relative_to(folder)} is a symbolic link; {_NO_LINK}")
    return Path(folder)


def prepare_folder(folder: Path) -> None:
    """Make ``folder`` ready for a new checkpoint: created, or empty; never an old one.

    The folder is locked first (:func:`lock_folder`). A folder whose checkpoint never
    completed a snapshot (the run died while starting, or the disk filled) is treated as
    empty: what it left is removed, as resuming it would start from the beginning anyway.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); prepare_folder(d); (d / "frontier").is_dir()
    True
    >>> write_manifest(d, {}); prepare_folder(d); (d / "manifest.json").exists()
    False
    >>> write_manifest(d, {}); _write_atomic(d / "CURRENT", b"snap-000001"); prepare_folder(d)
    Traceback (most recent call last):
    ...
    explorer.search.checkpoint.CheckpointError: --checkpoint ...: already holds a checkpoint; \
--resume it, or name an empty folder
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise CheckpointError(f"--checkpoint {folder}: not a directory")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CheckpointError(f"--checkpoint {folder}: cannot create it ({e.strerror})") from None
    lock_folder(folder, "--checkpoint")
    if (folder / "manifest.json").exists() and (folder / "CURRENT").exists():
        raise CheckpointError(
            f"--checkpoint {folder}: already holds a checkpoint; --resume it, or name an empty folder"
        )
    names = [p.name for p in folder.iterdir() if p.name != LOCK_NAME]
    if any(n not in _OWN and not n.startswith(("snap-", "tmp-")) for n in names):
        raise CheckpointError(f"--checkpoint {folder}: not empty; name an empty or new folder")
    refuse_links(folder, "--checkpoint")  # no leftover of kafka-mc's is a link
    try:
        for n in names:  # the leftovers of a start that never completed a snapshot
            safeio.remove(folder / n)
        safeio.make_dir(folder / "frontier")
    except OSError as e:
        raise CheckpointError(f"--checkpoint {folder}: cannot prepare it ({e.strerror})") from None


def code_digest(system: Any, checks: Iterable[Any] = ()) -> str:
    """A digest of the source code behind ``system`` and the property functions ``checks``:
    every ``.py`` file of the top-level packages their classes and functions come from
    (``model/`` and ``invariants/`` for the controller; the engine's own ``explorer/`` is
    left out, as its results do not depend on its version). ``--resume`` refuses a checkpoint whose digest differs: the counts and
    traces it holds belong to a model that no longer exists.

    >>> from tests.toys import Grid
    >>> code_digest(Grid(3)) == code_digest(Grid(4)) and len(code_digest(Grid(3))) == 16
    True
    """
    mods = {c.__module__ for c in type(system).__mro__}
    mods |= {getattr(c, "__module__", None) or "" for c in checks}
    return module_code_digest(mods)


def module_code_digest(mods: Iterable[str]) -> str:
    """:func:`code_digest` of the top-level packages of the (imported) modules ``mods``.

    >>> from tests.toys import Grid
    >>> module_code_digest(["tests.toys"]) == code_digest(Grid(3))
    True
    """
    roots: set[Path] = set()
    for name in sorted(mods):
        top = sys.modules.get(name.split(".")[0])
        f = getattr(top, "__file__", None)
        if f is None or name.split(".")[0] in ("builtins", "explorer"):
            continue
        p = Path(f)
        roots.add(p.parent if p.name == "__init__.py" else p)
    h = hashlib.blake2b(digest_size=8)
    for root in sorted(roots):
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        for f in files:
            if "__pycache__" in f.parts:
                continue
            h.update(f.relative_to(root.parent).as_posix().encode() + b"\0")
            h.update(f.read_bytes() + b"\0")
    return h.hexdigest()


def run_identity(manifest: dict[str, Any]) -> str:
    """The identity of the run a manifest describes: the :func:`explorer.datafiles.digest` of its
    layout, model, configuration, code digest and search options (but the time budget, which a
    resumed run may change). Every snapshot records it (``snapshot.json``), and ``--resume``
    refuses a snapshot of another run copied into the folder.

    >>> a = {"model": "m", "config": {"n": 3}, "options": {"max_seconds": 1}, "code": "c"}
    >>> run_identity(a) == run_identity({**a, "options": {"max_seconds": 9}})
    True
    >>> run_identity(a) == run_identity({**a, "config": {"n": 4}})
    False
    """
    options = manifest.get("options")
    if isinstance(options, dict):
        options = {k: v for k, v in options.items() if k not in RESUMABLE_BUDGETS}
    fields = {k: manifest.get(k) for k in ("layout", "model", "config", "code")}
    return digest({**fields, "options": options})


def write_manifest(folder: Path, doc: dict[str, Any]) -> None:
    """Write ``manifest.json`` (atomically), adding the format number, the ``digest`` of its
    model and configuration and the run's ``identity`` (:func:`run_identity`)."""
    doc = as_json(doc)
    if "model" in doc:
        doc["digest"] = model_digest(doc.get("model"), doc.get("config"))
        doc["identity"] = run_identity(doc)
    data = json.dumps({"format": FORMAT, **doc}, indent=2, sort_keys=True, default=str)
    _write_atomic(Path(folder) / "manifest.json", data.encode())


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of the checkpoint in ``folder``; CheckpointError if there is none.

    >>> read_manifest(Path("/nonexistent"))
    Traceback (most recent call last):
    ...
    explorer.search.checkpoint.CheckpointError: --resume /nonexistent: no checkpoint there (no manifest.json)
    """
    path = Path(folder) / "manifest.json"
    if not path.exists() and not path.is_symlink():
        started = (Path(folder) / "frontier").is_dir()
        why = "; a run started there died before writing it: start again with --checkpoint" if started else ""
        raise CheckpointError(f"--resume {folder}: no checkpoint there (no manifest.json{why})")
    where = f"--resume {folder}: manifest.json"
    try:
        doc = read_json(path, where, max_bytes=MAX_MANIFEST_BYTES)
    except DataFileError as e:
        raise CheckpointError(str(e)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else None
        raise CheckpointError(f"--resume {folder}: checkpoint format {found!r:.40}, expected {FORMAT}")
    try:
        check_digest(doc, where)  # a configuration edited by hand, its digest not
    except DataFileError as e:
        raise CheckpointError(str(e)) from None
    if "identity" in doc and doc["identity"] != run_identity(doc):
        raise CheckpointError(
            f"{where}: 'identity' does not match its layout, model, config, code and options "
            "(one was changed after the file was written)"
        )
    return doc


def _digest(path: Path) -> dict[str, Any]:
    with open(path, "rb") as fh:
        return {
            "bytes": os.fstat(fh.fileno()).st_size,
            "sha256": hashlib.file_digest(fh, "sha256").hexdigest(),
        }


def write_snapshot(folder: Path, seq: int, state: dict[str, Any], table: Any, frontier: list[Path]) -> None:
    """Write snapshot ``seq`` (the search's ``state``, the ``table``, the ``frontier`` files)
    and make it the current one; remove the older ones."""
    folder = Path(folder)
    tmp = folder / f"tmp-{seq:06d}"
    with naming(tmp):
        _write_snapshot(folder, tmp, seq, state, table, frontier)


def _write_snapshot(
    folder: Path, tmp: Path, seq: int, state: dict[str, Any], table: Any, frontier: list[Path]
) -> None:
    safeio.remove(tmp)  # an unfinished one (a link there: only the link)
    tmp.mkdir()
    save_table(table, tmp / "table.bin")
    for k, f in enumerate(frontier):
        safeio.hard_link(f, tmp / f"F{k:06d}.bin")
    doc = {
        **state,
        "frontier_files": len(frontier),
        "table_capacity": table.capacity,
        "table_count": len(table),
    }
    with open(tmp / "state.bin", "wb") as fh:
        fh.write(codec.encode(doc))
        fh.flush()
        os.fsync(fh.fileno())
    files = {p.name: _digest(p) for p in sorted(tmp.iterdir())}
    identity = read_manifest(folder).get("identity")  # whose run this snapshot is (run_identity)
    snap_doc = {"format": FORMAT, "files": files, **({"identity": identity} if identity else {})}
    with open(tmp / SNAPSHOT_NAME, "wb") as fh:
        fh.write(json.dumps(snap_doc, indent=1, sort_keys=True).encode())
        fh.flush()
        os.fsync(fh.fileno())
    _fsync_dir(tmp)
    crash_point("snapshot-written")
    final = folder / f"snap-{seq:06d}"
    os.rename(tmp, final)
    _fsync_dir(folder)
    crash_point("snapshot-renamed")
    _write_atomic(folder / "CURRENT", final.name.encode())
    for old in folder.iterdir():
        if old.name.startswith(("snap-", "tmp-")) and old.name != final.name:
            safeio.remove(old)  # a folder, or a link (only the link)


#: the file of a snapshot that lists its other files with their sizes and checksums
SNAPSHOT_NAME = "snapshot.json"
#: the name of a snapshot folder (what ``CURRENT`` may name) and of a file in it
_SNAP_NAME = re.compile(r"snap-[0-9]{6}")
_FILE_NAME = re.compile(r"(state|table)\.bin|F[0-9]{6}\.bin")
#: the largest manifest.json or snapshot.json read (theirs are a few KB)
MAX_MANIFEST_BYTES = 16 * 1024 * 1024


def _verified(folder: Path, snap: Path) -> dict[str, Any]:
    """The state of snapshot ``snap`` once it is this run's (its ``identity`` is the manifest's,
    where the manifest records one), every file it lists matches its size and checksum and no
    file is missing or extra; CheckpointError (one line) otherwise."""

    def bad(why: str) -> CheckpointError:
        return CheckpointError(f"--resume {folder}: snapshot {snap.name} {why}")

    if not (snap / SNAPSHOT_NAME).exists():
        raise bad(f"has no {SNAPSHOT_NAME} (written by another version, or damaged)")
    try:
        doc = read_json(
            snap / SNAPSHOT_NAME,
            f"--resume {folder}: {snap.name}/{SNAPSHOT_NAME}",
            max_bytes=MAX_MANIFEST_BYTES,
        )
    except DataFileError as e:
        raise CheckpointError(str(e)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("files"), dict):
        raise bad(f"has a {SNAPSHOT_NAME} of another format (expected format {FORMAT})")
    identity = read_manifest(folder).get("identity")
    if identity is not None and doc.get("identity") != identity:
        raise bad(
            f"is another run's: its {SNAPSHOT_NAME} 'identity' is not manifest.json's (copied in from a run "
            "of another model, configuration, options or code); resume the folder it came from"
        )
    listed = doc["files"]
    if not all(
        isinstance(n, str) and _FILE_NAME.fullmatch(n) and isinstance(v, dict) for n, v in listed.items()
    ):
        raise bad(f"has a {SNAPSHOT_NAME} listing a file name it may not hold")
    present = {p.name for p in snap.iterdir()} - {SNAPSHOT_NAME}
    if present != set(listed):
        odd = sorted(present ^ set(listed))[0]
        raise bad(f"does not match its {SNAPSHOT_NAME}: {odd} is {'missing' if odd in listed else 'extra'}")
    for name in sorted(listed):
        if _digest(snap / name) != listed[name]:
            raise bad(f"is damaged: {name} does not match its checksum in {SNAPSHOT_NAME}")
    try:
        state = codec.decode((snap / "state.bin").read_bytes(), name="state.bin")
    except codec.UnsafeFileError as e:
        raise bad(f"refused: {e}") from None
    if not isinstance(state, dict):
        raise bad("refused: state.bin does not hold a search state")
    return state


def read_snapshot(folder: Path) -> tuple[dict[str, Any], Any, list[Path]] | None:
    """The current snapshot: (state, fingerprint table, frontier files), or None if the
    run was killed before its first snapshot. Every other snapshot folder (unfinished, or
    renamed but never made current) is removed."""
    folder = Path(folder)
    current = folder / "CURRENT"
    name = current.read_text().strip() if current.exists() else None
    for old in folder.iterdir():
        if old.name.startswith(("tmp-", "snap-")) and old.name != name:
            safeio.remove(old)  # a folder, or a link (only the link)
    if name is None:
        return None
    if not _SNAP_NAME.fullmatch(name):
        raise CheckpointError(f"--resume {folder}: CURRENT names {name[:40]!r}, not a snapshot (snap-NNNNNN)")
    snap = folder / name
    try:
        state = _verified(folder, snap)
        counts = [state.get(k) for k in ("table_capacity", "table_count", "frontier_files", "seq")]
        if not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < 2**48 for c in counts):
            raise ValueError("its counters are not whole numbers")
        table = load_table(snap / "table.bin", state["table_capacity"], state["table_count"])
    except (OSError, KeyError, ValueError, TypeError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(f"--resume {folder}: snapshot {snap.name} unreadable ({e})") from None
    files = [snap / f"F{k:06d}.bin" for k in range(state["frontier_files"])]
    return state, table, files


def as_json(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as the manifest stores it (lists for tuples, strings for other values).

    >>> as_json({"a": (1, 2)})
    {'a': [1, 2]}
    """
    out: dict[str, Any] = json.loads(json.dumps(doc, sort_keys=True, default=str))
    return out


def open_checkpoint(
    system: Any, props: Iterable[Any], options: Any, own: Any, layout: str, **search: Any
) -> tuple[Path | None, tuple[dict[str, Any], Any, list[Path]] | None]:
    """``(folder, snapshot)`` for a search asked for a checkpoint (``options``: the run's
    :class:`explorer.engines.CheckOptions`, ``own`` its engine's options naming ``checkpoint``,
    ``resume``, ``checkpoint_every``, ``run_info``; without a folder: ``(None, None)``).
    Not resumed, it starts a checkpoint there (a new or empty folder, its manifest written;
    no snapshot yet); resumed, it opens one to continue: its current snapshot, or None if
    the run died before its first one.

    A resumed checkpoint must have been written by the same engine ``layout`` (``"lean"``:
    the serial search, ``"pbfs"``: the ``--workers`` one), for the same model source
    (:func:`code_digest`), model, configuration and search options (the budgets, the
    reduction, ``checkpoint_every`` and the layout's own ``search`` options); anything else
    is a one-line :class:`CheckpointError`.

    >>> import tempfile
    >>> from explorer.engines import CheckOptions
    >>> from tests.toys import Grid
    >>> d = Path(tempfile.mkdtemp()) / "ck"
    >>> from explorer.engines.options import BfsOptions
    >>> o = CheckOptions(model="grid", workers=2)
    >>> open_checkpoint(Grid(3), [], o, BfsOptions(checkpoint=d), "pbfs", workers=2) == (d, None)
    True
    >>> open_checkpoint(Grid(3), [], o, BfsOptions(), "pbfs", workers=2)
    (None, None)
    >>> open_checkpoint(Grid(3), [], o, BfsOptions(checkpoint=d, resume=True), "lean")
    Traceback (most recent call last):
    ...
    explorer.search.checkpoint.CheckpointError: --resume ...: written by the pbfs search, not the lean one (resume it with the options it was started with)
    """
    checkpoint, resume, run_info = own.checkpoint, own.resume, own.run_info
    model, config = options.model, config_to_dict(options.config)
    budgets = ("max_depth", "max_states", "max_seconds", "keep_going", "deadlock")
    options = {
        **{k: getattr(options, k) for k in budgets},
        **search,
        "checkpoint_every": own.checkpoint_every,
        **(
            {"reduce": options.reduce} if options.reduce != "none" else {}
        ),  # older checkpoints had no reduction
    }
    checks = [p.check for p in props]
    if checkpoint is None:
        if resume:
            raise CheckpointError("--resume needs the checkpoint folder")
        return None, None
    folder = Path(checkpoint)
    if not resume:
        prepare_folder(folder)
        write_manifest(
            folder,
            {
                "engine": "bfs",
                "visited": "fingerprints",
                "layout": layout,
                "model": model,
                "config": config,
                "options": options,
                "code": code_digest(system, checks),
                "run": run_info or {},
            },
        )
        return folder, None
    if folder.is_dir():  # locked before anything is read: a run preparing the folder has it
        refuse_links(folder, "--resume")
        lock_folder(folder, "--resume")
    manifest = read_manifest(folder)
    stored_layout = manifest.get("layout", "lean")
    if stored_layout != layout:
        raise CheckpointError(
            f"--resume {folder}: written by the {stored_layout} search, not the {layout} one "
            "(resume it with the options it was started with)"
        )
    if manifest.get("code") != code_digest(system, checks):
        raise CheckpointError(
            f"--resume {folder}: the model's code differs from the checkpoint's (its source "
            "changed since the checkpoint was written; its counts would not be this model's)"
        )
    given = as_json({"model": model, "config": config, "options": options})
    for key, value in given.items():
        stored = manifest.get(key)
        if key == "options":
            stored = stored if isinstance(stored, dict) else {}
            # a time budget may change on resume (more time for a run that ran out of it)
            bad = [k for k in value if k not in RESUMABLE_BUDGETS and value[k] != stored.get(k)]
            if bad:
                raise CheckpointError(
                    f"--resume {folder}: option {bad[0]}={value[bad[0]]!r} differs from the "
                    f"checkpoint's {stored.get(bad[0])!r}"
                )
        elif value != stored:
            raise CheckpointError(f"--resume {folder}: the {key} differs from the checkpoint's")
    return folder, read_snapshot(folder)
