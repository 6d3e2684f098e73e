"""The brokers' data plane (``ReplicaManager``): controller requests applied with their epoch
checks (LeaderAndIsr, UpdateMetadata into the broker's metadata cache, StopReplica), produce with acks=all, follower fetches
with truncation, the high watermark, ISR shrink and expand through a conditional ZooKeeper
write plus ``/isr_change_notification``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from explorer.mypyc_compat import mypyc_attr
from explorer.speedups import set_item
from model.controller.actions import Deliver, Fetch, Produce, ShrinkIsr
from model.controller.cluster import Actor
from model.controller.config import FollowerTruncation
from model.controller.events import (
    TopicDeletionStopReplicaResponseError,
    TopicDeletionStopReplicaResponseReceived,
)
from model.controller.messages import (
    BROKER_REQUESTS,
    LEADER_DURING_DELETE,
    ControlledShutdownResponse,
    LeaderAndIsrPartitionStateWithReplicas,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateIsr,
    UpdateMetadataRequest,
)
from model.controller.state import Node, PartZ, Rep, State


@mypyc_attr(allow_interpreted_subclasses=True)
class ReplicaManager(Actor):
    """The data plane of every broker: controller requests applied (LeaderAndIsr, UpdateMetadata,
    StopReplica), produce with acks=all, follower fetches, high watermark, ISR shrink and expand."""

    @staticmethod
    def isr_write_in_flight(n: Node, msg: tuple) -> bool:
        """A LeaderAndIsr for a partition whose leader is writing its ISR waits.

        Kafka 2.x's ``Partition.makeLeader`` / ``makeFollower`` take
        ``leaderIsrUpdateLock``'s write lock, which ``maybeShrinkIsr`` / ``maybeExpandIsr``
        hold across their synchronous ZooKeeper write; so the request is applied only
        after that write's response (otherwise the leader could start a second ISR write,
        and append under an ISR the first write is about to replace).
        """
        if type(msg) is not LeaderAndIsrRequest:
            if type(msg) is not tuple:
                return False
            msg = BROKER_REQUESTS.view(msg)  # a request written as a plain tuple
            if type(msg) is not LeaderAndIsrRequest:
                return False
        reps = n.reps
        return any(reps[entry.partition].pend for entry in msg.partition_states)

    def deliver(self, s: State, sender: int, d: int) -> tuple[Any, State]:
        """Broker ``d`` applies the head request of controller ``sender``'s channel to it, after
        the epoch checks: a ``match`` on its class (``messages.py``; a plain tuple is read as its
        record, ``BROKER_REQUESTS.view``), the most frequent (LeaderAndIsr) first."""
        cfg = self.cfg
        i = sender * self.nb + d
        q = s.chans[i]
        msg: Any = q[0]  # a BrokerRequest, or its plain tuple
        if type(msg) is tuple:
            msg = BROKER_REQUESTS.view(msg)
        chans = set_item(s.chans, i, q[1:])
        n = s.nodes[d]
        ctl_epoch = msg.controller_epoch
        act = Deliver(sender, d, msg)
        stale_broker = cfg.broker_epoch and msg.broker_epoch < n.bepoch
        if ctl_epoch < n.seen_epoch or stale_broker:
            match msg:
                case StopReplicaRequest(data=data) if data.callback and not (
                    stale_broker and cfg.deletion_ignores_stale_broker_epoch
                ):
                    # the error response (STALE_CONTROLLER_EPOCH / STALE_BROKER_EPOCH) still
                    # reaches the deletion callback
                    t = s._replace(chans=chans)
                    return act, self.stop_replica_response(t, sender, d, data.mask, True)
            return act, s._replace(chans=chans)
        # a record is rebuilt only when it changes: an unchanged node keeps its identity, and so
        # its remembered hash (``install_memo_hash``)
        if ctl_epoch > n.seen_epoch:
            n = n._replace(seen_epoch=ctl_epoch)
        match msg:
            case LeaderAndIsrRequest(partition_states=states):
                reps = self.become_leader_or_follower(n.reps, d, states)
                if reps is not n.reps:  # not every entry stale
                    n = n._replace(reps=reps)
            case UpdateMetadataRequest(data=data):
                # MetadataCache.updateMetadata: the alive brokers replaced, each partition state
                # sent put (removed when its leader is LeaderDuringDelete)
                parts = n.mc_parts or (None,) * self.np
                for p, leader, lepoch, isr in data.partition_states:
                    parts = set_item(
                        parts, p, None if leader == LEADER_DURING_DELETE else (leader, lepoch, isr)
                    )
                n = n._replace(mc_live=data.live_brokers, mc_parts=parts)
            case StopReplicaRequest(data=data):
                mask = data.mask
                reps = n.reps
                for p in range(self.np):
                    if (mask >> p) & 1:
                        r = reps[p]
                        if data.delete:
                            r = self.empty_rep
                        else:
                            r = r._replace(leader=-1, isr=(), zkv=0, known=(), pend=False, ar=())
                        reps = set_item(reps, p, r)
                t = s._replace(chans=chans, nodes=set_item(s.nodes, d, n._replace(reps=reps)))
                if data.callback:
                    t = self.stop_replica_response(t, sender, d, mask, False)
                return act, t
            case ControlledShutdownResponse():
                if n.cs >= 3:
                    n = n._replace(cs=2)
        return act, s._replace(chans=chans, nodes=set_item(s.nodes, d, n))

    def become_leader_or_follower(self, reps: tuple, d: int, states: tuple) -> tuple:
        """``becomeLeaderOrFollower``: broker ``d``'s replicas after a LeaderAndIsr's
        ``partition_states`` (an entry of a leader epoch not newer than the replica's is stale)."""
        cfg = self.cfg
        for entry in states:
            p, lepoch = entry.partition, entry.leader_epoch
            r = reps[p]
            if r.epoch >= lepoch:
                continue  # stale leader epoch
            leader = entry.leader
            if leader == d:
                known = tuple(len(r.log) if x == d else 0 for x in range(self.nb))
                r = r._replace(
                    leader=d, epoch=lepoch, isr=entry.isr, zkv=entry.zk_version, known=known, pend=False
                )
                if type(entry) is LeaderAndIsrPartitionStateWithReplicas:
                    r = r._replace(ar=entry.replicas)
            else:
                log = r.log
                if cfg.follower_truncation is FollowerTruncation.HIGH_WATERMARK and len(log) > r.hw:
                    log = log[: r.hw]
                r = r._replace(leader=leader, epoch=lepoch, isr=(), zkv=0, known=(), pend=False, log=log)
            reps = set_item(reps, p, r)
        return reps

    def stop_replica_response(self, s: State, sender: int, d: int, mask: int, error: bool) -> State:
        """The StopReplica response callback queues TopicDeletionStopReplicaResponseReceived at
        the sending controller (if that process still runs)."""
        n = s.nodes[sender]
        if not n.alive:
            return s
        cls = TopicDeletionStopReplicaResponseError if error else TopicDeletionStopReplicaResponseReceived
        ev = cls(d, mask)
        if ev in n.events:
            return s
        return s._replace(nodes=set_item(s.nodes, sender, n._replace(events=(*n.events, ev))))

    def advance_hw(self, r: Rep, me: int, p: int, acked: tuple) -> tuple[Rep, tuple]:
        end = len(r.log)
        hw_new = end
        for x in r.isr:
            if x != me:
                k = r.known[x]
                if k < hw_new:
                    hw_new = k
        if hw_new <= r.hw:
            return r, acked
        added = [(p, o, r.log[o]) for o in range(r.hw, hw_new) if r.log[o] == r.epoch]
        if added:
            acked = tuple(sorted(set(acked) | set(added)))
        return r._replace(hw=hw_new), acked

    def isr_result(self, s: State, b: int, n: Node, resp: Any) -> State:
        p, z = resp.partition, resp.state
        r = n.reps[p]
        acked = s.acked
        r = r._replace(pend=False)
        if z is not None and r.leader == b and r.epoch == z.leader_epoch:
            r = r._replace(isr=z.isr, zkv=z.version)
            r, acked = self.advance_hw(r, b, p, acked)
        elif z is None and self.admin and r.leader == b:
            # BadVersion: the cached zkVersion is stale and every retry with it would fail too; the
            # leader waits for a LeaderAndIsr (admin configurations only: without it a leader could
            # retry forever and starve that LeaderAndIsr, which waits for the ISR write)
            r = r._replace(zkv=-1)
        n = n._replace(reps=set_item(n.reps, p, r))
        return s._replace(nodes=set_item(s.nodes, b, n), acked=acked)

    def data_plane(self, s: State) -> Iterator[tuple[Any, State]]:
        cfg = self.cfg
        nodes = s.nodes
        for b in range(self.nb):
            n = nodes[b]
            if not n.alive:
                continue
            for p in self.parts_of[b]:
                r = n.reps[p]
                if r.leader == b:
                    if r.pend:
                        continue  # leaderIsrUpdateLock is held during the ISR write
                    if s.produced < cfg.max_records:
                        yield self.produce(s, b, p)
                    if not r.pend:
                        for f in r.isr:
                            if f == b:
                                continue
                            fn = nodes[f]
                            stopped = not fn.alive or fn.reps[p].leader != b
                            if r.zkv < 0:
                                break  # stale zkVersion (admin configurations only)
                            if stopped or r.known[f] < len(r.log):
                                yield self.shrink_isr(s, b, p, f)
                elif r.leader >= 0:
                    ln = nodes[r.leader]
                    lr = ln.reps[p]
                    if ln.alive and lr.leader == r.leader and not lr.pend:
                        t = self.fetch(s, b, p, r.leader)
                        if t is not s:
                            yield Fetch(b, p, r.leader), t

    def produce(self, s: State, b: int, p: int) -> tuple[Any, State]:
        n = s.nodes[b]
        r = n.reps[p]
        r = r._replace(log=(*r.log, r.epoch))
        acked = s.acked
        r, acked = self.advance_hw(r, b, p, acked)
        n = n._replace(reps=set_item(n.reps, p, r))
        return Produce(b, p), s._replace(nodes=set_item(s.nodes, b, n), acked=acked, produced=s.produced + 1)

    def fetch(self, s: State, f: int, p: int, ld: int) -> State:
        cfg = self.cfg
        nodes = s.nodes
        fr = nodes[f].reps[p]
        lr = nodes[ld].reps[p]
        flog = fr.log
        llog = lr.log
        if cfg.follower_truncation is FollowerTruncation.LEADER_EPOCH:
            k = 0
            m = min(len(flog), len(llog))
            while k < m and flog[k] == llog[k]:
                k += 1
            flog = flog[:k]
        elif len(flog) > len(llog):
            flog = flog[: len(llog)]
        hw_read = lr.hw
        offset = len(flog)
        acked = s.acked
        lr2 = lr._replace(known=set_item(lr.known, f, offset))
        lr2, acked = self.advance_hw(lr2, ld, p, acked)
        new_flog = flog + llog[offset:]
        fr2 = fr._replace(log=new_flog, hw=min(hw_read, len(new_flog)))
        ln = nodes[ld]
        send = None
        if f not in lr2.isr and offset >= lr2.hw and (not lr2.ar or f in lr2.ar) and lr2.zkv >= 0:
            # Partition.maybeExpandIsr: inSyncReplicas + replica, appended (seed 002: the ISR keeps
            # its own order; only a new partition's ISR is in assignment order)
            isr = (*lr2.isr, f)
            send = UpdateIsr(p, PartZ(ld, lr2.epoch, isr, ln.seen_epoch, lr2.zkv))
            lr2 = lr2._replace(pend=True)
        f_same = fr2 == fr
        l_same = lr2 == lr
        if f_same and l_same and acked is s.acked:
            return s
        # only the node whose replica changed is rebuilt (the other keeps its remembered hash)
        if not l_same:
            ln = ln._replace(reps=set_item(ln.reps, p, lr2))
        if send is not None:
            ln = ln._replace(zk_out=(*ln.zk_out, send))
        fn = nodes[f]
        if not f_same:
            fn = fn._replace(reps=set_item(fn.reps, p, fr2))
        nodes = set_item(set_item(nodes, ld, ln), f, fn)
        return s._replace(nodes=nodes, acked=acked)

    def shrink_isr(self, s: State, b: int, p: int, f: int) -> tuple[Any, State]:
        n = s.nodes[b]
        r = n.reps[p]
        isr = tuple(x for x in r.isr if x != f)
        req = UpdateIsr(p, PartZ(b, r.epoch, isr, n.seen_epoch, r.zkv))
        n = n._replace(reps=set_item(n.reps, p, r._replace(pend=True)), zk_out=(*n.zk_out, req))
        return ShrinkIsr(b, p, f), s._replace(nodes=set_item(s.nodes, b, n))
