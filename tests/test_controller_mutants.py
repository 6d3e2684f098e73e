"""The controller catalogue's issue-20 mutants (invariants/mutants/controller.py): which
property of which small configuration catches each one the release suite kills. Mutants it
does not kill are analysed in docs/mutation.md (the mutation harness's results)."""

from __future__ import annotations

import pytest

import invariants.controller as spec
from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from invariants.mutants.controller import ControllerConfig  # with the test-only mutant key

SMALL = "configs/controller-small.toml"
ADMIN = "configs/controller-admin.toml"


def violated(path: str, overrides: list[str], prop: str) -> list[str]:
    c = load_config(ControllerConfig, path, overrides)
    props = [p for p in spec.properties(c) if p.name == prop]
    assert props, prop
    r = check_bfs(spec.build(c), props, model="controller", config=c)
    return [v.property for v in r.violations]


CAUGHT = [
    # controller-small with one session expiry of a live broker
    (SMALL, "startup-skips-online-replicas", "broker_views_match_zookeeper"),
    (SMALL, "dead-broker-not-removed", "context_matches_zookeeper"),
    (SMALL, "offline-election-ignores-liveness", "no_dead_broker_in_written_isr"),
    (SMALL, "resign-keeps-context", "context_matches_zookeeper"),
    (SMALL, "broker-epoch-check-le", "broker_views_match_zookeeper"),
    (SMALL, "isr-update-unconditional", "leader_epoch_monotonic"),
    (SMALL, "ctl-watch-not-rearmed", "controller_converges"),
]


@pytest.mark.slow  # 2.9 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize(("path", "mutant", "prop"), CAUGHT)
def test_mutant_is_caught(path: str, mutant: str, prop: str) -> None:
    extra = ["max_session_expiries=1"] if path == SMALL else []
    assert violated(path, [f"mutant={mutant}", *extra], prop) == [prop]
    assert violated(path, extra, prop) == []
