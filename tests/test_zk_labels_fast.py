"""The controller's ``zk_writes`` coverage labels (``model/controller/coverage.py``
``zk_labels``, issue 56: specialised per request type, identity short-cuts) equal the general
derivation they replaced (kept below as the reference) on every labelled step of prefixes of
configurations that write every kind of znode: controller failover and broker registration,
partition state and ISR changes, topic creation, deletion, partition addition, reassignment,
preferred elections, dynamic unclean configs."""

from __future__ import annotations

from typing import Any

import pytest

import invariants.controller as spec
from explorer.config import load_config
from invariants.mutants.controller import ControllerConfig
from model.controller import coverage
from model.controller.coverage import ZK_LABELLED_BY_TYPE, _requested, partition_path, zk_labels
from model.controller.effects import Effect, does, zk_request_of


def _reference_changed(sys: Any, a: Any, b: Any) -> set[str]:
    """``coverage._changed`` as it was before the identity short-cuts."""
    out: set[str] = set()
    if a.controller != b.controller:
        out.add("/controller")
    if a.epoch != b.epoch or a.epoch_version != b.epoch_version:
        out.add("/controller_epoch")
    if a.brokers != b.brokers:
        out.update(f"/brokers/ids/{i}" for i, (x, y) in enumerate(zip(a.brokers, b.brokers)) if x != y)
    if a.parts != b.parts:
        out.update(partition_path(p, sys.ppt) for p, (x, y) in enumerate(zip(a.parts, b.parts)) if x != y)
    if a.isr_changes != b.isr_changes:
        out.add(coverage.ISR_CHANGE)
    if a.created != b.created or a.gone != b.gone or a.ar != b.ar or a.expanded != b.expanded:
        ppt = sys.ppt
        for t in range(sys.cfg.topics):
            if (
                (t in a.gone) != (t in b.gone)
                or a.ar[t * ppt : (t + 1) * ppt] != b.ar[t * ppt : (t + 1) * ppt]
                or (b.created > a.created and t == sys.topics_at_start + a.created)
                or (b.expanded > a.expanded and t == a.expanded)
            ):
                out.add(f"/brokers/topics/{t}")
    if a.delete_topics != b.delete_topics:
        out.update(f"{coverage.DELETE_TOPICS}/{t}" for t in set(a.delete_topics) ^ set(b.delete_topics))
    if a.reassign != b.reassign:
        out.add(coverage.REASSIGN)
    if a.preferred != b.preferred:
        out.add(coverage.PREFERRED)
    if a.unclean_dyn != b.unclean_dyn:
        out.update(f"/config/topics/{t}" for t in set(a.unclean_dyn) ^ set(b.unclean_dyn))
    return out


def _reference_labels(sys: Any, s: Any, a: Any, t: Any) -> tuple[tuple[str, str, str], ...]:
    """``zk_labels`` as it was before issue 56's rewrite."""
    req = zk_request_of(a)
    if req is not None:
        if type(req) not in coverage._WRITE_OPS:
            return ()
        changed = _reference_changed(sys, s.zk, t.zk) if s.zk != t.zk else set()
        return tuple(
            ("zk_writes", path, "changed" if path in changed else "unchanged")
            for path in _requested(sys, a.broker, req)
        )
    if does(a, Effect.ADMIN_REQUEST) and s.zk != t.zk:
        return tuple(("zk_writes", path, "changed") for path in sorted(_reference_changed(sys, s.zk, t.zk)))
    if does(a, Effect.EXPIRES_SESSION) and s.zk != t.zk:
        return tuple(("zk_writes", path, "expired") for path in sorted(_reference_changed(sys, s.zk, t.zk)))
    return ()


CONFIGS = [
    ("configs/controller-ref.toml", [], 1500),
    ("configs/controller-admin.toml", [], 1500),
    ("configs/controller-admin-preferred.toml", [], 1500),
    ("configs/controller-admin-reassign.toml", [], 4000),  # RemovePartitionsFromReassignment
    ("configs/controller-admin-shutdown.toml", [], 1500),
    ("configs/controller-0.8.toml", [], 1500),  # CreateControllerPath, IncrementControllerEpoch
    ("configs/controller-small.toml", ["topics_created_later=1", "topics=2", "max_session_expiries=1"], 1500),
    ("configs/controller-admin.toml", ["recursive_topic_deletion=true"], 1500),
]


def _compare(path: str, overrides: list[str], limit: int) -> set[str]:
    """Every step of the first ``limit`` states (breadth first), labelled or not: the same
    labels, in the same order; the kinds of step labelled."""
    c = load_config(ControllerConfig, path, overrides)
    sys = spec.build(c)
    init = sys.init_states()
    seen = dict.fromkeys(init)
    front: list[Any] = list(init)
    kinds: set[str] = set()
    labelled = 0
    while front and len(seen) < limit:
        nxt = []
        for s in front:
            for a, t in sys.successors(s):
                want = _reference_labels(sys, s, a, t)
                got = zk_labels(sys, s, a, t)
                assert got == want, (str(a), got, want)
                if want:
                    assert ZK_LABELLED_BY_TYPE[type(a)]
                    labelled += 1
                    kinds.add(type(zk_request_of(a) or a).__name__)
                if t not in seen:
                    seen[t] = None
                    nxt.append(t)
        front = nxt
    assert labelled > 100 and len(kinds) >= 4, kinds
    return kinds


@pytest.mark.parametrize("path, overrides, limit", CONFIGS)
def test_zk_labels_equal_the_reference(path: str, overrides: list[str], limit: int) -> None:
    """The labels of every step of a prefix are the reference's."""
    _compare(path, overrides, limit)


@pytest.mark.slow
@pytest.mark.parametrize(
    "path, overrides",
    [("configs/controller-admin.toml", []), ("configs/controller-admin-rebalance.toml", [])],
)
def test_zk_labels_equal_the_reference_in_full(path: str, overrides: list[str]) -> None:
    """The same on every step of two whole admin configurations (deletions, rebalances)."""
    assert "DeleteTopicZNode" in _compare(path, overrides, 10**9)
