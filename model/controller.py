"""The ZooKeeper-based Kafka controller as actors exchanging messages (issues 3 and 4).

Actors: every broker runs a controller instance (``KafkaController`` with its event
queue, ``ControllerContext`` and both state machines) and a data-plane replica manager;
the ZooKeeper server holds the znodes and sessions; the network carries ZooKeeper
requests (client -> server, FIFO per session), ZooKeeper responses (server -> client,
FIFO per session) and controller-to-broker requests (FIFO per (controller, broker)
channel). Faults (broker crash, restart, ZooKeeper session expiry on the server) are
ordinary actions bounded by budgets. Sources: seed 004 lines 1160-1420 (2.x ``elect``,
``onControllerFailover``, ``onControllerResignation``), seed 001 (duties, znodes,
``onBrokerStartup`` / ``onBrokerFailure``), seed 003 (state machine startup,
``doElectLeaderForPartitions``, ``leaderForOffline``), seed 002
(``doRemoveReplicasFromIsr``), seed 000 (the 0.8 ``ZookeeperLeaderElector`` and
``onControllerFailover``: the ``elector = legacy`` variant).

Granularity (one step = one action)
-----------------------------------
* ``ProcessEvent``: the controller takes the head of its event queue and runs it until
  it needs a ZooKeeper response (it then parks a *continuation*: the request it waits
  for, its data, the batch of controller requests not yet sent, and the rest of its
  small program) or until it is done.
* ``ZkServe``: the server applies the head request of one session (version checks:
  BadVersion, NodeExists; multi with a check of ``/controller_epoch``'s version; a
  request of an expired session is never applied) and queues the response; watches fire
  here, as events appended to the watching controllers' queues.
* ``ZkReply``: the client takes the head response; the controller resumes its
  continuation, the replica manager handles its ISR update result, a broker handles
  its registration.
* ``Deliver``: a broker applies the head request of one controller channel
  (LeaderAndIsr / UpdateMetadata), rejecting a stale controller epoch, a stale broker
  epoch (KIP-380) and, per partition, a stale leader epoch.
* Faults: ``Crash``, ``Restart``, ``SessionExpire`` (server side: ephemerals removed,
  watches fired, pending requests of the session dropped), ``SessionNotice`` (the
  client notices: the 2.x ``Expire`` event cleared-and-put ahead of the queue and
  processed, a new session, ``RegisterBrokerAndReelect``).
* Data plane: ``Produce`` (acks=all at the broker that believes it leads), ``Fetch``
  (one follower fetch, request and response in one step), ``ShrinkIsr`` (the leader
  drops a follower that is lagging, dead or not following it; expansion is sent from
  the fetch that catches a follower up), both through a ZooKeeper write conditioned on
  the leader's cached partition zkVersion plus an ``/isr_change_notification``.

Abstractions (each keeps the ZooKeeper-side interleavings that matter; say why)
-------------------------------------------------------------------------------
* ``/controller`` and ``/controller_epoch`` are read together (2.x ``elect`` reads
  them back to back); the multi that follows is conditioned on both, so a change in
  between makes it fail as in Kafka. ``onControllerFailover``'s reads
  (``/brokers/ids`` with czxids, topics, partition states) are one request that also
  registers the controller's child watches ("register the listeners before reading
  source of truth", seed 004). An ISR notification read returns the notified partitions
  with their states (``getAllIsrChangeNotifications`` + ``updateLeaderAndIsrCache``).
* The per-partition multis of one ``updateLeaderAndIsr`` / ``createTopicPartitionStatesRaw``
  batch land in one server step.
* Requests whose response the controller ignores and that end an event (deleting ISR
  change notifications; the legacy ``resign()`` delete) are fire-and-forget: they stay
  in the session's FIFO queue but nobody waits for them.
* Watches on ``/controller`` are persistent per session (2.x re-arms them on every
  read of the path); the ControllerChange a broker would get for its own creation of
  ``/controller`` is a no-op (``maybeResign`` reads itself) and is not sent. An event
  already waiting in a controller's queue is not queued twice (every handler re-reads
  ZooKeeper, so the second copy could only repeat the first's read).
* Broker epochs are per-broker registration counters (ZooKeeper's czxid is global but
  only compared per broker); session ids are a global counter.
* UpdateMetadata carries only the controller and broker epochs (the data plane here does
  not read metadata: the producer writes to the broker that believes it leads); two
  identical UpdateMetadata requests adjacent in a channel are one.
* LeaderAndIsr requests of ``doRemoveReplicasFromIsr`` are sent only for partitions it
  rewrote (the others carry the same leader epoch and every broker rejects them).
* Records are the leader epoch they were appended in; follower truncation by leader epoch
  (KIP-101 with KIP-279's fix) is modelled as truncation to the longest common prefix
  with the leader's log at fetch time; ``follower_truncation = high-watermark`` truncates
  to the follower's own HW when it becomes follower (and to the leader's log end offset
  when longer), with no divergence check. A fetch is atomic: the leader reads (records and
  its HW), records the follower's fetch offset, recomputes its HW, then the follower
  appends and takes the HW read *before* the update (so followers learn the HW one fetch
  late, as in Kafka). A record is acknowledged when the leader that appended it advances
  its HW past it while still leading that epoch. Logs and HW survive a crash.
* The controller ISR-update write carries the highest controller epoch the leader has seen.
* Topic creation after start (``topics_created_later = N``, default 0: off): the last N
  topics are absent at start; ``AdminCreateTopic`` (one per such topic, in order) is the
  admin client's create of ``/brokers/topics/<t>`` with its assignment, one server step
  that fires the controller's ``/brokers/topics`` child watch (registered with the other
  controller watches by the failover context read, which also returns the topics that
  exist). ``TopicChange`` reads the children and the new topics' assignments in one round
  trip (assignments never change once written and the children only grow; a topic created
  after the read fires the watch again), then runs ``onNewTopicCreation`` /
  ``onNewPartitionCreation`` (seed 001 新建 Topic): partitions -> NewPartition, replicas ->
  NewReplica, ``initializeLeaderAndIsrForPartitions`` (seed 003: a create of the state
  znodes, fenced like every controller write; NodeExists or no live replica leaves the
  partition NewPartition), LeaderAndIsr to the new ISR (``isNew`` is not carried: the
  data plane does not read it) and UpdateMetadata, replicas -> OnlineReplica. A topic the
  context does not know is one whose partitions are NonExistentPartition.
Admin workflows (issue 4; seeds 001 and 002; each off by default behind a budget key, so the
configurations without them have the state spaces they had)
---------------------------------------------------------------------------------------------
* An admin request is one ZooKeeper write (an ``Admin*`` action) that fires the controller's
  watch; the controller's event reads the znode in one round trip and its writes are fenced on
  ``/controller_epoch``'s version like every controller write. A failover reads
  ``/admin/delete_topics``, ``/admin/reassign_partitions``, ``/admin/preferred_replica_election``
  and the assignments with the rest of the context, and runs ``initializePartitionReassignment``,
  ``topicDeletionManager.init``, then after startup ``maybeTriggerPartitionReassignment``,
  ``tryTopicDeletion`` and ``fetchPendingPreferredReplicaElections``.
* Topic deletion (``max_topic_deletions``, ``delete_topic_enable``): ``TopicDeletion`` clears
  unknown topics (and every entry when deletion is disabled), marks topics with a reassignment
  in progress ineligible (seed 001's order: before enqueueing), enqueues and runs
  ``resumeDeletions`` (complete / retry / start, eligibility evaluated before the retry as in
  Kafka); ``startReplicaDeletion`` moves dead replicas to ReplicaDeletionIneligible (topic
  ineligible) and live ones OfflineReplica (``doRemoveReplicasFromIsr``) ->
  ReplicaDeletionStarted with StopReplica(delete=true) (the preceding StopReplica(delete=false)
  is folded into it); the broker deletes the log and its response queues
  ``TopicDeletionStopReplicaResponseReceived`` at the sender (an error, from a stale epoch,
  fails the replica); ``completeDeleteTopic`` moves replicas to NonExistentReplica and
  partitions Offline -> NonExistentPartition, then deletes the topic's znodes (fenced) and
  forgets it. ``onBrokerFailure`` fails the deletion of the dead broker's replicas;
  ``onBrokerStartup`` resumes it; triggerOnlinePartitionStateChange and the leaderless
  partitions of onBrokerFailure skip topics queued for deletion. The later 2.x replica table
  (OfflineReplica -> ReplicaDeletionIneligible) is used. Kafka attempts and only logs invalid
  transitions for replicas already deleted when their broker fails or restarts; the model skips
  them like Kafka (``strict_deletion_transitions`` records them). The controller drops its
  queued requests to dead and bounced brokers (``removeBroker``).
  ``deletion_ignores_stale_broker_epoch`` (default false, Kafka as written) fixes a liveness gap
  the model finds: a StopReplica(delete) rejected by a broker's new incarnation fails the round
  its bounce restarted, and nothing restarts it.
* Partition expansion (``partitions_added_later``): the last partitions of each topic existing
  at start are absent until ``AdminAddPartitions`` (one per topic, in order) rewrites
  ``/brokers/topics/<t>``; ``PartitionModifications`` creates them with
  ``onNewPartitionCreation`` unless the topic is queued for deletion.
* Reassignment (``max_reassignments``, ``reassignment``; default RAR: every replica r becomes
  (r + 1) % brokers): the 2.x (pre-KIP-455) steps of seed 001 with AR/RAR/OAR: AR = OAR + RAR in
  ZooKeeper, leader epoch + 1 with LeaderAndIsr to AR, RAR - OAR -> NewReplica; when RAR joins
  the ISR (the partition-state watch, ``PartitionReassignmentIsrChange``): RAR -> OnlineReplica,
  AR = RAR, ``moveReassignedPartitionLeaderIfRequired`` (Reassign election when the leader is
  not in RAR or dead, else an epoch bump), OAR - RAR -> Offline -> ReplicaDeletionStarted ->
  Successful -> NonExistent with StopReplica(delete=true), AR = RAR in ZooKeeper, the partition
  removed from ``/admin/reassign_partitions``, deletion of its topic resumed. Replica states are
  kept per *slot* (assignment plus targets); a leader adds to the ISR only replicas of the AR
  its LeaderAndIsr carried.
* Preferred election (``max_preferred_elections``; ``auto_leader_rebalance`` with
  ``leader_imbalance_per_broker_percentage``): the admin's znode names every partition; the
  controller filters as ``fetchPendingPreferredReplicaElections``, elects with the
  PreferredReplica strategy and deletes the znode. ``AutoRebalanceTick`` queues the
  auto-rebalance check when the controller is idle (the 300 s interval is long next to event
  processing); the check is ``checkAndTriggerAutoLeaderRebalance``'s imbalance ratio.
* Controlled shutdown (``max_controlled_shutdowns``): ``ControlledShutdown`` queues the request
  at the active controller; ``doControlledShutdown`` adds the broker to
  ``shuttingDownBrokerIds`` (which ``liveBrokerIds`` excludes), elects with the
  ControlledShutdown strategy for the partitions it leads (single-replica ones skipped), sends
  StopReplica(delete=false) and OfflineReplica for those it follows, and answers;
  ``ShutdownComplete`` stops the broker and closes its session (the offline election of seed
  002's question 9 follows); a broker whose request was lost with its controller stops anyway.
* ISR change notifications were already handled; ``AdminEnableUnclean`` sets a topic's
  ``unclean.leader.election.enable`` (read with the partition states at election time, as
  ``getLogConfigs``) and ``TopicUncleanLeaderElectionEnable`` runs
  ``triggerOnlinePartitionStateChange(topic)``.
* Liveness (``liveness``): a ``TimePasses`` stutter makes a stuck behaviour a lasso; the fair
  kinds are ``FAIR_KINDS``. In admin configurations a leader whose ISR write failed waits for a
  LeaderAndIsr instead of retrying with its stale zkVersion (the retries could starve that
  LeaderAndIsr, which waits for the ISR write).
* Admin requests come in a fixed order (deletion of topics 0, 1, ...; reassignment of
  partitions 0, 1, ..., one at a time; expansion of topics 0, 1, ...) within their budgets.
* Not modelled: KIP-455 reassignment (adding/removing replicas, cancellation), StopReplica
  errors other than stale epochs (e.g. KafkaStorageException), controlled shutdown retries (the
  broker stops after the answer or after losing its controller), the admin tools' own checks,
  log-dir events, the delegation-token scheduler.

Bounds: fault budgets (``max_crashes``, ``max_restarts``, ``max_session_expiries``),
``max_controller_epoch`` (no new fault once ``/controller_epoch`` reaches it),
``max_records``. Everything else is bounded by these.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from explorer.config import ConfigError, key, validate
from explorer.speedups import install_fast_replace, set_item
from model.election import (
    NO_LEADER,
    ControlledShutdownAction,
    ElectionOutcome,
    ElectionResult,
    LeaderAndIsr,
    controlled_shutdown_partition_action,
    initialize_leader_and_isr,
    leader_for_controlled_shutdown,
    leader_for_preferred_replica,
    leader_for_reassign,
    new_leader_and_isr,
    offline_partition_leader_election_strategy,
    remove_replica_from_isr,
)
from model.state_machines import (
    PartitionState,
    ReplicaState,
    StateMachine,
    TableVersion,
    initial_partition_state,
    initial_replica_state,
    is_valid_transition,
)

__all__ = [
    "ADMIN_KINDS",
    "FAIR_KINDS",
    "MUTANTS",
    "AdminAddPartitions",
    "AdminCreateTopic",
    "AdminDeleteTopic",
    "AdminEnableUnclean",
    "AdminPreferredElection",
    "AdminReassign",
    "AutoRebalanceTick",
    "ControlledShutdown",
    "ControllerConfig",
    "ControllerSystem",
    "Ctx",
    "Elector",
    "ExpiryHandling",
    "FollowerTruncation",
    "Node",
    "PartZ",
    "Rep",
    "ShutdownComplete",
    "Start",
    "State",
    "TimePasses",
    "Zk",
    "ZkResponses",
    "ZkWriteFencing",
    "admin_write_epoch",
    "is_active",
    "leo",
]


# ---------------------------------------------------------------------------------------
# Configuration


class ZkWriteFencing(enum.StrEnum):
    """What a controller's ZooKeeper write is conditioned on."""

    CONTROLLER_EPOCH = "controller-epoch"  #: multi(check /controller_epoch version, op) (KAFKA-6082)
    PARTITION_VERSION = "partition-version"  #: only the partition znode's version (before KAFKA-6082)


class Elector(enum.StrEnum):
    """Which controller election code runs."""

    MODERN = "modern"  #: 2.x elect / registerControllerAndIncrementControllerEpoch (seed 004)
    LEGACY = "legacy"  #: 0.8 ZookeeperLeaderElector + onControllerFailover (seed 000)


class FollowerTruncation(enum.StrEnum):
    """How a follower truncates its log."""

    LEADER_EPOCH = "leader-epoch"  #: KIP-101 (with KIP-279): to the common prefix with the leader
    HIGH_WATERMARK = "high-watermark"  #: pre-KIP-101: to its own high watermark


class ZkResponses(enum.StrEnum):
    """When a client receives a ZooKeeper response."""

    MERGED = "merged"  #: in the server's step (the client reacts at once)
    SEPARATE = "separate"  #: in a later ZkReply step


class ExpiryHandling(enum.StrEnum):
    """What a 2.x client does when it notices its session expired."""

    CLEAR_AND_PUT = "clear-and-put"  #: 2.2+: in-flight event fails, Expire runs first (KAFKA-7235)
    QUEUED = "queued"  #: older: reconnect at once, in-flight requests retried in the new session


class Start(enum.StrEnum):
    """The initial state."""

    SETTLED = "settled"  #: the cold start run by a fixed fault-free schedule until quiet
    COLD = "cold"  #: every broker just started: nothing registered, no controller


MUTANTS = (
    "none",
    "no-epoch-bump",
    "epoch-reset",
    "no-controller-epoch-check",
    "leader-outside-isr",
    "empty-isr",
    "no-leader-epoch-bump",
    "skip-replica-init",
    "failover-keeps-old-epoch",
    "no-deletion-retry-on-startup",
    "delete-keeps-partition-state",
    "no-reassign-isr-watch",
    "reassign-keeps-old-replica",
    "cs-elects-shutting-down",
    "preferred-any-isr-replica",
    "no-election-on-broker-failure",
    "no-reelect-on-controller-gone",
    "no-resume-after-replica-deletion",
)
"""Named bugs a test can inject (config key ``mutant``); see ``tests/test_controller.py``."""


@dataclass(frozen=True)
class ControllerConfig:
    """Bounds and variants of the controller model (defaults: the fixed 2.x design)."""

    brokers: int = key(3, "number of brokers (ids 0..brokers-1)", min=1, max=5)
    topics: int = key(1, "number of topics", min=1, max=4)
    partitions_per_topic: int = key(1, "partitions of every topic", min=1, max=4)
    replication_factor: int = key(2, "replicas of every partition", min=1, max=5)
    assignment: tuple[tuple[int, ...], ...] = key(
        (),
        "replica assignment per partition, topic-major; empty: partition p gets "
        "[(p + k) % brokers for k < replication_factor]",
        min=0,
    )
    unclean_leader_election: bool = key(False, "unclean.leader.election.enable for every topic")
    unclean_topics: tuple[int, ...] = key(
        (), "topics whose own unclean.leader.election.enable is true", min=0
    )
    start: Start = key(Start.SETTLED, "initial state", choices=list(Start))
    max_crashes: int = key(1, "broker crashes", min=0, max=9)
    max_restarts: int = key(1, "broker restarts", min=0, max=9)
    max_session_expiries: int = key(1, "ZooKeeper session expiries of live brokers", min=0, max=9)
    max_controller_epoch: int = key(3, "no new fault once /controller_epoch reaches this", min=1, max=20)
    max_records: int = key(0, "records the producer sends (acks=all)", min=0, max=9)
    send_update_metadata: bool = key(True, "model UpdateMetadata requests")
    session_expiry_handling: ExpiryHandling = key(
        ExpiryHandling.CLEAR_AND_PUT,
        "2.x client on noticing expiry (legacy elector: always queued, I0Itec ZkClient)",
        choices=list(ExpiryHandling),
    )
    zk_responses: ZkResponses = key(
        ZkResponses.MERGED, "when a client receives a ZooKeeper response", choices=list(ZkResponses)
    )
    zk_write_fencing: ZkWriteFencing = key(
        ZkWriteFencing.CONTROLLER_EPOCH,
        "controller ZooKeeper writes conditioned on",
        choices=list(ZkWriteFencing),
    )
    broker_epoch: bool = key(True, "KIP-380 broker epochs (false: a fast bounce can go unseen)")
    elector: Elector = key(Elector.MODERN, "controller election code", choices=list(Elector))
    follower_truncation: FollowerTruncation = key(
        FollowerTruncation.LEADER_EPOCH, "follower log truncation", choices=list(FollowerTruncation)
    )
    topics_created_later: int = key(
        0,
        "the last N topics do not exist at start; an admin creates each (in order) after start "
        "(TopicChange -> onNewTopicCreation)",
        min=0,
        max=4,
    )
    max_topic_deletions: int = key(
        0,
        "an admin queues topics 0, 1, ... for deletion (/admin/delete_topics; TopicDeletionManager)",
        min=0,
        max=4,
    )
    delete_topic_enable: bool = key(True, "delete.topic.enable (false: deletions are cleared)")
    partitions_added_later: int = key(
        0,
        "the last N partitions of every topic existing at start are absent; an admin adds them "
        "(one AdminAddPartitions per topic, in order: PartitionModifications)",
        min=0,
        max=3,
    )
    max_reassignments: int = key(
        0,
        "an admin reassigns partitions 0, 1, ... (/admin/reassign_partitions: AR/RAR/OAR)",
        min=0,
        max=4,
    )
    reassignment: tuple[tuple[int, ...], ...] = key(
        (),
        "target replicas (RAR) per partition; empty: every replica r of the assignment becomes "
        "(r + 1) % brokers",
        min=0,
    )
    max_preferred_elections: int = key(
        0, "admin-triggered preferred replica elections (/admin/preferred_replica_election)", min=0, max=4
    )
    auto_leader_rebalance: bool = key(
        False, "auto.leader.rebalance.enable: a timer action queues the auto-rebalance check"
    )
    leader_imbalance_per_broker_percentage: int = key(
        10, "leader.imbalance.per.broker.percentage", min=0, max=100
    )
    max_controlled_shutdowns: int = key(
        0, "controlled shutdowns (ControlledShutdownRequest, then the broker stops)", min=0, max=4
    )
    max_unclean_enables: int = key(
        0,
        "an admin enables unclean.leader.election.enable dynamically for topics 0, 1, ... "
        "(TopicUncleanLeaderElectionEnable)",
        min=0,
        max=4,
    )
    strict_deletion_transitions: bool = key(
        False,
        "record the invalid transitions Kafka 2.x attempts (and only logs) for replicas of topics "
        "queued for deletion (a deleted replica's broker fails or restarts: ReplicaDeletionSuccessful "
        "-> Ineligible / Online); false: skip them as Kafka does",
    )
    deletion_ignores_stale_broker_epoch: bool = key(
        False,
        "a StopReplica(delete) rejected for a stale broker epoch (sent to a broker's previous "
        "incarnation) does not fail the deletion (false, as Kafka 2.x: the error fails the current "
        "deletion round, which then waits for another trigger: L2 fails)",
    )
    liveness: bool = key(False, "check the eventually properties (bfs keeps every explored edge in memory)")
    mutant: str = key("none", "test-only: inject a named bug", choices=MUTANTS)

    def __post_init__(self) -> None:
        validate(self)
        b = self.brokers
        if self.replication_factor > b:
            raise ConfigError(f"replication_factor: {self.replication_factor} exceeds brokers ({b})")
        n = self.topics * self.partitions_per_topic
        if self.assignment:
            if len(self.assignment) != n:
                raise ConfigError(f"assignment: expected {n} partitions (topics x partitions_per_topic)")
            for i, reps in enumerate(self.assignment):
                if not reps:
                    raise ConfigError(f"assignment[{i}]: no replica")
                if len(set(reps)) != len(reps):
                    raise ConfigError(f"assignment[{i}]: duplicate replica")
                for r in reps:
                    if r >= b:
                        raise ConfigError(f"assignment[{i}]: broker {r} does not exist")
        for t in self.unclean_topics:
            if t >= self.topics:
                raise ConfigError(f"unclean_topics: topic {t} does not exist")
        if self.topics_created_later > self.topics:
            raise ConfigError(
                f"topics_created_later: {self.topics_created_later} exceeds topics ({self.topics})"
            )
        if self.max_topic_deletions > self.topics:
            raise ConfigError(
                f"max_topic_deletions: {self.max_topic_deletions} exceeds topics ({self.topics})"
            )
        if self.max_unclean_enables > self.topics:
            raise ConfigError(
                f"max_unclean_enables: {self.max_unclean_enables} exceeds topics ({self.topics})"
            )
        if self.partitions_added_later >= self.partitions_per_topic:
            raise ConfigError(
                f"partitions_added_later: must be below partitions_per_topic ({self.partitions_per_topic})"
            )
        if self.max_reassignments > n:
            raise ConfigError(f"max_reassignments: {self.max_reassignments} exceeds partitions ({n})")
        if self.reassignment:
            if len(self.reassignment) != n:
                raise ConfigError(f"reassignment: expected {n} partitions (topics x partitions_per_topic)")
            for i, reps in enumerate(self.reassignment):
                if not reps or len(set(reps)) != len(reps) or any(r >= b for r in reps):
                    raise ConfigError(f"reassignment[{i}]: needs distinct existing brokers")

    def targets(self) -> tuple[tuple[int, ...], ...]:
        """Reassignment targets (RAR) per partition.

        >>> ControllerConfig(brokers=3, replication_factor=2).targets()
        ((1, 2),)
        """
        if self.reassignment:
            return self.reassignment
        return tuple(tuple((r + 1) % self.brokers for r in reps) for reps in self.replicas())

    @property
    def admin(self) -> bool:
        """Some admin workflow of issue 4 is on (deletion, expansion, reassignment, preferred
        election, auto rebalance, controlled shutdown, dynamic unclean election)."""
        return bool(
            self.max_topic_deletions
            or self.partitions_added_later
            or self.max_reassignments
            or self.max_preferred_elections
            or self.auto_leader_rebalance
            or self.max_controlled_shutdowns
            or self.max_unclean_enables
        )

    @property
    def partitions(self) -> int:
        """Total number of partitions."""
        return self.topics * self.partitions_per_topic

    def replicas(self) -> tuple[tuple[int, ...], ...]:
        """The assignment actually used.

        >>> ControllerConfig(brokers=3, replication_factor=2, partitions_per_topic=2).replicas()
        ((0, 1), (1, 2))
        """
        if self.assignment:
            return self.assignment
        return tuple(
            tuple((p + k) % self.brokers for k in range(self.replication_factor))
            for p in range(self.partitions)
        )

    def unclean(self, p: int) -> bool:
        """Topic-level ``unclean.leader.election.enable`` of partition ``p``'s topic."""
        return self.unclean_leader_election or (p // self.partitions_per_topic) in self.unclean_topics


# ---------------------------------------------------------------------------------------
# State


class PartZ(NamedTuple):
    """``/brokers/topics/T/partitions/P/state``: LeaderIsrAndControllerEpoch and its zkVersion."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    ctl_epoch: int
    version: int


class Zk(NamedTuple):
    """The ZooKeeper server's data tree (only the znodes the model uses)."""

    controller: tuple[int, int] | None  #: /controller: (broker id, owner session)
    epoch: int  #: /controller_epoch data
    epoch_version: int  #: /controller_epoch zkVersion
    brokers: tuple[tuple[int, int] | None, ...]  #: /brokers/ids/<id>: (owner session, broker epoch)
    parts: tuple[PartZ | None, ...]  #: partition state znodes
    isr_changes: tuple[int, ...]  #: partitions under /isr_change_notification
    next_session: int
    czxids: tuple[int, ...]  #: per broker: the broker epoch of its last registration
    created: int = 0  #: topics created after start (``topics_created_later``) so far, in order
    ar: tuple[tuple[int, ...], ...] = ()  #: /brokers/topics/<t> assignments per partition (admin only)
    expanded: int = 0  #: topics whose added partitions the admin wrote (``partitions_added_later``)
    delete_topics: tuple[int, ...] = ()  #: children of /admin/delete_topics
    deletes: int = 0  #: deletions the admin requested so far
    gone: tuple[int, ...] = ()  #: topics deleted (/brokers/topics/<t> removed)
    reassign: tuple[tuple[int, tuple[int, ...]], ...] = ()  #: /admin/reassign_partitions: (p, RAR)
    reassigns: int = 0  #: reassignments the admin requested so far
    preferred: tuple[int, ...] = ()  #: /admin/preferred_replica_election partitions
    preferreds: int = 0  #: preferred elections the admin requested so far
    unclean_dyn: tuple[int, ...] = ()  #: topics whose unclean.leader.election.enable was set dynamically


class Ctx(NamedTuple):
    """``ControllerContext`` of an active controller."""

    epoch: int
    epoch_version: int
    live: tuple[int, ...]  #: per broker: its broker epoch if live, else 0
    leaders: tuple[PartZ | None, ...]  #: partitionLeadershipInfo
    pstates: tuple[PartitionState, ...]
    rstates: tuple[tuple[ReplicaState, ...], ...]  #: per partition, per replica slot
    ar: tuple[tuple[int, ...], ...] = ()  #: partitionReplicaAssignment
    deleting: tuple[int, ...] = ()  #: topicsToBeDeleted
    ineligible: tuple[int, ...] = ()  #: topicsIneligibleForDeletion
    reassigning: tuple[tuple[int, tuple[int, ...]], ...] = ()  #: partitionsBeingReassigned: (p, RAR)
    shutting: tuple[int, ...] = ()  #: shuttingDownBrokerIds


class Rep(NamedTuple):
    """A broker's replica of one partition (data plane)."""

    leader: int  #: the leader it knows (-1: none / not yet told)
    epoch: int  #: the leader epoch it knows (-1: none)
    isr: tuple[int, ...]  #: the ISR, when it leads
    zkv: int  #: cached partition zkVersion, when it leads
    log: tuple[int, ...]  #: records as the leader epoch they were appended in
    hw: int
    known: tuple[int, ...]  #: when it leads: each broker's last fetch offset
    pend: bool  #: an ISR update of this leader is in flight
    ar: tuple[int, ...] = ()  #: when it leads: the assigned replicas of its LeaderAndIsr (admin only)


class Node(NamedTuple):
    """One broker: process, ZooKeeper client session, controller instance, replicas."""

    alive: bool
    session: int  #: its current ZooKeeper session (0: none)
    expired: bool  #: the server expired ``session``; the client has not noticed yet
    bepoch: int  #: its broker epoch (czxid of its registration) as it knows it (0: unknown)
    zk_out: tuple[tuple, ...]  #: requests of ``session`` not yet applied by the server
    zk_in: tuple[tuple, ...]  #: responses not yet received
    ctl_watch: bool  #: watch on /controller registered
    watch: bool  #: controller watches (/brokers/ids, /isr_change_notification) registered
    active_id: int  #: activeControllerId
    ctx: Ctx | None  #: the context (state machines started) while it acts as controller
    events: tuple[tuple[int, int], ...]  #: controller event queue
    pending: tuple | None  #: continuation waiting for a ZooKeeper response
    seen_epoch: int  #: highest controller epoch its replica manager accepted
    reps: tuple[Rep, ...]
    cs: int = 0  #: controlled shutdown: 0 none, 2 answered, 3 + c: requested at controller c


class State(NamedTuple):
    """The whole system."""

    zk: Zk
    nodes: tuple[Node, ...]
    chans: tuple[tuple[tuple, ...], ...]  #: controller requests, index sender * brokers + dest
    acked: tuple[tuple[int, int, int], ...]  #: acknowledged records (partition, offset, epoch)
    produced: int
    crashes: int
    restarts: int
    expiries: int
    invalid: tuple[int, ...]  #: first invalid state-machine transition (machine, partition, from, to)
    history: int  #: bit 0: an unclean election was written; bit 1+p: partition p had no leader
    done: int = 0  #: admin workflows completed at least once (``D_*`` bits)
    shutdowns: int = 0  #: controlled shutdowns requested


# a faster ``_replace`` (in C when explorer._speedups is built) for the state records
for _record in (PartZ, Zk, Ctx, Rep, Node, State):
    install_fast_replace(_record)
del _record


def leo(r: Rep) -> int:
    """Log end offset of a replica.

    >>> leo(Rep(-1, -1, (), 0, (1, 1), 0, (), False))
    2
    """
    return len(r.log)


def is_active(s: State, b: int) -> bool:
    """Broker ``b`` acts as controller (its state machines are started).

    >>> is_active(ControllerSystem(ControllerConfig(brokers=1, replication_factor=1)).init_states()[0], 0)
    True
    """
    return s.nodes[b].ctx is not None


# event kinds
EV_STARTUP, EV_REELECT, EV_CTL_CHANGE, EV_BROKER_CHANGE, EV_ISR_CHANGE, EV_EXPIRE, EV_TOPIC_CHANGE = range(7)
EVENT_NAMES = (
    "Startup",
    "Reelect",
    "ControllerChange",
    "BrokerChange",
    "IsrChangeNotification",
    "Expire",
    "TopicChange",
    "TopicDeletion",
    "TopicDeletionStopReplicaResponseReceived",
    "TopicDeletionStopReplicaResponseReceived (error)",
    "PartitionModifications",
    "PartitionReassignment",
    "PartitionReassignmentIsrChange",
    "PreferredReplicaLeaderElection",
    "AutoPreferredReplicaLeaderElection",
    "ControlledShutdown",
    "TopicUncleanLeaderElectionEnable",
)
(
    EV_DELETE_TOPICS,
    EV_DELETE_RESP,
    EV_DELETE_RESP_ERR,
    EV_PARTITION_MOD,
    EV_REASSIGN,
    EV_REASSIGN_ISR,
    EV_PREFERRED,
    EV_AUTO_REBALANCE,
    EV_CONTROLLED_SHUTDOWN,
    EV_UNCLEAN_ENABLE,
) = range(7, 17)

# ZooKeeper request ops (first item of a request tuple; responses reuse the op)
(
    Q_REGISTER_BROKER,
    Q_READ_CTL,
    Q_REGISTER_CTL,
    Q_CREATE_CTL,
    Q_READ_EPOCH,
    Q_INC_EPOCH,
    Q_DELETE_CTL,
    Q_READ_CONTEXT,
    Q_READ_PARTS,
    Q_WRITE_PARTS,
    Q_READ_BROKERS,
    Q_READ_ISR_CHANGES,
    Q_DELETE_ISR_CHANGES,
    Q_UPDATE_ISR,
    Q_READ_TOPICS,
    Q_READ_DELETIONS,
    Q_DELETE_DELETIONS,
    Q_DELETE_TOPIC,
    Q_READ_ASSIGN,
    Q_WRITE_ASSIGN,
    Q_READ_REASSIGN,
    Q_WRITE_REASSIGN,
    Q_READ_PREFERRED,
    Q_DELETE_PREFERRED,
) = range(24)
REQUEST_NAMES = (
    "create /brokers/ids/<id> (ephemeral)",
    "getData /controller and /controller_epoch",
    "multi(create /controller, setData /controller_epoch)",
    "create /controller (ephemeral)",
    "getData /controller_epoch",
    "setData /controller_epoch",
    "delete /controller",
    "read context and register controller watches",
    "getData partition states",
    "write partition states",
    "getChildren /brokers/ids",
    "read /isr_change_notification",
    "delete isr change notifications",
    "leader ISR update (setData partition state + isr_change_notification)",
    "getChildren /brokers/topics and the new topics' assignments",
    "getChildren /admin/delete_topics",
    "delete /admin/delete_topics/<t>",
    "delete /brokers/topics/<t> (recursive), /config/topics/<t>, /admin/delete_topics/<t>",
    "getData /brokers/topics/<t>",
    "setData /brokers/topics/<t> (assignment)",
    "getData /admin/reassign_partitions",
    "remove partitions from /admin/reassign_partitions",
    "getData /admin/preferred_replica_election",
    "delete /admin/preferred_replica_election",
)
WRITES = frozenset(
    {
        Q_WRITE_PARTS,
        Q_REGISTER_CTL,
        Q_INC_EPOCH,
        Q_DELETE_CTL,
        Q_DELETE_ISR_CHANGES,
        Q_CREATE_CTL,
        Q_DELETE_DELETIONS,
        Q_DELETE_TOPIC,
        Q_WRITE_ASSIGN,
        Q_WRITE_REASSIGN,
        Q_DELETE_PREFERRED,
    }
)
FENCED_ADMIN_WRITES = frozenset(
    {Q_DELETE_DELETIONS, Q_DELETE_TOPIC, Q_WRITE_ASSIGN, Q_WRITE_REASSIGN, Q_DELETE_PREFERRED}
)
# where the fence (expected /controller_epoch zkVersion) sits in an admin write request; the
# writer's controller epoch follows it
_FENCE_AT = {
    Q_DELETE_DELETIONS: 2,
    Q_DELETE_TOPIC: 2,
    Q_WRITE_ASSIGN: 3,
    Q_WRITE_REASSIGN: 2,
    Q_DELETE_PREFERRED: 1,
}


def admin_write_epoch(req: tuple) -> int:
    """The controller epoch an admin-workflow write was sent with.

    >>> admin_write_epoch((Q_DELETE_PREFERRED, 4, 2))
    2
    """
    return req[_FENCE_AT[req[0]] + 1]


# program ops of the controller interpreter
(
    O_ELECT,
    O_MAYBE_RESIGN,
    O_FAILOVER,
    O_TRIGGER,
    O_BROKER_CHANGE,
    O_ON_STARTUP,
    O_ON_FAILURE,
    O_REMOVE_ISR,
    O_LIVE_REMOVE,
    O_LIVE_ADD,
    O_ISR_CHANGE,
    O_L_ELECT,
    O_L_RESIGN_ELECT,
    O_SEND_UM,
    O_NEW_PARTITIONS,
    O_NEW_REPLICAS_ONLINE,
    O_RESUME_DELETIONS,
    O_DEL_STARTED,
    O_DEL_COMPLETE,
    O_FAIL_DELETION,
    O_REASSIGN,
    O_REASSIGN_DONE,
    O_ELECT_PARTS,
    O_DELETE_PREFERRED,
    O_CS_RESPOND,
    O_RESUME_TOPIC,
    O_ON_TOPIC_DELETION,
    O_STOP,
) = range(28)

# waits (what a parked continuation waits for)
W_ELECT_READ, W_RESIGN_READ, W_REGISTER, W_CONTEXT, W_INIT, W_ELECT_PARTS, W_ELECT_WRITE = range(7)
W_BROKERS, W_ISR_READ, W_RM_READ, W_RM_WRITE, W_L_READ, W_L_CREATE, W_L_EPOCH, W_L_INC = range(7, 15)
W_TOPICS = 15
W_DEL_READ, W_DEL_DONE, W_PMOD, W_REASSIGN_READ, W_REASSIGN_PARTS, W_ASSIGN, W_PREF_READ = range(16, 23)

# election strategies (doElectLeaderForPartitions) and other partition-state writes, as tagged on
# the write request
S_OFFLINE, S_REASSIGN, S_PREFERRED, S_CONTROLLED_SHUTDOWN, S_INIT, S_REMOVE, S_EPOCH = range(7)
_STRATEGY_NAMES = ("offline", "reassign", "preferred", "controlled_shutdown")  #: coverage labels

# State.done bits: an admin workflow completed at least once
D_DELETED, D_ADDED, D_REASSIGNED, D_PREFERRED, D_SHUTDOWN, D_UNCLEAN_DYN, D_AUTO = (1 << i for i in range(7))
# a failover picked up a reassignment in progress / then it completed; a deletion was resumed on
# broker startup / then it completed
D_PICKED_UP, D_RESUMED, D_DEL_RESUME, D_DELETED_AFTER_RESUME = (1 << i for i in range(7, 11))

# controller-to-broker request kinds
M_LEADER_AND_ISR, M_UPDATE_METADATA, M_STOP_REPLICA, M_CS_RESPONSE = 0, 1, 2, 3
MESSAGE_NAMES = ("LeaderAndIsr", "UpdateMetadata", "StopReplica", "ControlledShutdownResponse")

_PS = PartitionState
_RS = ReplicaState
_VALID_P = {
    (a, b): is_valid_transition(StateMachine.PARTITION, a, b) for a in PartitionState for b in PartitionState
}
# the later 2.x replica table: seed 001's startReplicaDeletion moves the replicas of dead brokers
# (OfflineReplica) to ReplicaDeletionIneligible, which the seeds' printed table lacks; only topic
# deletion attempts that edge, so the configurations without deletion see the same table
_VALID_R = {
    (a, b): is_valid_transition(StateMachine.REPLICA, a, b, TableVersion.KAFKA_LATER_2_X)
    for a in ReplicaState
    for b in ReplicaState
}
# coverage labels (``successors_labelled``) of state machine transitions, valid and invalid
_SM_VALID: tuple[dict[Any, bool], dict[Any, bool]] = (_VALID_P, _VALID_R)
_SM_LABEL = {
    (m, a, b): (
        "state_machines" if ok else "invalid_transitions",
        ("partition", "replica")[m],
        f"{a.name}->{b.name}",
    )
    for m, valid in enumerate(_SM_VALID)
    for (a, b), ok in valid.items()
}
_ELECTION_OUTCOME = {
    ElectionOutcome.CLEAN: "isr",
    ElectionOutcome.UNCLEAN: "unclean",
    ElectionOutcome.NONE: "none",
}


#: ``_set(t, i, v) == (*t[:i], v, *t[i + 1 :])`` (explorer.speedups: in C when built)
_set = set_item


# ---------------------------------------------------------------------------------------
# Actions


class ProcessEvent(NamedTuple):
    """The controller of a broker takes the head of its event queue."""

    broker: int
    event: tuple[int, int]

    def __str__(self) -> str:
        k, arg = self.event
        extra = f" (broker {arg})" if k == EV_CTL_CHANGE and arg >= 0 else ""
        return f"broker {self.broker}: controller processes {EVENT_NAMES[k]}{extra}"


class ZkServe(NamedTuple):
    """The ZooKeeper server applies the head request of a session."""

    broker: int
    session: int
    req: tuple

    def __str__(self) -> str:
        return f"ZooKeeper: applies {REQUEST_NAMES[self.req[0]]} from session {self.session} (broker {self.broker})"


class ZkReply(NamedTuple):
    """A broker receives the head ZooKeeper response of its session."""

    broker: int
    resp: tuple

    def __str__(self) -> str:
        return f"broker {self.broker}: receives the response to {REQUEST_NAMES[self.resp[0]]}"


class Deliver(NamedTuple):
    """A broker receives the head request of a controller's channel to it."""

    sender: int
    dest: int
    msg: tuple

    def __str__(self) -> str:
        kind = MESSAGE_NAMES[self.msg[0]]
        if self.msg[0] == M_STOP_REPLICA:
            kind += "(delete=true)" if self.msg[3][1] else "(delete=false)"
        return (
            f"broker {self.dest}: receives {kind} from controller {self.sender} "
            f"(controller epoch {self.msg[1]}, broker epoch {self.msg[2]})"
        )


class Crash(NamedTuple):
    """A broker process dies (its ZooKeeper session lives on until it expires)."""

    broker: int

    def __str__(self) -> str:
        return f"broker {self.broker}: crashes"


class Restart(NamedTuple):
    """A crashed broker starts with a new ZooKeeper session and registers."""

    broker: int
    session: int

    def __str__(self) -> str:
        return f"broker {self.broker}: restarts with ZooKeeper session {self.session}"


class SessionExpire(NamedTuple):
    """The ZooKeeper server expires a session (ephemerals deleted, watches fired)."""

    broker: int
    session: int

    def __str__(self) -> str:
        return f"broker {self.broker}: ZooKeeper session {self.session} expires (server side)"


class SessionNotice(NamedTuple):
    """A broker's ZooKeeper client notices its session expired and opens a new one."""

    broker: int
    session: int

    def __str__(self) -> str:
        return f"broker {self.broker}: notices its session expired, opens ZooKeeper session {self.session}"


class Produce(NamedTuple):
    """The producer appends a record (acks=all) at the broker that believes it leads."""

    broker: int
    partition: int

    def __str__(self) -> str:
        return f"producer: appends a record to partition {self.partition} at leader {self.broker}"


class Fetch(NamedTuple):
    """A follower fetches from the leader it knows."""

    broker: int
    partition: int
    leader: int

    def __str__(self) -> str:
        return f"broker {self.broker}: fetches partition {self.partition} from leader {self.leader}"


class ShrinkIsr(NamedTuple):
    """A leader removes a lagging, dead or stopped follower from the ISR (a ZooKeeper write)."""

    broker: int
    partition: int
    follower: int

    def __str__(self) -> str:
        return (
            f"broker {self.broker}: shrinks the ISR of partition {self.partition}, removing {self.follower}"
        )


class AdminCreateTopic(NamedTuple):
    """An admin client creates ``/brokers/topics/<t>`` with its assignment (one ZooKeeper write)."""

    topic: int

    def __str__(self) -> str:
        return f"admin: creates topic {self.topic} (/brokers/topics/{self.topic} with its assignment)"


class TimePasses(NamedTuple):
    """Stuttering (``liveness`` only): time passes and nothing else happens, so that a
    behaviour stuck in a state is a lasso rather than an end."""

    def __str__(self) -> str:
        return "time passes"


class AdminDeleteTopic(NamedTuple):
    """An admin queues a topic for deletion: create ``/admin/delete_topics/<t>``."""

    topic: int

    def __str__(self) -> str:
        return f"admin: queues topic {self.topic} for deletion (create /admin/delete_topics/{self.topic})"


class AdminAddPartitions(NamedTuple):
    """An admin adds partitions to a topic: setData ``/brokers/topics/<t>`` with the new assignment."""

    topic: int

    def __str__(self) -> str:
        return f"admin: adds partitions to topic {self.topic} (setData /brokers/topics/{self.topic})"


class AdminReassign(NamedTuple):
    """An admin starts a reassignment: ``/admin/reassign_partitions`` gets ``{partition: RAR}``."""

    partition: int
    target: tuple[int, ...]

    def __str__(self) -> str:
        return (
            f"admin: reassigns partition {self.partition} to {list(self.target)} (/admin/reassign_partitions)"
        )


class AdminPreferredElection(NamedTuple):
    """An admin asks for a preferred replica election of every partition."""

    partitions: tuple[int, ...]

    def __str__(self) -> str:
        return f"admin: creates /admin/preferred_replica_election for partitions {list(self.partitions)}"


class AdminEnableUnclean(NamedTuple):
    """An admin sets ``unclean.leader.election.enable=true`` on a topic (dynamic config)."""

    topic: int

    def __str__(self) -> str:
        return f"admin: enables unclean.leader.election.enable for topic {self.topic} (/config/topics)"


class AutoRebalanceTick(NamedTuple):
    """The active controller's scheduler fires the auto leader rebalance task."""

    broker: int

    def __str__(self) -> str:
        return f"broker {self.broker}: scheduler queues AutoPreferredReplicaLeaderElection"


class ControlledShutdown(NamedTuple):
    """A broker begins shutting down: it sends ControlledShutdownRequest to the controller."""

    broker: int
    controller: int

    def __str__(self) -> str:
        return f"broker {self.broker}: sends ControlledShutdownRequest to controller {self.controller}"


class ShutdownComplete(NamedTuple):
    """A broker whose controlled shutdown was answered stops (its ZooKeeper session is closed)."""

    broker: int
    session: int

    def __str__(self) -> str:
        return f"broker {self.broker}: stops after its controlled shutdown (closes ZooKeeper session {self.session})"


ADMIN_KINDS = (
    "AdminDeleteTopic",
    "AdminAddPartitions",
    "AdminReassign",
    "AdminPreferredElection",
    "AdminEnableUnclean",
    "AutoRebalanceTick",
    "ControlledShutdown",
    "ShutdownComplete",
)
FAIR_KINDS = (
    "ProcessEvent",
    "ZkServe",
    "ZkReply",
    "Deliver",
    "SessionNotice",
    "SessionExpire",
    "Restart",
    "Fetch",
    "ShutdownComplete",
)
"""The healing action kinds, weakly fair in the liveness properties: deliveries, event
processing, ZooKeeper serving and replies, noticing an expiry, the session timeout of a dead
broker (``SessionExpire``; of a live broker it is a budgeted fault, which the liveness
configurations set to 0), restarts (enabled only while budgeted), follower fetches and the stop
of a broker whose controlled shutdown was answered or failed. Crashes, admin requests, produce,
ISR shrink, the rebalance timer, controlled shutdown requests and ``TimePasses`` are not fair."""


ACTION_KINDS = (
    "ProcessEvent",
    "ZkServe",
    "ZkReply",
    "Deliver",
    "Crash",
    "Restart",
    "SessionExpire",
    "SessionNotice",
    "Produce",
    "Fetch",
    "ShrinkIsr",
)
FAULT_KINDS = (
    TimePasses,
    Crash,
    Restart,
    SessionExpire,
    SessionNotice,
    Produce,
    ShrinkIsr,
    AdminCreateTopic,
    AdminDeleteTopic,
    AdminAddPartitions,
    AdminReassign,
    AdminPreferredElection,
    AdminEnableUnclean,
    AutoRebalanceTick,
    ControlledShutdown,
    ShutdownComplete,
)


# ---------------------------------------------------------------------------------------
# The controller interpreter: one broker's controller, on a mutable working copy


class _W:
    """Mutable working copy of one broker during a step (the controller's view)."""

    __slots__ = (
        "active_id",
        "chans",
        "ctx",
        "done",
        "events",
        "history",
        "invalid",
        "labels",
        "me",
        "n",
        "out_changed",
        "pending",
        "sys",
        "watch",
        "zk_out",
    )

    def __init__(self, sys: ControllerSystem, s: State, me: int, n: Node) -> None:
        self.sys = sys
        self.me = me
        self.n = n
        self.zk_out = n.zk_out
        self.active_id = n.active_id
        # None unless this broker is the active controller; the handlers read it only then
        self.ctx: Ctx = n.ctx  # type: ignore[assignment]
        self.events = n.events
        self.pending = n.pending
        self.watch = n.watch
        self.chans = s.chans
        self.invalid = s.invalid
        self.history = s.history
        self.done = s.done
        self.labels: list[tuple[str, str, str]] = []  # coverage labels of this step

    # -- helpers -------------------------------------------------------------------------
    def send_zk(self, req: tuple) -> None:
        self.zk_out = (*self.zk_out, req)

    def park(self, wait: int, data: Any, batch: tuple, rest: tuple) -> None:
        self.pending = (wait, data, batch, rest)

    def record_invalid(self, machine: int, p: int, a: int, b: int) -> None:
        self.labels.append(_SM_LABEL[(machine, a, b)])
        if not self.invalid:
            self.invalid = (machine, p, int(a), int(b))

    def fence(self) -> int:
        if self.sys.cfg.zk_write_fencing is ZkWriteFencing.CONTROLLER_EPOCH:
            return self.ctx.epoch_version
        return -1

    def send_msg(self, dest: int, msg: tuple) -> None:
        i = self.me * self.sys.nb + dest
        q = self.chans[i]
        if msg[0] == M_UPDATE_METADATA:
            for m in q:
                if m[1] == msg[1] and m[2] == msg[2]:
                    return  # an earlier request with the same epochs already does all it would
        self.chans = _set(self.chans, i, (*q, msg))

    def live_brokers(self) -> tuple[int, ...]:
        """``liveBrokerIds``: live brokers that are not shutting down."""
        ctx = self.ctx
        if ctx.shutting and self.sys.cfg.mutant != "cs-elects-shutting-down":
            return tuple(b for b, e in enumerate(ctx.live) if e and b not in ctx.shutting)
        return tuple(b for b, e in enumerate(ctx.live) if e)

    def entry(self, p: int, z: PartZ) -> tuple:
        """One partition's LeaderAndIsr entry (with the assignment when admin workflows are on)."""
        if self.sys.admin:
            return (p, z.leader, z.leader_epoch, z.isr, z.version, self.ctx.ar[p])
        return (p, z.leader, z.leader_epoch, z.isr, z.version)

    def queued(self, p: int) -> bool:
        """``isTopicQueuedUpForDeletion(p.topic)``."""
        return (p // self.sys.ppt) in self.ctx.deleting

    def send_um_all(self) -> None:
        if not self.sys.cfg.send_update_metadata:
            return
        ctx = self.ctx
        for b, e in enumerate(ctx.live):
            if e:
                self.send_msg(b, (M_UPDATE_METADATA, ctx.epoch, e, ()))

    def flush(self, batch: tuple) -> None:
        """``sendRequestsToBrokers``: one LeaderAndIsr per broker, then UpdateMetadata."""
        if not batch:
            return
        ctx = self.ctx
        dests: dict[int, list] = {}
        for dest, entry in batch:
            dests.setdefault(dest, []).append(entry)
        for dest in sorted(dests):
            e = ctx.live[dest]
            if e:
                self.send_msg(dest, (M_LEADER_AND_ISR, ctx.epoch, e, tuple(dests[dest])))
        self.send_um_all()

    def set_pstate(self, p: int, target: PartitionState) -> bool:
        ctx = self.ctx
        cur = ctx.pstates[p]
        if not _VALID_P[(cur, target)]:
            self.record_invalid(0, p, cur, target)
            return False
        self.ctx = ctx._replace(pstates=_set(ctx.pstates, p, target))
        self.labels.append(_SM_LABEL[(0, cur, target)])
        return True

    def set_rstate(self, p: int, r: int, target: ReplicaState) -> bool:
        ctx = self.ctx
        i = self.sys.rindex[p][r]
        row = ctx.rstates[p]
        cur = row[i]
        if not _VALID_R[(cur, target)]:
            self.record_invalid(1, p, cur, target)
            return False
        self.ctx = ctx._replace(rstates=_set(ctx.rstates, p, _set(row, i, target)))
        self.labels.append(_SM_LABEL[(1, cur, target)])
        return True

    def record_election(self, strategy: str, outcome: str) -> None:
        """Coverage: an election of ``strategy`` ended with ``outcome`` (isr, unclean, none)."""
        self.labels.append(("elections", strategy, outcome))

    def resign(self) -> None:
        """``onControllerResignation``: unregister handlers, shut the channels, reset the context."""
        self.watch = False
        self.ctx = None  # type: ignore[assignment]  # resigned: no context
        nb = self.sys.nb
        base = self.me * nb
        chans = self.chans
        for d in range(nb):
            if chans[base + d]:
                chans = _set(chans, base + d, ())
        self.chans = chans

    def enqueue(self, ev: tuple[int, int]) -> None:
        if ev not in self.events:
            self.events = (*self.events, ev)

    # -- the interpreter -----------------------------------------------------------------
    def run(self, prog: tuple, batch: tuple = ()) -> None:
        """Run program ops until one parks for a ZooKeeper response or none is left."""
        me = self.me
        while prog:
            op = prog[0]
            prog = prog[1:]
            code = op[0]
            if code in (O_ELECT, O_MAYBE_RESIGN):
                self.send_zk((Q_READ_CTL,))
                self.park(W_ELECT_READ if code == O_ELECT else W_RESIGN_READ, None, (), prog)
                return
            if code == O_L_ELECT:
                self.send_zk((Q_READ_CTL,))
                self.park(W_L_READ, None, (), prog)
                return
            if code == O_L_RESIGN_ELECT:
                if self.active_id == me:
                    self.resign()
                prog = ((O_L_ELECT,), *prog)
                continue
            if code == O_FAILOVER:
                self.send_zk((Q_READ_CONTEXT,))
                self.park(W_CONTEXT, None, (), prog)
                return
            if self.ctx is None:
                # the remaining ops need a context (the controller resigned meanwhile)
                continue
            if code == O_TRIGGER:
                if self.trigger_start(prog, batch, op[1] if len(op) > 1 else -1):
                    return
                batch = ()
            elif code == O_ELECT_PARTS:
                if self.trigger_elect(op[2], batch, prog, op[1]):
                    return
                batch = ()
            elif code == O_BROKER_CHANGE:
                self.send_zk((Q_READ_BROKERS,))
                self.park(W_BROKERS, None, (), prog)
                return
            elif code == O_ON_STARTUP:
                prog = self.on_broker_startup(op[1]) + prog
            elif code == O_ON_FAILURE:
                prog = self.on_broker_failure(op[1]) + prog
            elif code == O_REMOVE_ISR:
                if self.remove_isr_start(op[1], prog, op[2] if len(op) > 2 else None):
                    return
            elif code == O_LIVE_REMOVE:
                live = self.ctx.live
                for b in op[1]:
                    live = _set(live, b, 0)
                self.ctx = self.ctx._replace(live=live)
            elif code == O_LIVE_ADD:
                live = self.ctx.live
                for b, e in op[1]:
                    live = _set(live, b, e)
                self.ctx = self.ctx._replace(live=live)
            elif code == O_ISR_CHANGE:
                self.send_zk((Q_READ_ISR_CHANGES,))
                self.park(W_ISR_READ, None, (), prog)
                return
            elif code == O_SEND_UM:
                self.send_um_all()
            elif code == O_NEW_PARTITIONS:
                if self.new_partitions_start(op[1], prog):
                    return
            elif code == O_NEW_REPLICAS_ONLINE:
                self.new_replicas_online(op[1])
            elif code == O_RESUME_DELETIONS:
                prog = self.resume_deletions() + prog
            elif code == O_RESUME_TOPIC:
                # resumeDeletionForTopics
                topics = op[1]
                self.ctx = self.ctx._replace(
                    ineligible=tuple(t for t in self.ctx.ineligible if t not in topics)
                )
                prog = self.resume_deletions() + prog
            elif code == O_ON_TOPIC_DELETION:
                prog = self.start_replica_deletion(op[1]) + prog
            elif code == O_DEL_STARTED:
                self.replica_deletion_started(op[1])
            elif code == O_DEL_COMPLETE:
                if self.complete_delete_topic(op[1], prog):
                    return
            elif code == O_FAIL_DELETION:
                prog = self.fail_replica_deletion(op[1]) + prog
            elif code == O_REASSIGN:
                if self.reassign_start(op[1], op[2], prog):
                    return
            elif code == O_REASSIGN_DONE:
                if self.reassign_stop_old(op[1], op[2], prog):
                    return
            elif code == O_DELETE_PREFERRED:
                # removePartitionsFromPreferredReplicaElection: delete the znode
                self.send_zk((Q_DELETE_PREFERRED, self.fence(), self.ctx.epoch))
            elif code == O_STOP:
                if op[1] >= 0:
                    self.stop_replicas(op[1], op[2], op[3], False)
                else:
                    # stopOldReplicasOfReassignedPartition: -> Started -> Successful -> NonExistent
                    (p,) = op[2]
                    for b in op[3]:
                        self.set_rstate(p, b, _RS.ReplicaDeletionStarted)
                        self.stop_replicas(b, (p,), True, False)
                        self.set_rstate(p, b, _RS.ReplicaDeletionSuccessful)
                        self.set_rstate(p, b, _RS.NonExistentReplica)
            elif code == O_CS_RESPOND:
                e = self.ctx.live[op[1]]
                if e:
                    self.send_msg(op[1], (M_CS_RESPONSE, self.ctx.epoch, e, ()))
            else:  # pragma: no cover
                raise AssertionError(f"unknown program op {op!r}")
        self.pending = None

    # -- events --------------------------------------------------------------------------
    def process_event(self, ev: tuple[int, int]) -> None:
        kind, arg = ev
        legacy = self.sys.cfg.elector is Elector.LEGACY
        if kind == EV_STARTUP:
            self.run(((O_L_ELECT,),) if legacy else ((O_ELECT,),))
        elif kind == EV_REELECT:
            self.run(((O_L_RESIGN_ELECT,),) if legacy else ((O_ELECT,),))
        elif kind == EV_CTL_CHANGE:
            if legacy:
                # 0.8 LeaderChangeListener.handleDataChange: leaderId = new data (no resignation)
                self.active_id = arg
            else:
                self.run(((O_MAYBE_RESIGN,),))
        elif kind == EV_BROKER_CHANGE:
            if self.ctx is not None:
                self.run(((O_BROKER_CHANGE,),))
        elif kind == EV_ISR_CHANGE:
            if self.ctx is not None:
                self.run(((O_ISR_CHANGE,),))
        elif kind == EV_TOPIC_CHANGE:
            # TopicChange: getChildren /brokers/topics (re-arming the watch) and the new topics'
            # assignments; then onNewTopicCreation for the topics the context does not know
            if self.ctx is not None:
                self.send_zk((Q_READ_TOPICS,))
                self.park(W_TOPICS, None, (), ())
        elif kind >= EV_DELETE_TOPICS:
            if self.ctx is not None:
                self.admin_event(kind, arg)
        elif kind == EV_EXPIRE and not legacy:
            # 2.x Expire: activeControllerId = -1, onControllerResignation if it was active; then
            # RegisterBrokerAndReelect (the registration's response queues the election)
            if self.ctx is not None or self.active_id == self.me:
                self.resign()
            self.active_id = -1
            self.send_zk((Q_REGISTER_BROKER, True))
        elif kind == EV_EXPIRE:
            # 0.8 SessionExpirationListener.handleNewSession: onControllerResignation(); elect
            if self.ctx is not None or self.active_id == self.me:
                self.resign()
            self.active_id = -1
            self.run(((O_L_ELECT,),))

    # -- responses -----------------------------------------------------------------------
    def resume(self, resp: tuple) -> None:
        assert self.pending is not None  # a response resumes a parked continuation
        wait, data, batch, rest = self.pending
        self.pending = None
        me = self.me
        op = resp[0]
        if wait in (W_ELECT_READ, W_RESIGN_READ):
            _, ctl, epoch, version = resp
            was = self.active_id == me
            self.active_id = ctl
            if was and ctl != me:
                self.resign()
            if wait == W_ELECT_READ and ctl == -1:
                self.send_zk((Q_REGISTER_CTL, epoch, version))
                self.park(W_REGISTER, None, (), rest)
                return
            self.run(rest)
        elif wait == W_REGISTER:
            ok, epoch, version = resp[1], resp[2], resp[3]
            if ok:
                self.active_id = me
                if self.sys.cfg.mutant == "failover-keeps-old-epoch":
                    epoch, version = epoch - 1, version - 1
                self.ctx = self.sys.empty_ctx(epoch, version)
                self.run(((O_FAILOVER,), *rest))
            else:
                # NodeExists / BadVersion -> ControllerMovedException -> maybeResign
                self.run(((O_MAYBE_RESIGN,), *rest))
        elif wait == W_CONTEXT:
            self.failover_context(
                resp[1], resp[2], rest, resp[3] if len(resp) > 3 else -1, resp[4] if len(resp) > 4 else None
            )
        elif wait == W_INIT:
            self.trigger_init_done(resp, data, batch, rest)
        elif wait == W_ELECT_PARTS:
            self.trigger_elect_read(resp, data, batch, rest)
        elif wait == W_ELECT_WRITE:
            self.trigger_elect_written(resp, data, batch, rest)
        elif wait == W_BROKERS:
            self.broker_change(resp[1], rest)
        elif wait == W_ISR_READ:
            self.isr_change(resp[1], resp[2], rest)
        elif wait == W_RM_READ:
            self.remove_isr_read(resp, data, batch, rest)
        elif wait == W_RM_WRITE:
            self.remove_isr_written(resp, data, batch, rest)
        elif wait == W_TOPICS:
            self.topic_change(resp[1], rest, resp[2] if len(resp) > 2 else ())
        elif wait == W_DEL_READ:
            self.deletions_read(resp[1], rest)
        elif wait == W_DEL_DONE:
            self.delete_topic_done(resp[1], data, rest)
        elif wait == W_PMOD:
            self.partition_modifications(data, resp[2], rest)
        elif wait == W_REASSIGN_READ:
            self.reassign_read(resp[1], rest)
        elif wait == W_REASSIGN_PARTS:
            self.reassign_parts(resp, data, rest)
        elif wait == W_ASSIGN:
            self.assign_written(resp[1], data, rest)
        elif wait == W_PREF_READ:
            self.preferred_read(resp[1], rest)
        elif wait == W_L_READ:
            ctl = resp[1]
            self.active_id = ctl
            if ctl != -1:
                self.run(rest)
                return
            self.send_zk((Q_CREATE_CTL,))
            self.park(W_L_CREATE, None, (), rest)
        elif wait == W_L_CREATE:
            if resp[1]:
                self.active_id = me
                # 0.8 onControllerFailover: readControllerEpochFromZookeeper; incrementControllerEpoch
                self.send_zk((Q_READ_EPOCH,))
                self.park(W_L_EPOCH, None, (), rest)
            else:
                self.active_id = resp[2]
                self.run(rest)
        elif wait == W_L_EPOCH:
            self.send_zk((Q_INC_EPOCH, resp[1], resp[2]))
            self.park(W_L_INC, None, (), rest)
        elif wait == W_L_INC:
            if resp[1]:
                self.ctx = self.sys.empty_ctx(resp[2], resp[3])
                self.run(((O_FAILOVER,), *rest))
            else:
                # ControllerMovedException inside elect -> resign(): leaderId = -1; deletePath
                self.active_id = -1
                self.send_zk((Q_DELETE_CTL,))
                self.run(rest)
        else:  # pragma: no cover
            raise AssertionError(f"unknown wait {wait} for response {op}")

    # -- onControllerFailover --------------------------------------------------------------
    def failover_context(
        self, live: tuple[int, ...], parts: tuple, rest: tuple, ntopics: int = -1, admin: tuple | None = None
    ) -> None:
        """``onControllerFailover`` after the context read; ``ntopics`` (``topics_created_later``
        only): the topics ``/brokers/topics`` holds (a prefix of the configured topics);
        ``admin`` (admin workflows only): which partitions exist, their assignments,
        ``/admin/delete_topics``, ``/admin/reassign_partitions`` and
        ``/admin/preferred_replica_election``."""
        sys = self.sys
        cfg = sys.cfg
        ctx = self.ctx
        if ctx is None:  # resigned while reading
            self.run(rest)
            return
        legacy = cfg.elector is Elector.LEGACY
        mutant = cfg.mutant
        rstates = []
        pstates = []
        known = sys.np if ntopics < 0 else ntopics * sys.ppt
        present: tuple = ()
        ar = sys.replicas
        if admin is not None:
            present, ar = admin[0], admin[1]
        for p, reps in enumerate(sys.slots):
            if (p >= known) if admin is None else not present[p]:
                # topic not (yet) in /brokers/topics: not in the context
                rstates.append((_RS.NonExistentReplica,) * len(reps))
                pstates.append(_PS.NonExistentPartition)
                continue
            if mutant == "skip-replica-init":
                rstates.append(tuple(_RS.NonExistentReplica for _ in reps))
            else:
                rstates.append(
                    tuple(
                        initial_replica_state(live[r] != 0) if r in ar[p] else _RS.NonExistentReplica
                        for r in reps
                    )
                )
            z = parts[p]
            if z is None:
                pstates.append(initial_partition_state(NO_LEADER, False, False))
            else:
                lv = z.leader != NO_LEADER and live[z.leader] != 0
                pstates.append(initial_partition_state(z.leader, lv, True))
        self.ctx = ctx._replace(live=live, leaders=parts, pstates=tuple(pstates), rstates=tuple(rstates))
        admin_prog: tuple = ()
        if admin is not None:
            admin_prog = self.failover_admin(admin)
        if not legacy:
            # 2.x: UpdateMetadata to live brokers before the state machines start
            self.send_um_all()
        # replicaStateMachine.startup(): every live replica -> OnlineReplica
        batch = self.replicas_online([b for b, e in enumerate(live) if e])
        self.flush(batch)
        # partitionStateMachine.startup(): triggerOnlinePartitionStateChange
        prog = ((O_TRIGGER,), *(((O_SEND_UM,),) if legacy else ()), *admin_prog, *rest)
        self.run(prog)

    def failover_admin(self, admin: tuple) -> tuple:
        """``onControllerFailover``'s admin steps: ``initializePartitionReassignment``,
        ``fetchTopicDeletionsInProgress`` + ``topicDeletionManager.init`` (before the state
        machines start); returns the steps after startup: ``maybeTriggerPartitionReassignment``,
        ``tryTopicDeletion``, ``fetchPendingPreferredReplicaElections`` + election."""
        sys = self.sys
        cfg = sys.cfg
        ctx = self.ctx
        present, ar, deletions, reassign, preferred = admin
        ppt = sys.ppt
        known = {t for t in range(cfg.topics) if present[t * ppt]}
        reassigning = tuple((p, rar) for p, rar in reassign if present[p])
        prog: list = []
        deleting: tuple[int, ...] = ()
        ineligible: tuple[int, ...] = ()
        unknown = tuple(t for t in deletions if t not in known)
        if cfg.delete_topic_enable:
            deleting = tuple(t for t in deletions if t in known)
            ineligible = tuple(
                t
                for t in deleting
                if any(p // ppt == t for p, _ in reassigning)
                or any(not ctx.live[r] for p in range(t * ppt, (t + 1) * ppt) for r in ar[p])
            )
        else:
            unknown = deletions
        if unknown:
            self.send_zk((Q_DELETE_DELETIONS, unknown, self.fence(), ctx.epoch))
        self.ctx = ctx._replace(ar=ar, deleting=deleting, ineligible=ineligible, reassigning=reassigning)
        for p, _ in reassigning:
            prog.append((O_REASSIGN, p, 0))
            self.done |= D_PICKED_UP
        if deleting:
            prog.append((O_RESUME_DELETIONS,))
        if preferred:
            pending = self.pending_preferred(preferred)
            if pending:
                prog.append((O_ELECT_PARTS, S_PREFERRED, pending))
            prog.append((O_DELETE_PREFERRED,))
        return tuple(prog)

    def pending_preferred(self, parts: tuple[int, ...]) -> tuple[int, ...]:
        """``fetchPendingPreferredReplicaElections`` (seed 002): drop partitions whose topic is
        gone or whose leader already is the preferred replica, and those queued for deletion."""
        ctx = self.ctx
        out = []
        for p in parts:
            if ctx.pstates[p] == _PS.NonExistentPartition:
                continue  # topicDeleted
            z = ctx.leaders[p]
            if z is not None and z.leader == ctx.ar[p][0]:
                continue  # successful
            if self.queued(p):
                continue
            out.append(p)
        return tuple(out)

    def replicas_online(self, brokers: list[int] | tuple[int, ...]) -> tuple:
        """``replicaStateMachine.handleStateChanges(replicas on brokers, OnlineReplica)``."""
        batch: list = []
        sys = self.sys
        later = sys.maybe_absent
        admin = sys.admin
        for b in brokers:
            for p in sys.parts_of[b]:
                if later and self.ctx.pstates[p] == _PS.NonExistentPartition:
                    continue  # a topic not created yet: not in replicasOnBrokers
                if admin and b not in self.ctx.ar[p]:
                    continue  # a slot of a reassignment target not (or no longer) assigned
                i = sys.rindex[p][b]
                cur = self.ctx.rstates[p][i]
                if (
                    self.ctx.deleting
                    and not _VALID_R[(cur, _RS.OnlineReplica)]
                    and self.queued(p)
                    and not sys.cfg.strict_deletion_transitions
                ):
                    continue  # Kafka logs the invalid transition and skips the replica
                if not self.set_rstate(p, b, _RS.OnlineReplica):
                    continue
                if cur != _RS.NewReplica:
                    z = self.ctx.leaders[p]
                    if z is not None:
                        batch.append((b, self.entry(p, z)))
        return tuple(batch)

    # -- triggerOnlinePartitionStateChange ---------------------------------------------------
    def trigger_start(self, rest: tuple, batch: tuple, topic: int = -1) -> bool:
        """``triggerOnlinePartitionStateChange`` (of one topic when ``topic`` >= 0): New and
        Offline partitions of topics not queued for deletion go to OnlinePartition."""
        ctx = self.ctx
        new_parts: list[int] = []
        elect: list[int] = []
        deleting = ctx.deleting
        ppt = self.sys.ppt
        for p, st in enumerate(ctx.pstates):
            if st == _PS.NewPartition or st == _PS.OfflinePartition:
                if deleting and (p // ppt) in deleting:
                    continue  # no leader election for partitions of topics queued for deletion
                if topic >= 0 and p // ppt != topic:
                    continue
                if not _VALID_P[(st, _PS.OnlinePartition)]:  # pragma: no cover - valid by table
                    self.record_invalid(0, p, st, _PS.OnlinePartition)
                    continue
                (new_parts if st == _PS.NewPartition else elect).append(p)
        return self.trigger_init(tuple(new_parts), tuple(elect), batch, rest)

    def trigger_init(self, new_parts: tuple, elect: tuple, batch: tuple, rest: tuple) -> bool:
        live = self.live_brokers()
        writes = []
        for p in new_parts:
            lai = initialize_leader_and_isr(self.ctx.ar[p], live)
            self.record_election("new_partition", "none" if lai is None else "isr")
            if lai is not None:
                writes.append((p, PartZ(lai.leader, lai.leader_epoch, lai.isr, self.ctx.epoch, -1)))
        if writes:
            self.send_zk((Q_WRITE_PARTS, tuple(writes), self.fence(), self.ctx.epoch, True, S_INIT))
            self.park(W_INIT, elect, batch, rest)
            return True
        return self.trigger_elect(elect, batch, rest)

    def trigger_init_done(self, resp: tuple, elect: tuple, batch: tuple, rest: tuple) -> None:
        if self.ctx is None:
            self.run(rest)
            return
        _, ok, results = resp
        if not ok:
            self.controller_moved(rest)
            return
        batch_l = list(batch)
        for p, z in results:
            if z is None:
                continue
            self.ctx = self.ctx._replace(leaders=_set(self.ctx.leaders, p, z))
            self.set_pstate(p, _PS.OnlinePartition)
            if p in self.sys.added:
                self.done |= D_ADDED
            for r in z.isr:
                batch_l.append((r, self.entry(p, z)))
        if not self.trigger_elect(elect, tuple(batch_l), rest):
            self.run(rest)

    def trigger_elect(self, elect: tuple, batch: tuple, rest: tuple, strategy: int = S_OFFLINE) -> bool:
        """``doElectLeaderForPartitions``: read the partition states, elect, write, retry."""
        if elect:
            self.send_zk((Q_READ_PARTS, elect))
            self.park(W_ELECT_PARTS, (strategy, elect), batch, rest)
            return True
        self.flush(batch)
        return False

    def elect_one(self, strategy: int, p: int, cur: LeaderAndIsr, live: tuple[int, ...], dyn: tuple) -> Any:
        """The election of one partition with ``strategy`` (seed 002's four strategies)."""
        sys = self.sys
        cfg = sys.cfg
        ctx = self.ctx
        ar = ctx.ar[p]
        if strategy == S_OFFLINE:
            unclean = cfg.unclean(p) or (p // sys.ppt) in dyn
            return offline_partition_leader_election_strategy(ar, cur, live, False, unclean)
        if strategy == S_REASSIGN:
            return leader_for_reassign(ar, cur, live)
        if strategy == S_PREFERRED:
            if cfg.mutant == "preferred-any-isr-replica":
                return offline_partition_leader_election_strategy(ar, cur, live, False, False)
            return leader_for_preferred_replica(ar, cur, live)
        if strategy == S_EPOCH:
            # updateLeaderEpoch: same leader and ISR, leader epoch + 1
            return ElectionResult(new_leader_and_isr(cur, cur.leader, cur.isr), ar, ElectionOutcome.CLEAN)
        # S_CONTROLLED_SHUTDOWN: liveOrShuttingDownBrokerIds
        shutting = ctx.shutting if cfg.mutant != "cs-elects-shutting-down" else ()
        live_or_shutting = tuple(b for b, e in enumerate(ctx.live) if e)
        return leader_for_controlled_shutdown(ar, cur, live_or_shutting, shutting)

    def trigger_elect_read(self, resp: tuple, data: tuple, batch: tuple, rest: tuple) -> None:
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        strategy = data[0]
        cfg = self.sys.cfg
        live = self.live_brokers()
        dyn = resp[2] if len(resp) > 2 else ()
        writes = []
        for p, z in resp[1]:
            if z is None or z.ctl_epoch > ctx.epoch:
                continue  # failed election (no state / written by a newer controller)
            cur = LeaderAndIsr(z.leader, z.leader_epoch, z.isr, z.version)
            res = self.elect_one(strategy, p, cur, live, dyn)
            lai = res.leader_and_isr
            if strategy != S_EPOCH:
                self.record_election(_STRATEGY_NAMES[strategy], _ELECTION_OUTCOME[res.outcome])
            if lai is None:
                continue
            epoch = lai.leader_epoch
            if cfg.mutant == "no-leader-epoch-bump":
                epoch = z.leader_epoch
            new = PartZ(lai.leader, epoch, lai.isr, ctx.epoch, z.version)
            # 0: clean; 1: unclean by the static topic config; 2: by a dynamically enabled one
            u = 0
            if res.outcome == ElectionOutcome.UNCLEAN:
                u = 1 if cfg.unclean(p) else 2
            writes.append((p, new, res.live_replicas, u))
        if not writes:
            self.flush(batch)
            self.run(rest)
            return
        self.send_zk(
            (Q_WRITE_PARTS, tuple((p, z) for p, z, _, _ in writes), self.fence(), ctx.epoch, False, strategy)
        )
        self.park(W_ELECT_WRITE, (strategy, tuple((p, rec, u) for p, _, rec, u in writes)), batch, rest)

    def trigger_elect_written(self, resp: tuple, data: tuple, batch: tuple, rest: tuple) -> None:
        if self.ctx is None:
            self.run(rest)
            return
        _, ok, results = resp
        if not ok:
            self.controller_moved(rest)
            return
        strategy, items = data
        batch_l = list(batch)
        retry = []
        for (p, z), (_, recipients, unclean) in zip(results, items):
            if z is None:
                retry.append(p)  # BadVersion: updatesToRetry
                continue
            self.ctx = self.ctx._replace(leaders=_set(self.ctx.leaders, p, z))
            if strategy != S_EPOCH:
                self.set_pstate(p, _PS.OnlinePartition)
            if unclean:
                self.history |= 1
                if unclean == 2:
                    self.done |= D_UNCLEAN_DYN
            if strategy == S_PREFERRED:
                self.done |= D_PREFERRED
            for r in recipients:
                batch_l.append((r, self.entry(p, z)))
        if retry:
            self.trigger_elect(tuple(retry), tuple(batch_l), rest, strategy)
            return
        self.flush(tuple(batch_l))
        self.run(rest)

    def controller_moved(self, rest: tuple) -> None:
        """``ControllerMovedException`` (BadVersion on /controller_epoch): abort, maybeResign."""
        del rest
        if self.sys.cfg.elector is Elector.LEGACY:
            self.run(())
        else:
            self.run(((O_MAYBE_RESIGN,),))

    # -- BrokerChange ------------------------------------------------------------------------
    def broker_change(self, cur: tuple[int, ...], rest: tuple) -> None:
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        live = ctx.live
        new = tuple(b for b in range(self.sys.nb) if cur[b] and not live[b])
        dead = tuple(b for b in range(self.sys.nb) if live[b] and not cur[b])
        if self.sys.cfg.broker_epoch:
            bounced = tuple(b for b in range(self.sys.nb) if live[b] and cur[b] and cur[b] > live[b])
        else:
            bounced = ()
        nl = live
        for b in new:
            nl = _set(nl, b, cur[b])
        for b in dead:
            nl = _set(nl, b, 0)
        self.ctx = ctx._replace(live=nl)
        if self.sys.admin:
            # controllerChannelManager.removeBroker for dead and bounced brokers: the queued
            # requests to the old incarnation are dropped (admin configurations only: before
            # StopReplica callbacks, the broker epoch check rejected them with the same effect)
            base = self.me * self.sys.nb
            for b in (*dead, *bounced):
                if self.chans[base + b]:
                    self.chans = _set(self.chans, base + b, ())
        prog: tuple = ()
        if new:
            prog += ((O_ON_STARTUP, new),)
        if bounced:
            prog += (
                (O_LIVE_REMOVE, bounced),
                (O_ON_FAILURE, bounced),
                (O_LIVE_ADD, tuple((b, cur[b]) for b in bounced)),
                (O_ON_STARTUP, bounced),
            )
        if dead:
            prog += ((O_ON_FAILURE, dead),)
        self.run(prog + rest)

    def on_broker_startup(self, brokers: tuple[int, ...]) -> tuple:
        """``onBrokerStartup``: UpdateMetadata to all, replicas -> Online, trigger elections."""
        self.send_um_all()
        self.flush(self.replicas_online(brokers))
        cfg = self.sys.cfg
        prog: tuple = ((O_TRIGGER,),)
        ctx = self.ctx
        if ctx.reassigning:
            # restart the reassignments with new replicas on the new brokers
            prog += tuple((O_REASSIGN, p, 1) for p, rar in ctx.reassigning if any(b in rar for b in brokers))
        if ctx.deleting and cfg.mutant != "no-deletion-retry-on-startup":
            sys = self.sys
            topics = tuple(
                sorted(
                    {
                        p // sys.ppt
                        for b in brokers
                        for p in sys.parts_of[b]
                        if self.queued(p) and b in ctx.ar[p]
                    }
                )
            )
            if topics:
                prog += ((O_RESUME_TOPIC, topics),)
                self.done |= D_DEL_RESUME
        return prog

    def on_broker_failure(self, brokers: tuple[int, ...]) -> tuple:
        """``onBrokerFailure`` / ``onReplicasBecomeOffline``."""
        ctx = self.ctx
        if ctx.shutting:
            self.ctx = ctx = ctx._replace(shutting=tuple(b for b in ctx.shutting if b not in brokers))
        without_leader = []
        for p, z in enumerate(ctx.leaders):
            if z is not None and (z.leader == NO_LEADER or not ctx.live[z.leader]):
                if ctx.deleting and self.queued(p):
                    continue
                without_leader.append(p)
        for p in without_leader:
            self.set_pstate(p, _PS.OfflinePartition)
            self.history |= 2 << p
        prog: tuple = ((O_TRIGGER,),) if self.sys.cfg.mutant != "no-election-on-broker-failure" else ()
        if ctx.deleting:
            sys = self.sys
            for b in brokers:
                mine = [
                    p
                    for p in sys.parts_of[b]
                    if b in ctx.ar[p] and ctx.pstates[p] != _PS.NonExistentPartition
                ]
                keep = tuple(p for p in mine if not self.queued(p))
                dele = tuple(p for p in mine if self.queued(p))
                prog += ((O_REMOVE_ISR, b, keep),)
                if dele:
                    prog += ((O_FAIL_DELETION, ((b, dele),)),)
        else:
            prog += tuple((O_REMOVE_ISR, b) for b in brokers)
        if not without_leader:
            prog += ((O_SEND_UM,),)
        return prog

    # -- replica -> OfflineReplica: doRemoveReplicasFromIsr ---------------------------------------
    def remove_isr_start(self, b: int, rest: tuple, only: tuple[int, ...] | None = None) -> bool:
        """Replica ``b`` of its partitions (of ``only``) -> OfflineReplica: ``doRemoveReplicasFromIsr``."""
        sys = self.sys
        ctx = self.ctx
        with_info = []
        later = sys.maybe_absent
        admin = sys.admin
        for p in sys.parts_of[b] if only is None else only:
            if later and ctx.pstates[p] == _PS.NonExistentPartition:
                continue  # a topic not created yet: not in replicasOnBrokers
            if admin and only is None and b not in ctx.ar[p]:
                continue
            i = sys.rindex[p][b]
            cur = ctx.rstates[p][i]
            if not _VALID_R[(cur, _RS.OfflineReplica)]:
                self.record_invalid(1, p, cur, _RS.OfflineReplica)
                continue
            if ctx.leaders[p] is None:
                self.set_rstate(p, b, _RS.OfflineReplica)
                self.send_um_all()
            else:
                with_info.append(p)
        if not with_info:
            return False
        self.send_zk((Q_READ_PARTS, tuple(with_info)))
        self.park(W_RM_READ, (b, tuple(with_info)), (), rest)
        return True

    def remove_isr_read(self, resp: tuple, data: tuple, batch: tuple, rest: tuple) -> None:
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        b, parts = data
        mutant = self.sys.cfg.mutant
        writes = []
        done = []
        for p, z in resp[1]:
            if z is None or z.ctl_epoch > ctx.epoch:
                continue
            cur = LeaderAndIsr(z.leader, z.leader_epoch, z.isr, z.version)
            lai = remove_replica_from_isr(cur, b)
            if lai is None:
                done.append((p, z))
                continue
            isr = lai.isr
            leader = lai.leader
            if mutant == "leader-outside-isr" and z.leader != b:
                isr = tuple(r for r in z.isr if r != z.leader) or isr
            if mutant == "empty-isr":
                isr = tuple(r for r in z.isr if r != b)
            writes.append((p, PartZ(leader, lai.leader_epoch, isr, ctx.epoch, z.version)))
        for p, z in done:
            self.ctx = self.ctx._replace(leaders=_set(self.ctx.leaders, p, z))
            self.set_rstate(p, b, _RS.OfflineReplica)
        if not writes:
            self.flush(batch)
            self.run(rest)
            return
        self.send_zk((Q_WRITE_PARTS, tuple(writes), self.fence(), ctx.epoch, False, S_REMOVE))
        self.park(W_RM_WRITE, (b, parts), batch, rest)

    def remove_isr_written(self, resp: tuple, data: tuple, batch: tuple, rest: tuple) -> None:
        if self.ctx is None:
            self.run(rest)
            return
        _, ok, results = resp
        if not ok:
            self.controller_moved(rest)
            return
        b, _ = data
        batch_l = list(batch)
        retry = []
        for p, z in results:
            if z is None:
                retry.append(p)
                continue
            self.ctx = self.ctx._replace(leaders=_set(self.ctx.leaders, p, z))
            if z.leader == NO_LEADER:
                self.history |= 2 << p
            self.set_rstate(p, b, _RS.OfflineReplica)
            for r in self.ctx.ar[p]:
                if r != b:
                    batch_l.append((r, self.entry(p, z)))
        if retry:
            self.send_zk((Q_READ_PARTS, tuple(retry)))
            self.park(W_RM_READ, (b, tuple(retry)), tuple(batch_l), rest)
            return
        self.flush(tuple(batch_l))
        self.run(rest)

    # -- TopicChange: onNewTopicCreation / onNewPartitionCreation (seed 001 新建 Topic) ------------
    def topic_change(self, ntopics: int, rest: tuple, gone: tuple[int, ...] = ()) -> None:
        """The topics read from ``/brokers/topics``: the ones the context lacks are new."""
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        sys = self.sys
        ppt = sys.ppt
        pst = ctx.pstates
        added = sys.added
        new = tuple(
            p
            for t in range(ntopics)
            if pst[t * ppt] == _PS.NonExistentPartition and t not in gone
            for p in range(t * ppt, (t + 1) * ppt)
            if p not in added
        )
        if not new:
            self.run(rest)
            return
        self.run(((O_NEW_PARTITIONS, new), (O_NEW_REPLICAS_ONLINE, new), *rest))

    def new_partitions_start(self, parts: tuple[int, ...], rest: tuple) -> bool:
        """``onNewPartitionCreation``: partitions -> NewPartition, replicas -> NewReplica, then
        NewPartition -> OnlinePartition (``initializeLeaderAndIsrForPartitions``: a create of the
        partition state znodes, conditioned like every controller write; its LeaderAndIsr goes
        to the new ISR). ``rest`` starts with the replicas' NewReplica -> OnlineReplica."""
        for p in parts:
            self.set_pstate(p, _PS.NewPartition)
            for r in self.ctx.ar[p]:
                self.set_rstate(p, r, _RS.NewReplica)
        init = tuple(p for p in parts if self.ctx.pstates[p] == _PS.NewPartition)
        return self.trigger_init(init, (), (), rest)

    def new_replicas_online(self, parts: tuple[int, ...]) -> None:
        """``replicaStateMachine.handleStateChanges(replicasForPartition(newPartitions), OnlineReplica)``."""
        sys = self.sys
        batch: list = []
        for p in parts:
            for r in self.ctx.ar[p]:
                cur = self.ctx.rstates[p][sys.rindex[p][r]]
                if self.set_rstate(p, r, _RS.OnlineReplica) and cur != _RS.NewReplica:
                    z = self.ctx.leaders[p]
                    if z is not None:
                        batch.append((r, self.entry(p, z)))
        self.flush(tuple(batch))

    # -- admin workflows (issue 4) ------------------------------------------------------------------
    def admin_event(self, kind: int, arg: int) -> None:
        """The admin-workflow events of an active controller."""
        if kind == EV_DELETE_TOPICS:
            self.send_zk((Q_READ_DELETIONS,))
            self.park(W_DEL_READ, None, (), ())
        elif kind in (EV_DELETE_RESP, EV_DELETE_RESP_ERR):
            self.stop_replica_response(arg & 7, arg >> 3, kind == EV_DELETE_RESP_ERR)
        elif kind == EV_PARTITION_MOD:
            self.send_zk((Q_READ_ASSIGN, arg))
            self.park(W_PMOD, arg, (), ())
        elif kind == EV_REASSIGN:
            self.send_zk((Q_READ_REASSIGN,))
            self.park(W_REASSIGN_READ, None, (), ())
        elif kind == EV_REASSIGN_ISR:
            if any(p == arg for p, _ in self.ctx.reassigning):
                self.run(((O_REASSIGN, arg, 2),))
        elif kind == EV_PREFERRED:
            self.send_zk((Q_READ_PREFERRED,))
            self.park(W_PREF_READ, None, (), ())
        elif kind == EV_AUTO_REBALANCE:
            self.auto_rebalance()
        elif kind == EV_CONTROLLED_SHUTDOWN:
            self.controlled_shutdown(arg)
        elif kind == EV_UNCLEAN_ENABLE:
            # TopicUncleanLeaderElectionEnable: triggerOnlinePartitionStateChange(topic)
            self.run(((O_TRIGGER, arg),))

    def rstate(self, p: int, r: int) -> ReplicaState:
        return self.ctx.rstates[p][self.sys.rindex[p][r]]

    def topic_partitions(self, t: int) -> range:
        ppt = self.sys.ppt
        return range(t * ppt, (t + 1) * ppt)

    def topic_replicas(self, t: int) -> list[tuple[int, int]]:
        """``replicasForTopic``: (partition, replica) of the topic's partitions in the context."""
        ctx = self.ctx
        return [
            (p, r)
            for p in self.topic_partitions(t)
            if ctx.pstates[p] != _PS.NonExistentPartition
            for r in ctx.ar[p]
        ]

    # TopicDeletionManager (seed 001 删除 Topic) ----------------------------------------------------
    def deletions_read(self, topics: tuple[int, ...], rest: tuple) -> None:
        """``TopicDeletion``: unknown topics are cleared; with deletion disabled every entry is
        cleared; topics with a reassignment in progress are marked ineligible; the rest are
        enqueued (``enqueueTopicsForDeletion``) and ``resumeDeletions`` runs."""
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        cfg = self.sys.cfg
        ppt = self.sys.ppt
        known = tuple(t for t in topics if ctx.pstates[t * ppt] != _PS.NonExistentPartition)
        clear = tuple(t for t in topics if t not in known)
        if not cfg.delete_topic_enable:
            clear = topics
        if clear:
            self.send_zk((Q_DELETE_DELETIONS, clear, self.fence(), ctx.epoch))
        if not cfg.delete_topic_enable or not known:
            self.run(rest)
            return
        reassigning = {p // ppt for p, _ in ctx.reassigning}
        ineligible = tuple(sorted(set(ctx.ineligible) | {t for t in known if t in reassigning}))
        deleting = tuple(sorted(set(ctx.deleting) | set(known)))
        self.ctx = ctx._replace(deleting=deleting, ineligible=ineligible)
        self.run(((O_RESUME_DELETIONS,), *rest))

    def resume_deletions(self) -> tuple:
        """``resumeDeletions``: complete, retry or start the deletion of each queued topic."""
        ctx = self.ctx
        complete: list = []
        retry: list = []
        eligible: list = []
        for t in ctx.deleting:
            states = [self.rstate(p, r) for p, r in self.topic_replicas(t)]
            started = _RS.ReplicaDeletionStarted in states
            if all(st == _RS.ReplicaDeletionSuccessful for st in states):
                complete.append(t)
                continue
            if not started and _RS.ReplicaDeletionIneligible in states:
                retry.append(t)
            if t not in ctx.ineligible and not started:
                eligible.append(t)
        prog: list = [(O_DEL_COMPLETE, t) for t in complete]
        if retry:
            # retryDeletionForIneligibleReplicas: failed replicas -> OfflineReplica
            self.ctx = ctx._replace(ineligible=tuple(t for t in ctx.ineligible if t not in retry))
            for t in retry:
                by: dict[int, list[int]] = {}
                for p, r in self.topic_replicas(t):
                    if self.rstate(p, r) == _RS.ReplicaDeletionIneligible:
                        by.setdefault(r, []).append(p)
                prog += [(O_REMOVE_ISR, b, tuple(ps)) for b, ps in sorted(by.items())]
        if eligible:
            # onTopicDeletion: UpdateMetadata, then onPartitionDeletion -> startReplicaDeletion
            prog.append((O_SEND_UM,))
            prog += [(O_ON_TOPIC_DELETION, t) for t in eligible]
        return tuple(prog)

    def start_replica_deletion(self, t: int) -> tuple:
        """``startReplicaDeletion``: dead replicas -> ReplicaDeletionIneligible (and the topic
        ineligible); live ones not yet deleted -> OfflineReplica -> ReplicaDeletionStarted."""
        ctx = self.ctx
        if t not in ctx.deleting:
            return ()
        live = self.live_brokers()
        dead = False
        by: dict[int, list[int]] = {}
        for p, r in self.topic_replicas(t):
            if r not in live:
                dead = True
                self.to_ineligible(p, r)
            elif self.rstate(p, r) != _RS.ReplicaDeletionSuccessful:
                by.setdefault(r, []).append(p)
        if dead:
            self.ctx = self.ctx._replace(ineligible=tuple(sorted({*self.ctx.ineligible, t})))
        todo = tuple((b, tuple(ps)) for b, ps in sorted(by.items()))
        prog: list = [(O_REMOVE_ISR, b, ps) for b, ps in todo]
        if todo:
            prog.append((O_DEL_STARTED, todo))
        return tuple(prog)

    def to_ineligible(self, p: int, r: int) -> None:
        """-> ReplicaDeletionIneligible; Kafka logs and skips an invalid transition (recorded
        only with ``strict_deletion_transitions``)."""
        if (
            self.sys.cfg.strict_deletion_transitions
            or _VALID_R[(self.rstate(p, r), _RS.ReplicaDeletionIneligible)]
        ):
            self.set_rstate(p, r, _RS.ReplicaDeletionIneligible)

    def stop_replicas(self, b: int, parts: tuple[int, ...], delete: bool, callback: bool) -> None:
        """One StopReplica request to broker ``b`` for ``parts``."""
        e = self.ctx.live[b]
        if not e or not parts:
            return
        mask = 0
        for p in parts:
            mask |= 1 << p
        self.send_msg(b, (M_STOP_REPLICA, self.ctx.epoch, e, (mask, delete, callback)))

    def replica_deletion_started(self, todo: tuple) -> None:
        """OfflineReplica -> ReplicaDeletionStarted: StopReplica(delete=true) with the
        deletion callback (the response queues TopicDeletionStopReplicaResponseReceived)."""
        for b, parts in todo:
            started = tuple(
                p
                for p in parts
                if self.rstate(p, b) == _RS.OfflineReplica
                and self.set_rstate(p, b, _RS.ReplicaDeletionStarted)
            )
            self.stop_replicas(b, started, True, True)

    def stop_replica_response(self, b: int, mask: int, error: bool) -> None:
        """``TopicDeletionStopReplicaResponseReceived``: replicas still in
        ReplicaDeletionStarted -> Successful (then ``resumeDeletions``) or, on an error,
        ``failReplicaDeletion``. A response for a replica in another state (a previous
        deletion round or controller) is ignored."""
        parts = tuple(
            p
            for p in range(self.sys.np)
            if (mask >> p) & 1 and self.rstate(p, b) == _RS.ReplicaDeletionStarted and self.queued(p)
        )
        if not parts:
            return
        if error:
            self.run(((O_FAIL_DELETION, ((b, parts),)),))
            return
        for p in parts:
            self.set_rstate(p, b, _RS.ReplicaDeletionSuccessful)
        if self.sys.cfg.mutant == "no-resume-after-replica-deletion":
            self.run(())
            return
        self.run(((O_RESUME_DELETIONS,),))

    def fail_replica_deletion(self, items: tuple) -> tuple:
        """``failReplicaDeletion``: replicas of queued topics -> ReplicaDeletionIneligible, the
        topics ineligible, then ``resumeDeletions``."""
        topics = set()
        for b, parts in items:
            for p in parts:
                if self.queued(p):
                    self.to_ineligible(p, b)
                    topics.add(p // self.sys.ppt)
        if not topics:
            return ()
        self.ctx = self.ctx._replace(ineligible=tuple(sorted(set(self.ctx.ineligible) | topics)))
        return self.resume_deletions()

    def complete_delete_topic(self, t: int, rest: tuple) -> bool:
        """``completeDeleteTopic``: replicas -> NonExistentReplica, partitions -> Offline ->
        NonExistentPartition, then the fenced ZooKeeper deletes; the context forgets the topic
        when they succeed."""
        ctx = self.ctx
        if t not in ctx.deleting:
            return False
        for p, r in self.topic_replicas(t):
            self.set_rstate(p, r, _RS.NonExistentReplica)
        for p in self.topic_partitions(t):
            if self.ctx.pstates[p] != _PS.NonExistentPartition:
                if self.ctx.pstates[p] != _PS.OfflinePartition:
                    self.set_pstate(p, _PS.OfflinePartition)
                self.set_pstate(p, _PS.NonExistentPartition)
        self.ctx = self.ctx._replace(deleting=tuple(x for x in self.ctx.deleting if x != t))
        keep = self.sys.cfg.mutant == "delete-keeps-partition-state"
        self.send_zk((Q_DELETE_TOPIC, t, self.fence(), ctx.epoch, keep))
        self.park(W_DEL_DONE, t, (), rest)
        return True

    def delete_topic_done(self, ok: bool, t: int, rest: tuple) -> None:
        if self.ctx is None:
            self.run(rest)
            return
        if not ok:
            self.controller_moved(rest)
            return
        ctx = self.ctx
        leaders = ctx.leaders
        for p in self.topic_partitions(t):
            leaders = _set(leaders, p, None)
        self.ctx = ctx._replace(leaders=leaders, ineligible=tuple(x for x in ctx.ineligible if x != t))
        self.done |= D_DELETED
        if self.done & D_DEL_RESUME:
            self.done |= D_DELETED_AFTER_RESUME
        self.run(rest)

    # PartitionModifications (seed 001 Topic 扩容) ----------------------------------------------------
    def partition_modifications(self, t: int, present: tuple[bool, ...], rest: tuple) -> None:
        """New partitions of topic ``t`` (in ZooKeeper, not in the context) are created with
        ``onNewPartitionCreation``, unless the topic is queued for deletion."""
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        if t in ctx.deleting:
            self.run(rest)  # "Skipping adding partitions ... since it is currently being deleted"
            return
        new = tuple(
            p
            for p, here in zip(self.topic_partitions(t), present)
            if here and ctx.pstates[p] == _PS.NonExistentPartition
        )
        if not new:
            self.run(rest)
            return
        self.run(((O_NEW_PARTITIONS, new), (O_NEW_REPLICAS_ONLINE, new), *rest))

    # Partition reassignment (seed 001 分区副本迁移; seed 002 moveReassignedPartitionLeaderIfRequired) -----
    def reassign_read(self, entries: tuple, rest: tuple) -> None:
        """``PartitionReassignment``: partitions not already being reassigned are added to
        ``partitionsBeingReassigned`` and ``maybeTriggerPartitionReassignment`` runs."""
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        current = {p for p, _ in ctx.reassigning}
        new = tuple(
            (p, rar) for p, rar in entries if p not in current and ctx.pstates[p] != _PS.NonExistentPartition
        )
        if not new:
            self.run(rest)
            return
        self.ctx = ctx._replace(reassigning=tuple(sorted((*ctx.reassigning, *new))))
        self.run((*((O_REASSIGN, p, 0) for p, _ in new), *rest))

    def rar(self, p: int) -> tuple[int, ...] | None:
        for q, rar in self.ctx.reassigning:
            if q == p:
                return rar
        return None

    def reassign_remove(self, p: int, completed: bool) -> None:
        """``removePartitionsFromReassignedPartitions``: update the znode (fenced)."""
        ctx = self.ctx
        self.ctx = ctx._replace(reassigning=tuple(e for e in ctx.reassigning if e[0] != p))
        self.send_zk((Q_WRITE_REASSIGN, (p,), self.fence(), ctx.epoch, completed))

    def reassign_start(self, p: int, mode: int, rest: tuple) -> bool:
        """mode 0: ``initiateReassignReplicasForTopicPartition`` (checks, then
        ``onPartitionReassignment``); 1: ``onPartitionReassignment``; 2:
        ``PartitionReassignmentIsrChange`` (continue only once RAR is in the ISR)."""
        rar = self.rar(p)
        if rar is None:
            return False
        ctx = self.ctx
        if mode == 0:
            live = self.live_brokers()
            if self.queued(p) or rar == ctx.ar[p] or any(r not in live for r in rar):
                self.reassign_remove(p, False)
                return False
        # areReplicasInIsr reads the partition state from ZooKeeper
        self.send_zk((Q_READ_PARTS, (p,)))
        self.park(W_REASSIGN_PARTS, (p, mode), (), rest)
        return True

    def reassign_parts(self, resp: tuple, data: tuple, rest: tuple) -> None:
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        p, mode = data
        rar = self.rar(p)
        z = resp[1][0][1]
        if rar is None or z is None or z.ctl_epoch > ctx.epoch:
            self.run(rest)
            return
        caught_up = all(r in z.isr for r in rar)
        if not caught_up:
            if mode == 2:
                self.run(rest)
                return
            # 1. AR = OAR + RAR in ZooKeeper (and in the context once written)
            new_ar = rar + tuple(r for r in ctx.ar[p] if r not in rar)
            self.send_zk((Q_WRITE_ASSIGN, p, new_ar, self.fence(), ctx.epoch))
            self.park(W_ASSIGN, (p, 1, new_ar), (), rest)
            return
        # 5. RAR -> OnlineReplica; 6. AR = RAR in memory; 7. move the leader if required
        old = tuple(r for r in ctx.ar[p] if r not in rar)
        for r in rar:
            self.set_rstate(p, r, _RS.OnlineReplica)
        keep_old = self.sys.cfg.mutant == "reassign-keeps-old-replica"
        self.ctx = self.ctx._replace(ar=_set(self.ctx.ar, p, rar + old if keep_old else rar))
        live = self.live_brokers()
        strategy = S_REASSIGN if (z.leader not in rar or z.leader not in live) else S_EPOCH
        self.run(((O_ELECT_PARTS, strategy, (p,)), (O_REASSIGN_DONE, p, old), *rest))

    def assign_written(self, ok: bool, data: tuple, rest: tuple) -> None:
        if self.ctx is None:
            self.run(rest)
            return
        if not ok:
            self.controller_moved(rest)
            return
        p, phase, new_ar = data
        ctx = self.ctx
        if phase == 1:
            # 2. leader epoch + 1, LeaderAndIsr to OAR + RAR; 3. RAR - OAR -> NewReplica
            old = ctx.ar[p]
            self.ctx = ctx._replace(ar=_set(ctx.ar, p, new_ar))
            for r in new_ar:
                if r not in old:
                    self.set_rstate(p, r, _RS.NewReplica)
            self.run(((O_ELECT_PARTS, S_EPOCH, (p,)), *rest))
            return
        # 11. remove the partition from /admin/reassign_partitions; 12. UpdateMetadata; resume
        # the deletion of its topic
        self.reassign_remove(p, True)
        self.send_um_all()
        self.done |= D_REASSIGNED
        if self.done & D_PICKED_UP:
            self.done |= D_RESUMED
        t = p // self.sys.ppt
        self.run((*(((O_RESUME_TOPIC, (t,)),) if t in self.ctx.deleting else ()), *rest))

    def reassign_stop_old(self, p: int, old: tuple[int, ...], rest: tuple) -> bool:
        """8-9. OAR - RAR -> OfflineReplica (out of the ISR) -> ReplicaDeletionStarted ->
        Successful -> NonExistentReplica (StopReplica(delete=true), no callback); 10. AR = RAR
        in ZooKeeper."""
        if self.rar(p) is None:
            return False
        if old:
            prog: tuple[tuple, ...] = tuple((O_REMOVE_ISR, b, (p,)) for b in old)
            prog += ((O_STOP, -1, (p,), old), (O_REASSIGN_DONE, p, ()))
            self.run((*prog, *rest))
            return True
        ctx = self.ctx
        self.send_zk((Q_WRITE_ASSIGN, p, ctx.ar[p], self.fence(), ctx.epoch))
        self.park(W_ASSIGN, (p, 2, ctx.ar[p]), (), rest)
        return True

    # Preferred replica election (seed 002) ---------------------------------------------------------
    def preferred_read(self, parts: tuple[int, ...], rest: tuple) -> None:
        """``PreferredReplicaLeaderElection``: elect the pending partitions with the preferred
        replica strategy, then delete the znode."""
        if self.ctx is None or not parts:
            self.run(rest)
            return
        pending = self.pending_preferred(parts)
        prog: tuple = ((O_ELECT_PARTS, S_PREFERRED, pending),) if pending else ()
        self.run((*prog, (O_DELETE_PREFERRED,), *rest))

    def auto_rebalance(self) -> None:
        """``checkAndTriggerAutoLeaderRebalance``: for each preferred broker whose imbalance
        ratio (partitions it should lead but does not / partitions it should lead) exceeds
        ``leader.imbalance.per.broker.percentage``, a preferred election of the candidates."""
        sys = self.sys
        ctx = self.ctx
        live = self.live_brokers()
        pct = sys.cfg.leader_imbalance_per_broker_percentage
        by: dict[int, list[int]] = {}
        for p in range(sys.np):
            if ctx.pstates[p] == _PS.NonExistentPartition or self.queued(p):
                continue
            by.setdefault(ctx.ar[p][0], []).append(p)
        cands: list[int] = []
        for b in sorted(by):
            parts = by[b]
            off = [p for p in parts if (z := ctx.leaders[p]) is not None and z.leader != b]
            if len(off) * 100 > pct * len(parts):
                cands += [p for p in off if b in live and not ctx.reassigning and not self.queued(p)]
        if cands:
            self.done |= D_AUTO
            self.run(((O_ELECT_PARTS, S_PREFERRED, tuple(sorted(cands))),))

    # Controlled shutdown (seed 002 doControlledShutdown; question 9) --------------------------------
    def controlled_shutdown(self, b: int) -> None:
        """``doControlledShutdown``: add to ``shuttingDownBrokerIds``; elect new leaders for the
        partitions it leads (ControlledShutdown strategy; single-replica partitions skipped);
        StopReplica(delete=false) and OfflineReplica for those it follows; respond."""
        ctx = self.ctx
        if not ctx.live[b]:
            return  # BrokerNotAvailableException
        if b not in ctx.shutting:
            self.ctx = ctx = ctx._replace(shutting=tuple(sorted((*ctx.shutting, b))))
        led: list[int] = []
        followed: list[int] = []
        for p in self.sys.parts_of[b]:
            if b not in ctx.ar[p] or ctx.pstates[p] == _PS.NonExistentPartition:
                continue
            z = ctx.leaders[p]
            act = controlled_shutdown_partition_action(
                ctx.ar[p], z.leader if z is not None else NO_LEADER, b, z is not None, self.queued(p)
            )
            if act == ControlledShutdownAction.ELECT_LEADER:
                led.append(p)
            elif act == ControlledShutdownAction.OFFLINE_FOLLOWER:
                followed.append(p)
        prog: list = []
        if led:
            prog.append((O_ELECT_PARTS, S_CONTROLLED_SHUTDOWN, tuple(led)))
        if followed:
            prog += [(O_STOP, b, tuple(followed), False), (O_REMOVE_ISR, b, tuple(followed))]
        prog.append((O_CS_RESPOND, b))
        self.run(tuple(prog))

    # -- IsrChangeNotification ------------------------------------------------------------------
    def isr_change(self, parts: tuple[int, ...], states: tuple, rest: tuple) -> None:
        ctx = self.ctx
        if ctx is None:
            self.run(rest)
            return
        if parts:
            leaders = ctx.leaders
            for p, z in zip(parts, states):
                if z is not None:
                    leaders = _set(leaders, p, z)
            self.ctx = ctx._replace(leaders=leaders)
            self.send_um_all()
        self.send_zk((Q_DELETE_ISR_CHANGES, parts, self.fence(), ctx.epoch))
        self.run(rest)


# ---------------------------------------------------------------------------------------
# The system


class ControllerSystem:
    """The controller model as a transition system (see the module docstring).

    >>> sys = ControllerSystem(ControllerConfig(brokers=2, replication_factor=2))
    >>> s = sys.init_states()[0]
    >>> s.zk.controller[0], s.zk.epoch, s.zk.parts[0].leader, s.zk.parts[0].isr
    (0, 1, 0, (0, 1))
    """

    def __init__(self, cfg: ControllerConfig) -> None:
        self.cfg = cfg
        self.nb = cfg.brokers
        self.np = cfg.partitions
        self.replicas = cfg.replicas()
        self.admin = cfg.admin
        self.targets = cfg.targets()
        # replica slots: the assignment, plus the reassignment targets of reassigned partitions
        self.slots = tuple(
            reps + tuple(r for r in self.targets[p] if r not in reps) if p < cfg.max_reassignments else reps
            for p, reps in enumerate(self.replicas)
        )
        self.parts_of = tuple(tuple(p for p in range(self.np) if b in self.slots[p]) for b in range(self.nb))
        self.rindex = tuple({r: i for i, r in enumerate(reps)} for reps in self.slots)
        self.legacy = cfg.elector is Elector.LEGACY
        self.merged = cfg.zk_responses is ZkResponses.MERGED
        self.queued = self.legacy or cfg.session_expiry_handling is ExpiryHandling.QUEUED
        self.ppt = cfg.partitions_per_topic
        self.later = cfg.topics_created_later
        self.topics_at_start = cfg.topics - cfg.topics_created_later
        # the partitions an admin adds after start (the last ``partitions_added_later`` of a topic)
        first_added = self.ppt - cfg.partitions_added_later
        self.added = frozenset(p for p in range(self.np) if p % self.ppt >= first_added)
        # partitions that may be absent from a controller's context (topic creation, expansion,
        # deletion): replicasOnBrokers skips them
        self.maybe_absent = bool(self.later or self.added or cfg.max_topic_deletions)
        self._empty_rep = Rep(-1, -1, (), 0, (), 0, (), False)
        self._init: State | None = None

    # -- construction ------------------------------------------------------------------------
    def empty_ctx(self, epoch: int, version: int) -> Ctx:
        """A fresh controller context right after winning an election."""
        return Ctx(
            epoch,
            version,
            (0,) * self.nb,
            (None,) * self.np,
            (_PS.NonExistentPartition,) * self.np,
            tuple((_RS.NonExistentReplica,) * len(r) for r in self.slots),
            self.replicas,
        )

    def present(self, zk: Zk, p: int) -> bool:
        """Partition ``p`` exists in ZooKeeper (its topic created and not deleted, and the
        partition not one still to be added).

        >>> sys = ControllerSystem(ControllerConfig(partitions_per_topic=2, partitions_added_later=1))
        >>> z = sys.init_states()[0].zk
        >>> sys.present(z, 0), sys.present(z, 1)
        (True, False)
        """
        t = p // self.ppt
        if t >= self.topics_at_start + zk.created or t in zk.gone:
            return False
        return p not in self.added or t < zk.expanded

    def cold_state(self) -> State:
        """Every broker just started: session ``b + 1`` open, registration request queued."""
        nodes = tuple(
            Node(
                alive=True,
                session=b + 1,
                expired=False,
                bepoch=0,
                zk_out=((Q_REGISTER_BROKER, True),),
                zk_in=(),
                ctl_watch=False,
                watch=False,
                active_id=-1,
                ctx=None,
                events=(),
                pending=None,
                seen_epoch=0,
                reps=(self._empty_rep,) * self.np,
            )
            for b in range(self.nb)
        )
        zk = Zk(
            None,
            0,
            0,
            (None,) * self.nb,
            (None,) * self.np,
            (),
            self.nb + 1,
            (0,) * self.nb,
            ar=self.replicas,
        )
        return State(zk, nodes, ((),) * (self.nb * self.nb), (), 0, 0, 0, 0, (), 0)

    def settled_state(self) -> State:
        """The cold start run by a fixed schedule (the first enabled action that is no fault,
        produce or ISR shrink
        action, repeatedly) until no such action is enabled."""
        s = self.cold_state()
        for _ in range(10_000):
            nxt = None
            for a, t in self.successors(s):
                if not isinstance(a, FAULT_KINDS):
                    nxt = t
                    break
            if nxt is None:
                return s
            s = nxt
        raise AssertionError("settled start did not settle")  # pragma: no cover

    def init_states(self) -> list[State]:
        """The one initial state (``start``: settled or cold)."""
        if self._init is None:
            self._init = self.settled_state() if self.cfg.start is Start.SETTLED else self.cold_state()
        return [self._init]

    def action_kinds(self) -> tuple[str, ...]:
        """Every action kind of the model."""
        kinds: tuple[str, ...] = ACTION_KINDS
        if self.later:
            kinds = (*kinds, "AdminCreateTopic")
        cfg = self.cfg
        flags = (
            cfg.max_topic_deletions,
            self.added,
            cfg.max_reassignments,
            cfg.max_preferred_elections,
            cfg.max_unclean_enables,
            cfg.auto_leader_rebalance,
            cfg.max_controlled_shutdowns,
            cfg.max_controlled_shutdowns,
        )
        kinds = (*kinds, *(k for k, on in zip(ADMIN_KINDS, flags) if on))
        return (*kinds, "TimePasses") if cfg.liveness else kinds

    def fair_action_kinds(self) -> tuple[str, ...]:
        """The weakly fair (healing) action kinds of the liveness properties (``FAIR_KINDS``).

        >>> "Deliver" in ControllerSystem(ControllerConfig()).fair_action_kinds()
        True
        """
        return FAIR_KINDS

    def is_terminal(self, s: State) -> bool:
        """A state without successors is a proper end when no live broker waits for a response."""
        return all(not n.alive or n.pending is None for n in s.nodes)

    # -- helpers -----------------------------------------------------------------------------
    @staticmethod
    def session_live(n: Node) -> bool:
        """The server still holds the broker's current session."""
        return n.session != 0 and not n.expired

    def _fire(self, nodes: list[Node], ev: tuple[int, int], who: str, skip: int = -1) -> None:
        """Append a watch event to every live broker watching (``ctl``: /controller, else controller watches)."""
        if ev[0] == EV_REELECT and self.cfg.mutant == "no-reelect-on-controller-gone":
            return
        for b, n in enumerate(nodes):
            if b == skip or not n.alive or n.expired or n.session == 0:
                continue
            if (n.ctl_watch if who == "ctl" else n.watch) and ev not in n.events:
                nodes[b] = n._replace(events=(*n.events, ev))

    def _commit(self, s: State, w: _W, **node_changes: Any) -> State:
        n = w.n._replace(
            zk_out=w.zk_out,
            active_id=w.active_id,
            ctx=w.ctx,
            events=w.events,
            pending=w.pending,
            watch=w.watch,
            **node_changes,
        )
        self._last_labels: tuple = tuple(w.labels)  # for successors_labelled
        return s._replace(
            nodes=_set(s.nodes, w.me, n), chans=w.chans, invalid=w.invalid, history=w.history, done=w.done
        )

    def successors_labelled(self, s: State) -> Iterator[tuple[Any, State, tuple]]:
        """``successors`` with each transition's coverage labels (``model/controller_coverage.py``)."""
        from model.controller_coverage import ZK_LABELLED, zk_labels

        self._last_labels = ()
        for a, t in self.successors(s):
            labels = self._last_labels  # set by _commit while computing this step
            self._last_labels = ()
            if type(a) in ZK_LABELLED:  # only these steps can write to ZooKeeper
                extra = zk_labels(self, s, a, t)
                if extra:
                    labels += extra
            yield a, t, labels

    def coverage_labels(self) -> list[tuple[str, ...]]:
        """Every label ``successors_labelled`` is meant to hit (for coverage's never-hit list)."""
        from model.controller_coverage import expected_labels

        return expected_labels(self)

    def sequence_arrow(self, action: Any) -> tuple[str, str, str]:
        """(from actor, to actor, label) of an action in a counterexample's sequence diagram."""
        from model.controller_coverage import sequence_arrow

        return sequence_arrow(action)

    # -- successors --------------------------------------------------------------------------
    def successors(self, s: State) -> Iterator[tuple[Any, State]]:
        """Every enabled action, in a fixed order: controllers, ZooKeeper, replies, channels,
        data plane, faults."""
        cfg = self.cfg
        nb = self.nb
        nodes = s.nodes
        for b in range(nb):
            n = nodes[b]
            if n.alive and n.pending is None and n.events:
                yield self._process_event(s, b)
        for b in range(nb):
            n = nodes[b]
            if n.zk_out and n.session != 0 and not n.expired:
                yield self._zk_serve(s, b)
        for b in range(nb):
            n = nodes[b]
            if n.alive and n.zk_in:
                yield self._zk_reply(s, b)
        chans = s.chans
        for i in range(nb * nb):
            if chans[i]:
                d = i % nb
                if nodes[d].alive and not self._isr_write_in_flight(nodes[d], chans[i][0]):
                    yield self._deliver(s, i // nb, d)
        yield from self._data_plane(s)
        fault_ok = s.zk.epoch < cfg.max_controller_epoch
        for b in range(nb):
            n = nodes[b]
            if n.alive:
                if n.expired:
                    yield self._notice(s, b)
                if fault_ok and s.crashes < cfg.max_crashes:
                    yield self._crash(s, b)
                if fault_ok and s.expiries < cfg.max_session_expiries and self.session_live(n):
                    yield self._expire(s, b, True)
            else:
                if self.session_live(n):
                    yield self._expire(s, b, False)
                elif fault_ok and s.restarts < cfg.max_restarts:
                    yield self._restart(s, b)
        if self.later and s.zk.created < self.later:
            yield self._admin_create(s)
        if self.admin:
            yield from self._admin_actions(s)
        if cfg.liveness:
            yield TimePasses(), s

    def _admin_actions(self, s: State) -> Iterator[tuple[Any, State]]:
        """The admin requests, the rebalance timer and the controlled-shutdown steps."""
        cfg = self.cfg
        zk = s.zk
        nodes = s.nodes
        if zk.deletes < cfg.max_topic_deletions:
            t = zk.deletes
            ns = list(nodes)
            if t not in zk.delete_topics:
                self._fire(ns, (EV_DELETE_TOPICS, -1), "watch")
            zk2 = zk._replace(deletes=t + 1, delete_topics=tuple(sorted({*zk.delete_topics, t})))
            yield AdminDeleteTopic(t), s._replace(zk=zk2, nodes=tuple(ns))
        if self.added and zk.expanded < self.topics_at_start and zk.expanded not in zk.gone:
            t = zk.expanded
            ns = list(nodes)
            self._fire(ns, (EV_PARTITION_MOD, t), "watch")
            yield AdminAddPartitions(t), s._replace(zk=zk._replace(expanded=t + 1), nodes=tuple(ns))
        if zk.reassigns < cfg.max_reassignments and not zk.reassign:
            p = zk.reassigns
            if self.present(zk, p):
                ns = list(nodes)
                self._fire(ns, (EV_REASSIGN, -1), "watch")
                rar = self.targets[p]
                zk2 = zk._replace(reassigns=p + 1, reassign=((p, rar),))
                yield AdminReassign(p, rar), s._replace(zk=zk2, nodes=tuple(ns))
        if zk.preferreds < cfg.max_preferred_elections and not zk.preferred:
            parts = tuple(p for p in range(self.np) if self.present(zk, p))
            if parts:
                ns = list(nodes)
                self._fire(ns, (EV_PREFERRED, -1), "watch")
                zk2 = zk._replace(preferreds=zk.preferreds + 1, preferred=parts)
                yield AdminPreferredElection(parts), s._replace(zk=zk2, nodes=tuple(ns))
        if len(zk.unclean_dyn) < cfg.max_unclean_enables:
            t = len(zk.unclean_dyn)
            if self.present(zk, t * self.ppt):
                ns = list(nodes)
                self._fire(ns, (EV_UNCLEAN_ENABLE, t), "watch")
                zk2 = zk._replace(unclean_dyn=(*zk.unclean_dyn, t))
                yield AdminEnableUnclean(t), s._replace(zk=zk2, nodes=tuple(ns))
        if cfg.auto_leader_rebalance:
            for b, n in enumerate(nodes):
                # the check interval (300 s) is long next to event processing: the task fires
                # when the controller is idle
                if n.alive and n.ctx is not None and not n.events and n.pending is None and not n.expired:
                    n2 = n._replace(events=((EV_AUTO_REBALANCE, -1),))
                    yield AutoRebalanceTick(b), s._replace(nodes=_set(nodes, b, n2))
        if cfg.max_controlled_shutdowns:
            c = zk.controller
            for b, n in enumerate(nodes):
                if n.cs and n.alive:
                    if n.cs == 2 or not nodes[n.cs - 3].alive or nodes[n.cs - 3].ctx is None:
                        # answered, or the request failed (controller gone): after its retries
                        # (controlled.shutdown.max.retries) the broker shuts down anyway
                        yield self._shutdown_complete(s, b)
                elif (
                    n.cs == 0
                    and s.shutdowns < cfg.max_controlled_shutdowns
                    and n.alive
                    and self.session_live(n)
                    and zk.brokers[b] is not None
                    and c is not None
                    and nodes[c[0]].alive
                    and nodes[c[0]].ctx is not None
                ):
                    ns = list(nodes)
                    ns[b] = ns[b]._replace(cs=3 + c[0])
                    ev = (EV_CONTROLLED_SHUTDOWN, b)
                    cn = ns[c[0]]
                    if ev not in cn.events:
                        ns[c[0]] = cn._replace(events=(*cn.events, ev))
                    yield ControlledShutdown(b, c[0]), s._replace(nodes=tuple(ns), shutdowns=s.shutdowns + 1)

    def _shutdown_complete(self, s: State, b: int) -> tuple[Any, State]:
        """The broker stops and closes its session: its ephemerals go at once."""
        sess = s.nodes[b].session
        _, t = self._crash(s, b)
        t = t._replace(crashes=s.crashes, done=t.done | D_SHUTDOWN)
        _, t = self._expire(t, b, False)
        return ShutdownComplete(b, sess), t

    def _admin_create(self, s: State) -> tuple[Any, State]:
        """The admin client's create of ``/brokers/topics/<t>``: fires the topics child watch."""
        zk = s.zk
        t = self.topics_at_start + zk.created
        nodes = list(s.nodes)
        self._fire(nodes, (EV_TOPIC_CHANGE, -1), "watch")
        return AdminCreateTopic(t), s._replace(zk=zk._replace(created=zk.created + 1), nodes=tuple(nodes))

    # -- controller steps ----------------------------------------------------------------------
    def _process_event(self, s: State, b: int) -> tuple[Any, State]:
        n = s.nodes[b]
        ev = n.events[0]
        w = _W(self, s, b, n)
        w.events = n.events[1:]
        w.process_event(ev)
        return ProcessEvent(b, ev), self._commit(s, w)

    def _zk_reply(self, s: State, b: int) -> tuple[Any, State]:
        n = s.nodes[b]
        resp = n.zk_in[0]
        n2 = n._replace(zk_in=n.zk_in[1:])
        op = resp[0]
        if op == Q_REGISTER_BROKER:
            ev = n2.events
            if resp[2] and (EV_STARTUP, -1) not in ev:
                ev = (*ev, (EV_STARTUP, -1))
            n2 = n2._replace(bepoch=resp[1], events=ev)
            return ZkReply(b, resp), s._replace(nodes=_set(s.nodes, b, n2))
        if op == Q_UPDATE_ISR:
            return ZkReply(b, resp), self._isr_result(s, b, n2, resp)
        s1 = s._replace(nodes=_set(s.nodes, b, n2))
        w = _W(self, s1, b, n2)
        if w.pending is None:  # pragma: no cover - a response nobody waits for
            raise AssertionError(f"broker {b}: unexpected response {resp!r}")
        w.resume(resp)
        return ZkReply(b, resp), self._commit(s1, w)

    # -- the ZooKeeper server ------------------------------------------------------------------
    def _zk_serve(self, s: State, b: int) -> tuple[Any, State]:
        cfg = self.cfg
        n = s.nodes[b]
        req = n.zk_out[0]
        op = req[0]
        zk = s.zk
        nodes = list(s.nodes)
        sess = n.session
        resp: tuple | None = None
        node = n._replace(zk_out=n.zk_out[1:])
        if op == Q_REGISTER_BROKER:
            cur = zk.brokers[b]
            if cur is None:
                epoch = zk.czxids[b] + 1
                zk = zk._replace(brokers=_set(zk.brokers, b, (sess, epoch)), czxids=_set(zk.czxids, b, epoch))
                resp = (Q_REGISTER_BROKER, epoch, req[1])
                nodes[b] = node
                self._fire(nodes, (EV_BROKER_CHANGE, -1), "watch")
                node = nodes[b]
            elif cur[0] == sess:  # a retried registration of this very session
                resp = (Q_REGISTER_BROKER, cur[1], req[1])
            else:  # pragma: no cover - restarts wait for the old session to expire
                raise AssertionError("broker registration over a live ephemeral")
        elif op == Q_READ_CTL:
            ctl = zk.controller[0] if zk.controller is not None else -1
            resp = (Q_READ_CTL, ctl, zk.epoch, zk.epoch_version)
            node = node._replace(ctl_watch=True)
        elif op == Q_REGISTER_CTL:
            _, epoch, version = req
            if zk.controller is not None or zk.epoch_version != version:
                resp = (Q_REGISTER_CTL, False, 0, 0)
            else:
                new_epoch = epoch if cfg.mutant == "no-epoch-bump" else epoch + 1
                if cfg.mutant == "epoch-reset" and epoch >= 2:
                    new_epoch = 1
                zk = zk._replace(controller=(b, sess), epoch=new_epoch, epoch_version=version + 1)
                resp = (Q_REGISTER_CTL, True, new_epoch, version + 1)
                nodes[b] = node
                self._fire(nodes, (EV_CTL_CHANGE, b), "ctl", skip=b)
                node = nodes[b]
        elif op == Q_CREATE_CTL:
            if zk.controller is not None:
                resp = (Q_CREATE_CTL, False, zk.controller[0])
            else:
                zk = zk._replace(controller=(b, sess))
                resp = (Q_CREATE_CTL, True, b)
                nodes[b] = node
                self._fire(nodes, (EV_CTL_CHANGE, b), "ctl", skip=b)
                node = nodes[b]
        elif op == Q_READ_EPOCH:
            resp = (Q_READ_EPOCH, zk.epoch, zk.epoch_version)
        elif op == Q_INC_EPOCH:
            _, epoch, version = req
            if zk.epoch_version != version:
                resp = (Q_INC_EPOCH, False, 0, 0)
            else:
                new_epoch = epoch if cfg.mutant == "no-epoch-bump" else epoch + 1
                zk = zk._replace(epoch=new_epoch, epoch_version=version + 1)
                resp = (Q_INC_EPOCH, True, new_epoch, version + 1)
        elif op == Q_DELETE_CTL:
            if zk.controller is not None:
                zk = zk._replace(controller=None)
                nodes[b] = node
                self._fire(nodes, (EV_REELECT, -1), "ctl")
                node = nodes[b]
        elif op == Q_READ_CONTEXT:
            live = tuple(0 if e is None else e[1] for e in zk.brokers)
            if self.admin:
                present = tuple(self.present(zk, p) for p in range(self.np))
                admin = (present, zk.ar, zk.delete_topics, zk.reassign, zk.preferred)
                resp = (Q_READ_CONTEXT, live, zk.parts, -1, admin)
            elif self.later:
                resp = (Q_READ_CONTEXT, live, zk.parts, self.topics_at_start + zk.created)
            else:
                resp = (Q_READ_CONTEXT, live, zk.parts)
            node = node._replace(watch=True)
        elif op == Q_READ_TOPICS:
            if self.admin:
                resp = (Q_READ_TOPICS, self.topics_at_start + zk.created, zk.gone)
            else:
                resp = (Q_READ_TOPICS, self.topics_at_start + zk.created)
        elif op == Q_READ_PARTS:
            if cfg.max_unclean_enables:
                # with the topics' configs (getLogConfigs), for unclean.leader.election.enable
                resp = (Q_READ_PARTS, tuple((p, zk.parts[p]) for p in req[1]), zk.unclean_dyn)
            else:
                resp = (Q_READ_PARTS, tuple((p, zk.parts[p]) for p in req[1]))
        elif op in FENCED_ADMIN_WRITES or op in (
            Q_READ_DELETIONS,
            Q_READ_ASSIGN,
            Q_READ_REASSIGN,
            Q_READ_PREFERRED,
        ):
            zk, resp = self._zk_admin(zk, req)
        elif op == Q_WRITE_PARTS:
            _, writes, fence, _ctl_epoch, create, _strategy = req
            if fence != -1 and zk.epoch_version != fence:
                resp = (Q_WRITE_PARTS, False, ())
            else:
                parts = zk.parts
                results = []
                for p, z in writes:
                    cur = parts[p]
                    if create:
                        ok = cur is None
                        new = z._replace(version=0)
                    else:
                        ok = cur is not None and cur.version == z.version
                        new = z._replace(version=z.version + 1)
                    if ok:
                        parts = _set(parts, p, new)
                        results.append((p, new))
                    else:
                        results.append((p, None))
                zk = zk._replace(parts=parts)
                resp = (Q_WRITE_PARTS, True, tuple(results))
        elif op == Q_READ_BROKERS:
            resp = (Q_READ_BROKERS, tuple(0 if e is None else e[1] for e in zk.brokers))
        elif op == Q_READ_ISR_CHANGES:
            parts_t = zk.isr_changes
            resp = (Q_READ_ISR_CHANGES, parts_t, tuple(zk.parts[p] for p in parts_t))
        elif op == Q_DELETE_ISR_CHANGES:
            _, parts_t, fence, _ctl_epoch = req
            if fence == -1 or zk.epoch_version == fence:
                zk = zk._replace(isr_changes=tuple(p for p in zk.isr_changes if p not in parts_t))
        elif op == Q_UPDATE_ISR:
            _, p, z = req
            cur = zk.parts[p]
            if cur is not None and cur.version == z.version:
                new = z._replace(version=z.version + 1)
                ic = zk.isr_changes if p in zk.isr_changes else tuple(sorted((*zk.isr_changes, p)))
                zk = zk._replace(parts=_set(zk.parts, p, new), isr_changes=ic)
                resp = (Q_UPDATE_ISR, p, new)
                nodes[b] = node
                self._fire(nodes, (EV_ISR_CHANGE, -1), "watch")
                if (
                    zk.reassign
                    and cfg.mutant != "no-reassign-isr-watch"
                    and any(q == p for q, _ in zk.reassign)
                ):
                    # the controller's PartitionReassignmentIsrChangeHandler on the state znode
                    self._fire(nodes, (EV_REASSIGN_ISR, p), "watch")
                node = nodes[b]
            else:
                resp = (Q_UPDATE_ISR, p, None)
        else:  # pragma: no cover
            raise AssertionError(f"unknown request {req!r}")
        if resp is not None and node.alive:
            node = node._replace(zk_in=(*node.zk_in, resp))
        nodes[b] = node
        t = s._replace(zk=zk, nodes=tuple(nodes))
        if resp is not None and node.alive and self.merged:
            t = self._zk_reply(t, b)[1]
        return ZkServe(b, sess, req), t

    def _zk_admin(self, zk: Zk, req: tuple) -> tuple[Zk, tuple | None]:
        """The server side of the admin workflows' requests (controller writes fenced on the
        ``/controller_epoch`` version, as ``deleteTopicZNode(topic, epochZkVersion)`` etc.)."""
        op = req[0]
        if op == Q_READ_DELETIONS:
            return zk, (op, zk.delete_topics)
        if op == Q_READ_ASSIGN:
            t = req[1]
            ppt = self.ppt
            return zk, (op, t, tuple(self.present(zk, p) for p in range(t * ppt, (t + 1) * ppt)))
        if op == Q_READ_REASSIGN:
            return zk, (op, zk.reassign)
        if op == Q_READ_PREFERRED:
            return zk, (op, zk.preferred)
        fence = req[_FENCE_AT[op]]
        ok = fence == -1 or zk.epoch_version == fence
        if op == Q_DELETE_DELETIONS:
            if ok:
                zk = zk._replace(delete_topics=tuple(t for t in zk.delete_topics if t not in req[1]))
            return zk, None
        if op == Q_DELETE_TOPIC:
            _, t, _fence, _epoch, keep = req
            if not ok:
                return zk, (op, False)
            ppt = self.ppt
            ps = range(t * ppt, (t + 1) * ppt)
            parts = zk.parts
            if not keep:
                for p in ps:
                    parts = _set(parts, p, None)
            zk = zk._replace(
                parts=parts,
                gone=tuple(sorted((*zk.gone, t))),
                delete_topics=tuple(x for x in zk.delete_topics if x != t),
                isr_changes=tuple(p for p in zk.isr_changes if p not in ps),
            )
            return zk, (op, True)
        if op == Q_WRITE_ASSIGN:
            _, p, ar, _fence, _epoch = req
            if not ok:
                return zk, (op, False)
            return zk._replace(ar=_set(zk.ar, p, ar)), (op, True)
        if op == Q_WRITE_REASSIGN:
            if ok:
                zk = zk._replace(reassign=tuple(e for e in zk.reassign if e[0] not in req[1]))
            return zk, None
        # Q_DELETE_PREFERRED
        if ok:
            zk = zk._replace(preferred=())
        return zk, None

    # -- controller -> broker requests ----------------------------------------------------------
    @staticmethod
    def _isr_write_in_flight(n: Node, msg: tuple) -> bool:
        """A LeaderAndIsr for a partition whose leader is writing its ISR waits.

        Kafka 2.x's ``Partition.makeLeader`` / ``makeFollower`` take
        ``leaderIsrUpdateLock``'s write lock, which ``maybeShrinkIsr`` / ``maybeExpandIsr``
        hold across their synchronous ZooKeeper write; so the request is applied only
        after that write's response (otherwise the leader could start a second ISR write,
        and append under an ISR the first write is about to replace).
        """
        if msg[0] != M_LEADER_AND_ISR:
            return False
        reps = n.reps
        return any(reps[entry[0]].pend for entry in msg[3])

    def _deliver(self, s: State, sender: int, d: int) -> tuple[Any, State]:
        cfg = self.cfg
        i = sender * self.nb + d
        q = s.chans[i]
        msg = q[0]
        chans = _set(s.chans, i, q[1:])
        n = s.nodes[d]
        kind, ctl_epoch, bepoch, payload = msg
        act = Deliver(sender, d, msg)
        stale_broker = cfg.broker_epoch and bepoch < n.bepoch
        stale = (ctl_epoch < n.seen_epoch and cfg.mutant != "no-controller-epoch-check") or stale_broker
        if stale:
            if (
                kind == M_STOP_REPLICA
                and payload[2]
                and not (stale_broker and cfg.deletion_ignores_stale_broker_epoch)
            ):
                # the error response (STALE_CONTROLLER_EPOCH / STALE_BROKER_EPOCH) still reaches
                # the deletion callback
                return act, self._stop_replica_response(s._replace(chans=chans), sender, d, payload[0], True)
            return act, s._replace(chans=chans)
        n = n._replace(seen_epoch=max(n.seen_epoch, ctl_epoch))
        if kind == M_STOP_REPLICA:
            mask, delete, callback = payload
            reps = n.reps
            for p in range(self.np):
                if (mask >> p) & 1:
                    r = reps[p]
                    if delete:
                        r = self._empty_rep
                    else:
                        r = r._replace(leader=-1, isr=(), zkv=0, known=(), pend=False, ar=())
                    reps = _set(reps, p, r)
            t = s._replace(chans=chans, nodes=_set(s.nodes, d, n._replace(reps=reps)))
            if callback:
                t = self._stop_replica_response(t, sender, d, mask, False)
            return act, t
        if kind == M_CS_RESPONSE:
            if n.cs >= 3:
                n = n._replace(cs=2)
            return act, s._replace(chans=chans, nodes=_set(s.nodes, d, n))
        if kind == M_LEADER_AND_ISR:
            reps = n.reps
            for entry in payload:
                p, leader, lepoch, isr, zkv = entry[:5]
                r = reps[p]
                if r.epoch >= lepoch:
                    continue  # stale leader epoch
                if leader == d:
                    known = tuple(len(r.log) if x == d else 0 for x in range(self.nb))
                    r = r._replace(leader=d, epoch=lepoch, isr=isr, zkv=zkv, known=known, pend=False)
                    if len(entry) > 5:
                        r = r._replace(ar=entry[5])
                else:
                    log = r.log
                    if cfg.follower_truncation is FollowerTruncation.HIGH_WATERMARK and len(log) > r.hw:
                        log = log[: r.hw]
                    r = r._replace(leader=leader, epoch=lepoch, isr=(), zkv=0, known=(), pend=False, log=log)
                reps = _set(reps, p, r)
            n = n._replace(reps=reps)
        return act, s._replace(chans=chans, nodes=_set(s.nodes, d, n))

    def _stop_replica_response(self, s: State, sender: int, d: int, mask: int, error: bool) -> State:
        """The StopReplica response callback queues TopicDeletionStopReplicaResponseReceived at
        the sending controller (if that process still runs)."""
        n = s.nodes[sender]
        if not n.alive:
            return s
        ev = (EV_DELETE_RESP_ERR if error else EV_DELETE_RESP, mask * 8 + d)
        if ev in n.events:
            return s
        return s._replace(nodes=_set(s.nodes, sender, n._replace(events=(*n.events, ev))))

    # -- data plane ----------------------------------------------------------------------------
    def _advance_hw(self, r: Rep, me: int, p: int, acked: tuple) -> tuple[Rep, tuple]:
        end = len(r.log)
        hw_new = end
        for x in r.isr:
            if x != me:
                k = r.known[x]
                if k < hw_new:
                    hw_new = k
        if hw_new <= r.hw:
            return r, acked
        added = [(p, o, r.log[o]) for o in range(r.hw, hw_new) if r.log[o] == r.epoch]
        if added:
            acked = tuple(sorted(set(acked) | set(added)))
        return r._replace(hw=hw_new), acked

    def _isr_result(self, s: State, b: int, n: Node, resp: tuple) -> State:
        _, p, z = resp
        r = n.reps[p]
        acked = s.acked
        r = r._replace(pend=False)
        if z is not None and r.leader == b and r.epoch == z.leader_epoch:
            r = r._replace(isr=z.isr, zkv=z.version)
            r, acked = self._advance_hw(r, b, p, acked)
        elif z is None and self.admin and r.leader == b:
            # BadVersion: the cached zkVersion is stale and every retry with it would fail too; the
            # leader waits for a LeaderAndIsr (admin configurations only: without it a leader could
            # retry forever and starve that LeaderAndIsr, which waits for the ISR write)
            r = r._replace(zkv=-1)
        n = n._replace(reps=_set(n.reps, p, r))
        return s._replace(nodes=_set(s.nodes, b, n), acked=acked)

    def _data_plane(self, s: State) -> Iterator[tuple[Any, State]]:
        cfg = self.cfg
        nodes = s.nodes
        for b in range(self.nb):
            n = nodes[b]
            if not n.alive:
                continue
            for p in self.parts_of[b]:
                r = n.reps[p]
                if r.leader == b:
                    if r.pend:
                        continue  # leaderIsrUpdateLock is held during the ISR write
                    if s.produced < cfg.max_records:
                        yield self._produce(s, b, p)
                    if not r.pend:
                        for f in r.isr:
                            if f == b:
                                continue
                            fn = nodes[f]
                            stopped = not fn.alive or fn.reps[p].leader != b
                            if r.zkv < 0:
                                break  # stale zkVersion (admin configurations only)
                            if stopped or r.known[f] < len(r.log):
                                yield self._shrink(s, b, p, f)
                elif r.leader >= 0:
                    ln = nodes[r.leader]
                    lr = ln.reps[p]
                    if ln.alive and lr.leader == r.leader and not lr.pend:
                        t = self._fetch(s, b, p, r.leader)
                        if t is not s:
                            yield Fetch(b, p, r.leader), t

    def _produce(self, s: State, b: int, p: int) -> tuple[Any, State]:
        n = s.nodes[b]
        r = n.reps[p]
        r = r._replace(log=(*r.log, r.epoch))
        acked = s.acked
        r, acked = self._advance_hw(r, b, p, acked)
        n = n._replace(reps=_set(n.reps, p, r))
        return Produce(b, p), s._replace(nodes=_set(s.nodes, b, n), acked=acked, produced=s.produced + 1)

    def _fetch(self, s: State, f: int, p: int, ld: int) -> State:
        cfg = self.cfg
        nodes = s.nodes
        fr = nodes[f].reps[p]
        lr = nodes[ld].reps[p]
        flog = fr.log
        llog = lr.log
        if cfg.follower_truncation is FollowerTruncation.LEADER_EPOCH:
            k = 0
            m = min(len(flog), len(llog))
            while k < m and flog[k] == llog[k]:
                k += 1
            flog = flog[:k]
        elif len(flog) > len(llog):
            flog = flog[: len(llog)]
        hw_read = lr.hw
        offset = len(flog)
        acked = s.acked
        lr2 = lr._replace(known=_set(lr.known, f, offset))
        lr2, acked = self._advance_hw(lr2, ld, p, acked)
        new_flog = flog + llog[offset:]
        fr2 = fr._replace(log=new_flog, hw=min(hw_read, len(new_flog)))
        ln = nodes[ld]
        send = None
        if f not in lr2.isr and offset >= lr2.hw and (not lr2.ar or f in lr2.ar) and lr2.zkv >= 0:
            isr = tuple(x for x in self.slots[p] if x in lr2.isr or x == f)
            send = (Q_UPDATE_ISR, p, PartZ(ld, lr2.epoch, isr, ln.seen_epoch, lr2.zkv))
            lr2 = lr2._replace(pend=True)
        if fr2 == fr and lr2 == lr and acked is s.acked:
            return s
        ln = ln._replace(reps=_set(ln.reps, p, lr2))
        if send is not None:
            ln = ln._replace(zk_out=(*ln.zk_out, send))
        fn = nodes[f]._replace(reps=_set(nodes[f].reps, p, fr2))
        nodes = _set(_set(nodes, ld, ln), f, fn)
        return s._replace(nodes=nodes, acked=acked)

    def _shrink(self, s: State, b: int, p: int, f: int) -> tuple[Any, State]:
        n = s.nodes[b]
        r = n.reps[p]
        isr = tuple(x for x in r.isr if x != f)
        req = (Q_UPDATE_ISR, p, PartZ(b, r.epoch, isr, n.seen_epoch, r.zkv))
        n = n._replace(reps=_set(n.reps, p, r._replace(pend=True)), zk_out=(*n.zk_out, req))
        return ShrinkIsr(b, p, f), s._replace(nodes=_set(s.nodes, b, n))

    # -- faults --------------------------------------------------------------------------------
    def _crash(self, s: State, b: int) -> tuple[Any, State]:
        n = s.nodes[b]
        reps = tuple(Rep(-1, -1, (), 0, r.log, r.hw, (), False) for r in n.reps)
        n2 = n._replace(
            alive=False,
            bepoch=0,
            zk_out=(),
            zk_in=(),
            ctl_watch=False,
            watch=False,
            active_id=-1,
            ctx=None,
            events=(),
            pending=None,
            seen_epoch=0,
            reps=reps,
            cs=0,
        )
        nb = self.nb
        chans = s.chans
        for i in range(nb * nb):
            if chans[i] and (i // nb == b or i % nb == b):
                chans = _set(chans, i, ())
        return Crash(b), s._replace(nodes=_set(s.nodes, b, n2), chans=chans, crashes=s.crashes + 1)

    def _restart(self, s: State, b: int) -> tuple[Any, State]:
        zk = s.zk
        sess = zk.next_session
        n = s.nodes[b]
        n2 = n._replace(
            alive=True, session=sess, expired=False, zk_out=((Q_REGISTER_BROKER, True),), zk_in=()
        )
        zk = zk._replace(next_session=sess + 1)
        return Restart(b, sess), s._replace(zk=zk, nodes=_set(s.nodes, b, n2), restarts=s.restarts + 1)

    def _expire(self, s: State, b: int, counted: bool) -> tuple[Any, State]:
        zk = s.zk
        n = s.nodes[b]
        sess = n.session
        nodes = list(s.nodes)
        # the requests stay queued but are never applied in this session (2.x: they fail with
        # SessionExpired when the client notices; legacy ZkClient retries them in the new session)
        nodes[b] = n._replace(expired=True)
        if zk.controller is not None and zk.controller[1] == sess:
            zk = zk._replace(controller=None)
            self._fire(nodes, (EV_REELECT, -1), "ctl", skip=b)
        reg = zk.brokers[b]
        if reg is not None and reg[0] == sess:
            zk = zk._replace(brokers=_set(zk.brokers, b, None))
            self._fire(nodes, (EV_BROKER_CHANGE, -1), "watch", skip=b)
        return SessionExpire(b, sess), s._replace(
            zk=zk, nodes=tuple(nodes), expiries=s.expiries + (1 if counted else 0)
        )

    def _notice(self, s: State, b: int) -> tuple[Any, State]:
        zk = s.zk
        sess = zk.next_session
        zk = zk._replace(next_session=sess + 1)
        n = s.nodes[b]
        if self.queued and not self.legacy:
            # pre-2.2: the client reconnects at once; in-flight requests go to the new session; the
            # Expire event waits behind the events already queued
            n2 = n._replace(
                session=sess,
                expired=False,
                ctl_watch=False,
                events=n.events if (EV_EXPIRE, -1) in n.events else (*n.events, (EV_EXPIRE, -1)),
            )
            return SessionNotice(b, sess), s._replace(zk=zk, nodes=_set(s.nodes, b, n2))
        if self.legacy:
            # I0Itec ZkClient: new session, pending operations retried in it, watches re-installed;
            # KafkaHealthcheck re-registers; handleNewSession queued for the controller
            n2 = n._replace(
                session=sess,
                expired=False,
                zk_out=(*n.zk_out, (Q_REGISTER_BROKER, False)),
                events=n.events if (EV_EXPIRE, -1) in n.events else (*n.events, (EV_EXPIRE, -1)),
            )
            return SessionNotice(b, sess), s._replace(zk=zk, nodes=_set(s.nodes, b, n2))
        # 2.x: the in-flight event fails (SessionExpired); Expire is clear-and-put and processed
        # (activeControllerId = -1; onControllerResignation if it was active); then
        # RegisterBrokerAndReelect: register the broker, then Reelect.
        reps = tuple(r._replace(pend=False) if r.pend else r for r in n.reps)
        n1 = n._replace(
            session=sess, expired=False, zk_out=(), zk_in=(), ctl_watch=False, pending=None, reps=reps
        )
        s1 = s._replace(zk=zk, nodes=_set(s.nodes, b, n1))
        w = _W(self, s1, b, n1)
        w.events = ()
        was = w.active_id == b
        w.active_id = -1
        if was or w.ctx is not None:
            w.resign()
        w.zk_out = ((Q_REGISTER_BROKER, True),)
        w.pending = None
        s2 = self._commit(s1, w)
        # the registration response queues Startup (= Reelect here)
        return SessionNotice(b, sess), s2
