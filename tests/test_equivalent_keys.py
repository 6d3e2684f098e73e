"""The equivalent-mutant table names mutants of today's source (issue 54, item 4): a key of
``invariants/mutants/controller_equivalent.toml``'s ``[equivalent]`` table that names no
mutant the generator makes of the code as it is now is stale, and a stale key could excuse a
different mutant once the code moves again, so it is an error here. Every source mutant is
keyed by :attr:`explorer.mutation.source.SourceMutant.key` (its function and its node's place in
that function's syntax tree), which edits elsewhere leave as they are (tests/test_mutant_keys.py).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from explorer.mutation.command import load_equivalent
from explorer.mutation.source import generate_files, is_key
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


@pytest.mark.slow  # 1.0 CPU-s in a loaded default run (2026-11-29)
def test_every_equivalent_key_names_a_mutant_of_today_s_source() -> None:
    why = load_equivalent(TABLE)
    assert len(why) > 40 and stale_keys(why) == []


def test_every_source_key_is_a_key_not_a_line() -> None:
    """No key of the table names a line (``file:line:col:operator``, or an offset below a
    ``def`` as before issue 54): each is a catalogue name or a :attr:`SourceMutant.key`."""
    keys = tomllib.loads(TABLE.read_text(encoding="utf-8"))["equivalent"]
    assert [k for k in keys if "/" in k and not is_key(k)] == []


@pytest.mark.slow  # 1.7 CPU-s in a loaded default run (2026-11-29)
@pytest.mark.parametrize("shift", ["+1", "+2"])
def test_a_stale_key_is_found(tmp_path: Path, shift: str) -> None:
    """A key moved off its mutant (statements added above it in its function, the key not) is reported."""
    text = TABLE.read_text(encoding="utf-8")
    old = '"model/controller/broker.py::Brokers.crash@body[1].value.args[0].elt.args[3]:int-1"'
    assert old in text
    planted = tmp_path / "eq.toml"
    planted.write_text(
        text.replace(old, old.replace("@body[1]", f"@body[{1 + int(shift)}]")), encoding="utf-8"
    )
    assert len(stale_keys(load_equivalent(planted))) == 1
