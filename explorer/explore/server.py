"""The explorer's HTTP server: one page, its static assets and a JSON API over one
:class:`~explorer.explore.session.Session`, safe to run on a shared machine.

Python's own ``http.server`` (:class:`http.server.ThreadingHTTPServer`) serves it: the
explorer needs a dozen routes on 127.0.0.1 and no more, and a web framework would add a
dependency and an attack surface for nothing. The rules (``docs/security.md``, "The
explorer"):

- it binds 127.0.0.1 unless the command line names another ``--host``;
- the ``Host`` header must name this server (``127.0.0.1:PORT``, ``localhost:PORT``,
  ``[::1]:PORT`` or the ``--host`` given, with its port): a page of another site that
  rebinds its DNS name to 127.0.0.1 is refused (403);
- every call but the static assets needs the session's random token
  (:func:`secrets.token_urlsafe`), in the ``X-Token`` header or the ``token`` query
  parameter, compared in constant time (403 otherwise): the URL the command prints holds it;
- it serves its own assets only, from a fixed table read from the package at start (no path
  from a request ever reaches the file system), and reads no file;
- a request line over 8 KB is refused (414), a body over :data:`MAX_BODY` (413) before it is
  read, a body that is no JSON object of bounded depth (400);
- every answer carries ``Content-Security-Policy`` (scripts and styles of its own only),
  ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` (the token stays out
  of any referrer) and ``Cache-Control: no-store``.

Example
-------
>>> from tests.toys import Grid
>>> from explorer.explore.session import Session
>>> srv = make_server(Session(Grid(2), [], model="g", config={}), port=0)
>>> srv.server_address[0], len(srv.token) >= 32
('127.0.0.1', True)
>>> srv.server_close()
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from explorer.datafiles import DataFileError, loads_json
from explorer.explore.find import FindJob, start
from explorer.explore.session import PathError, Session, parse_path

__all__ = ["ASSETS", "MAX_BODY", "ExploreServer", "make_server"]

#: the largest request body read (a POST's JSON); a larger one is refused with 413
MAX_BODY = 64 * 1024
#: the longest request line (method, path and query) accepted; a longer one is refused with 414
MAX_LINE = 8 * 1024
#: the static assets: name -> content type (read from the package's ``static`` folder once)
ASSETS = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
#: walk and budget bounds a request may ask for
MAX_WALK = 10_000


def _assets() -> dict[str, bytes]:
    folder = resources.files("explorer.explore") / "static"
    return {name: (folder / name).read_bytes() for name in ASSETS}


class ExploreServer(ThreadingHTTPServer):
    """The server of one session: its token, the Host names it answers to, its assets and its
    one running search."""

    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, session: Session, host: str, port: int) -> None:
        super().__init__((host, port), _Handler)
        self.session = session
        self.token = secrets.token_urlsafe(32)
        self.assets = _assets()
        port_now = self.server_address[1]
        names = {"127.0.0.1", "localhost", "[::1]", host if ":" not in host else f"[{host}]"}
        self.hosts = {f"{n}:{port_now}" for n in names}
        self.find: FindJob | None = None
        self.find_lock = threading.Lock()

    def url(self, fragment: str = "") -> str:
        """The page's URL with the token (and ``#fragment``)."""
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = "127.0.0.1" if host in ("127.0.0.1", "0.0.0.0") else host
        return f"http://{shown}:{port}/?token={self.token}" + (f"#{fragment}" if fragment else "")


def make_server(session: Session, host: str = "127.0.0.1", port: int = 0) -> ExploreServer:
    """A server of ``session`` bound to ``host:port`` (port 0: a free one), not yet serving
    (``serve_forever`` in a thread, or :func:`explorer.explore.command.explore_main`)."""
    return ExploreServer(session, host, port)


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Handler(BaseHTTPRequestHandler):
    server: ExploreServer
    server_version = "kafka-mc-explore"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal is the user's
        pass

    # -- answers --------------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", _CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, doc: Any, status: int = 200, attach: str | None = None) -> None:
        body = json.dumps(doc, indent=1 if attach else None, default=str).encode()
        extra = {"Content-Disposition": f'attachment; filename="{attach}"'} if attach else None
        self._send(status, body, "application/json", extra)

    def _error(self, status: int, message: str) -> None:
        self._json({"error": message}, status)

    # -- checks ---------------------------------------------------------------------------------

    def _checked(self) -> tuple[str, dict[str, list[str]]]:
        """The route and query of a request that passed the Host check; _Refused otherwise."""
        if len(self.requestline) > MAX_LINE:
            raise _Refused(HTTPStatus.REQUEST_URI_TOO_LONG, "the request line is too long")
        host = self.headers.get("Host", "")
        if host not in self.server.hosts:
            raise _Refused(HTTPStatus.FORBIDDEN, f"Host {host[:60]!r} is not this server's")
        parts = urlsplit(self.path)
        return parts.path, parse_qs(parts.query, keep_blank_values=True, max_num_fields=20)

    def _token_ok(self, query: dict[str, list[str]]) -> bool:
        given = self.headers.get("X-Token") or (query.get("token") or [""])[0]
        return hmac.compare_digest(given.encode(), self.server.token.encode())

    def _body(self) -> dict[str, Any]:
        size_text = self.headers.get("Content-Length", "0")
        if not size_text.isdigit():
            raise _Refused(HTTPStatus.BAD_REQUEST, "Content-Length must be a whole number")
        size = int(size_text)
        if size > MAX_BODY:
            self.close_connection = True
            raise _Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the body is over {MAX_BODY} bytes")
        raw = self.rfile.read(size) if size else b"{}"
        try:
            doc = loads_json(raw.decode("utf-8"), "the request body")
        except (UnicodeDecodeError, DataFileError) as e:
            raise _Refused(HTTPStatus.BAD_REQUEST, f"the body is no JSON object: {e}") from None
        if not isinstance(doc, dict):
            raise _Refused(HTTPStatus.BAD_REQUEST, "the body is no JSON object")
        return doc

    # -- methods --------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        try:
            route, query = self._checked()
            if method == "GET" and route.startswith("/static/"):
                name = route[len("/static/") :]
                if name not in ASSETS or name == "index.html":
                    raise _Refused(HTTPStatus.NOT_FOUND, "no such asset")
                self._send(200, self.server.assets[name], ASSETS[name])
                return
            if not self._token_ok(query):
                raise _Refused(
                    HTTPStatus.FORBIDDEN, "a wrong or missing token: open the URL kafka-mc printed"
                )
            if method == "GET" and route == "/":
                self._send(200, self.server.assets["index.html"], ASSETS["index.html"])
                return
            body = self._body() if method == "POST" else {}
            handler = _ROUTES.get((method, route))
            if handler is None:
                raise _Refused(HTTPStatus.NOT_FOUND, f"no such call: {method} {route[:60]}")
            handler(self, query, body)
        except _Refused as e:
            self._error(e.status, str(e))
        except (PathError, ValueError) as e:
            self._error(HTTPStatus.BAD_REQUEST, str(e).splitlines()[0] if str(e) else type(e).__name__)
        except Exception as e:  # the model's own code raised: one line, the server goes on
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"model error: {type(e).__name__}: {e}"[:300])

    # -- the API --------------------------------------------------------------------------------

    def _api_info(self, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        self._json(self.server.session.info())

    def _api_view(self, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        self._json(self.server.session.view(parse_path(_one(query, "path"))))

    def _api_diff(self, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        path = parse_path(_one(query, "path"))
        a, b = _int(_one(query, "a"), "a"), _int(_one(query, "b"), "b")
        self._json({"a": a, "b": b, "changes": self.server.session.diff(path, a, b)})

    def _api_tracediff(self, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        a, b = parse_path(_one(query, "a")), parse_path(_one(query, "b"))
        self._json(self.server.session.trace_diff(a, b))

    def _api_walk(self, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        path = parse_path(str(body.get("path", "")))
        n = _int(body.get("steps", 10), "steps", 1, MAX_WALK)
        seed = _int(body.get("seed", 0), "seed", -(2**63), 2**63 - 1)
        got = self.server.session.random_walk(path, n, seed)
        self._json({"path": ".".join(map(str, got)), "steps": len(got) - len(path)})

    def _api_find_start(self, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        srv = self.server
        with srv.find_lock:
            if srv.find is not None and not srv.find.done:
                raise _Refused(HTTPStatus.CONFLICT, "a search is already running: cancel it first")
            job = FindJob(
                srv.session,
                parse_path(str(body.get("path", ""))),
                str(body.get("property", "")),
                max_states=_int(body.get("max_states", 100_000), "max_states", 1, 2_000_000),
                max_seconds=_num(body.get("max_seconds", 30), "max_seconds", 0.1, 600),
            )
            srv.session.state(job.path)  # a path that names no state: 400 now, not in the thread
            srv.find = job
            start(job)
        self._json(job.status())

    def _api_find_status(self, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        job = self.server.find
        self._json({"running": False} if job is None else job.status())

    def _api_find_cancel(self, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        job = self.server.find
        if job is not None:
            job.cancel()
        self._json({"cancelled": job is not None})

    def _api_export_trace(self, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        prop = _one(query, "property") or None
        doc = self.server.session.trace_doc(parse_path(_one(query, "path")), prop)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{doc['model']}-{doc['property']}")
        self._json(doc, attach=f"{safe[:100]}.json")

    def _api_export_graph(self, query: dict[str, list[str]], body: dict[str, Any]) -> None:
        self._json(self.server.session.graph(), attach="explored-graph.json")


def _one(query: dict[str, list[str]], key: str) -> str:
    return (query.get(key) or [""])[0]


def _int(v: Any, what: str, lo: int = -(10**7), hi: int = 10**7) -> int:
    """A whole number from a request within ``lo..hi``; ValueError (400) naming it otherwise.

    >>> _int("3", "a"), _int(5, "steps", 1, 10)
    (3, 5)
    >>> _int("x", "a")
    Traceback (most recent call last):
    ...
    ValueError: a: expected a whole number from -10000000 to 10000000, got 'x'
    """
    ok = isinstance(v, int) and not isinstance(v, bool)
    if isinstance(v, str) and v.lstrip("-").isdigit() and len(v) < 25:
        v, ok = int(v), True
    if not ok or not lo <= v <= hi:
        raise ValueError(f"{what}: expected a whole number from {lo} to {hi}, got {str(v)[:30]!r}")
    return int(v)


def _num(v: Any, what: str, lo: float, hi: float) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
        raise ValueError(f"{what}: expected a number from {lo} to {hi}, got {str(v)[:30]!r}")
    return float(v)


_ROUTES = {
    ("GET", "/api/info"): _Handler._api_info,
    ("GET", "/api/view"): _Handler._api_view,
    ("GET", "/api/diff"): _Handler._api_diff,
    ("GET", "/api/tracediff"): _Handler._api_tracediff,
    ("POST", "/api/walk"): _Handler._api_walk,
    ("POST", "/api/find"): _Handler._api_find_start,
    ("GET", "/api/find"): _Handler._api_find_status,
    ("POST", "/api/find/cancel"): _Handler._api_find_cancel,
    ("GET", "/api/export/trace"): _Handler._api_export_trace,
    ("GET", "/api/export/graph"): _Handler._api_export_graph,
}
