"""The bug zoo (``model/controller/bugs``, ``docs/bugs.md``, issue 58): every registered
historic bug has a release entry that expects exactly its violations at their pinned shortest
lengths, and the same configuration without the bug holds every property; the key ``bug``
implies the variant keys a bug needs and is refused against a contradicting one."""

from __future__ import annotations

from pathlib import Path

import pytest

import invariants.controller as spec
from explorer.config import ConfigError, load_config
from explorer.core import CheckResult
from explorer.engines.bfs import check_bfs
from explorer.suite import SuiteEntry, load_suite
from invariants.mutants.controller import ControllerConfig, build
from model.controller import bugs

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "configs" / "release.toml"


def _entries() -> dict[str, SuiteEntry]:
    return {e.name: e for e in load_suite(str(SUITE))}


def _bug_of(e: SuiteEntry) -> str:
    """The ``bug`` an entry sets (``none`` when it sets none)."""
    return next((o.split("=", 1)[1] for o in e.set if o.startswith("bug=")), bugs.NONE)


def _run(e: SuiteEntry, drop_bug: bool = False, only: str | None = None) -> CheckResult:
    """The entry's bfs run (without its ``bug`` override when ``drop_bug``)."""
    overrides = [o for o in e.set if not (drop_bug and o.startswith("bug="))]
    c = load_config(ControllerConfig, str(SUITE.parent / e.config) if e.config else None, overrides)
    props = spec.properties(c)
    if only is not None:
        props = [p for p in props if p.name == only]
    return check_bfs(build(c), props, model="controller", config=c, keep_going=only is None)


def test_every_bug_has_a_release_entry_expecting_its_violation() -> None:
    """One ``bug-KAFKA-NNNN`` entry per registered bug, expecting violations with each pinned."""
    entries = _entries()
    for name in bugs.BUGS:
        e = entries[f"bug-{name}"]
        assert _bug_of(e) == name and e.expect == "violation" and e.violates
        assert e.engine == "bfs" and e.max_seconds is not None and e.max_seconds <= 120
        assert set(e.violates_at) <= set(e.violates) and e.violates_at


def test_bug_key_implies_and_refuses() -> None:
    """A bug sets the variant keys it implies; a contradicting value is one line naming the key."""
    assert ControllerConfig(bug="KAFKA-4229").kafka_version == "0.8"
    assert ControllerConfig(bug="KAFKA-1120").broker_epoch is False
    assert ControllerConfig(bug="KAFKA-1382").kafka_version == "0.8"
    with pytest.raises(ConfigError, match="broker_epoch: True contradicts bug = KAFKA-1120"):
        ControllerConfig(bug="KAFKA-1120", broker_epoch=True)
    assert type(build(ControllerConfig(bug="KAFKA-1681")).kafka_controller).__name__ == "Kafka1681"


def test_smallest_bug_found_at_its_pinned_length() -> None:
    """KAFKA-4229 (the 0.8 elector's ``handleNewSession`` finding its own ``/controller``):
    ``controller_znode_valid`` fails at the entry's pinned length, and holds without the bug."""
    e = _entries()["bug-KAFKA-4229"]
    r = _run(e, only="controller_znode_valid")
    assert [(v.property, v.length) for v in r.violations] == [
        ("controller_znode_valid", e.violates_at["controller_znode_valid"])
    ]
    assert _run(e, drop_bug=True, only="controller_znode_valid").violations == []


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(bugs.BUGS))
def test_bug_entry_found_and_fixed(name: str) -> None:
    """The entry finds exactly its expected violations at the pinned lengths; the same
    configuration without the bug holds every property (the twin entry, or ``controller-admin``)."""
    e = _entries()[f"bug-{name}"]
    r = _run(e)
    assert sorted({v.property for v in r.violations}) == sorted(e.violates)
    lengths = {v.property: v.length for v in r.violations}
    assert {p: lengths[p] for p in e.violates_at} == dict(e.violates_at)
    fixed = _run(e, drop_bug=True)
    assert fixed.exit_reason.value == "complete" and fixed.violations == []
