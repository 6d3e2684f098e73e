"""The equivalent-mutant table names mutants of today's source (issue 54, item 4): a key of
``invariants/mutants/controller_equivalent.toml``'s ``[equivalent]`` table that names no
mutant the generator makes of the code as it is now is stale, and a stale key could excuse a
different mutant once the code moves again, so it is an error here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.mutate import load_equivalent
from explorer.source_mutants import generate_files
from invariants.mutants.controller import MUTANTS

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "invariants" / "mutants" / "controller_equivalent.toml"


def stale_keys(why: dict[str, str]) -> list[str]:
    """The keys of a resolved ``[equivalent]`` table (:func:`load_equivalent`) that name neither
    a catalogue mutant nor a source mutant of the files they name, as those files are now."""
    files = sorted({k.split(":")[0] for k in why if "/" in k})
    ids = {m.id for m in generate_files(ROOT, [ROOT / f for f in files if (ROOT / f).is_file()])}
    names = set(MUTANTS.names())
    return [k for k in why if (k not in ids if "/" in k else k not in names)]


def test_every_equivalent_key_names_a_mutant_of_today_s_source() -> None:
    why = load_equivalent(TABLE)
    assert len(why) > 40 and stale_keys(why) == []


@pytest.mark.parametrize("shift", ["+1", "+2"])
def test_a_stale_key_is_found(tmp_path: Path, shift: str) -> None:
    """A key moved off its mutant (the function body moved, the key not) is reported."""
    text = TABLE.read_text(encoding="utf-8")
    old = '"model/controller/broker.py::Brokers.crash:+2:37:int-1"'
    assert old in text
    planted = tmp_path / "eq.toml"
    planted.write_text(text.replace(old, old.replace(":+2:", f":+2{shift[1:]}:")), encoding="utf-8")
    assert len(stale_keys(load_equivalent(planted))) == 1
