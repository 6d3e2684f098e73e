"""Item 4 of issue 35 on today's model: which statements of ``model/controller/`` and
``model/election.py`` the release suite's controller entries execute (each entry once, unmutated,
traced in a process of its own by ``kafka-mc mutate``'s worker), and, for each statement none
executes, the reason from ``invariants/mutants/controller_equivalent.toml``'s ``[unreached]`` table
when it gives one. ``controller-ref`` is left out (about 10 minutes traced) unless named::

    python3 -m benchmarks.measure_line_coverage --out docs/mutation/line-coverage-today.json
    python3 -m benchmarks.measure_line_coverage --entries controller-small,controller-admin --out /tmp/c.json

Each entry costs about twice its release time; the run resumes from ``OUT.d/`` (one file per
entry traced), so an interrupted run continues where it stopped.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from explorer.mutation.command import PROJECT_ROOT, _entry_json, load_equivalent
from explorer.mutation.line_coverage import model_coverage
from explorer.release import load_suite

TRACED = ("model/controller/*.py", "model/election.py")
EQUIVALENT = PROJECT_ROOT / "invariants" / "mutants" / "controller_equivalent.toml"


def _entries(names: str) -> list:
    suite = load_suite(str(PROJECT_ROOT / "configs" / "release.toml"))
    if names:
        want = names.split(",")
        by = {e.name: e for e in suite}
        unknown = [n for n in want if n not in by]
        if unknown:
            raise SystemExit(f"measure_line_coverage: unknown entry {unknown[0]!r}")
        return [by[n] for n in want]
    return [
        e for e in suite if e.model == "controller" and e.engine != "symbolic" and e.name != "controller-ref"
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--entries", default="")
    args = ap.parse_args()
    out = Path(args.out)
    work = Path(str(out) + ".d")
    work.mkdir(parents=True, exist_ok=True)
    entries = _entries(args.entries)
    by_entry: dict[str, dict[str, list[int]]] = {}
    for e in entries:
        lines_out = work / f"{e.name}.lines.json"
        if not lines_out.exists():
            job = {
                "trace": list(TRACED),
                "entries": [_entry_json(e)],
                "overrides": [],
                "keep_going": False,
                "out": str(work / f"{e.name}.cell.jsonl"),
                "lines_out": str(lines_out),
            }
            job_path = work / f"{e.name}.job.json"
            job_path.write_text(json.dumps(job), encoding="utf-8")
            subprocess.run(
                [sys.executable, "-m", "explorer.mutation.command", str(job_path)],
                cwd=PROJECT_ROOT,
                check=True,
            )
        for name, files in json.loads(lines_out.read_text(encoding="utf-8")).items():
            if name == e.name:
                by_entry[name] = files
        print(f"traced {e.name}", flush=True)
    files = sorted(
        p.relative_to(PROJECT_ROOT).as_posix()
        for g in TRACED
        for p in PROJECT_ROOT.glob(g)
        if p.name != "coverage.py"
    )
    cov = model_coverage(by_entry, PROJECT_ROOT, files, load_equivalent(EQUIVALENT, "unreached"))
    doc = {"entries": [e.name for e in entries], "line_coverage": cov}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(
        f"{cov['executed']:,} of {cov['statements']:,} statements executed ({cov['fraction']:.1%}); "
        f"{cov['statements'] - cov['executed']} never, {cov['explained']} of them with a reason"
    )


if __name__ == "__main__":
    main()
