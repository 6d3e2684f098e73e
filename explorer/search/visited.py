"""The lean visited set: 64-bit fingerprints in one open-addressing array, and the
parent records from which a counterexample is replayed.

:class:`FingerprintTable` is a set of 64-bit fingerprints (:func:`explorer.encoding.fingerprint`,
the same in every process and every run) held in one array of ``uint64`` slots, 8 bytes a
slot and no Python object per state. The C accelerator's ``FpTable``
(``explorer/_speedups.c``) is used when it is built; :class:`PyFingerprintTable` is its
pure-Python twin with the very same layout, so a table saved by either loads in either:

* the home slot of a key is ``(key * capacity) >> 64`` (any capacity, not only powers
  of two); collisions probe linearly upwards and wrap; ``0`` marks an empty slot, so the
  fingerprint 0 is stored as 1;
* the array grows by half (re-inserting its slots in order) once it is 4/5 full, so it
  holds between 8 / 0.8 = 10 and 8 / 0.533 = 15 bytes per state.

:class:`ParentLog` keeps, per state index (the order the search first meets states),
a 16-byte record ``(parent index << 32 | successor index, fingerprint)`` in a file; the
initial states have the parent index ``NO_PARENT`` and their position in
``init_states()``. :func:`replay_path` rebuilds the states from an initial state to any
index by re-running ``successors`` and checks each fingerprint: a mismatch (a 64-bit
collision merged two states, or the model is not deterministic) raises
:class:`ReplayMismatch`.

Example
-------
>>> t = new_table(8)
>>> t.add(5), t.add(5), 5 in t, 6 in t, len(t)
(True, False, True, False, 1)
>>> py = PyFingerprintTable(8)
>>> for k in (5, 7, 2**64 - 1):
...     _ = py.add(k)
>>> bytes(table_buffer(py)) == bytes(table_buffer(_twin(py)))
True
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from explorer import encoding, speedups
from explorer.search import safeio
from explorer.search.iopath import naming

__all__ = [
    "NO_PARENT",
    "FingerprintTable",
    "FingerprintVisited",
    "HashVisited",
    "ParentLog",
    "PyFingerprintTable",
    "ReplayMismatch",
    "StateVisited",
    "load_table",
    "new_table",
    "ordered_successors",
    "replay_path",
    "save_table",
    "table_buffer",
]

#: the parent index of an initial state
NO_PARENT = 0xFFFFFFFF
_MASK = (1 << 64) - 1


class ReplayMismatch(RuntimeError):
    """A stored path no longer replays: no successor has the recorded fingerprint."""


class PyFingerprintTable:
    """The pure-Python twin of the C ``FpTable``: same layout, same growth, same answers.

    >>> t = PyFingerprintTable(8)
    >>> [t.add(k) for k in (0, 1, 3)], len(t), t.capacity
    ([True, False, True], 2, 8)
    """

    def __init__(self, capacity: int = 1024, data: Any = None, count: int = 0):
        cap = max(8, capacity)
        if data is None:
            self.slots = array("Q", bytes(8 * cap))
            self.count = 0
        else:
            self.slots = array("Q")
            self.slots.frombytes(bytes(data))
            if len(self.slots) != cap:
                raise ValueError("FpTable: data is not capacity * 8 bytes")
            self.count = count
        self.capacity = cap

    def __len__(self) -> int:
        return self.count

    def _slot(self, key: int) -> int:
        """Where ``key`` is, or the empty slot where it goes (linear probing from its hash)."""
        slots, cap = self.slots, self.capacity
        i = (key * cap) >> 64
        while slots[i] and slots[i] != key:
            i = i + 1 if i + 1 < cap else 0
        return i

    def __contains__(self, fp: int) -> bool:
        return self.slots[self._slot(fp or 1)] != 0

    def _grow(self) -> None:
        old = self.slots
        self.capacity += self.capacity // 2
        self.slots = array("Q", bytes(8 * self.capacity))
        for v in old:
            if v:
                self.slots[self._slot(v)] = v

    def add(self, fp: int) -> bool:
        """Insert ``fp``: True if it was new, False if it was there."""
        if fp < 0 or fp > _MASK:
            raise OverflowError("a fingerprint is an unsigned 64-bit int")
        if self.count >= self.capacity - self.capacity // 5:
            self._grow()
        key = fp or 1
        i = self._slot(key)
        if self.slots[i]:
            return False
        self.slots[i] = key
        self.count += 1
        return True

    def add_state(self, state: Any) -> int | None:
        """Insert ``fingerprint(state)``: the fingerprint if it was new, None if it was there."""
        fp = speedups.fingerprint(state)
        return fp if self.add(fp) else None


#: the table class in use: the C ``FpTable`` when the accelerator is built
FingerprintTable: Any = speedups.fingerprint_table_class() or PyFingerprintTable


def new_table(capacity: int = 1024) -> Any:
    """An empty fingerprint table (C when built, else pure Python).

    >>> len(new_table())
    0
    """
    return FingerprintTable(capacity)


def table_buffer(table: Any) -> memoryview:
    """The table's slot array as bytes (no copy), in either implementation.

    >>> len(table_buffer(new_table(8)))
    64
    """
    if isinstance(table, PyFingerprintTable):
        return memoryview(table.slots).cast("B")
    return memoryview(table).cast("B")


def _twin(table: Any) -> Any:
    """The same table in the other implementation (for tests)."""
    other = FingerprintTable if isinstance(table, PyFingerprintTable) else PyFingerprintTable
    return other(table.capacity, bytes(table_buffer(table)), len(table))


def save_table(table: Any, path: Path) -> None:
    """Write the slot array to ``path`` (flushed to disk).

    >>> import tempfile
    >>> t = new_table(8); _ = t.add(3)
    >>> p = Path(tempfile.mkdtemp()) / "t.bin"; save_table(t, p)
    >>> 3 in load_table(p, 8, 1)
    True
    """
    with naming(path), open(path, "wb") as f:
        f.write(table_buffer(table))
        f.flush()
        os.fsync(f.fileno())


def load_table(path: Path, capacity: int, count: int) -> Any:
    """The table saved by :func:`save_table` (``capacity`` slots, ``count`` fingerprints)."""
    return FingerprintTable(capacity, Path(path).read_bytes(), count)


class ParentLog:
    """Per state index, ``(parent index << 32 | successor index, fingerprint)``, in a file.

    Records are buffered in memory and appended by :meth:`flush`; :meth:`record` reads
    one back. The file only grows, so a snapshot that noted :attr:`count` stays valid
    whatever is appended later (:meth:`truncate` drops the rest on resume).

    >>> import tempfile
    >>> log = ParentLog(Path(tempfile.mkdtemp()) / "parents.bin")
    >>> log.append(NO_PARENT, 0, 11); log.append(0, 2, 12); log.flush()
    >>> log.count, log.record(1)
    (2, (0, 2, 12))
    """

    RECORD = 16

    def __init__(self, path: Path, resume_count: int | None = None):
        self.path = Path(path)
        if resume_count is None:  # a new file (a link there is replaced, never truncated through)
            with naming(self.path):
                safeio.create(self.path).close()
            self.flushed = 0
        else:
            self.truncate(resume_count)
        self.buf = array("Q")
        self._reader: Any = None

    @property
    def count(self) -> int:
        """Records written so far (flushed or not)."""
        return self.flushed + len(self.buf) // 2

    def append(self, parent: int, succ: int, fp: int) -> None:
        """Add the record of the next state index."""
        self.buf.append((parent << 32) | succ)
        self.buf.append(fp)

    def flush(self, sync: bool = False) -> None:
        """Append the buffered records to the file (``sync``: and to the disk)."""
        if self.buf:
            with naming(self.path), safeio.open_append(self.path) as f:
                self.buf.tofile(f)
                if sync:
                    f.flush()
                    os.fsync(f.fileno())
            self.flushed += len(self.buf) // 2
            del self.buf[:]
        elif sync:
            with naming(self.path), safeio.open_append(self.path) as f:
                os.fsync(f.fileno())

    def truncate(self, count: int) -> None:
        """Keep the first ``count`` records of the file (those a snapshot knows); a link there
        is refused (:class:`explorer.search.safeio.LinkError`), never truncated through."""
        if self.path.is_symlink():
            raise safeio.LinkError(self.path)
        size = self.path.stat().st_size
        if size < count * self.RECORD:
            raise ValueError(f"{self.path}: {size // self.RECORD} records, the snapshot needs {count}")
        safeio.truncate(self.path, count * self.RECORD)
        self.flushed = count

    def record(self, index: int) -> tuple[int, int, int]:
        """``(parent index, successor index, fingerprint)`` of the state ``index``."""
        if index >= self.flushed:
            k = 2 * (index - self.flushed)
            link, fp = self.buf[k], self.buf[k + 1]
        else:
            if self._reader is None:
                self._reader = open(self.path, "rb")  # noqa: SIM115 - closed by close()
            self._reader.seek(index * self.RECORD)
            a = array("Q")
            a.frombytes(self._reader.read(self.RECORD))
            link, fp = a[0], a[1]
        return link >> 32, link & 0xFFFFFFFF, fp

    def close(self) -> None:
        """Close the reader (the file stays)."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def replay_path(
    init_states: Callable[[], Iterable[Any]],
    successors: Callable[[Any], Iterable[tuple[Any, Any]]],
    log: ParentLog,
    index: int,
    canon: Callable[[Any], Any] | None = None,
) -> list[Any]:
    """The states from an initial state to the state ``index``, replayed and checked.

    Each step takes the recorded successor of the previous state (with ``canon``, the
    symmetry reduction's representative of it) and compares its fingerprint with the
    recorded one; a difference raises :class:`ReplayMismatch`.

    >>> import tempfile
    >>> log = ParentLog(Path(tempfile.mkdtemp()) / "p.bin")
    >>> log.append(NO_PARENT, 0, encoding.fingerprint(0)); log.append(0, 0, encoding.fingerprint(1))
    >>> replay_path(lambda: [0], lambda s: [("inc", s + 1)], log, 1)
    [0, 1]
    >>> log.append(1, 0, 12345)
    >>> replay_path(lambda: [0], lambda s: [("inc", s + 1)], log, 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    explorer.search.visited.ReplayMismatch: step 2 (state index 2): the replayed state's fingerprint ...
    """
    chain: list[tuple[int, int, int]] = []
    i = index
    while True:
        parent, succ, fp = log.record(i)
        chain.append((i, succ, fp))
        if parent == NO_PARENT:
            break
        i = parent
    chain.reverse()
    states: list[Any] = []
    for step, (i, succ, fp) in enumerate(chain):
        source: Iterable[Any] = init_states() if not states else (t for _, t in successors(states[-1]))
        s = next((x for k, x in enumerate(source) if k == succ), None)
        if canon is not None and s is not None:
            s = canon(s)
        got = None if s is None else encoding.fingerprint(s)
        if got != fp:
            shown = "missing" if got is None else f"{got:016x}"
            raise ReplayMismatch(
                f"step {step} (state index {i}): the replayed state's fingerprint is {shown}, "
                f"the recorded one {fp:016x} (a 64-bit fingerprint collision, or a model that "
                "is not deterministic)"
            )
        states.append(s)
    return states


class StateVisited:
    """The visited set that keeps every state, with the state it was first reached from
    (None for an initial state): exact, and the graph ``eventually`` properties need.

    ``add`` returns whether the state is new; ``path(s)`` the states from an initial state
    to ``s`` (a search finds a state of this set again by the state itself).

    >>> v = StateVisited()
    >>> v.add_initial(0, 0), v.add(1, 0, 0), v.add(1, 0, 1), v.path(1)
    (True, True, False, [0, 1])
    """

    keeps_states = True

    def __init__(self) -> None:
        self.parents: dict[Any, Any] = {}

    def __len__(self) -> int:
        return len(self.parents)

    def __contains__(self, s: Any) -> bool:
        return s in self.parents

    def add_initial(self, s: Any, k: int) -> bool:
        """Add the ``k``-th initial state; True if it was new."""
        n = len(self.parents)
        self.parents.setdefault(s, None)
        return len(self.parents) != n

    def add(self, t: Any, parent: Any, link: int) -> bool:
        """Add ``t``, reached from ``parent``; True if it was new (one hash of ``t``)."""
        p = self.parents
        n = len(p)
        p.setdefault(t, parent)
        return len(p) != n

    def path(self, at: Any) -> list[Any]:
        """The states from an initial state to the one at ``at``."""
        parents = self.parents
        path = [at]
        while (p := parents[path[-1]]) is not None:
            path.append(p)
        path.reverse()
        return path

    def notes(self) -> list[str]:
        """What a result says of this visited set (nothing: it is exact)."""
        return []

    def flush(self, sync: bool = False) -> None:
        """Nothing to write."""

    def close(self) -> None:
        """Nothing to release."""


def ordered_successors(system: Any) -> Callable[[Any], Iterable[tuple[Any, Any]]]:
    """``successors`` in the order the searches enumerate them (labelled if the system labels)."""
    labelled = getattr(system, "successors_labelled", None)
    if labelled is None:
        return system.successors  # type: ignore[no-any-return]
    return lambda s: ((a, t) for a, t, _ in labelled(s))


class HashVisited(StateVisited):
    """:class:`StateVisited` over the states' keys (Python's ``hash``, the same in forked
    processes) instead of the states: ``key -> parent key``, which is all the driver of the
    ``--workers`` search holds; ``path(key)`` replays the chain of keys from an initial state
    through ``successors`` (with ``canon``, the representatives) and raises
    :class:`ReplayMismatch` where no successor has the recorded key (a hash collision).

    >>> class Line:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("inc", s + 1)]
    >>> v = HashVisited(Line())
    >>> v.add_initial(hash(0), 0), v.add(hash(1), hash(0), 0), v.path(hash(1))
    (True, True, [0, 1])
    """

    keeps_states = False

    def __init__(self, system: Any, canon: Callable[[Any], Any] | None = None) -> None:
        super().__init__()
        self.system, self.canon = system, canon

    def path(self, at: Any) -> list[Any]:
        """The states from an initial state to the one whose key is ``at``, replayed."""
        rep = (lambda x: x) if self.canon is None else self.canon
        keys = super().path(at)
        s = next((r for s in self.system.init_states() if hash(r := rep(s)) == keys[0]), None)
        if s is None:
            raise ReplayMismatch("no initial state has the recorded hash (a hash collision?)")
        states = [s]
        for i, h in enumerate(keys[1:], 1):
            t = next((r for _, t in self.system.successors(states[-1]) if hash(r := rep(t)) == h), None)
            if t is None:
                raise ReplayMismatch(f"step {i}: no successor has the recorded hash (a hash collision?)")
            states.append(t)
        return states


class FingerprintVisited:
    """The lean visited set: a :class:`FingerprintTable` (about 10-15 bytes a state) and a
    :class:`ParentLog` in ``folder``; a search finds a state again by its index (the order
    in which it was first met), and ``path(index)`` replays it.

    ``link`` (``parent index << 32 | successor index``) is what the log keeps of how a
    state was reached; ``canon`` is the symmetry reduction's representative function (the
    replay applies it as the search did). The first new states' C fingerprints are checked
    against :func:`explorer.encoding.fingerprint`.

    >>> import tempfile
    >>> class Line:
    ...     def init_states(self): return [0]
    ...     def successors(self, s): return [("inc", s + 1)]
    >>> v = FingerprintVisited(Path(tempfile.mkdtemp()), Line())
    >>> v.add_initial(0, 0), v.add(1, 0, 0 << 32 | 0), v.add(1, 0, 0), 1 in v, v.path(1)
    (True, True, False, True, [0, 1])
    """

    keeps_states = False
    #: the first new states whose C fingerprint is compared with explorer.encoding's
    SELF_CHECKS = 256
    #: parent records buffered before they are appended to the file
    LOG_FLUSH = 1 << 19

    def __init__(
        self,
        folder: Path,
        system: Any,
        canon: Callable[[Any], Any] | None = None,
        table: Any = None,
        resume_count: int | None = None,
        checks_left: int = SELF_CHECKS,
    ) -> None:
        self.system, self.canon = system, canon
        self.table = new_table() if table is None else table
        self.log = ParentLog(Path(folder) / "parents.bin", resume_count=resume_count)
        self._add_state = self.table.add_state
        self._buf = self.log.buf
        self.checks_left = checks_left
        #: new states of a level cut short that stay in the table (the ``--workers`` search
        #: merges a level past the state where it stops)
        self.removed = 0

    def __len__(self) -> int:
        return len(self.table) - self.removed

    def index_of(self, fp: int) -> int:
        """The index of the state whose fingerprint is ``fp`` (its first record)."""
        import numpy as np

        self.log.flush()
        fps = np.memmap(self.log.path, dtype=np.uint64, mode="r").reshape(-1, 2)[:, 1]
        hit = np.flatnonzero(fps == np.uint64(fp & _MASK))
        if not len(hit):  # pragma: no cover - every reported key was recorded
            raise ReplayMismatch(f"no state has the fingerprint {fp & _MASK:016x}")
        return int(hit[0])

    def bfs_graph(self) -> tuple[Any, Any]:
        """The states' fingerprints in ``bfs`` order (uint64) and each one's parent index (-1 for
        an initial state), from the parent records: the graph's nodes ``eventually`` properties
        are decided on (:class:`explorer.search.live_graph.FingerprintGraph`)."""
        import numpy as np

        self.log.flush()
        rec = np.fromfile(self.log.path, dtype=np.uint64).reshape(-1, 2)[: len(self)]
        link = rec[:, 0] >> np.uint64(32)
        return rec[:, 1].copy(), np.where(link == np.uint64(NO_PARENT), -1, link.astype(np.int64))

    def __contains__(self, s: Any) -> bool:
        return speedups.fingerprint(s) in self.table

    def _self_check(self, t: Any, fp: int) -> None:
        self.checks_left -= 1
        if encoding.fingerprint(t) != fp:
            raise ReplayMismatch(
                "the C fingerprint differs from explorer.encoding's: rebuild explorer/_speedups.c "
                f"or set KAFKA_MC_PURE_PYTHON=1 (state {t!r:.120})"
            )

    def add_initial(self, s: Any, k: int) -> bool:
        """Add the ``k``-th initial state; True if it was new."""
        return self.add(s, None, (NO_PARENT << 32) | k)

    def add(self, t: Any, parent: Any, link: int) -> bool:
        """Add ``t`` (reached by ``link``); True if its fingerprint was new."""
        fp = self._add_state(t)
        if fp is None:
            return False
        buf = self._buf
        buf.append(link)
        buf.append(fp)
        if len(buf) >= self.LOG_FLUSH:
            self.log.flush()
        if self.checks_left:
            self._self_check(t, fp)
        return True

    def path(self, at: Any) -> list[Any]:
        """The states from an initial state to the one of index ``at``, replayed from the log."""
        return replay_path(self.system.init_states, ordered_successors(self.system), self.log, at, self.canon)

    def notes(self) -> list[str]:
        """The collision odds of the run, as TLC reports them (about n**2 / 2**65)."""
        n = len(self)
        return [f"visited set: 64-bit fingerprints; collision odds {n * n / 2.0**65:.1e}"]

    def flush(self, sync: bool = False) -> None:
        """Write the buffered parent records (``sync``: to the disk)."""
        self.log.flush(sync=sync)

    def close(self) -> None:
        """Close the log's reader (the file stays)."""
        self.log.close()
