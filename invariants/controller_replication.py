"""Replication properties of the controller model: what the data plane's leader and followers do
with the records the producer sends, checked at the step that does it (issue 35: the guarantees
``no_acked_record_lost`` sees only through their consequence, a lost record, checked at the write).

High watermark (seed 004, line 973: "此分区leader副本的HW大于requiredOffset，所有副本都同步完成", a
produce with acks=all completes once the leader's high watermark passes its offset, that is once
every ISR replica has it): Kafka's ``Partition.maybeIncrementLeaderHW`` runs after every append to
the leader (``appendRecordsToLeader``) and every follower fetch (``updateFollowerFetchState``) and
sets the high watermark to the smallest log end offset of the ISR, as the leader knows them, if
that is larger. A leader that computes it for the wrong replica or partition acknowledges fewer
records than it must (producers time out) or more (records acknowledged that a follower lacks).

Follower truncation (seed 004, line 1063: "可能刚刚Leader宕机更换了新的Leader发生了日志截断", a
leader change truncates logs): with leader-epoch truncation (KIP-101, Kafka 0.11 on) a follower
truncates to the offset where its log and the leader's diverge before it appends what it fetches,
so after a fetch its log is a prefix of the leader's. With high-watermark truncation (the 0.8
controller's brokers) it truncates to its high watermark and can diverge: that is KIP-101's bug,
which ``no_acked_record_lost`` finds, and the property is not checked there.

Registering (in ``invariants/controller.py``'s ``properties``)::

    from invariants.controller_replication import replication_properties
    props += replication_properties(config)
"""

from __future__ import annotations

from typing import Any

from explorer.core import Property, transition
from invariants.controller_guards import fetches, produces_or_fetches
from model.controller import State
from model.controller.config import FollowerTruncation
from model.controller.effects import Effect, does, does_any
from model.controller.state import Rep

__all__ = [
    "follower_log_is_leader_prefix",
    "leader_high_watermark",
    "leader_hw_follows_isr",
    "replication_properties",
]


def leader_high_watermark(r: Rep, me: int) -> int:
    """The high watermark ``maybeIncrementLeaderHW`` computes for the leader ``me`` holding the
    replica ``r``: the smallest log end offset of its ISR (its own log's length, each follower's
    last fetch offset as ``r.known`` holds it), never below the high watermark it had.

    >>> r = Rep(leader=1, epoch=1, isr=(1, 0), zkv=0, log=(1, 1), hw=0, known=(1, 2), pend=False)
    >>> leader_high_watermark(r, 1)  # broker 0 has fetched up to offset 1
    1
    >>> leader_high_watermark(r._replace(isr=(1,)), 1)  # an ISR of one: every record is in it
    2
    """
    hw = len(r.log)
    for x in r.isr:
        if x != me and r.known[x] < hw:
            hw = r.known[x]
    return max(hw, r.hw)


#: the steps after which a leader's high watermark may move: an append or a follower's fetch
_APPENDS = frozenset({Effect.PRODUCES, Effect.FETCHES})


def _leader_of(a: Any) -> int:
    return a.broker if does(a, Effect.PRODUCES) else a.leader


def leader_hw_follows_isr(s: State, a: Any, t: State) -> bool:
    """After an append (``Produce``) or a follower's fetch (``Fetch``) the leader's high watermark
    is what ``maybeIncrementLeaderHW`` computes (``leader_high_watermark``).

    >>> from model.controller import ControllerConfig, ControllerSystem
    >>> from model.controller.actions import Produce
    >>> s = ControllerSystem(ControllerConfig(brokers=2, max_records=1)).init_states()[0]
    >>> r = Rep(leader=0, epoch=1, isr=(0,), zkv=0, log=(1,), hw=1, known=(1, 0), pend=False)
    >>> t = s._replace(nodes=(s.nodes[0]._replace(reps=(r,)), s.nodes[1]))
    >>> leader_hw_follows_isr(s, Produce(0, 0), t)
    True
    >>> leader_hw_follows_isr(s, Produce(0, 0), t._replace(nodes=(t.nodes[0]._replace(reps=(r._replace(hw=0),)), t.nodes[1])))
    False
    """
    if not does_any(a, _APPENDS):
        return True
    b = _leader_of(a)
    r = t.nodes[b].reps[a.partition]
    if r.leader != b:
        return True  # a fetch the leader no longer serves changes nothing
    return r.hw == leader_high_watermark(r, b)


def follower_log_is_leader_prefix(s: State, a: Any, t: State) -> bool:
    """After a fetch the follower's log is a prefix of the leader's (leader-epoch truncation).

    >>> from model.controller import ControllerConfig, ControllerSystem
    >>> from model.controller.actions import Fetch
    >>> s = ControllerSystem(ControllerConfig(brokers=2, max_records=1)).init_states()[0]
    >>> lead = Rep(leader=0, epoch=2, isr=(0, 1), zkv=0, log=(2,), hw=0, known=(1, 0), pend=False)
    >>> fol = Rep(leader=0, epoch=2, isr=(), zkv=0, log=(2,), hw=0, known=(), pend=False)
    >>> t = s._replace(nodes=(s.nodes[0]._replace(reps=(lead,)), s.nodes[1]._replace(reps=(fol,))))
    >>> follower_log_is_leader_prefix(s, Fetch(1, 0, 0), t)
    True
    >>> t = t._replace(nodes=(t.nodes[0], t.nodes[1]._replace(reps=(fol._replace(log=(1,)),))))
    >>> follower_log_is_leader_prefix(s, Fetch(1, 0, 0), t)  # kept a record of epoch 1 at offset 0
    False
    """
    if not does(a, Effect.FETCHES):
        return True
    flog = t.nodes[a.broker].reps[a.partition].log
    llog = t.nodes[a.leader].reps[a.partition].log
    return llog[: len(flog)] == flog


def replication_properties(config: Any) -> list[Property]:
    """The replication properties for ``config``: none without records; the truncation property
    only with leader-epoch truncation.

    >>> from model.controller import ControllerConfig
    >>> [p.name for p in replication_properties(ControllerConfig(max_records=1))]
    ['leader_hw_follows_isr', 'follower_log_is_leader_prefix']
    >>> replication_properties(ControllerConfig())
    []
    """
    if not config.max_records:
        return []
    props = [
        transition(
            "leader_hw_follows_isr",
            leader_hw_follows_isr,
            "after an append or a follower's fetch the leader's high watermark is the smallest log "
            "end offset of its ISR (Partition.maybeIncrementLeaderHW; seed 004: leader副本的HW大于"
            "requiredOffset，所有副本都同步完成)",
            guard=produces_or_fetches,
        )
    ]
    if config.follower_truncation is FollowerTruncation.LEADER_EPOCH:
        props.append(
            transition(
                "follower_log_is_leader_prefix",
                follower_log_is_leader_prefix,
                "after a fetch the follower's log is a prefix of the leader's: it truncated where "
                "the logs diverge (KIP-101 leader-epoch truncation; seed 004: Leader宕机更换了新的"
                "Leader发生了日志截断)",
                guard=fetches,
            )
        )
    return props
