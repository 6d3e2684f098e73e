"""The data encoding of every file a run leaves and another run reads back (checkpoint
snapshots, spilled frontiers, the ``--workers`` frontier shares, the class tables of state
blobs): values only, never code.

A checkpoint is something people copy between machines (shared storage for a cluster run,
a CI artifact), so a file handed to ``--resume`` must not be able to execute anything. Pickle
cannot promise that (a pickle is a program for a small machine that calls what it names), so
these files are not pickles. :func:`encode` writes a tagged, length-prefixed tree of

- ``None``, bools, ints (any size), floats, strings, bytes;
- tuples, lists, dicts, sets, frozensets, ``collections.deque``;
- members of an ``Enum``, by class and member name;
- ``NamedTuple`` instances and dataclass instances, by class and fields: the class is
  named (``module``, ``qualname``) and :func:`decode` finds it only among the project's
  packages (``model``, ``invariants``, ``explorer``, ``tests``), a user's ``--system``
  package (:func:`trust_package`) or a module the process has already imported; it must be
  a ``NamedTuple``, an ``Enum`` or a dataclass, and it is rebuilt without calling any of its
  code (``tuple.__new__``, ``object.__new__`` and the fields set directly);
- numpy arrays of a plain numeric dtype, as their raw bytes;
- a class as a value (coverage counts actions by class), by name, found by the same rules
  but never instantiated.

A tuple, frozenset, string or NamedTuple met again (the same object) is written as a
back-reference and read back as one shared object, so a frontier of states that share
sub-records stays as small on disk and in memory as it was. Anything else (a function, a
class of an unknown module, a crafted tag) is refused with :class:`UnsafeFileError`, one
line, before anything of it is built.

>>> decode(encode((1, frozenset({2}), [b"x", None, 2**70], {"a": 1.5})))
(1, frozenset({2}), [b'x', None, 1180591620717411303424], {'a': 1.5})
>>> decode(b"\\x01EK" + bytes(8))
Traceback (most recent call last):
...
explorer.search.codec.UnsafeFileError: bad data: a class reference with an empty name
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import importlib
import struct
import sys
from typing import Any

__all__ = [
    "NotDataError",
    "UnsafeFileError",
    "class_names",
    "decode",
    "encode",
    "find_class",
    "trust_package",
]

#: the encoding's version, the first byte of every encoded value
VERSION = 1
#: the project's packages, whose data classes a file may name
PROJECT_PACKAGES = ("model", "invariants", "explorer", "tests")
#: packages a run registered as holding a user's model (``--system``), trusted like the project's
_EXTRA_MODULES: set[str] = set()
#: numpy dtypes an array may have (no object arrays: their items would be pickles)
_DTYPES = frozenset("?bBhHiIlLqQefdgFD") | frozenset({"int8", "int16", "int32", "int64", "uint8", "uint64"})
#: deepest nesting a file may hold (a crafted file must not exhaust the interpreter's stack)
MAX_DEPTH = 400

_U32 = struct.Struct("<I")
#: the tag of each sequence type the codec writes item by item
_SEQUENCE_TAGS: dict[type, bytes] = {
    tuple: b"t",
    list: b"l",
    set: b"S",
    frozenset: b"Z",
    collections.deque: b"Q",
}
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")
_SMALL = range(-(2**63), 2**63)


class UnsafeFileError(ValueError):
    """A file that is not this encoding's data (a crafted or corrupt file): refused, nothing
    of it ran (a ``ValueError``, so the front ends report it in one line, exit 2)."""


class NotDataError(TypeError):
    """A value :func:`encode` cannot write (a function, an open file, a class instance that is
    not a dataclass or NamedTuple): a model whose states hold one cannot be checkpointed."""


def trust_package(name: str) -> None:
    """Let files name the data classes of package ``name`` and its modules (a user's
    ``--system`` model)."""
    _EXTRA_MODULES.add(name)


def _is_data_class(obj: Any) -> bool:
    return isinstance(obj, type) and (
        (issubclass(obj, tuple) and hasattr(obj, "_fields"))
        or issubclass(obj, enum.Enum)
        or dataclasses.is_dataclass(obj)
    )


def find_class(module: str, qualname: str, *, data: bool = True) -> type:
    """The data class a file names (with ``data=False`` any class: a class referred to, as a
    coverage key, never instantiated), found without importing anything outside the trusted
    packages (an import runs code)."""
    if not module or not qualname:
        raise UnsafeFileError("bad data: a class reference with an empty name")
    top = module.split(".")[0]
    if module in sys.modules:
        obj: Any = sys.modules[module]
    elif top in PROJECT_PACKAGES or top in _EXTRA_MODULES:
        try:
            obj = importlib.import_module(module)
        except ImportError:
            raise UnsafeFileError(f"the file names {module}.{qualname}, which does not exist") from None
    else:
        raise UnsafeFileError(f"the file names {module}.{qualname}, of a module this run does not trust")
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise UnsafeFileError(f"the file names {module}.{qualname}, which does not exist")
    if not isinstance(obj, type) or (data and not _is_data_class(obj)):
        raise UnsafeFileError(f"the file names {module}.{qualname}, which is not a data type")
    return obj


def _named(cls: type) -> Any:
    """What ``cls``'s module and qualified name lead to in this process (None if nothing)."""
    obj: Any = sys.modules.get(cls.__module__)
    for part in cls.__qualname__.split("."):
        obj = getattr(obj, part, None)
    return obj


def class_names(classes: list[type]) -> list[tuple[str, str]]:
    """Each class's (module, qualified name), by which :func:`find_class` finds it again;
    :class:`NotDataError` for a class that name does not lead back to (one defined in a function).

    >>> from collections import OrderedDict
    >>> class_names([OrderedDict])
    [('collections', 'OrderedDict')]
    """
    for c in classes:
        if _named(c) is not c:
            raise NotDataError(f"cannot write the class {c.__qualname__}: it cannot be found by name")
    return [(c.__module__, c.__qualname__) for c in classes]


class _Writer:
    def __init__(self) -> None:
        self.out = bytearray([VERSION])
        self.memo: dict[int, int] = {}
        self.keep: list[Any] = []  # the memoised objects stay alive, so their ids stay theirs
        self.classes: dict[type, int] = {}

    def _str(self, s: str) -> None:
        b = s.encode("utf-8", "surrogatepass")
        self.out += _U32.pack(len(b))
        self.out += b

    def _class(self, cls: type) -> None:
        k = self.classes.get(cls)
        if k is None:
            if _named(cls) is not cls:  # a class defined in a function, or renamed: not nameable
                raise NotDataError(
                    f"cannot write an instance of {cls.__qualname__}: its class cannot be found by name"
                )
            self.classes[cls] = len(self.classes)
            self.out += b"K"
            self._str(cls.__module__)
            self._str(cls.__qualname__)
        else:
            self.out += b"k" + _U32.pack(k)

    def _remember(self, obj: Any) -> None:
        self.memo[id(obj)] = len(self.keep)
        self.keep.append(obj)

    def value(self, obj: Any) -> None:
        out = self.out
        t = type(obj)
        if obj is None:
            out += b"N"
        elif obj is True:
            out += b"T"
        elif obj is False:
            out += b"F"
        elif t is int:
            if obj in _SMALL:
                out += b"i" + _I64.pack(obj)
            else:
                b = obj.to_bytes((obj.bit_length() + 8) // 8, "little", signed=True)
                out += b"I" + _U32.pack(len(b)) + b
        elif t is float:
            out += b"f" + _F64.pack(obj)
        elif id(obj) in self.memo:  # a memoised object is alive: no other object has its id
            out += b"R" + _U32.pack(self.memo[id(obj)])
        elif t is str:
            out += b"s"
            self._str(obj)
            self._remember(obj)
        elif t is bytes or t is bytearray:
            out += b"b" + _U32.pack(len(obj)) + obj
        elif t is tuple or t is list or t is set or t is frozenset or t is collections.deque:
            out += _SEQUENCE_TAGS[t]
            out += _U32.pack(len(obj))
            for x in obj:
                self.value(x)
            if t is tuple or t is frozenset:
                self._remember(obj)
        elif t is dict:
            out += b"d" + _U32.pack(len(obj))
            for k, v in obj.items():
                self.value(k)
                self.value(v)
        elif isinstance(obj, enum.Enum):
            out += b"E"
            self._class(t)
            self._str(obj.name)
        elif isinstance(obj, tuple) and hasattr(t, "_fields"):
            out += b"C"
            self._class(t)
            out += _U32.pack(len(obj))
            for x in obj:
                self.value(x)
            self._remember(obj)
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            names = [f.name for f in dataclasses.fields(obj)]
            out += b"D"
            self._class(t)
            out += _U32.pack(len(names))
            for n in names:
                self._str(n)
                self.value(getattr(obj, n))
        elif t.__module__ == "numpy" and t.__name__ == "ndarray" and obj.dtype.char in _DTYPES:
            a = obj.copy(order="C")
            out += b"A"
            self._str(a.dtype.str)
            out += _U32.pack(a.ndim)
            for n in a.shape:
                out += _U32.pack(n)
            data = a.tobytes()
            out += _U32.pack(len(data)) + data
        elif t is type:  # a class as a value (coverage counts actions by their class)
            if _named(obj) is not obj:
                raise NotDataError(f"cannot write the class {obj.__qualname__}: it cannot be found by name")
            out += b"Y"
            self._str(obj.__module__)
            self._str(obj.__qualname__)
        elif t.__module__ == "numpy" and hasattr(obj, "dtype") and obj.dtype.char in "bBhHiIlLqQ":
            self.value(int(obj))  # a numpy integer
        elif t.__module__ == "numpy" and hasattr(obj, "dtype") and obj.dtype.char in "efdg":
            self.value(float(obj))  # a numpy float
        else:
            raise NotDataError(
                f"cannot write a {t.__module__}.{t.__qualname__} to a data file (not a data type)"
            )


class _Reader:
    def __init__(self, data: bytes | memoryview) -> None:
        self.buf = memoryview(data)
        self.pos = 0
        self.memo: list[Any] = []
        self.classes: list[type] = []
        self.depth = 0

    def _take(self, n: int) -> memoryview:
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise UnsafeFileError("bad data: truncated")
        v = self.buf[self.pos : end]
        self.pos = end
        return v

    def _u32(self) -> int:
        return _U32.unpack(self._take(4))[0]

    def _count(self) -> int:
        n = self._u32()
        if n > len(self.buf) - self.pos:  # every item takes at least one byte
            raise UnsafeFileError("bad data: a length beyond the end of the file")
        return n

    def _str(self) -> str:
        try:
            return bytes(self._take(self._u32())).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise UnsafeFileError("bad data: a string that is not UTF-8") from None

    def _class(self) -> type:
        tag = bytes(self._take(1))
        if tag == b"K":
            cls = find_class(self._str(), self._str())
            self.classes.append(cls)
            return cls
        if tag == b"k":
            k = self._u32()
            if k >= len(self.classes):
                raise UnsafeFileError("bad data: a reference to a class not yet named")
            return self.classes[k]
        raise UnsafeFileError(f"bad data: tag {tag!r} where a class was expected")

    def value(self) -> Any:
        tag = bytes(self._take(1))
        if tag == b"N":
            return None
        if tag == b"T":
            return True
        if tag == b"F":
            return False
        if tag == b"i":
            return _I64.unpack(self._take(8))[0]
        if tag == b"I":
            return int.from_bytes(self._take(self._u32()), "little", signed=True)
        if tag == b"f":
            return _F64.unpack(self._take(8))[0]
        if tag == b"s":
            s = self._str()
            self.memo.append(s)
            return s
        if tag == b"b":
            return bytes(self._take(self._u32()))
        if tag == b"Y":
            return find_class(self._str(), self._str(), data=False)
        if tag == b"R":
            k = self._u32()
            if k >= len(self.memo):
                raise UnsafeFileError("bad data: a back-reference to nothing")
            return self.memo[k]
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise UnsafeFileError(f"bad data: nested deeper than {MAX_DEPTH} levels")
        try:
            if tag in (b"t", b"l", b"S", b"Z", b"Q"):
                items = [self.value() for _ in range(self._count())]
                if tag == b"t":
                    out: Any = tuple(items)
                elif tag == b"Z":
                    out = frozenset(items)
                else:
                    return {b"l": list, b"S": set, b"Q": collections.deque}[tag](items)
                self.memo.append(out)
                return out
            if tag == b"d":
                n = self._count()
                d = {}
                for _ in range(n):
                    k = self.value()
                    d[k] = self.value()
                return d
            if tag == b"E":
                cls = self._class()
                name = self._str()
                if not issubclass(cls, enum.Enum) or name not in cls.__members__:
                    raise UnsafeFileError(f"bad data: {cls.__qualname__} has no member {name!r}")
                return cls[name]
            if tag == b"C":
                cls = self._class()
                if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
                    raise UnsafeFileError(f"bad data: {cls.__qualname__} is not a NamedTuple")
                nt = tuple.__new__(cls, [self.value() for _ in range(self._count())])
                self.memo.append(nt)
                return nt
            if tag == b"D":
                cls = self._class()
                if not dataclasses.is_dataclass(cls):
                    raise UnsafeFileError(f"bad data: {cls.__qualname__} is not a dataclass")
                fields = {f.name for f in dataclasses.fields(cls)}
                obj = object.__new__(cls)
                for _ in range(self._count()):
                    name = self._str()
                    if name not in fields:
                        raise UnsafeFileError(f"bad data: {cls.__qualname__} has no field {name!r}")
                    object.__setattr__(obj, name, self.value())
                return obj
            if tag == b"A":
                import numpy as np  # here: the CLI starts without numpy

                dtype = self._str()
                try:
                    dt = np.dtype(dtype)
                except TypeError:
                    raise UnsafeFileError(f"bad data: array dtype {dtype!r}") from None
                if dt.char not in _DTYPES:
                    raise UnsafeFileError(f"bad data: array dtype {dtype!r}")
                shape = tuple(self._u32() for _ in range(min(self._u32(), 32)))
                raw = self._take(self._u32())
                try:
                    return np.frombuffer(bytes(raw), dtype=dt).reshape(shape).copy()
                except ValueError:
                    raise UnsafeFileError("bad data: an array whose size is not its shape's") from None
            raise UnsafeFileError(f"bad data: unknown tag {tag!r}")
        finally:
            self.depth -= 1


def encode(obj: Any) -> bytes:
    """``obj`` as bytes of this encoding (:class:`NotDataError` for a value that is not data).

    >>> encode(None)
    b'\\x01N'
    """
    w = _Writer()
    w.value(obj)
    return bytes(w.out)


def decode(data: bytes | memoryview, *, name: str = "") -> Any:
    """The value :func:`encode` wrote into ``data``; :class:`UnsafeFileError` (one line,
    prefixed with ``name`` when given) for anything else.

    >>> decode(b"\\x09N", name="x.bin")
    Traceback (most recent call last):
    ...
    explorer.search.codec.UnsafeFileError: x.bin: not a kafka-mc data file (version byte 9, expected 1)
    """
    prefix = f"{name}: " if name else ""
    view = memoryview(data)
    if len(view) < 1 or view[0] != VERSION:
        got = view[0] if len(view) else "none"
        raise UnsafeFileError(f"{prefix}not a kafka-mc data file (version byte {got}, expected {VERSION})")
    r = _Reader(view)
    r.pos = 1
    try:
        out = r.value()
    except UnsafeFileError as e:
        raise UnsafeFileError(f"{prefix}{e}") from None
    except (struct.error, OverflowError, MemoryError, RecursionError) as e:
        raise UnsafeFileError(f"{prefix}bad data ({type(e).__name__})") from None
    if r.pos != len(view):
        raise UnsafeFileError(f"{prefix}bad data: {len(view) - r.pos} bytes after the value")
    return out
