"""The explorer's HTTP API on its own (issue 57): an in-process server on a free port of
127.0.0.1, over a small model, asked as a browser (or an attacker on the same machine) would.

The guards: a foreign Host header (DNS rebinding), a missing or wrong token, a path out of the
static assets (traversal), a huge request line or body, an unknown action index, a bad JSON
body; and the calls the page makes: a view with its verdicts, explanation and diff, a random
walk, "find from here" (found, none, cancel), a diff of two steps and of two paths, and the
exports (a trace file that ``kafka-mc replay`` accepts, the explored graph).
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.config import load_config
from explorer.core import config_to_dict
from explorer.explore.command import build_parser, load_session
from explorer.explore.server import MAX_BODY, ExploreServer, make_server
from explorer.explore.session import Session
from explorer.frontend import UsageError, model_spec

ROOT = Path(__file__).resolve().parents[1]


def _controller_small(**overrides: Any) -> Session:
    spec = model_spec("controller")
    sets = [f"{k}={v}" for k, v in overrides.items()]
    config = load_config(spec.config_cls, str(ROOT / "configs" / "controller-small.toml"), sets)
    return Session(
        spec.build(config), spec.properties(config), model="controller", config=config_to_dict(config)
    )


@pytest.fixture(scope="module")
def server() -> Iterator[ExploreServer]:
    srv = make_server(_controller_small(mutant="leader-outside-isr"), port=0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _ask(
    srv: ExploreServer,
    method: str,
    route: str,
    body: Any = None,
    *,
    token: str | None = "",
    host: str | None = None,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any, dict[str, str]]:
    port = srv.server_address[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    hdrs = {"Host": host or f"127.0.0.1:{port}", **(headers or {})}
    if token is not None:
        hdrs["X-Token"] = token or srv.token
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    if data is not None:
        hdrs["Content-Type"] = "application/json"
    conn.request(method, route, body=data, headers=hdrs)
    res = conn.getresponse()
    payload = res.read()
    conn.close()
    try:
        doc: Any = json.loads(payload)
    except ValueError:
        doc = payload
    return res.status, doc, {k.lower(): v for k, v in res.getheaders()}


def test_the_guards_refuse_foreign_hosts_bad_tokens_traversal_and_huge_requests(
    server: ExploreServer,
) -> None:
    assert _ask(server, "GET", "/api/info", host="evil.example:80")[0] == 403  # DNS rebinding
    assert _ask(server, "GET", "/api/info", host=f"evil.example:{server.server_address[1]}")[0] == 403
    assert _ask(server, "GET", "/api/info", token=None)[0] == 403
    assert _ask(server, "GET", "/api/info", token="x" + server.token)[0] == 403
    assert _ask(server, "GET", "/", token=None)[0] == 403  # the page too, without its token
    assert _ask(server, "GET", f"/?token={server.token}", token=None)[0] == 200
    assert _ask(server, "POST", "/api/walk", {"path": "0", "steps": 1}, token="wrong")[0] == 403
    for bad in (
        "/static/../server.py",
        "/static/%2e%2e/server.py",
        "/static/session.py",
        "/static/",
        "/etc/passwd",
    ):
        assert _ask(server, "GET", bad)[0] == 404, bad
    status, body, headers = _ask(server, "GET", "/static/app.js", token=None)  # its own assets: no token
    assert status == 200 and b"textContent" in body
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["referrer-policy"] == "no-referrer" and headers["x-content-type-options"] == "nosniff"
    assert _ask(server, "GET", "/api/view?path=" + "0." * 6000 + "0")[0] == 414
    assert _ask(server, "POST", "/api/walk", raw=b"{" + b" " * (MAX_BODY + 1) + b"}")[0] == 413
    assert _ask(server, "POST", "/api/walk", raw=b"[" * 100 + b"]" * 100)[0] == 400  # too deep
    assert _ask(server, "POST", "/api/walk", raw=b"\xff\xfe")[0] == 400
    assert _ask(server, "PUT", "/api/info")[0] == 501
    assert _ask(server, "GET", "/api/nothing")[0] == 404


def test_unknown_action_indices_and_bad_numbers_are_one_line_400s(server: ExploreServer) -> None:
    status, body, _ = _ask(server, "GET", "/api/view?path=0.99")
    assert status == 400 and body["error"].startswith("step 1: no action 99 (")
    assert _ask(server, "GET", "/api/view?path=3")[1]["error"].startswith("step 0: no initial state 3")
    assert _ask(server, "GET", "/api/view?path=0.-1")[0] == 400
    assert _ask(server, "GET", "/api/diff?path=0.0&a=0&b=5")[1]["error"].startswith("step 5 is out of range")
    assert _ask(server, "POST", "/api/walk", {"path": "0", "steps": 10**9})[0] == 400
    assert _ask(server, "POST", "/api/find", {"path": "0", "property": "nope"})[0] == 400
    assert (
        _ask(server, "POST", "/api/find", {"path": "0", "property": "leader_in_isr", "max_states": 10**12})[0]
        == 400
    )


def test_a_view_shows_state_changes_actions_and_verdicts(server: ExploreServer) -> None:
    status, info, _ = _ask(server, "GET", "/api/info")
    assert status == 200 and info["model"] == "controller" and info["inits"] == 1
    v0 = _ask(server, "GET", "/api/view?path=0")[1]
    texts = [a["text"] for a in v0["actions"]]
    assert "broker 1: crashes" in texts and {a["actor"] for a in v0["actions"]} >= {"broker 0", "broker 1"}
    crash = texts.index("broker 1: crashes")
    assert any("alive" in c or "/brokers/ids/1" in c for c in v0["actions"][crash]["changes"])  # its preview
    v1 = _ask(server, "GET", f"/api/view?path=0.{v0['actions'][crash]['index']}")[1]
    assert v1["steps"]["rows"][1]["action"] == "broker 1: crashes"
    assert v1["state"]["inner"]  # something changed below the root, and is marked
    assert {p["verdict"] for p in v1["properties"]} <= {"holds", "here", "not here", "fails"}
    assert "<svg" in v1["sequence"]["svg"]


def test_find_walk_diff_and_export_a_trace_replay_accepts(
    server: ExploreServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, job, _ = _ask(server, "POST", "/api/find", {"path": "0", "property": "leader_in_isr"})
    assert status == 200
    for _ in range(200):
        job = _ask(server, "GET", "/api/find")[1]
        if not job["running"]:
            break
        threading.Event().wait(0.02)
    assert job["found"]["steps"] == 6, job  # the shortest counterexample, as `check` finds it
    path = job["found"]["path"]
    v = _ask(server, "GET", f"/api/view?path={path}")[1]
    failing = [p for p in v["properties"] if p["verdict"] == "fails"]
    assert failing[0]["name"] == "leader_in_isr" and "ISR" in " ".join(failing[0]["why"])
    status, doc, headers = _ask(server, "GET", f"/api/export/trace?path={path}")
    assert status == 200 and "attachment" in headers["content-disposition"]
    assert doc["property"] == "leader_in_isr" and len(doc["steps"]) == 7
    (tmp_path / "t.json").write_text(json.dumps(doc))
    assert main(["replay", str(tmp_path / "t.json")]) == 0
    assert "violation reproduced" in capsys.readouterr().out
    d = _ask(server, "GET", f"/api/diff?path={path}&a=0&b=6")[1]
    assert d["changes"] and all(isinstance(c, str) for c in d["changes"])
    walked = _ask(server, "POST", "/api/walk", {"path": "0", "steps": 5, "seed": 3})[1]
    again = _ask(server, "POST", "/api/walk", {"path": "0", "steps": 5, "seed": 3})[1]
    assert walked == again and walked["path"].startswith("0.")
    td = _ask(server, "GET", f"/api/tracediff?a={path}&b={walked['path']}")[1]
    assert td["rows"][0]["same"] and td["parted"] is not None
    graph = _ask(server, "GET", "/api/export/graph")[1]
    assert graph["nodes"] and graph["edges"] and {"from", "to", "action"} <= set(graph["edges"][0])


def test_find_reports_none_and_cancel(server: ExploreServer) -> None:
    _ask(server, "POST", "/api/find", {"path": "0", "property": "one_controller_per_epoch"})
    for _ in range(200):
        job = _ask(server, "GET", "/api/find")[1]
        if not job["running"]:
            break
        threading.Event().wait(0.02)
    assert "is reachable from here" in job["none"]
    assert _ask(server, "POST", "/api/find/cancel", {})[0] == 200  # nothing running: harmless


def test_the_command_line_opens_a_model_or_a_trace_and_refuses_bad_input(tmp_path: Path) -> None:
    def session(*argv: str) -> tuple[Session, str]:
        return load_session(build_parser().parse_args(list(argv)))

    s, what = session("controller", "--config", str(ROOT / "configs" / "controller-small.toml"))
    assert s.model == "controller" and "controller-small" in what
    with pytest.raises(UsageError, match="unknown model"):
        session("controler")
    with pytest.raises(UsageError, match="no such file"):
        session(str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text('{"schema": "other"}')
    with pytest.raises(UsageError, match="schema"):
        session(str(tmp_path / "bad.json"))
    with pytest.raises(UsageError, match="--system"):  # a file names its system, never loads it
        (tmp_path / "sys.json").write_text(
            json.dumps(
                {
                    "schema": "kafka-mc/trace/1",
                    "model": "m:f",
                    "system": "m:f",
                    "property": "p",
                    "kind": "always",
                    "length": 0,
                    "steps": [{"fingerprint": "0"}],
                }
            )
        )
        session(str(tmp_path / "sys.json"))
    with pytest.raises(UsageError, match="--port"):
        build_parser().parse_args(["controller", "--port", "70000"])
