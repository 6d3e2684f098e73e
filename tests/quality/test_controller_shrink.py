"""End to end: ``kafka-mc shrink`` turns a long simulated counterexample of a controller
variant into a pasteable pytest test that fails for the right reason.

The variant is ``zk_write_fencing = partition-version`` with ``session_expiry_handling =
queued`` (before KAFKA-6082): a controller whose session expired and reconnected lands a
partition-state write after another broker won a newer controller epoch. A seeded
simulation finds it in a long, noisy walk; the trace file is shrunk by
:func:`explorer.shrink.shrink_main` (what ``kafka-mc shrink`` runs) to bfs's shortest,
and the generated test is run by pytest in a fresh process:

- ``--mode bug`` passes while the bug exists and fails once the configuration is the fixed
  design (``zk_write_fencing = controller-epoch``: the stale write is rejected, so the
  trace no longer replays);
- ``--mode fixed`` fails while the bug exists, saying the property is still violated,
  and passes in the fixed design.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import invariants
from explorer.config import load_config
from explorer.core import config_to_dict
from explorer.engines.simulate import check_simulate
from explorer.shrink import shrink_main
from explorer.tracefile import load_trace, trace_document, write_json_atomic

pytestmark = pytest.mark.quality

ROOT = Path(__file__).resolve().parents[2]
PROPERTY = "zk_writes_fenced"
BUG = {
    "brokers": 2,
    "replication_factor": 2,
    "max_crashes": 1,
    "max_restarts": 1,
    "max_session_expiries": 1,
    "zk_write_fencing": "partition-version",
    "session_expiry_handling": "queued",
}
SEED, WALKS, DEPTH = 7, 500, 200
SIMULATED, SHRUNK, BFS = 22, 13, 13  # pinned, as in test_counterexample_quality.py
GENERATED = "test_controller_zk_writes_fenced_shrunk.py"


def _simulated_trace(path: Path) -> int:
    """Simulate the variant and save the first counterexample as a trace file; its length."""
    if "controller" not in invariants.MODEL_MODULES:
        pytest.skip("model controller is not registered yet")
    spec = invariants.get_model("controller")
    config = load_config(spec.config_cls, values=BUG)
    props = [p for p in spec.properties(config) if p.name == PROPERTY]
    r = check_simulate(spec.build(config), props, seed=SEED, walks=WALKS, depth=DEPTH, deadlock=False)
    v = next(v for v in r.violations if v.property == PROPERTY)
    write_json_atomic(path, trace_document("controller", config_to_dict(config), v))
    return v.length


def _run_pytest(path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", str(path)],
        capture_output=True,
        text=True,
        cwd=path.parent,
        env=env,
        timeout=120,
    )


def _fixed_design(source: str) -> str:
    """The generated module with its configuration switched to the fixed design."""
    out, n = re.subn(r"('zk_write_fencing': )'[A-Za-z_-]+'", r"\1'controller-epoch'", source)
    assert n == 1, "the generated CONFIG has no zk_write_fencing entry"
    return out


def _replay_texts(system: Any, texts: list[str]) -> list[Any]:
    """The states along the action texts (fingerprints ignored); every step must be enabled."""
    states = [system.init_states()[0]]
    for text in texts:
        nxt = [t for a, t in system.successors(states[-1]) if str(a) == text]
        assert nxt, f"not enabled: {text}"
        states.append(nxt[0])
    return states


def _shrink(trace: Path, out_dir: Path, mode: str, capsys: pytest.CaptureFixture[str]) -> str:
    out_dir.mkdir()
    assert shrink_main([str(trace), "--out-dir", str(out_dir), "--mode", mode]) == 0
    return capsys.readouterr().out


def test_shrink_writes_a_test_that_fails_for_the_right_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "controller-zk-writes-fenced.json"
    assert _simulated_trace(trace) == SIMULATED

    printed = _shrink(trace, tmp_path / "bug", "bug", capsys)
    assert printed.splitlines()[0].startswith(f"controller: {PROPERTY}: {SIMULATED} steps -> {SHRUNK} steps")
    shrunk = load_trace(str(tmp_path / "bug" / "controller-zk_writes_fenced-shrunk.json"))
    assert shrunk["property"] == PROPERTY and shrunk["length"] == SHRUNK <= BFS + 1
    # the variant itself is kept: only bounds shrink, never the switches that select the design
    assert shrunk["config"]["zk_write_fencing"] in ("partition-version", "PARTITION_VERSION")
    assert shrunk["config"]["session_expiry_handling"] in ("queued", "QUEUED")

    bug = tmp_path / "bug" / GENERATED
    source = bug.read_text()
    # it checks the named property (a transition property) on the trace's last step
    assert f"PROPERTY = {PROPERTY!r}" in source and "def test_zk_writes_fenced_is_violated():" in source
    assert "props[PROPERTY].check(prev, a, t)" in source and 'STEPS[-1]["action"]' in source
    p = _run_pytest(bug)  # the plain replay and the replay through Hypothesis
    assert p.returncode == 0 and "2 passed" in p.stdout, p.stdout + p.stderr

    # the fixed design: the stale controller's write no longer lands, so the test fails
    fixed_design = tmp_path / "bug" / "test_fixed_design.py"
    fixed_design.write_text(_fixed_design(source))
    p = _run_pytest(fixed_design)
    assert p.returncode == 1 and "2 failed" in p.stdout, p.stdout + p.stderr
    assert "ReplayError" in p.stdout or "the bug is gone" in p.stdout, p.stdout
    # and for the right reason: the same interleaving (by action text; the states differ, so
    # the fingerprints do) runs in the fixed design, and the property holds at its last step
    ns: dict[str, Any] = {}
    exec(compile(fixed_design.read_text(), str(fixed_design), "exec"), ns)
    system, props = ns["build"]()
    states = _replay_texts(system, [st["action"] for st in ns["STEPS"][1:]])
    assert not ns["violated_at_end"](system, props, states)

    # --mode fixed: the regression test to keep after the fix fails while the bug exists
    _shrink(trace, tmp_path / "fixed", "fixed", capsys)
    regression = tmp_path / "fixed" / GENERATED
    p = _run_pytest(regression)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"{PROPERTY} is still violated after the {SHRUNK}-step trace" in p.stdout, p.stdout
    after_fix = tmp_path / "fixed" / "test_after_fix.py"  # a new file: no stale bytecode
    after_fix.write_text(_fixed_design(regression.read_text()))
    p = _run_pytest(after_fix)
    assert p.returncode == 0 and "2 passed" in p.stdout, p.stdout + p.stderr
