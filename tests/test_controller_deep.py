"""The deep configuration (issue 16, ``configs/controller-deep.toml``): its first levels are
pinned in the slow suite (seconds); the whole search, over 10^8 states, is pinned by an
on-demand test (``-m deep``, about an hour on two cores, never in CI)."""

from __future__ import annotations

from pathlib import Path

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from invariants.controller import ControllerConfig

ROOT = Path(__file__).resolve().parent.parent
DEEP = ROOT / "configs" / "controller-deep.toml"


@pytest.mark.slow
def test_the_first_sixteen_levels_are_pinned() -> None:
    c = load_config(ControllerConfig, DEEP, [])
    r = check_bfs(spec.build(c), spec.properties(c), max_depth=16, keep_going=True)
    assert (r.distinct_states, r.generated_states) == (190_158, 447_063)
    assert [lv.new_states for lv in r.levels][-3:] == [29_347, 42_779, 62_093]
    # both controller changes are reached within these levels; no property fails this early
    assert {"failover", "second_controller_failover"} <= set(r.witnesses)
    assert not [v for v in r.violations if v.trace]
