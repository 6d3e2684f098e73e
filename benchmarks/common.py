"""Helpers for the benchmarks: medians of repeated runs in fresh processes."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any


def run_child(code: str) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; it must print one JSON object last."""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return result


def median(xs: list[float]) -> float:
    """The median of a list of numbers."""
    return statistics.median(xs)


RSS_PRELUDE = """
import json, resource, gc
def rss_kib():
    with open('/proc/self/status') as fh:
        for line in fh:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return 0
def peak_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""
