"""``eventually`` properties on the ``spark`` engine: the state graph as fingerprints on disk.

While the search runs, executors (and the driver, for its own levels) record, per expanded
state, one goal and one trigger bit per ``eventually`` property, and per transition the edge
``(source fingerprint, target fingerprint, action fingerprint, kind)``
(:class:`explorer.search.live_graph.LiveRecorder`); the driver writes each level's records to
``edges-NNNNN.npz`` in the run directory (:func:`write_edges`). After a complete search
:func:`check_eventually` numbers the states in ``bfs`` order from the level files and hands the
graph to :func:`explorer.search.live_graph.check_eventually`, which the ``--workers`` search
uses too.

Example
-------
>>> edge_path(Path("/run"), 3).name
'edges-00003.npz'
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from explorer.core import Property, Violation
from explorer.engines.spark.fingerprints import FingerprintCollisionError
from explorer.engines.spark.levels import LevelStore
from explorer.engines.spark.partitions import IDX_BITS, Job
from explorer.search import live_graph
from explorer.search.live_graph import FingerprintGraph, GraphError

__all__ = ["check_eventually", "edge_path", "write_edges"]


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


def spark_graph(store: LevelStore, run_dir: Path, levels: int, kind_names: list[str]) -> FingerprintGraph:
    """The explored graph from the level files (states in ``bfs`` order) and the edge files."""
    fps = [store.get(lv)[1] for lv in range(store.count)]
    keys = [store.get(lv)[0] for lv in range(store.count)]
    n = sum(len(f) for f in fps)
    offsets = np.cumsum([0] + [len(f) for f in fps])
    parent = np.full(n, -1, dtype=np.int64)
    for lv in range(1, len(fps)):
        parent[offsets[lv] : offsets[lv + 1]] = offsets[lv - 1] + (keys[lv] >> IDX_BITS)
    names = np.array([*kind_names, ""], dtype=object)
    parts = []
    for lv in range(levels):
        if not edge_path(run_dir, lv).exists():
            if len(fps[lv]):
                raise RuntimeError(f"liveness: the edges of level {lv} were not recorded")
            continue
        with np.load(edge_path(run_dir, lv)) as z:
            part = {k: z[k] for k in z.files}
        part["kind"] = names[part["kind"]]
        parts.append(part)
    return FingerprintGraph(np.concatenate(fps) if fps else np.zeros(0, np.uint64), parent, parts)


def check_eventually(
    job: Job, props: list[Property], store: LevelStore, run_dir: Path, kind_names: list[str], keep_going: bool
) -> dict[str, Violation | None]:
    """Check the ``eventually`` properties on the graph written under ``run_dir``.

    Returns, per property checked, None (it held) or its lasso Violation; without
    ``keep_going`` the checks stop at the first violation, as in ``bfs``.
    """
    try:
        g = spark_graph(store, run_dir, store.count, kind_names)
        return live_graph.check_eventually(job.system, props, g, job.fp, keep_going, action_fp=job.fp)
    except GraphError as e:
        raise FingerprintCollisionError(str(e)) from None
