"""What an entry's page gives a person to act on: its configuration as TOML to paste back, and
for each counterexample the commands that replay, show and shrink it.

A release saves each counterexample in its run folder (``traces/<entry>--<property>.json``,
:mod:`explorer.run_traces`) and records the file's place in ``report.json``
(``violations[].trace_file``, relative to the run folder); the page names it as the release
was run (``<report dir>/<run id>/traces/...``) and links it. Every value is escaped.

Example
-------
>>> print(config_html({"config_toml": 'start = "cold"'}))
<details><summary>configuration (TOML: paste it into a file for <code>--config</code>, or a line into <code>--set</code>)</summary><pre>start = &quot;cold&quot;</pre></details>
"""

from __future__ import annotations

import html as _html
from typing import Any

from explorer.run_traces import trace_commands

__all__ = ["commands_html", "config_html"]


def _e(x: Any) -> str:
    return _html.escape(str(x), quote=True)


def config_html(en: dict[str, Any]) -> str:
    """An entry's configuration as TOML (``config_toml``, written by the release), folded; ""
    for a report older than the field."""
    text = en.get("config_toml")
    if not isinstance(text, str) or not text:
        return ""
    return (
        "<details><summary>configuration (TOML: paste it into a file for <code>--config</code>, "
        f"or a line into <code>--set</code>)</summary><pre>{_e(text)}</pre></details>"
    )


def commands_html(v: dict[str, Any], run_dir: str | None) -> str:
    """The commands that open a counterexample saved in the run folder (``v["trace_file"]``),
    spelled from the folder the release was run in (``run_dir``: ``<report dir>/<run id>``),
    with a link to the file; "" when none was saved.

    >>> out = commands_html({"trace_file": "traces/e--p.json"}, "reports/r1")
    >>> 'href="../traces/e--p.json"' in out, "kafka-mc replay reports/r1/traces/e--p.json --state -1" in out
    (True, True)
    >>> commands_html({"trace_file": "../../etc/passwd"}, "r")
    ''
    """
    rel = v.get("trace_file")
    if not isinstance(rel, str) or not rel.startswith("traces/") or "/" in rel[7:] or ".." in rel:
        return ""
    path = f"{run_dir}/{rel}" if run_dir else rel
    rows = "".join(
        f"<li><code>{_e(cmd)}</code> <span class=muted>{_e(what)}</span></li>"
        for cmd, what in trace_commands(path)
    )
    return (
        f'<p>Saved as <a href="../{_e(rel)}"><code>{_e(rel)}</code></a> in the run folder; from the folder the '
        f"release ran in:</p><ul class=commands>{rows}</ul>"
    )
