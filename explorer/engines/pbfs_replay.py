"""What the ``--workers`` search's driver rebuilds after the search from the keys it kept:
counterexample traces (replayed through ``successors``, hash by hash or from the fingerprint
parent log, with symmetry mapped back to real states) and the graph on which ``eventually``
properties are decided (:mod:`explorer.search.live_graph`).

Example
-------
>>> _chain({1: None, 2: 1, 3: 2}, 3)
[1, 2, 3]
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from explorer import speedups
from explorer.core import (
    Property,
    PropertyKind,
    Violation,
)
from explorer.engines.base import UntrustedResultError
from explorer.search.live_graph import FingerprintGraph, GraphError, check_eventually
from explorer.search.symmetry import Canonicaliser
from explorer.search.visited import NO_PARENT, ParentLog, ReplayMismatch, new_table, replay_path

__all__ = ["HashCollisionError"]

_MASK = (1 << 64) - 1


class HashCollisionError(UntrustedResultError):
    """A trace could not be replayed: no successor has the recorded hash (a collision)."""


def _ordered_successors(system: Any) -> Callable[[Any], Iterator[tuple[Any, Any]]]:
    """``successors`` in the order the engines enumerate them (labelled if the system labels)."""
    labelled = getattr(system, "successors_labelled", None)
    if labelled is None:
        return system.successors  # type: ignore[no-any-return]

    def succ(s: Any) -> Iterator[tuple[Any, Any]]:
        for a, t, _ in labelled(s):
            yield a, t

    return succ


def _chain(visited: dict[int, int | None], h: int) -> list[int]:
    path = [h]
    while (p := visited[path[-1]]) is not None:
        path.append(p)
    path.reverse()
    return path


def _replay(system: Any, path: list[int], canon: Canonicaliser | None = None) -> list[Any]:
    """The states whose hashes are ``path``, from an initial state through ``successors``
    (with ``canon``, the representatives the symmetry-reduced search kept)."""
    rep = (lambda x: x) if canon is None else canon
    s = next((r for s in system.init_states() if hash(r := rep(s)) == path[0]), None)
    if s is None:
        raise HashCollisionError("trace replay: no initial state has the recorded hash (a hash collision?)")
    states = [s]
    for i, h in enumerate(path[1:], 1):
        t = next((r for _, t in system.successors(states[-1]) if hash(r := rep(t)) == h), None)
        if t is None:
            raise HashCollisionError(
                f"trace replay: step {i}: no successor has the recorded hash (a hash collision?)"
            )
        states.append(t)
    return states


class _LeanVisited:
    """The driver's visited set with ``visited="fingerprints"``: a fingerprint table and the
    parent records by state index (:mod:`explorer.search.visited`), in place of the dict
    ``hash -> parent hash``. Keys are stable fingerprints as signed int64 (the workers'
    :func:`_signed_fingerprint`)."""

    def __init__(self, folder: Path | None = None, resume_count: int | None = None, table: Any = None):
        """A temporary folder for the records, or (``folder``) a checkpoint's, whose records
        are kept; ``resume_count`` and ``table`` continue a snapshot."""
        self._cleanup: weakref.finalize[Any, Any] | None = None
        if folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="kafka-mc-pbfs-"))
            self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.folder), True)
        else:
            self.folder = Path(folder)
        self.table = new_table() if table is None else table
        self.log = ParentLog(self.folder / "parents.bin", resume_count=resume_count)
        self.removed = 0  # new states of a level cut short, left in the table

    def __len__(self) -> int:
        return len(self.table) - self.removed

    def index_of(self, h: int) -> int:
        """The index of the state whose key is ``h`` (its first record)."""
        self.log.flush()
        fps = np.memmap(self.log.path, dtype=np.uint64, mode="r").reshape(-1, 2)[:, 1]
        hit = np.flatnonzero(fps == np.uint64(h & _MASK))
        if not len(hit):  # pragma: no cover - every reported key was recorded
            raise HashCollisionError(f"trace replay: no state has the fingerprint {h & _MASK:016x}")
        return int(hit[0])

    def depth(self, h: int) -> int:
        """The BFS depth of the state whose key is ``h``."""
        i, d = self.index_of(h), 0
        while (i := self.log.record(i)[0]) != NO_PARENT:
            d += 1
        return d

    def path(self, system: Any, h: int, canon: Canonicaliser | None = None) -> list[Any]:
        """The states from an initial state to the one whose key is ``h``, replayed."""
        try:
            return replay_path(
                system.init_states, _ordered_successors(system), self.log, self.index_of(h), canon
            )
        except ReplayMismatch as e:
            raise HashCollisionError(f"trace replay: {e}") from None

    def close(self) -> None:
        """Delete the records (those of a checkpoint stay)."""
        self.log.close()
        if self._cleanup is not None:
            self._cleanup()


def _check_live(
    system: Any,
    props: list[Property],
    keep_going: bool,
    key: Callable[[Any], int],
    seen: Any,
    lean: _LeanVisited | None,
    live_dir: Path,
) -> dict[str, Violation | None]:
    """The ``eventually`` properties decided on the graph the workers recorded: the states in
    ``bfs`` order with their parents (the driver's dict, or the parent log), the edges from
    ``live_dir`` (:func:`explorer.search.live_graph.check_eventually`)."""
    if lean is None:
        keys = np.array(list(seen), dtype=np.int64).view(np.uint64)
        index = {h: i for i, h in enumerate(seen)}
        parent = np.array([-1 if p is None else index[p] for p in seen.values()], dtype=np.int64)
    else:
        lean.log.flush()
        rec = np.fromfile(lean.log.path, dtype=np.uint64).reshape(-1, 2)[: len(lean)]
        keys = rec[:, 1].copy()
        link = rec[:, 0] >> np.uint64(32)
        parent = np.where(link == np.uint64(NO_PARENT), -1, link.astype(np.int64))
    parts = []
    for path in sorted(live_dir.glob("edges-*.npz")):
        with np.load(path) as z:
            parts.append({k: z[k] for k in z.files})
    live = [p for p in props if p.kind is PropertyKind.EVENTUALLY]
    try:
        graph = FingerprintGraph(keys, parent, parts)
        return check_eventually(system, live, graph, key, keep_going, action_fp=speedups.fingerprint)
    except GraphError as e:
        raise HashCollisionError(str(e)) from None
