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
>>> sys.controller_cls.__name__
'KafkaController08'
"""

from __future__ import annotations

from typing import Any

from model.controller.controller import KafkaController
from model.controller.messages import EV_ISR_CHANGE, EV_UNCLEAN_ENABLE
from model.controller.program import O_RESUME_DELETIONS, O_SEND_UM, O_TRIGGER
from model.controller.state import PartZ
from model.election import NO_LEADER

__all__ = ["KafkaController08", "controller_0_8"]

#: controller events a 0.8 controller has no listener for (see the module docstring)
UNWATCHED_EVENTS = frozenset({EV_ISR_CHANGE, EV_UNCLEAN_ENABLE})


class KafkaController08(KafkaController):
    """One broker's controller as Kafka 0.8 runs it (seed 000; see the module docstring)."""

    __slots__ = ()

    def process_event(self, ev: tuple[int, int]) -> None:
        """The 2.x event loop without the listeners 0.8 lacks (``UNWATCHED_EVENTS``)."""
        if ev[0] in UNWATCHED_EVENTS:
            return
        super().process_event(ev)

    def failover_after_replica_startup(self, admin_prog: tuple) -> tuple:
        """Seed 000 ``onControllerFailover`` (238-281) after ``replicaStateMachine.startup()``:
        ``partitionStateMachine.startup()``, ``maybeTriggerPartitionReassignment()``,
        ``maybeTriggerPreferredReplicaElection()``,
        ``sendUpdateMetadataRequest(liveOrShuttingDownBrokerIds)``, ``deleteTopicManager.start()``.

        >>> KafkaController08.failover_after_replica_startup(None, ((O_RESUME_DELETIONS,),))
        ((3,), (13,), (16,))
        """
        deletions = tuple(op for op in admin_prog if op[0] == O_RESUME_DELETIONS)
        others = tuple(op for op in admin_prog if op[0] != O_RESUME_DELETIONS)
        return ((O_TRIGGER,), *others, (O_SEND_UM,), *deletions)

    def offline_replica_recipients(self, p: int, b: int, z: PartZ) -> tuple[int, ...]:
        """Seed 000's OfflineReplica transition ([4], 801-803): "remove this replica from the isr
        and send LeaderAndIsr request (with new isr) to the leader replica" only (none when the
        removed replica led: the leader is then -1)."""
        del p, b
        return () if z.leader == NO_LEADER else (z.leader,)

    def leader_lost(self, z: PartZ, brokers: tuple[int, ...]) -> bool:
        """0.8 ``onBrokerFailure`` (seed 001: 180, 首先找到 Leader 在该 Broker 上所有 Partition):
        the partition's leader is one of the failed brokers."""
        return z.leader in brokers


_COMPOSED: dict[type, type] = {KafkaController: KafkaController08}


def controller_0_8(cls: Any) -> Any:
    """The 0.8 controller class over ``cls`` (``KafkaController`` or a mutant's subclass of it):
    :class:`KafkaController08`'s methods first, then ``cls``'s.

    >>> controller_0_8(KafkaController) is KafkaController08
    True
    >>> class Bug(KafkaController):
    ...     __slots__ = ()
    >>> [c.__name__ for c in controller_0_8(Bug).__mro__[:3]]
    ['Bug08', 'KafkaController08', 'Bug']
    """
    got = _COMPOSED.get(cls)
    if got is None:
        got = type(cls.__name__ + "08", (KafkaController08, cls), {"__slots__": ()})
        got.__module__ = cls.__module__
        _COMPOSED[cls] = got
    return got
