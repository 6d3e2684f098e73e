"""A session expiry whose ephemerals ZooKeeper keeps: the server expires a live broker's session
(the broker's client will be told ``Expired`` and open a new session), but the session's
ephemeral znodes, ``/brokers/ids/<id>`` and, if it won the election, ``/controller``, stay, owned
by the dead session, and their watches do not fire. Nothing ever deletes them: later expiries
delete only the ephemerals of the session they end.

This is ZOOKEEPER-2985 as Kafka's own code names it (KAFKA-7165's workaround in
``KafkaZkClient.CheckedEphemeral``: "The expected behaviour is that Zookeeper server removes the
ephemeral node associated with the expired session but due an already reported bug in
Zookeeper (ZOOKEEPER-2985) this is not happening"), and what KAFKA-13407's reporters met when
restarting the ZooKeeper leader: the expired session's ``closeSession`` lost with the leader,
its ephemerals left in the tree. The broker's new session then meets them: its registration's
NodeExists (``checkedEphemeralCreate``: owned by the session it registered with last, so 2.2's
workaround deletes and re-creates it; KAFKA-7165 before that) and, in ``elect``, a
``/controller`` naming itself (KAFKA-13407). Bounded by ``max_orphaned_sessions``; not offered
under the legacy elector (0.8's ``createEphemeralPathExpectConflictHandleZKBug`` meeting an
orphan backs off until it is deleted, forever: KAFKA-1029's loop, which the model leaves out).

>>> from model.controller import ControllerConfig, ControllerSystem
>>> sys = ControllerSystem(ControllerConfig(max_orphaned_sessions=1))
>>> s = sys.init_states()[0]
>>> a, t = next((a, t) for a, t in sys.successors(s) if type(a) is OrphanedSessionExpire)
>>> str(a)  # doctest: +NORMALIZE_WHITESPACE
'broker 0: ZooKeeper session 1 expires (server side); its ephemerals are not deleted
 (ZOOKEEPER-2985)'
>>> t.nodes[0].expired, t.zk.controller == s.zk.controller, t.zk.brokers == s.zk.brokers
(True, True, True)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from explorer.speedups import set_item
from model.controller.actions import SessionExpire
from model.controller.effects import Effect
from model.controller.faults import fault
from model.controller.state import State


class OrphanedSessionExpire(NamedTuple):
    """The ZooKeeper server expires a live broker's session but keeps its ephemerals, for good."""

    broker: int
    session: int

    def __str__(self) -> str:
        return f"{SessionExpire(self.broker, self.session)}; its ephemerals are not deleted (ZOOKEEPER-2985)"

    def arrow(self) -> tuple[str, str, str]:
        """The sequence-diagram arrow: ZooKeeper to the broker, the expiry."""
        return "ZooKeeper", f"broker {self.broker}", f"session {self.session} expired (ephemerals kept)"


@fault(OrphanedSessionExpire, "max_orphaned_sessions", effects=(Effect.EXPIRES_SESSION,))
def orphaned_session_expiries(system: Any, s: State) -> Iterator[tuple[Any, State]]:
    """Each live broker's open session may expire with its ephemerals left in place: the
    broker's session is marked expired (its queued requests are never applied in it, as in
    ``ZooKeeperServer.expire``), the tree and every watch unchanged."""
    if system.legacy:
        return
    for b, n in enumerate(s.nodes):
        if n.alive and system.session_live(n):
            yield (
                OrphanedSessionExpire(b, n.session),
                s._replace(nodes=set_item(s.nodes, b, n._replace(expired=True))),
            )
