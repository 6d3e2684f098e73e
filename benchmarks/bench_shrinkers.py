"""Today's shrinker against Hypothesis on a corpus of violating traces (issue 34, item 4).

The corpus: every catalogue mutant of the four models run on the model's small (or
reference) configuration by ``simulate`` (seed 0) and, for the three small models, by
``bfs`` (its shortest), plus the variants of ``tests/quality/test_counterexample_quality.py``;
each trace is the first violation of a property that shrinks (always, transition, deadlock).
Each trace is shrunk twice with the defaults of ``kafka-mc shrink`` (configuration shrunk,
bounded bfs, 60 s): ``--shrinker ddmin`` (the hand-written phases) and ``--shrinker
hypothesis``. One JSON line per trace and shrinker goes to ``--results`` (a run resumes
from it); ``--table`` prints the Markdown table ``docs/shrinking.md`` shows.

Run: ``python -m benchmarks.bench_shrinkers --results docs/shrinking/corpus.jsonl`` (about
15 minutes here), then ``--table``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {
    "timing-wheel": "configs/timing-wheel-small.toml",
    "purgatory": "configs/purgatory-small.toml",
    "simple-timing-wheel": "configs/simple-timing-wheel-small.toml",
    "controller": "configs/controller-ref.toml",
}
SHRINKABLE = ("always", "transition", "deadlock")


def _values(model: str, mutant: str | None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    import invariants
    from explorer.config import load_config
    from explorer.core import config_to_dict

    spec = invariants.get_model(model)
    cfg = load_config(spec.config_cls, path=ROOT / CONFIGS[model], values=overrides)
    values = config_to_dict(cfg)
    if mutant is not None:
        values["mutant"] = mutant
    return values


def corpus(seed: int = 0) -> Iterator[tuple[str, str, dict[str, Any], Any]]:
    """``(id, model, config values, violation)`` of every trace in the corpus."""
    import importlib

    import invariants
    from explorer.config import load_config
    from explorer.engines.bfs import check_bfs
    from explorer.engines.simulate import check_simulate

    for model in CONFIGS:
        spec = invariants.get_model(model)
        module = importlib.import_module(f"invariants.mutants.{model.replace('-', '_')}")
        for mutant in module.MUTANTS.names():
            if mutant == "none":
                continue
            values = _values(model, mutant)
            cfg = load_config(spec.config_cls, values=values)
            system = spec.build(cfg)
            props = [p for p in spec.properties(cfg) if p.kind.value in SHRINKABLE]
            engines = ["simulate"] if model == "controller" else ["simulate", "bfs"]
            for engine in engines:
                if engine == "simulate":
                    r = check_simulate(system, props, seed=seed, walks=300, depth=120)
                else:
                    r = check_bfs(system, props, max_states=200_000, max_seconds=60)
                v = next((v for v in r.violations if v.trace and v.kind in SHRINKABLE), None)
                if v is not None:
                    yield f"{model}/{mutant}/{engine}", model, values, v
    # beyond exhaustive bounds: the release's explore configuration, long swarm walks
    spec = invariants.get_model("controller")
    for label, extra, seeds in (
        (
            "controlled-shutdown-ignores-broker-epoch",
            {"mutant": "controlled-shutdown-ignores-broker-epoch"},
            (0, 1, 2),
        ),
        ("deletion-under-reassignment", {"max_reassignments": 1}, (0, 1)),
    ):
        for seed in seeds:
            cfg = load_config(
                spec.config_cls, path=ROOT / "configs" / "controller-explore.toml", values=extra
            )
            props = [p for p in spec.properties(cfg) if p.kind.value in SHRINKABLE]
            r = check_simulate(spec.build(cfg), props, seed=seed, walks=1500, depth=150, swarm=True)
            v = next((v for v in r.violations if v.trace), None)
            if v is not None:
                from explorer.core import config_to_dict

                yield f"explore/{label}/seed{seed}", "controller", config_to_dict(cfg), v
    from tests.quality.test_counterexample_quality import CASES

    for case in CASES:
        spec = invariants.get_model(case.model)
        cfg = load_config(spec.config_cls, values=case.overrides)
        props = [p for p in spec.properties(cfg) if p.name == case.property]
        r = check_simulate(
            spec.build(cfg),
            props,
            seed=case.seed,
            walks=case.walks,
            depth=case.depth,
            weights=case.weights or None,
            swarm=case.swarm,
            deadlock=case.property == "deadlock",
        )
        v = next((v for v in r.violations if v.property == case.property), None)
        if v is not None:
            from explorer.core import config_to_dict

            yield f"variant/{case.id}", case.model, config_to_dict(cfg), v


def _faults(system: Any, steps: list[Any]) -> int:
    kinds = set(getattr(system, "fault_kinds", list)())
    return sum(1 for s in steps[1:] if s.action_kind in kinds) if kinds else 0


def shrink_one(model: str, values: dict[str, Any], v: Any, shrinker: str) -> dict[str, Any]:
    """Shrink one violation with ``shrinker``; what the table reports."""
    import invariants
    from explorer.search.shrinking import config_size
    from explorer.shrink import shrink_trace, target_for

    spec = invariants.get_model(model)
    t0 = time.process_time()
    out = shrink_trace(spec, values, v.trace, v.property, shrinker=shrinker)
    cpu = time.process_time() - t0
    system, _, _ = target_for(spec).build(out.config)
    return {
        "length": out.length,
        "faults": _faults(system, out.steps),
        "config_size": config_size(out.config),
        "cpu": round(cpu, 2),
        "notes": out.notes,
    }


def run(results: Path) -> None:
    """Shrink every trace of the corpus with both shrinkers, appending to ``results``."""
    done = set()
    if results.exists():
        for line in results.read_text().splitlines():
            row = json.loads(line)
            done.add((row["id"], row["shrinker"]))
    results.parent.mkdir(parents=True, exist_ok=True)
    for ident, model, values, v in corpus():
        for shrinker in ("ddmin", "hypothesis"):
            if (ident, shrinker) in done:
                continue
            row = {
                "id": ident,
                "model": model,
                "property": v.property,
                "original": v.length,
                "shrinker": shrinker,
                **shrink_one(model, values, v, shrinker),
            }
            with results.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
            print(f"{ident} {shrinker}: {v.length} -> {row['length']} ({row['cpu']} s)", flush=True)


def table(results: Path) -> str:
    """The Markdown table of a results file, one row a trace, both shrinkers side by side."""
    rows: dict[str, dict[str, Any]] = {}
    for line in results.read_text().splitlines():
        r = json.loads(line)
        rows.setdefault(r["id"], {})[r["shrinker"]] = r
    out = [
        "| trace | property | steps | ddmin: steps, faults, config, s | hypothesis: steps, faults, config, s |",
        "|---|---|---:|---|---|",
    ]
    shorter = same = longer = 0
    cpu = {"ddmin": 0.0, "hypothesis": 0.0}
    for ident, pair in rows.items():
        if set(pair) != {"ddmin", "hypothesis"}:
            continue
        d, h = pair["ddmin"], pair["hypothesis"]
        key_d = (d["length"], d["faults"], d["config_size"])
        key_h = (h["length"], h["faults"], h["config_size"])
        shorter += key_h < key_d
        same += key_h == key_d
        longer += key_h > key_d
        cpu["ddmin"] += d["cpu"]
        cpu["hypothesis"] += h["cpu"]

        def cell(r: dict[str, Any]) -> str:
            return f"{r['length']}, {r['faults']}, {r['config_size']}, {r['cpu']:.1f}"

        mark = " **" if key_h < key_d else ""
        out.append(f"| {ident} | {d['property']} | {d['original']} | {cell(d)} | {cell(h)}{mark} |")
    out.append("")
    out.append(
        f"{shorter + same + longer} traces: Hypothesis smaller on {shorter} (steps, then faults, then "
        f"configuration size), equal on {same}, larger on {longer}; CPU {cpu['ddmin']:.0f} s (ddmin) "
        f"against {cpu['hypothesis']:.0f} s (hypothesis)."
    )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=ROOT / "docs" / "shrinking" / "corpus.jsonl")
    ap.add_argument("--table", action="store_true", help="print the table of --results and stop")
    a = ap.parse_args()
    os.chdir(ROOT)
    if a.table:
        print(table(a.results))
        return
    run(a.results)
    print(table(a.results))


if __name__ == "__main__":
    main()
