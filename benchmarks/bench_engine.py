"""The bfs engine against a bare hand-written BFS loop on the same toy system.

The bare loop does the least an exhaustive search must: a dict of visited states
to parents, a frontier list per level, one invariant call per new state. The engine
adds coverage counting, budgets, progress and the result. Each is run in a fresh
process, alternating, ``--runs`` times (default 5); medians and their ratio are
printed. Target: engine / bare <= 1.25.

Run: ``python -m benchmarks.bench_engine``
"""

from __future__ import annotations

import argparse

from benchmarks.common import median, run_child

TOY = """
from typing import NamedTuple
class Move(NamedTuple):
    i: int
    def __str__(self): return f"counter {self.i} moves"
class Toy:
    # four counters in 0..K-1; each step moves one counter up by 1 or 2 (mod K)
    def __init__(self, k): self.k = k
    def init_states(self): return [(0, 0, 0, 0)]
    def successors(self, s):
        k = self.k
        out = []
        for i in range(4):
            for d in (1, 2):
                t = list(s); t[i] = (t[i] + d) % k
                out.append((Move(i), tuple(t)))
        return out
"""

BARE = (
    TOY
    + """
import time, json
toy = Toy(__K__)
inv = lambda s: s[0] + s[1] + s[2] + s[3] >= 0
t0 = time.perf_counter()
parents = {}
frontier = []
for s in toy.init_states():
    parents[s] = None; frontier.append(s); inv(s)
while frontier:
    nxt = []
    for s in frontier:
        for a, t in toy.successors(s):
            if t not in parents:
                parents[t] = s
                nxt.append(t)
                inv(t)
    frontier = nxt
print(json.dumps({"seconds": time.perf_counter() - t0, "states": len(parents)}))
"""
)

ENGINE = (
    TOY
    + """
import json
from explorer.engines.bfs import check_bfs
from explorer.core import always
toy = Toy(__K__)
r = check_bfs(toy, [always("nonneg", lambda s: s[0] + s[1] + s[2] + s[3] >= 0, "")])
print(json.dumps({"seconds": r.seconds, "states": r.distinct_states}))
"""
)


def main() -> None:
    """Print medians and the engine/bare ratio."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("-k", type=int, default=24, help="counter range: K**4 states")
    args = ap.parse_args()
    bare, eng = [], []
    for _ in range(args.runs):
        b = run_child(BARE.replace("__K__", str(args.k)))
        e = run_child(ENGINE.replace("__K__", str(args.k)))
        assert b["states"] == e["states"], (b, e)
        bare.append(b["seconds"])
        eng.append(e["seconds"])
    mb, me = median(bare), median(eng)
    print(f"toy: {b['states']:,} states, {args.runs} alternating runs each")
    print(
        f"bare loop  median {mb:.3f} s  ({b['states'] / mb:,.0f} states/s)  runs {[round(x, 3) for x in bare]}"
    )
    print(
        f"bfs engine median {me:.3f} s  ({e['states'] / me:,.0f} states/s)  runs {[round(x, 3) for x in eng]}"
    )
    print(f"engine / bare = {me / mb:.3f}  (target <= 1.25)")


if __name__ == "__main__":
    main()
