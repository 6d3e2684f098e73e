"""Partial-order reduction (``--reduce por``, ``explorer/search/reduction.py``): on toy systems
with declared footprints (it reduces, the cycle proviso is needed, visible steps and
``eventually`` properties turn it off with a note), and the differential check on the
controller model: the reduced search reports exactly the violated properties and reached
witnesses of the full search, and its counterexamples replay."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from explorer.api import check
from explorer.core import always, eventually
from explorer.engines.base import CheckOptions
from explorer.search.reduction import AmpleSets
from explorer.tracefile import replay_steps
from invariants.controller import properties
from invariants.mutants.controller import ControllerConfig, build
from tests.por_toys import Op, PlainProcs, Procs, RandomFootprints, RandomProcs

ROOT = Path(__file__).resolve().parent.parent


def run(system: Any, props: list[Any], reduce: str) -> Any:
    return check(system, props, CheckOptions(reduce=reduce, keep_going=True))


# -- toys --------------------------------------------------------------------------------


def test_independent_processes_are_explored_in_one_order() -> None:
    p = Procs(k=4, n=3)
    full, red = run(p, p.properties(), "none"), run(p, p.properties(), "por")
    assert full.distinct_states == 4**4
    assert red.distinct_states == 13  # one interleaving of the 4 x 3 steps
    assert {v.property for v in red.violations} == {v.property for v in full.violations} == {"p3_below_n"}
    assert set(red.witnesses) == set(full.witnesses) == {"p3_near_n"}
    assert any("ample set" in n for n in red.notes)


def test_the_cycle_proviso_keeps_the_other_processes_alive() -> None:
    """Process 0 cycles for ever and is invisible: without the proviso its steps alone would be
    followed round the cycle and process 2's violation never reached."""
    p = Procs(k=3, n=3, cycle=True)
    red = run(p, p.properties(), "por")
    assert {v.property for v in red.violations} == {"p2_below_n"}

    class NoProviso(AmpleSets):
        def successors(self, s: Any, succ: Any, depth: int, visited: Any) -> Any:
            return self._ample(s, succ) or succ

    ample = NoProviso(p, p.properties())
    seen, frontier = set(p.init_states()), list(p.init_states())
    while frontier:
        nxt = []
        for s in frontier:
            for _, t in ample.successors(s, list(p.successors(s)), 0, seen):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    assert all(s[2] < 3 for s in seen)  # ignored: the violation is never reached


def test_visible_steps_are_not_postponed() -> None:
    """Every process is read by a property that holds (so is never decided): nothing is reduced.
    Once decided, a property no longer makes steps visible."""
    p = Procs(k=3, n=2)
    props = [
        dataclasses.replace(
            always(f"p{i}_bounded", lambda s, i=i: s[i] <= 2, "bounded"), reads=frozenset({f"p{i}"})
        )
        for i in range(3)
    ]
    assert run(p, props, "por").distinct_states == run(p, props, "none").distinct_states == 27
    decided = [q for i in range(3) for q in p.properties(last=i)]  # each violated or witnessed early
    assert run(p, decided, "por").distinct_states < 27


def test_eventually_properties_turn_the_reduction_off_with_a_note() -> None:
    p = Procs(k=3, n=2)
    props = [*p.properties(), eventually("done", lambda s: s == (2, 2, 2), "all finish")]
    r = run(p, props, "por")
    assert r.distinct_states == 27
    assert any("off for this run" in n and "eventually" in n for n in r.notes)


def test_a_system_without_footprints_is_searched_in_full_with_a_note() -> None:
    p = PlainProcs(k=3, n=2)
    r = run(p, p.properties(), "por")
    assert r.distinct_states == 27
    assert any("declares no action footprints" in n for n in r.notes)


@pytest.mark.slow  # 1.3 CPU-s in a loaded default run (2026-11-29)
def test_reduce_on_the_command_line() -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "explorer", "check", "controller", "--config", "configs/controller-small.toml",
             "--quiet", *args],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    ok = cli("--reduce", "por")
    assert ok.returncode == 0 and "reduce por:" in ok.stdout
    bad = cli("--reduce", "symmetric")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "kafka-mc: error: --reduce symmetric: unknown reduction (did you mean 'symmetry'?) (available: none, por, symmetry)"
    ]
    workers = cli("--reduce", "por", "--workers", "2")
    assert workers.returncode == 2 and workers.stderr.strip().splitlines() == [
        "kafka-mc: error: --reduce por needs one process: its cycle proviso asks, for each ample successor, "
        "whether it was met before this level, and the worker processes do not hold the visited set"
    ]
    sim = cli("--reduce", "symmetry", "--engine", "simulate")
    assert sim.returncode == 2 and sim.stderr.strip().splitlines() == [
        "kafka-mc: error: --reduce symmetry applies to the exhaustive engines (bfs, spark), not to --engine "
        "simulate (a sampling or proving engine explores no state graph to reduce)"
    ]


# -- the controller: no footprints, so --reduce por is a note and the full search ----------


def test_the_controller_declares_no_footprints_and_is_searched_in_full() -> None:
    """The controller's footprints were retired (issue 31: no sound ample set exists on any
    controller configuration, docs/reduction.md's census); ``--reduce por`` says so in its
    note and searches every state, with the same verdicts as without it."""
    cfg = ControllerConfig(**tomllib.loads((ROOT / "configs" / "controller-small.toml").read_text()))
    full = run(build(cfg), properties(cfg), "none")
    red = run(build(cfg), properties(cfg), "por")
    assert red.distinct_states == full.distinct_states == 74
    assert {v.property for v in red.violations} == {v.property for v in full.violations}
    assert any("declares no action footprints" in n for n in red.notes)


def test_release_entries_carry_the_reduction(tmp_path: Path) -> None:
    from explorer.config import ConfigError
    from explorer.release import load_suite

    suite = tmp_path / "suite.toml"
    entry = f'[[check]]\nname = "x"\nmodel = "controller"\nconfig = "{ROOT / "configs" / "controller-small.toml"}"\n'
    suite.write_text(entry + 'reduce = "por"\n')
    assert load_suite(str(suite))[0].reduce == "por"
    suite.write_text(entry)
    assert load_suite(str(suite))[0].reduce == "none"
    suite.write_text(entry + 'reduce = "symmetry"\n')
    assert load_suite(str(suite))[0].reduce == "symmetry"
    suite.write_text(entry + 'reduce = "mirror"\n')
    with pytest.raises(ConfigError, match="reduce must be one of none, por, symmetry"):
        load_suite(str(suite))


def visible_projections(p: RandomProcs, ample: AmpleSets | None) -> set[tuple[int, ...]]:
    """The values of ``p``'s property variables over the states a breadth-first search (with
    ``ample`` choosing the successors, or all of them) reaches: what the reduction preserves."""
    seen: dict[Any, Any] = dict.fromkeys(p.init_states())
    frontier, depth = list(seen), 0
    while frontier:
        nxt = []
        for s in frontier:
            succ = list(p.successors(s))
            if ample is not None:
                succ = ample.successors(s, succ, depth, seen)
            for _, t in succ:
                if t not in seen:
                    seen[t] = s
                    nxt.append(t)
        frontier, depth = nxt, depth + 1
    return {tuple(s[1][v] for v in p.prop_vars) for s in seen}


def watcher(p: RandomProcs) -> Any:
    """A property reading ``p``'s property variables that is never decided."""
    return dataclasses.replace(always("watch", bool, "true"), reads=frozenset(f"v{v}" for v in p.prop_vars))


@pytest.mark.slow  # 1.0 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("batch", range(4))
def test_reduced_search_agrees_on_random_programs(batch: int) -> None:
    """Random shared-variable programs (some looping): the same violations and witnesses, every
    counterexample replays, and the reduced search reaches every combination of values of the
    variables the properties read that the full search reaches; the reduction does happen."""
    reduced = 0
    for seed in range(batch * 50, batch * 50 + 50):
        p = RandomProcs(seed, k=4, nvars=5)
        full, red = run(p, p.properties(), "none"), run(p, p.properties(), "por")
        assert {v.property for v in red.violations if v.trace} == {
            v.property for v in full.violations if v.trace
        }
        assert set(red.witnesses) == set(full.witnesses), seed
        for v in red.violations:
            if v.trace:
                replay_steps(p, [{"action": st.action, "fingerprint": st.fingerprint} for st in v.trace])
        assert visible_projections(p, AmpleSets(p, [watcher(p)])) == visible_projections(p, None), seed
        reduced += red.distinct_states < full.distinct_states
    assert reduced >= 5


def test_enabling_classes_are_needed() -> None:
    """Process 0 (invisible) sets v2 := 1, which disables process 2's second step (v2 == 0:
    v1 := 1); process 2's first step waits for process 1 to set v0. Without the enabling
    classes the stubborn set {0, 2} would postpone process 1 and lose v1 = 1."""
    progs = [
        [Op(-1, 0, 2, 4), Op(-1, 0, 2, 4)],
        [Op(-1, 0, 0, 4), Op(-1, 0, 0, 4)],
        [Op(0, 1, 0, 5), Op(2, 0, 1, 4)],
    ]
    p = RandomProcs.scripted(progs, nvars=3, prop_vars=(1,))
    full = visible_projections(p, None)
    assert (1,) in full
    assert visible_projections(p, AmpleSets(p, [watcher(p)])) == full

    class NoEnablers(RandomFootprints):
        def enabling_classes(self, s: Any, c: int) -> set[int]:
            return set()

    class Careless(RandomProcs):
        def por_footprints(self) -> RandomFootprints:
            return NoEnablers(self)

    q = Careless.scripted(progs, nvars=3, prop_vars=(1,))
    assert (1,) not in visible_projections(q, AmpleSets(q, [watcher(q)]))


def test_the_note_says_why_states_were_expanded_in_full() -> None:
    """The counters behind the note: states with one action, states whose enabled actions are
    all visible (no proper ample set can exist), the proviso, and the rest add up to ``full``."""
    import re

    from tests.por_toys import _with_reads

    p = Procs(k=3, n=2)
    red = run(p, p.properties(), "por")
    (note,) = [n for n in red.notes if n.startswith("reduce por:")]
    got = [int(x) for x in re.findall(r"(\d+) ", note)[:6]]
    reduced, full, single, visible, proviso, rest = got
    assert reduced > 0 and full == single + visible + proviso + rest
    # a property that holds and reads every process: every step is visible all along
    everything = [
        _with_reads(always("bounded", lambda s: max(s) <= 2, "in range"), frozenset({"p0", "p1", "p2"}))
    ]
    red = run(p, everything, "por")
    (note,) = [n for n in red.notes if n.startswith("reduce por:")]
    reduced, full, single, visible, proviso, rest = [int(x) for x in re.findall(r"(\d+) ", note)[:6]]
    assert reduced == 0 and visible == 20 and full == single + visible and proviso == rest == 0
    assert red.distinct_states == 27
