"""Tests of the ``timing-wheel`` model: golden counts, mutants, the tick finding, steps."""

from __future__ import annotations

from pathlib import Path

import pytest

import invariants.timing_wheel as tw_inv
from explorer.config import ConfigError, load_config
from explorer.engines.bfs import check_bfs
from invariants.mutants.timing_wheel import MUTANTS, TimingWheelConfig, build  # with the test-only mutant key
from model.timing_wheel import (
    ADDING,
    CANCELLED_IN_WHEEL,
    FIRED,
    FIRED_ON_ADD,
    IDLE,
    MOVED,
    PENDING,
    AddTask,
    CancelTask,
    ClockTick,
    InsertEntry,
    ReaperPoll,
    TimingWheel,
    TWState,
    Wheel,
)

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "configs" / "timing-wheel-small.toml"
REF = ROOT / "configs" / "timing-wheel-ref.toml"

GOLDEN_SMALL = 5_670
GOLDEN_REF = 237_216


def _cfg(path: Path | None = SMALL, *overrides: str) -> TimingWheelConfig:
    cfg: TimingWheelConfig = load_config(TimingWheelConfig, path, overrides=list(overrides))
    return cfg


def _check(cfg: TimingWheelConfig, keep_going: bool = False):
    return check_bfs(
        build(cfg), tw_inv.properties(cfg), model="timing-wheel", config=cfg, keep_going=keep_going
    )


def _step(system: TimingWheel, s: TWState, kind: type, **match) -> TWState:
    """Take the first enabled action of ``kind`` whose fields match ``match``."""
    for a, t in system.successors(s):
        if type(a) is kind and all(getattr(a, k) == v for k, v in match.items()):
            return t
    raise AssertionError(f"no {kind.__name__} {match} in {[str(a) for a, _ in system.successors(s)]}")


def _wheel(tick: int, ct: int, exps: tuple[int, ...], buckets: tuple[int, ...]) -> Wheel:
    return Wheel(tick, ct, exps, buckets)


# -- golden counts and the properties holding ------------------------------------------


def _assert_all_good(r, cfg: TimingWheelConfig) -> None:
    assert r.exit_reason.value == "complete"
    assert r.violations == []
    reach = [p.name for p in tw_inv.properties(cfg) if p.kind.value == "reachable"]
    assert sorted(r.witnesses) == sorted(reach)
    assert not [k for k, v in r.properties.items() if v.get("vacuous")]
    assert r.coverage["never_enabled"] == []


def test_small_golden_count_and_all_properties_hold():
    cfg = _cfg()
    r = _check(cfg)
    assert r.distinct_states == GOLDEN_SMALL
    _assert_all_good(r, cfg)


@pytest.mark.slow
def test_ref_golden_count_and_all_properties_hold():
    cfg = _cfg(REF)
    assert cfg.tick_ms == 1
    r = _check(cfg)
    assert r.distinct_states == GOLDEN_REF
    _assert_all_good(r, cfg)
    assert "overflow_of_overflow_created" in r.witnesses


def test_deterministic_successor_order():
    system = TimingWheel(_cfg())
    s = system.init_states()[0]
    for _ in range(6):
        first = [(str(a), t) for a, t in system.successors(s)]
        assert first == [(str(a), t) for a, t in system.successors(s)]
        s = first[0][1]


# -- mutants: each breaks exactly its property ---------------------------------------

MUTANT_EXPECT = {
    # mutant: (extra overrides on the small config, property, shortest trace length)
    "bucket_index_off_by_one": ((), "bucket_ranges", 2),
    "flush_forgets_readd": ((), "no_task_lost", 4),
    "flush_keeps_entries": ((), "no_double_fire", 4),
    "add_accepts_cancelled": ((), "cancel_is_final", 3),
    "run_cancelled_on_refusal": ((), "cancel_is_final", 3),
    "poll_before_expiry": ((), "no_early_fire", 3),
    "delay_off_by_one": ((), "bounded_lateness", 5),
    "poll_any_expired": ((), "reference_timer_order", 7),
    # the overflow wheel must be created after the level-0 wheel moved past one level-1 tick:
    # three tasks on 2-bucket wheels
    "overflow_start_zero": (("entries=3", "wheel_size=2", "delays=[0,1,3]"), "overflow_wheel_params", 10),
}


def test_every_mutant_has_an_expectation():
    assert set(MUTANT_EXPECT) == set(MUTANTS.names()) - {"none"}


@pytest.mark.parametrize("mutant", sorted(MUTANT_EXPECT))
def test_mutant_breaks_exactly_its_property(mutant: str):
    extra, prop, length = MUTANT_EXPECT[mutant]
    r = _check(_cfg(SMALL, *extra, f"mutant={mutant}"))
    assert [(v.property, v.length) for v in r.violations] == [(prop, length)]


def test_every_safety_property_is_shown_able_to_fail():
    broken = {prop for _, prop, _ in MUTANT_EXPECT.values()}
    safety = {p.name for p in tw_inv.properties(_cfg()) if p.kind.value == "always"}
    assert safety == broken


# -- the tick_ms > 1 finding ---------------------------------------------------------


def test_tick_above_one_fires_early():
    """Kafka's code, not a mutant: with tickMs = 2 a task runs before its expiration.

    Shortest: a task of delay 1 added at 0 has expiration 1 < currentTime + tickMs = 2, so
    TimingWheel.add refuses it as expired and SystemTimer runs it at 0.
    """
    cfg = _cfg(SMALL, "tick_ms=2")
    r = _check(cfg, keep_going=True)
    assert [(v.property, v.length) for v in r.violations] == [("no_early_fire", 2)]
    steps = [t.action for t in r.violations[0].trace[1:]]
    assert steps == [
        "entry 0: SystemTimer.add at 0 ms with delay 1 ms (expiration 1)",
        "entry 0: addTimerTaskEntry: it is refused as expired and runs at once",
    ]


def test_tick_above_one_level0_bucket_expires_before_its_task():
    """With only delay 3 and tickMs 2 the bucket [2,4) expires at 2 and runs the task due at 3."""
    r = _check(_cfg(SMALL, "tick_ms=2", "delays=[3]", "entries=1"), keep_going=True)
    assert [(v.property, v.length) for v in r.violations] == [("no_early_fire", 5)]
    last = r.violations[0].trace[-1]
    assert last.action.startswith("reaper at 2 ms: DelayQueue yields wheel 0 bucket 1 (expiration 2)")


def test_lateness_bound_is_tight_and_zero_without_lag():
    r = _check(_cfg(SMALL, "reaper_lag=0"))
    assert r.violations == []
    assert "runs_late_by_reaper_lag" not in r.witnesses
    r = _check(_cfg(SMALL, "reaper_lag=2"))
    assert r.violations == []
    assert "runs_late_by_reaper_lag" in r.witnesses


# -- config validation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("delays=[]", "delays: must list at least one delay"),
        ("delays=[1, 1]", "delays: must not repeat a delay, got [1, 1]"),
        ("delays=[-1]", "delays[0]: must be at least 0, got -1"),
        ("wheel_size=1", "wheel_size: must be at least 2, got 1"),
        ("tick_ms=0", "tick_ms: must be at least 1, got 0"),
        ("entries=0", "entries: must be at least 1, got 0"),
        ("mutant=nope", "mutant: expected one of"),
        ("ticks=3", "unknown key 'ticks' (did you mean 'tick_ms'?)"),
    ],
)
def test_bad_config_is_a_one_line_error(override: str, message: str):
    with pytest.raises(ConfigError) as e:
        _cfg(None, override)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_config_files_load():
    assert _cfg(SMALL).entries == 2
    assert _cfg(REF).tick_ms == 1


# -- transitions on hand-built states ------------------------------------------------


def test_add_places_in_bucket_and_offers_once():
    """setExpiration returns true only when the expiration changes: one offer per bucket."""
    system = TimingWheel(TimingWheelConfig(entries=2, delays=(2,), wheel_size=3, max_clock=5))
    s = system.init_states()[0]
    s = _step(system, s, AddTask, entry=0)
    s = _step(system, s, InsertEntry, entry=0)
    assert s.wheels[0].expirations == (-1, -1, 2) and s.wheels[0].buckets == (0, 0, 1)
    assert s.queue == ((0, 2),) and s.status[0] == PENDING
    s = _step(system, s, AddTask, entry=1)
    s = _step(system, s, InsertEntry, entry=1)
    assert s.wheels[0].buckets == (0, 0, 3)
    assert s.queue == ((0, 2),)  # not offered a second time


def test_overflow_wheel_takes_parent_interval_and_current_time():
    system = TimingWheel(TimingWheelConfig(entries=1, delays=(4,), wheel_size=3, max_clock=9))
    w0 = _wheel(1, 5, (-1, -1, -1), (0, 0, 0))
    s = TWState(5, (w0,), (), (ADDING,), (9,), (-1,))
    t = _step(system, s, InsertEntry, entry=0)
    assert len(t.wheels) == 2
    w1 = t.wheels[1]
    assert (w1.tick, w1.current_time) == (3, 3)  # tick = 1 * 3; start 5 rounded down to 3
    assert w1.expirations == (9, -1, -1) and w1.buckets == (1, 0, 0)  # virtualId 3 -> bucket 0
    assert t.queue == ((1, 0),)


def test_add_refuses_expired_and_caller_runs_it():
    system = TimingWheel(TimingWheelConfig(entries=1, delays=(0,), max_clock=3))
    s = system.init_states()[0]
    s = _step(system, s, AddTask, entry=0)
    a, t = next((a, t) for a, t in system.successors(s) if isinstance(a, InsertEntry))
    assert "refused as expired" in str(a)
    assert t.status == (FIRED_ON_ADD,) and t.fired_at == (0,) and t.queue == ()


def test_reaper_advances_wheels_and_moves_entry_down():
    system = TimingWheel(TimingWheelConfig(entries=1, delays=(4,), wheel_size=3, max_clock=9))
    w0 = _wheel(1, 0, (-1, -1, -1), (0, 0, 0))
    w1 = _wheel(3, 0, (-1, 3, -1), (0, 1, 0))
    s = TWState(3, (w0, w1), ((1, 1),), (PENDING,), (4,), (-1,))
    assert not any(isinstance(a, ClockTick) for a, _ in system.successors(s))  # head due, lag 0
    t = _step(system, s, ReaperPoll, level=1, index=1)
    assert t.wheels[0].current_time == 3 and t.wheels[1].current_time == 3
    assert t.wheels[1].expirations == (-1, -1, -1) and t.wheels[1].buckets == (0, 0, 0)
    assert t.wheels[0].expirations == (-1, 4, -1) and t.wheels[0].buckets == (0, 1, 0)
    assert t.queue == ((0, 1),) and t.status == (MOVED,)
    t = _step(system, t._replace(now=4), ReaperPoll, level=0, index=1)
    assert t.status == (FIRED,) and t.fired_at == (4,) and t.queue == ()


def test_cancel_unlinks_but_bucket_stays_queued():
    system = TimingWheel(TimingWheelConfig(entries=1, delays=(2,), wheel_size=3, max_clock=5))
    w0 = _wheel(1, 0, (-1, -1, 2), (0, 0, 1))
    s = TWState(0, (w0,), ((0, 2),), (PENDING,), (2,), (-1,))
    t = _step(system, s, CancelTask, entry=0)
    assert t.status == (CANCELLED_IN_WHEEL,) and t.wheels[0].buckets == (0, 0, 0)
    assert t.wheels[0].expirations == (-1, -1, 2) and t.queue == ((0, 2),)
    t = _step(system, t._replace(now=2), ReaperPoll, level=0, index=2)
    assert t.queue == () and t.wheels[0].expirations == (-1, -1, -1) and t.wheels[0].current_time == 2


def test_cancel_budget():
    system = TimingWheel(TimingWheelConfig(entries=1, delays=(2,), max_cancels=0))
    s = _step(system, system.init_states()[0], AddTask, entry=0)
    assert not any(isinstance(a, CancelTask) for a, _ in system.successors(s))


def test_clock_waits_for_reaper_lag_and_reaper_takes_earliest():
    system = TimingWheel(TimingWheelConfig(entries=2, delays=(1,), wheel_size=3, max_clock=9, reaper_lag=1))
    w0 = _wheel(1, 0, (-1, 1, 2), (0, 1, 2))
    s = TWState(1, (w0,), ((0, 1), (0, 2)), (PENDING, PENDING), (1, 2), (-1, -1))
    kinds = [type(a) for a, _ in system.successors(s)]
    assert ClockTick in kinds  # head due at 1 for 0 ms < lag
    s2 = s._replace(now=2)
    acts = [a for a, _ in system.successors(s2)]
    assert not any(isinstance(a, ClockTick) for a in acts)  # head due for 1 ms = lag
    assert [(a.level, a.index) for a in acts if isinstance(a, ReaperPoll)] == [(0, 1)]


def test_reaper_may_take_either_of_equal_expirations():
    system = TimingWheel(TimingWheelConfig(entries=2, delays=(1, 3), wheel_size=3, max_clock=9))
    w0 = _wheel(1, 2, (3, -1, -1), (1, 0, 0))
    w1 = _wheel(3, 0, (-1, 3, -1), (0, 2, 0))
    s = TWState(3, (w0, w1), ((0, 0), (1, 1)), (PENDING, PENDING), (3, 4), (-1, -1))
    polls = [(a.level, a.index) for a, _ in system.successors(s) if isinstance(a, ReaperPoll)]
    assert polls == [(0, 0), (1, 1)]


def test_no_early_fire_check_on_crafted_state():
    prop = next(p for p in tw_inv.properties(TimingWheelConfig()) if p.name == "no_early_fire")
    w0 = _wheel(1, 0, (-1, -1, -1), (0, 0, 0))
    assert prop.check(TWState(3, (w0,), (), (FIRED, IDLE), (3, -1), (3, -1)))
    assert not prop.check(TWState(3, (w0,), (), (FIRED, IDLE), (4, -1), (3, -1)))


def test_spec_registered():
    from invariants import get_model

    spec = get_model("timing-wheel")
    assert spec.config_cls is TimingWheelConfig and spec.build is build
