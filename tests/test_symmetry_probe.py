"""The release's symmetry probe (``reduce_sound``): an entry searched with ``reduce = "symmetry"``
passes only if its declared permutations commute with the model on its first states, so a
renaming bug cannot make the reduced search skip states unseen (issue 35: the measure's
renamer mutants survived because the reduced search explores less without failing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from explorer.core import CheckResult, ExitReason
from explorer.release import check_requirements
from explorer.suite import SuiteEntry
from explorer.symmetry_probe import symmetry_problem
from invariants.controller import properties
from model.controller import ControllerConfig, ControllerSystem

SPARE = ControllerConfig(
    brokers=4,
    topics=2,
    assignment=((0, 1), (1,)),
    max_restarts=1,
    send_update_metadata=False,
    max_session_expiries=0,
)


class Mislabelled(ControllerSystem):
    """Declares the spare-broker swap but renames broker 1 (a replica holder) instead."""

    def symmetries(self) -> list[Any]:
        (g,) = super().symmetries()

        def wrong(s: Any) -> Any:
            t = g(s)
            return t._replace(nodes=(t.nodes[0], t.nodes[2], t.nodes[1], t.nodes[3]))

        return [wrong]


def test_the_spare_brokers_symmetry_is_sound() -> None:
    system = ControllerSystem(SPARE)
    assert len(system.symmetries()) == 1
    assert symmetry_problem(system, properties(SPARE), states=200) is None


def test_a_wrong_renaming_is_caught_and_fails_the_entry() -> None:
    system = Mislabelled(SPARE)
    problem = symmetry_problem(system, properties(SPARE), states=200)
    assert problem is not None and "permutation 1 of 1" in problem
    entry = SuiteEntry(name="e", model="controller", reduce="symmetry")
    result = CheckResult("controller", {}, "bfs", ExitReason.COMPLETE, 0, 0, 0, 0.0, 0.0)
    req, effective = check_requirements(entry, result, system, properties(SPARE))
    assert req["key"] == "reduce_sound" and not req["met"] and "reduce symmetry is unsound" in req["detail"]
    assert effective["key"] == "reduce_effective" and effective["met"]  # it declares a permutation
    # without a reduction the probe does not run
    plain = SuiteEntry(name="e", model="controller")
    assert check_requirements(plain, result, system, properties(SPARE)) == []


def test_an_ineffective_reduction_fails_the_entry() -> None:
    """reduce_effective: a model that declares no permutation, or a reduced search that meets
    as many states as the full one, fails an entry with reduce = symmetry."""

    class NoSymmetry(Mislabelled):
        def symmetries(self) -> list:
            return []

    result = CheckResult("controller", {}, "bfs", ExitReason.COMPLETE, 20_374, 0, 0, 0.0, 0.0)
    entry = SuiteEntry(name="e", model="controller", reduce="symmetry", full_states=20_374)
    reqs = {r["key"]: r for r in check_requirements(entry, result, NoSymmetry(SPARE), properties(SPARE))}
    assert not reqs["reduce_effective"]["met"]
    assert "declares no symmetry" in reqs["reduce_effective"]["detail"]
    reqs = {r["key"]: r for r in check_requirements(entry, result, Mislabelled(SPARE), properties(SPARE))}
    assert (
        not reqs["reduce_effective"]["met"]
        and "no fewer than the full search's 20,374" in reqs["reduce_effective"]["detail"]
    )


def test_the_partition_symmetric_entry_is_pinned() -> None:
    """controller-symmetric-partitions: 1,783 orbit representatives of 3,514 states."""
    from explorer.api import CheckOptions
    from explorer.frontend import run_check
    from explorer.release import load_suite

    (e,) = [
        e
        for e in load_suite(str(Path(__file__).resolve().parent.parent / "configs" / "release.toml"))
        if e.name == "controller-symmetric-partitions"
    ]
    reduced, system, props = run_check(
        e.model, CheckOptions(reduce="symmetry"), config_path=e.config, overrides=e.set
    )
    full, _, _ = run_check(e.model, CheckOptions(), config_path=e.config, overrides=e.set)
    assert (reduced.distinct_states, full.distinct_states) == (1_783, e.full_states) == (1_783, 3_514)
    assert reduced.violations == [] and symmetry_problem(system, props) is None


def test_the_cold_start_symmetric_entry_is_pinned() -> None:
    """controller-cold-start-symmetric: 1,848 orbit representatives of 3,692 states (1,986 of 3,968 before issue 58); its swap
    moves broker 0."""
    from explorer.api import CheckOptions
    from explorer.frontend import run_check
    from explorer.release import load_suite

    (e,) = [
        e
        for e in load_suite(str(Path(__file__).resolve().parent.parent / "configs" / "release.toml"))
        if e.name == "controller-cold-start-symmetric"
    ]
    reduced, system, props = run_check(
        e.model, CheckOptions(reduce="symmetry"), config_path=e.config, overrides=e.set
    )
    full, _, _ = run_check(e.model, CheckOptions(), config_path=e.config, overrides=e.set)
    assert (reduced.distinct_states, full.distinct_states) == (1_848, e.full_states) == (1_848, 3_692)
    assert reduced.violations == [] and symmetry_problem(system, props) is None
    assert any(g.brokers[0] != 0 for g in system.symmetries())


@pytest.mark.slow
def test_the_cold_start_symmetric_metadata_entry_is_pinned() -> None:
    """controller-cold-start-symmetric-metadata: with UpdateMetadata, 10,312 orbit representatives
    of 20,620 states (17,341 of 34,678 before issue 58; about 3 s for both searches); the brokers' metadata caches are renamed."""
    from explorer.api import CheckOptions
    from explorer.frontend import run_check
    from explorer.release import load_suite

    (e,) = [
        e
        for e in load_suite(str(Path(__file__).resolve().parent.parent / "configs" / "release.toml"))
        if e.name == "controller-cold-start-symmetric-metadata"
    ]
    reduced, system, props = run_check(
        e.model, CheckOptions(reduce="symmetry"), config_path=e.config, overrides=e.set
    )
    full, _, _ = run_check(e.model, CheckOptions(), config_path=e.config, overrides=e.set)
    assert (reduced.distinct_states, full.distinct_states) == (10_312, e.full_states) == (10_312, 20_620)
    assert reduced.violations == [] and symmetry_problem(system, props) is None
    assert "metadata_cache_matches_zookeeper" in {p.name for p in props}
