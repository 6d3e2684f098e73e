"""How direct ``kafka-mc explore`` feels (issue 57, item 6): the time to a usable page, and the
server time of one action on controller-ref-sized states.

1. **Page ready** (controller-small): ``kafka-mc explore controller --config
   configs/controller-small.toml`` started in a fresh interpreter; the time until it prints its
   URL, then until the page's first calls are answered (the page, its script, ``/api/info`` and
   the view of the initial state, over HTTP, as the browser makes them). The browser's own
   drawing is not counted (tests/test_explore_browser.py prints the whole with Chromium).
2. **Action latency** (controller-ref, ``configs/controller-ref.toml``): what the server does
   when the user takes an action: ``GET /api/view`` of a path one step longer than the last
   (the new state not cached), in process, at random-walk depths 10, 30 and 60 (the view
   holds every property's verdict, each enabled action's diff, the step table and the sequence
   diagram of the whole path). The target is 200 ms.

Run::

    python -m benchmarks.bench_explore --runs 5
"""

from __future__ import annotations

import argparse
import http.client
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.common import median

ROOT = Path(__file__).resolve().parents[1]


def page_ready() -> tuple[float, float]:
    """(seconds until the URL is printed, seconds until the page's first calls are answered)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "explorer",
            "explore",
            "controller",
            "--config",
            "configs/controller-small.toml",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None
    url = ""
    while not url:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("kafka-mc explore ended before printing its URL")
        m = re.search(r"open http://127\.0\.0\.1:(\d+)/\?token=(\S+?)#", line)
        if m:
            url = m.group(0)
            port, token = int(m.group(1)), m.group(2)
    printed = time.perf_counter() - t0
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for route in (f"/?token={token}", "/static/app.js", "/static/app.css", "/api/info", "/api/view?path=0"):
        conn.request("GET", route, headers={"Host": f"127.0.0.1:{port}", "X-Token": token})
        res = conn.getresponse()
        res.read()
        assert res.status == 200, (route, res.status)
    usable = time.perf_counter() - t0
    conn.close()
    p.send_signal(2)
    p.wait(timeout=20)
    return printed, usable


def action_latency(depths: list[int], seeds: int) -> dict[int, list[float]]:
    """Seconds of ``Session.view`` of one new step after a random walk of each depth (per seed)."""
    from explorer.config import load_config
    from explorer.core import config_to_dict
    from explorer.explore.session import Session
    from explorer.frontend import model_spec

    spec = model_spec("controller")
    config = load_config(spec.config_cls, str(ROOT / "configs" / "controller-ref.toml"))
    out: dict[int, list[float]] = {d: [] for d in depths}
    for seed in range(seeds):
        s = Session(
            spec.build(config), spec.properties(config), model="controller", config=config_to_dict(config)
        )
        for d in depths:
            path = s.random_walk([0], d, seed)
            s.view(path[:-1])  # the page showed the state before: the new one is what the action costs
            t = time.perf_counter()
            s.view(path)
            out[d].append(time.perf_counter() - t)
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the medians (and the worst) of both measures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="page starts, and random walks per depth")
    args = ap.parse_args(argv)
    starts = [page_ready() for _ in range(args.runs)]
    printed, usable = [a for a, _ in starts], [b for _, b in starts]
    print(
        f"controller-small: URL printed after {median(printed):.2f} s (worst {max(printed):.2f}), "
        f"page's first calls answered after {median(usable):.2f} s (worst {max(usable):.2f})"
    )
    lat = action_latency([10, 30, 60], args.runs)
    for d, xs in lat.items():
        print(
            f"controller-ref, an action after {d} steps: {1000 * median(xs):.0f} ms median, "
            f"{1000 * max(xs):.0f} ms worst (target 200 ms)"
        )
    return 0


if __name__ == "__main__":
    threading.current_thread().name = "bench-explore"
    sys.exit(main())
