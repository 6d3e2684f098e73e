"""The actions (one step each), as ``NamedTuple`` values whose ``str`` reads like a log line,
each declaring what it does (its effects, ``effects.py``: properties, guards and coverage
select steps by effect), and the action kind lists (all, admin, fair, faults).

>>> str(Crash(2))
'broker 2: crashes'
"""

from __future__ import annotations

from typing import Any, NamedTuple

from explorer.core import effects
from explorer.speedups import install_fast_new
from model.action_text import java, says
from model.controller.effects import Effect
from model.controller.events import ControllerChange, ControllerEvent
from model.controller.messages import BrokerRequest, StopReplicaRequest


def _by_request_name(value: object) -> str:
    """A field in a log line: a ZooKeeper request or response by the request's name
    (``kafka_call``, or its ``describe()`` where one request type makes several calls),
    anything else as Java prints it."""
    describe = getattr(value, "describe", None)
    if describe is not None:
        return str(describe())
    call = getattr(value, "kafka_call", None)
    return call if call is not None else java(value)


@effects(Effect.PROCESSES_CONTROLLER_EVENT)
class ProcessEvent(NamedTuple):
    """The controller of a broker takes the head of its event queue."""

    broker: int
    event: ControllerEvent

    def __str__(self) -> str:
        ev = self.event
        extra = f" (broker {ev.arg})" if type(ev) is ControllerChange and ev.arg >= 0 else ""
        return f"broker {self.broker}: controller processes {ev.kafka_name}{extra}"


@effects(Effect.APPLIES_ZK_REQUEST)
@says("ZooKeeper: applies {req} from session {session} (broker {broker})", _by_request_name)
class ZkServe(NamedTuple):
    """The ZooKeeper server applies the head request of a session."""

    broker: int
    session: int
    req: Any  #: a ZooKeeper request (``messages.py``)


@effects(Effect.REPLIES_ZK_RESPONSE)
@says("broker {broker}: receives the response to {resp}", _by_request_name)
class ZkReply(NamedTuple):
    """A broker receives the head ZooKeeper response of its session."""

    broker: int
    resp: Any  #: a ZooKeeper response (``responses.py``)


@effects(Effect.DELIVERS_CONTROLLER_REQUEST)
class Deliver(NamedTuple):
    """A broker receives the head request of a controller's channel to it."""

    sender: int
    dest: int
    msg: BrokerRequest

    def __str__(self) -> str:
        msg = self.msg
        kind = msg.kafka_name
        match msg:
            case StopReplicaRequest(data=data):
                kind += "(delete=true)" if data.delete else "(delete=false)"
        return (
            f"broker {self.dest}: receives {kind} from controller {self.sender} "
            f"(controller epoch {msg.controller_epoch}, broker epoch {msg.broker_epoch})"
        )


@effects(Effect.CRASHES_BROKER)
@says("broker {broker}: crashes")
class Crash(NamedTuple):
    """A broker process dies (its ZooKeeper session lives on until it expires)."""

    broker: int


@effects(Effect.RESTARTS_BROKER)
@says("broker {broker}: restarts with ZooKeeper session {session}")
class Restart(NamedTuple):
    """A crashed broker starts with a new ZooKeeper session and registers."""

    broker: int
    session: int


@effects(Effect.EXPIRES_SESSION)
@says("broker {broker}: ZooKeeper session {session} expires (server side)")
class SessionExpire(NamedTuple):
    """The ZooKeeper server expires a session (ephemerals deleted, watches fired)."""

    broker: int
    session: int


@effects(Effect.NOTICES_SESSION_EXPIRY)
@says("broker {broker}: notices its session expired, opens ZooKeeper session {session}")
class SessionNotice(NamedTuple):
    """A broker's ZooKeeper client notices its session expired and opens a new one."""

    broker: int
    session: int


@effects(Effect.PRODUCES)
@says("producer: appends a record to partition {partition} at leader {broker}")
class Produce(NamedTuple):
    """The producer appends a record (acks=all) at the broker that believes it leads."""

    broker: int
    partition: int


@effects(Effect.FETCHES)
@says("broker {broker}: fetches partition {partition} from leader {leader}")
class Fetch(NamedTuple):
    """A follower fetches from the leader it knows."""

    broker: int
    partition: int
    leader: int


@effects(Effect.SHRINKS_ISR)
@says("broker {broker}: shrinks the ISR of partition {partition}, removing {follower}")
class ShrinkIsr(NamedTuple):
    """A leader removes a lagging, dead or stopped follower from the ISR (a ZooKeeper write)."""

    broker: int
    partition: int
    follower: int


@effects(Effect.ADMIN_REQUEST)
@says("admin: creates topic {topic} (/brokers/topics/{topic} with its assignment)")
class AdminCreateTopic(NamedTuple):
    """An admin client creates ``/brokers/topics/<t>`` with its assignment (one ZooKeeper write)."""

    topic: int

    def arrow(self) -> tuple[str, str, str]:
        """The sequence-diagram arrow: admin to ZooKeeper, the topic created."""
        return "admin", "ZooKeeper", f"create topic {self.topic}"


@effects(Effect.TIME_PASSES)
@says("time passes")
class TimePasses(NamedTuple):
    """Stuttering (``liveness`` only): time passes and nothing else happens, so that a
    behaviour stuck in a state is a lasso rather than an end."""


@effects(Effect.ADMIN_REQUEST)
@says("admin: queues topic {topic} for deletion (create /admin/delete_topics/{topic})")
class AdminDeleteTopic(NamedTuple):
    """An admin queues a topic for deletion: create ``/admin/delete_topics/<t>``."""

    topic: int


@effects(Effect.ADMIN_REQUEST)
@says("admin: adds partitions to topic {topic} (setData /brokers/topics/{topic})")
class AdminAddPartitions(NamedTuple):
    """An admin adds partitions to a topic: setData ``/brokers/topics/<t>`` with the new assignment."""

    topic: int


@effects(Effect.ADMIN_REQUEST)
@says("admin: reassigns partition {partition} to {target} (/admin/reassign_partitions)")
class AdminReassign(NamedTuple):
    """An admin starts a reassignment: ``/admin/reassign_partitions`` gets ``{partition: RAR}``."""

    partition: int
    target: tuple[int, ...]


@effects(Effect.ADMIN_REQUEST)
@says("admin: creates /admin/preferred_replica_election for partitions {partitions}")
class AdminPreferredElection(NamedTuple):
    """An admin asks for a preferred replica election of every partition."""

    partitions: tuple[int, ...]


@effects(Effect.ADMIN_REQUEST)
@says("admin: enables unclean.leader.election.enable for topic {topic} (/config/topics)")
class AdminEnableUnclean(NamedTuple):
    """An admin sets ``unclean.leader.election.enable=true`` on a topic (dynamic config)."""

    topic: int


@effects(Effect.ADMIN_REQUEST, Effect.ADMIN_ELECTS_LEADERS)
@says("admin: asks controller {controller} for an unclean leader election (ElectLeaders)")
class AdminUncleanElection(NamedTuple):
    """An admin asks the controller for an unclean leader election of every partition
    (``kafka-leader-election.sh --election-type unclean``: an ElectLeaders request)."""

    controller: int


@effects(Effect.FIRES_AUTO_REBALANCE)
@says("broker {broker}: scheduler queues AutoPreferredReplicaLeaderElection")
class AutoRebalanceTick(NamedTuple):
    """The active controller's scheduler fires the auto leader rebalance task."""

    broker: int


@effects(Effect.REQUESTS_CONTROLLED_SHUTDOWN)
@says("broker {broker}: sends ControlledShutdownRequest to controller {controller}")
class ControlledShutdown(NamedTuple):
    """A broker begins shutting down: it sends ControlledShutdownRequest to the controller."""

    broker: int
    controller: int


@effects(Effect.COMPLETES_SHUTDOWN)
@says("broker {broker}: stops after its controlled shutdown (closes ZooKeeper session {session})")
class ShutdownComplete(NamedTuple):
    """A broker whose controlled shutdown was answered stops (its ZooKeeper session is closed)."""

    broker: int
    session: int


ADMIN_KINDS = (
    "AdminDeleteTopic",
    "AdminAddPartitions",
    "AdminReassign",
    "AdminPreferredElection",
    "AdminEnableUnclean",
    "AutoRebalanceTick",
    "ControlledShutdown",
    "ShutdownComplete",
    "AdminUncleanElection",
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
#: the admin client's requests: its ZooKeeper writes and its ElectLeaders request
ADMIN_REQUESTS = (
    AdminCreateTopic,
    AdminDeleteTopic,
    AdminAddPartitions,
    AdminReassign,
    AdminPreferredElection,
    AdminEnableUnclean,
    AdminUncleanElection,
)
FAULT_KINDS = (
    TimePasses,
    Crash,
    Restart,
    SessionExpire,
    SessionNotice,
    Produce,
    ShrinkIsr,
    *ADMIN_REQUESTS,
    AutoRebalanceTick,
    ControlledShutdown,
    ShutdownComplete,
)


# each action class's call builds its tuple in C (explorer._speedups; its __new__ is unchanged)
for _kind in [v for v in list(globals().values()) if isinstance(v, type) and v.__module__ == __name__]:
    if issubclass(_kind, tuple) and hasattr(_kind, "_fields") and "__new__" in _kind.__dict__:
        install_fast_new(_kind)
del _kind


# ---------------------------------------------------------------------------------------
