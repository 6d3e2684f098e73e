"""The partial-order reduction census (``explorer/search/por_census.py``): on toys it tells
connected dependence graphs, visible components and candidates apart, and counts the states the
declaration reduces; on controller-ref it pins the finding of ``docs/reduction.md`` that no
sound ample set exists there while every property is checked."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.por_census import main as por_census_main
from explorer.search.por_census import (
    bfs_states,
    census,
    dependence_components,
    optimistic_states,
    walk_states,
)
from tests.por_toys import PlainProcs, Procs, _with_reads


class Shared:
    """Two processes that each add one to a shared counter, up to 3: no two steps commute
    (each disables the other at 2, and their results differ as process ids are recorded)."""

    def init_states(self) -> list[tuple[int, int]]:
        return [(0, -1)]

    def successors(self, s: tuple[int, int]) -> Iterator[tuple[Any, tuple[int, int]]]:
        if s[0] < 3:
            for p in (0, 1):
                yield ("add", p), (s[0] + 1, p)


def test_independent_processes_are_candidates_and_the_declaration_reduces_them() -> None:
    p = Procs(k=3, n=2)
    c = census(p, p.properties(), bfs_states(p, 1000))
    assert c.states == 27 and c.multi == 20  # 3^3 states; 27 - 1 - 3 * 2 with two unfinished
    assert c.connected == 0
    # process 2 is visible (the properties read it), but every state with two unfinished
    # processes has process 0 or 1 enabled, each a component of its own
    assert c.all_visible == 0 and c.candidate == 20
    assert 0 < c.reduced <= c.candidate
    assert c.invisible > 0 and set(c.invisible_kinds) == {"Step"}
    assert any("candidates: 20" in line for line in c.lines())


def test_properties_that_read_everything_leave_no_candidate() -> None:
    p = Procs(k=3, n=2)
    reads = frozenset({"p0", "p1", "p2"})
    props = [_with_reads(q, reads) for q in p.properties()]
    c = census(p, props, bfs_states(p, 1000))
    assert c.invisible == 0 and c.candidate == 0 and c.reduced == 0
    assert c.all_visible == c.multi == 20


def test_a_connected_dependence_graph_is_never_a_candidate() -> None:
    s = Shared()
    states = bfs_states(s, 100)
    assert dependence_components(s, list(s.successors(states[0]))) == [[0, 1]]
    c = census(s, [], states)
    assert c.multi == c.connected > 0 and c.candidate == 0
    assert not c.visibility  # no footprints: every action counts as visible
    assert "no footprints declared" in c.lines()[0]


def test_without_footprints_nothing_is_a_candidate() -> None:
    p = PlainProcs(k=2, n=2)
    c = census(p, [], bfs_states(p, 100))
    assert c.invisible == 0 and c.candidate == 0 and c.all_visible == c.multi > 0


def test_walks_are_seeded_and_end_where_no_successor_is_left() -> None:
    p = Procs(k=2, n=2)
    a, b = list(walk_states(p, 3, seed=7)), list(walk_states(p, 3, seed=7))
    assert a == b and len(a) == 3 * 5  # each walk: 4 steps from (0, 0) to (2, 2)
    assert a[4] == (2, 2)


def test_the_optimistic_search_follows_one_component() -> None:
    """On independent processes it explores one interleaving, as the sound reduction does
    (``test_reduction.py``: 13 of 256 states); on the shared counter, every state."""
    assert optimistic_states(Procs(k=4, n=3)) == (13, True)
    assert optimistic_states(Shared()) == (len(bfs_states(Shared(), 100)), True)
    assert optimistic_states(Procs(k=4, n=3), limit=5) == (5, False)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--properties", "no_such_property"], "no_such_property"),
        (["--set", "brokers=0"], "brokers"),
        (["--model", "nope"], "nope"),
        (["--bfs", "-1"], "--bfs"),
    ],
)
def test_the_census_command_refuses_bad_input_in_one_line(
    args: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        por_census_main(["--walks", "0", "--bfs", "10", *args])  # the later flag wins
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and named in err


def test_the_census_command_prints_its_sections(capsys: pytest.CaptureFixture[str]) -> None:
    por_census_main(
        ["--config", "configs/controller-small.toml", "--bfs", "50", "--walks", "2", "--optimistic"]
    )
    out = capsys.readouterr().out
    assert "40 properties" in out and "breadth-first prefix, 50 states" in out
    assert "2 random walks, seed 1" in out and "optimistic search" in out and "candidates: 0" in out
