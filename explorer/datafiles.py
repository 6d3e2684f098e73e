"""Reading the files kafka-mc is handed: every one is data, never code.

Checkpoints, trace files, ``--json`` results, release reports, suite files, mutation tables and
results travel between people and machines, so kafka-mc reads each as a document someone else
may have written (the threat model is ``docs/security.md``). This module is the one place that
turns the bytes of such a file into Python values, and it holds the rule for what a file may
say about the system it belongs to:

* **A file names, it never loads.** A file may *name* the system it was made with (a registered
  model, or a ``--system module:callable``), but the system a trace is replayed on, a checkpoint
  resumed on or a counterexample shrunk on is chosen by the user: a registered model by name
  (:func:`explorer.frontend.model_spec`) or a ``--system`` given on the command line, which must
  equal what the file names (:func:`check_named_system`). Nothing here imports a module.
* **Bounded**: a document nested deeper than :data:`MAX_DEPTH` or larger than its size limit is
  refused in one line (no ``RecursionError``, no memory blow-up), as is anything not UTF-8.
* **Identified**: :func:`digest` gives the canonical digest of a JSON value (a model's name and
  configuration, say), which writers record and readers compare, naming the field that differs.

Every error is a :class:`DataFileError`: one line naming the file and what is wrong with it.

Example
-------
>>> loads_json('{"a": [1, 2]}', "x.json")
{'a': [1, 2]}
>>> loads_json("[" * 100 + "]" * 100, "x.json")
Traceback (most recent call last):
...
explorer.datafiles.DataFileError: x.json: nested deeper than 64 levels
>>> digest({"model": "toy", "config": {"n": 2}}) == digest({"config": {"n": 2}, "model": "toy"})
True
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tomllib
from typing import Any

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "DataFileError",
    "check_depth",
    "check_digest",
    "check_named_system",
    "check_system_ref",
    "digest",
    "loads_json",
    "loads_toml",
    "model_digest",
    "read_bytes",
    "read_json",
    "read_toml",
]

#: the deepest nesting of lists and objects a file may hold (kafka-mc's own files stay under 10)
MAX_DEPTH = 64
#: the largest file read whole (a trace of the deepest configuration is a few MB)
MAX_BYTES = 256 * 1024 * 1024


class DataFileError(ValueError):
    """A file kafka-mc cannot use: one line naming the file and why (exit code 2)."""


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:100] if text else type(e).__name__


def check_depth(value: Any, where: str, limit: int = MAX_DEPTH) -> Any:
    """``value`` itself, or DataFileError if its lists, tuples and dicts nest deeper than
    ``limit`` (checked without recursion, so any depth is refused cleanly).

    >>> check_depth([[1], {"a": [2]}], "--set x")
    [[1], {'a': [2]}]
    >>> check_depth([[[0]]], "--set x", limit=2)
    Traceback (most recent call last):
    ...
    explorer.datafiles.DataFileError: --set x: nested deeper than 2 levels
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            children: Any = v.values()
        elif isinstance(v, list | tuple):
            children = v
        else:
            continue
        if d + 1 > limit:
            raise DataFileError(f"{where}: nested deeper than {limit} levels")
        stack.extend((c, d + 1) for c in children)
    return value


def _bracket_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in JSON or TOML text outside strings (an upper bound
    is enough: the parsers recurse per level, so a text this deep is refused before parsing)."""
    depth = deepest = 0
    in_str: str | None = None
    escaped = False
    for ch in text:
        if in_str is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == in_str:
                in_str = None
        elif ch in "\"'":
            in_str = ch
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    return deepest


def read_bytes(path: str | os.PathLike[str], where: str | None = None, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of the file at ``path`` (at most ``max_bytes``); DataFileError naming it
    otherwise (missing, a folder, not a regular file, unreadable, too large).

    >>> read_bytes("/nonexistent.json")
    Traceback (most recent call last):
    ...
    explorer.datafiles.DataFileError: /nonexistent.json: no such file
    """
    where = where or os.fspath(path)
    try:
        # O_NONBLOCK: a FIFO or a device put where a file was expected must not block the read;
        # only a regular file is read (a crafted folder cannot make kafka-mc hang on a pipe)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError
            if not stat.S_ISREG(mode):
                raise DataFileError(f"{where}: not a regular file (a pipe, a socket or a device)")
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise DataFileError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise DataFileError(f"{where}: is a directory, not a file") from None
    except OSError as e:
        raise DataFileError(f"{where}: cannot be read ({e.strerror or type(e).__name__})") from None
    if len(data) > max_bytes:
        raise DataFileError(f"{where}: larger than {max_bytes:,} bytes")
    return data


def _text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise DataFileError(f"{where}: not UTF-8 text") from None


def loads_json(text: str | bytes, where: str, limit: int = MAX_DEPTH) -> Any:
    """The JSON value in ``text``; DataFileError (one line naming ``where``) for anything that is
    not a JSON document nested at most ``limit`` levels.

    >>> loads_json("[1, {}]", "r.json")
    [1, {}]
    >>> loads_json("{", "r.json")
    Traceback (most recent call last):
    ...
    explorer.datafiles.DataFileError: r.json: not JSON (Expecting property name enclosed in double quotes at line 1)
    """
    if isinstance(text, bytes):
        text = _text(text, where)
    if _bracket_depth(text) > limit:
        raise DataFileError(f"{where}: nested deeper than {limit} levels")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataFileError(f"{where}: not JSON ({e.msg} at line {e.lineno})") from None
    except (ValueError, RecursionError, MemoryError) as e:  # e.g. an integer of thousands of digits
        raise DataFileError(f"{where}: not a readable JSON document ({_first_line(e)})") from None
    return check_depth(value, where, limit)


def read_json(
    path: str | os.PathLike[str],
    where: str | None = None,
    *,
    max_bytes: int = MAX_BYTES,
    limit: int = MAX_DEPTH,
) -> Any:
    """The JSON document in the file at ``path``, read as :func:`loads_json` reads text.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     _ = f.write('{"schema": "x"}')
    >>> read_json(f.name)
    {'schema': 'x'}
    """
    where = where or os.fspath(path)
    return loads_json(read_bytes(path, where, max_bytes), where, limit)


def loads_toml(text: str | bytes, where: str, limit: int = MAX_DEPTH) -> dict[str, Any]:
    """The TOML document in ``text``; DataFileError (one line naming ``where``) otherwise.

    >>> loads_toml("a = [1, [2]]", "s.toml")
    {'a': [1, [2]]}
    >>> loads_toml("a = " + "[" * 80 + "]" * 80, "s.toml")
    Traceback (most recent call last):
    ...
    explorer.datafiles.DataFileError: s.toml: nested deeper than 64 levels
    """
    if isinstance(text, bytes):
        text = _text(text, where)
    if _bracket_depth(text) > limit:
        raise DataFileError(f"{where}: nested deeper than {limit} levels")
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise DataFileError(f"{where}: malformed TOML: {_first_line(e)}") from None
    except (ValueError, RecursionError, MemoryError) as e:
        raise DataFileError(f"{where}: unreadable TOML ({_first_line(e)})") from None
    check_depth(value, where, limit)
    return value


def read_toml(
    path: str | os.PathLike[str],
    where: str | None = None,
    *,
    max_bytes: int = MAX_BYTES,
    limit: int = MAX_DEPTH,
) -> dict[str, Any]:
    """The TOML document in the file at ``path``, read as :func:`loads_toml` reads text.

    >>> read_toml("/nonexistent.toml")
    Traceback (most recent call last):
    ...
    explorer.datafiles.DataFileError: /nonexistent.toml: no such file
    """
    where = where or os.fspath(path)
    return loads_toml(read_bytes(path, where, max_bytes), where, limit)


def digest(value: Any) -> str:
    """A 16-hex-digit digest of a JSON value, the same for equal values whatever the order of
    their keys (tuples are lists): what a file records of its model and configuration, and a
    reader compares.

    >>> digest({"n": (1, 2)}) == digest({"n": [1, 2]}), len(digest(None))
    (True, 16)
    """
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(canonical.encode("utf-8"), digest_size=8).hexdigest()


def check_named_system(named: Any, given: str | None, where: str) -> None:
    """The rule "a file names, it never loads" for a ``--system`` run: ``named`` is the
    ``module:callable`` the file says it was made with (None for a registered model), ``given``
    the ``--system`` on the command line. A file naming a system is used only on that same system
    given by the user; DataFileError (one line) otherwise. Nothing is imported here.

    >>> check_named_system("tests.toys:Grid", "tests.toys:Grid", "t.json")
    >>> check_named_system("os:system", None, "t.json")
    Traceback (most recent call last):
    ...
    explorer.datafiles.DataFileError: t.json: 'system' is 'os:system' (made with --system); kafka-mc never loads code a file names: give that --system on the command line if you trust it
    >>> check_named_system("tests.toys:Grid", "tests.toys:Line", "t.json")
    Traceback (most recent call last):
    ...
    explorer.datafiles.DataFileError: t.json: 'system' is 'tests.toys:Grid', not the --system tests.toys:Line given
    """
    if named is None or named == "":
        if given is not None:
            raise DataFileError(
                f"{where}: 'system' is absent: made with a registered model, not a --system; leave out --system"
            )
        return
    if not isinstance(named, str):
        raise DataFileError(f"{where}: 'system' must be a string")
    shown = repr(named if len(named) <= 120 else named[:117] + "...")
    if given is None:
        raise DataFileError(
            f"{where}: 'system' is {shown} (made with --system); kafka-mc never loads code a file names: "
            "give that --system on the command line if you trust it"
        )
    if given != named:
        raise DataFileError(f"{where}: 'system' is {shown}, not the --system {given} given")


#: a ``--system`` reference: a dotted module path, a colon, a dotted attribute path
_SYSTEM_REF = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
)


def check_system_ref(ref: Any, where: str) -> str:
    """``ref`` itself if it is a ``package.module:factory`` reference made of Python identifiers
    (ASCII letters, digits, ``_``, dots between them): what may be imported as a ``--system`` and
    written into a generated test; DataFileError (one line) for anything else.

    >>> check_system_ref("tests.toys:Grid", "--system")
    'tests.toys:Grid'
    >>> check_system_ref("os:system('id')", "--system")
    Traceback (most recent call last):
    ...
    explorer.datafiles.DataFileError: --system: expected package.module:factory (dotted Python names), got "os:system('id')"
    """
    if not isinstance(ref, str) or len(ref) > 300 or not _SYSTEM_REF.fullmatch(ref):
        shown = repr(ref if not isinstance(ref, str) or len(ref) <= 80 else ref[:77] + "...")
        raise DataFileError(f"{where}: expected package.module:factory (dotted Python names), got {shown}")
    return ref


def model_digest(model: Any, config: Any) -> str:
    """The digest a file records of the model (a registered name, or a ``--system``'s
    ``package.module:factory``) and its configuration, under the key ``digest``.

    >>> model_digest("grid", {"n": 3}) == digest({"model": "grid", "config": {"n": 3}})
    True
    """
    return digest({"model": model, "config": config})


def check_digest(
    doc: dict[str, Any], where: str, field: str = "digest", fields: tuple[str, ...] = ("model", "config")
) -> None:
    """The rule for a file's recorded digest: where ``doc`` has ``field``, it must be the
    :func:`digest` of its ``fields`` (by default :func:`model_digest` of its model and
    configuration); a file without it (written before digests were recorded) passes.
    DataFileError naming the field otherwise: a configuration edited by hand, say.

    >>> doc = {"model": "grid", "config": {"n": 3}}
    >>> doc["digest"] = model_digest("grid", {"n": 3}); check_digest(doc, "t.json")
    >>> doc["config"]["n"] = 4; check_digest(doc, "t.json")
    Traceback (most recent call last):
    ...
    explorer.datafiles.DataFileError: t.json: 'digest' does not match its 'model' and 'config' (one was changed after the file was written)
    """
    if field not in doc:
        return
    want = digest({k: doc.get(k) for k in fields})
    if doc[field] != want:
        named = (
            " and ".join(f"{k!r}" for k in fields)
            if len(fields) <= 2
            else ", ".join(f"{k!r}" for k in fields)
        )
        raise DataFileError(
            f"{where}: {field!r} does not match its {named} (one was changed after the file was written)"
        )
