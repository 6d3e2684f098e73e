"""Kafka 0.8's controller as seed 000 prints it (``kafka_version = "0.8"``).

``kafka_version = "0.8"`` implies the finer keys' 0.8 values (``ControllerConfig``):
``elector = legacy`` (``ZookeeperLeaderElector``, seed 000: 67-199, with 0.8's
``onControllerFailover`` reads: ``readControllerEpochFromZookeeper``,
``incrementControllerEpoch``, 243-245), ``leader_selectors = "0.8"`` (the
``PartitionLeaderSelector`` classes, 917-1185), ``replica_table = printed`` (856), and, for
what came later than 0.8, ``zk_write_fencing = partition-version`` (no KAFKA-6082 multi: 0.8's
``ReplicationUtils.updateLeaderAndIsr`` is conditioned on the partition's zkVersion only,
588-589), ``broker_epoch = false`` (no KIP-380), ``follower_truncation = high-watermark``
(no KIP-101 leader epochs for truncation) and ``session_expiry_handling = queued`` (I0Itec
ZkClient). The controller class here (:class:`KafkaController08`) changes what the 2.x
handlers do where seed 000 (or seed 001's broker handling) prints otherwise:

* ``onControllerFailover`` (000: 238-281): after ``partitionStateMachine.startup()``,
  ``maybeTriggerPartitionReassignment``, ``maybeTriggerPreferredReplicaElection``, then
  ``sendUpdateMetadataRequest(liveOrShuttingDownBrokerIds)``, then
  ``deleteTopicManager.start()`` (2.x sends UpdateMetadata before the state machines start
  and resumes deletions before the preferred election).
* OfflineReplica (000: 801-803, transition [4]): the LeaderAndIsr with the shrunk ISR goes
  to the *leader replica* only (2.x: to every other assigned replica).
* ``onBrokerFailure`` (001: 180): the partitions that go OfflinePartition are those whose
  leader is on a failed broker (2.x: every partition without a live leader, -1 included).

What 0.8 lacks, and how the variant treats it:

* ``/isr_change_notification`` (Kafka 0.9): a 0.8 controller does not watch it; the event
  the model's brokers still raise is dropped unprocessed (brokers learn a leader's ISR change
  only from the next LeaderAndIsr / UpdateMetadata).
* the ``TopicUncleanLeaderElectionEnable`` event (Kafka 2.x): no election is triggered when an
  admin enables ``unclean.leader.election.enable``; the next election reads the topic config
  from ZooKeeper (000: 986-987 ``AdminUtils.fetchTopicConfig``), so it still takes effect.
* the admin unclean election (``ElectLeaders``, Kafka 2.4): rejected by the config
  (``max_admin_unclean_elections`` must be 0).

The other handlers (topic creation and deletion, reassignment, preferred and controlled
shutdown elections, auto rebalance) run the 2.x code with the 0.8 selectors and table
(``docs/fidelity.md`` lists each statement).

>>> from model.controller import ControllerConfig, ControllerSystem
>>> sys = ControllerSystem(ControllerConfig(brokers=2, kafka_version="0.8"))
>>> type(sys.kafka_controller).__name__
'KafkaController08'
"""

from __future__ import annotations

from model.controller.base import ControllerBase
from model.controller.broker_lifecycle import BrokerLifecycle
from model.controller.controller import KafkaController
from model.controller.events import (
    EVENTS,
    ControllerEvent,
    IsrChangeNotification,
    TopicUncleanLeaderElectionEnable,
)
from model.controller.messages import ReadControllerContext
from model.controller.program import (
    ResumeDeletions,
    SendUpdateMetadataRequest,
    TriggerOnlinePartitionStateChange,
)
from model.controller.state import PartZ
from model.controller.state_machines import ReplicaStateMachine
from model.election import NO_LEADER

__all__ = ["BrokerLifecycle08", "KafkaController08", "ReplicaStateMachine08", "variant_0_8"]

#: controller events a 0.8 controller has no listener for (see the module docstring)
UNWATCHED_EVENTS = frozenset({IsrChangeNotification, TopicUncleanLeaderElectionEnable})


class KafkaController08(KafkaController):
    """One broker's controller as Kafka 0.8 runs it (seed 000; see the module docstring): its
    event loop and failover."""

    def process_event(self, c: ControllerBase, ev: ControllerEvent) -> None:
        """The 2.x event loop without the listeners 0.8 lacks (``UNWATCHED_EVENTS``)."""
        if type(EVENTS.view(ev)) in UNWATCHED_EVENTS:
            return
        super().process_event(c, ev)

    def failover_reads(self, c: ControllerBase) -> ReadControllerContext:
        """Seed 000's ``onControllerFailover`` (247-255): the listeners registered and
        ``initializeControllerContext``; 0.8 has no ``/isr_change_notification`` to clean."""
        del c
        return ReadControllerContext()

    def failover_after_replica_startup(self, c: ControllerBase, admin_prog: tuple) -> tuple:
        """Seed 000 ``onControllerFailover`` (238-281) after ``replicaStateMachine.startup()``:
        ``partitionStateMachine.startup()``, ``maybeTriggerPartitionReassignment()``,
        ``maybeTriggerPreferredReplicaElection()``,
        ``sendUpdateMetadataRequest(liveOrShuttingDownBrokerIds)``, ``deleteTopicManager.start()``.

        >>> KafkaController08().failover_after_replica_startup(None, (ResumeDeletions(),))
        (TriggerOnlinePartitionStateChange(), SendUpdateMetadataRequest(), ResumeDeletions())
        """
        deletions = tuple(op for op in admin_prog if type(op) is ResumeDeletions)
        others = tuple(op for op in admin_prog if type(op) is not ResumeDeletions)
        return (TriggerOnlinePartitionStateChange(), *others, SendUpdateMetadataRequest(), *deletions)


class ReplicaStateMachine08(ReplicaStateMachine):
    """Kafka 0.8's OfflineReplica transition."""

    #: 0.8.1's transition sends the shrunk ISR to the leader whether or not the topic is queued
    #: for deletion (0.8.2 added ``isPartitionToBeDeleted`` with the send to every other replica)
    skips_topics_queued_up_for_deletion = False

    def offline_replica_recipients(self, c: ControllerBase, p: int, b: int, z: PartZ) -> tuple[int, ...]:
        """Seed 000's OfflineReplica transition ([4], 801-803): "remove this replica from the isr
        and send LeaderAndIsr request (with new isr) to the leader replica" only (none when the
        removed replica led: the leader is then -1)."""
        del c, p, b
        return () if z.leader == NO_LEADER else (z.leader,)


class BrokerLifecycle08(BrokerLifecycle):
    """Kafka 0.8's ``BrokerChangeListener`` and ``onBrokerFailure``."""

    #: ``controllerContext.liveBrokers = curBrokerIds...`` before ``onBrokerStartup``
    dead_removed_late = False

    def leader_lost(self, c: ControllerBase, z: PartZ, brokers: tuple[int, ...]) -> bool:
        """0.8 ``onBrokerFailure`` (seed 001: 180, 首先找到 Leader 在该 Broker 上所有 Partition):
        the partition's leader is one of the failed brokers."""
        del c
        return z.leader in brokers


#: the component seams 0.8 replaces, and its class for each
VARIANT_0_8: dict[str, type] = {
    "kafka_controller": KafkaController08,
    "replica_state_machine": ReplicaStateMachine08,
    "broker_lifecycle": BrokerLifecycle08,
}
_DEFAULT = {
    "kafka_controller": KafkaController,
    "replica_state_machine": ReplicaStateMachine,
    "broker_lifecycle": BrokerLifecycle,
}
_COMPOSED: dict[type, type] = {}


def variant_0_8(classes: dict[str, type]) -> dict[str, type]:
    """The seams of the 0.8 controller over ``classes`` (the defaults, or a mutant's class in one
    seam): in each seam 0.8 replaces, its class first, then the one given.

    >>> from model.controller.system import SEAMS
    >>> variant_0_8(SEAMS)["kafka_controller"] is KafkaController08
    True
    >>> class Bug(KafkaController):
    ...     pass
    >>> [c.__name__ for c in variant_0_8({**SEAMS, "kafka_controller": Bug})["kafka_controller"].__mro__[:3]]
    ['Bug08', 'KafkaController08', 'Bug']
    """
    out = dict(classes)
    for seam, v08 in VARIANT_0_8.items():
        cls = classes[seam]
        if cls is _DEFAULT[seam]:
            out[seam] = v08
            continue
        got = _COMPOSED.get(cls)
        if got is None:
            got = type(cls.__name__ + "08", (v08, cls), {})
            got.__module__ = cls.__module__
            _COMPOSED[cls] = got
        out[seam] = got
    return out
