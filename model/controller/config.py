"""The controller model's configuration: bounds (fault budgets, max epoch, records, admin
workflow budgets) and variants (named switches that bring back an older design).

>>> ControllerConfig(brokers=3, replication_factor=2).replicas()
((0, 1),)
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any

from explorer.config import ConfigError, key, validate


class KafkaVersion(enum.StrEnum):
    """Which controller as a whole: the finer variant keys it implies are ``BY_VERSION``'s."""

    KAFKA_2_X = "2.x"  #: the 2.x controller (seeds 001-004), each finer key free
    KAFKA_0_8 = "0.8"  #: seed 000's controller as printed (``model/controller/v08.py``)


class ZkWriteFencing(enum.StrEnum):
    """What a controller's ZooKeeper write is conditioned on."""

    CONTROLLER_EPOCH = "controller-epoch"  #: multi(check /controller_epoch version, op) (KAFKA-6082)
    PARTITION_VERSION = "partition-version"  #: only the partition znode's version (before KAFKA-6082)


class Elector(enum.StrEnum):
    """Which controller election code runs."""

    MODERN = "modern"  #: 2.x elect / registerControllerAndIncrementControllerEpoch (seed 004)
    LEGACY = "legacy"  #: 0.8 ZookeeperLeaderElector + onControllerFailover (seed 000)


class LeaderSelectors(enum.StrEnum):
    """Which partition leader election rules the controller's PartitionStateMachine runs."""

    KAFKA_2_X = "2.x"  #: 2.x ``Election.leaderForXxx`` (seeds 002, 003): leaders in assignment order
    KAFKA_0_8 = "0.8"  #: seed 000's ``PartitionLeaderSelector`` classes (controlled shutdown: ISR head)


class ReplicaTable(enum.StrEnum):
    """Which ReplicaStateMachine valid-previous-states table the controller checks."""

    LATER_2X = "later-2.x"  #: also OfflineReplica -> ReplicaDeletionIneligible (seed 001's deletion prose)
    PRINTED = "printed"  #: the table seeds 000 and 001 print: Ineligible only from DeletionStarted


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


@dataclass(frozen=True)
class ByVersion:
    """The default of a key that ``kafka_version`` decides: its 2.x and its 0.8 value.

    >>> str(ByVersion(Elector.MODERN, Elector.LEGACY))
    'modern (kafka_version 0.8: legacy)'
    """

    kafka_2_x: Any
    kafka_0_8: Any

    def __str__(self) -> str:
        return f"{_show(self.kafka_2_x)} (kafka_version 0.8: {_show(self.kafka_0_8)})"


def _show(value: Any) -> str:
    """A key's value as a TOML file writes it (``false``, ``legacy``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _coerce_choice(name: str, kind: Any, value: Any) -> Any:
    """``value`` as a member of enum ``kind`` (by value or name), or ConfigError naming ``name``."""
    if not (isinstance(kind, type) and issubclass(kind, enum.Enum)):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)  # read as a TOML number: 0.8 -> "0.8"
    for m in kind:
        if value is m or value == m.value or value == m.name:
            return m
    allowed = ", ".join(str(m.value) for m in kind)
    raise ConfigError(f"{name}: expected one of {allowed}, got {value!r}")


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
    max_duplicate_deliveries: int = key(
        0, "controller requests applied twice (response lost, resent: model/controller/faults)", min=0, max=9
    )
    max_zk_connection_losses: int = key(
        0,
        "ZooKeeper connections lost after the server applied a request, re-established in the same "
        "session (response lost, request resent: model/controller/faults)",
        min=0,
        max=9,
    )
    max_orphaned_sessions: int = key(
        0,
        "ZooKeeper session expiries of live brokers whose ephemerals the server keeps for good "
        "(ZOOKEEPER-2985, a ZooKeeper leader restart: model/controller/faults)",
        min=0,
        max=9,
    )
    start_controller_when_already_elected: bool = key(
        False,
        "elect, finding /controller already naming this broker while it runs no controller for "
        "/controller_epoch, runs onControllerFailover (KAFKA-13407's fix, apache/kafka PR 11476, "
        "never merged; false: Kafka's elect returns)",
    )
    send_update_metadata: bool = key(True, "model UpdateMetadata requests")
    session_expiry_handling: ExpiryHandling = key(
        ByVersion(ExpiryHandling.CLEAR_AND_PUT, ExpiryHandling.QUEUED),
        "2.x client on noticing expiry (legacy elector: always queued, I0Itec ZkClient)",
        choices=list(ExpiryHandling),
    )
    zk_responses: ZkResponses = key(
        ZkResponses.MERGED, "when a client receives a ZooKeeper response", choices=list(ZkResponses)
    )
    zk_write_fencing: ZkWriteFencing = key(
        ByVersion(ZkWriteFencing.CONTROLLER_EPOCH, ZkWriteFencing.PARTITION_VERSION),
        "controller ZooKeeper writes conditioned on",
        choices=list(ZkWriteFencing),
    )
    broker_epoch: bool = key(
        ByVersion(True, False), "KIP-380 broker epochs (false: a fast bounce can go unseen)"
    )
    elector: Elector = key(
        ByVersion(Elector.MODERN, Elector.LEGACY), "controller election code", choices=list(Elector)
    )
    serve_before_registration: bool = key(
        ByVersion(False, True),
        "a started broker applies controller requests before it has registered in ZooKeeper (0.8's "
        "KafkaServer.startup starts the socket server before KafkaHealthcheck registers; 2.x starts "
        "the socket server's processors at the end of startup, after registerBroker: requests sent "
        "to it wait in the controller's channel, RequestSendThread resending until answered)",
    )
    leader_selectors: LeaderSelectors = key(
        ByVersion(LeaderSelectors.KAFKA_2_X, LeaderSelectors.KAFKA_0_8),
        "partition leader election rules (0.8: seed 000's selectors, whose controlled-shutdown "
        "selector takes the head of the ISR)",
        choices=list(LeaderSelectors),
    )
    replica_table: ReplicaTable = key(
        ByVersion(ReplicaTable.LATER_2X, ReplicaTable.PRINTED),
        "ReplicaStateMachine table (printed: seeds 000/001, ReplicaDeletionIneligible only from "
        "ReplicaDeletionStarted; later-2.x: also from OfflineReplica, as seed 001's deletion steps need)",
        choices=list(ReplicaTable),
    )
    follower_truncation: FollowerTruncation = key(
        ByVersion(FollowerTruncation.LEADER_EPOCH, FollowerTruncation.HIGH_WATERMARK),
        "follower log truncation",
        choices=list(FollowerTruncation),
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
    max_admin_unclean_elections: int = key(
        0,
        "an admin runs kafka-leader-election.sh --election-type unclean (ElectLeaders to the controller: "
        "OfflinePartitionLeaderElectionStrategy(allowUnclean = true) for partitions without a live leader)",
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
    recursive_topic_deletion: bool = key(
        False,
        "completeDeleteTopic deletes a topic's znodes one request at a time, as Kafka's "
        "deleteTopicZNode (deleteRecursive) and deleteTopicDeletions do: each partition's state znode, "
        "then /brokers/topics/<t>, then /admin/delete_topics/<t> (a controller that dies between "
        "them leaves a half-deleted topic: KAFKA-6650); false: all three in one step",
    )
    offline_replicas_on_startup: bool = key(
        False,
        "replicaStateMachine.startup also moves the dead brokers' replicas to OfflineReplica "
        "(doRemoveReplicasFromIsr: a dead follower leaves the ISR, a dead leader becomes -1), as "
        "Kafka 2.3 does (KAFKA-3143); false: the seeds' startup (003: 30-35; 000: 697-713, Kafka "
        "0.8 to 2.2), which moves only the live replicas, to OnlineReplica",
    )
    liveness: bool = key(False, "check the eventually properties (bfs keeps every explored edge in memory)")
    kafka_version: KafkaVersion = key(
        KafkaVersion.KAFKA_2_X,
        "the controller as a whole (0.8: seed 000's, model/controller/v08.py; it implies the 0.8 value "
        "of elector, leader_selectors, replica_table, zk_write_fencing, broker_epoch, "
        "follower_truncation, session_expiry_handling and serve_before_registration, and rejects a key set otherwise)",
        choices=list(KafkaVersion),
    )

    def __post_init__(self) -> None:
        self._resolve_by_version()
        validate(self)
        if self.kafka_version is KafkaVersion.KAFKA_0_8 and self.max_admin_unclean_elections:
            raise ConfigError(
                "max_admin_unclean_elections: kafka_version 0.8 has no admin unclean election "
                "(ElectLeaders, Kafka 2.4); set it to 0"
            )
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

    def _resolve_by_version(self) -> None:
        """Give each key left at its ``ByVersion`` default the value of ``kafka_version``;
        with 0.8, a key set to another value is a contradiction (ConfigError naming it).

        >>> ControllerConfig(kafka_version="0.8").elector
        <Elector.LEGACY: 'legacy'>
        >>> ControllerConfig(kafka_version="0.8", elector="modern")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        explorer.config.ConfigError: elector: modern contradicts kafka_version = 0.8 (which implies legacy)
        """
        version = _coerce_choice("kafka_version", KafkaVersion, self.kafka_version)
        object.__setattr__(self, "kafka_version", version)
        v08 = version is KafkaVersion.KAFKA_0_8
        for f in dataclasses.fields(self):
            implied = f.default
            if not isinstance(implied, ByVersion):
                continue
            value = getattr(self, f.name)
            if isinstance(value, ByVersion):
                object.__setattr__(self, f.name, value.kafka_0_8 if v08 else value.kafka_2_x)
                continue
            if v08:
                given = _coerce_choice(f.name, type(implied.kafka_0_8), value)
                if given != implied.kafka_0_8:
                    raise ConfigError(
                        f"{f.name}: {_show(given)} contradicts kafka_version = 0.8 "
                        f"(which implies {_show(implied.kafka_0_8)})"
                    )

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
            or self.max_admin_unclean_elections
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
