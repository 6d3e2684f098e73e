"""The network: every connection between the controller model's actors as one layer, and the
faults a configuration may choose on it.

A connection is a FIFO queue of requests from a client to a server (FIFO per connection, as
the real transports give: a TCP connection each); the server's step applies the head request
and produces a response, which goes back to the client. Two kinds of connection, a
:class:`Link` each:

* :data:`ZK_SESSIONS`, the ZooKeeper client connections: one per broker, carrying the requests
  of its current session (``Node.zk_out``); the server's step is ``ZooKeeperServer.apply``, the
  response is queued for the broker (``Node.zk_in``) and received by ``ZooKeeperServer.reply``,
  in the same step when ``zk_responses = "merged"`` (the default).
* :data:`CONTROLLER_CHANNELS`, the controller-to-broker channels: one per (controller, broker),
  ``State.chans[sender * brokers + dest]``, Kafka's ``RequestSendThread`` sending one request
  at a time; the server's step is ``ReplicaManager.deliver``, whose response reaches the sender
  only as its callback (an event queued at the sending controller).

The actors see requests and responses, never the fault: a fault is a semantics of the layer
(:meth:`Link.lose_response`), which splits the server's step from the response where it needs
to, and a plug-in fault (``model/controller/faults``) chooses it on a link, bounded by its own
config key. The semantics a fault can choose:

* **a response lost after the request was applied** (:meth:`Link.lose_response`): the server
  applies the head request, its response never reaches the client, and the request stays at
  the head of the connection, to be sent again. On ZooKeeper this is a connection lost and
  re-established in the same session: KafkaZkClient's ``retryRequestsUntilConnected`` (0.8:
  I0Itec ``ZkClient.retryUntilConnected``) resends every request that got ``CONNECTIONLOSS``,
  applied or not (the ones behind the head are still queued, in order); on a controller
  channel it is ``RequestSendThread``'s reconnect and resend. On a FIFO connection this is also
  the only way a server is handed a request twice.

What the client does with the answer to a resent request (NodeExists where its own first copy
created the znode, BadVersion where it bumped the version) is the request's own semantics, as
Kafka's client code checks it (``ZooKeeperServer.check_retried``).

>>> from model.controller import ControllerConfig, ControllerSystem
>>> system = ControllerSystem(ControllerConfig(start="cold"))
>>> s = system.init_states()[0]
>>> [c for c in ZK_SESSIONS.connections(system, s)]  # every broker's registration is in flight
[0, 1, 2]
>>> (_, a, t), *_ = ZK_SESSIONS.lose_response(system, s)
>>> str(a), t.nodes[0].zk_out == s.nodes[0].zk_out, t.zk.brokers[0] is not None
('ZooKeeper: applies create /brokers/ids/<id> (ephemeral) from session 1 (broker 0)', True, True)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from explorer.mypyc_compat import mypyc_attr
from explorer.speedups import set_item
from model.controller.state import State

__all__ = ["CONTROLLER_CHANNELS", "LINKS", "ZK_SESSIONS", "ControllerChannels", "Link", "ZkSessions"]


@mypyc_attr(allow_interpreted_subclasses=True)
class Link:
    """One kind of connection (see the module docstring): which connections the server can
    serve now, the ordinary steps, and the server's step with the response split off."""

    #: the link's name, as a fault's doc names it
    name: ClassVar[str] = ""

    def connections(self, system: Any, s: State) -> Iterator[int]:
        """The connections whose head request the server can take in ``s``, in a fixed order."""
        raise NotImplementedError

    def in_flight(self, s: State, c: int) -> tuple:
        """The requests of connection ``c`` sent and not yet answered, head first."""
        raise NotImplementedError

    def steps(self, system: Any, s: State) -> Iterator[tuple[Any, State]]:
        """The ordinary steps: the server applies a head request and its response goes back."""
        raise NotImplementedError

    def apply(self, system: Any, s: State, c: int) -> tuple[Any, State]:
        """The server's step on connection ``c``'s head request alone: the request leaves the
        queue and the server's state changes, but the response does not reach the client."""
        raise NotImplementedError

    def requeue(self, s: State, t: State, c: int) -> State:
        """``t`` with connection ``c``'s in-flight requests as they are in ``s`` (resent)."""
        raise NotImplementedError

    def lose_response(self, system: Any, s: State) -> Iterator[tuple[int, Any, State]]:
        """For each connection the server can serve: ``(c, the server's step, successor)`` where
        the server applied the head request, its response is lost and every in-flight request
        stays queued in order, to be sent again on the same connection (same session)."""
        for c in self.connections(system, s):
            a, t = self.apply(system, s, c)
            yield c, a, self.requeue(s, t, c)


@mypyc_attr(allow_interpreted_subclasses=True)
class ZkSessions(Link):
    """The ZooKeeper client connections, one per broker (its current session's requests)."""

    name: ClassVar[str] = "ZooKeeper client connections"

    def connections(self, system: Any, s: State) -> Iterator[int]:
        """Brokers whose session is open, not expired, with a request in flight."""
        for b, n in enumerate(s.nodes):
            if n.zk_out and n.session != 0 and not n.expired:
                yield b

    def in_flight(self, s: State, c: int) -> tuple:
        """Broker ``c``'s requests not yet applied by the server."""
        return s.nodes[c].zk_out

    def steps(self, system: Any, s: State) -> Iterator[tuple[Any, State]]:
        """Every session's head request served, then every queued response received."""
        zookeeper = system.zookeeper
        nodes = s.nodes
        for b, n in enumerate(nodes):
            if n.zk_out and n.session != 0 and not n.expired:
                yield zookeeper.serve(s, b)
        for b, n in enumerate(nodes):
            if n.alive and n.zk_in:
                yield zookeeper.reply(s, b)

    def serve(self, system: Any, s: State, b: int) -> tuple[Any, State]:
        """The ordinary step on broker ``b``'s session: the server applies the head request
        (``ZooKeeperServer.apply``) and the response is queued for the broker, which receives it
        in the same step when responses are merged (``ZooKeeperServer.reply``). A merged response
        to a broker with none queued goes straight to ``ZooKeeperServer.receive``: queueing it
        and taking it off again would make the same successor (unless ``reply`` is overridden)."""
        zookeeper = system.zookeeper
        a, t, resp = zookeeper.apply(s, b)
        node = t.nodes[b]
        if resp is None or not node.alive:
            return a, t
        if system.merged and not node.zk_in and zookeeper.receives_merged:
            return a, zookeeper.receive(t, b, node, resp)
        t = t._replace(nodes=set_item(t.nodes, b, node._replace(zk_in=(*node.zk_in, resp))))
        if system.merged:
            t = zookeeper.reply(t, b)[1]
        return a, t

    def apply(self, system: Any, s: State, c: int) -> tuple[Any, State]:
        """``ZooKeeperServer.apply`` with its response dropped (watches a read sets stay set:
        the server registers them when it applies the read)."""
        a, t, _ = system.zookeeper.apply(s, c)
        return a, t

    def requeue(self, s: State, t: State, c: int) -> State:
        """Broker ``c``'s ``zk_out`` as in ``s``."""
        n = t.nodes[c]
        return t._replace(nodes=set_item(t.nodes, c, n._replace(zk_out=s.nodes[c].zk_out)))


@mypyc_attr(allow_interpreted_subclasses=True)
class ControllerChannels(Link):
    """The controller-to-broker channels, ``State.chans[sender * brokers + dest]``."""

    name: ClassVar[str] = "controller-to-broker channels"

    def connections(self, system: Any, s: State) -> Iterator[int]:
        """Channels whose destination is alive, serving requests, and can apply the head
        request now (a LeaderAndIsr waits while its partition's leader writes its ISR).

        A started broker serves only once it has registered (its broker epoch known,
        ``Node.bepoch``): Kafka 2.x's ``KafkaServer.startup`` binds the socket server with
        ``startupProcessors = false`` and starts its processors at the end, after
        ``registerBroker``; until then the controller's ``RequestSendThread`` gets no answer and
        resends, so the request waits in the channel (``serve_before_registration``: 0.8, whose
        socket server serves before ``KafkaHealthcheck`` registers)."""
        nb = system.nb
        nodes = s.nodes
        in_flight = system.replica_manager.isr_write_in_flight
        early = system.cfg.serve_before_registration
        for i, q in enumerate(s.chans):
            if q:
                n = nodes[i % nb]
                if n.alive and (n.bepoch or early) and not in_flight(n, q[0]):
                    yield i

    def in_flight(self, s: State, c: int) -> tuple:
        """Only the head: ``RequestSendThread`` sends one request and waits for its response."""
        return s.chans[c][:1]

    def steps(self, system: Any, s: State) -> Iterator[tuple[Any, State]]:
        """Every channel's head request applied by its broker (``ReplicaManager.deliver``)."""
        nb = system.nb
        deliver = system.replica_manager.deliver
        for i in self.connections(system, s):
            yield deliver(s, i // nb, i % nb)

    def apply(self, system: Any, s: State, c: int) -> tuple[Any, State]:
        """``ReplicaManager.deliver`` without its response: a controller request's response
        reaches the sender only as its callback's event (a StopReplica's), so the sender's
        event queue is left as it was."""
        sender, d = divmod(c, system.nb)
        a, t = system.replica_manager.deliver(s, sender, d)
        events = s.nodes[sender].events
        if t.nodes[sender].events is not events:
            t = t._replace(nodes=set_item(t.nodes, sender, t.nodes[sender]._replace(events=events)))
        return a, t

    def requeue(self, s: State, t: State, c: int) -> State:
        """Channel ``c`` as in ``s``."""
        return t._replace(chans=set_item(t.chans, c, s.chans[c]))


ZK_SESSIONS = ZkSessions()
CONTROLLER_CHANNELS = ControllerChannels()
#: every link, in the order the system offers their ordinary steps
LINKS: tuple[Link, ...] = (ZK_SESSIONS, CONTROLLER_CHANNELS)
