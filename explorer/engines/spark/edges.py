"""The state graph of the ``spark`` engine as fingerprint records, for ``eventually`` properties.

Executors (and the driver, for its own levels) record, per expanded state, one goal
and one trigger bit per ``eventually`` property, and per transition the edge
``(source fingerprint, target fingerprint, action fingerprint, kind)``; the driver
writes each level's records to ``edges-NNNNN.npz``
(:mod:`explorer.engines.spark.liveness` reads them).

Example
-------
>>> from explorer.core import eventually
>>> from explorer.engines.spark.fingerprints import state_fingerprint
>>> rec = LiveRecorder([eventually("e", lambda s: s == 1, "")], state_fingerprint)
>>> rec.state(7, 1); rec.edge(7, "go", 8, 0)
>>> [a.tolist() for a in rec.arrays()[:4]]
[[7], [1], [7], [8]]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from explorer.core import Property
from explorer.encoding import fingerprint

__all__ = ["LiveRecorder", "action_fingerprint", "edge_path", "write_edges"]


def action_fingerprint(fp: Callable[[Any], int], a: Any) -> int:
    """A 64-bit fingerprint of an action (its canonical encoding; else its ``repr``).

    >>> from explorer.engines.spark.fingerprints import state_fingerprint
    >>> action_fingerprint(state_fingerprint, ("go", 1)) == state_fingerprint(("go", 1))
    True
    """
    try:
        return fp(a)
    except (TypeError, ValueError):
        return fingerprint(("repr", repr(a)))


class LiveRecorder:
    """Collects a level's goal/trigger bits and edges as numpy-ready lists.

    ``props`` are the ``eventually`` properties; ``fp`` the fingerprint function
    (None records nothing but the empty arrays).
    """

    def __init__(self, props: list[Property], fp: Callable[[Any], int] | None):
        self.props = props
        self.fp = fp
        self.s_fps: list[int] = []
        self.s_bits: list[int] = []
        self.src: list[int] = []
        self.dst: list[int] = []
        self.afp: list[int] = []
        self.kind: list[int] = []
        self._afp: dict[Any, int] = {}

    def state(self, f: int, s: Any) -> None:
        """Record an expanded state: bit ``2i`` is goal ``i``, bit ``2i + 1`` its trigger."""
        if self.fp is None:
            return
        bits = 0
        for i, p in enumerate(self.props):
            if p.check(s):
                bits |= 1 << (2 * i)
            if p.trigger is not None and p.trigger(s):
                bits |= 1 << (2 * i + 1)
        self.s_fps.append(f)
        self.s_bits.append(bits)

    def edge(self, f: int, a: Any, g: int, kind_id: int) -> None:
        """Record the transition ``f --a--> g`` (``kind_id`` indexes the caller's kind table)."""
        if self.fp is None:
            return
        try:
            h = self._afp.get(a)
            if h is None:
                h = self._afp[a] = action_fingerprint(self.fp, a)
        except TypeError:  # an unhashable action
            h = action_fingerprint(self.fp, a)
        self.src.append(f)
        self.dst.append(g)
        self.afp.append(h)
        self.kind.append(kind_id)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """``(state fps, bits, edge sources, targets, action fps, kind ids)`` as arrays."""
        return (
            np.array(self.s_fps, dtype=np.uint64),
            np.array(self.s_bits, dtype=np.uint64),
            np.array(self.src, dtype=np.uint64),
            np.array(self.dst, dtype=np.uint64),
            np.array(self.afp, dtype=np.uint64),
            np.array(self.kind, dtype=np.int32),
        )


def edge_path(run_dir: Path, level: int) -> Path:
    """Where the edges of the states expanded at ``level`` are written."""
    return run_dir / f"edges-{level:05d}.npz"


def write_edges(
    run_dir: Path, level: int, parts: list[tuple[np.ndarray, ...]], kind_ids: list[np.ndarray]
) -> None:
    """Write one level's records (from several partitions; kinds already global ids)."""
    cat = [np.concatenate([p[i] for p in parts]) for i in range(5)]
    np.savez(
        edge_path(run_dir, level),
        s_fps=cat[0],
        s_bits=cat[1],
        src=cat[2],
        dst=cat[3],
        afp=cat[4],
        kind=np.concatenate(kind_ids) if kind_ids else np.zeros(0, np.int32),
    )
