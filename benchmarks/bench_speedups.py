"""The C accelerator (``explorer._speedups``) against the pure-Python code it replaces.

Each measurement runs in a fresh process; the variants alternate, ``--runs`` times
(default 3), and the medians are printed side by side:

(a) µs per ``_replace`` call on a ``Zk`` (one field) and a ``Node`` (one and two
    fields) of a real controller state: the generated ``NamedTuple._replace``
    ("original"), the pure-Python fallback ("python") and the C descriptor ("c");
(b) µs per fingerprint of real controller states (the first ``--states`` states of
    ``configs/controller-ref.toml`` in breadth-first order): ``spark.state_fingerprint``
    with ``KAFKA_MC_PURE_PYTHON=1`` (the identity-cached Python encoder, as before the
    accelerator) against the C one, and the plain ``explorer.encoding.fingerprint``;
(c) with ``--bfs N``: seconds of ``check_bfs`` on the first N states of the same
    configuration, ``KAFKA_MC_PURE_PYTHON=1`` against the C module, plus a checkout
    given by ``--baseline-root`` (e.g. one without this module) if any.

Run: ``python -m benchmarks.bench_speedups [--runs 3] [--states 5000] [--bfs 200000]
[--baseline-root PATH]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

from benchmarks.common import median

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = "configs/controller-ref.toml"

STATES = """
from collections import deque
import invariants
from explorer.config import load_config
spec = invariants.get_model("controller")
cfg = load_config(spec.config_cls, __CONFIG__)
system = spec.build(cfg)
def bfs_states(n):
    q = deque(system.init_states())
    seen = set(q)
    out = []
    while q and len(out) < n:
        s = q.popleft()
        out.append(s)
        for _, t in system.successors(s):
            if t not in seen:
                seen.add(t)
                q.append(t)
    return out
"""

REPLACE = (
    STATES
    + """
import json, timeit
from explorer import speedups
from model.controller import Node, Zk
variant = __VARIANT__
for cls in (Zk, Node):
    generated = cls.__dict__["_replace"].__wrapped__
    if variant == "original":
        cls._replace = generated
    elif variant == "python":
        cls._replace = speedups._fast_replace_py(cls)
    else:
        from explorer import _speedups
        cls._replace = _speedups.FastReplace(cls, generated)
s = bfs_states(200)[-1]
zk, node = s.zk, s.nodes[1]
cases = {
    "Zk._replace(epoch=)": lambda: zk._replace(epoch=3),
    "Node._replace(reps=)": lambda: node._replace(reps=()),
    "Node._replace(zk_out=, pending=)": lambda: node._replace(zk_out=(), pending=None),
}
empty = min(timeit.repeat(lambda: None, number=200_000, repeat=5)) / 200_000
out = {}
for name, fn in cases.items():
    best = min(timeit.repeat(fn, number=200_000, repeat=5)) / 200_000
    out[name] = (best - empty) * 1e6
print(json.dumps(out))
"""
)

FINGERPRINT = (
    STATES
    + """
import json, time
from explorer import encoding, speedups
from explorer.engines.spark import fingerprints as spark
states = bfs_states(__N__)
spark._SELF_CHECKS[0] = 0  # measure the steady state, not the first calls' self-check
out = {"active": speedups.ACTIVE}
def per_state(fn):
    best = float("inf")
    for _ in range(3):
        spark._ENC_CACHE.clear()
        t = time.perf_counter()
        for s in states:
            fn(s)
        best = min(best, time.perf_counter() - t)
    return best / len(states) * 1e6
out["spark.state_fingerprint"] = per_state(spark.state_fingerprint)
if not speedups.ACTIVE:
    out["encoding.fingerprint"] = per_state(encoding.fingerprint)
assert all(spark.state_fingerprint(s) == encoding.fingerprint(s) for s in states[:500])
print(json.dumps(out))
"""
)

BFS = (
    STATES
    + """
import json, time
from explorer.engines.bfs import check_bfs
t = time.perf_counter()
r = check_bfs(system, spec.properties(cfg), keep_going=True, max_states=__N__)
print(json.dumps({"seconds": time.perf_counter() - t, "states": r.distinct_states}))
"""
)


def child(code: str, pure: bool, root: str = ROOT, **subs: Any) -> dict[str, Any]:
    """Run ``code`` (with ``__NAME__`` placeholders filled) in a fresh interpreter."""
    code = code.replace("__CONFIG__", repr(CONFIG))
    for k, v in subs.items():
        code = code.replace(f"__{k}__", repr(v))
    env = dict(os.environ, PYTHONPATH=root)
    env.pop("KAFKA_MC_PURE_PYTHON", None)
    if pure:
        env["KAFKA_MC_PURE_PYTHON"] = "1"
    p = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{p.stderr}")
    result: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return result


def table(title: str, runs: dict[str, list[dict[str, Any]]], unit: str) -> None:
    """Print the medians of each variant's runs, one row per measured key."""
    names = list(runs)
    keys = [k for k in runs[names[0]][0] if isinstance(runs[names[0]][0][k], float)]
    for n in names[1:]:
        keys += [k for k in runs[n][0] if isinstance(runs[n][0][k], float) and k not in keys]
    print(f"\n{title} (median of {len(runs[names[0]])} runs, {unit})")
    print(f"{'':34}" + "".join(f"{n:>14}" for n in names))
    for k in keys:
        row = [median([r[k] for r in runs[n]]) if k in runs[n][0] else None for n in names]
        cells = "".join(f"{x:>14.3f}" if x is not None else f"{'-':>14}" for x in row)
        base, last = row[0], row[-1]
        ratio = f"   x{base / last:.2f}" if base and last else ""
        print(f"{k:34}{cells}{ratio}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--states", type=int, default=5000)
    ap.add_argument("--bfs", type=int, default=0, help="also time check_bfs on this many states")
    ap.add_argument("--baseline-root", default=None, help="a checkout to time check_bfs against")
    args = ap.parse_args(argv)
    try:
        from explorer import _speedups  # noqa: F401
    except ImportError:
        raise SystemExit("explorer._speedups is not built: python3 setup.py build_ext --inplace") from None

    rep: dict[str, list[dict[str, Any]]] = {"original": [], "python": [], "c": []}
    fp: dict[str, list[dict[str, Any]]] = {"pure python": [], "c": []}
    for _ in range(args.runs):
        for variant in rep:
            rep[variant].append(child(REPLACE, pure=variant != "c", VARIANT=variant))
        fp["pure python"].append(child(FINGERPRINT, pure=True, N=args.states))
        fp["c"].append(child(FINGERPRINT, pure=False, N=args.states))
    table("(a) _replace", rep, "µs per call")
    table(f"(b) fingerprint of {args.states} controller-ref states", fp, "µs per state")

    if args.bfs:
        bfs: dict[str, list[dict[str, Any]]] = {}
        if args.baseline_root:
            bfs["baseline"] = []
        bfs["pure python"] = []
        bfs["c"] = []
        for _ in range(args.runs):
            if args.baseline_root:
                bfs["baseline"].append(child(BFS, pure=True, root=args.baseline_root, N=args.bfs))
            bfs["pure python"].append(child(BFS, pure=True, N=args.bfs))
            bfs["c"].append(child(BFS, pure=False, N=args.bfs))
        counts = {r["states"] for v in bfs.values() for r in v}
        table(f"(c) check_bfs, first {args.bfs} states ({counts} distinct)", bfs, "seconds")


if __name__ == "__main__":
    main()
