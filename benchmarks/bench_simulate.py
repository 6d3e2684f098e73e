"""Simulation steps per second, per registered model.

For every model of ``invariants.MODEL_MODULES`` (or the names given), the simulate
engine runs ``--walks`` seeded walks of at most ``--depth`` steps over the model's
reference configuration (``configs/<model>-ref.toml``, else ``-small.toml``, else
the defaults), checking every property with ``keep_going`` so that a violation does
not end the run. Each measurement runs in a fresh process, ``--runs`` times
(default 3); the median steps/s is printed with the distinct states visited. (Revisited states reuse their
cached successor lists, so a model whose walks revisit much runs faster.)

Run: ``python -m benchmarks.bench_simulate [MODEL ...] [--walks N] [--depth N]``
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.common import median, run_child

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json
from explorer.config import load_config
from explorer.engines.simulate import check_simulate
from invariants import get_model
spec = get_model(__MODEL__)
cfg = load_config(spec.config_cls, __PATH__)
system, props = spec.build(cfg), spec.properties(cfg)
r = check_simulate(system, props, model=spec.name, config=cfg, seed=__SEED__, walks=__WALKS__,
                   depth=__DEPTH__, keep_going=True)
print(json.dumps({"steps": r.generated_states, "seconds": r.seconds, "distinct": r.distinct_states,
                  "violated": sorted(v.property for v in r.violations)}))
"""


def config_path(model: str) -> Path | None:
    """The reference configuration of a model, else its small one, else None (defaults)."""
    for suffix in ("ref", "small"):
        p = ROOT / "configs" / f"{model}-{suffix}.toml"
        if p.exists():
            return p
    return None


def main() -> None:
    """Print one line per model."""
    import invariants

    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="*")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--walks", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=200)
    args = ap.parse_args()
    for model in args.models or list(invariants.MODEL_MODULES):
        path = config_path(model)
        rates = []
        for i in range(args.runs):
            code = (
                CHILD.replace("__MODEL__", json.dumps(model))
                .replace("__PATH__", json.dumps(str(path)) if path else "None")
                .replace("__SEED__", str(i))
                .replace("__WALKS__", str(args.walks))
                .replace("__DEPTH__", str(args.depth))
            )
            r = run_child(code)
            rates.append(r["steps"] / r["seconds"] if r["seconds"] > 0 else 0.0)
        where = path.name if path else "defaults"
        print(
            f"{model:<22} {where:<28} median {median(rates):>10,.0f} steps/s  "
            f"(runs {[round(x) for x in rates]}; {r['steps']:,} steps, {r['distinct']:,} distinct, "
            f"violated: {', '.join(r['violated']) or 'none'})"
        )


if __name__ == "__main__":
    main()
