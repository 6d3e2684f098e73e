"""The controller's sequences step by step against the seeds (issue 58, item 3): each test walks
one handler of the model on a small state, one broker's controller taking every step (its events,
its ZooKeeper requests served one at a time), and checks the order of its ZooKeeper operations and
the requests it sends against the audit table of ``docs/fidelity.md`` ("The sequences, line by
line"): ``onControllerFailover`` (2.x, seed 004; 0.8, seed 000), ``onControllerResignation``,
broker startup (``KafkaServer.startup``: register, then serve), ``onBrokerFailure`` and
``onBrokerStartup`` (seed 001, Kafka 2.x's ``processBrokerChange``), the state machines' startup
(seed 003).
"""

from __future__ import annotations

from typing import Any

from model.controller import ControllerConfig, ControllerSystem, State
from model.controller.config import KafkaVersion
from model.controller.messages import BROKER_REQUESTS, REQUESTS
from model.controller.network import CONTROLLER_CHANNELS

Log = list[tuple[Any, ...]]


def pick(sys: ControllerSystem, s: State, text: str) -> State:
    """The successor of ``s`` by the action whose text is ``text``."""
    for a, t in sys.successors(s):
        if str(a) == text:
            return t
    raise AssertionError(f"{text!r} not enabled: {[str(a) for a, _ in sys.successors(s)]}")


def drive(sys: ControllerSystem, s: State, b: int) -> tuple[Log, State]:
    """Broker ``b``'s controller runs its queued events to the end, ZooKeeper serving only its
    session: the log of what it did, in order: ``("event", name)``, ``("zk", request)`` and,
    after the step that sent them, ``("send", {broker: [request, ...]})`` (the channels are
    per broker, so a step's sends are ordered per destination)."""
    log: Log = []
    nb = sys.nb
    while True:
        n = s.nodes[b]
        if n.zk_out:
            log.append(("zk", type(REQUESTS.view(n.zk_out[0])).__name__))
            _, t = sys.zookeeper.serve(s, b)
        elif n.events and n.pending is None:
            log.append(("event", type(n.events[0]).__name__))
            _, t = sys._process_event(s, b)
        else:
            return log, s
        sent: dict[int, list[str]] = {}
        for d in range(nb):
            q0, q1 = s.chans[b * nb + d], t.chans[b * nb + d]
            if q1 != q0:
                new = q1[len(q0) :] if q1[: len(q0)] == q0 else q1
                sent[d] = [BROKER_REQUESTS.view(m).kafka_name for m in new]
        if sent:
            log.append(("send", sent))
        s = t


def controller_dies(cfg: ControllerConfig) -> tuple[ControllerSystem, State]:
    """The settled cluster whose controller (broker 0, leader of partition 0) crashed and whose
    session expired: brokers 1 and 2 have a ``Reelect`` queued."""
    sys = ControllerSystem(cfg)
    s = sys.init_states()[0]
    s = pick(sys, s, "broker 0: crashes")
    return sys, pick(sys, s, "broker 0: ZooKeeper session 1 expires (server side)")


def test_failover_2x_follows_seed_004() -> None:
    """2.x ``elect`` then ``onControllerFailover`` (seed 004: 1245-1328): getControllerId,
    the election multi, then (one step) the handlers, ``deleteIsrChangeNotifications`` and
    ``initializeControllerContext``, ``sendUpdateMetadataRequest`` before the state machines,
    ``replicaStateMachine.startup()`` (LeaderAndIsr to the live replicas), then
    ``partitionStateMachine.startup()``: the offline partition's election reads and writes its
    state znode, then LeaderAndIsr and UpdateMetadata."""
    sys, s = controller_dies(ControllerConfig(brokers=3))
    # an ISR change notification left by the old controller's time (partition 0, zkVersion 1)
    s = s._replace(zk=s.zk._replace(isr_changes=((0, 1),)))
    log, t = drive(sys, s, 1)
    assert log == [
        ("event", "Reelect"),
        ("zk", "GetControllerIdAndEpoch"),
        ("zk", "RegisterControllerAndIncrementControllerEpoch"),
        ("zk", "ReadControllerContext"),
        # sendUpdateMetadataRequest(liveOrShuttingDownBrokerIds), then the replica startup's
        # LeaderAndIsr to broker 1 (its UpdateMetadata to broker 2 is the same request: one)
        ("send", {1: ["UpdateMetadata", "LeaderAndIsr"], 2: ["UpdateMetadata"]}),
        ("zk", "GetTopicPartitionStates"),
        ("zk", "UpdateLeaderAndIsr"),
        ("send", {1: ["LeaderAndIsr", "UpdateMetadata"], 2: ["UpdateMetadata"]}),
    ]
    assert t.zk.isr_changes == ()  # deleteIsrChangeNotifications (seed 004: 1311)
    assert t.zk.parts[0].leader == 1 and t.nodes[1].watch


def test_failover_deletes_no_notification_when_fenced() -> None:
    """``deleteIsrChangeNotifications(epochZkVersion)`` is a fenced multi: a controller whose
    epoch znode moved since it was elected deletes nothing."""
    sys, s = controller_dies(ControllerConfig(brokers=3))
    s = s._replace(zk=s.zk._replace(isr_changes=((0, 1),)))
    # run broker 1 up to its context read, then move /controller_epoch under it
    s = sys._process_event(s, 1)[1]
    s = sys.zookeeper.serve(s, 1)[1]
    s = sys.zookeeper.serve(s, 1)[1]
    assert type(REQUESTS.view(s.nodes[1].zk_out[0])).__name__ == "ReadControllerContext"
    s = s._replace(zk=s.zk._replace(epoch_version=s.zk.epoch_version + 1))
    t = sys.zookeeper.serve(s, 1)[1]
    assert t.zk.isr_changes == ((0, 1),)


def test_failover_0_8_follows_seed_000() -> None:
    """0.8 ``elect`` then ``onControllerFailover`` (seed 000: 111-150, 238-281): read
    ``/controller``, create it, ``readControllerEpochFromZookeeper``,
    ``incrementControllerEpoch``, the listeners and ``initializeControllerContext`` (no ISR
    change notifications in 0.8: they stay), ``replicaStateMachine.startup()``,
    ``partitionStateMachine.startup()``, then ``sendUpdateMetadataRequest`` (after the state
    machines, unlike 2.x)."""
    sys, s = controller_dies(ControllerConfig(brokers=3, kafka_version=KafkaVersion.KAFKA_0_8))
    s = s._replace(zk=s.zk._replace(isr_changes=((0, 1),)))
    log, t = drive(sys, s, 1)
    assert log == [
        ("event", "Reelect"),
        ("zk", "GetControllerIdAndEpoch"),
        ("zk", "CreateControllerPath"),
        ("zk", "ReadControllerEpoch"),
        ("zk", "IncrementControllerEpoch"),
        ("zk", "ReadControllerContext"),
        ("send", {1: ["LeaderAndIsr", "UpdateMetadata"], 2: ["UpdateMetadata"]}),
        ("zk", "GetTopicPartitionStates"),
        ("zk", "UpdateLeaderAndIsr"),
        ("send", {1: ["LeaderAndIsr", "UpdateMetadata"], 2: ["UpdateMetadata"]}),
    ]
    assert t.zk.isr_changes == ((0, 1),)


def test_resignation_follows_seed_004() -> None:
    """``onControllerResignation`` (seed 004: 1359-1393; 000: 301-331) writes nothing to
    ZooKeeper: the handlers unregistered (the watch flag), ``controllerChannelManager.shutdown()``
    (the queued requests dropped), ``resetContext``; 2.x's ``Expire`` then registers the broker
    again (``RegisterBrokerAndReelect``) and elects after its response."""
    sys = ControllerSystem(ControllerConfig(brokers=3))
    s = sys.init_states()[0]
    c = sys.controller_cls(sys, s, 0, s.nodes[0])
    c.send_requests_to_brokers(((1, c.entry(0, s.zk.parts[0])),))  # requests queued to 1 and 2
    s = pick(sys, s, "broker 0: ZooKeeper session 1 expires (server side)")
    t = next(t for a, t in sys.successors(s) if str(a).startswith("broker 0: notices its session expired"))
    n = t.nodes[0]
    assert n.ctx is None and not n.watch and n.active_id == -1
    assert t.chans[:3] == ((), (), ())
    assert [type(REQUESTS.view(r)).__name__ for r in n.zk_out] == ["RegisterBroker"]
    log, _ = drive(sys, t, 0)
    assert log[:3] == [("zk", "RegisterBroker"), ("event", "Startup"), ("zk", "GetControllerIdAndEpoch")]


def restarted_with_request_queued(cfg: ControllerConfig) -> tuple[ControllerSystem, State]:
    """Broker 1 crashed and restarted before the controller noticed (its ``BrokerChange`` still
    queued); the controller (broker 0,
    still holding broker 1's old epoch) sends it a LeaderAndIsr of the current state."""
    sys = ControllerSystem(cfg)
    s = sys.init_states()[0]
    s = pick(sys, s, "broker 1: crashes")
    s = pick(sys, s, "broker 1: ZooKeeper session 2 expires (server side)")
    s = pick(sys, s, "broker 1: restarts with ZooKeeper session 4")
    c = sys.controller_cls(sys, s, 0, s.nodes[0])
    c.send_requests_to_brokers(((1, c.entry(0, s.zk.parts[0])),))
    return sys, c.commit(s)


def test_a_started_broker_serves_only_once_registered() -> None:
    """``KafkaServer.startup`` (2.x): ``socketServer.startup(startupProcessors = false)``,
    ``registerBroker``, ..., the processors started at the end: the request waits in the
    channel until the broker's registration is answered, then is applied with the broker epoch
    check (an older epoch: STALE_BROKER_EPOCH, dropped)."""
    sys, s = restarted_with_request_queued(ControllerConfig(brokers=3))
    ch = 0 * sys.nb + 1
    assert s.chans[ch] and s.nodes[1].bepoch == 0
    assert ch not in set(CONTROLLER_CHANNELS.connections(sys, s))
    assert type(REQUESTS.view(s.nodes[1].zk_out[0])).__name__ == "RegisterBroker"
    s = sys.zookeeper.serve(s, 1)[1]
    assert s.nodes[1].bepoch > 1 and ch in set(CONTROLLER_CHANNELS.connections(sys, s))
    reps = s.nodes[1].reps
    while s.chans[ch]:
        s = sys.replica_manager.deliver(s, 0, 1)[1]
    assert s.nodes[1].reps == reps  # every request of the old epoch was rejected


def test_0_8_broker_serves_before_it_registers() -> None:
    """0.8's ``KafkaServer.startup`` starts the socket server before ``KafkaHealthcheck``
    registers: the restarted broker applies the request at once (``serve_before_registration``,
    implied by ``kafka_version = "0.8"``)."""
    sys, s = restarted_with_request_queued(ControllerConfig(brokers=3, kafka_version=KafkaVersion.KAFKA_0_8))
    assert s.nodes[1].bepoch == 0 and 0 * sys.nb + 1 in set(CONTROLLER_CHANNELS.connections(sys, s))


def test_broker_failure_follows_seed_001() -> None:
    """``processBrokerChange`` / ``onBrokerFailure`` of a follower (seed 001: 178-185): read
    ``/brokers/ids``; no partition lost its leader, so no election; OfflineReplica reads the
    state and writes the ISR without the broker (``doRemoveReplicasFromIsr``), then LeaderAndIsr
    to the other replica and UpdateMetadata to the live brokers."""
    sys = ControllerSystem(ControllerConfig(brokers=3))
    s = sys.init_states()[0]
    s = pick(sys, s, "broker 1: crashes")
    s = pick(sys, s, "broker 1: ZooKeeper session 2 expires (server side)")
    log, t = drive(sys, s, 0)
    assert log == [
        ("event", "BrokerChange"),
        ("zk", "GetAllBrokersInCluster"),
        ("zk", "GetTopicPartitionStates"),
        ("zk", "UpdateLeaderAndIsr"),
        ("send", {0: ["LeaderAndIsr", "UpdateMetadata"], 2: ["UpdateMetadata"]}),
    ]
    assert t.zk.parts[0].isr == (0,) and t.nodes[0].ctx.live[1] == 0


def test_dead_brokers_leave_the_live_set_after_the_new_ones_start() -> None:
    """Kafka 2.x's ``processBrokerChange``: ``addLiveBrokers(new)``, ``onBrokerStartup(new)``,
    and only then ``removeLiveBrokers(dead)``, ``onBrokerFailure(dead)``: the UpdateMetadata
    ``onBrokerStartup`` sends still lists the dead broker (0.8 replaces the live set at once)."""
    for version, listed in ((KafkaVersion.KAFKA_2_X, (0, 1, 2)), (KafkaVersion.KAFKA_0_8, (0, 2))):
        cfg = ControllerConfig(brokers=3, max_crashes=2, kafka_version=version)
        sys = ControllerSystem(cfg)
        s = sys.init_states()[0]
        s = pick(sys, s, "broker 2: crashes")
        s = pick(sys, s, "broker 2: ZooKeeper session 3 expires (server side)")
        s = drive(sys, s, 0)[1]  # broker 2 dead in the controller's context
        s = pick(sys, s, "broker 2: restarts with ZooKeeper session 4")
        s = sys.zookeeper.serve(s, 2)[1]  # registered
        s = pick(sys, s, "broker 1: crashes")
        s = pick(sys, s, "broker 1: ZooKeeper session 2 expires (server side)")
        s = sys.zookeeper.serve(s, 0)[1] if s.nodes[0].zk_out else s
        s = sys._process_event(s, 0)[1]
        s = sys.zookeeper.serve(s, 0)[1]  # GetAllBrokersInCluster: 2 new, 1 dead
        first_um = BROKER_REQUESTS.view(s.chans[0 * sys.nb + 2][0])
        assert first_um.kafka_name == "UpdateMetadata"
        assert first_um.data.live_brokers == listed, version
        t = drive(sys, s, 0)[1]
        assert t.nodes[0].ctx.live[1] == 0 and t.nodes[0].ctx.live[2]
