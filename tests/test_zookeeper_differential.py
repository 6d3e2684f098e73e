"""The model's ZooKeeper against the real one (issue 32): a Hypothesis state machine applies each
step of Kafka's ZooKeeper recipes, through the very functions the controller model uses
(``ZooKeeperServer.serve`` and ``.expire`` of ``model/controller/zookeeper.py``), to the model
and, through ``kazoo``, to a real standalone server (``tests/zookeeper_server.py``), and requires
the same outcome after every step: each request's result (success, the controller found, the
epoch and its zkVersion, the broker epoch's order, the partition state and its zkVersion), the
tree the controller relies on, which brokers' ``/controller`` watches fired, and what survives a
session expiry. Hypothesis shrinks a disagreement to its shortest sequence of steps.

The steps (three brokers, each with its own session; two partitions):

========================  ======================================================================
model request             the same on the real server (Kafka 2.x ``KafkaZkClient``)
========================  ======================================================================
``RegisterBroker``        create ephemeral ``/brokers/ids/<b>``; NodeExists owned by this session
                          is success with that znode's czxid (``checkedEphemeralCreate``)
``GetControllerIdAndEpoch``  get ``/controller`` with a watch, get ``/controller_epoch``
``RegisterController...`` one multi: create ephemeral ``/controller``, setData
                          ``/controller_epoch`` conditioned on the version read
``CreateControllerPath``  (0.8) create ephemeral ``/controller``; NodeExists: read its owner
``ReadControllerEpoch``   get ``/controller_epoch``
``IncrementControllerEpoch``  setData ``/controller_epoch`` conditioned on a version
``DeleteControllerPath``  delete ``/controller``
``UpdateLeaderAndIsr``    per partition one multi: check ``/controller_epoch``'s version (the
                          fence), then create or a conditional setData of the partition state
``UpdateIsr``             a leader's conditional setData of the partition state, then a
                          sequential ``/isr_change_notification/isr_change_`` child
``GetAllIsrChangeNotifications``  the children and their data
``DeleteIsrChangeNotifications``  per child one multi: check the fence, delete
session end               expiry (a second client on the same session id and password closes
                          it) or the broker's own close; the broker then opens a new session
========================  ======================================================================

Deliberate abstractions of the model, mapped here (``docs/fidelity.md``, *The model's ZooKeeper
against the real server*):

- A broker epoch is a per-broker counter, not the czxid: only its order matters to the
  controller (a broker that re-registers has a larger epoch), so the test compares the order.
- A watch on ``/controller`` stays armed in the model until the session ends; a real watch fires
  once. Kafka re-reads ``/controller`` in every handler the event runs (re-arming it), so the
  test re-arms a real watch after it fires, as Kafka's handler would.
- The winner of an election does not queue its own ``ControllerChange`` (it would re-read
  ``/controller`` and find itself): the real server does notify it, so the actor of a create is
  left out of the comparison of firings for that step.
- An ISR update and its change notification are one step in the model (Kafka writes the
  notification right after the partition state).
- No data bytes beyond what the controller reads, no ACLs; sequential nodes only for the ISR
  change notifications.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Set
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from invariants.mutants.controller import FenceLessThan
from model.controller import ControllerConfig, ControllerSystem
from model.controller.config import ZkResponses
from model.controller.events import BrokerChange, ControllerChange, IsrChangeNotification, Reelect
from model.controller.messages import (
    CreateControllerPath,
    DeleteControllerPath,
    DeleteIsrChangeNotifications,
    GetAllIsrChangeNotifications,
    GetControllerIdAndEpoch,
    IncrementControllerEpoch,
    ReadControllerContext,
    ReadControllerEpoch,
    RegisterBroker,
    RegisterControllerAndIncrementControllerEpoch,
    UpdateIsr,
    UpdateLeaderAndIsr,
)
from model.controller.state import PartZ, State
from model.controller.zookeeper import ZooKeeperServer as ZooKeeperServer_
from tests.zookeeper_server import ZooKeeperServer, missing

pytestmark = [
    pytest.mark.zookeeper,
    pytest.mark.skipif(missing() is not None, reason=f"zookeeper: {missing()}"),
]

BROKERS = 3
PARTITIONS = 2
#: examples of the stateful test (KAFKA_MC_ZK_EXAMPLES; .ci/run uses the default)
EXAMPLES = int(os.environ.get("KAFKA_MC_ZK_EXAMPLES", "2000"))


def wrong(version: int, k: int) -> int:
    """A version that is not ``version``: below or above it as ``k`` picks, never negative (-1
    is ZooKeeper's "any version", which no Kafka request sends).

    >>> [wrong(0, k) for k in range(4)], wrong(5, 0)
    ([1, 7, 1, 7], 3)
    """
    options = [v for v in (version - 2, version - 1, version + 1, version + 7) if v >= 0]
    return options[k % len(options)]


#: which wrong version a "stale" step uses (None: the right one)
STALE = st.one_of(st.none(), st.integers(0, 3))

_SERVER: ZooKeeperServer | None = None


@pytest.fixture(scope="module")
def server() -> Any:
    global _SERVER
    with ZooKeeperServer() as zk:
        _SERVER = zk
        yield zk
    _SERVER = None


#: the model's watch events and the znode whose watch stands for each
WATCHED = {
    ControllerChange: "/controller",
    Reelect: "/controller",
    BrokerChange: "/brokers/ids",
    IsrChangeNotification: "/isr_change_notification",
}


def model_fired(t: State) -> set[tuple[int, str]]:
    """The (broker, path) pairs of the watch events the model queued."""
    return {(b, WATCHED[type(e)]) for b, n in enumerate(t.nodes) for e in n.events if type(e) in WATCHED}


def part_path(p: int) -> str:
    return f"/brokers/topics/t/partitions/{p}/state"


def encode_part(z: PartZ) -> bytes:
    return json.dumps(
        {
            "leader": z.leader,
            "leader_epoch": z.leader_epoch,
            "isr": list(z.isr),
            "controller_epoch": z.ctl_epoch,
        }
    ).encode()


class ServerOnly(ZooKeeperServer_):
    """The model's ZooKeeper server without the client's checks of a failed write
    (``ZooKeeperServer.check_retried``: KafkaZkClient's ``checkControllerAndEpoch`` and
    ``checkLeaderAndIsrZkData``, which read the tree after a NodeExists or BadVersion and merge
    those reads into the step). Those checks are Kafka's client code, not the server's: the real
    server answers NodeExists to a second create of ``/controller`` by the same session, which the
    recipes here send without a lost response in between, where Kafka's controller never would."""

    def check_retried(self, zk: Any, b: int, sess: int, req: Any, resp: Any) -> Any:
        return resp


class ZooKeeperDifferential(RuleBasedStateMachine):
    """The model's ZooKeeper and the real one, step by step (see the module docstring)."""

    #: seams of the model's system (a broken ZooKeeper, to show the test can fail); each is
    #: compared without the client's checks (:class:`ServerOnly`)
    SEAMS: ClassVar[dict[str, type]] = {"zookeeper": ServerOnly}

    def __init__(self) -> None:
        super().__init__()
        from kazoo.client import KazooClient

        assert _SERVER is not None
        self.hosts = _SERVER.hosts
        self.KazooClient = KazooClient
        self.admin = KazooClient(hosts=self.hosts, timeout=4.0)
        self.admin.start(timeout=10)
        for path in ("/controller", "/controller_epoch", "/brokers", "/isr_change_notification"):
            self.admin.delete(path, recursive=True)
        self.admin.create("/controller_epoch", b"0")
        self.admin.ensure_path("/brokers/ids")
        self.admin.ensure_path("/isr_change_notification")
        for p in range(PARTITIONS):
            self.admin.ensure_path(f"/brokers/topics/t/partitions/{p}")
        self.system = ControllerSystem(
            ControllerConfig(
                brokers=BROKERS,
                replication_factor=1,
                partitions_per_topic=PARTITIONS,
                zk_responses=ZkResponses.SEPARATE,
            ),
            **self.SEAMS,
        )
        cold = self.system.cold_state()
        self.s: State = cold._replace(nodes=tuple(n._replace(zk_out=()) for n in cold.nodes))
        self.clients = [self._client() for _ in range(BROKERS)]
        self.fired: set[tuple[int, str]] = set()
        self.lock = threading.Lock()
        self.czxids: list[list[int]] = [[] for _ in range(BROKERS)]
        self.epochs: list[list[int]] = [[] for _ in range(BROKERS)]
        self.last_read: list[tuple[int, int]] = [(0, 0)] * BROKERS

    def _client(self) -> Any:
        c = self.KazooClient(hosts=self.hosts, timeout=4.0)
        c.start(timeout=10)
        return c

    def teardown(self) -> None:
        for c in [*self.clients, self.admin]:
            c.stop()
            c.close()

    # -- the two sides of one step -------------------------------------------------------------

    def model(self, b: int, req: tuple) -> tuple[tuple | None, set[tuple[int, str]]]:
        """Serve ``req`` from broker ``b``'s session on the model: the response and the watches
        that fired, as (broker, path) pairs."""
        s = self.s._replace(
            nodes=tuple(
                x._replace(events=()) if i != b else x._replace(zk_out=(req,), zk_in=(), events=())
                for i, x in enumerate(self.s.nodes)
            )
        )
        _, t = self.system.zookeeper.serve(s, b)
        resp = t.nodes[b].zk_in[-1] if t.nodes[b].zk_in else None
        fired = model_fired(t)
        self.s = t._replace(nodes=tuple(x._replace(zk_in=(), events=()) for x in t.nodes))
        return resp, fired

    def watch(self, b: int, path: str) -> None:
        """Arm broker ``b``'s real watch on ``path``: a data watch on ``/controller`` (the model's
        ``ctl_watch``), a child watch on the others (the model's ``watch``)."""
        client = self.clients[b]

        def fire(event: Any) -> None:
            # a change seen by the broker's current session (not the notices a lost connection
            # or an expiry give a watcher)
            if event.path == path and event.type in ("CREATED", "DELETED", "CHANGED", "CHILD"):
                with self.lock:
                    if self.clients[b] is client:
                        self.fired.add((b, path))

        if path == "/controller":
            client.exists(path, watch=fire)
        else:
            client.get_children(path, watch=fire)

    def real_fired(self) -> set[tuple[int, str]]:
        """The (broker, path) watches that fired since the last call (waiting for every
        callback the server sent before now), each re-armed as Kafka's handler re-reads."""
        from kazoo.protocol.states import Callback

        for c in self.clients:
            c.sync("/")
            done = threading.Event()
            c.handler.dispatch_callback(Callback("watch", done.set, ()))
            assert done.wait(10)
        with self.lock:
            got, self.fired = self.fired, set()
        for b, path in got:
            node = self.s.nodes[b]
            if node.ctl_watch if path == "/controller" else node.watch:
                self.watch(b, path)
        return got

    def owner(self, session_id: int) -> int:
        """The broker whose current session is ``session_id`` (-1: none)."""
        return next(
            (b for b, c in enumerate(self.clients) if c.client_id and c.client_id[0] == session_id), -1
        )

    def model_owner(self, session: int) -> int:
        return next((b for b, n in enumerate(self.s.nodes) if n.session == session), -1)

    def compare_fired(self, model: set[tuple[int, str]], ignore: Set[tuple[int, str]] = frozenset()) -> None:
        real = self.real_fired() - ignore
        model = model - ignore
        assert model == real, f"watches fired: model {sorted(model)}, real {sorted(real)}"

    # -- the rules ------------------------------------------------------------------------------

    @rule(b=st.integers(0, BROKERS - 1))
    def register_broker(self, b: int) -> None:
        reg = self.s.zk.brokers[b]
        if reg is not None and reg[0] != self.s.nodes[b].session:
            return  # Kafka's broker waits for its old session to expire (the model's precondition)
        from kazoo.exceptions import NodeExistsError

        resp, fired = self.model(b, RegisterBroker(True))
        c = self.clients[b]
        with contextlib.suppress(NodeExistsError):
            c.create(f"/brokers/ids/{b}", b"", ephemeral=True)
        _, stat = c.get(f"/brokers/ids/{b}")
        assert stat.ephemeralOwner == c.client_id[0]
        assert resp is not None
        if not self.czxids[b] or self.czxids[b][-1] != stat.czxid:
            self.czxids[b].append(stat.czxid)
            self.epochs[b].append(resp[1])
        # the broker epoch: the model's counter orders registrations as the czxid does
        assert self.epochs[b][-1] == resp[1] and len(self.epochs[b]) == len(self.czxids[b])
        assert self.czxids[b] == sorted(self.czxids[b]) and self.epochs[b] == sorted(set(self.epochs[b]))
        self.compare_fired(fired)

    @rule(b=st.integers(0, BROKERS - 1))
    def read_controller(self, b: int) -> None:
        resp, fired = self.model(b, GetControllerIdAndEpoch())
        self.watch(b, "/controller")
        real = self.real_controller()
        data, stat = self.clients[b].get("/controller_epoch")
        assert resp is not None and (resp[1], resp[2], resp[3]) == (real, int(data), stat.version)
        self.last_read[b] = (resp[2], resp[3])
        self.compare_fired(fired)

    def real_controller(self) -> int:
        from kazoo.exceptions import NoNodeError

        try:
            data, _ = self.admin.get("/controller")
        except NoNodeError:
            return -1
        return int(data)

    @rule(b=st.integers(0, BROKERS - 1), stale=STALE)
    def register_controller(self, b: int, stale: int | None) -> None:
        """2.x ``registerControllerAndIncrementControllerEpoch``: one multi."""
        epoch, version = self.last_read[b]
        version = version if stale is None else wrong(version, stale)
        resp, fired = self.model(b, RegisterControllerAndIncrementControllerEpoch(epoch + 1, version))
        t = self.clients[b].transaction()
        t.create("/controller", str(b).encode(), ephemeral=True)
        t.set_data("/controller_epoch", str(epoch + 1).encode(), version=version)
        results = t.commit()
        ok = not any(isinstance(r, Exception) for r in results)
        assert resp is not None and resp[1] == ok
        if ok:
            assert resp[3] == results[1].version
        self.compare_fired(fired, ignore={(b, "/controller")})

    @rule(b=st.integers(0, BROKERS - 1))
    def create_controller_path(self, b: int) -> None:
        """0.8 ``ZookeeperLeaderElector.elect``: create the ephemeral, or read who holds it."""
        from kazoo.exceptions import NodeExistsError

        resp, fired = self.model(b, CreateControllerPath())
        try:
            self.clients[b].create("/controller", str(b).encode(), ephemeral=True)
            ok, holder = True, b
        except NodeExistsError:
            ok, holder = False, self.real_controller()
        assert resp is not None and (resp[1], resp[2]) == (ok, holder)
        self.compare_fired(fired, ignore={(b, "/controller")})

    @rule(b=st.integers(0, BROKERS - 1))
    def read_epoch(self, b: int) -> None:
        resp, fired = self.model(b, ReadControllerEpoch())
        data, stat = self.clients[b].get("/controller_epoch")
        assert resp is not None and (resp[1], resp[2]) == (int(data), stat.version)
        self.last_read[b] = (resp[1], resp[2])
        self.compare_fired(fired)

    @rule(b=st.integers(0, BROKERS - 1), stale=STALE)
    def increment_epoch(self, b: int, stale: int | None) -> None:
        from kazoo.exceptions import BadVersionError

        epoch, version = self.last_read[b]
        version = version if stale is None else wrong(version, stale)
        resp, fired = self.model(b, IncrementControllerEpoch(epoch + 1, version))
        try:
            stat = self.clients[b].set("/controller_epoch", str(epoch + 1).encode(), version=version)
            ok, new_version = True, stat.version
        except BadVersionError:
            ok, new_version = False, 0
        assert resp is not None and resp[1] == ok and (not ok or resp[3] == new_version)
        self.compare_fired(fired)

    @rule(b=st.integers(0, BROKERS - 1))
    def delete_controller(self, b: int) -> None:
        resp, fired = self.model(b, DeleteControllerPath())
        self.clients[b].delete("/controller") if self.clients[b].exists("/controller") else None
        assert resp is None
        self.compare_fired(fired)

    @rule(
        b=st.integers(0, BROKERS - 1),
        p=st.integers(0, PARTITIONS - 1),
        leader=st.integers(-1, BROKERS - 1),
        create=st.booleans(),
        stale_version=STALE,
        fenced=st.one_of(st.sampled_from(["current", "unfenced"]), st.integers(0, 3)),
    )
    def write_partition_state(
        self, b: int, p: int, leader: int, create: bool, stale_version: int | None, fenced: str | int
    ) -> None:
        """The controller's ``updateLeaderAndIsr`` / ``createTopicPartitionStatesRaw``, fenced."""
        zk = self.s.zk
        fence = (
            {"current": zk.epoch_version, "unfenced": -1}.get(fenced)
            if isinstance(fenced, str)
            else wrong(zk.epoch_version, fenced)
        )
        assert fence is not None
        cur = zk.parts[p]
        version = cur.version if cur is not None else 0
        version = version if stale_version is None else wrong(version, stale_version)
        z = PartZ(leader, (cur.leader_epoch + 1) if cur else 0, (max(leader, 0),), zk.epoch, version)
        req = UpdateLeaderAndIsr(((p, z),), fence, zk.epoch, create, 0)
        resp, fired = self.model(b, req)
        t = self.clients[b].transaction()
        if fence != -1:
            t.check("/controller_epoch", fence)
        if create:
            t.create(part_path(p), encode_part(z))
        else:
            t.set_data(part_path(p), encode_part(z), version=version)
        results = t.commit()
        failed = [r for r in results if isinstance(r, Exception)]
        fence_failed = (
            fence != -1 and isinstance(results[0], Exception) and "BadVersion" in type(results[0]).__name__
        )
        assert resp is not None
        if fence_failed:
            assert resp[1] is False, "the fence failed on the server, not in the model"
            return self.compare_fired(fired)
        assert resp[1] is True
        ((q, new),) = resp[2]
        assert q == p and (new is not None) == (not failed)
        if new is not None:
            _, stat = self.admin.get(part_path(p))
            assert new.version == stat.version
        self.compare_fired(fired)

    @rule(b=st.integers(0, BROKERS - 1), p=st.integers(0, PARTITIONS - 1), stale=STALE)
    def update_isr(self, b: int, p: int, stale: int | None) -> None:
        """A leader's ``updateIsr`` (conditional setData) and ``recordIsrChange``."""
        from kazoo.exceptions import BadVersionError, NoNodeError

        cur = self.s.zk.parts[p]
        base = cur if cur is not None else PartZ(b, 0, (b,), 0, 0)
        z = base._replace(
            leader=b, isr=(b,), version=base.version if stale is None else wrong(base.version, stale)
        )
        resp, fired = self.model(b, UpdateIsr(p, z))
        c = self.clients[b]
        try:
            stat = c.set(part_path(p), encode_part(z), version=z.version)
            c.create("/isr_change_notification/isr_change_", f"{p}:{stat.version}".encode(), sequence=True)
            real = stat.version
        except (BadVersionError, NoNodeError):
            real = None
        assert resp is not None and resp[1] == p
        assert (None if resp[2] is None else resp[2].version) == real
        self.compare_fired(fired)

    def real_isr_changes(self) -> list[tuple[str, tuple[int, int]]]:
        out = []
        for child in sorted(self.admin.get_children("/isr_change_notification")):
            data, _ = self.admin.get(f"/isr_change_notification/{child}")
            p, v = data.decode().split(":")
            out.append((child, (int(p), int(v))))
        return out

    @rule(b=st.integers(0, BROKERS - 1))
    def read_isr_changes(self, b: int) -> None:
        resp, fired = self.model(b, GetAllIsrChangeNotifications())
        assert resp is not None and sorted(resp[1]) == sorted(v for _, v in self.real_isr_changes())
        self.compare_fired(fired)

    @rule(b=st.integers(0, BROKERS - 1), stale=STALE)
    def delete_isr_changes(self, b: int, stale: int | None) -> None:
        """``deleteIsrChangeNotifications``: each child read, fenced, one multi each."""
        fence = self.s.zk.epoch_version if stale is None else wrong(self.s.zk.epoch_version, stale)
        read = self.real_isr_changes()
        resp, fired = self.model(
            b,
            DeleteIsrChangeNotifications(tuple(v for _, v in read), fence, self.s.zk.epoch),
        )
        for child, _ in read:
            t = self.clients[b].transaction()
            t.check("/controller_epoch", fence)
            t.delete(f"/isr_change_notification/{child}")
            t.commit()
        assert resp is None
        # the deletion fires the real child watch; the model queues no IsrChangeNotification for
        # it (every remaining notification queued its own when it was created)
        self.compare_fired(fired, ignore={(x, "/isr_change_notification") for x in range(BROKERS)})

    @rule(b=st.integers(0, BROKERS - 1))
    def read_context(self, b: int) -> None:
        """``onControllerFailover``'s reads (``ReadControllerContext``): the live brokers and the
        partition states, arming the controller's watches (``/brokers/ids``,
        ``/isr_change_notification``)."""
        resp, fired = self.model(b, ReadControllerContext())
        for path in ("/brokers/ids", "/isr_change_notification"):
            self.watch(b, path)
        assert resp is not None
        live = {x for x, e in enumerate(resp[1]) if e}
        assert live == {int(c) for c in self.admin.get_children("/brokers/ids")}
        self.compare_fired(fired)

    @rule(b=st.integers(0, BROKERS - 1), graceful=st.booleans())
    def expire_session(self, b: int, graceful: bool) -> None:
        """Broker ``b``'s session ends: the server expires it (a second client on the same
        session id and password closes it), or the broker closes it itself (the stop after a
        controlled shutdown, ``Brokers.shutdown_complete``); the broker then opens a new one."""
        _, t = self.system.zookeeper.expire(
            self.s._replace(nodes=tuple(x._replace(events=()) for x in self.s.nodes)), b, not graceful
        )
        fired = model_fired(t)
        zk = t.zk
        n = t.nodes[b]._replace(
            session=zk.next_session, expired=False, ctl_watch=False, watch=False, events=()
        )
        self.s = t._replace(
            zk=zk._replace(next_session=zk.next_session + 1),
            nodes=tuple(n if i == b else x._replace(events=()) for i, x in enumerate(t.nodes)),
        )
        old = self.clients[b]
        if not graceful:
            killer = self.KazooClient(hosts=self.hosts, client_id=old.client_id, timeout=4.0)
            killer.start(timeout=10)
            killer.stop()
            killer.close()
        old.stop()  # graceful: closes the session, whose ephemerals go at once
        old.close()
        self.clients[b] = self._client()
        self.compare_fired(fired)

    # -- after every step: the same tree ----------------------------------------------------------

    @invariant()
    def same_tree(self) -> None:
        from kazoo.exceptions import NoNodeError

        zk = self.s.zk
        # /controller: its holder and (by session) its owner
        try:
            data, stat = self.admin.get("/controller")
            real_ctl: tuple[int, int] | None = (int(data), self.owner(stat.ephemeralOwner))
        except NoNodeError:
            real_ctl = None
        model_ctl = None if zk.controller is None else (zk.controller[0], self.model_owner(zk.controller[1]))
        assert model_ctl == real_ctl, f"/controller: model {model_ctl}, real {real_ctl}"
        data, stat = self.admin.get("/controller_epoch")
        assert (zk.epoch, zk.epoch_version) == (int(data), stat.version)
        # /brokers/ids: who is registered, by the session that owns the ephemeral
        real_brokers = {}
        for child in self.admin.get_children("/brokers/ids"):
            _, st_ = self.admin.get(f"/brokers/ids/{child}")
            real_brokers[int(child)] = self.owner(st_.ephemeralOwner)
        model_brokers = {b: self.model_owner(e[0]) for b, e in enumerate(zk.brokers) if e is not None}
        assert model_brokers == real_brokers
        # the partition states and their versions
        for p in range(PARTITIONS):
            z = zk.parts[p]
            try:
                data, stat = self.admin.get(part_path(p))
                real_p: tuple | None = (json.loads(data), stat.version)
            except NoNodeError:
                real_p = None
            model_p = None if z is None else (json.loads(encode_part(z)), z.version)
            assert model_p == real_p, f"partition {p}: model {model_p}, real {real_p}"
        assert sorted(zk.isr_changes) == sorted(v for _, v in self.real_isr_changes())


@pytest.mark.zookeeper
def test_the_model_zookeeper_agrees_with_the_real_server(server: Any) -> None:
    """Every step of the recipes gives the same result, tree and watch firings (seeded)."""
    run_state_machine_as_test(
        ZooKeeperDifferential,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=12,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )


class EphemeralOutlivesSession(ZooKeeperServer_):
    """A model ZooKeeper more forgiving than the real one: a broker's registration survives the
    expiry of the session that created it."""

    def expire(self, s: State, b: int, counted: bool) -> tuple[Any, State]:
        act, t = super().expire(s, b, counted)
        return act, t._replace(zk=t.zk._replace(brokers=s.zk.brokers))


class NoBrokerChangeWatch(ZooKeeperServer_):
    """A model ZooKeeper whose ``/brokers/ids`` child watch never fires."""

    def fire_watches(self, nodes: list[Any], ev: tuple[int, int], who: str, skip: int = -1) -> None:
        if type(ev) is not BrokerChange:
            super().fire_watches(nodes, ev, who, skip)


@pytest.mark.zookeeper
@pytest.mark.parametrize(
    "seam, examples",
    [(EphemeralOutlivesSession, 300), (FenceLessThan, 300), (NoBrokerChangeWatch, 300)],
    ids=["ephemeral-outlives-session", "fence-less-than", "no-broker-change-watch"],
)
def test_a_wrong_model_zookeeper_is_caught(server: Any, seam: type, examples: int) -> None:
    """The comparison can fail: a model ZooKeeper whose ephemerals outlive their session, the
    catalogue's ``fence-less-than`` (a fenced write fails only below the fence) and one whose
    ``/brokers/ids`` watch never fires each disagree with the real server within a few hundred
    seeded examples."""

    class Broken(ZooKeeperDifferential):
        SEAMS: ClassVar[dict[str, type]] = {
            "zookeeper": type(f"{seam.__name__}ServerOnly", (ServerOnly, seam), {})
        }

    with pytest.raises(AssertionError):
        run_state_machine_as_test(
            Broken,
            settings=settings(
                max_examples=examples,
                stateful_step_count=12,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
                report_multiple_bugs=False,
                # caught is all this asks: shrinking the disagreement against the real server
                # took most of these tests' 200 s in CI (each step is a round trip)
                phases=(Phase.explicit, Phase.reuse, Phase.generate),
            ),
        )
