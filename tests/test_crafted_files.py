"""Nothing loaded from a file a user can hand the tool runs code (issue 37, item 5).

No file of a checkpoint is a pickle: snapshots, spilled frontier files and ``--workers`` frontier
shares are in the data encoding of :mod:`explorer.search.codec` (states packed by
:mod:`explorer.search.statepack`), and each snapshot lists its files' sizes and SHA-256 in
``snapshot.json``. A damaged file, a pickle put in a file's place and a well-formed file that
names a function are each refused in one line (exit 2), and the command they carry never runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import signal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.search import codec
from explorer.search.statepack import dumps_states, loads_states
from tests.test_checkpoint import kafka_mc

TOY = ["check", "--system", "tests.toys:Grid", "--set", "n=30"]


class _Touch:
    """Unpickling it would run ``os.system("touch MARKER")``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def _checkpoint(tmp: Path, extra: list[str]) -> Path:
    """A checkpoint killed mid-search (SIGKILL at a crash point), with a snapshot to resume."""
    ck = tmp / "ck"
    batch = [] if "--workers" in extra else ["--frontier-batch", "8"]  # spill the frontier to files
    r = kafka_mc(
        [*TOY, "--checkpoint", str(ck), "--checkpoint-every", "0", *batch, *extra, "--quiet"], crash="state:3"
    )
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert (ck / "CURRENT").exists()
    return ck


def _refused(ck: Path, marker: Path, why: str) -> None:
    r = kafka_mc(["check", "--resume", str(ck), "--system", "tests.toys:Grid", "--quiet"])
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert why in lines[0], lines[0]
    assert not marker.exists(), "the crafted file ran its command"


def _crafted_system_call(marker: Path) -> bytes:
    """A well-formed file of the encoding whose one value claims to be an ``os.system`` "enum"."""
    mod, name = os.system.__module__.encode(), b"system"
    u32 = len(mod).to_bytes(4, "little")
    return (
        b"\x01EK" + u32 + mod + len(name).to_bytes(4, "little") + name + (4).to_bytes(4, "little") + b"echo"
    )


@pytest.mark.slow
@pytest.mark.parametrize("what", ["snapshot", "frontier", "workers-share"])
@pytest.mark.parametrize("how", ["damaged", "pickle", "function"])
def test_a_crafted_checkpoint_file_is_refused_in_one_line(tmp_path: Path, what: str, how: str) -> None:
    """``damaged``: a file changed, its checksum not (caught by ``snapshot.json``); ``pickle``
    and ``function``: the file replaced and its checksum updated too, as an attacker would
    (caught by the decoder: a pickle is not this encoding; a name that is no data type)."""
    ck = _checkpoint(tmp_path, ["--workers", "2"] if what == "workers-share" else [])
    snap = ck / (ck / "CURRENT").read_text().strip()
    marker = tmp_path / "pwned"
    if what == "snapshot":
        target = snap / "state.bin"
    else:
        files = sorted(p for p in snap.iterdir() if p.name.startswith("F"))
        assert files, sorted(p.name for p in snap.iterdir())
        target = files[0]
    data = {"damaged": target.read_bytes()[:-1] + b"?", "pickle": pickle.dumps(_Touch(marker))}.get(how)
    if how == "function":
        data = _crafted_system_call(marker)
        if what == "workers-share":  # inside the share's framing, where its ranks would be
            magic = b"KMCSHARE1\n"
            blob = dumps_states([(0, 0)])
            data = b"".join([magic, (1).to_bytes(8, "little"), len(blob).to_bytes(8, "little"), blob,
                             len(data).to_bytes(8, "little"), data])  # fmt: skip
        elif what == "frontier":
            data = b"E" + data  # a state blob in the encoding, not packed
    assert data is not None
    target.unlink()  # a hard link: the run's own copy stays as it was
    target.write_bytes(data)
    if how != "damaged":
        doc = json.loads((snap / "snapshot.json").read_text())
        doc["files"][target.name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        (snap / "snapshot.json").write_text(json.dumps(doc))
    why = {
        "damaged": "does not match its checksum",
        "pickle": "not a",
        "function": "which is not a data type",
    }[how]
    _refused(ck, marker, why)


def test_controller_states_round_trip_and_share_their_records() -> None:
    """Controller states come back equal, NamedTuples as their class, enum members as the very
    members, and a record two states share as one object (the back-references)."""
    from model.controller import ControllerConfig, ControllerSystem

    sys_ = ControllerSystem(ControllerConfig())
    s = sys_.init_states()[0]
    states = [s] + [t for _, t in sys_.successors(s)]
    back = codec.decode(codec.encode(states))
    assert back == states and [type(x) for x in back] == [type(x) for x in states]
    assert back[0] is back[0] and all(type(a) is type(b) for a, b in zip(back[0], states[0], strict=True))
    shared = (1, 2)
    a, b = codec.decode(codec.encode([shared, shared]))
    assert a is b
    assert loads_states(dumps_states(states)) == states
    arr = np.arange(5, dtype=np.int64)
    assert (codec.decode(codec.encode({"r": arr}))["r"] == arr).all()
    assert codec.decode(codec.encode(ControllerConfig)) is ControllerConfig  # a class as a value


def test_names_that_are_not_data_are_refused() -> None:
    from explorer.search.codec import UnsafeFileError, find_class

    for mod, name in [("posix", "system"), ("builtins", "eval"), ("model.controller.system", "ControllerSystem"),
                      ("explorer.search.codec", "decode"), ("subprocess", "Popen")]:  # fmt: skip
        with pytest.raises(UnsafeFileError, match=r"not a data type|does not trust|does not exist"):
            find_class(mod, name)
    with pytest.raises(UnsafeFileError, match="does not trust"):
        find_class("antigravity", "x")  # never imported: a file never makes the process import it
    with pytest.raises(codec.NotDataError, match="builtin_function_or_method"):
        codec.encode([os.system])
    with pytest.raises(UnsafeFileError, match="not a kafka-mc data file"):
        codec.decode(pickle.dumps([1, 2]))
    deep = b"\x01" + b"t\x01\x00\x00\x00" * (codec.MAX_DEPTH + 5) + b"N"
    with pytest.raises(UnsafeFileError, match="nested deeper"):
        codec.decode(deep)
    with pytest.raises(UnsafeFileError, match="beyond the end"):
        codec.decode(b"\x01l\xff\xff\xff\x7f")  # two billion items announced, none there


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_any_bytes_decode_to_data_or_one_refusal(data: bytes) -> None:
    """Whatever the bytes, decoding gives a value or an UnsafeFileError: never another
    exception, never a hang."""
    with contextlib.suppress(codec.UnsafeFileError):
        codec.decode(b"\x01" + data)


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: (
        st.lists(inner)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers())
        | st.dictionaries(st.text(), inner)
    ),
    max_leaves=20,
)


@pytest.mark.slow  # over 1.3 CPU-s in the CI of session 17
@settings(max_examples=200, deadline=None)
@given(values)
def test_every_data_value_round_trips(v: object) -> None:
    assert codec.decode(codec.encode(v)) == v
