"""The symbolic engine (explorer/symbolic.py) and its proof obligations.

Fast set: the harness, every election rule for assignments of 1..4 replicas, the ISR in
any order for 1..3, every timing-wheel proof, the controller-election k-induction, each
mutant refuted with its counterexample printed. Slow set: the election rules for 1..6
replicas (the issue's bound) and the ISR in any order for 4.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import z3

import invariants.proofs_election as pe
import invariants.proofs_timing as pt
from explorer.core import ExitReason
from explorer.engines.bfs import check_bfs
from explorer.symbolic import (
    Obligation,
    PathExplorer,
    Sym,
    SymbolicError,
    check_symbolic,
    fresh_z3_context,
    prove_paths,
    render_counterexample,
    sym_bool,
    sym_int,
)

# ----------------------------------------------------------------------------------------
# The harness.


def test_an_exploration_builds_each_operator_result_once() -> None:
    """Within an exploration the same operands give back the same Sym (its term built once,
    issue 56); outside one nothing is remembered."""
    x, y = sym_int("x"), sym_int("y")
    seen: list[Any] = []

    def fn() -> int:
        c = x == y
        seen.append((c, x + 1, 1 + x))
        return 1 if c else 2

    ex = PathExplorer()
    assert sorted(p.result for p in ex.explore(fn)) == [1, 2]
    assert [s is t for s, t in zip(seen[0], seen[1])] == [True, True, True]
    assert str(seen[0][1].x) == "x + 1" and str(seen[0][2].x) == "1 + x"
    assert (x == y) is not (x == y)


def test_a_remembered_operation_still_records_its_side_condition_on_each_path() -> None:
    x = sym_int("x")
    ex = PathExplorer(long_range=True)

    def fn() -> Any:
        y = x + 1
        return y if x > 0 else x + 1

    paths = list(ex.explore(fn))
    assert [len(p.side_conditions) for p in paths] == [1, 2]  # one x + 1 on the first path, two on the second


def test_paths_of_a_function_are_enumerated_once_each() -> None:
    x, y = sym_int("x"), sym_int("y")

    def f() -> int:
        if x < y:
            return 0 if x == 0 else 1
        return 2

    ex = PathExplorer([x.x >= -3, x.x <= 3])
    results = sorted(p.result for p in ex.explore(f))
    assert results == [0, 1, 2]


def test_infeasible_branches_are_not_followed() -> None:
    x = sym_int("x")

    def f() -> str:
        if x > 5:
            return "big" if x < 3 else "ok"  # x < 3 is infeasible here
        return "small"

    assert sorted(p.result for p in PathExplorer().explore(f)) == ["ok", "small"]


def test_python_floor_division_and_scala_side_conditions() -> None:
    a, b = sym_int("a"), sym_int("b")
    # Python's // floors: (a // b) * b + a % b == a for b != 0
    out = prove_paths(lambda: (a // b, a % b), lambda r: r[0] * b + r[1] == a, assumptions=[b.x != 0])
    assert out.status == "held"
    # with Scala Long semantics a negative dividend breaks agreement with truncation
    out = prove_paths(lambda: a // b, lambda r: True, assumptions=[b.x > 0], long_range=True)
    assert out.status == "violated" and "truncating" in out.message


def test_long_overflow_is_a_side_condition() -> None:
    a = sym_int("a")
    out = prove_paths(lambda: a + 1, lambda r: True, assumptions=[a.x >= 0], long_range=True)
    assert out.status == "violated" and out.counterexample == {"a": 2**63 - 1}


def test_symbolic_values_refuse_hashing_and_indexing_and_stray_branches() -> None:
    x = sym_int("x")
    with pytest.raises(TypeError):
        hash(x)
    with pytest.raises(SymbolicError):
        [1, 2][x]
    with pytest.raises(SymbolicError):
        bool(x == 1)


def test_free_booleans_fork_without_the_solver() -> None:
    bits = [sym_bool(f"b{i}") for i in range(6)]
    ex = PathExplorer(free=[b.x for b in bits])
    paths = list(ex.explore(lambda: sum(1 for b in bits if b)))
    assert len(paths) == 64 and ex.solver_checks == 0


def test_a_path_that_raises_is_a_violation() -> None:
    x = sym_int("x")

    def f() -> int:
        if x == 3:
            raise ValueError("boom")
        return 1

    out = prove_paths(f, lambda r: True)
    assert out.status == "violated" and "ValueError" in out.message and out.counterexample == {"x": 3}


def test_fresh_z3_context_is_the_default_inside_and_restored_after() -> None:
    before = z3.main_ctx()
    with fresh_z3_context():
        ctx = z3.main_ctx()
        assert ctx is not before and z3.main_ctx() is ctx
        with fresh_z3_context():
            assert z3.main_ctx() is not ctx
        assert z3.main_ctx() is ctx
        x = sym_int("x")
    assert z3.main_ctx() is before and x.x.ctx is ctx
    with pytest.raises(SymbolicError, match="another z3 context"):
        PathExplorer([x.x >= 0])  # a term kept from another context is refused


# ----------------------------------------------------------------------------------------
# History independence: each proof runs in a z3 context of its own.
#
# The pollution: the body of the mutant add proof run *without* isolation (``__wrapped__``)
# in a known starting context (a fresh one, whatever ran before in this process). Left in
# that context, one_expiration_per_bucket's first query stays ``unknown`` until the
# deadline (z3 5.4.0: the undecorated body ends ``unknown`` after the 8 s below, in every
# run tried; before the fix every proof shared the context like that). Alone it holds in
# about a second; the deadline leaves room for a loaded machine but must stay below the
# 10 s query limit, after which a retry might solve the polluted query. Whether a given
# pollution upsets z3 depends on z3's version; the checks on which context the proof ran
# in do not.

#: seconds: far above the ~1 s the isolated proof takes, below the 10 s first query limit
_DEADLINE_S = 8


def _pollute_with_the_mutant_add_proof() -> None:
    assert pt.prove_add.__wrapped__("bucket_index_off_by_one").status == "violated"


def _record_explorer_contexts(monkeypatch: pytest.MonkeyPatch) -> list[z3.Context]:
    seen: list[z3.Context] = []
    init = PathExplorer.__init__

    def spy(self: PathExplorer, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        seen.append(self.solver.ctx)

    monkeypatch.setattr(PathExplorer, "__init__", spy)
    return seen


@pytest.mark.slow  # 0.8 CPU-s in a loaded default run (2026-11-29)
def test_a_prove_function_holds_whatever_ran_before_in_the_process(monkeypatch: pytest.MonkeyPatch) -> None:
    with fresh_z3_context():
        polluted = z3.main_ctx()
        _pollute_with_the_mutant_add_proof()
        seen = _record_explorer_contexts(monkeypatch)
        out = pt.prove_one_expiration_per_bucket(deadline=time.perf_counter() + _DEADLINE_S)
        assert z3.main_ctx() is polluted
    assert out.status == "held", out.message
    assert seen and all(c is not polluted for c in seen)


def _undecorated_timing_proofs() -> list[Obligation]:
    """Two obligations that do not isolate themselves: only check_symbolic keeps them apart."""
    return [
        Obligation(
            "mutant_add",
            "the mutant add proof (pollutes the context it runs in)",
            "all 64-bit",
            lambda d: pt.prove_add.__wrapped__("bucket_index_off_by_one", deadline=d),
            expect_violation=True,
        ),
        Obligation(
            "one_expiration_per_bucket",
            "as in the timing-wheel target, undecorated",
            "all 64-bit",
            lambda d: pt.prove_one_expiration_per_bucket.__wrapped__(d),
        ),
    ]


@pytest.mark.slow  # 0.8 CPU-s in a loaded default run (2026-11-29)
def test_check_symbolic_runs_each_obligation_in_a_fresh_context(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _record_explorer_contexts(monkeypatch)
    with fresh_z3_context():
        outer = z3.main_ctx()
        r = check_symbolic(f"{__name__}:_undecorated_timing_proofs", timeout_s=_DEADLINE_S)
    assert r.exit_reason is ExitReason.COMPLETE, r.notes
    assert r.properties["mutant_add"]["status"] == "violated"
    assert r.properties["one_expiration_per_bucket"]["status"] == "held"
    assert len({id(c) for c in seen}) == 2 and outer not in seen


# ----------------------------------------------------------------------------------------
# Election rules.


def test_contains_is_membership() -> None:
    assert pe.prove_contains_is_membership(8).status == "held"


@pytest.mark.slow  # over a CPU-second: the ci selection runs it
@pytest.mark.parametrize("rule", sorted(pe.RULES))
def test_election_rule_holds_up_to_four_replicas(rule: str) -> None:
    out = pe.prove_rule_all_sizes(rule, 4)
    assert out.status == "held", out.message
    assert out.paths > 0


@pytest.mark.parametrize(
    "rule",
    [
        "offline_partition_leader_election",
        pytest.param("leader_for_controlled_shutdown", marks=pytest.mark.slow),  # 2 CPU-s
        "remove_replica_from_isr",
    ],
)
def test_election_rule_holds_for_isr_in_any_order(rule: str) -> None:
    assert pe.prove_rule_all_sizes(rule, 3, isr_order="any").status == "held"


@pytest.mark.parametrize("mutant", sorted(pe.MUTANTS))
def test_mutated_election_rule_is_refuted_with_a_counterexample(
    mutant: str, capsys: pytest.CaptureFixture
) -> None:
    out = pe.refute_mutant(mutant, 3)
    assert out.status == "violated"
    cex = out.counterexample
    assert cex is not None and "assignment" in cex and "result" in cex
    print(f"mutant {mutant}: {out.message}\n{render_counterexample(cex)}")
    text = capsys.readouterr().out
    assert "assignment = (" in text
    # the model itself is restored
    assert pe.prove_rule(pe.MUTANTS[mutant][0], 2).status == "held"


def test_unclean_mutant_counterexample_is_concrete_and_reproducible() -> None:
    out = pe.refute_mutant("offline_ignores_isr", 3)
    cex = out.counterexample
    assert cex is not None
    # replay the concrete counterexample through the real model: the contract's expectation
    from model.election import LeaderAndIsr, offline_partition_leader_election_strategy

    current = LeaderAndIsr(cex["leader"], cex["leader_epoch"], cex["isr"], cex["zk_version"])
    res = offline_partition_leader_election_strategy(
        cex["assignment"],
        current,
        cex["live"],
        cex["trigger"] == "ADMIN_CLIENT_TRIGGERED",
        cex["topic_unclean"],
    )
    bad = cex["result"]["leader_and_isr"]["leader"]
    # the mutant elected a replica outside the ISR although unclean election was not allowed
    assert bad not in cex["isr"] and cex["result"]["outcome"] == "UNCLEAN"
    assert not cex["topic_unclean"] and cex["trigger"] != "ADMIN_CLIENT_TRIGGERED"
    assert res.leader_and_isr is None or res.leader_and_isr.leader != bad


def test_election_rules_target_as_check_result() -> None:
    r = check_symbolic("election-rules", config={"max_replicas": 2})
    assert r.engine == "symbolic" and r.exit_reason is ExitReason.COMPLETE and r.exit_code == 0
    assert set(pe.RULES) <= set(r.properties)
    for entry in r.properties.values():
        assert entry["status"] == "held" and entry["kind"] == "proof" and "seconds" in entry
    assert r.to_json()["schema"] == "kafka-mc/check-result/1"


def test_bad_target_config_is_one_line_error() -> None:
    with pytest.raises(ValueError, match="brokerz: unknown key"):
        check_symbolic("controller-election", config={"brokerz": 3})
    with pytest.raises(ValueError, match="unknown proof target"):
        check_symbolic("nope")


def _refuted_factory() -> list[Obligation]:
    return [
        Obligation(
            "preferred_mutant",
            "a mutated preferred-replica rule",
            "n = 2",
            lambda d: pe.refute_mutant("preferred_tries_others", 2),
        )
    ]


def test_a_refutation_is_a_violation_with_a_one_step_trace() -> None:
    r = check_symbolic(f"{__name__}:_refuted_factory")
    assert r.exit_reason is ExitReason.VIOLATION and r.exit_code == 1
    (v,) = r.violations
    assert v.property == "preferred_mutant" and v.length == 0 and len(v.trace) == 1
    assert v.trace[0].state["assignment"] and "assignment = " in v.message


# ----------------------------------------------------------------------------------------
# Timing wheel.


@pytest.mark.slow  # over a CPU-second: the ci selection runs it
def test_timing_wheel_target_proves_everything() -> None:
    t0 = time.perf_counter()
    r = check_symbolic("timing-wheel", timeout_s=120)
    assert r.exit_reason is ExitReason.COMPLETE, r.notes
    bad = {k: v for k, v in r.properties.items() if v["status"] != "held"}
    assert not bad, bad
    assert time.perf_counter() - t0 < 60


@pytest.mark.parametrize(
    "mutant", ["bucket_index_off_by_one", "overflow_start_zero", "add_accepts_cancelled"]
)
def test_timing_wheel_mutant_refuted(mutant: str, capsys: pytest.CaptureFixture) -> None:
    out = pt.prove_add(mutant)
    assert out.status == "violated" and out.counterexample is not None
    print(f"mutant {mutant}: {out.message}\n{render_counterexample(out.counterexample)}")
    assert "tickMs = " in capsys.readouterr().out


def test_early_expiry_witness_is_tick_minus_one_early() -> None:
    out = pt.prove_early_expiry_witness()
    cex = out.counterexample
    assert out.status == "violated" and cex is not None
    assert cex["tickMs"] > 1 and cex["now"] == cex["expiration"] - (cex["tickMs"] - 1)


def test_dropping_the_interval_precondition_overflows_a_long() -> None:
    out = pt.prove_add(overflow_end=False)
    assert out.status == "violated" and "Long overflow" in out.message


# ----------------------------------------------------------------------------------------
# Controller election: k-induction and the same transition system under bfs.


def test_controller_core_is_one_inductive_with_the_strengthening() -> None:
    out = pe.k_induction(brokers=3, max_k=3)
    assert out.status == "held" and out.details["k"] == 1


def test_controller_core_plain_properties_are_not_k_inductive() -> None:
    out = pe.k_induction(brokers=3, max_k=3, strengthen=False)
    assert out.status == "unknown" and out.details["k"] is None and "cti" in out.details


def test_unfenced_elect_is_refuted_by_bounded_model_checking() -> None:
    out = pe.k_induction(brokers=2, max_k=5, fenced=False)
    assert out.status == "violated"
    last = out.counterexample["step 5"]  # type: ignore[index]
    assert last["active"] == (True, True) and last["my_epoch"][0] == last["my_epoch"][1]


def test_controller_core_bfs_agrees() -> None:
    props = pe.core_properties()
    ok = check_bfs(pe.ControllerCore(2, 3), props)
    assert ok.exit_reason is ExitReason.COMPLETE and not ok.violations
    bad = check_bfs(pe.ControllerCore(2, 3, fenced=False), props)
    assert {v.property for v in bad.violations} & {"one_controller_per_epoch", "each_epoch_won_once"}


@pytest.mark.slow  # 0.8 CPU-s in a loaded default run (2026-11-29)
def test_controller_election_target() -> None:
    r = check_symbolic("controller-election", config={"brokers": 2, "max_k": 3})
    assert r.exit_reason is ExitReason.COMPLETE, r.notes
    assert all(p["status"] == "held" for p in r.properties.values())


def test_transition_relation_comes_from_the_step_function() -> None:
    xs, ys, t, paths = pe.transition_relation(pe.ControllerCore(brokers=2))
    s = z3.Solver()
    s.add(t)
    assert s.check() == z3.sat and paths > 0 and len(xs) == len(ys)
    assert isinstance(Sym(xs[0]) == 1, Sym)


# ----------------------------------------------------------------------------------------
# Slow: the bound of 6 replicas.


@pytest.mark.slow
@pytest.mark.heavy
def test_election_rules_up_to_six_replicas() -> None:
    r = check_symbolic("election-rules", config={"max_replicas": 6}, timeout_s=1800)
    assert r.exit_reason is ExitReason.COMPLETE, r.notes
    bad = {k: v for k, v in r.properties.items() if v["status"] != "held"}
    assert not bad, bad


@pytest.mark.slow
@pytest.mark.parametrize("rule", sorted(pe.RULES))
def test_election_rule_isr_any_order_four_replicas(rule: str) -> None:
    assert pe.prove_rule(rule, 4, isr_order="any").status == "held"
