"""``kafka-mc shrink`` of a liveness counterexample, a lasso (issue 58, item 2): its prefix and its
loop shortened by delta debugging, every candidate checked whole as ``kafka-mc replay`` checks a
lasso (explorer/search/lasso_shrink.py); the trace file, the pytest module and the report mark
the prefix and the loop."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.encoding import fingerprint
from explorer.report.page import _violation
from explorer.search.lasso_shrink import lasso_holds, shrink_lasso
from explorer.shrink import shrink_main
from tests.toys import Requests

SYSTEM = "tests.toys:requests"


def _fp(s: Any) -> str:
    return f"{fingerprint(s):016x}"


def _trace(tmp_path: Path, actions: list[str], loop_start: int | None) -> Path:
    """A trace file of ``tests.toys:requests`` (fair=false) with ``actions`` and ``loop_start``,
    its fingerprints those of the replayed states, its header the one ``check --save-traces``
    writes."""
    out = tmp_path / "found"
    assert (
        main(["check", "--system", SYSTEM, "--set", "fair=false", "--save-traces", str(out), "--quiet"]) == 1
    )
    path = next(out.glob("*.json"))
    doc = json.loads(path.read_text())
    system = Requests(False)
    states = [system.init_states()[0]]
    for a in actions:
        states.append(next(t for b, t in system.successors(states[-1]) if b == a))
    doc["steps"] = [{"action": None, "fingerprint": _fp(states[0]), "index": 0, "state": None, "changes": []}]
    doc["steps"] += [
        {"action": a, "fingerprint": _fp(s), "index": i, "state": None, "changes": []}
        for i, (a, s) in enumerate(zip(actions, states[1:], strict=True), 1)
    ]
    doc["length"], doc["loop_start"] = len(actions), loop_start
    padded = tmp_path / "padded.json"
    padded.write_text(json.dumps(doc))
    return padded


def test_shrink_shortens_the_prefix_and_the_loop_of_a_lasso(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a request served, another made, then two polls back to the pending state: 5 steps
    path = _trace(tmp_path, ["request", "serve", "request", "poll", "poll"], 3)
    out_dir = tmp_path / "out"
    assert shrink_main([str(path), "--system", SYSTEM, "--out-dir", str(out_dir)]) == 0
    printed = capsys.readouterr().out
    assert "served: 5 steps -> 2 steps" in printed
    assert "a prefix of 1 steps, then a loop of 1 steps repeated forever" in printed
    assert "<- the loop starts here" in printed
    shrunk = next(out_dir.glob("*-shrunk.json"))
    doc = json.loads(shrunk.read_text())
    assert ([s["action"] for s in doc["steps"]], doc["loop_start"]) == ([None, "request", "poll"], 1)
    # replay checks the shrunk lasso whole
    assert main(["replay", str(shrunk), "--system", SYSTEM]) == 0
    assert "the loop is weakly fair" in capsys.readouterr().out
    # the pytest module (bug mode) passes on it
    test_file = next(out_dir.glob("test_*_shrunk.py"))
    spec = importlib.util.spec_from_file_location("lasso_shrunk_module", test_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.test_served_is_violated()
    assert module.LOOP_START == 1


def test_shrink_refuses_a_trace_that_is_not_a_lasso_counterexample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the loop from step 1 (pending) ends served: it does not close, and Q holds in it
    path = _trace(tmp_path, ["request", "poll", "serve"], 1)
    assert shrink_main([str(path), "--system", SYSTEM, "--out-dir", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the lasso does not replay to a violation" in err[0]


def test_a_shorter_loop_must_stay_weakly_fair() -> None:
    """Under weak fairness of ``serve`` a loop of polls starves it, so the shrinker can never keep
    such a loop; without fairness it is a counterexample."""
    fair = Requests(True)
    prop = fair.properties()[0]
    assert lasso_holds(fair, prop, ["request"], ["poll"]) is None  # serve starved
    unfair = Requests(False)
    assert lasso_holds(unfair, unfair.properties()[0], ["request"], ["poll"]) is not None


def test_a_controller_lasso_padded_with_loop_turns_shrinks_back() -> None:
    """The bfs lasso of isr_change_eventually_propagated on ctl-watch-not-rearmed (15 steps, the
    loop from step 14), its loop turned three times more, shrinks back to the bfs lasso."""
    from explorer.config import load_config
    from explorer.engines.bfs import check_bfs
    from invariants import controller as spec
    from invariants.mutants.controller import ControllerConfig

    c = load_config(
        ControllerConfig,
        "configs/controller-small.toml",
        ["liveness=true", "max_session_expiries=1", "mutant=ctl-watch-not-rearmed"],
    )
    props = [p for p in spec.properties(c) if p.name == "isr_change_eventually_propagated"]
    system = spec.build(c)
    v = check_bfs(system, props, model="controller", config=c).violations[0]
    assert v.loop_start is not None
    acts = [str(st.action) for st in v.trace[1:]]
    prefix, loop = acts[: v.loop_start], acts[v.loop_start :]
    padded = [*prefix, *loop, *loop, *loop, *loop]
    got = shrink_lasso(system, props[0], padded, v.loop_start)
    assert (got.actions, got.loop_start) == (acts, v.loop_start)
    assert len(padded) > len(acts)


def test_the_report_marks_the_prefix_and_the_loop() -> None:
    v = {
        "property": "served",
        "kind": "eventually",
        "doc": "a pending request is eventually served",
        "message": "",
        "length": 2,
        "loop_start": 1,
        "trace": [
            {"index": i, "action": a, "fingerprint": f"{i:016x}", "changes": []}
            for i, a in enumerate([None, "request", "poll"])
        ],
    }
    page = _violation(v)
    assert "steps 0 to 1 are the prefix" in page and "returns to the state of step 1" in page
    rows = page.split("<tr")[1:]
    assert [r.split(">", 1)[0] for r in rows[1:]] == ["", ' class="loopstart"', ' class="loop"']
