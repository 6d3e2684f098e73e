"""Broker processes (``Brokers``): crash, restart, the client noticing its ZooKeeper session
expired (2.x clear-and-put ``Expire``, the older queued handling, 0.8's ZkClient), and the
stop after a controlled shutdown.
"""

from __future__ import annotations

from typing import Any

from explorer.mypyc_compat import mypyc_attr
from explorer.speedups import set_item
from model.controller.actions import Crash, Restart, SessionNotice, ShutdownComplete
from model.controller.cluster import Actor
from model.controller.events import Expire
from model.controller.messages import RegisterBroker
from model.controller.state import D_SHUTDOWN, FRESH_PROCESS, Rep, State


@mypyc_attr(allow_interpreted_subclasses=True)
class Brokers(Actor):
    """Broker processes: crash, restart, the client noticing its session expired, the stop after
    a controlled shutdown."""

    def crash(self, s: State, b: int) -> tuple[Any, State]:
        n = s.nodes[b]
        reps = tuple(Rep(-1, -1, (), 0, r.log, r.hw, (), False) for r in n.reps)
        # two calls: keywords beside a ** dict would be merged into a new dict first (slower)
        n2 = n._replace(**FRESH_PROCESS)._replace(alive=False, zk_out=(), reps=reps)
        nb = self.nb
        chans = s.chans
        for i in range(nb * nb):
            if chans[i] and (i // nb == b or i % nb == b):
                chans = set_item(chans, i, ())
        return Crash(b), s._replace(nodes=set_item(s.nodes, b, n2), chans=chans, crashes=s.crashes + 1)

    def restart(self, s: State, b: int) -> tuple[Any, State]:
        zk = s.zk
        sess = zk.next_session
        n = s.nodes[b]
        n2 = n._replace(
            alive=True,
            session=sess,
            expired=False,
            zk_out=(RegisterBroker(True),),
            zk_in=(),
        )
        zk = zk._replace(next_session=sess + 1)
        return Restart(b, sess), s._replace(zk=zk, nodes=set_item(s.nodes, b, n2), restarts=s.restarts + 1)

    def notice_expiry(self, s: State, b: int) -> tuple[Any, State]:
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
                events=n.events if Expire() in n.events else (*n.events, Expire()),
            )
            return SessionNotice(b, sess), s._replace(zk=zk, nodes=set_item(s.nodes, b, n2))
        if self.legacy:
            # I0Itec ZkClient: new session, pending operations retried in it, watches re-installed;
            # KafkaHealthcheck re-registers; handleNewSession queued for the controller
            n2 = n._replace(
                session=sess,
                expired=False,
                zk_out=(*n.zk_out, RegisterBroker(False)),
                events=n.events if Expire() in n.events else (*n.events, Expire()),
            )
            return SessionNotice(b, sess), s._replace(zk=zk, nodes=set_item(s.nodes, b, n2))
        # 2.x: the in-flight event fails (SessionExpired); Expire is clear-and-put and processed
        # (activeControllerId = -1; onControllerResignation if it was active); then
        # RegisterBrokerAndReelect: register the broker, then Reelect.
        reps = tuple(r._replace(pend=False) if r.pend else r for r in n.reps)
        n1 = n._replace(
            session=sess, expired=False, zk_out=(), zk_in=(), ctl_watch=False, pending=None, reps=reps
        )
        s1 = s._replace(zk=zk, nodes=set_item(s.nodes, b, n1))
        w = self.system.controller_cls(self.system, s1, b, n1)
        w.events = ()
        was = w.active_id == b
        w.active_id = -1
        if was or w.ctx is not None:
            self.system.kafka_controller.on_controller_resignation(w)
        w.zk_out = (RegisterBroker(True),)
        w.pending = None
        s2 = w.commit(s1)
        # the registration response queues Startup (= Reelect here)
        return SessionNotice(b, sess), s2

    def shutdown_complete(self, s: State, b: int) -> tuple[Any, State]:
        """The broker stops and closes its session: its ephemerals go at once."""
        sess = s.nodes[b].session
        _, t = self.crash(s, b)
        t = t._replace(crashes=s.crashes, done=t.done | D_SHUTDOWN)
        _, t = self.system.zookeeper.expire(t, b, False)
        return ShutdownComplete(b, sess), t
