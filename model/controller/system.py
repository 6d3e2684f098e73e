"""``ControllerSystem``: the controller model as a transition system, assembled from the actors
(ZooKeeper server, brokers' replica managers and controllers, the channels between them):
successors in a fixed order, admin requests, coverage labels.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from explorer.mypyc_compat import mypyc_attr
from explorer.speedups import set_item
from model.controller import events, faults
from model.controller.actions import (
    ACTION_KINDS,
    ADMIN_KINDS,
    FAIR_KINDS,
    FAULT_KINDS,
    AdminAddPartitions,
    AdminCreateTopic,
    AdminDeleteTopic,
    AdminEnableUnclean,
    AdminPreferredElection,
    AdminReassign,
    AdminUncleanElection,
    AutoRebalanceTick,
    ControlledShutdown,
    ProcessEvent,
    TimePasses,
)
from model.controller.admin import AdminWorkflows
from model.controller.base import ControllerBase
from model.controller.broker import Brokers
from model.controller.broker_lifecycle import BrokerLifecycle
from model.controller.cluster import Cluster
from model.controller.config import ControllerConfig, KafkaVersion, Start
from model.controller.controller import KafkaController
from model.controller.coverage import (
    ZK_LABELLED_BY_TYPE,
    expected_labels,
    report_layout,
    sequence_arrow,
    zk_labels,
)
from model.controller.elector import ZookeeperLeaderElector
from model.controller.render import state_tree
from model.controller.replica_manager import ReplicaManager
from model.controller.state import State
from model.controller.state_machines import PartitionStateMachine, ReplicaStateMachine
from model.controller.symmetry import Permutation, symmetries
from model.controller.topic_deletion import TopicDeletionManager
from model.controller.topics import TopicChanges
from model.controller.v08 import variant_0_8
from model.controller.zookeeper import ZooKeeperServer

#: the controller's components, by the attribute name they reach each other with
COMPONENTS = (
    "kafka_controller",
    "partition_state_machine",
    "replica_state_machine",
    "broker_lifecycle",
    "topic_changes",
    "topic_deletion_manager",
    "admin_workflows",
    "zookeeper_leader_elector",
)
#: every seam of ``ControllerSystem`` and the class it holds by default
SEAMS: dict[str, type] = {
    "controller": ControllerBase,
    "kafka_controller": KafkaController,
    "partition_state_machine": PartitionStateMachine,
    "replica_state_machine": ReplicaStateMachine,
    "broker_lifecycle": BrokerLifecycle,
    "topic_changes": TopicChanges,
    "topic_deletion_manager": TopicDeletionManager,
    "admin_workflows": AdminWorkflows,
    "zookeeper_leader_elector": ZookeeperLeaderElector,
    "zookeeper": ZooKeeperServer,
    "replica_manager": ReplicaManager,
    "brokers": Brokers,
}

#: no coverage labels, typed ``tuple[Any, ...]``: assigning a literal ``()`` to
#: ``_last_labels`` would narrow it to ``tuple[()]``, which mypyc then checks at run time
NO_LABELS: Final[tuple[Any, ...]] = ()


@mypyc_attr(allow_interpreted_subclasses=True)
class ControllerSystem(Cluster):
    """The controller model as a transition system (see the module docstring), composed of its
    actors: the ZooKeeper server (``zookeeper``), the brokers' replica managers
    (``replica_manager``), the broker processes (``brokers``) and, in each broker, a controller
    of class ``controller_cls``. Each is a seam: a variant or a mutant passes its own class.

    >>> from model.controller import ControllerConfig
    >>> sys = ControllerSystem(ControllerConfig(brokers=2, replication_factor=2))
    >>> s = sys.init_states()[0]
    >>> s.zk.controller[0], s.zk.epoch, s.zk.parts[0].leader, s.zk.parts[0].isr
    (0, 1, 0, (0, 1))
    >>> type(sys.zookeeper).__name__, type(sys.replica_manager).__name__
    ('ZooKeeperServer', 'ReplicaManager')
    """

    def __init__(self, cfg: ControllerConfig, **seams: type) -> None:
        super().__init__(cfg)
        unknown = sorted(set(seams) - set(SEAMS))
        if unknown:
            raise TypeError(f"unknown seam {unknown[0]!r} (seams: {', '.join(SEAMS)})")
        classes = {**SEAMS, **seams}
        if cfg.kafka_version is KafkaVersion.KAFKA_0_8:
            # seed 000's controller (model/controller/v08.py), over a mutant's classes too
            classes = variant_0_8(classes)
        #: the class of a broker's controller during one step (its context, channels, helpers)
        self.controller_cls = classes["controller"]
        self.zookeeper = classes["zookeeper"](self)
        self.replica_manager = classes["replica_manager"](self)
        self.brokers = classes["brokers"](self)
        components = {name: classes[name]() for name in COMPONENTS}
        for component in components.values():
            component.wire(components)
        # not annotated KafkaController: Cluster declares it (Any), and mypyc rejects a redeclaration
        self.kafka_controller = components["kafka_controller"]
        #: the plug-in faults this configuration budgets (``model/controller/faults``)
        self.fault_rules = faults.active_rules(cfg)
        self.fault_types: tuple[type, ...] = (*FAULT_KINDS, *(r.action for r in faults.rules()))
        #: :meth:`symmetries`, computed on first use (a declared attribute: a compiled instance has
        #: no ``__dict__`` to cache it in)
        self._symmetries: list[Permutation] | None = None

    def settled_state(self) -> State:
        """The cold start run by a fixed schedule (the first enabled action that is no fault,
        produce or ISR shrink
        action, repeatedly) until no such action is enabled."""
        s = self.cold_state()
        for _ in range(10_000):
            nxt = None
            for a, t in self.successors(s):
                if not isinstance(a, self.fault_types):
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

    def symmetries(self) -> list[Permutation]:
        """The renamings of brokers, partitions and topics other than the identity that map this
        configuration and its initial state onto themselves and commute with every rule
        (``model/controller/symmetry.py``), for ``--reduce symmetry``; computed once.

        >>> from model.controller import ControllerConfig
        >>> ControllerSystem(ControllerConfig(brokers=4, assignment=((0, 1),))).symmetries()
        [Permutation(brokers=(0, 1, 3, 2), partitions=(0,), topics=(0,))]
        """
        perms = self._symmetries
        if perms is None:
            perms = self._symmetries = symmetries(self.cfg, self.init_states())
        return list(perms)

    def fault_kinds(self) -> tuple[str, ...]:
        """The action kinds that are faults (a broker crash or restart, a ZooKeeper session
        expiry, and the plug-in faults of ``model/controller/faults``): a shrinker tries to
        remove these steps first, so of two equally short counterexamples the one with fewer
        faults is kept.

        >>> from model.controller import ControllerConfig
        >>> ControllerSystem(ControllerConfig()).fault_kinds()[:3]
        ('Crash', 'Restart', 'SessionExpire')
        """
        return ("Crash", "Restart", "SessionExpire", *(r.action.__name__ for r in faults.rules()))

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
            cfg.max_admin_unclean_elections,
        )
        kinds = (*kinds, *(k for k, on in zip(ADMIN_KINDS, flags) if on), *(r.kind for r in self.fault_rules))
        return (*kinds, "TimePasses") if cfg.liveness else kinds

    def fair_action_kinds(self) -> tuple[str, ...]:
        """The weakly fair (healing) action kinds of the liveness properties (``FAIR_KINDS``).

        >>> from model.controller import ControllerConfig
        >>> "Deliver" in ControllerSystem(ControllerConfig()).fair_action_kinds()
        True
        """
        return (*FAIR_KINDS, *(r.kind for r in faults.rules() if r.fair))

    def is_terminal(self, s: State) -> bool:
        """A state without successors is a proper end when no live broker waits for a response."""
        return all(not n.alive or n.pending is None for n in s.nodes)

    def successors_labelled(self, s: State) -> Iterator[tuple[Any, State, tuple]]:
        """``successors`` with each transition's coverage labels (``model/controller/coverage.py``)."""
        self._last_labels = NO_LABELS  # not (): mypy would narrow the attribute to tuple[()]
        labels: tuple[Any, ...]
        for a, t in self.successors(s):
            labels, self._last_labels = self._last_labels, NO_LABELS  # set by commit() during this step
            if ZK_LABELLED_BY_TYPE[type(a)] and (extra := zk_labels(self, s, a, t)):
                labels += extra  # only these steps can write to ZooKeeper
            yield a, t, labels

    def successors_counted(self, s: State, counts: dict[tuple, int]) -> Iterator[tuple[Any, State]]:
        """``successors``, adding one to ``counts[label]`` per coverage label of each transition
        (what ``explorer.search.label_counting`` makes of ``successors_labelled``, without its
        wrapping generator: the hot path of every search)."""
        self._last_labels = NO_LABELS
        labels: tuple[Any, ...]
        for a, t in self.successors(s):
            labels, self._last_labels = self._last_labels, NO_LABELS
            if ZK_LABELLED_BY_TYPE[type(a)] and (extra := zk_labels(self, s, a, t)):
                labels += extra
            if labels:
                for lb in labels:
                    counts[lb] = counts.get(lb, 0) + 1
            yield a, t

    def coverage_labels(self) -> list[tuple[str, ...]]:
        """Every label ``successors_labelled`` is meant to hit (for coverage's never-hit list)."""
        return expected_labels(self)

    def state_tree(self, s: State) -> tuple[Any, ...]:
        """The whole state in Kafka's terms (``render.py``), which ``explorer.state_view`` renders."""
        return state_tree(self, s)

    def report_layout(self) -> dict[str, Any]:
        """How the report draws this model's coverage and counterexamples."""
        return report_layout(self.np, self.ppt)

    def sequence_arrow(self, action: Any) -> tuple[str, str, str]:
        """(from actor, to actor, label) of an action in a counterexample's sequence diagram."""
        return sequence_arrow(action)

    def successors(self, s: State) -> Iterator[tuple[Any, State]]:
        """Every enabled action, in a fixed order: controllers, ZooKeeper, replies, channels,
        data plane, faults."""
        cfg = self.cfg
        nb = self.nb
        nodes = s.nodes
        zookeeper, replica_manager, brokers = self.zookeeper, self.replica_manager, self.brokers
        for b in range(nb):
            n = nodes[b]
            if n.alive and n.pending is None and n.events:
                yield self._process_event(s, b)
        # the network's ordinary steps (``network.py``), ``ZK_SESSIONS.steps`` then
        # ``CONTROLLER_CHANNELS.steps`` written out here (the hottest path: no generator layers):
        # ZooKeeper sessions served, their queued responses received, controller channels
        for b in range(nb):
            n = nodes[b]
            if n.zk_out and n.session != 0 and not n.expired:
                yield zookeeper.serve(s, b)
        for b in range(nb):
            n = nodes[b]
            if n.alive and n.zk_in:
                yield zookeeper.reply(s, b)
        chans = s.chans
        if any(chans):
            in_flight = replica_manager.isr_write_in_flight
            early = cfg.serve_before_registration
            deliver = replica_manager.deliver
            for i, q in enumerate(chans):
                if q:
                    d = i % nb
                    n = nodes[d]
                    if n.alive and (n.bepoch or early) and not in_flight(n, q[0]):
                        yield deliver(s, i // nb, d)
        yield from replica_manager.data_plane(s)
        # the faults' budgets, the same for every broker of ``s``
        fault_ok = s.zk.epoch < cfg.max_controller_epoch
        crash_ok = fault_ok and s.crashes < cfg.max_crashes
        expiry_ok = fault_ok and s.expiries < cfg.max_session_expiries
        restart_ok = fault_ok and s.restarts < cfg.max_restarts
        session_live = self.session_live
        for b in range(nb):
            n = nodes[b]
            if n.alive:
                if n.expired:
                    yield brokers.notice_expiry(s, b)
                if crash_ok:
                    yield brokers.crash(s, b)
                if expiry_ok and session_live(n):
                    yield zookeeper.expire(s, b, True)
            else:
                if session_live(n):
                    yield zookeeper.expire(s, b, False)
                elif restart_ok:
                    yield brokers.restart(s, b)
        if self.later and s.zk.created < self.later:
            yield self._admin_create(s)
        if self.admin:
            yield from self._admin_actions(s)
        if self.fault_rules:
            yield from faults.successors(self, s, self.fault_rules)
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
                self.zookeeper.fire_watches(ns, events.TopicDeletion(), "watch")
            zk2 = zk._replace(deletes=t + 1, delete_topics=tuple(sorted({*zk.delete_topics, t})))
            yield AdminDeleteTopic(t), s._replace(zk=zk2, nodes=tuple(ns))
        if self.added and zk.expanded < self.topics_at_start and zk.expanded not in zk.gone:
            t = zk.expanded
            ns = list(nodes)
            self.zookeeper.fire_watches(ns, events.PartitionModifications(t), "watch")
            yield AdminAddPartitions(t), s._replace(zk=zk._replace(expanded=t + 1), nodes=tuple(ns))
        if zk.reassigns < cfg.max_reassignments and not zk.reassign:
            p = zk.reassigns
            if self.present(zk, p):
                ns = list(nodes)
                self.zookeeper.fire_watches(ns, events.PartitionReassignment(), "watch")
                rar = self.targets[p]
                zk2 = zk._replace(reassigns=p + 1, reassign=((p, rar),))
                yield AdminReassign(p, rar), s._replace(zk=zk2, nodes=tuple(ns))
        if zk.preferreds < cfg.max_preferred_elections and not zk.preferred:
            parts = tuple(p for p in range(self.np) if self.present(zk, p))
            if parts:
                ns = list(nodes)
                self.zookeeper.fire_watches(ns, events.PreferredReplicaLeaderElection(), "watch")
                zk2 = zk._replace(preferreds=zk.preferreds + 1, preferred=parts)
                yield AdminPreferredElection(parts), s._replace(zk=zk2, nodes=tuple(ns))
        if len(zk.unclean_dyn) < cfg.max_unclean_enables:
            t = len(zk.unclean_dyn)
            if self.present(zk, t * self.ppt):
                ns = list(nodes)
                self.zookeeper.fire_watches(ns, events.TopicUncleanLeaderElectionEnable(t), "watch")
                zk2 = zk._replace(unclean_dyn=(*zk.unclean_dyn, t))
                yield AdminEnableUnclean(t), s._replace(zk=zk2, nodes=tuple(ns))
        if zk.admin_elections < cfg.max_admin_unclean_elections and zk.controller is not None:
            # the admin client sends ElectLeaders(UNCLEAN) to the controller it found; the controller
            # queues ReplicaLeaderElection(AdminClientTriggered)
            ctl = zk.controller[0]
            cn = nodes[ctl]
            if cn.alive and cn.ctx is not None:
                ev = events.ReplicaLeaderElection()
                if ev not in cn.events:
                    cn = cn._replace(events=(*cn.events, ev))
                zk2 = zk._replace(admin_elections=zk.admin_elections + 1)
                yield AdminUncleanElection(ctl), s._replace(zk=zk2, nodes=set_item(nodes, ctl, cn))
        if cfg.auto_leader_rebalance:
            for b, n in enumerate(nodes):
                # the check interval (300 s) is long next to event processing: the task fires
                # when the controller is idle
                if n.alive and n.ctx is not None and not n.events and n.pending is None and not n.expired:
                    n2 = n._replace(events=(events.AutoPreferredReplicaLeaderElection(),))
                    yield AutoRebalanceTick(b), s._replace(nodes=set_item(nodes, b, n2))
        if cfg.max_controlled_shutdowns:
            c = zk.controller
            for b, n in enumerate(nodes):
                if n.cs and n.alive:
                    if n.cs == 2 or not nodes[n.cs - 3].alive or nodes[n.cs - 3].ctx is None:
                        # answered, or the request failed (controller gone): after its retries
                        # (controlled.shutdown.max.retries) the broker shuts down anyway
                        yield self.brokers.shutdown_complete(s, b)
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
                    # the request carries the broker's epoch (KIP-380)
                    ev = events.ControlledShutdown(b, n.bepoch)
                    cn = ns[c[0]]
                    if ev not in cn.events:
                        ns[c[0]] = cn._replace(events=(*cn.events, ev))
                    yield ControlledShutdown(b, c[0]), s._replace(nodes=tuple(ns), shutdowns=s.shutdowns + 1)

    def _admin_create(self, s: State) -> tuple[Any, State]:
        """The admin client's create of ``/brokers/topics/<t>``: fires the topics child watch."""
        zk = s.zk
        t = self.topics_at_start + zk.created
        nodes = list(s.nodes)
        self.zookeeper.fire_watches(nodes, events.TopicChange(), "watch")
        return AdminCreateTopic(t), s._replace(zk=zk._replace(created=zk.created + 1), nodes=tuple(nodes))

    def _process_event(self, s: State, b: int) -> tuple[Any, State]:
        n = s.nodes[b]
        ev = n.events[0]
        w = self.controller_cls(self, s, b, n)
        w.events = n.events[1:]
        self.kafka_controller.process_event(w, ev)
        return ProcessEvent(b, ev), w.commit(s)
