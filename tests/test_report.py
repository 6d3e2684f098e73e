"""The release report rendered from a real run: content, JUnit XML, and a real browser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.cli import main

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
[[check]]
name = "timing-wheel-small"
model = "timing-wheel"
config = "{root}/configs/timing-wheel-small.toml"
expect = "hold"

[[check]]
name = "stw-small"
model = "simple-timing-wheel"
config = "{root}/configs/simple-timing-wheel-small.toml"
expect = "violation"
violates = ["no_task_lost", "lateness_bounded", "deadlock", "graceful_stop_waits",
            "task_count_consistent", "stop_terminates_trigger"]

[[check]]
name = "purgatory-small-wrong-expectation"
model = "purgatory"
config = "{root}/configs/purgatory-small.toml"
set = ["mutant=no_cas"]
expect = "hold"

[[check]]
name = "controller-small"
model = "controller"
config = "{root}/configs/controller-small.toml"
expect = "hold"
require_actions = ["ProcessEvent", "ZkServe", "Deliver", "Crash", "SessionExpire", "ShrinkIsr"]
require_transitions = ["partition/OfflinePartition->OnlinePartition", "replica/OnlineReplica->OfflineReplica"]
require_labels = ["elections/offline/isr", "zk_writes//controller_epoch/changed"]
require_witnesses = true

[[check]]
name = "controller-leader-outside-isr"
model = "controller"
config = "{root}/configs/controller-small.toml"
set = ["mutant=leader-outside-isr"]
expect = "violation"
violates = ["leader_in_isr", "isr_nonempty_subset"]
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("release")
    suite = d / "suite.toml"
    suite.write_text(SUITE.format(root=ROOT))
    code = main(["release", "--suite", str(suite), "--report-dir", str(d / "reports"), "--quiet"])
    assert code == 1  # the third entry's mutant violates a property it expects to hold
    return d / "reports" / "latest"


def test_report_files_and_content(report: Path) -> None:
    html = (report / "index.html").read_text()
    assert (
        html.startswith("<!DOCTYPE html>") and "<script" not in html and "http" not in html.split("<body>")[0]
    )
    # summary rows with verdicts
    names = ("timing-wheel-small", "stw-small", "purgatory-small-wrong-expectation", "controller-small")
    for name in names:
        assert f'href="entries/{name}.html"' in html and (report / "entries" / f"{name}.html").is_file()
    # each verdict shows in the summary table, the one failure also in "what did not pass" with its
    # reason; every entry's page says its own verdict and links back
    assert html.count(">PASS<") == 4 and html.count(">FAIL<") == 2
    assert "<h2>What did not pass</h2>" in html and "on_complete_at_most_once" in html
    for name in names:
        page = _section(report, name)
        assert page.count(">PASS<") + page.count(">FAIL<") == 1 and 'href="../index.html"' in page
    # property table, a counterexample step table with its changes, the level chart
    stw = _section(report, "stw-small")
    assert "<code>no_early_fire</code>" in _section(report, "timing-wheel-small") and "held" in stw
    assert "on_complete_at_most_once (always)" in _section(report, "purgatory-small-wrong-expectation")
    assert "what changed" in stw and "<ul class=changes><li>" in stw
    assert "new states per BFS level" in stw
    # a violation in the suite's table links to its counterexample on the entry's page
    assert 'href="entries/controller-leader-outside-isr.html#cx-leader_in_isr"' in html
    mut = _section(report, "controller-leader-outside-isr")
    assert "<details class=counterexample id=cx-leader_in_isr>" in mut


def _section(report: Path, name: str) -> str:
    """An entry's page in the run folder."""
    return (report / "entries" / f"{name}.html").read_text()


def _all_pages(report: Path) -> str:
    """The run's page and every entry's page, one after the other."""
    return "\n".join(p.read_text() for p in [report / "index.html", *sorted((report / "entries").iterdir())])


def test_report_controller_coverage(report: Path) -> None:
    """Both state-machine diagrams with covered and uncovered edges, elections, ZooKeeper
    paths, requirements, variants and the suite's totals, from a real controller run."""
    html = (report / "index.html").read_text()
    ctl = _section(report, "controller-small")
    assert "PartitionStateMachine: 1/8 transitions taken" in ctl
    assert "ReplicaStateMachine: 2/14 transitions taken" in ctl
    assert '<g class="edge covered" data-edge="OfflinePartition->OnlinePartition" data-hits="3">' in ctl
    assert '<g class="edge uncovered" data-edge="NewPartition->OnlinePartition" data-hits="0">' in ctl
    assert '<g class="edge covered" data-edge="OnlineReplica->OfflineReplica"' in ctl
    assert ctl.count('class="edge uncovered"') == 7 + 12 and "No invalid transition was attempted." in ctl
    assert (
        "<h4>Election outcomes per strategy</h4>" in ctl
        and "<code>offline</code></td><td class=num>3</td>" in ctl
    )
    assert (
        "<h4>ZooKeeper paths written</h4>" in ctl
        and "<code>/brokers/topics/0/partitions/0/state</code>" in ctl
    )
    assert "<h3>Coverage requirements</h3>" in ctl and ctl.count('<td class="met">met</td>') == 4
    assert "<code>zk_write_fencing = &quot;controller-epoch&quot;</code>" in ctl  # as TOML spells it
    assert "non-vacuous" in ctl and "13 states" not in ctl and "74 states" in ctl
    # the suite: totals and the diagrams over every controller entry, variants run
    suite = html[html.index("<h2>Suite coverage</h2>") : html.index("<h2>Properties over the suite</h2>")]
    assert "total time <b>" in suite and "partition state machine: <b>1/8</b>" in suite
    assert (
        suite.count("<svg") == 2
        and "<td><code>controller.mutant</code></td><td>leader-outside-isr, none</td>" in suite
    )
    doc = json.loads((report / "report.json").read_text())
    assert doc["schema"] == "kafka-mc/release-report/2"
    assert doc["summary"]["state_machines"]["partition"]["covered"] == 1
    assert doc["summary"]["state_machines"]["replica"]["edges"] == 14
    entry = next(e for e in doc["entries"] if e["name"] == "controller-small")
    labels = entry["result"]["coverage"]["labels"]
    assert labels["state_machines"]["partition"]["OfflinePartition->OnlinePartition"] == 3
    assert entry["variants"]["elector"] == "modern" and all(q["met"] for q in entry["requirements"])


def test_report_counterexample_sequence_and_step_table(report: Path) -> None:
    """A controller counterexample: a sequence diagram with ZooKeeper and broker lifelines,
    and a step table whose columns split the changes by ZooKeeper and broker."""
    mut = _section(report, "controller-leader-outside-isr")
    assert "<summary>Sequence diagram (6 steps)</summary>" in mut
    seq = mut[mut.index("<summary>Sequence diagram (6 steps)</summary>") :]
    seq = seq[: seq.index("</svg>")]
    assert seq.count('class="lifeline"') == 3 and seq.count('class="msg"') == 6
    assert ">ZooKeeper</text>" in seq and ">broker 1</text>" in seq
    assert "<title>step 1: crashes</title>" in seq and "write partition states" in seq
    assert "<th>ZooKeeper</th><th>broker 0</th><th>broker 1</th><th>other changes</th>" in mut
    # what changed in ZooKeeper, named by its znode (the model's report_layout names)
    assert "<li>/brokers/topics/0/partitions/0/state isr: (0, 1) -&gt; (1,)</li>" in mut
    assert "<li>ctx.rstates[0][1]: OnlineReplica -&gt; OfflineReplica</li>" in mut  # the controller's view
    doc = json.loads((report / "report.json").read_text())
    entry = next(e for e in doc["entries"] if e["name"] == "controller-leader-outside-isr")
    v = entry["result"]["violations"][0]
    assert v["sequence"][0] == ["broker 1", "broker 1", "crashes"] and len(v["sequence"]) == v["length"]
    # the timing wheel's threads: one "what changed" column and a lifeline per thread (the caller
    # and the trigger), never a single "system" one
    stw = _section(report, "stw-small")
    assert "<th>what changed</th>" in stw and ">system</text>" not in stw
    assert ">caller</text>" in stw and ">trigger</text>" in stw
    stw_v = next(e for e in doc["entries"] if e["name"] == "stw-small")["result"]["violations"]
    assert all({a for a, _, _ in v["sequence"]} <= {"caller", "trigger"} for v in stw_v)


def test_junit_is_valid_xml_with_one_case_per_property(report: Path) -> None:
    root = ET.parse(report / "junit.xml").getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {
        "timing-wheel-small",
        "stw-small",
        "purgatory-small-wrong-expectation",
        "controller-small",
        "controller-leader-outside-isr",
    }
    assert suites["timing-wheel-small"].get("failures") == "0"
    assert suites["stw-small"].get("failures") == "0"  # the violations were expected
    bad = suites["purgatory-small-wrong-expectation"]
    failed = {c.get("name") for c in bad.iter("testcase") if c.find("failure") is not None}
    assert failed == {"search", "on_complete_at_most_once"}
    assert int(bad.get("tests")) == len(list(bad.iter("testcase")))


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


#: run in each page (a copy: the report itself holds no script) after it loads: the page's height
#: and width with every ``<details>`` closed, then, every one opened, each SVG text that leaves
#: its SVG, each state-machine edge label that overlaps another or a state's box, and the width
#: of three CJK characters at 40 px against three characters no font has
_PAGE_CHECK = """(function(){
  const r = {height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth};
  document.querySelectorAll('details').forEach(d => d.open = true);
  r.overflow = [];
  document.querySelectorAll('svg').forEach((svg, i) => {
    const b = svg.getBoundingClientRect();
    svg.querySelectorAll('text').forEach(t => {
      const c = t.getBoundingClientRect();
      if (c.width > 0 && (c.left < b.left - 1 || c.right > b.right + 1 || c.top < b.top - 1
          || c.bottom > b.bottom + 1)) r.overflow.push([i, t.textContent.slice(0, 80)]);
    });
  });
  r.overlap = [];
  const meets = (p, q) => p.left < q.right - 0.5 && q.left < p.right - 0.5 && p.top < q.bottom - 0.5
    && q.top < p.bottom - 0.5;
  document.querySelectorAll('svg').forEach((svg, i) => {
    const labels = [...svg.querySelectorAll('g.edge text')].map(t => [t.textContent, t.getBoundingClientRect()]);
    const states = [...svg.querySelectorAll('g.node rect')].map(x => x.getBoundingClientRect());
    labels.forEach(([a, p], k) => {
      labels.slice(k + 1).forEach(([b, q]) => { if (meets(p, q)) r.overlap.push([i, a, b]); });
      states.forEach(q => { if (meets(p, q)) r.overlap.push([i, a, 'a state']); });
    });
  });
  const width = (txt) => { const s = document.createElement('span'); s.textContent = txt;
    s.style.fontSize = '40px'; document.body.appendChild(s); const w = s.getBoundingClientRect().width;
    s.remove(); return w; };
  r.cjk = width('\u4e2d\u6587\u5b57'); r.missing = width('\ue000\ue001\ue002');
  const pre = document.createElement('pre'); pre.id = 'kafka-mc-check'; pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
})();"""


def _browser_args(browser: str, profile: Path) -> list[str]:
    return [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1400,1000",
    ]


def _checked_in_browser(browser: str, page: Path, profile: Path) -> dict[str, Any]:
    """What :data:`_PAGE_CHECK` measures in ``page`` (a copy of it with the script added)."""
    probe = page.with_name(page.stem + ".probe.html")
    probe.write_text(page.read_text().replace("</body>", f"<script>{_PAGE_CHECK}</script></body>"))
    args = [*_browser_args(browser, profile), "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    probe.unlink()
    assert p.returncode == 0, p.stderr[-2000:]
    import html as _html
    import re

    m = re.search(r'<pre id="kafka-mc-check">(.*?)</pre>', p.stdout)
    assert m is not None, p.stdout[-2000:]
    return json.loads(_html.unescape(m.group(1)))


def _anchors_resolve(run: Path) -> list[str]:
    """Every link of every page of the run folder that leads nowhere: a file that is not there,
    an ``#id`` its page lacks, or a link out of the folder."""
    import re

    bad = []
    pages = [run / "index.html", *sorted((run / "entries").glob("*.html"))]
    ids = {pg.resolve(): set(re.findall(r'\sid="?([^"\s>]+)', pg.read_text())) for pg in pages}
    for pg in pages:
        for href in re.findall(r'href="([^"]*)"', pg.read_text()):
            target, _, frag = href.partition("#")
            dest = (pg.parent / target).resolve() if target else pg.resolve()
            if ":" in target or not dest.is_relative_to(run.resolve()) or not dest.is_file():
                bad.append(f"{pg.name}: {href}")
            elif frag and frag not in ids.get(dest, set()):
                bad.append(f"{pg.name}: {href} (no id {frag})")
    return bad


def _cjk_font_installed() -> bool:
    fc = shutil.which("fc-list")
    if fc is None:
        return False
    p = subprocess.run([fc, ":lang=zh", "family"], capture_output=True, text=True, timeout=30)
    return bool(p.stdout.strip())


@pytest.mark.slow  # about 3 CPU-s (a browser)
def test_report_checked_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    """Debian's headless Chromium opens the run's page and entry pages: no console error, no SVG
    text outside its SVG with every ``<details>`` open, the run's page under 8,000 px tall at
    1,400 px (details closed), CJK seed quotes drawn with a real font (a CJK character a full em
    wide, unlike a glyph no font has), and every link of the run folder resolves inside it."""
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have chromium (.ci/run installs Debian's package)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    run = tmp_path / "run"
    shutil.copytree(report.resolve(), run)
    assert _anchors_resolve(run) == []
    # the screenshot, and no console error, on the run's page
    shot = tmp_path / "screenshot-release.png"
    args = [*_browser_args(browser, tmp_path / "profile"), "--enable-logging=stderr", "--v=0"]
    p = subprocess.run([*args, f"--screenshot={shot}", (run / "index.html").as_uri()],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    assert [ln for ln in p.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln] == []
    assert shot.exists() and shot.stat().st_size > 10_000
    cjk = _cjk_font_installed()
    if not cjk and os.environ.get("CI"):
        pytest.fail("CI must have a CJK font (.ci/run installs Debian's fonts-wqy-microhei)")
    pages = ["index.html", "entries/stw-small.html", "entries/controller-leader-outside-isr.html"]
    for rel in pages:
        got = _checked_in_browser(browser, run / rel, tmp_path / "profile")
        assert got["overflow"] == [], (rel, got["overflow"][:5])
        assert got["overlap"] == [], (rel, got["overlap"][:5])
        assert got["width"] <= 1_400, (rel, got["width"])  # readable at 1,400 px: nothing runs off
        if rel == "index.html":
            assert 1_000 < got["height"] < 8_000, got
        if cjk:
            assert abs(got["cjk"] - 120) < 6 and abs(got["cjk"] - got["missing"]) > 10, (rel, got)
    # the checks can fail: a clipped label and links to nowhere are caught
    bad = run / "entries" / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><svg width="40" height="20"><text x="2" y="14">a clipped label'
                   '</text></svg><a href="gone.html">x</a><a href="#nowhere">y</a></body></html>')  # fmt: skip
    assert _checked_in_browser(browser, bad, tmp_path / "profile")["overflow"] == [[0, "a clipped label"]]
    assert _anchors_resolve(run) == ["bad.html: gone.html", "bad.html: #nowhere (no id nowhere)"]
    # the controller's machines with every edge taken millions of times and invalid attempts: the
    # labels of the densest diagrams (two overlapped here before they were placed apart)
    from explorer.report.layout import positions
    from explorer.report.svg import state_machine_svg
    from model.controller.coverage import report_layout, state_machine_graphs

    lay = report_layout()
    invalid = {
        "OnlineReplica->NewReplica": 7,
        "OfflineReplica->NewReplica": 30,
        "NewReplica->ReplicaDeletionStarted": 5,
    }
    svgs = "".join(
        state_machine_svg(m, {f"{u}->{v}": 12_345_678 for u, v in g.edges}, invalid if m == "replica" else None, m,
                          positions(m, lay))
        for m, g in state_machine_graphs().items()
    )  # fmt: skip
    dense = run / "entries" / "dense.html"
    dense.write_text(f"<!DOCTYPE html><html><body>{svgs}</body></html>")
    assert _checked_in_browser(browser, dense, tmp_path / "profile")["overlap"] == []
    # the suite's property table at the whole suite's size (45 entries of one model, 52 properties
    # with long names): within 1,400 px (it was 3,154 px wide with words in its cells)
    from explorer.report.page import _head, property_matrix

    props = {f"a_property_named_at_length_{i:02d}_{'x' * (i % 20)}": {"kind": "always", "status": "held"}
             for i in range(52)}  # fmt: skip
    wide = [{"name": f"controller-entry-{k:02d}", "result": {"model": "c", "engine": "bfs", "properties": props}}
            for k in range(45)]  # fmt: skip
    table = run / "entries" / "table.html"
    table.write_text(_head("t") + property_matrix(wide) + "</body></html>")
    assert _checked_in_browser(browser, table, tmp_path / "profile")["width"] <= 1_400
    crowded = run / "entries" / "crowded.html"  # two edge labels on each other
    crowded.write_text('<!DOCTYPE html><html><body><svg width="200" height="40"><g class="edge"><text x="2" '
                       'y="14">12,345</text></g><g class="edge"><text x="20" y="16">678</text></g></svg></body></html>')  # fmt: skip
    assert _checked_in_browser(browser, crowded, tmp_path / "profile")["overlap"] == [[0, "12,345", "678"]]


def test_junit_has_one_case_per_coverage_requirement(report: Path) -> None:
    root = ET.parse(report / "junit.xml").getroot()
    ctl = next(s for s in root.iter("testsuite") if s.get("name") == "controller-small")
    names = [c.get("name") for c in ctl.iter("testcase")]
    assert [n for n in names if n.startswith("coverage: ")] == [
        "coverage: require_actions",
        "coverage: require_labels",
        "coverage: require_transitions",
        "coverage: require_witnesses",
    ]
    assert ctl.get("failures") == "0" and int(ctl.get("tests")) == len(names)


def _suite(tmp_path: Path, extra: str) -> Path:
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f"""[[check]]
name = "controller-small"
model = "controller"
config = "{ROOT}/configs/controller-small.toml"
{extra}
"""
    )
    return suite


def test_unmet_coverage_requirement_fails_the_release(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """controller-small never creates a topic: requiring NewPartition -> OnlinePartition (or
    every action kind) fails the entry, exit 1, and the report says which requirement."""
    suite = _suite(
        tmp_path,
        'require_transitions = ["partition/NewPartition->OnlinePartition"]\nrequire_actions = "all"',
    )
    code = main(["release", "--suite", str(suite), "--report-dir", str(tmp_path / "r"), "--quiet"])
    assert code == 1
    out = capsys.readouterr().out
    assert "coverage require_transitions: UNMET (missing: partition/NewPartition->OnlinePartition)" in out
    html = (tmp_path / "r" / "latest" / "index.html").read_text()
    failing = html[html.index("<h2>What did not pass</h2>") :]
    assert "controller-small</a>: <span" in failing and "require_transitions" in failing.split("</li>")[0]
    page = (tmp_path / "r" / "latest" / "entries" / "controller-small.html").read_text()
    assert '<td class="unmet">UNMET</td>' in page and "missing: ZkReply, Restart" in page
    root = ET.parse(tmp_path / "r" / "latest" / "junit.xml").getroot()
    failed = {c.get("name") for c in root.iter("testcase") if c.find("failure") is not None}
    assert failed == {"search", "coverage: require_transitions", "coverage: require_actions"}


def test_fraction_requirement(tmp_path: Path) -> None:
    ok = _suite(tmp_path, "require_transitions = 0.1")  # 3 of 21 edges
    assert main(["release", "--suite", str(ok), "--report-dir", str(tmp_path / "r"), "--quiet"]) == 0
    bad = _suite(tmp_path, "require_transitions = 0.5")
    assert main(["release", "--suite", str(bad), "--report-dir", str(tmp_path / "r"), "--quiet"]) == 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("require_everything = true", "unknown key 'require_everything'"),
        ("require_transitions = 2", "require_transitions must be a fraction in [0, 1]"),
        ('require_transitions = ["partition/Foo->Bar"]', "'partition/Foo->Bar' is no edge"),
        ('require_actions = "most"', 'require_actions must be "all" or a list'),
        ('require_actions = ["Teleport"]', "'Teleport' is not an action kind of controller"),
        ('require_labels = ["elections"]', "require_labels must be a list of label paths"),
        ('require_witnesses = "yes"', "require_witnesses must be true or false"),
    ],
)
def test_bad_requirement_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture, extra: str, message: str
) -> None:
    suite = _suite(tmp_path, extra)
    code = main(["release", "--suite", str(suite), "--report-dir", str(tmp_path / "r"), "--quiet"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and message in err, err
    assert not (tmp_path / "r").exists()


def test_default_suite_is_valid_and_requires_controller_coverage() -> None:
    from explorer.release import load_suite

    entries = {e.name: e for e in load_suite(str(ROOT / "configs" / "release.toml"))}
    assert (
        "partition/OfflinePartition->OnlinePartition"
        in entries["controller-small"].require["require_transitions"]
    )
    assert entries["controller-topic-creation"].require["require_witnesses"] is True


@pytest.mark.slow  # 0.9 CPU-s in a loaded default run (2026-11-29)
def test_release_runs_the_entries_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``release --entries`` runs those entries only (the failing one left out: exit 0, and the
    report holds just the two); ``--list`` names the entries; a near miss is a one-line error."""
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE.format(root=ROOT))
    argv = ["release", "--suite", str(suite), "--report-dir", str(tmp_path / "r"), "--quiet"]
    assert main([*argv, "--entries", "stw-small,timing-wheel-small"]) == 0
    assert not (tmp_path / "r" / "latest").exists()  # latest: the newest run of the whole suite only
    (run,) = [d for d in (tmp_path / "r").iterdir() if d.is_dir()]
    doc = json.loads((run / "report.json").read_text())
    assert [e["name"] for e in doc["entries"]] == ["timing-wheel-small", "stw-small"]
    assert doc["scope"] == {
        "subset": True,
        "entries": ["timing-wheel-small", "stw-small"],
        "suite_entries": 5,
    }
    capsys.readouterr()
    assert main([*argv, "--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == [
        "timing-wheel-small",
        "stw-small",
        "purgatory-small-wrong-expectation",
        "controller-small",
        "controller-leader-outside-isr",
    ]
    runs = sorted((tmp_path / "r").iterdir())
    assert main([*argv, "--entries", "stw-smal"]) == 2
    err = capsys.readouterr().err
    assert "--entries: 'stw-smal'" in err and "(did you mean 'stw-small'?)" in err and err.count("\n") == 1
    assert sorted((tmp_path / "r").iterdir()) == runs  # nothing written


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
    max_leaves=6,
)
GOOD_MUTATION = {
    "schema": "kafka-mc/mutation/1",
    "score": {"score": 0.5, "killed": 1, "considered": 2},
    "entries": [{"name": "controller-small"}],
    "mutants": [{"name": "a", "status": "killed"}, {"name": "b", "status": "survived", "doc": "d"}],
}


@settings(max_examples=150, deadline=None)
@given(
    path=st.sampled_from(
        [
            ("score",),
            ("score", "score"),
            ("score", "killed"),
            ("entries",),
            ("entries", 0),
            ("entries", 0, "name"),
            ("mutants",),
            ("mutants", 1),
            ("mutants", 1, "status"),
            ("mutants", 1, "doc"),
            ("mutants", 0, "name"),
        ]
    ),
    value=JSON,
)
def test_a_mutation_result_with_any_value_is_read_or_refused_in_one_line(
    path: tuple[Any, ...], value: Any
) -> None:
    """Any JSON value at any field the report reads: either the summary and its HTML are made,
    or a one-line ConfigError names the field (never an exception of another kind: exit 4)."""
    import copy

    from explorer.report.page import _mutation, mutation_summary
    from explorer.tracefile import mutation_problem

    doc = copy.deepcopy(GOOD_MUTATION)
    target: Any = doc
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    problem = mutation_problem(doc)
    if problem is None:
        assert _mutation(mutation_summary(doc)).startswith("<h2>Mutation score</h2>")
    else:
        assert "\n" not in problem and problem.split(":")[0].split("[")[0].split(".")[0] == path[0]


@pytest.mark.slow  # 0.7 CPU-s in a loaded default run (2026-11-29)
def test_release_refuses_a_mutation_result_with_a_bad_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = copy_with(GOOD_MUTATION, ("mutants", 1, "status"), 7)
    f = tmp_path / "m.json"
    f.write_text(json.dumps(bad))
    code = main(
        [
            "release",
            "--suite",
            str(ROOT / "configs" / "release.toml"),
            "--mutation",
            str(f),
            "--report-dir",
            str(tmp_path / "r"),
            "--entries",
            "controller-small",
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "mutants[1].status: expected one of" in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


def copy_with(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    import copy

    out = copy.deepcopy(doc)
    target: Any = out
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    return out


def test_the_report_says_what_produced_it(report: Path) -> None:
    """Provenance in the JSON, the HTML and every JUnit suite: commit (and dirty), version,
    Python, platform, the suite, the options, the start time."""
    import platform
    import re

    doc = json.loads((report / "report.json").read_text())
    p = doc["provenance"]
    assert p["commit"] is None or re.fullmatch(r"[0-9a-f]{40}", p["commit"])
    assert p["dirty"] in (None, True, False) and (p["dirty"] is None) == (p["commit"] is None)
    assert p["python"] == platform.python_version() and p["kafka_mc_version"]
    assert p["options"]["quiet"] is True and p["suite"] == doc["suite"] and p["suite"].endswith("suite.toml")
    html = (report / "index.html").read_text()
    assert f"Python {p['python']}" in html and f"started {p['started']}" in html
    suites = ET.parse(report / "junit.xml").getroot().findall("testsuite")
    assert suites
    for s in suites:
        props = s.find("properties")
        assert props is not None
        assert {q.get("name"): q.get("value") for q in props}["python"] == p["python"]
    assert '"Noto Sans CJK SC"' in html  # a CJK fallback where the default font has no glyphs


def test_expected_violations_are_shown_as_expected_and_collapsed(report: Path) -> None:
    """The headline counts the expected violations apart; every counterexample is a closed
    ``<details>`` (opened on demand), tagged ``expected`` where its entry expected it and not
    where it did not (the wrong-expectation entry's mutant)."""
    import json
    import re

    doc = json.loads((report / "report.json").read_text())
    pr = doc["summary"]["properties"]
    expected = sum(
        1
        for en in doc["entries"]
        for name, p in en["result"]["properties"].items()
        if p["status"] == "violated" and name in en.get("violates", [])
    )
    assert 0 < pr["expected_violations"] == expected < pr["violated"]
    html = (report / "index.html").read_text()
    n, e = pr["violated"], pr["expected_violations"]
    assert f"{n} violated ({e} of them expected, {n - e} not)" in html
    pages = _all_pages(report)
    assert "<details open" not in pages
    blocks = re.findall(
        r"<details class=counterexample(?: id=[\w-]+)?><summary><h4 class=(\w+)>([^<]*)", pages
    )
    assert blocks and {cls for cls, _ in blocks} == {"expected", "violated"}
    tagged = {t.split(" (")[0] for cls, t in blocks if cls == "expected"}
    assert tagged <= {"no_task_lost", "lateness_bounded", "deadlock", "graceful_stop_waits",
                      "task_count_consistent", "stop_terminates_trigger", "leader_in_isr",
                      "isr_nonempty_subset"}  # fmt: skip


def test_one_property_table_for_the_suite(report: Path) -> None:
    """A row per property and a column per entry of its model, with the expected violations
    read as expected; each entry's own detailed table is collapsed."""
    import re

    html = (report / "index.html").read_text()
    assert "<h2>Properties over the suite</h2>" in html
    (table,) = re.findall(
        r"<h3>controller: every property in every entry</h3><table class=matrix>(.*?)</table>", html
    )
    heads = re.findall(r'<th class=col title="([^"]+)">', table)
    assert heads == ["controller-small", "controller-leader-outside-isr"]
    row = re.search(
        r'<tr><td class=prop><code>leader_in_isr</code></td><td title="always">A</td>(.*?)</tr>', table
    )
    assert row is not None
    assert re.findall(r"<td class=(\w+) ", row.group(1)) == ["held", "expected"]
    # the run's page holds no per-entry property table; each entry's page holds its own
    assert "<h3>Properties (" not in html and "<h3>Properties (" in _section(report, "controller-small")


def test_the_suite_names_what_was_never_enabled_and_legends_claim_nothing_false(report: Path) -> None:
    import json

    doc = json.loads((report / "report.json").read_text())
    never = doc["summary"]["action_kinds"]["never_enabled"]
    ak = doc["summary"]["action_kinds"]
    assert never and len(never) == ak["declared"] - ak["enabled"]
    html = (report / "index.html").read_text()
    assert "never enabled: " in html and all(f"<code>{k}</code>" in html for k in never)
    # the election legend no longer claims a configuration had unclean election disabled
    assert "unclean election disabled" not in _all_pages(report)


def test_step_tables_name_messages_instead_of_codes(report: Path) -> None:
    """A change shows a message by its name and named fields, an event by its Kafka name: never
    a raw dict with an internal code such as ``{'op': 13}``."""
    mut = _section(report, "controller-leader-outside-isr")
    assert "{&#x27;op&#x27;" not in mut and "{'op'" not in mut and "&#x27;kind&#x27;" not in mut
    assert "UpdateLeaderAndIsr(" in mut or "GetTopicPartitionStates(" in mut or "BrokerChange" in mut


def test_a_model_draws_its_own_report() -> None:
    """A model of its own (a traffic light, not Kafka) names its state machine, places its
    states, draws a label section as a table and splits its step tables by actor, all through
    ``report_layout()``; the same run without the hook is drawn generically."""
    import re

    from explorer.engines.bfs import check_bfs
    from explorer.release import sequence_of, suite_summary
    from explorer.report.layout import layout_of
    from explorer.report.page import report_pages
    from tests.toys import TrafficLight

    system = TrafficLight()
    r = check_bfs(system, system.properties(), model="traffic-light", keep_going=True)
    res = r.to_json()
    (v,) = res["violations"]
    v["sequence"] = sequence_of(
        system, [{"action": s.action, "fingerprint": s.fingerprint} for s in r.violations[0].trace]
    )
    entry = {"name": "light", "expect": "violation", "violates": ["nobody_runs_red"], "status": "pass",
             "message": "violated as expected", "requirements": [], "result": res}  # fmt: skip
    drawn_entry = {**entry, "layout": layout_of(system)}
    summary = suite_summary([drawn_entry], 1.0)
    drawn = report_pages({"run_id": "r", "suite": "s.toml", "summary": summary, "entries": [drawn_entry]})
    page = drawn["entries/light.html"]
    assert "<h3>Traffic light coverage</h3>" in page and "TrafficLight: 3/3 transitions taken" in page
    # Red at (100, 60) as given (moved down 34 px for the self-loops' room): its box's left edge
    assert re.search(r'<rect x="12\.0" y="77\.0" width="176" height="34"', page)
    assert (
        "<h4>Crossings per colour</h4>" in page
        and "<td><code>Red</code></td><td class='num muted'>0</td><td class=num>1</td>" in page
    )
    assert (
        "<th>action</th><th>the cars</th><th>fingerprint</th>" in page
        and "<li>ran_red: 0 -&gt; 1</li>" in page
    )
    assert "Other coverage labels" not in page
    assert "TrafficLight" in drawn["index.html"]  # the suite's diagram keeps the model's title
    plain = report_pages({"run_id": "r", "suite": "s.toml", "entries": [{**entry, "layout": None}]})
    page = plain["entries/light.html"]
    assert "<h3>Coverage labels</h3>" in page and "light: 3/3 transitions taken" in page
    assert "TrafficLight" not in page and "<th>what changed</th>" in page
    assert "<code>crossings/Red/on red</code>" in page


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ([], "report_layout() must return a dict, got list"),
        ({"colours": {}}, "report_layout(): unknown key 'colours'"),
        ({"state_machines": {"m": {"positions": {"A": [1]}}}}, "state_machines.m.positions.A must be [x, y]"),
        ({"tables": [{"title": "t"}]}, "tables[0] needs a section and columns"),
        ({"actors": [["(", "x"]]}, "actors[0] is no [pattern, actor]"),
        ({"names": [["x"]]}, "names[0] is no [pattern, replacement]"),
    ],
)
def test_a_layout_not_of_the_documented_shape_is_refused_in_one_line(layout: Any, message: str) -> None:
    from explorer.report.layout import LayoutError, layout_of

    class Model:
        def report_layout(self) -> Any:
            return layout

    with pytest.raises(LayoutError) as err:
        layout_of(Model())
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_report_modules_name_no_model() -> None:
    """Everything Kafka-specific in a report comes from the model's ``report_layout()``: the
    explorer's report modules name no Kafka concept (shown able to fail on the controller's
    own layout module)."""
    import re

    words = re.compile(
        r"ZooKeeper|Partition|Replica|[Bb]roker|[Ee]lection|\bzk|\bISR\b|[Cc]ontroller|Kafka\b"
    )
    modules = sorted(p.name for p in (ROOT / "explorer" / "report").glob("*.py"))
    assert {"page.py", "svg.py", "layout.py", "history.py", "mutation.py", "tools.py"} <= set(modules)
    found = {m: words.findall((ROOT / "explorer" / "report" / m).read_text()) for m in modules}
    assert found == {m: [] for m in modules}
    assert words.search((ROOT / "model" / "controller" / "coverage.py").read_text())
