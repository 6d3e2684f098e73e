"""The state graph of the ``spark`` engine as fingerprint records, for ``eventually`` properties.

Executors (and the driver, for its own levels) record, per expanded state, one goal
and one trigger bit per ``eventually`` property, and per transition the edge
``(source fingerprint, target fingerprint, action fingerprint, kind)``
(:class:`explorer.search.live_graph.LiveRecorder`); the driver writes each level's records
to ``edges-NNNNN.npz`` (:mod:`explorer.engines.spark.liveness` reads them).

Example
-------
>>> edge_path(Path("/run"), 3).name
'edges-00003.npz'
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from explorer.search.live_graph import LiveRecorder, action_fingerprint

__all__ = ["LiveRecorder", "action_fingerprint", "edge_path", "write_edges"]


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
