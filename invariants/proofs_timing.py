"""Proof obligations for the timing wheel's arithmetic (model/timing_wheel.py, seed 004).

Every obligation runs the model's own ``TimingWheel._wheel_add`` (seed 004's
``TimingWheel.add`` + ``addOverflowWheel``) and ``TimingWheel._add_entry``
(``SystemTimer.addTimerTaskEntry``) over symbolic values with
:func:`explorer.symbolic.prove_paths`, for all ``tickMs``, ``wheelSize``,
``currentTime``, expiration and wall clock in signed 64-bit ranges (Scala ``Long``):
``long_range=True`` makes every ``+ - * // %`` of the model a side condition (the result
fits a Long, Python's floor division agrees with Scala's truncating one), proved on every
path from the stated preconditions.

Preconditions of one wheel level (the wheel invariant): ``tickMs >= 1``,
``1 <= wheelSize <= Int.MaxValue``, ``currentTime >= 0`` and a multiple of ``tickMs``
(``startMs - startMs % tickMs`` in the constructor, and ``advanceClock`` rounds the same
way), ``0 <= expiration <= Long.MaxValue``, and **no overflow of the level's interval end**:
``currentTime + tickMs * wheelSize <= Long.MaxValue``. The last one is needed: without
it ``currentTime + interval`` wraps (a level-14 wheel of Kafka's default tick 1 ms x 20
buckets has interval 20^15 > Long.MaxValue), and ``long_overflow_side_condition_needed``
shows the counterexample.

Levels: ``_wheel_add`` walks up the hierarchy; the proofs cut the walk when it reads the
next level (the entry is *forwarded*) and prove, for one generic level, that (a) a
refusal happens only for a cancelled or already expired entry, (b) a placed entry lands
in the bucket that covers it, (c) a forwarded entry meets the next level's
preconditions. With the overflow wheel's parameters (``overflow_wheel_parameters``) and
``advance_clock`` keeping them, induction over the levels gives the result for any
number of levels.

Each ``prove_*`` function here runs in a z3 context of its own
(:func:`explorer.symbolic.isolated`), so its outcome and time do not depend on what ran
before in the process; it builds its terms itself and returns plain values. Keep no z3
term at module level: it would belong to another context ("context mismatch").

``TimingWheel.advance_clock``, ``_wheel_add`` and ``_add_entry`` are the model's own,
called on a ``TimingWheel`` whose ``ws`` is symbolic: no copy of the arithmetic.

Example
-------
>>> [o.name for o in timing_wheel_obligations()][:2]
['add_bucket_contains_expiration', 'overflow_wheel_parameters']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3

from explorer.symbolic import (
    LONG_MAX,
    Obligation,
    ProofOutcome,
    Sym,
    SymArray,
    isolated,
    model_value,
    prove_paths,
    z,
)
from invariants.mutants.timing_wheel import MUTANTS
from invariants.proofs_election import AND, IMPLIES, NOT, OR
from model.timing_wheel import FIRED_STATUSES, MOVED, TimingWheel, TimingWheelConfig

__all__ = [
    "INT_MAX",
    "PROOF_TARGETS",
    "prove_add",
    "prove_advance_clock",
    "prove_lateness_progress",
    "prove_no_early_expiry",
    "timing_wheel_obligations",
]

INT_MAX = 2**31 - 1
"""Scala ``Int.MaxValue`` (``wheelSize`` is an Int)."""

ENTRY = 0  # the entry id whose bit the bucket masks carry


class _Forwarded(Exception):
    """``_wheel_add`` read a level at or above the cut: the entry was forwarded there."""

    def __init__(self, level: int, wheels: list[Any]):
        super().__init__(level)
        self.level = level
        self.wheels = wheels


class _CutList(list):  # type: ignore[type-arg]
    """The wheels list; reading level ``cut`` or above raises :class:`_Forwarded`."""

    def __init__(self, items: list[Any], cut: int):
        super().__init__(items)
        self.cut = cut

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, int) and i >= self.cut:
            raise _Forwarded(i, list(self))
        return super().__getitem__(i)


def _model(mutant: str = "none", ws: Any = None) -> Any:
    """The model's TimingWheel (with a named mutant) whose wheel size is symbolic."""
    tw = MUTANTS.system(mutant, TimingWheelConfig())
    tw.ws = ws
    return tw


class _Level:
    """Symbolic variables and preconditions of one wheel level (and its overflow wheel)."""

    def __init__(self, tag: str = "", tick: int | None = None, wheel_size: int | None = None):
        I = z3.Int  # noqa: E741
        self.t, self.ct, self.ws, self.e = (
            I(f"tickMs{tag}"),
            I(f"currentTime{tag}"),
            I("wheelSize"),
            I(f"expiration{tag}"),
        )
        if tick is not None:
            self.t = z3.IntVal(tick)
        if wheel_size is not None:
            self.ws = z3.IntVal(wheel_size)
        self.k = I(f"ct_over_tick{tag}")
        self.cancelled = z3.Bool(f"cancelled{tag}")
        self.has_overflow = z3.Bool("overflow_wheel_exists")
        self.t1, self.ct1, self.k1 = (
            I("overflow_tickMs"),
            I("overflow_currentTime"),
            I("overflow_ct_over_tick"),
        )
        self.exps = z3.Array("bucket_expirations", z3.IntSort(), z3.IntSort())
        # entry bitmasks as 64-bit vectors (the model ORs 1 << entry into them)
        self.masks = z3.Array("bucket_masks", z3.IntSort(), z3.BitVecSort(64))
        self.exps1 = z3.Array("overflow_bucket_expirations", z3.IntSort(), z3.IntSort())
        self.masks1 = z3.Array("overflow_bucket_masks", z3.IntSort(), z3.BitVecSort(64))

    def pre(self, *, overflow_end: bool = True) -> list[z3.BoolRef]:
        t, ct, ws, e = self.t, self.ct, self.ws, self.e
        out = [
            t >= 1,
            t <= LONG_MAX,
            ws >= 1,
            ws <= INT_MAX,
            ct >= 0,
            self.k >= 0,
            ct == self.k * t,  # currentTime is a multiple of tickMs
            e >= 0,
            e <= LONG_MAX,
            # an existing overflow wheel: tick = interval, currentTime = ours rounded down to it
            self.t1 == t * ws,
            self.ct1 == self.k1 * self.t1,
            self.ct1 <= ct,
            ct < self.ct1 + self.t1,
        ]
        if overflow_end:
            out.append(ct + t * ws <= LONG_MAX)  # the level's interval end fits in a Long
        return out

    def wheel0(self) -> list[Any]:
        return [Sym(self.t), Sym(self.ct), SymArray(-1, base=self.exps), SymArray(0, base=self.masks)]

    def wheels(self) -> list[Any]:
        out = [self.wheel0()]
        if Sym(self.has_overflow):
            out.append(
                [Sym(self.t1), Sym(self.ct1), SymArray(-1, base=self.exps1), SymArray(0, base=self.masks1)]
            )
        return out

    def free(self) -> list[z3.BoolRef]:
        return [self.cancelled, self.has_overflow]

    def render(self, m: z3.ModelRef, result: Any) -> dict[str, Any]:
        names = {
            "tickMs": self.t,
            "wheelSize": self.ws,
            "currentTime": self.ct,
            "expiration": self.e,
            "cancelled": self.cancelled,
            "overflow_wheel_exists": self.has_overflow,
        }
        out = {k: model_value(m, v) for k, v in names.items()}
        if result is not None and result[0] == "returned":
            _, ok, lv, ix, wheels, _q = result
            out.update(accepted=model_value(m, ok), level=model_value(m, lv), bucket=model_value(m, ix))
            if model_value(m, ok):
                out["bucket_expiration"] = model_value(m, wheels[0][2][ix])
        elif result is not None:
            w1 = result[1][1]
            out.update(
                forwarded=True,
                overflow_tickMs=model_value(m, w1[0]),
                overflow_currentTime=model_value(m, w1[1]),
            )
        return out


def _run_add(lv: _Level, tw: Any) -> Any:
    wheels = _CutList(lv.wheels(), 1)
    queue: list[Any] = []
    try:
        ok, level, ix = tw._wheel_add(wheels, queue, ENTRY, Sym(lv.e), Sym(lv.cancelled))
        return ("returned", ok, level, ix, wheels, queue)
    except _Forwarded as f:
        return ("forwarded", f.wheels, queue)


def _spec_add(lv: _Level, r: Any) -> Any:
    """The contract of one level of TimingWheel.add (seed 004 lines 500-530)."""
    t, ct, ws, e, cancelled = lv.t, lv.ct, lv.ws, lv.e, lv.cancelled
    interval = t * ws
    if r[0] == "forwarded":
        w1 = r[1][1]
        t1, ct1 = z(w1[0]), z(w1[1])
        return AND(
            NOT(cancelled),
            e >= ct + interval,  # beyond this level's interval
            t1 == interval,  # the overflow wheel's tick is our interval
            ct1 >= 0,
            ct1 <= ct,
            ct < ct1 + t1,  # its currentTime is ours rounded down to its tick ...
            # ... to a multiple of it (a new wheel: ct - ct % interval; an existing one: its invariant)
            ct1 == (lv.k1 * t1 if ct1.eq(lv.ct1) else z((Sym(ct) // Sym(t1)) * Sym(t1))),
            e >= ct1 + t1,  # so it will not refuse the entry as expired
        )
    _, ok, level, ix, wheels, queue = r
    if not isinstance(ok, bool):
        return False
    if not ok:
        return AND(level == -1, OR(cancelled, e < ct + t))
    x = wheels[0][2][ix]  # the bucket's expiration after the add
    mask = wheels[0][3][ix]
    offered = len(queue) == 1 and queue[0][0] == 0 and queue[0][1] is ix
    return AND(
        level == 0,
        NOT(cancelled),
        e >= ct + t,
        e < ct + interval,
        z(x) <= e,  # the bucket [x, x + tick) holds the expiration
        e < z(x) + t,
        z(x) >= ct,  # and lies within [currentTime, currentTime + interval)
        z(x) < ct + interval,
        z(x) == z((Sym(e) // Sym(t)) * Sym(t)),  # x = virtualId * tickMs, virtualId = expiration / tickMs
        z(ix) == z((Sym(e) // Sym(t)) % Sym(ws)),  # bucket index = virtualId % wheelSize
        z((Sym(z(mask)) >> ENTRY) & 1) == 1,  # the entry is linked in it
        z(x) >= e - (t - 1),  # expires at most tick - 1 early ...
        IMPLIES(t == 1, z(x) == e),  # ... and exactly at e for tickMs = 1
        (z3.Select(lv.exps, z(ix)) != z(x)) == z3.BoolVal(offered),  # offered iff its expiration changed
        len(queue) <= 1,
    )


@isolated
def prove_add(
    mutant: str = "none",
    *,
    overflow_end: bool = True,
    goal: Callable[[_Level, Any], Any] | None = None,
    deadline: float | None = None,
) -> ProofOutcome:
    """Prove the contract of one level of ``TimingWheel.add`` (run on the model's code).

    >>> prove_add().status
    'held'
    """
    lv = _Level()
    tw = _model(mutant, Sym(lv.ws))
    spec = goal or _spec_add
    return prove_paths(
        lambda: _run_add(lv, tw),
        lambda r: spec(lv, r),
        assumptions=lv.pre(overflow_end=overflow_end),
        free=lv.free(),
        long_range=True,
        render=lv.render,
        deadline=deadline,
    )


def _spec_overflow(lv: _Level, r: Any) -> Any:
    """addOverflowWheel (seed 004 lines 535-550): tick = parent interval, start = parent
    currentTime, currentTime = start - start % tick."""
    if r[0] != "forwarded":
        return True
    return _spec_add(lv, r)


def _spec_one_window(lv: _Level, r: Any) -> Any:
    return True


@isolated
def prove_one_expiration_per_bucket(deadline: float | None = None) -> ProofOutcome:
    """Two entries placed in the same level-0 bucket (same currentTime) share its expiration:
    ``setExpiration`` never has to hold two windows at once.

    >>> prove_one_expiration_per_bucket().status
    'held'
    """
    lv = _Level()
    e2 = z3.Int("expiration2")
    tw = _model("none", Sym(lv.ws))

    def run() -> Any:
        wheels = _CutList([lv.wheel0()], 1)
        queue: list[Any] = []
        try:
            r1 = tw._wheel_add(wheels, queue, 0, Sym(lv.e), False)
            r2 = tw._wheel_add(wheels, queue, 1, Sym(e2), False)
        except _Forwarded:
            return None
        return r1, r2

    def goal(r: Any) -> Any:
        if r is None:
            return True
        (ok1, _l1, i1), (ok2, _l2, i2) = r
        if not (ok1 is True and ok2 is True):
            return True
        t = Sym(lv.t)
        x1, x2 = (Sym(lv.e) // t) * t, (Sym(e2) // t) * t
        return IMPLIES(z(i1) == z(i2), z(x1) == z(x2))

    return prove_paths(
        run,
        goal,
        assumptions=[*lv.pre(), e2 >= 0, e2 <= LONG_MAX],
        long_range=True,
        deadline=deadline,
    )


# ----------------------------------------------------------------------------------------
# SystemTimer.addTimerTaskEntry on a flush: no early expiry, and the lateness bound.


@isolated
def prove_no_early_expiry(deadline: float | None = None) -> ProofOutcome:
    """A task runs only when ``add`` refuses it at level 0, at a wall clock ``now >= currentTime``;
    then ``now >= expiration - (tickMs - 1)``, and ``now >= expiration`` when ``tickMs = 1``.

    >>> prove_no_early_expiry().status
    'held'
    """
    lv = _Level()
    now = z3.Int("now")
    tw = _model("none", Sym(lv.ws))

    def run() -> Any:
        wheels = _CutList(lv.wheels(), 1)
        status, fired_at = [MOVED], [-1]
        try:
            tw._add_entry(wheels, [], status, fired_at, ENTRY, Sym(lv.e), Sym(now), False)
        except _Forwarded:
            return None
        return status[0], fired_at[0]

    def goal(r: Any) -> Any:
        if r is None:
            return True
        st, fa = r
        if st not in FIRED_STATUSES:
            return True
        return AND(
            z(fa) == now,
            z(fa) >= lv.e - (lv.t - 1),
            IMPLIES(lv.t == 1, z(fa) >= lv.e),
        )

    return prove_paths(
        run,
        goal,
        # e + tickMs <= Long.MaxValue: the model's bucket label computes x + tickMs (not Kafka's code)
        assumptions=[*lv.pre(), now >= lv.ct, now <= LONG_MAX, lv.e + lv.t <= LONG_MAX],
        free=[lv.has_overflow],
        long_range=True,
        render=lambda m, r: {**lv.render(m, None), "now": model_value(m, now)},
        deadline=deadline,
    )


@isolated
def prove_early_expiry_witness(deadline: float | None = None) -> ProofOutcome:
    """The bound is exact: with tickMs > 1 a task can run tickMs - 1 ms before its expiration
    (status ``violated`` of the negation = the witness exists).

    >>> out = prove_early_expiry_witness()
    >>> out.status, out.counterexample["now"] == out.counterexample["expiration"] - out.counterexample["tickMs"] + 1
    ('violated', True)
    """
    lv = _Level()
    now = z3.Int("now")
    tw = _model("none", Sym(lv.ws))

    def run() -> Any:
        status, fired_at = [MOVED], [-1]
        tw._add_entry(_CutList([lv.wheel0()], 1), [], status, fired_at, ENTRY, Sym(lv.e), Sym(now), False)
        return status[0], fired_at[0]

    def goal(r: Any) -> Any:
        st, fa = r
        return NOT(AND(st in FIRED_STATUSES, lv.t > 1, z(fa) == lv.e - (lv.t - 1)))

    return prove_paths(
        run,
        goal,
        assumptions=[*lv.pre(), now >= lv.ct, now <= lv.ct + lv.t - 1],
        long_range=True,
        render=lambda m, r: {**lv.render(m, None), "now": model_value(m, now)},
        deadline=deadline,
    )


@isolated
def prove_advance_clock(deadline: float | None = None) -> ProofOutcome:
    """advanceClock keeps the hierarchy: each currentTime stays a multiple of its tick, never
    decreases, never passes the time, and the overflow wheel stays ours rounded down to its tick.

    >>> prove_advance_clock().status
    'held'
    """
    lv = _Level()
    x = z3.Int("advance_to")

    def run() -> Any:
        wheels = [[Sym(lv.t), Sym(lv.ct), None, None], [Sym(lv.t1), Sym(lv.ct1), None, None]]
        TimingWheel.advance_clock(wheels, Sym(x))
        return wheels

    def goal(w: Any) -> Any:
        c0, c1 = Sym(z(w[0][1])), Sym(z(w[1][1]))
        return AND(
            z(c0) >= lv.ct,  # monotone
            z(c1) >= lv.ct1,
            OR(z(c0) == lv.ct, AND(z(c0) <= x, z(c0) == z((Sym(x) // Sym(lv.t)) * Sym(lv.t)))),
            OR(z(c1) == lv.ct1, z(c1) == z((c0 // Sym(lv.t1)) * Sym(lv.t1))),  # a multiple of its tick
            z(c1) <= z(c0),  # the overflow wheel is ours rounded down to its tick
            z(c0) < z(c1) + lv.t1,
        )

    return prove_paths(
        run, goal, assumptions=[*lv.pre(), x >= 0, x <= LONG_MAX], long_range=True, deadline=deadline
    )


LATENESS_TICKS = (1, 2, 3, 5)
LATENESS_WHEEL_SIZES = (2, 3, 4, 20)


@isolated
def prove_lateness_progress(
    deadline: float | None = None,
    ticks: tuple[int, ...] = LATENESS_TICKS,
    wheel_sizes: tuple[int, ...] = LATENESS_WHEEL_SIZES,
) -> ProofOutcome:
    """Lateness bound (model doc: a task runs by expiration + reaper lag K): an entry in an
    overflow bucket with expiration x <= e, polled at now in [x, x + K], is re-added after
    advanceClock(x) and either runs at now <= e + K or lands in a level-0 bucket x' with
    x < x' <= e (so it is due again no later than e, and the wheel makes progress).

    For each tickMs in ``ticks`` and wheelSize in ``wheel_sizes`` (concrete: with both
    symbolic, z3's non-linear integer reasoning about multiples does not finish), and
    every 64-bit currentTime, expiration, now and lag.

    >>> prove_lateness_progress(ticks=(2,), wheel_sizes=(3,)).status
    'held'
    """
    total = ProofOutcome("held")
    for tick in ticks:
        for size in wheel_sizes:
            out = _lateness_one(tick, size, deadline)
            total = total.merge(out)
            if out.status != "held":
                return total
    return total


def _lateness_one(tick: int, size: int, deadline: float | None) -> ProofOutcome:
    lv = _Level(tick=tick, wheel_size=size)
    now, lag = z3.Int("now"), z3.Int("reaper_lag")
    tw = _model("none", Sym(lv.ws))
    t1 = lv.t1
    x = z3.Int("bucket_expiration")  # the overflow bucket's expiration: e rounded down to t1
    xq = z3.Int("bucket_virtual_id")

    def run() -> Any:
        wheels = _CutList(
            [
                [Sym(lv.t), Sym(lv.ct), SymArray(-1, base=lv.exps), SymArray(0, base=lv.masks)],
                [Sym(t1), Sym(lv.ct1), SymArray(-1, base=lv.exps1), SymArray(0, base=lv.masks1)],
            ],
            2,
        )
        TimingWheel.advance_clock(wheels, Sym(x))
        status, fired_at = [MOVED], [-1]
        queue: list[Any] = []
        wheels.cut = 1  # a re-add must stay at level 0
        try:
            out = tw._add_entry(wheels, queue, status, fired_at, ENTRY, Sym(lv.e), Sym(now), False)
        except _Forwarded:
            return None
        return status[0], fired_at[0], out, wheels

    def goal(r: Any) -> Any:
        if r is None:
            return False
        st, fa, (_outcome, level, ix, _rng), wheels = r
        if st in FIRED_STATUSES:
            return AND(z(fa) == now, z(fa) <= lv.e + lag)
        x2 = z(wheels[0][2][ix])
        return AND(level == 0, x2 > x, x2 <= lv.e)

    pre = [
        *lv.pre(),
        # the entry sat in overflow bucket [x, x + t1), placed there while ct1 + t1 <= e < ct1 + t1*ws
        x == xq * t1,
        x <= lv.e,
        lv.e < x + t1,
        lv.e >= lv.ct1 + t1,
        lv.e < lv.ct1 + t1 * lv.ws,
        t1 * lv.ws + lv.ct1 <= LONG_MAX,
        now >= x,
        now >= lv.ct,
        lag >= 0,
        now <= x + lag,
        now <= LONG_MAX,
    ]
    return prove_paths(run, goal, assumptions=pre, long_range=True, deadline=deadline)


def _inverted(out: ProofOutcome, what: str) -> ProofOutcome:
    """For obligations that expect a refutation (a mutant, a dropped precondition)."""
    status = "held" if out.status == "violated" else ("violated" if out.status == "held" else out.status)
    msg = f"{what}: {out.message}" if out.status == "violated" else f"{what}: not refuted"
    return ProofOutcome(status, out.seconds, out.paths, out.counterexample, msg, out.details)


def timing_wheel_obligations(**unknown: Any) -> list[Obligation]:
    """The ``timing-wheel`` target (no bounds to set: all 64-bit values).

    >>> len(timing_wheel_obligations()) >= 6
    True
    """
    if unknown:
        raise ValueError(f"{next(iter(unknown))}: unknown key (the timing-wheel proofs have no bounds)")
    b = "all tickMs >= 1, 1 <= wheelSize <= Int.MaxValue, currentTime, expiration, now in 0..Long.MaxValue"
    obs = [
        Obligation(
            "add_bucket_contains_expiration",
            "TimingWheel.add (seed 004): refuses only cancelled or expired entries; the chosen bucket "
            "[virtualId*tickMs, +tickMs) holds the expiration and lies in [currentTime, currentTime+interval); "
            "index virtualId % wheelSize; offered to the DelayQueue iff its expiration changed",
            b + "; currentTime + interval <= Long.MaxValue",
            lambda d: prove_add(deadline=d),
        ),
        Obligation(
            "overflow_wheel_parameters",
            "addOverflowWheel (seed 004): tick = parent interval, currentTime = parent currentTime rounded "
            "down to it; a forwarded entry is not expired there",
            b,
            lambda d: prove_add(goal=_spec_overflow, deadline=d),
        ),
        Obligation(
            "one_expiration_per_bucket",
            "TimingWheel.add (seed 004): two entries in one level-0 bucket at one currentTime share its expiration",
            b,
            prove_one_expiration_per_bucket,
        ),
        Obligation(
            "advance_clock_keeps_hierarchy",
            "TimingWheel.advanceClock (seed 004, the model's advance_clock): currentTime stays a multiple of "
            "tick, is monotone, and the overflow wheel stays the parent's time rounded down",
            b,
            prove_advance_clock,
        ),
        Obligation(
            "no_early_expiry",
            "SystemTimer.addTimerTaskEntry (seed 004): a task runs at now >= expiration - (tickMs - 1), "
            "and at now >= expiration when tickMs = 1",
            b + "; expiration + tickMs <= Long.MaxValue (the model's bucket label)",
            prove_no_early_expiry,
        ),
        Obligation(
            "early_expiry_bound_is_exact",
            "with tickMs > 1 a task can run exactly tickMs - 1 ms early (a witness; cf. the timing-wheel "
            "model's no_early_fire finding)",
            b,
            lambda d: _inverted(prove_early_expiry_witness(d), "witness"),
        ),
        Obligation(
            "lateness_bound_progress",
            "the timing-wheel model's lateness bound: a polled overflow bucket's entry runs by e + K or "
            "moves to a level-0 bucket in (x, e]",
            f"tickMs in {LATENESS_TICKS}, wheelSize in {LATENESS_WHEEL_SIZES}; currentTime, expiration, now, "
            "lag: all 64-bit",
            prove_lateness_progress,
        ),
        Obligation(
            "long_overflow_side_condition_needed",
            "without currentTime + tickMs*wheelSize <= Long.MaxValue the add arithmetic overflows a Long "
            "(a refutation is expected)",
            "as above without the interval-end precondition",
            lambda d: _inverted(prove_add(overflow_end=False, deadline=d), "overflow"),
        ),
    ]
    for m in ("bucket_index_off_by_one", "overflow_start_zero", "add_accepts_cancelled"):
        obs.append(
            Obligation(
                f"mutant_{m}_refuted",
                f"the model's mutant {m} breaks the TimingWheel.add contract (a refutation is expected)",
                b,
                lambda d, m=m: _inverted(prove_add(m, deadline=d), m),  # type: ignore[misc]
            )
        )
    return obs


PROOF_TARGETS: dict[str, Callable[..., list[Obligation]]] = {"timing-wheel": timing_wheel_obligations}
