"""``partition_offline_only_without_live_leader`` (issue 35): a partition goes OfflinePartition
only when the controller knows no live leader for it (``partitionsWithOfflineLeader``), found by
a mutant of the 300-mutant measure (``broker_lifecycle.py:109`` ``==`` made ``!=``: every partition
with a live leader went Offline and was elected again on any broker failure), which every
other property let pass. And the release entry ``controller-admin-metadata`` (topic deletion
with the brokers' metadata caches), where a deletion's marker leaking to other topics shows."""

from __future__ import annotations

from typing import Any

import pytest

from explorer.config import load_config
from explorer.engines.bfs import check_bfs
from invariants import controller as spec
from invariants.controller import ControllerConfig
from model.controller import ControllerSystem
from model.controller.base import ControllerBase
from model.controller.broker_lifecycle import BrokerLifecycle
from model.controller.messages import LEADER_DURING_DELETE
from model.controller.state import PartZ
from model.controller.state_machines import PartitionStateMachine
from model.election import NO_LEADER

NAME = "partition_offline_only_without_live_leader"


class EveryLeaderLost(BrokerLifecycle):
    """``onBrokerFailure`` that takes every partition with a leader for one without."""

    def leader_lost(self, c: ControllerBase, z: PartZ, brokers: tuple[int, ...]) -> bool:
        return z.leader != NO_LEADER or not c.ctx.live[z.leader]


def _only(cfg: ControllerConfig, *names: str) -> list[Any]:
    return [p for p in spec.properties(cfg) if p.name in names]


def test_holds_on_the_small_configuration() -> None:
    cfg = load_config(ControllerConfig, "configs/controller-small.toml", [])
    r = check_bfs(spec.build(cfg), _only(cfg, NAME), keep_going=True)
    assert r.exit_reason.value == "complete" and r.violations == []
    assert r.properties[NAME]["evaluated"] > 0


def test_a_partition_taken_offline_under_a_live_leader_is_caught() -> None:
    cfg = load_config(ControllerConfig, "configs/controller-small.toml", [])
    r = check_bfs(ControllerSystem(cfg, broker_lifecycle=EveryLeaderLost), _only(cfg, NAME))
    assert [v.property for v in r.violations] == [NAME]
    assert r.violations[0].length == 4  # an expiry, BrokerChange, the brokers read back, the ISR read


class DeletionMarksEveryTopic(ControllerBase):
    """``sendUpdateMetadataRequest`` that marks every partition deleted while any topic is."""

    def send_update_metadata_request(self, partitions: tuple[int, ...] | None = None) -> None:
        ctx = self.ctx
        if not ctx.deleting or not self.sys.cfg.send_update_metadata:
            super().send_update_metadata_request(partitions)
            return
        real = self.is_topic_queued_up_for_deletion
        self.is_topic_queued_up_for_deletion = lambda p: True  # type: ignore[method-assign]
        try:
            super().send_update_metadata_request(partitions)
        finally:
            self.is_topic_queued_up_for_deletion = real  # type: ignore[method-assign]


ADMIN_METADATA = ["send_update_metadata=true", "liveness=false"]


@pytest.mark.slow
def test_admin_metadata_entry_golden() -> None:
    """The release entry controller-admin-metadata: 90,905 states, every property held."""
    cfg = load_config(ControllerConfig, "configs/controller-admin.toml", ADMIN_METADATA)
    r = check_bfs(spec.build(cfg), spec.properties(cfg))
    assert r.exit_reason.value == "complete" and r.violations == []
    assert r.distinct_states == 90_905
    assert r.properties["metadata_cache_matches_zookeeper"]["status"] == "held"


@pytest.mark.slow
def test_a_deletion_marker_on_other_topics_is_caught() -> None:
    assert LEADER_DURING_DELETE < 0
    cfg = load_config(ControllerConfig, "configs/controller-admin.toml", ADMIN_METADATA)
    system = ControllerSystem(cfg, controller=DeletionMarksEveryTopic)
    r = check_bfs(system, _only(cfg, "metadata_cache_matches_zookeeper"))
    assert [v.property for v in r.violations] == ["metadata_cache_matches_zookeeper"]


# -- no_election_for_a_topic_being_deleted and the two deletion entries ------------------------------

DELETING = "no_election_for_a_topic_being_deleted"
DELETE_REASSIGN = ["liveness=false", "max_reassignments=1", "max_crashes=0", "max_restarts=0"]
DELETE_PREFERRED = ["liveness=false", "max_preferred_elections=1"]


class ElectsDeletedTopics(PartitionStateMachine):
    """``triggerOnlinePartitionStateChange`` without its filter of topics queued for deletion."""

    def trigger_online_partition_state_change(
        self, c: ControllerBase, rest: tuple, batch: tuple, topic: int = -1
    ) -> bool:
        deleting = c.ctx.deleting
        c.ctx = c.ctx._replace(deleting=())
        try:
            return super().trigger_online_partition_state_change(c, rest, batch, topic)
        finally:
            if c.ctx is not None:
                c.ctx = c.ctx._replace(deleting=deleting)


@pytest.mark.slow  # over 1.3 CPU-s in the CI of session 17
def test_an_election_for_a_topic_being_deleted_is_caught() -> None:
    cfg = load_config(ControllerConfig, "configs/controller-admin.toml", ["liveness=false"])
    r = check_bfs(spec.build(cfg), _only(cfg, DELETING))
    assert r.exit_reason.value == "complete" and r.violations == []
    r = check_bfs(ControllerSystem(cfg, partition_state_machine=ElectsDeletedTopics), _only(cfg, DELETING))
    assert [v.property for v in r.violations] == [DELETING]


def test_delete_reassign_entry_golden() -> None:
    """controller-admin-delete-reassign: 210 states, every property held."""
    cfg = load_config(ControllerConfig, "configs/controller-admin.toml", DELETE_REASSIGN)
    r = check_bfs(spec.build(cfg), spec.properties(cfg))
    assert (r.exit_reason.value, r.violations, r.distinct_states) == ("complete", [], 210)


@pytest.mark.slow
def test_delete_preferred_entry_golden() -> None:
    """controller-admin-delete-preferred: 97,735 states, every property held."""
    cfg = load_config(ControllerConfig, "configs/controller-admin.toml", DELETE_PREFERRED)
    r = check_bfs(spec.build(cfg), spec.properties(cfg))
    assert (r.exit_reason.value, r.violations, r.distinct_states) == ("complete", [], 97_735)


# -- shutting_down_brokers_are_live ----------------------------------------------------------------

SHUTTING = "shutting_down_brokers_are_live"
# one controlled shutdown, no other fault: the broker stops once it is answered
SHUTDOWN_SMALL = ["max_crashes=0", "max_restarts=0", "max_session_expiries=0", "send_update_metadata=false",
                  "brokers=2", "topics=1", "replication_factor=2", "max_controlled_shutdowns=1"]  # fmt: skip


class KeepsShuttingDown(BrokerLifecycle):
    """``onBrokerFailure`` that leaves a dead broker in ``shuttingDownBrokerIds``."""

    def on_broker_failure(self, c: ControllerBase, brokers: tuple[int, ...]) -> tuple:
        shutting = c.ctx.shutting
        out = super().on_broker_failure(c, brokers)
        c.ctx = c.ctx._replace(shutting=shutting)
        return out


def test_a_dead_broker_left_shutting_down_is_caught() -> None:
    cfg = load_config(ControllerConfig, None, SHUTDOWN_SMALL)
    r = check_bfs(spec.build(cfg), _only(cfg, SHUTTING, "controlled_shutdown_done"))
    assert (
        r.exit_reason.value == "complete" and r.violations == [] and "controlled_shutdown_done" in r.witnesses
    )
    r = check_bfs(ControllerSystem(cfg, broker_lifecycle=KeepsShuttingDown), _only(cfg, SHUTTING))
    assert [v.property for v in r.violations] == [SHUTTING]
