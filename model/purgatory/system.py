"""``PurgatorySystem``: seed 004's ``DelayedOperationPurgatory`` with its threads (producers,
the follower fetch, the reaper, the expiration executor) as a transition system.
"""

from __future__ import annotations

from model.action_text import thread_arrow
from model.purgatory.actions import (
    ACTION_KINDS,
    CheckAndCompleteDone,
    ClearPending,
    CompareAndSet,
    ExecutorRun,
    FollowerFetch,
    ForceCompleteCancel,
    GetAndSetPending,
    GetPending,
    IteratorNext,
    IteratorStart,
    LeadershipLost,
    LoopCheck,
    OnComplete,
    OnExpiration,
    PurgeKey,
    PurgeStart,
    Submit,
    TimerAdd,
    TimerCancel,
    TimerCheck,
    TimerExpire,
    TimerRecheck,
    TryCompleteCheck,
    TryLock,
    Unlock,
    Watch,
    WatchCheck,
    WatchedCheck,
    _go,
    _new,
    _set,
)
from model.purgatory.state import (
    C_CHECK,
    C_NEXT,
    C_START,
    E_ON_EXPIRATION,
    FC_CANCEL,
    FC_CAS,
    FC_ON_COMPLETE,
    FIRST,
    IDLE,
    M_CLEAR,
    M_GET,
    M_GETSET,
    M_TRYLOCK,
    M_UNLOCK,
    M_WHILE,
    MAYBE,
    P_KEY,
    PATH_CHECK_AND_COMPLETE,
    PATH_EXPIRY,
    PATH_FIRST_TRY,
    PATH_SECOND_TRY,
    RUN,
    T_ADD,
    T_ADDED,
    T_CANCEL,
    T_CHECK,
    T_EXPIRED,
    T_NONE,
    T_RECHECK,
    TC_CHECK,
    W_ADD,
    W_CHECK,
    Op,
    PurgatoryConfig,
    State,
    Thread,
)

# ----------------------------------------------------------------------------- system


class PurgatorySystem:
    """The purgatory transition system for one :class:`PurgatoryConfig`.

    Threads are numbered: handlers ``0 .. handlers-1``, then fetchers, then the
    reaper, then the executor.

    >>> sys = PurgatorySystem(PurgatoryConfig(ops=1, partitions=1))
    >>> sys.keys, sys.thread_names
    (((0,),), ('handler 0', 'fetcher 0', 'reaper', 'executor'))
    """

    def __init__(self, config: PurgatoryConfig) -> None:
        c = config
        self.config = c
        self.n_ops = c.ops
        self.n_keys = c.partitions
        #: per op: the partitions (watch keys) of its produce request
        self.keys = tuple(tuple((o + j) % c.partitions for j in range(c.keys_per_op)) for o in range(c.ops))
        #: per op: bitmask of its keys
        self.key_mask = tuple(sum(1 << k for k in ks) for ks in self.keys)
        self.required = tuple(c.required_offsets[: c.ops])
        self.followers = c.replicas - 1
        self.handlers = c.handlers
        self.fetchers = c.fetchers
        self.reaper = c.handlers + c.fetchers
        self.executor = self.reaper + 1
        #: per handler: the ops it submits, in order
        self.queues = tuple(tuple(o for o in range(c.ops) if o % c.handlers == h) for h in range(c.handlers))
        self.thread_names = (
            tuple(f"handler {h}" for h in range(c.handlers))
            + tuple(f"fetcher {f}" for f in range(c.fetchers))
            + ("reaper", "executor")
        )
        #: tryCompleteElseWatch calls timeoutTimer.add (timerEnabled)
        self.timer_add = c.expiry
        self.max_fetches = (
            c.fetch_budget if c.fetch_budget >= 0 else c.partitions * self.followers * c.max_offset
        )
        self._dispatch = {
            TC_CHECK: self._tc_check,
            FC_CAS: self._fc_cas,
            FC_CANCEL: self._fc_cancel,
            FC_ON_COMPLETE: self._fc_on_complete,
            W_CHECK: self._w_check,
            W_ADD: self._w_add,
            M_TRYLOCK: self._m_trylock,
            M_CLEAR: self._m_clear,
            M_UNLOCK: self._m_unlock,
            M_GET: self._m_get,
            M_GETSET: self._m_getset,
            M_WHILE: self._m_while,
            T_CHECK: self._t_check,
            T_ADD: self._t_add,
            T_RECHECK: self._t_recheck,
            T_CANCEL: self._t_cancel,
            C_START: self._c_start,
            C_NEXT: self._c_next,
            C_CHECK: self._c_check,
            E_ON_EXPIRATION: self._e_on_expiration,
            P_KEY: self._p_key,
        }

    # ------------------------------------------------------------------ contract

    def init_states(self) -> list[State]:
        """The one initial state: nothing submitted, every follower at LEO 0.

        >>> s = PurgatorySystem(PurgatoryConfig()).init_states()[0]
        >>> s.leo, s.watched, s.ops[0].acks
        (((0,), (0,)), (0, 0), 1)
        """
        n = len(self.thread_names)
        full = (1 << self.config.keys_per_op) - 1
        return [
            State(
                threads=(Thread(),) * n,
                ops=(Op(acks=full),) * self.n_ops,
                leo=((0,) * self.followers,) * self.n_keys,
                led=(True,) * self.n_keys,
                order=((),) * self.n_keys,
                watched=(0,) * self.n_keys,
                est=0,
            )
        ]

    def sequence_arrow(self, action: object) -> tuple[str, str, str]:
        """The report's sequence diagrams: a lifeline per thread, each step on its own
        (:func:`model.action_text.thread_arrow`)."""
        return thread_arrow(action)

    def action_kinds(self) -> tuple[str, ...]:
        """The action kinds the model can take.

        >>> "CompareAndSet" in PurgatorySystem(PurgatoryConfig()).action_kinds()
        True
        """
        return ACTION_KINDS

    def successors(self, s: State) -> list[tuple[object, State]]:
        """Every enabled step of every thread, threads in index order."""
        out: list[tuple[object, State]] = []
        dispatch = self._dispatch
        for t, th in enumerate(s.threads):
            if th.pc == IDLE:
                self._idle(s, t, out)
            else:
                out.append(dispatch[th.pc](s, t, th))
        return out

    def is_terminal(self, s: State) -> bool:
        """A proper end: every thread idle and every handler through its operations.

        >>> sys = PurgatorySystem(PurgatoryConfig())
        >>> sys.is_terminal(sys.init_states()[0])
        False
        """
        return self.all_idle(s) and self.all_submitted(s)

    # ------------------------------------------------------------------ helpers read by invariants

    def high_watermark(self, s: State, p: int) -> int:
        """The leader's high watermark of partition ``p``: the minimum LEO over the ISR.

        >>> sys = PurgatorySystem(PurgatoryConfig())
        >>> sys.high_watermark(sys.init_states()[0], 0)
        0
        """
        leos = s.leo[p]
        return min(leos) if leos else self.config.max_offset

    def partition_ok(self, s: State, o: int, p: int) -> bool:
        """DelayedProduce's per-partition test: HW >= requiredOffset, or an error (not leader)."""
        return not s.led[p] or self.high_watermark(s, p) >= self.required[o]

    def satisfied(self, s: State, o: int) -> bool:
        """Whether tryComplete() of op ``o`` would find no acks pending now (a stable fact).

        >>> sys = PurgatorySystem(PurgatoryConfig(replicas=1))
        >>> sys.satisfied(sys.init_states()[0], 0)
        True
        """
        return all(self.partition_ok(s, o, p) for p in self.keys[o])

    def submitted(self, s: State, o: int) -> bool:
        """Whether op ``o``'s handler has started its tryCompleteElseWatch."""
        h = o % self.handlers
        th = s.threads[h]
        pos = o // self.handlers
        return th.next > pos or (th.next == pos and th.pc != IDLE)

    def handler_finished(self, s: State, o: int) -> bool:
        """Whether op ``o``'s tryCompleteElseWatch has returned."""
        return s.threads[o % self.handlers].next > o // self.handlers

    def all_submitted(self, s: State) -> bool:
        """Whether every handler has finished all its operations."""
        return all(s.threads[h].next == len(q) for h, q in enumerate(self.queues))

    def all_idle(self, s: State) -> bool:
        """Whether every thread is between requests."""
        return all(th.pc == IDLE for th in s.threads)

    def checking_keys(self, s: State) -> int:
        """Bitmask of the keys some fetcher is running checkAndComplete on."""
        m = 0
        for t in range(self.handlers, self.reaper):
            th = s.threads[t]
            if th.pc != IDLE:
                m |= 1 << th.key
        return m

    def delayed(self, s: State) -> int:
        """``timeoutTimer.size``: operations whose timer entry is in the timer."""
        return sum(1 for op in s.ops if op.timer == T_ADDED)

    def completed_mask(self, s: State) -> int:
        """Bitmask of the completed operations."""
        return sum(1 << o for o, op in enumerate(s.ops) if op.completed)

    def purge_due(self, s: State) -> bool:
        """The reaper's test: estimatedTotalOperations - delayed > purgeInterval."""
        return s.est - self.delayed(s) > self.config.purge_interval

    # ------------------------------------------------------------------ thread steps

    def _idle(self, s: State, t: int, out: list) -> None:
        if t < self.handlers:
            th = s.threads[t]
            q = self.queues[t]
            if th.next < len(q):
                o = q[th.next]
                a, s2 = self._tc_check(s, t, Thread(TC_CHECK, op=o, ctx=FIRST, next=th.next))
                out.append((Submit(*a), s2))
        elif t < self.reaper:
            who = self.thread_names[t]
            if sum(map(sum, s.leo)) < self.max_fetches:
                top = self.config.max_offset
                for p in range(self.n_keys):
                    if not s.led[p]:
                        continue
                    leos = s.leo[p]
                    for r, v in enumerate(leos):
                        if v < top:
                            before = min(leos)
                            nl = _set(leos, r, v + 1)
                            s2 = s._replace(
                                threads=_set(s.threads, t, Thread(C_START, key=p)), leo=_set(s.leo, p, nl)
                            )
                            out.append((FollowerFetch(who, p, r + 1, v + 1, before, min(nl)), s2))
            if s.led.count(False) < self.config.leader_changes:
                for p in range(self.n_keys):
                    if s.led[p]:
                        s2 = s._replace(
                            threads=_set(s.threads, t, Thread(C_START, key=p)), led=_set(s.led, p, False)
                        )
                        out.append((LeadershipLost(who, p), s2))
        elif t == self.reaper:
            if self.config.expiry:
                for o, op in enumerate(s.ops):
                    if op.timer == T_ADDED:
                        out.append(
                            (TimerExpire(o), s._replace(ops=_set(s.ops, o, op._replace(timer=T_EXPIRED))))
                        )
            delayed = self.delayed(s)
            if s.est - delayed > self.config.purge_interval:
                s2 = s._replace(threads=_set(s.threads, t, Thread(P_KEY, i=0)), est=delayed)
                out.append((PurgeStart(s.est, delayed), s2))
        else:
            for o, op in enumerate(s.ops):
                if op.timer == T_EXPIRED:
                    s2 = s._replace(
                        threads=_set(s.threads, t, Thread(FC_CAS, op=o, ctx=RUN)),
                        ops=_set(s.ops, o, op._replace(timer=T_NONE)),
                    )
                    out.append((ExecutorRun(o), s2))

    def _put(self, s: State, t: int, th: Thread, o: int = -1, op: Op | None = None) -> State:
        threads = s[0]
        threads = (*threads[:t], th, *threads[t + 1 :])
        if op is None:
            return _new(State, (threads, *s[1:]))
        ops = s[1]
        return _new(State, (threads, (*ops[:o], op, *ops[o + 1 :]), *s[2:]))

    def _finish_handler(self, th: Thread) -> Thread:
        return Thread(next=th.next + 1)

    def _tc_return(self, t: int, th: Thread, r: bool) -> Thread:
        """tryComplete() returns ``r`` to its caller."""
        if th.ctx == FIRST:
            return self._finish_handler(th) if r else Thread(W_CHECK, op=th.op, i=0, next=th.next)
        return th._replace(pc=M_UNLOCK, i=0, done=r)

    def _fc_return(self, t: int, th: Thread, r: bool) -> Thread:
        """forceComplete() returns ``r`` to its caller."""
        if th.ctx == RUN:
            return Thread(E_ON_EXPIRATION, op=th.op, ctx=RUN) if r else Thread()
        return self._tc_return(t, th, r)

    def _mtc_return(self, t: int, th: Thread, done: bool) -> Thread:
        """maybeTryComplete() returns ``done`` to its caller."""
        if t < self.handlers:
            if done:
                return self._finish_handler(th)
            return Thread(T_CHECK, op=th.op, next=th.next)
        return Thread(C_NEXT, op=th.op, done=done, key=th.key, nxt=th.nxt, snap=th.snap)

    def _tc_check(self, s: State, t: int, th: Thread):
        o, i = th.op, th.i
        op = s.ops[o]
        p = self.keys[o][i]
        led = s.led[p]
        hw = self.high_watermark(s, p)
        req = self.required[o]
        ok = not led or hw >= req
        acks = op.acks
        if ok:
            acks &= ~(1 << i)
        last = i + 1 == len(self.keys[o])
        if not last:
            th2 = th._replace(i=i + 1)
        elif acks == 0:
            th2 = th._replace(pc=FC_CAS, i=0)
        else:
            th2 = self._tc_return(t, th, False)
        a = (self.thread_names[t], o, p, hw, req, led, ok, last, last and acks == 0)
        if acks != op.acks:
            return TryCompleteCheck(*a), self._put(s, t, th2, o, op._replace(acks=acks))
        return TryCompleteCheck(*a), self._put(s, t, th2)

    def _fc_cas(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        who = self.thread_names[t]
        if op.completed:
            op2 = op if op.lost_cas else op._replace(lost_cas=True)
            return CompareAndSet(who, o, False), self._put(s, t, self._fc_return(t, th, False), o, op2)
        return CompareAndSet(who, o, True), self._put(
            s, t, _go(th, FC_CANCEL), o, op._replace(completed=True)
        )

    def _cancel(self, s: State, t: int, o: int, th2: Thread) -> tuple[bool, State]:
        """``TimerTask.cancel()`` of operation ``o``'s timer entry by thread ``t``, which moves on
        to ``th2``: whether it removed the entry (still in the timer), and the new state."""
        op = s.ops[o]
        if op.timer == T_ADDED:
            return True, self._put(s, t, th2, o, op._replace(timer=T_NONE))
        return False, self._put(s, t, th2)

    def _fc_cancel(self, s: State, t: int, th: Thread):
        removed, s2 = self._cancel(s, t, th.op, _go(th, FC_ON_COMPLETE))
        return ForceCompleteCancel(self.thread_names[t], th.op, removed), s2

    def _fc_on_complete(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        if th.ctx == RUN:
            path = PATH_EXPIRY
        elif th.ctx == FIRST:
            path = PATH_FIRST_TRY
        elif t < self.handlers:
            path = PATH_SECOND_TRY
        else:
            path = PATH_CHECK_AND_COMPLETE
        op2 = op._replace(completions=min(op.completions + 1, 2), by=op.by | path)
        return OnComplete(self.thread_names[t], o, path), self._put(
            s, t, self._fc_return(t, th, True), o, op2
        )

    def _w_check(self, s: State, t: int, th: Thread):
        o = th.op
        k = self.keys[o][th.i]
        if s.ops[o].completed:
            return WatchCheck(self.thread_names[t], o, k, True), self._put(s, t, self._finish_handler(th))
        return WatchCheck(self.thread_names[t], o, k, False), self._put(s, t, _go(th, W_ADD))

    def _w_add(self, s: State, t: int, th: Thread):
        o, i = th.op, th.i
        k = self.keys[o][i]
        if i + 1 < len(self.keys[o]):
            th2 = Thread(W_CHECK, op=o, i=i + 1, next=th.next)
        else:
            th2 = Thread(M_TRYLOCK, op=o, ctx=MAYBE, next=th.next)
        s2 = s._replace(
            threads=_set(s.threads, t, th2),
            order=_set(s.order, k, (*s.order[k], o)),
            watched=_set(s.watched, k, s.watched[k] | (1 << o)),
            est=s.est + 1 if i == 0 else s.est,
        )
        return Watch(self.thread_names[t], o, k, i == 0), s2

    def _m_trylock(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        if op.lock < 0:
            return TryLock(self.thread_names[t], o, True), self._put(
                s, t, _go(th, M_CLEAR), o, op._replace(lock=t)
            )
        return TryLock(self.thread_names[t], o, False), self._put(s, t, _go(th, M_GETSET))

    def _m_clear(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        th2 = th._replace(pc=TC_CHECK, i=0)
        a = ClearPending(self.thread_names[t], o)
        if op.pending:
            return a, self._put(s, t, th2, o, op._replace(pending=False))
        return a, self._put(s, t, th2)

    def _m_unlock(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        return Unlock(self.thread_names[t], o, th.done), self._put(
            s, t, _go(th, M_GET), o, op._replace(lock=-1)
        )

    def _m_get(self, s: State, t: int, th: Thread):
        o = th.op
        v = s.ops[o].pending
        retry = v
        return GetPending(self.thread_names[t], o, v, retry), self._put(
            s, t, th._replace(pc=M_WHILE, retry=retry)
        )

    def _m_getset(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        old = op.pending
        retry = not old
        a = GetAndSetPending(self.thread_names[t], o, old, retry)
        th2 = th._replace(pc=M_WHILE, retry=retry)
        if old:
            return a, self._put(s, t, th2)
        return a, self._put(s, t, th2, o, op._replace(pending=True))

    def _m_while(self, s: State, t: int, th: Thread):
        o = th.op
        c = s.ops[o].completed
        again = not c and th.retry
        a = LoopCheck(self.thread_names[t], o, c, th.retry, again, th.done)
        if again:
            return a, self._put(s, t, th._replace(pc=M_TRYLOCK, retry=False))
        return a, self._put(s, t, self._mtc_return(t, th, th.done))

    def _t_check(self, s: State, t: int, th: Thread):
        o = th.op
        if s.ops[o].completed:
            return TimerCheck(self.thread_names[t], o, True), self._put(s, t, self._finish_handler(th))
        return TimerCheck(self.thread_names[t], o, False), self._put(
            s, t, _go(th, T_ADD if self.timer_add else T_RECHECK)
        )

    def _t_add(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        return TimerAdd(self.thread_names[t], o), self._put(
            s, t, _go(th, T_RECHECK), o, op._replace(timer=T_ADDED)
        )

    def _t_recheck(self, s: State, t: int, th: Thread):
        o = th.op
        if s.ops[o].completed:
            return TimerRecheck(self.thread_names[t], o, True), self._put(s, t, _go(th, T_CANCEL))
        return TimerRecheck(self.thread_names[t], o, False), self._put(s, t, self._finish_handler(th))

    def _t_cancel(self, s: State, t: int, th: Thread):
        removed, s2 = self._cancel(s, t, th.op, self._finish_handler(th))
        return TimerCancel(self.thread_names[t], th.op, removed), s2

    def _iter_remove(self, s: State, k: int, ops: int) -> State:
        """``iter.remove()`` of the ops in bitmask ``ops`` from key ``k``'s watcher list
        (tryCompleteWatched, purgeCompleted)."""
        return s._replace(watched=_set(s.watched, k, s.watched[k] & ~ops))

    def _succ(self, s: State, k: int, after: int) -> int:
        """The first op watched on key ``k`` after ``after`` in watch order (-1: none)."""
        present = s.watched[k]
        order = s.order[k]
        start = 0 if after < 0 else order.index(after) + 1
        for o in order[start:]:
            if present >> o & 1:
                return o
        return -1

    def _c_start(self, s: State, t: int, th: Thread):
        k = th.key
        snap = s.watched[k] & self.completed_mask(s)
        first = self._succ(s, k, -1)
        return IteratorStart(self.thread_names[t], k, first), self._put(
            s, t, Thread(C_NEXT, key=k, nxt=first, snap=snap)
        )

    def _c_next(self, s: State, t: int, th: Thread):
        k = th.key
        removed = -1
        s1 = s
        if th.op >= 0 and th.done:
            removed = th.op
            s1 = self._iter_remove(s, k, 1 << th.op)
        who = self.thread_names[t]
        if th.nxt < 0:
            return CheckAndCompleteDone(who, k, removed), self._put(s1, t, Thread())
        cur = th.nxt
        nxt = self._succ(s1, k, cur)
        return IteratorNext(who, k, removed, cur, nxt), self._put(
            s1, t, Thread(C_CHECK, op=cur, key=k, nxt=nxt, snap=th.snap)
        )

    def _c_check(self, s: State, t: int, th: Thread):
        o, k = th.op, th.key
        who = self.thread_names[t]
        if s.ops[o].completed:
            th2 = th._replace(pc=C_NEXT, op=-1)
            return WatchedCheck(who, o, k, True), self._put(self._iter_remove(s, k, 1 << o), t, th2)
        return WatchedCheck(who, o, k, False), self._put(s, t, th._replace(pc=M_TRYLOCK, ctx=MAYBE))

    def _e_on_expiration(self, s: State, t: int, th: Thread):
        o = th.op
        op = s.ops[o]
        return OnExpiration(o), self._put(
            s, t, Thread(), o, op._replace(expirations=min(op.expirations + 1, 2))
        )

    def _p_key(self, s: State, t: int, th: Thread):
        k = th.i
        removed = s.watched[k] & self.completed_mask(s)
        th2 = Thread(P_KEY, i=k + 1) if k + 1 < self.n_keys else Thread()
        if removed:
            return PurgeKey(k, removed), self._put(self._iter_remove(s, k, removed), t, th2)
        return PurgeKey(k, removed), self._put(s, t, th2)
