"""I/O errors that name their file: :func:`naming`.

Python names the file in an ``OSError`` raised by ``open`` but not in one raised by a write,
a flush, an ``fsync`` or ``os.pwrite`` on it: a disk that fills while a checkpoint, a
frontier batch or the parent log is written would be reported as a bare "No space left on
device". Every such write of the search runs inside :func:`naming`, so the one line the
command line prints (``kafka-mc: error: PATH: No space left on device``) says where.

Example
-------
>>> import errno
>>> try:
...     with naming("/data/ck/parents.bin"):
...         raise OSError(errno.ENOSPC, "No space left on device")
... except OSError as e:
...     print(e.filename, e.strerror)
/data/ck/parents.bin No space left on device
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["naming"]


@contextmanager
def naming(path: str | os.PathLike[str]) -> Iterator[None]:
    """Within the block, an ``OSError`` that names no file is raised again naming ``path``
    (same errno and type, e.g. ``FileNotFoundError``); one that names a file is left as is.

    >>> with naming("x"):
    ...     pass
    """
    try:
        yield
    except OSError as e:
        if e.filename is not None or e.errno is None:
            raise
        raise OSError(e.errno, e.strerror or os.strerror(e.errno), os.fspath(path)) from e
