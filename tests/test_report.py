"""The release report rendered from a real run: content, JUnit XML, and a real browser."""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

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
    for name in ("timing-wheel-small", "stw-small", "purgatory-small-wrong-expectation"):
        assert f'href="#{name}"' in html
    # each verdict shows in the summary table and in its configuration's section
    assert html.count(">PASS<") == 2 * 2 and html.count(">FAIL<") == 2 * 1
    # property table, a counterexample step table with its changes, the level chart
    assert "<code>no_early_fire</code>" in html and "held" in html
    assert "on_complete_at_most_once (always)" in html
    assert "what changed" in html and "<ul class=changes><li>" in html
    assert "new states per BFS level" in html


def test_junit_is_valid_xml_with_one_case_per_property(report: Path) -> None:
    root = ET.parse(report / "junit.xml").getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"timing-wheel-small", "stw-small", "purgatory-small-wrong-expectation"}
    assert suites["timing-wheel-small"].get("failures") == "0"
    assert suites["stw-small"].get("failures") == "0"  # the violations were expected
    bad = suites["purgatory-small-wrong-expectation"]
    failed = {c.get("name") for c in bad.iter("testcase") if c.find("failure") is not None}
    assert failed == {"search", "on_complete_at_most_once"}
    assert int(bad.get("tests")) == len(list(bad.iter("testcase")))


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_report_renders_in_headless_chromium_without_console_errors(report: Path, tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have chromium (.ci/run installs Debian's package)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    shot = ROOT / "reports" / "screenshot-release.png"
    shot.parent.mkdir(exist_ok=True)
    args = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1280,2200",
        f"--screenshot={shot}",
        (report / "index.html").as_uri(),
    ]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    console = [ln for ln in p.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert console == []
    assert shot.exists() and shot.stat().st_size > 10_000
