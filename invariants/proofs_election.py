"""Proof obligations for the leader-election rules (model/election.py) and the
controller-election core (k-induction).

Election rules
--------------
Each obligation runs the model's own function (``model.election``) over symbolic
inputs with :func:`explorer.symbolic.prove_paths` and checks, on every path, a contract
written here as a z3 formula over the inputs (the seeds' statement of the rule, not a
copy of its code). Inputs, for every assignment size ``n`` in ``1..max_replicas``:

- the assignment: ``n`` symbolic broker ids ``a0..a{n-1}``, pairwise distinct, in
  ``[0, DOMAIN)``; one more broker ``o`` (not assigned, always live) so live sets may be
  "every live broker" as well as "the live replicas";
- the live set (and the shutting-down set): one symbolic membership bit per assigned
  replica; the tuple handed to the rule lists the live replicas in assignment order,
  then ``o``. Order does not matter: the rules read these sets only through
  ``contains``, and ``contains_is_membership`` proves ``contains`` is plain membership
  for tuples of any order (up to 8 elements);
- the ISR: ``isr_order="assignment"`` (default): one membership bit per assigned
  replica, listed in assignment order (every subset, including the empty one);
  ``isr_order="any"``: for every length ``k`` in ``0..n``, ``k`` symbolic ids, pairwise
  distinct, each one of the assigned replicas (every subset in every order; slower,
  use it for ``n <= 4``);
- the leader, leader epoch and zkVersion of the current ``LeaderAndIsr``: symbolic
  integers (the leader any broker id or ``NO_LEADER``); the unclean flags and the
  election trigger: symbolic.

Controller election (k-induction)
---------------------------------
:class:`ControllerCore` is an abstraction of seed 004's ``KafkaController.elect``
(2.x): ``/controller`` (owner broker or none), ``/controller_epoch`` (value and
zkVersion), and per broker: its ZooKeeper session, the epoch and zkVersion it read,
whether it believes it is the controller and with which epoch. Steps: read
``/controller_epoch`` (``ReadEpoch``); the elect multi (``Elect``: create the ephemeral
``/controller`` and setData ``/controller_epoch`` = read + 1 with the read zkVersion, both
or neither); session expiry (``Expire``: the ephemeral goes, the broker keeps believing);
resignation on the watch (``Resign``: a broker that is no longer ``/controller``'s owner
stops being controller); re-establishing a session (``Reconnect``). It is a plain
Python transition system: the same ``step`` function runs concretely (bfs) and
symbolically (the transition relation for z3). See :func:`k_induction`.

z3 contexts
-----------
Each ``prove_*`` function and :func:`k_induction` runs in a z3 context of its own
(:func:`explorer.symbolic.isolated`), so its outcome and time do not depend on what ran
before in the process; it builds its terms itself and returns plain values (not so
:func:`transition_relation`, which returns terms of the caller's context). Keep no z3
term at module level: it would belong to another context ("context mismatch").

Example
-------
>>> out = prove_rule("initialize_leader_and_isr", 2)
>>> out.status
'held'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import z3

import model.election as election
from explorer.core import always, transition
from explorer.symbolic import (
    Obligation,
    PathExplorer,
    ProofOutcome,
    Sym,
    isolated,
    model_value,
    path_value,
    prove_paths,
    sym_int,
    z,
)
from model.election import (
    NO_LEADER,
    ControlledShutdownAction,
    ElectionOutcome,
    ElectionTrigger,
    LeaderAndIsr,
)

__all__ = [
    "DOMAIN",
    "MUTANTS",
    "PROOF_TARGETS",
    "RULES",
    "ControllerCore",
    "CoreState",
    "controller_election_obligations",
    "core_properties",
    "election_rule_obligations",
    "k_induction",
    "prove_contains_is_membership",
    "prove_rule",
    "prove_rule_all_sizes",
    "refute_mutant",
    "transition_relation",
]

DOMAIN = 16
"""Broker ids range over ``[0, DOMAIN)``; ``NO_LEADER`` (-1) is outside."""


# ----------------------------------------------------------------------------------------
# Symbolic inputs.


# Formula helpers that fold Python constants (on one path most inputs are decided, so a
# contract mostly folds to True/False before z3 sees it).

Term = Any  # a z3 term, a Python bool/int, or a Sym


# The contracts build millions of small terms: these helpers call z3's C API directly
# where z3's Python layer would re-check sorts and contexts of arguments that are
# already Bool terms of one context (the same terms result).


def _truth(x: z3.ExprRef) -> int:
    """``Z3_L_TRUE`` / ``Z3_L_FALSE`` for the literals true / false, else ``Z3_L_UNDEF``
    (what ``z3.is_true`` / ``z3.is_false`` test, in one call)."""
    return z3.Z3_get_bool_value(x.ctx.ref(), x.as_ast())  # type: ignore[no-any-return]


_L_TRUE, _L_FALSE = z3.Z3_L_TRUE, z3.Z3_L_FALSE


def _bool_op(mk: Callable[..., Any], fallback: Callable[..., Any], xs: list[Any]) -> Any:
    """``mk`` (Z3_mk_and / Z3_mk_or) over Bool terms ``xs`` (two or more), else ``fallback``."""
    if not all(isinstance(x, z3.BoolRef) for x in xs):
        return fallback(xs)
    ctx = xs[0].ctx
    arr = (z3.Ast * len(xs))(*[x.as_ast() for x in xs])
    return z3.BoolRef(mk(ctx.ref(), len(xs), arr), ctx)


def AND(*xs: Term) -> Term:
    """Conjunction folding Python booleans.

    >>> p, q = z3.Bools("p q")
    >>> AND(p, True, q), AND(p, False), AND(True, z3.BoolVal(True))
    (And(p, q), False, True)
    """
    rest = []
    for x in xs:
        x = x.x if isinstance(x, Sym) else x
        if x is False:
            return False
        if x is True:
            continue
        if isinstance(x, z3.ExprRef):
            t = _truth(x)
            if t == _L_FALSE:
                return False
            if t == _L_TRUE:
                continue
        rest.append(x)
    if not rest:
        return True
    return rest[0] if len(rest) == 1 else _bool_op(z3.Z3_mk_and, z3.And, rest)


def OR(*xs: Term) -> Term:
    """Disjunction folding Python booleans.

    >>> p, q = z3.Bools("p q")
    >>> OR(p, False, q), OR(p, True), OR(False, z3.BoolVal(False))
    (Or(p, q), True, False)
    """
    rest = []
    for x in xs:
        x = x.x if isinstance(x, Sym) else x
        if x is True:
            return True
        if x is False:
            continue
        if isinstance(x, z3.ExprRef):
            t = _truth(x)
            if t == _L_TRUE:
                return True
            if t == _L_FALSE:
                continue
        rest.append(x)
    if not rest:
        return False
    return rest[0] if len(rest) == 1 else _bool_op(z3.Z3_mk_or, z3.Or, rest)


def NOT(x: Term) -> Term:
    """Negation folding Python booleans.

    >>> NOT(True), NOT(z3.Bool("p"))
    (False, Not(p))
    """
    x = x.x if isinstance(x, Sym) else x
    if isinstance(x, bool):
        return not x
    if isinstance(x, z3.BoolRef):
        return z3.BoolRef(z3.Z3_mk_not(x.ctx.ref(), x.as_ast()), x.ctx)
    return z3.Not(x)


def IF(c: Term, x: Term, y: Term) -> Term:
    """If-then-else folding a Python condition."""
    c = c.x if isinstance(c, Sym) else c
    if isinstance(c, bool):
        return x if c else y
    return z3.If(c, z(x), z(y))


def IMPLIES(p: Term, q: Term) -> Term:
    """Implication folding Python booleans."""
    return OR(NOT(p), q)


def _count(bits: Sequence[Term]) -> Term:
    fixed = sum(1 for b in bits if b is True)
    open_ = [b for b in bits if not isinstance(b, bool)]
    if not open_:
        return fixed
    return z3.Sum([z3.If(b, 1, 0) for b in open_]) + fixed


def _ceq(x: Term, y: Term) -> Term:
    """Equality of two counts (ints or terms)."""
    if isinstance(x, int) and isinstance(y, int):
        return x == y
    return z(x) == z(y)


# ----------------------------------------------------------------------------------------
# Symbolic inputs.


@dataclass
class _Inputs:
    """Symbolic inputs of one election proof (see the module doc)."""

    n: int
    a: list[z3.ArithRef]  # the assignment
    o: z3.ArithRef  # a live broker outside the assignment
    live: list[z3.BoolRef]  # live bit per assigned replica
    sd: list[z3.BoolRef]  # shutting-down bit per assigned replica
    not_live: list[z3.ArithRef]  # stand-ins (outside the assignment) for non-live replicas
    not_sd: list[z3.ArithRef]
    isr_items: list[z3.ArithRef]  # the ISR is isr_items filtered by isr_guard
    isr_guard: list[Term]
    isr_bits: list[z3.BoolRef]  # free bits of the ISR (assignment order), else []
    leader: z3.ArithRef
    epoch: z3.ArithRef
    version: z3.ArithRef
    flags: list[z3.BoolRef]
    trigger: z3.ArithRef
    replica: z3.ArithRef
    distinct_ids: frozenset[int] = frozenset()
    #: the Sym objects handed to the rule, built once (shared by ``on_path`` copies): the
    #: rule runs once per path, and a Sym remembers the terms its operators built
    syms: dict[Any, Any] = field(default_factory=dict)
    #: ``eq`` results by the identity of the terms compared (shared by ``on_path`` copies)
    eqs: dict[tuple[Any, Any, bool], tuple[Any, Any, Term]] = field(default_factory=dict)

    # -- what the rule sees ----------------------------------------------------------------
    def sym(self, x: z3.ExprRef) -> Sym:
        """The one :class:`Sym` of the input term ``x`` (a term of this object)."""
        hit = self.syms.get(id(x))
        if hit is None:
            hit = self.syms[id(x)] = (x, Sym(x))
        return hit[1]  # type: ignore[no-any-return]

    def _built(self, key: str, build: Callable[[], Any]) -> Any:
        hit = self.syms.get(key)
        if hit is None:
            hit = self.syms[key] = build()
        return hit

    def assignment(self) -> tuple[Sym, ...]:
        return self._built("assignment", lambda: tuple(self.sym(x) for x in self.a))  # type: ignore[no-any-return]

    def live_tuple(self) -> tuple[Sym, ...]:
        """Position i is replica i if live, else a stand-in broker outside the assignment;
        then ``o``. Membership tests fork on the live bit only when the rule asks."""

        def build() -> tuple[Sym, ...]:
            out = tuple(Sym(z3.If(b, x, y)) for x, b, y in zip(self.a, self.live, self.not_live))
            return (*out, self.sym(self.o))

        return self._built("live", build)  # type: ignore[no-any-return]

    def shutting_down_tuple(self) -> tuple[Sym, ...]:
        return self._built(  # type: ignore[no-any-return]
            "shutting_down",
            lambda: tuple(Sym(z3.If(b, x, y)) for x, b, y in zip(self.a, self.sd, self.not_sd)),
        )

    def isr_tuple(self) -> tuple[Sym, ...]:
        # its length matters to the rules, so each ISR bit forks here
        pairs = self._built(
            "isr",
            lambda: [(self.sym(x), Sym(z(g))) for x, g in zip(self.isr_items, self.isr_guard)],
        )
        return tuple(x for x, g in pairs if g)

    def current(self) -> LeaderAndIsr:
        leader, epoch, version = self.sym(self.leader), self.sym(self.epoch), self.sym(self.version)
        return LeaderAndIsr(leader, epoch, self.isr_tuple(), version)  # type: ignore[arg-type]

    # -- the contract's vocabulary (evaluated on one path: decided bits fold) -------------
    def on_path(self) -> _Inputs:
        """A copy whose free bits decided on the current path are Python booleans."""

        def val(b: Term) -> Term:
            if isinstance(b, bool):
                return b
            v = path_value(b)
            return b if v is None else v

        return replace(
            self,
            live=[val(b) for b in self.live],
            sd=[val(b) for b in self.sd],
            isr_guard=[val(b) for b in self.isr_guard],
            flags=[val(b) for b in self.flags],
        )

    def eq(self, x: Term, y: Term) -> Term:
        """``x == y``, folded to a Python bool when the terms are the same or two of the
        pairwise distinct inputs (remembered by the identity of the terms)."""
        return self._pair(x, y, True)

    def same(self, x: Term, y: Term) -> Term:
        """The term ``z(x) == z(y)`` (not folded; remembered by the identity of the terms)."""
        return self._pair(x, y, False)

    def _pair(self, x: Term, y: Term, fold: bool) -> Term:
        x = x.x if isinstance(x, Sym) else x
        y = y.x if isinstance(y, Sym) else y
        key = (
            id(x) if isinstance(x, z3.ExprRef) else (type(x), x),
            id(y) if isinstance(y, z3.ExprRef) else (type(y), y),
            fold,
        )
        memo = self.eqs
        hit = memo.get(key)
        if hit is None:
            if len(memo) >= 20_000:  # terms built on one path only: keep the memo bounded
                memo.clear()
            hit = memo[key] = (x, y, self._eq(x, y) if fold else z(x) == z(y))
        return hit[2]

    def _eq(self, x: Term, y: Term) -> Term:
        x, y = z(x), z(y)
        if x.get_id() == y.get_id():
            return True
        if x.get_id() in self.distinct_ids and y.get_id() in self.distinct_ids:
            return False
        return x == y

    def first(self, items: Sequence[Term], keep: Sequence[Term], none: Term = NO_LEADER) -> Term:
        """The first item whose keep bit holds (``none`` if none does)."""
        out = none
        for it, k in reversed(list(zip(items, keep))):
            out = IF(k, it, out)
        return out

    def res_is(self, r: Term, want: Term) -> Term:
        """``r == want`` where want may be an If-chain over items (folded when possible)."""
        if isinstance(want, z3.ExprRef) and z3.is_app_of(want, z3.Z3_OP_ITE):
            return IF(want.arg(0), self.res_is(r, want.arg(1)), self.res_is(r, want.arg(2)))
        if isinstance(want, int) and not isinstance(r, Sym | z3.ExprRef):
            return r == want
        return self.eq(r, want)

    def is_filter(self, res: Sequence[Term], items: Sequence[Term], keep: Sequence[Term]) -> Term:
        """``res`` is exactly the items whose keep bit holds, in their order."""
        parts: list[Term] = [_ceq(_count(keep), len(res))]
        counts = [_count(keep[:i]) for i in range(len(keep))] if res else []  # the same terms, built once
        for m, r in enumerate(res):
            alts = [AND(k, _ceq(counts[i], m), self.eq(r, it)) for i, (it, k) in enumerate(zip(items, keep))]
            parts.append(OR(*alts))
        return AND(*parts)

    def tuple_eq(self, res: Sequence[Term], items: Sequence[Term]) -> Term:
        if len(res) != len(items):
            return False
        return AND(*[self.eq(r, x) for r, x in zip(res, items)])

    def is_live(self, x: Term) -> Term:
        return OR(*[AND(b, self.eq(a, x)) for a, b in zip(self.a, self.live)], self.eq(self.o, x))

    def is_sd(self, x: Term) -> Term:
        return OR(*[AND(b, self.eq(a, x)) for a, b in zip(self.a, self.sd)])

    def in_isr(self, x: Term) -> Term:
        return OR(*[AND(g, self.eq(it, x)) for it, g in zip(self.isr_items, self.isr_guard)])

    def isr_filter(self, res: Sequence[Term], keep: Callable[[Term], Term]) -> Term:
        guards = [AND(g, keep(it)) for it, g in zip(self.isr_items, self.isr_guard)]
        return self.is_filter(res, self.isr_items, guards)

    def isr_unchanged(self, res: Sequence[Term]) -> Term:
        return self.is_filter(res, self.isr_items, self.isr_guard)

    def isr_nonempty(self) -> Term:
        return OR(*self.isr_guard)


def _inputs(
    n: int, isr_len: int | None
) -> tuple[_Inputs, list[z3.BoolRef], list[z3.ExprRef], list[z3.BoolRef]]:
    """Inputs for assignment size ``n``; ISR in assignment order (``isr_len`` None) or any order."""
    a = [z3.Int(f"a{i}") for i in range(n)]
    o = z3.Int("o")
    not_live = [z3.Int(f"not_live{i}") for i in range(n)]
    not_sd = [z3.Int(f"not_shutting_down{i}") for i in range(n)]
    live = [z3.Bool(f"live{i}") for i in range(n)]
    sd = [z3.Bool(f"shutting_down{i}") for i in range(n)]
    flags = [z3.Bool("allow_unclean"), z3.Bool("topic_unclean")]
    leader, epoch, version = z3.Ints("leader leader_epoch zk_version")
    trigger, replica = z3.Ints("trigger replica")
    pre = [z3.And(x >= 0, x < DOMAIN) for x in [*a, o]]
    pre += [x >= DOMAIN for x in [*not_live, *not_sd]]  # stand-ins: ids no rule input uses
    pre += [z3.Or(leader == NO_LEADER, z3.And(leader >= 0, leader < DOMAIN))]
    pre += [epoch >= 0, version >= 0, trigger >= 0, trigger <= 2, replica >= 0, replica < DOMAIN]
    free = [*live, *sd, *flags]
    bits: list[z3.BoolRef] = []
    if isr_len is None:
        bits = [z3.Bool(f"isr{i}") for i in range(n)]
        items, guard = list(a), list(bits)
        free += bits
    else:
        items = [z3.Int(f"isr_{m}") for m in range(isr_len)]
        guard = [True] * isr_len
        pre += [z3.Or([s == x for x in a]) for s in items]
        if isr_len > 1:
            pre.append(z3.Distinct(*items))
    distinct = [*a, o, *not_live, *not_sd]
    inp = _Inputs(
        n,
        a,
        o,
        live,
        sd,
        not_live,
        not_sd,
        items,
        guard,
        bits,
        leader,
        epoch,
        version,
        flags,
        trigger,
        replica,
        frozenset(x.get_id() for x in distinct),
    )
    return inp, pre, distinct, free


def _render(inp: _Inputs) -> Callable[[z3.ModelRef, Any], dict[str, Any]]:
    def render(m: z3.ModelRef, result: Any) -> dict[str, Any]:
        v = lambda t: model_value(m, t)  # noqa: E731
        a = [v(x) for x in inp.a]
        isr = [v(it) for it, g in zip(inp.isr_items, inp.isr_guard) if v(g)]
        out: dict[str, Any] = {
            "assignment": tuple(a),
            "isr": tuple(isr),
            "live": (*(x for x, b in zip(a, inp.live) if v(b)), v(inp.o)),
            "shutting_down": tuple(x for x, b in zip(a, inp.sd) if v(b)),
            "leader": v(inp.leader),
            "leader_epoch": v(inp.epoch),
            "zk_version": v(inp.version),
            "allow_unclean": v(inp.flags[0]),
            "topic_unclean": v(inp.flags[1]),
            "trigger": ElectionTrigger(v(inp.trigger)).name,
            "replica": v(inp.replica),
        }
        if result is not None:
            out["result"] = _render_value(m, result)
        return out

    return render


def _render_value(m: z3.ModelRef, r: Any) -> Any:
    if isinstance(r, tuple) and hasattr(r, "_fields"):
        return {k: _render_value(m, x) for k, x in zip(r._fields, r)}
    if isinstance(r, tuple):
        return tuple(_render_value(m, x) for x in r)
    if isinstance(r, ElectionOutcome | ControlledShutdownAction):
        return r.name
    return model_value(m, r)


# ----------------------------------------------------------------------------------------
# The rules and their contracts. ``run(inp, f)`` calls the model (``f`` is model.election);
# ``spec(inp, res)`` is the contract, evaluated on one path (``inp.on_path()``).


def _epoch_version(inp: _Inputs, lai: LeaderAndIsr) -> Term:
    next_epoch = inp._built("epoch + 1", lambda: inp.epoch + 1)
    return AND(inp.same(lai.leader_epoch, next_epoch), inp.same(lai.zk_version, inp.version))


def _run_init(inp: _Inputs, f: Any) -> Any:
    return f.initialize_leader_and_isr(inp.assignment(), inp.live_tuple())


def _spec_init(inp: _Inputs, res: Any) -> Term:
    """New partition (seeds 002, 003): first live replica leads, ISR = live replicas; none iff none live."""
    if res is None:
        return NOT(OR(*inp.live))
    return AND(
        OR(*inp.live),
        inp.res_is(res.leader, inp.first(inp.a, inp.live)),
        inp.is_filter(res.isr, inp.a, inp.live),
        z(res.leader_epoch) == election.INITIAL_LEADER_EPOCH,
        z(res.zk_version) == election.INITIAL_ZK_VERSION,
    )


def _run_offline(inp: _Inputs, f: Any) -> Any:
    allow = f.allow_unclean_for_trigger(inp.sym(inp.trigger))
    return f.offline_partition_leader_election_strategy(
        inp.assignment(), inp.current(), inp.live_tuple(), allow, inp.sym(inp.flags[1])
    )


def _spec_offline(inp: _Inputs, res: Any) -> Term:
    """OfflinePartition (seeds 002, 003): clean = first live ISR member in assignment order, ISR
    minus dead; unclean only without a live ISR member and only if allowed (admin trigger
    overrides the topic flag), then first live replica with ISR = [leader]; none iff no candidate."""
    cand = [AND(b, inp.in_isr(x)) for x, b in zip(inp.a, inp.live)]
    has_clean = OR(*cand)
    allow = inp.trigger == int(ElectionTrigger.ADMIN_CLIENT_TRIGGERED)
    unclean_on = AND(NOT(has_clean), OR(allow, inp.flags[1]))
    has_live = OR(*inp.live)
    common = inp.is_filter(res.live_replicas, inp.a, inp.live)
    lai = res.leader_and_isr
    if lai is None:
        return AND(
            common, res.outcome == ElectionOutcome.NONE, NOT(has_clean), NOT(AND(unclean_on, has_live))
        )
    if res.outcome == ElectionOutcome.CLEAN:
        return AND(
            common,
            has_clean,
            inp.res_is(lai.leader, inp.first(inp.a, cand)),
            inp.in_isr(lai.leader),
            inp.is_live(lai.leader),
            inp.isr_filter(lai.isr, inp.is_live),
            _epoch_version(inp, lai),
        )
    if res.outcome == ElectionOutcome.UNCLEAN:
        return AND(
            common,
            unclean_on,
            has_live,
            inp.res_is(lai.leader, inp.first(inp.a, inp.live)),
            inp.tuple_eq(lai.isr, (lai.leader,)),
            _epoch_version(inp, lai),
        )
    return False


def _run_offline_no_state(inp: _Inputs, f: Any) -> Any:
    return f.offline_partition_leader_election_strategy(
        inp.assignment(), None, inp.live_tuple(), inp.sym(inp.flags[0]), inp.sym(inp.flags[1])
    )


def _spec_offline_no_state(inp: _Inputs, res: Any) -> Term:
    """OfflinePartition without a LeaderAndIsr in ZooKeeper: no election (seed 002)."""
    return res.leader_and_isr is None and res.outcome == ElectionOutcome.NONE


def _run_reassign(inp: _Inputs, f: Any) -> Any:
    return f.leader_for_reassign(inp.assignment(), inp.current(), inp.live_tuple())


def _spec_reassign(inp: _Inputs, res: Any) -> Term:
    """Reassign (seed 002): first target replica that is live and in the ISR; ISR unchanged;
    recipients = the targets; none iff no such replica."""
    cand = [AND(b, inp.in_isr(x)) for x, b in zip(inp.a, inp.live)]
    common = inp.tuple_eq(res.live_replicas, inp.a)
    lai = res.leader_and_isr
    if lai is None:
        return AND(common, res.outcome == ElectionOutcome.NONE, NOT(OR(*cand)))
    return AND(
        common,
        res.outcome == ElectionOutcome.CLEAN,
        inp.res_is(lai.leader, inp.first(inp.a, cand)),
        OR(*cand),
        inp.isr_unchanged(lai.isr),
        _epoch_version(inp, lai),
    )


def _run_preferred(inp: _Inputs, f: Any) -> Any:
    return f.leader_for_preferred_replica(inp.assignment(), inp.current(), inp.live_tuple())


def _spec_preferred(inp: _Inputs, res: Any) -> Term:
    """PreferredReplica (seed 002): only the preferred replica (head of the assignment), only
    when live and in the ISR; ISR unchanged; recipients = the assignment."""
    ok = AND(inp.live[0], inp.in_isr(inp.a[0]))
    common = inp.tuple_eq(res.live_replicas, inp.a)
    lai = res.leader_and_isr
    if lai is None:
        return AND(common, res.outcome == ElectionOutcome.NONE, NOT(ok))
    return AND(
        common,
        ok,
        res.outcome == ElectionOutcome.CLEAN,
        inp.eq(lai.leader, inp.a[0]),
        inp.isr_unchanged(lai.isr),
        _epoch_version(inp, lai),
    )


def _run_controlled_shutdown(inp: _Inputs, f: Any) -> Any:
    return f.leader_for_controlled_shutdown(
        inp.assignment(), inp.current(), inp.live_tuple(), inp.shutting_down_tuple()
    )


def _spec_controlled_shutdown(inp: _Inputs, res: Any) -> Term:
    """ControlledShutdown (seed 002): never a shutting-down broker; first live ISR member not
    shutting down, in assignment order; ISR minus the shutting-down brokers; none iff none."""
    cand = [AND(b, inp.in_isr(x), NOT(s)) for x, b, s in zip(inp.a, inp.live, inp.sd)]
    common = inp.is_filter(res.live_replicas, inp.a, inp.live)
    lai = res.leader_and_isr
    if lai is None:
        return AND(common, res.outcome == ElectionOutcome.NONE, NOT(OR(*cand)))
    return AND(
        common,
        res.outcome == ElectionOutcome.CLEAN,
        NOT(inp.is_sd(lai.leader)),
        inp.res_is(lai.leader, inp.first(inp.a, cand)),
        OR(*cand),
        inp.isr_filter(lai.isr, lambda x: NOT(inp.is_sd(x))),
        _epoch_version(inp, lai),
    )


def _shutting_down_broker(inp: _Inputs) -> Term:
    # the broker shutting down is one of the assigned replicas (which one is symbolic)
    return inp.first(inp.a, [inp.a[i] == inp.replica for i in range(inp.n)], inp.a[0])


def _run_cs_action(inp: _Inputs, f: Any) -> Any:
    has_lai, queued = inp.sym(inp.flags[0]), inp.sym(inp.flags[1])
    broker = inp._built("shutting_down_broker", lambda: Sym(z(_shutting_down_broker(inp))))
    return f.controlled_shutdown_partition_action(
        inp.assignment(), inp.sym(inp.leader), broker, has_lai, queued
    )


def _spec_cs_action(inp: _Inputs, res: Any) -> Term:
    """doControlledShutdown (seed 002): single-replica partitions (and ones without state or
    queued for deletion) are skipped; the broker's led partitions elect, followed ones go offline."""
    broker = _shutting_down_broker(inp)
    skip = OR(inp.n <= 1, NOT(inp.flags[0]), inp.flags[1])
    elect = IF(
        inp.leader == z(broker),
        int(ControlledShutdownAction.ELECT_LEADER),
        int(ControlledShutdownAction.OFFLINE_FOLLOWER),
    )
    want = IF(skip, int(ControlledShutdownAction.SKIP), elect)
    return z(want) == int(res)


def _run_remove(inp: _Inputs, f: Any) -> Any:
    return f.remove_replica_from_isr(inp.current(), inp.sym(inp.replica))


def _spec_remove(inp: _Inputs, res: Any) -> Term:
    """Offline replica (seed 002 doRemoveReplicasFromIsr): the ISR never becomes empty (its last
    member stays); the leader becomes -1 iff the removed replica led; nothing is written when
    the replica is not in the ISR."""
    r = inp.replica
    if res is None:
        return NOT(inp.in_isr(r))
    one = _ceq(_count(inp.isr_guard), 1)
    new_isr_ok = IF(one, inp.isr_unchanged(res.isr), inp.isr_filter(res.isr, lambda x: z(x) != r))
    nonempty = IMPLIES(inp.isr_nonempty(), len(res.isr) > 0)
    led = OR(r == inp.leader, inp.leader == NO_LEADER)
    return AND(
        inp.in_isr(r),
        new_isr_ok,
        nonempty,
        z(res.leader == NO_LEADER) == z(led),
        IMPLIES(NOT(led), z(res.leader) == inp.leader),
        _epoch_version(inp, res),
    )


class _Rule(NamedTuple):
    run: Callable[[_Inputs, Any], Any]
    spec: Callable[[_Inputs, Any], z3.BoolRef]
    min_isr: int  # smallest ISR the rule's contract is about


#: rule name -> how to run it and its contract (the contract's docstring is the doc line)
RULES: dict[str, _Rule] = {
    "initialize_leader_and_isr": _Rule(_run_init, _spec_init, 0),
    "offline_partition_leader_election": _Rule(_run_offline, _spec_offline, 0),
    "offline_without_leader_and_isr": _Rule(_run_offline_no_state, _spec_offline_no_state, 0),
    "leader_for_reassign": _Rule(_run_reassign, _spec_reassign, 0),
    "leader_for_preferred_replica": _Rule(_run_preferred, _spec_preferred, 0),
    "leader_for_controlled_shutdown": _Rule(_run_controlled_shutdown, _spec_controlled_shutdown, 0),
    "controlled_shutdown_partition_action": _Rule(_run_cs_action, _spec_cs_action, 0),
    "remove_replica_from_isr": _Rule(_run_remove, _spec_remove, 1),
}


@isolated
def prove_rule(
    name: str,
    n: int,
    *,
    isr_order: str = "assignment",
    fns: Any = election,
    deadline: float | None = None,
) -> ProofOutcome:
    """Prove one rule's contract for assignment size ``n`` (every ISR, live set, flags).

    ``fns`` is the module whose functions run (``model.election``, or a mutant of it).

    >>> prove_rule("leader_for_preferred_replica", 3).status
    'held'
    """
    rule = RULES[name]
    lengths: list[int | None] = [None] if isr_order == "assignment" else list(range(rule.min_isr, n + 1))
    total = ProofOutcome("held")
    for k in lengths:
        inp, pre, distinct, free = _inputs(n, k)
        if rule.min_isr and k is None:
            pre = [*pre, inp.isr_nonempty()]
        out = prove_paths(
            lambda inp=inp: rule.run(inp, fns),  # type: ignore[misc]
            lambda res, inp=inp: rule.spec(inp.on_path(), res),  # type: ignore[misc]
            assumptions=pre,
            distinct=distinct,
            free=free if rule.min_isr == 0 or k is not None else [b for b in free if b not in inp.isr_bits],
            render=_render(inp),
            deadline=deadline,
        )
        total = total.merge(out)
        if out.status != "held":
            break
    return total


@isolated
def prove_rule_all_sizes(
    name: str,
    max_replicas: int = 6,
    *,
    isr_order: str = "assignment",
    fns: Any = election,
    deadline: float | None = None,
) -> ProofOutcome:
    """Prove a rule for every assignment size ``1..max_replicas``.

    >>> prove_rule_all_sizes("initialize_leader_and_isr", 3).status
    'held'
    """
    total = ProofOutcome("held")
    per: dict[str, float] = {}
    for n in range(1, max_replicas + 1):
        out = prove_rule(name, n, isr_order=isr_order, fns=fns, deadline=deadline)
        per[f"n={n}"] = round(out.seconds, 3)
        total = total.merge(out)
        if out.status != "held":
            break
    total.details = {"seconds_by_size": per}
    return total


@isolated
def prove_contains_is_membership(max_len: int = 8, deadline: float | None = None) -> ProofOutcome:
    """``contains(xs, x)`` is membership, whatever the order and repeats of ``xs`` (any ints).

    >>> prove_contains_is_membership(3).status
    'held'
    """
    total = ProofOutcome("held")
    for n in range(max_len + 1):
        xs = tuple(sym_int(f"x{i}") for i in range(n))
        y = sym_int("y")
        out = prove_paths(
            lambda xs=xs, y=y: election.contains(xs, y),  # type: ignore[misc]
            lambda r, xs=xs, y=y: z(r) == z3.Or([z(x) == y.x for x in xs] or [z3.BoolVal(False)]),  # type: ignore[misc]
            deadline=deadline,
        )
        total = total.merge(out)
    return total


def election_rule_obligations(
    max_replicas: int = 6, isr_order: str = "assignment", **unknown: Any
) -> list[Obligation]:
    """The ``election-rules`` target: one obligation per rule, sizes ``1..max_replicas``.

    >>> [o.name for o in election_rule_obligations(2)][:2]
    ['contains_is_membership', 'initialize_leader_and_isr']
    """
    if unknown:
        raise ValueError(f"{next(iter(unknown))}: unknown key (known: max_replicas, isr_order)")
    if isr_order not in ("assignment", "any"):
        raise ValueError(f"isr_order: must be 'assignment' or 'any', got {isr_order!r}")
    if not 1 <= max_replicas <= 8:
        raise ValueError(f"max_replicas: must be in 1..8, got {max_replicas}")
    isr_text = (
        "ISR: every subset in assignment order"
        if isr_order == "assignment"
        else "ISR: every subset, every order"
    )
    bounds = (
        f"assignment sizes 1..{max_replicas}, broker ids in [0,{DOMAIN}), every live/shutting-down set, "
        f"{isr_text}; epochs and zkVersions unbounded"
    )
    obs = [
        Obligation(
            "contains_is_membership",
            "the rules read replica sets only by membership: contains(xs, x) == x in xs (model/election.py)",
            "tuples of 0..8 arbitrary ints",
            lambda d: prove_contains_is_membership(8, d),
        )
    ]
    for name in RULES:
        obs.append(
            Obligation(
                name,
                " ".join((RULES[name].spec.__doc__ or name).split()),
                bounds,
                lambda d, name=name: prove_rule_all_sizes(
                    name, max_replicas, isr_order=isr_order, deadline=d
                ),  # type: ignore[misc]
            )
        )
    return obs


# ----------------------------------------------------------------------------------------
# Mutants: copies of model/election.py with one condition changed, for tests.


def _offline_election_ignores_isr(assignment, isr, live_replicas, unclean):  # type: ignore[no-untyped-def]
    # mutant: the clean pass forgets the "in the ISR" condition
    for replica in assignment:
        if election.contains(live_replicas, replica):
            return replica
    return None


def _admin_override_ignored(trigger):  # type: ignore[no-untyped-def]
    # mutant: allowUnclean is never set, so an admin-triggered unclean election obeys the topic flag
    return False


def _cs_election_keeps_shutting_down(assignment, isr, live_replicas, shutting_down_brokers):  # type: ignore[no-untyped-def]
    # mutant: the "not shutting down" condition is flipped off
    for replica in assignment:
        if election.contains(live_replicas, replica) and election.contains(isr, replica):
            return replica
    return None


def _preferred_tries_others(assignment, isr, live_replicas):  # type: ignore[no-untyped-def]
    # mutant: falls back to another live ISR replica (the rule must not)
    for replica in assignment:
        if election.contains(live_replicas, replica) and election.contains(isr, replica):
            return replica
    return None


def _remove_empties_isr(current, replica_id):  # type: ignore[no-untyped-def]
    # mutant: the "keep the last ISR member" condition is dropped
    if not election.contains(current.isr, replica_id):
        return None
    leader = current.leader
    if replica_id == current.leader:
        leader = NO_LEADER
    isr = election.drop_members(current.isr, (replica_id,))
    return election.new_leader_and_isr(current, leader, isr)


def _init_first_assigned(assignment, live_replicas):  # type: ignore[no-untyped-def]
    # mutant: the first assigned replica leads whether or not it is live
    live_assigned = election.keep_members(assignment, live_replicas)
    if len(live_assigned) == 0:
        return None
    return LeaderAndIsr(
        assignment[0], election.INITIAL_LEADER_EPOCH, live_assigned, election.INITIAL_ZK_VERSION
    )


#: mutant name -> (rule it breaks, replacement functions)
MUTANTS: dict[str, tuple[str, dict[str, Callable[..., Any]]]] = {
    "offline_ignores_isr": (
        "offline_partition_leader_election",
        {"offline_partition_leader_election": _offline_election_ignores_isr},
    ),
    "admin_override_ignored": (
        "offline_partition_leader_election",
        {"allow_unclean_for_trigger": _admin_override_ignored},
    ),
    "controlled_shutdown_elects_shutting_down": (
        "leader_for_controlled_shutdown",
        {"controlled_shutdown_partition_leader_election": _cs_election_keeps_shutting_down},
    ),
    "preferred_tries_others": (
        "leader_for_preferred_replica",
        {"preferred_replica_partition_leader_election": _preferred_tries_others},
    ),
    "remove_replica_empties_isr": (
        "remove_replica_from_isr",
        {"remove_replica_from_isr": _remove_empties_isr},
    ),
    "init_first_assigned_leads": (
        "initialize_leader_and_isr",
        {"initialize_leader_and_isr": _init_first_assigned},
    ),
}


def refute_mutant(name: str, n: int = 3) -> ProofOutcome:
    """Run the contract of the rule a mutant breaks against the mutant; expect ``violated``.

    >>> out = refute_mutant("preferred_tries_others", 2)
    >>> out.status, out.counterexample["result"]["leader_and_isr"]["leader"] != out.counterexample["assignment"][0]
    ('violated', True)
    """
    rule, overrides = MUTANTS[name]
    saved = {k: getattr(election, k) for k in overrides}
    try:
        for k, v in overrides.items():
            setattr(election, k, v)  # the model's callers look helpers up in the module globals
        return prove_rule(rule, n)
    finally:
        for k, v in saved.items():
            setattr(election, k, v)


# ----------------------------------------------------------------------------------------
# Controller election core: a transition system, run concretely and symbolically.


class CoreState(NamedTuple):
    """The abstraction's state (see the module doc). Broker tuples are indexed by broker id.

    ``controller``: owner of the ephemeral ``/controller`` (-1: absent). ``epoch`` and
    ``epoch_version``: ``/controller_epoch``'s value and zkVersion. ``session``: broker
    has a live ZooKeeper session. ``read_epoch`` / ``read_version``: what the broker last
    read from ``/controller_epoch`` (-1: nothing). ``active``: the broker believes it is
    controller, with ``my_epoch``. ``won``: the highest epoch any elect has won (ghost).
    """

    controller: Any
    epoch: Any
    epoch_version: Any
    session: tuple[Any, ...]
    read_epoch: tuple[Any, ...]
    read_version: tuple[Any, ...]
    active: tuple[Any, ...]
    my_epoch: tuple[Any, ...]
    won: Any


class CoreAction(NamedTuple):
    """One step of one broker: ``kind`` is ReadEpoch, Elect, Expire, Resign or Reconnect."""

    kind: str
    broker: int

    def __str__(self) -> str:
        what = {
            "ReadEpoch": "reads /controller and /controller_epoch",
            "Elect": "multi(create /controller, setData /controller_epoch with the read zkVersion)",
            "Expire": "ZooKeeper session expires: /controller (if its own) is deleted",
            "Resign": "sees /controller is not its own: onControllerResignation",
            "Reconnect": "opens a new ZooKeeper session",
        }[self.kind]
        return f"broker {self.broker}: {what}"


def _tset(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    return (*t[:i], v, *t[i + 1 :])


class ControllerCore:
    """Seed 004's 2.x controller election over ``/controller`` and ``/controller_epoch``.

    ``step(s, action)`` is the single definition of the steps (``None``: not enabled);
    ``successors`` enumerates them for the bfs engine, and :func:`k_induction` runs the
    same ``step`` over symbolic states. ``fenced=False`` is a mutant elect whose multi
    does not check ``/controller_epoch``'s zkVersion (two brokers can win one epoch).

    >>> core = ControllerCore(brokers=2, max_epoch=2)
    >>> s = core.init_states()[0]
    >>> [str(a) for a, _ in core.successors(s)][:1]
    ['broker 0: reads /controller and /controller_epoch']
    """

    KINDS = ("ReadEpoch", "Elect", "Expire", "Resign", "Reconnect")

    def __init__(self, brokers: int = 3, max_epoch: int | None = 3, fenced: bool = True):
        self.n = brokers
        self.max_epoch = max_epoch
        self.fenced = fenced

    def init_states(self) -> list[CoreState]:
        """No controller, epoch 0 (zkVersion 0), every broker with a session and no belief."""
        n = self.n
        return [CoreState(-1, 0, 0, (True,) * n, (-1,) * n, (-1,) * n, (False,) * n, (0,) * n, 0)]

    def action_kinds(self) -> tuple[str, ...]:
        """The action kinds (for coverage)."""
        return ("CoreAction",)

    def actions(self) -> list[CoreAction]:
        """Every action, in a fixed order."""
        return [CoreAction(k, b) for b in range(self.n) for k in self.KINDS]

    def step(self, s: CoreState, a: CoreAction) -> CoreState | None:
        """The state after ``a``, or None when ``a`` is not enabled in ``s``."""
        b = a.broker
        if a.kind == "ReadEpoch":
            # Reelect / startup: read /controller; only a broker that finds none reads the epoch
            if not s.session[b] or s.active[b] or s.controller != -1:
                return None
            return s._replace(
                read_epoch=_tset(s.read_epoch, b, s.epoch),
                read_version=_tset(s.read_version, b, s.epoch_version),
            )
        if a.kind == "Elect":
            if not s.session[b] or s.read_epoch[b] == -1:
                return None
            version_ok = s.read_version[b] == s.epoch_version if self.fenced else True
            cleared = s._replace(
                read_epoch=_tset(s.read_epoch, b, -1), read_version=_tset(s.read_version, b, -1)
            )
            if s.controller != -1 or not version_ok:
                return cleared  # NodeExists / BadVersion: the multi fails, nothing changes in ZooKeeper
            new_epoch = s.read_epoch[b] + 1
            if self.max_epoch is not None and not isinstance(new_epoch, Sym) and new_epoch > self.max_epoch:
                return None
            won = s.won
            if new_epoch > won:
                won = new_epoch
            return cleared._replace(
                controller=b,
                epoch=new_epoch,
                epoch_version=s.epoch_version + 1,
                active=_tset(s.active, b, True),
                my_epoch=_tset(s.my_epoch, b, new_epoch),
                won=won,
            )
        if a.kind == "Expire":
            if not s.session[b]:
                return None
            controller = s.controller
            if controller == b:
                controller = -1
            return s._replace(
                controller=controller,
                session=_tset(s.session, b, False),
                read_epoch=_tset(s.read_epoch, b, -1),
                read_version=_tset(s.read_version, b, -1),
            )
        if a.kind == "Resign":
            if not s.active[b] or s.controller == b:
                return None
            return s._replace(active=_tset(s.active, b, False))
        if a.kind == "Reconnect":
            if s.session[b]:
                return None
            return s._replace(session=_tset(s.session, b, True))
        raise ValueError(a.kind)

    def successors(self, s: CoreState) -> list[tuple[CoreAction, CoreState]]:
        """Every enabled ``(action, state)`` in the order of :meth:`actions`."""
        out = []
        for a in self.actions():
            t = self.step(s, a)
            if t is not None:
                out.append((a, t))
        return out

    def is_terminal(self, s: CoreState) -> bool:
        """Every state may end (the abstraction has no deadlock notion)."""
        return True


# -- the properties, over concrete and symbolic states alike --------------------------------


def _one_controller_per_epoch(s: CoreState) -> Any:
    """At most one controller per epoch (seed 004: the epoch fences a zombie controller)."""
    n = len(s.active)
    parts = [True]
    for i in range(n):
        for j in range(i + 1, n):
            parts.append(_implies(_and(s.active[i], s.active[j]), s.my_epoch[i] != s.my_epoch[j]))
    return _and(*parts)


def _epoch_never_decreases(s: CoreState, a: Any, t: CoreState) -> Any:
    """/controller_epoch never decreases (seed 004: the elect multi writes read epoch + 1)."""
    return t.epoch >= s.epoch


def _each_epoch_won_once(s: CoreState, a: Any, t: CoreState) -> Any:
    """Each epoch is won once: a broker that becomes controller holds an epoch above every one won before."""
    parts = [True]
    for i in range(len(s.active)):
        became = _and(_not(s.active[i]), t.active[i])
        parts.append(_implies(became, t.my_epoch[i] > s.won))
    return _and(*parts)


def _and(*xs: Any) -> Any:
    if all(isinstance(x, bool) for x in xs):
        return all(xs)
    return Sym(z3.And([z(x) for x in xs]))


def _not(x: Any) -> Any:
    return (not x) if isinstance(x, bool) else Sym(z3.Not(z(x)))


def _implies(p: Any, q: Any) -> Any:
    if isinstance(p, bool) and isinstance(q, bool):
        return (not p) or q
    return Sym(z3.Implies(z(p), z(q)))


def _strengthening(s: CoreState) -> Any:
    """The inductive strengthening found for the three properties (see :func:`k_induction`)."""
    n = len(s.active)
    parts: list[Any] = [
        s.epoch_version == s.epoch,  # every successful multi bumps both
        s.won == s.epoch,
        s.epoch >= 0,
        _implies(s.controller != -1, _controller_ok(s)),
    ]
    for i in range(n):
        parts.append(_implies(s.active[i], _and(s.my_epoch[i] >= 1, s.my_epoch[i] <= s.epoch)))
        parts.append(
            _implies(s.read_epoch[i] != -1, _and(s.read_epoch[i] >= 0, s.read_version[i] == s.read_epoch[i]))
        )
        parts.append(_implies(s.read_epoch[i] != -1, s.read_epoch[i] <= s.epoch))
        for j in range(i + 1, n):
            parts.append(_implies(_and(s.active[i], s.active[j]), s.my_epoch[i] != s.my_epoch[j]))
    return _and(*parts)


def _controller_ok(s: CoreState) -> Any:
    n = len(s.active)
    alts = [_and(s.controller == i, s.active[i], s.my_epoch[i] == s.epoch, s.session[i]) for i in range(n)]
    return Sym(z3.Or([z(x) for x in alts]))


def core_properties() -> list[Any]:
    """The controller-election core's safety properties as engine properties (bfs can check them).

    >>> [p.name for p in core_properties()]
    ['one_controller_per_epoch', 'epoch_never_decreases', 'each_epoch_won_once']
    """
    return [
        always(
            "one_controller_per_epoch", _one_controller_per_epoch, _one_controller_per_epoch.__doc__ or ""
        ),
        transition("epoch_never_decreases", _epoch_never_decreases, _epoch_never_decreases.__doc__ or ""),
        transition("each_epoch_won_once", _each_epoch_won_once, _each_epoch_won_once.__doc__ or ""),
    ]


def _sym_state(n: int, tag: str) -> tuple[CoreState, list[z3.ExprRef]]:
    I, B = z3.Int, z3.Bool  # noqa: E741
    c, e, v, w = I(f"controller_{tag}"), I(f"epoch_{tag}"), I(f"version_{tag}"), I(f"won_{tag}")
    ses = [B(f"session{i}_{tag}") for i in range(n)]
    re_ = [I(f"read_epoch{i}_{tag}") for i in range(n)]
    rv = [I(f"read_version{i}_{tag}") for i in range(n)]
    act = [B(f"active{i}_{tag}") for i in range(n)]
    me = [I(f"my_epoch{i}_{tag}") for i in range(n)]
    s = CoreState(
        Sym(c),
        Sym(e),
        Sym(v),
        tuple(Sym(x) for x in ses),
        tuple(Sym(x) for x in re_),
        tuple(Sym(x) for x in rv),
        tuple(Sym(x) for x in act),
        tuple(Sym(x) for x in me),
        Sym(w),
    )
    return s, [c, e, v, w, *ses, *re_, *rv, *act, *me]


def _flat(s: CoreState) -> list[z3.ExprRef]:
    out: list[z3.ExprRef] = [z(s.controller), z(s.epoch), z(s.epoch_version), z(s.won)]
    for t in (s.session, s.read_epoch, s.read_version, s.active, s.my_epoch):
        out += [z(x) for x in t]
    return out


def transition_relation(core: ControllerCore) -> tuple[list[z3.ExprRef], list[z3.ExprRef], z3.BoolRef, int]:
    """T(s, s') as one z3 formula, from the paths of ``core.step`` over a symbolic state.

    Returns the current-state variables, next-state variables, the formula and the
    number of paths explored.

    >>> xs, ys, t, paths = transition_relation(ControllerCore(brokers=2))
    >>> paths > 10, len(xs) == len(ys)
    (True, True)
    """
    n = core.n
    s, xs = _sym_state(n, "cur")
    _, ys = _sym_state(n, "nxt")
    wf = _well_formed_vars(n, xs)
    disj = []
    paths = 0
    for a in core.actions():
        ex = PathExplorer(wf)
        for p in ex.explore(lambda a=a: core.step(s, a)):  # type: ignore[misc]
            paths += 1
            if p.result is None:
                continue
            flat = _flat(p.result)
            eqs = [y == x for y, x in zip(ys, flat)]
            disj.append(z3.And(*p.conditions, *eqs))
    return xs, ys, z3.Or(disj), paths


def _well_formed_vars(n: int, xs: list[z3.ExprRef]) -> list[z3.BoolRef]:
    c = xs[0]
    return [z3.Or(c == -1, z3.And(c >= 0, c < n))]


@isolated
def k_induction(
    brokers: int = 3,
    max_k: int = 4,
    *,
    strengthen: bool = True,
    fenced: bool = True,
    deadline: float | None = None,
) -> ProofOutcome:
    """k-induction of the controller-election core's safety properties, k = 1..max_k.

    P (state): at most one controller per epoch; plus, as a 2-state check on every
    transition, epoch never decreases and each epoch won once. With ``strengthen``,
    P is conjoined with :func:`_strengthening` (epoch and its zkVersion move together, a
    pending read is consistent with them, believed epochs are at most the current one,
    ``/controller``'s owner holds the current epoch). For each k: base case (no
    violation within k steps of the initial state: bounded model checking) and step
    case (k consecutive states satisfying P force the next one to). ``details`` has
    the k found, the time, and the counterexample to induction when none is found.

    >>> out = k_induction(brokers=2, max_k=1)
    >>> out.status, out.details["k"]
    ('held', 1)
    """
    t0 = time.perf_counter()
    core = ControllerCore(brokers, None, fenced)
    xs, ys, T, paths = transition_relation(core)
    n = brokers

    def state_vars(i: int) -> list[z3.ExprRef]:
        return [z3.Const(f"{x}@{i}", x.sort()) for x in xs]

    def T_at(i: int) -> z3.BoolRef:
        return z3.substitute(T, *zip(xs, state_vars(i)), *zip(ys, state_vars(i + 1)))

    def as_state(vs: list[z3.ExprRef]) -> CoreState:
        it = iter(vs)
        c, e, v, w = (Sym(next(it)) for _ in range(4))
        tup = [tuple(Sym(next(it)) for _ in range(n)) for _ in range(5)]
        return CoreState(c, e, v, tup[0], tup[1], tup[2], tup[3], tup[4], w)

    def P(i: int) -> z3.BoolRef:
        st = as_state(state_vars(i))
        p = z(_one_controller_per_epoch(st))
        if strengthen:
            p = z3.And(p, z(_strengthening(st)))
        wf = _well_formed_vars(n, state_vars(i))
        return z3.And(p, *wf)

    def P2(i: int) -> z3.BoolRef:
        s0, s1 = as_state(state_vars(i)), as_state(state_vars(i + 1))
        return z3.And(z(_epoch_never_decreases(s0, None, s1)), z(_each_epoch_won_once(s0, None, s1)))

    init = core.init_states()[0]
    init_f = z3.And([v == z(x) for v, x in zip(state_vars(0), _flat(init))])
    details: dict[str, Any] = {"brokers": brokers, "transition_paths": paths, "strengthened": strengthen}
    for k in range(1, max_k + 1):
        if deadline is not None and time.perf_counter() > deadline:
            return ProofOutcome("unknown", time.perf_counter() - t0, paths, None, "deadline", details)
        # base: from init, the first k states satisfy P and the first k transitions P2
        base = z3.Solver()
        base.add(init_f)
        for i in range(k):
            base.add(T_at(i))
        bad = z3.Or([z3.Not(P(i)) for i in range(k + 1)] + [z3.Not(P2(i)) for i in range(k)])
        base.add(bad)
        if base.check() == z3.sat:
            m = base.model()
            cex = {f"step {i}": _render_core(m, as_state(state_vars(i))) for i in range(k + 1)}
            details["k"] = k
            return ProofOutcome(
                "violated", time.perf_counter() - t0, paths, cex, f"a violation within {k} steps", details
            )
        # step: k states in a row satisfy P (and transitions P2) -> the next one too
        step = z3.Solver()
        for i in range(k):
            step.add(P(i), T_at(i))
            if i + 1 < k:
                step.add(P2(i))
        step.add(z3.Or(z3.Not(P(k)), z3.Not(P2(k - 1))))
        r = step.check()
        if r == z3.unsat:
            details["k"] = k
            details["seconds"] = round(time.perf_counter() - t0, 3)
            return ProofOutcome("held", time.perf_counter() - t0, paths, None, f"{k}-inductive", details)
        if r == z3.sat:
            m = step.model()
            details["cti"] = {f"step {i}": _render_core(m, as_state(state_vars(i))) for i in range(k + 1)}
    details["k"] = None
    return ProofOutcome(
        "unknown",
        time.perf_counter() - t0,
        paths,
        details.get("cti"),
        f"not k-inductive for k <= {max_k} (counterexample to induction in details)",
        details,
    )


def _render_core(m: z3.ModelRef, s: CoreState) -> dict[str, Any]:
    return {k: model_value(m, v) for k, v in zip(s._fields, s)}


def controller_election_obligations(brokers: int = 3, max_k: int = 4, **unknown: Any) -> list[Obligation]:
    """The ``controller-election`` target: k-induction (strengthened), and the plain properties.

    >>> [o.name for o in controller_election_obligations()]
    ['controller_core_k_induction', 'controller_core_plain_properties_not_inductive', 'controller_core_unfenced_mutant']
    """
    if unknown:
        raise ValueError(f"{next(iter(unknown))}: unknown key (known: brokers, max_k)")
    b = f"{brokers} brokers, unbounded epochs and zkVersions, k <= {max_k}"
    return [
        Obligation(
            "controller_core_k_induction",
            "at most one controller per epoch, epoch never decreases, each epoch won once "
            "(seed 004 KafkaController.elect / registerControllerAndIncrementControllerEpoch), "
            "with an inductive strengthening",
            b,
            lambda d: k_induction(brokers, max_k, deadline=d),
        ),
        Obligation(
            "controller_core_plain_properties_not_inductive",
            "the three properties alone are not k-inductive (a pending read of an old epoch "
            "with the current zkVersion is unreachable but not excluded): shows why the strengthening is needed",
            b,
            lambda d: _expect_not_inductive(brokers, max_k, d),
            expect_violation=False,
        ),
        Obligation(
            "controller_core_unfenced_mutant",
            "mutant: the elect multi without the /controller_epoch zkVersion check lets two brokers "
            "win the same epoch (found by bounded model checking)",
            b,
            lambda d: _expect_refuted(brokers, max_k, d),
        ),
    ]


def _expect_not_inductive(brokers: int, max_k: int, deadline: float | None) -> ProofOutcome:
    out = k_induction(brokers, max_k, strengthen=False, deadline=deadline)
    status = "held" if out.status == "unknown" and out.details.get("k") is None else "violated"
    return ProofOutcome(status, out.seconds, out.paths, None, out.message, out.details)


def _expect_refuted(brokers: int, max_k: int, deadline: float | None) -> ProofOutcome:
    out = k_induction(brokers, max(max_k, 5), fenced=False, deadline=deadline)
    status = "held" if out.status == "violated" else "violated"
    return ProofOutcome(status, out.seconds, out.paths, out.counterexample, out.message, out.details)


PROOF_TARGETS: dict[str, Callable[..., list[Obligation]]] = {
    "election-rules": election_rule_obligations,
    "controller-election": controller_election_obligations,
}
