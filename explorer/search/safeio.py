"""File operations inside a folder kafka-mc owns, that never follow a symbolic link.

A checkpoint folder, a release's report folder, ``shrink --out-dir`` and ``--save-traces``
may hold files someone else put there (a checkpoint copied from another machine, a shared
report folder). A symbolic link at a name kafka-mc writes must not make it write, truncate
or delete what the link points at. So, for the *last* component of every path:

- a file is created new (:func:`create`): whatever is at the name (a link, an old file) is
  unlinked first, and the file is opened ``O_CREAT | O_EXCL | O_NOFOLLOW``, so a link put
  back in between makes the open fail instead of writing through it;
- a file that must already exist is opened ``O_NOFOLLOW`` (:func:`open_append`,
  :func:`truncate`, :func:`open_lock`): a link there is refused (:class:`LinkError`);
- a file is replaced atomically (:func:`write_atomic`): a temporary file made as above, then
  ``os.replace`` onto the name, which replaces a link there, never writes into its target;
- a folder is made or entered with ``lstat`` (:func:`make_dir`, :func:`real_dir`) and removed
  only if it is a real folder (:func:`remove`; ``shutil.rmtree`` does not follow the links
  inside it); a link where a folder is expected is refused, or removed (only the link);
- a file is hard-linked only if it is a regular file (:func:`hard_link`).

The folder the user named is trusted as given (it may itself be a link to another disk);
what is *inside* it is not: :func:`find_link` looks for a link among its entries, so that a
command refuses such a folder up front, before anything runs. A concurrent process that
can write in the folder while kafka-mc runs is outside the promise (it could write the
files directly); what it cannot do is make an ``O_NOFOLLOW`` open follow a link.

Example
-------
>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> victim = d / "victim"; _ = victim.write_text("precious")
>>> (d / "out.bin").symlink_to(victim)
>>> with create(d / "out.bin") as f:
...     _ = f.write(b"data")
>>> victim.read_text(), (d / "out.bin").is_symlink()
('precious', False)
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "LinkError",
    "create",
    "find_link",
    "hard_link",
    "make_dir",
    "open_append",
    "open_lock",
    "real_dir",
    "remove",
    "truncate",
    "write_atomic",
]

_PathLike = str | os.PathLike[str]
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


class LinkError(OSError):
    """A symbolic link where kafka-mc writes: refused (an ``OSError`` naming the path, so the
    command line prints it as ``kafka-mc: error: PATH: a symbolic link ...``, exit 2).

    >>> str(LinkError("/ck/lock"))
    "[Errno 40] a symbolic link (kafka-mc follows no link inside a folder it writes; remove it): '/ck/lock'"
    """

    def __init__(self, path: _PathLike) -> None:
        super().__init__(
            errno.ELOOP,
            "a symbolic link (kafka-mc follows no link inside a folder it writes; remove it)",
            os.fspath(path),
        )


def _is_link(path: _PathLike) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _open(path: _PathLike, flags: int, mode: int = 0o666) -> int:
    """``os.open`` with ``O_NOFOLLOW``; a link at ``path`` is a :class:`LinkError`."""
    try:
        return os.open(path, flags | _NOFOLLOW, mode)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK) or (e.errno == errno.EEXIST and _is_link(path)):
            raise LinkError(path) from None
        raise


def create(path: _PathLike, mode: int = 0o666) -> BinaryIO:
    """A new, empty file at ``path``, open for writing: whatever non-folder was at the name
    (an old file, a link) is unlinked first, never written through.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "f"
    >>> with create(p) as f:
    ...     _ = f.write(b"x")
    >>> p.read_bytes()
    b'x'
    """
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path)) from None
    except PermissionError:  # unlink(2) of a folder is EPERM on some systems
        if os.path.isdir(path) and not _is_link(path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path)) from None
        raise
    fd = _open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    return os.fdopen(fd, "wb")


def open_append(path: _PathLike, *, new: bool = False) -> BinaryIO:
    """``path`` open for appending (``new``: created if missing); a link there is refused.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "log"
    >>> with open_append(p, new=True) as f:
    ...     _ = f.write(b"a")
    >>> with open_append(p) as f:
    ...     _ = f.write(b"b")
    >>> p.read_bytes()
    b'ab'
    """
    fd = _open(path, os.O_WRONLY | os.O_APPEND | (os.O_CREAT if new else 0))
    return os.fdopen(fd, "ab")


def truncate(path: _PathLike, size: int) -> None:
    """Cut the file at ``path`` to ``size`` bytes; a link there is refused.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "f"; _ = p.write_bytes(b"abcdef")
    >>> truncate(p, 2); p.read_bytes()
    b'ab'
    """
    fd = _open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
    finally:
        os.close(fd)


def open_lock(path: _PathLike) -> int:
    """A descriptor of the lock file at ``path`` (read-write, created if missing, not
    truncated: the caller locks it first); a link there is refused.

    >>> import tempfile
    >>> fd = open_lock(Path(tempfile.mkdtemp()) / "lock"); os.close(fd)
    """
    fd = _open(path, os.O_RDWR | os.O_CREAT, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
    return fd


def write_atomic(path: _PathLike, data: bytes, *, tmp: _PathLike | None = None, sync: bool = True) -> None:
    """Write ``data`` to ``path`` through a temporary file (``tmp``, else a fresh name in the
    same folder) renamed over it: a reader sees the old file or the new one, and a link at
    either name is replaced, never written through. ``sync``: the file and its folder
    reach the disk before it returns.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "CURRENT"
    >>> write_atomic(p, b"snap-000001"); p.read_bytes()
    b'snap-000001'
    """
    path = Path(path)
    if tmp is None:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes it private; give it a normal file's mode
        fh: BinaryIO = os.fdopen(fd, "wb")
        tmp = name
    else:
        fh = create(tmp)
    try:
        with fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync:
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def real_dir(path: _PathLike) -> bool:
    """Whether ``path`` is a folder itself (not a link to one); a link is :class:`LinkError`,
    a missing name False.

    >>> import tempfile
    >>> real_dir(tempfile.mkdtemp()), real_dir("/nonexistent")
    (True, False)
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(mode):
        raise LinkError(path)
    return stat.S_ISDIR(mode)


def make_dir(path: _PathLike, *, exist_ok: bool = False) -> None:
    """Make the folder ``path`` (its parent must exist); with ``exist_ok`` a real folder
    already there is fine, a link there is :class:`LinkError`.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()) / "frontier"; make_dir(d); make_dir(d, exist_ok=True)
    """
    try:
        os.mkdir(path)
    except FileExistsError:
        if not exist_ok or not real_dir(path):
            raise


def remove(path: _PathLike) -> None:
    """Remove the name ``path``: a real folder with what it holds (links inside it are
    removed, not followed), anything else (a file, a link) by unlinking it; nothing if it
    is missing.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / "a").mkdir(); (d / "l").symlink_to(d / "a")
    >>> remove(d / "l"); remove(d / "a"); remove(d / "missing"); sorted(d.iterdir())
    []
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def hard_link(src: _PathLike, dst: _PathLike) -> None:
    """A hard link ``dst`` to the regular file ``src`` (never to what a link at ``src``
    points at: that is :class:`LinkError`).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "a").write_bytes(b"x")
    >>> hard_link(d / "a", d / "b"); (d / "b").read_bytes()
    b'x'
    """
    if _is_link(src):
        raise LinkError(src)
    os.link(src, dst, follow_symlinks=False)


def find_link(folder: _PathLike, depth: int = 2) -> Path | None:
    """The first symbolic link among ``folder``'s entries and, ``depth`` levels down, its
    sub-folders' (sorted by name), or None. ``folder`` itself is not looked at: the user
    named it.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / "snap").mkdir(); find_link(d) is None
    True
    >>> (d / "snap" / "F0.bin").symlink_to("/etc/passwd"); find_link(d).name
    'F0.bin'
    """
    if depth < 1:
        return None
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return None
    for entry in entries:
        if entry.is_symlink():
            return Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            inner = find_link(entry.path, depth - 1)
            if inner is not None:
                return inner
    return None
