"""Leads-to (TLC's ``P ~> Q``, issue 58): the constructor on a toy, decided alike by serial bfs
and two worker processes (either visited set), its lasso replayed; and the controller's
leads-to properties (``invariants/controller_liveness.py``), each holding on a small
configuration and each shown failing on a catalogue mutant."""

from __future__ import annotations

import pytest

from explorer.config import load_config
from explorer.core import CheckResult, Violation, leads_to
from explorer.engines.bfs import check_bfs
from explorer.search.liveness import replay_lasso
from invariants import controller as spec
from invariants.controller_liveness import liveness_properties
from invariants.mutants.controller import ControllerConfig
from model.controller import ControllerSystem
from tests.toys import Requests

# -- the constructor on a toy: every engine gives the same verdict and lasso ------------------


def _lasso(r: CheckResult) -> tuple[str, int, int | None] | None:
    v = r.violations[0] if r.violations else None
    return None if v is None else (v.property, v.length, v.loop_start)


def _replayed(system: Requests, v: Violation) -> tuple[bool, list[str]]:
    states = [system.init_states()[0]]
    for st in v.trace[1:]:
        states.append(next(t for a, t in system.successors(states[-1]) if str(a) == st.action))
    steps = [{"action": st.action, "fingerprint": st.fingerprint} for st in v.trace]
    return replay_lasso(system, system.properties()[0], states, steps, v.loop_start)


def test_leads_to_is_an_eventually_with_a_trigger() -> None:
    p = leads_to("p", lambda s: s == 1, lambda s: s == 2, "one leads to two", fairness=["go"])
    assert p.trigger is not None and p.trigger(1) and p.check(2)
    assert (p.kind.value, p.fairness) == ("eventually", ("go",))


@pytest.mark.parametrize("fair", [True, False])
def test_leads_to_same_verdict_and_lasso_on_bfs_and_workers(fair: bool) -> None:
    from explorer.engines.pbfs import check_pbfs

    system = Requests(fair)
    serial = check_bfs(system, system.properties(), keep_going=True)
    assert serial.properties["served"]["status"] == ("held" if fair else "violated")
    assert _lasso(serial) == (None if fair else ("served", 2, 1))
    for visited in ("states", "fingerprints"):
        workers = check_pbfs(
            system, system.properties(), workers=2, serial_below=1, keep_going=True, visited=visited
        )
        assert workers.properties["served"]["status"] == serial.properties["served"]["status"]
        assert _lasso(workers) == _lasso(serial)
    if not fair:
        ok, lines = _replayed(system, serial.violations[0])
        assert ok and "P holds at step 1 and Q at no step after it" in lines


def test_replay_refuses_a_loop_that_is_not_fair_or_where_q_holds() -> None:
    unfair = Requests(False)
    v = check_bfs(unfair, unfair.properties()).violations[0]
    ok, lines = _replayed(Requests(True), v)  # under fairness the polls starve serve
    assert not ok and any("NOT weakly fair: 'serve'" in line for line in lines)
    sys_ = Requests(False)
    p = leads_to("x", lambda s: s[0], lambda s: s[1] == 0, "", fairness=[])  # Q holds all along
    states = [(False, 0), (True, 0), (True, 0)]
    steps = [{"action": a, "fingerprint": f} for a, f in ((None, "a"), ("request", "b"), ("poll", "b"))]
    assert not replay_lasso(sys_, p, states, steps, 1)[0]


@pytest.mark.spark
@pytest.mark.parametrize("fair", [True, False])
def test_leads_to_same_verdict_and_lasso_on_spark(fair: bool) -> None:
    from explorer.engines.spark import SparkSetupError, check_java, check_spark, spark_session

    try:
        check_java()
    except SparkSetupError as e:
        pytest.skip(str(e))
    session = spark_session("local[2]", app_name="kafka-mc leads-to", conf={"spark.driver.memory": "1g"})
    try:
        system = Requests(fair)
        serial = check_bfs(system, system.properties(), keep_going=True)
        for local_frontier in (0, 10**9):
            s = check_spark(system, system.properties(), spark=session, local_frontier=local_frontier)
            assert s.properties["served"]["status"] == serial.properties["served"]["status"]
            assert _lasso(s) == _lasso(serial)
    finally:
        session.stop()


def test_symmetry_reduction_is_refused_with_its_reason_for_leads_to(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The quotient graph cannot decide weak fairness per action (a renaming maps an action
    enabled all along a real loop to different actions of the representatives), so a check with
    leads-to properties and ``--reduce symmetry`` on a system with symmetries is refused in one
    line (exit 2); without symmetries the run is the full one, with its note."""
    from explorer.api import CheckOptions, check
    from explorer.cli import main
    from explorer.search.symmetry import liveness_refusal, reason_off

    class Sym(Requests):
        def symmetries(self) -> list[object]:
            return [lambda s: s]

    why = liveness_refusal(Sym(), Sym().properties())
    assert why is not None and "served" in why and "\n" not in why
    assert reason_off(Sym(), Sym().properties()) is not None  # the engines' own guard stays
    with pytest.raises(ValueError, match="refused for eventually and leads-to properties"):
        check(Sym(), Sym().properties(), CheckOptions(reduce="symmetry"))
    plain = check(Requests(False), Requests(False).properties(), CheckOptions(reduce="symmetry"))
    assert plain.properties["served"]["status"] == "violated"  # no symmetries: full search, noted
    assert any("reduce symmetry: off for this run" in n for n in plain.notes)
    args = ["check", "controller", "--config", SMALL_PATH, "--set", "liveness=true", "--quiet"]
    assert main([*args, "--reduce", "symmetry"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refused for eventually and leads-to properties" in err[0], err
    assert "dead_leader_eventually_replaced" in err[0]


# -- the controller's leads-to properties -----------------------------------------------------

NAMES = [
    "dead_leader_eventually_replaced",
    "one_controller_eventually_current",
    "registered_broker_eventually_told",
    "expired_session_eventually_reregistered",
    "event_queue_eventually_drains",
    "isr_change_eventually_propagated",
]
SMALL = ["liveness=true"]
SMALL_PATH = "configs/controller-small.toml"


def _run(path: str | None, overrides: list[str], only: list[str]) -> CheckResult:
    c = load_config(ControllerConfig, path, overrides)
    props = [p for p in spec.properties(c) if p.name in only]
    return check_bfs(spec.build(c), props, model="controller", config=c, keep_going=True)


def test_enabled_with_liveness_only_and_each_explained() -> None:
    c = ControllerConfig(liveness=True)
    props = liveness_properties(c, ControllerSystem(c))
    assert [p.name for p in props] == NAMES
    assert all(p.trigger is not None and p.explain is not None for p in props)
    assert not liveness_properties(ControllerConfig(), ControllerSystem(ControllerConfig()))
    assert set(NAMES) <= {p.name for p in spec.properties(c)}


def test_each_holds_on_controller_small() -> None:
    r = _run(SMALL_PATH, SMALL, NAMES)
    assert r.violations == [] and all(r.properties[n]["status"] == "held" for n in NAMES)


EXPIRY = ["liveness=true", "max_session_expiries=1"]
#: (overrides of controller-small, mutant, property, lasso length): each property broken
SLOW = pytest.mark.slow  # about 0.5 to 1.5 CPU-s each; one runs in the default run
BREAKS = [
    pytest.param(EXPIRY, "ctl-watch-not-rearmed", "dead_leader_eventually_replaced", 3, marks=SLOW),
    pytest.param(EXPIRY, "ctl-watch-not-rearmed", "one_controller_eventually_current", 3, marks=SLOW),
    pytest.param(
        ["liveness=true", "max_restarts=1"],
        "startup-skips-online-replicas",
        "registered_broker_eventually_told",
        1,
        marks=SLOW,
    ),
    (EXPIRY, "expiry-no-reregister", "expired_session_eventually_reregistered", 5),
    pytest.param(EXPIRY, "inactive-event-requeued", "event_queue_eventually_drains", 16, marks=SLOW),
    pytest.param(EXPIRY, "ctl-watch-not-rearmed", "isr_change_eventually_propagated", 15, marks=SLOW),
]


# -- with the admin workflows: deletion and reassignment ----------------------------------------

ADMIN_PATH = "configs/controller-admin.toml"
REASSIGN = [
    "max_crashes=0", "max_restarts=0", "max_session_expiries=0", "send_update_metadata=false", "brokers=3",
    "topics=1", "replication_factor=2", "max_reassignments=1", "liveness=true",
]  # fmt: skip


def test_deletion_and_reassignment_leads_to_with_their_workflows_only() -> None:
    def names(overrides: list[str]) -> list[str]:
        c = load_config(ControllerConfig, None, ["liveness=true", *overrides])
        return [p.name for p in liveness_properties(c, ControllerSystem(c))]

    assert names([]) == NAMES
    assert names(["max_topic_deletions=1"]) == [*NAMES, "marked_topic_eventually_deleted"]
    assert names(["brokers=3", "max_reassignments=1"]) == [*NAMES, "reassignment_eventually_finished"]


#: (config, overrides, mutant, property, lasso length, the L2/L4 property the mutant leaves held or None)
ADMIN_BREAKS = [
    (ADMIN_PATH, ["max_crashes=0"], "no-resume-after-replica-deletion", "marked_topic_eventually_deleted", 12, None),
    # ZooKeeper forgets the topic, the controller does not: L2 holds, this property fails
    (ADMIN_PATH, ["max_crashes=0"], "delete-keeps-topic-queued", "marked_topic_eventually_deleted", 13,
     "deletion_eventually_completes"),
    (None, REASSIGN, "no-reassign-isr-watch", "reassignment_eventually_finished", 16, None),
    # /admin/reassign_partitions forgets it, partitionsBeingReassigned does not: L4 holds (13 CPU-s)
    pytest.param(None, REASSIGN, "reassign-keeps-context", "reassignment_eventually_finished", 29,
                 "reassignment_eventually_completes", marks=pytest.mark.slow),
]  # fmt: skip


@pytest.mark.parametrize("path, overrides, mutant, prop, length, other", ADMIN_BREAKS)
def test_deletion_and_reassignment_fail_on_a_mutant(
    path: str | None, overrides: list[str], mutant: str, prop: str, length: int, other: str | None
) -> None:
    ov = [*overrides, f"mutant={mutant}"]
    r = _run(path, ov, [prop])
    assert [(v.property, v.kind, v.length) for v in r.violations] == [(prop, "eventually", length)]
    v = r.violations[0]
    assert v.loop_start is not None and v.trace[-1].fingerprint == v.trace[v.loop_start].fingerprint
    if other is not None:  # what the older L2 / L4 does not see
        assert _run(path, ov, [other]).properties[other]["status"] == "held"


@pytest.mark.slow  # about 2 and 11 CPU-s; the admin goldens check them on the full configurations
@pytest.mark.parametrize(
    "path, overrides, prop",
    [
        (None, REASSIGN, "reassignment_eventually_finished"),
        (ADMIN_PATH, [], "marked_topic_eventually_deleted"),
    ],
)
def test_deletion_and_reassignment_hold_without_the_mutant(
    path: str | None, overrides: list[str], prop: str
) -> None:
    r = _run(path, overrides, [prop])
    assert r.exit_reason.value == "complete" and r.properties[prop]["status"] == "held"


@pytest.mark.parametrize("overrides, mutant, prop, length", BREAKS)
def test_each_fails_on_a_mutant_with_a_lasso(
    overrides: list[str], mutant: str, prop: str, length: int
) -> None:
    ov = [*overrides, f"mutant={mutant}"]
    r = _run(SMALL_PATH, ov, [prop])
    assert [(v.property, v.kind, v.length) for v in r.violations] == [(prop, "eventually", length)]
    v = r.violations[0]
    assert v.loop_start is not None and v.trace[-1].fingerprint == v.trace[v.loop_start].fingerprint
    held = _run(SMALL_PATH, overrides, [prop])
    assert held.properties[prop]["status"] == "held"


# -- controller-ref ------------------------------------------------------------------------------

#: controller-ref's release entry checks no liveness (configs/controller-ref.toml sets no
#: ``liveness``, so it is false there); with it on, the eight eventually / leads-to properties
#: of that configuration (L1, L3 and the six of invariants/controller_liveness.py)
REF_LIVE = [
    "leader_eventually_elected",
    "controller_eventually_elected",
    *NAMES,
]


@pytest.mark.heavy
def test_controller_ref_leads_to_holds() -> None:
    """controller-ref (5,049,748 states) searched with liveness on, lean visited set: each
    eventually / leads-to property holds. On demand only (``tox -e slow``, not CI): measured
    2026-11-29 in full, every one held, 944 CPU-s and 7.0 GB peak (the edge records of the
    component analysis) beside a CI run."""
    c = load_config(ControllerConfig, "configs/controller-ref.toml", ["liveness=true"])
    props = [p for p in spec.properties(c) if p.name in REF_LIVE]
    assert sorted(p.name for p in props) == sorted(REF_LIVE)
    r = check_bfs(spec.build(c), props, model="controller", config=c, keep_going=True, visited="fingerprints")
    assert r.exit_reason.value == "complete" and r.distinct_states == 5_049_748
    assert {n: r.properties[n]["status"] for n in REF_LIVE} == dict.fromkeys(REF_LIVE, "held")
