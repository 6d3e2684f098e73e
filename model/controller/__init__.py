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
``doElectLeaderForPartitions``, ``leaderForOffline``; the replica state machine's startup
moves only the live replicas, Kafka 0.8 to 2.2's, and ``offline_replicas_on_startup`` adds
Kafka 2.3's OfflineReplica batch for the dead ones, KAFKA-3143), seed 002
(``doRemoveReplicasFromIsr``), seed 000 (the 0.8 ``ZookeeperLeaderElector`` and
``onControllerFailover``: the ``elector = legacy`` variant; the whole 0.8 controller with
``kafka_version = "0.8"``, ``v08.py``).

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
* UpdateMetadata carries the live brokers and, per partition sent, its leader, leader
  epoch and ISR (not the zkVersion, replicas or offline replicas); brokers keep them in
  their metadata cache (``Node.mc_live``, ``Node.mc_parts``), which a crash empties. The
  data plane does not read the cache (the producer writes to the broker that believes it
  leads). An UpdateMetadata equal to the last one queued in its channel is not queued
  again (only UpdateMetadata writes the cache, so applying it twice changes nothing).
* ``/isr_change_notification`` has one child per leader ISR change, named by the zkVersion
  the change wrote instead of a sequence number (Kafka batches a broker's changes every few
  seconds into one child); the controller deletes the children it read, no others.
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
  them like Kafka (``strict_deletion_transitions`` records them). ``completeDeleteTopic``
  deletes the topic's znodes in one step; ``recursive_topic_deletion`` sends them one request
  at a time as Kafka does (each partition's state znode, the topic's, the deletion znode), so a
  controller that dies in between leaves a half-deleted topic (KAFKA-6650). The controller drops its
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

from model.controller.config import ControllerConfig, Elector, KafkaVersion
from model.controller.state import Node, State, Zk
from model.controller.system import ControllerSystem
from model.facade import forward

__all__ = ["ControllerConfig", "ControllerSystem", "Elector", "KafkaVersion", "Node", "State", "Zk"]

# every other public name of the submodules, found on first use (``from model.controller import ...`` as before)
__getattr__, __dir__ = forward(
    __name__,
    ["actions", "config", "messages", "state", "system", "program", "responses", "coverage", "events"],
    globals(),
)
