"""The release suite's wall time, CPU time and peak memory, from outside (issue 56).

Runs ``python3 -m explorer release --quiet`` in a checkout (``--tree``, default this one; run
with ``PYTHONPATH`` set to it, so a ``git worktree`` of another commit runs its own code) into a
temporary report folder, and measures:

* ``wall``: seconds from the start to the exit (start-up included);
* ``cpu``: user + system seconds of every process the release waited for
  (``getrusage(RUSAGE_CHILDREN)``, so the entries' worker processes count);
* ``peak_one``: the largest single process's peak RSS (``ru_maxrss`` of the children);
* ``peak_sum``: the largest sum of the RSS of the release and all its descendants, sampled
  every ``--sample`` seconds from ``/proc`` (entries running side by side add up; a peak
  shorter than the interval can be missed, so ``peak_one`` bounds it from below);
* ``rss_at_lines``: the summed RSS when each line the release prints appears (after each entry:
  what the release keeps between entries);
* per entry, from the run's ``report.json``: status, distinct states, search seconds, and the
  shortest counterexample of each violated property (to compare two trees' verdicts).

Each finished run is appended to ``--results`` (a JSON file, one object per run, read back
first): a run already recorded for the same ``--label`` counts towards ``--runs``, so an
interrupted measurement resumes where it stopped.

Usage (the closing measurement, on a quiet machine; ``/tmp/base`` a worktree of 5eb45fd with its C
accelerator built by ``python3 setup.py build_ext --inplace``)::

    python3 -m benchmarks.bench_release --label main --runs 3 --results /tmp/release-bench.json
    python3 -m benchmarks.bench_release --tree /tmp/base --label base --runs 1 --results /tmp/release-bench.json
    python3 -m benchmarks.bench_release --summary --results /tmp/release-bench.json

``--entries a,b`` passes ``--entries`` to the release (a subset); ``--args "..."`` any other
release options (``--jobs 1``, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.common import median

ROOT = Path(__file__).resolve().parent.parent


def tree_rss_kib(pid: int) -> int:
    """The summed RSS (KiB) of ``pid`` and every descendant, read from ``/proc``.

    >>> tree_rss_kib(os.getpid()) > 0
    True
    """
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                stat = fh.read()
            with open(f"/proc/{d}/statm") as fh:
                pages = int(fh.read().split()[1])
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(d))
        rss[int(d)] = pages * (os.sysconf("SC_PAGE_SIZE") // 1024)
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, []))
    return total


def report_entries(report_dir: Path) -> list[dict[str, Any]]:
    """Per entry of the run's ``report.json``: name, status, states, seconds, shortest violations."""
    doc = json.loads((report_dir / "latest" / "report.json").read_text())
    out = []
    for en in doc["entries"]:
        r = en["result"]
        shortest: dict[str, int] = {}
        for v in r.get("violations", []):
            shortest[v["property"]] = min(v["length"], shortest.get(v["property"], v["length"]))
        out.append(
            {
                "name": en["name"],
                "status": en["status"],
                "states": r["distinct_states"],
                "seconds": r["seconds"],
                "violations": dict(sorted(shortest.items())),
            }
        )
    return out


def one_run(tree: Path, extra: list[str], sample: float, log: Path) -> dict[str, Any]:
    """One release run in ``tree``; its measurements (see the module's docstring)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.TemporaryDirectory(prefix="kafka-mc-bench-release-") as tmp:
        cmd = [sys.executable, "-m", "explorer", "release", "--quiet", "--report-dir", tmp, *extra]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        proc = subprocess.Popen(
            cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        peak = [0]
        at_lines: list[tuple[float, int, str]] = []
        done = threading.Event()

        def sampler() -> None:
            while not done.wait(sample):
                peak[0] = max(peak[0], tree_rss_kib(proc.pid))

        th = threading.Thread(target=sampler, daemon=True)
        th.start()
        assert proc.stdout is not None
        with log.open("a") as fh:
            for line in proc.stdout:
                fh.write(line)
                if line.startswith(("[", "release:")) or "=> " in line:
                    kib = tree_rss_kib(proc.pid)
                    peak[0] = max(peak[0], kib)
                    at_lines.append((round(time.monotonic() - t0, 1), kib, line.strip()[:100]))
        rc = proc.wait()
        wall = time.monotonic() - t0
        done.set()
        th.join()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        entries = report_entries(Path(tmp)) if (Path(tmp) / "latest").exists() else []
    return {
        "exit": rc,
        "wall": wall,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "peak_one_mib": after.ru_maxrss / 1024,
        "peak_sum_mib": peak[0] / 1024,
        "rss_at_lines": at_lines,
        "entries": entries,
    }


def load(path: Path) -> list[dict[str, Any]]:
    """The runs recorded in ``path`` (none if it does not exist)."""
    return json.loads(path.read_text()) if path.exists() else []


def summary(runs: list[dict[str, Any]]) -> list[str]:
    """One line per label: medians of wall, CPU and the two peaks, with the run count."""
    lines = []
    for label in dict.fromkeys(r["label"] for r in runs):
        rs = [r for r in runs if r["label"] == label]
        lines.append(
            f"{label}: {len(rs)} run(s); wall {median([r['wall'] for r in rs]):.1f} s, "
            f"cpu {median([r['cpu'] for r in rs]):.1f} s, peak (one process) "
            f"{median([r['peak_one_mib'] for r in rs]):.0f} MiB, peak (all processes, sampled) "
            f"{median([r['peak_sum_mib'] for r in rs]):.0f} MiB; exits {[r['exit'] for r in rs]}"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    """Measure (or summarise) release runs; see the module's docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=str(ROOT), help="the checkout to run (default: this one)")
    ap.add_argument("--label", default="main", help="the name the runs are recorded under")
    ap.add_argument("--runs", type=int, default=1, help="runs wanted for this label (recorded ones count)")
    ap.add_argument("--results", default="release-bench.json", help="the JSON file runs are appended to")
    ap.add_argument("--entries", default=None, help="the release's --entries")
    ap.add_argument("--args", default="", help="more release options, one shell-quoted string")
    ap.add_argument("--sample", type=float, default=0.5, help="seconds between RSS samples")
    ap.add_argument("--summary", action="store_true", help="only print the recorded runs' medians")
    a = ap.parse_args(argv)
    path = Path(a.results)
    runs = load(path)
    if not a.summary:
        extra = shlex.split(a.args) + (["--entries", a.entries] if a.entries else [])
        while sum(1 for r in runs if r["label"] == a.label) < a.runs:
            r = one_run(Path(a.tree).resolve(), extra, a.sample, path.with_suffix(".log"))
            r.update(label=a.label, tree=str(a.tree), args=extra, date=time.strftime("%Y-%m-%d %H:%M"))
            runs.append(r)
            path.write_text(json.dumps(runs, indent=1))
            print(summary([r])[0], flush=True)
    for line in summary(runs):
        print(line)


if __name__ == "__main__":
    main()
