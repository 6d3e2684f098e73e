"""One check run with several sets of extra options, side by side in one run: CPU seconds
(this process's children: a ``--workers`` run's worker processes included) and wall time
of ``kafka-mc check``, alternating, medians of ``--runs`` (default 3), each variant's ratio to
the first. For a combination that must give the same result faster (issue 36: ``--workers 2``
with ``eventually`` properties on controller-admin against serial bfs).

Run: ``python -m benchmarks.bench_variants --variant "" --variant "--workers 2" -- controller
--config configs/controller-admin.toml --continue``
"""

from __future__ import annotations

import argparse
import shlex

from benchmarks.bench_revisions import ROOT, timed
from benchmarks.common import median


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", action="append", required=True, help="extra options (one string; repeat)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("check_args", nargs=argparse.REMAINDER, help="-- then kafka-mc check's arguments")
    a = ap.parse_args()
    args = [x for x in a.check_args if x != "--"]
    res: dict[str, list[tuple[float, float]]] = {v: [] for v in a.variant}
    for i in range(a.runs):
        for v in a.variant:
            cpu, wall, line = timed(ROOT, [*args, *shlex.split(v)])
            res[v].append((cpu, wall))
            print(f"run {i + 1} [{v or 'as given'}]: {cpu:.1f} CPU-s, {wall:.1f} s wall ({line})", flush=True)
    med = {v: (median([c for c, _ in r]), median([w for _, w in r])) for v, r in res.items()}
    base = med[a.variant[0]]
    for v, (c, w) in med.items():
        print(
            f"[{v or 'as given'}]: median {c:.1f} CPU-s, {w:.1f} s wall; {c / base[0]:.2f} CPU, {w / base[1]:.2f} wall"
        )


if __name__ == "__main__":
    main()
