"""Reading the pickled files a run leaves (checkpoint snapshots, spilled frontiers, the
``--workers`` frontier shares, state blobs) without running code a crafted file brings.

A checkpoint is something people copy between machines, so a file handed to ``--resume``
must not be able to execute code. :func:`load` and :func:`loads` unpickle with a restricted
``find_class`` (the pattern of the ``pickle`` documentation's *Restricting Globals*): a file
may name only data types:

- the plain builtins (``tuple``, ``list``, ``dict``, ``set``, ``frozenset``, numbers, strings,
  bytes, ``range``, ``slice``) and ``collections``' containers;
- classes of the project's packages (``model``, ``invariants``, ``explorer``, ``tests``), of a
  user's ``--system`` package, or of a module the process has already imported (a file never
  makes it import anything else: an import runs code); never a function, and only a class
  that is a tuple (a ``NamedTuple``), an ``Enum``, a dataclass or a plain exception (data,
  whose unpickling runs no code of its own beyond its fields);
- numpy's array reconstruction (the ``--workers`` shares carry rank arrays).

Anything else (``os.system``, ``builtins.eval``, ``subprocess.Popen``, a project function) is
refused with :class:`UnsafePickleError`, one line naming the global.

>>> import pickle
>>> loads(pickle.dumps((1, frozenset({2}), [b"x"])))
(1, frozenset({2}), [b'x'])
>>> class Evil:
...     def __reduce__(self):
...         import os
...         return (os.system, ("echo pwned",))
>>> loads(pickle.dumps(Evil()))
Traceback (most recent call last):
...
explorer.search.safeload.UnsafePickleError: the file names posix.system, which is not a data type
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import io
import pickle
import sys
from typing import IO, Any

__all__ = ["UnsafePickleError", "load", "loads", "trust_package"]

#: the project's packages, whose data classes a file may name
PROJECT_PACKAGES = ("model", "invariants", "explorer", "tests")

_BUILTINS = {
    "tuple", "list", "dict", "set", "frozenset", "int", "float", "bool", "str", "bytes", "bytearray",
    "complex", "range", "slice", "object", "NoneType",
}  # fmt: skip
_ALLOWED = {
    ("collections", "OrderedDict"),
    ("collections", "deque"),
    ("collections", "Counter"),
    ("collections", "defaultdict"),
    ("copyreg", "_reconstructor"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy._core.multiarray", "scalar"),
}
#: numpy dtype classes (``numpy.dtypes.Int64DType``, ...) are data types too
_NUMPY_DTYPES = ("numpy.dtypes",)

#: packages a run registered as holding a user's model (``--system``), trusted like the project's
_EXTRA_MODULES: set[str] = set()


class UnsafePickleError(pickle.UnpicklingError, ValueError):
    """A file names a global that is not a data type: refused, nothing of it ran (a
    ``ValueError``, so the front ends report it in one line, exit 2)."""


def trust_package(name: str) -> None:
    """Let files name the data classes of package ``name`` and its modules (a user's
    ``--system`` model)."""
    _EXTRA_MODULES.add(name)


def _is_data_class(obj: Any) -> bool:
    return isinstance(obj, type) and (
        issubclass(obj, (tuple, enum.Enum, BaseException, frozenset)) or dataclasses.is_dataclass(obj)
    )


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTINS:
            return super().find_class(module, name)
        if (module, name) in _ALLOWED or module.startswith(_NUMPY_DTYPES):
            return super().find_class(module, name)
        top = module.split(".")[0]
        # a module this process already imported (a state's class), or one of the project's:
        # a file never makes the process import anything else (an import runs code)
        if top in PROJECT_PACKAGES or top in _EXTRA_MODULES or module in sys.modules:
            obj = super().find_class(module, name)
            if _is_data_class(obj):
                return obj
        raise UnsafePickleError(f"the file names {module}.{name}, which is not a data type")


def load(fh: IO[bytes]) -> Any:
    """``pickle.load`` of data only (see the module docstring); a refusal names the file."""
    try:
        return _Restricted(fh).load()
    except UnsafePickleError as e:
        raise UnsafePickleError(f"{getattr(fh, 'name', 'a file')}: {e}") from None


def loads(data: bytes | memoryview) -> Any:
    """``pickle.loads`` of data only (see the module docstring)."""
    return _Restricted(io.BytesIO(bytes(data))).load()


# collections is imported so that its classes resolve the same way in every process
del collections
