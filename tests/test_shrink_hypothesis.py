"""Hypothesis as the shrinker (issue 34, item 1): the trace becomes a Hypothesis example whose
choices are the configuration's shrinkable keys and indices into a fixed step table, and
Hypothesis's shrinker minimises them together."""

from __future__ import annotations

from typing import Any

import pytest

from explorer.core import always
from explorer.search.shrink_hypothesis import (
    ShrinkableKeys,
    _step_table,
    hypothesis_shrink,
    reproduces,
    shrinkable_keys,
)
from explorer.shrink import ShrinkError, shrink_main, shrink_trace
from tests.toys import Grid

UP0, UP1 = "counter 0 increments", "counter 1 increments"


class Switches:
    """Three switches; ``crash`` (a fault) turns every switch on at once, ``flip i`` one of
    them; bad when all are on. The shortest failure is one crash; without faults, three
    flips."""

    def init_states(self) -> list[tuple[int, ...]]:
        return [(0, 0, 0)]

    def successors(self, s: tuple[int, ...]) -> list[tuple[str, tuple[int, ...]]]:
        out = [(f"flip {i}", tuple(1 - v if j == i else v for j, v in enumerate(s))) for i in range(3)]
        return [*out, ("crash", (1, 1, 1))]

    def fault_kinds(self) -> tuple[str, ...]:
        return ()


ALL_ON = always("not_all_on", lambda s: sum(s) < 3, "some switch is off")


def _build(values: dict[str, Any]) -> tuple[Any, list[Any], dict[str, Any]]:
    return Switches(), [ALL_ON], dict(values)


def test_steps_and_configuration_shrink_together() -> None:
    from explorer.shrink import target_for

    grid = target_for("tests.toys:grid")
    values = {"n": 6, "limit": 3}
    long = [UP1, UP0, UP1, UP0, UP1, UP0]  # fails after three steps: the rest is cut
    keys = shrinkable_keys(values, None, fixed=["limit"])
    out = hypothesis_shrink(grid.build, values, keys, long, "sum_below_limit")
    assert out is not None and len(out.actions) == 3
    assert out.values["limit"] == 3 and out.values["n"] < 6  # n shrank with the steps
    anything = hypothesis_shrink(grid.build, values, shrinkable_keys(values, None), long, "sum_below_limit")
    assert anything is not None and anything.values["limit"] == 0 and anything.actions == []
    # in kafka-mc shrink, Hypothesis runs after the hand-written phases and says what it did
    kept = shrink_trace(
        "tests.toys:grid", values, [None, *long], "sum_below_limit", fixed_keys=["limit"], use_bfs=False
    )
    assert kept.length == 3 and kept.config["limit"] == 3 and kept.config["n"] < 6
    assert any(n.startswith("steps: 3 -> 3 by Hypothesis (") for n in kept.notes), kept.notes


class Doubling:
    """One counter: ``inc`` adds one, ``double`` doubles it; bad from 4 on."""

    def init_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> list[tuple[str, int]]:
        return [("inc", s + 1), ("double", 2 * s)]


def test_hypothesis_finds_shorter_traces_than_one_minimal_ddmin() -> None:
    # ddmin only deletes steps: [inc x 4] is 1-minimal. Hypothesis also replaces a step by
    # another entry of the step table, so it finds inc, double, double (1, 2, 4)
    below_4 = always("below_4", lambda s: s < 4, "")
    trace = [None, "double", "inc", "inc", "inc", "inc"]
    old = shrink_trace(
        Doubling(), None, trace, "below_4", properties=[below_4], shrinker="ddmin", use_bfs=False
    )
    new = shrink_trace(Doubling(), None, trace, "below_4", properties=[below_4], use_bfs=False)
    assert old.length == 4 and new.length == 3
    assert [s.action for s in new.steps][1:] == ["inc", "double", "double"]
    assert any(n.startswith("steps: 4 -> 3 by Hypothesis (") for n in new.notes), new.notes


def test_the_step_table_is_the_steps_in_order_of_first_use() -> None:
    texts = ["flip 0", "crash", "flip 1", "flip 0"]
    assert _step_table(texts, ["flip", "crash", "flip", "flip"], {"crash"}) == ["flip 0", "crash", "flip 1"]


def test_a_step_not_enabled_is_skipped_so_later_steps_keep_their_meaning() -> None:
    # "flip 0" twice in a row turns switch 0 off again; the shrink must find the three
    # distinct flips wherever they are, and never keep a fault it can do without
    out = hypothesis_shrink(
        _build,
        {},
        ShrinkableKeys(),
        ["flip 0", "flip 0", "flip 1", "flip 0", "flip 2"],
        "not_all_on",
    )
    assert out is not None and sorted(out.texts) == ["flip 0", "flip 1", "flip 2"]
    with_fault = hypothesis_shrink(
        _build,
        {},
        ShrinkableKeys(),
        ["flip 0", "flip 1", "crash"],
        "not_all_on",
        kinds=["f", "f", "crash"],
        faults={"crash"},
    )
    # one crash is shorter than three flips: shorter wins over fault-free
    assert with_fault is not None and with_fault.texts == ["crash"]


def test_a_trace_that_does_not_fail_is_not_an_example() -> None:
    assert hypothesis_shrink(_build, {}, ShrinkableKeys(), ["flip 0", "flip 1"], "not_all_on") is None
    assert reproduces(_build, {}, ["flip 0", "flip 1", "flip 2"], "not_all_on")
    assert not reproduces(_build, {}, ["flip 0", "flip 1", "flip 1"], "not_all_on")


def test_shrinkable_keys_follow_the_config_types_and_bounds() -> None:
    from invariants.mutants.controller import ControllerConfig

    keys = shrinkable_keys(
        {"brokers": 3, "max_crashes": 2, "broker_epoch": True, "assignment": []}, ControllerConfig
    )
    assert keys.ints["brokers"] >= 1 and keys.ints["max_crashes"] == 0 and "assignment" in keys.lists
    assert "broker_epoch" not in keys.ints
    assert "brokers" not in shrinkable_keys({"brokers": 3}, ControllerConfig, fixed=["brokers"]).ints


def test_when_hypothesis_cannot_replay_the_trace_ddmin_takes_over(monkeypatch: pytest.MonkeyPatch) -> None:
    import hypothesis.database

    monkeypatch.setattr(hypothesis.database, "choices_to_bytes", lambda choices: b"\xff not choices")
    out = shrink_trace(
        Grid(4),
        None,
        [None, UP1, UP0, UP1, UP0],
        "sum_below_limit",
        properties=Grid(4, limit=3).properties(),
        shrink_config=False,
    )
    assert out.length == 3
    assert (
        out.notes[1] == "hypothesis: the trace did not fail as a Hypothesis example (ddmin's result stands)"
    )


def test_unknown_shrinker_is_refused() -> None:
    with pytest.raises(ShrinkError, match="shrinker 'delta': expected one of hypothesis, ddmin"):
        shrink_trace(
            "tests.toys:grid", {"n": 3, "limit": 1}, [None, UP0], "sum_below_limit", shrinker="delta"
        )
    assert shrink_main(["x.json", "--shrinker", "delta"]) == 2


def test_a_configuration_without_the_property_is_no_candidate() -> None:
    # lowering `k` to 0 removes the property from the model (as max_topic_deletions = 0 removes
    # deleted_topic_gone): that configuration is skipped, not an error
    def build(values: dict[str, Any]) -> tuple[Any, list[Any], dict[str, Any]]:
        return Switches(), ([ALL_ON] if values["k"] > 0 else []), dict(values)

    out = hypothesis_shrink(
        build, {"k": 3}, ShrinkableKeys(ints={"k": 0}), ["flip 0", "flip 1", "flip 2"], "not_all_on"
    )
    assert out is not None and out.values == {"k": 1} and sorted(out.texts) == ["flip 0", "flip 1", "flip 2"]
