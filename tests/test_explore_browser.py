"""The explorer's page in a real browser (issue 57): headless Chromium driven by Selenium
(Debian's ``chromium`` and ``chromium-driver``; ``selenium`` is in the ``dev`` extra). Skips in
one line where any of them is missing.

It starts ``kafka-mc explore`` as a user does (a subprocess, the URL read from its output),
loads controller-small with a planted bug, takes actions, steps back and forward, finds a
violation from a state, diffs two steps and two paths, walks at random, exports the path as a
trace that ``kafka-mc replay`` accepts, then opens that saved counterexample and steps through
it. A screenshot of the page at each control goes to ``/tmp/explore-shots/`` (not committed).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = Path(os.environ.get("KAFKA_MC_EXPLORE_SHOTS", "/tmp/explore-shots"))

pytestmark = pytest.mark.slow

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the dev extra)")
if not shutil.which("chromedriver") or not (shutil.which("chromium") or shutil.which("chromium-browser")):
    pytest.skip("chromium or chromium-driver is not installed", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


class _Explore:
    """``kafka-mc explore ARGS`` in a subprocess, and its URL."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "explorer", "explore", *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.proc.stdout is not None
        self.lines: list[str] = []
        self.url = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            m = re.search(r"open (http://127\.0\.0\.1:\d+/\?token=\S+)", line)
            if m:
                self.url = m.group(1)
                break
        assert self.url, "".join(self.lines)

    def stop(self) -> int:
        self.proc.send_signal(2)  # Ctrl-C
        try:
            out, _ = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        self.lines.append(out)
        return self.proc.returncode


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or ""
    profile = tempfile.mkdtemp(prefix="kafka-mc-chromium-")
    downloads = tempfile.mkdtemp(prefix="kafka-mc-downloads-")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1500,1300",
        f"--user-data-dir={profile}",
    ):
        opts.add_argument(flag)
    opts.add_experimental_option("prefs", {"download.default_directory": downloads})
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver"))
    driver = webdriver.Chrome(options=opts, service=service)
    driver.downloads = downloads
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _wait(driver: Any, cond: Callable[[Any], Any], timeout: float = 30) -> Any:
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(cond)


def _ready(driver: Any, path: str | None = None) -> str:
    """Wait until the page shows ``path`` (any path when None); the path shown."""

    def done(d: Any) -> Any:
        got = d.execute_script("return document.body.dataset.ready || ''")
        return got if got and (path is None or got == path) else False

    return str(_wait(driver, done))


def _shot(driver: Any, name: str, css: str = "header") -> None:
    """A screenshot of the page scrolled to ``css`` (the control just used)."""
    driver.execute_script("arguments[0].scrollIntoView()", driver.find_element(By.CSS_SELECTOR, css))
    driver.save_screenshot(str(SHOTS / f"{name}.png"))


def _click(driver: Any, css: str) -> None:
    driver.execute_script("document.body.dataset.ready = ''")  # the next _ready waits for the page again
    driver.find_element(By.CSS_SELECTOR, css).click()


def _action(driver: Any, text: str) -> None:
    for b in driver.find_elements(By.CSS_SELECTOR, "button.action"):
        if b.text.startswith(text):
            driver.execute_script("document.body.dataset.ready = ''")
            b.click()
            return
    raise AssertionError(
        f"no enabled action {text!r}: {[b.text for b in driver.find_elements(By.CSS_SELECTOR, 'button.action')]}"
    )


def test_the_page_drives_every_control(browser: Any, tmp_path: Path) -> None:
    small = str(ROOT / "configs" / "controller-small.toml")
    t0 = time.monotonic()
    app = _Explore("controller", "--config", small, "--set", "mutant=leader-outside-isr")
    try:
        d = browser
        d.get(app.url)
        _ready(d, "0")
        ready_s = time.monotonic() - t0
        assert "controller" in d.find_element(By.ID, "model").text
        assert d.find_element(By.ID, "state").text.count("/brokers/ids/") >= 2  # the ZooKeeper tree
        actors = [e.text for e in d.find_elements(By.CSS_SELECTOR, "#actions .actor")]
        assert "broker 1" in actors, actors
        _shot(d, "01-initial")

        _action(d, "broker 1: crashes")  # take an action
        first = _ready(d)
        assert re.fullmatch(r"0\.\d+", first) and d.current_url.endswith(f"#path={first}")
        assert d.find_elements(By.CSS_SELECTOR, "#state li.changed, #state li.added")  # highlighted
        rows = d.find_elements(By.CSS_SELECTOR, "#steps tr[data-step]")
        assert rows[-1].text.startswith("1") and "broker 1: crashes" in rows[-1].text
        _shot(d, "02-took-an-action")
        _click(d, "#actions button.action")
        second = _ready(d)
        assert second.startswith(first + ".")
        _click(d, "#back")  # step back
        _ready(d, first)
        assert "at=1" in d.current_url
        _shot(d, "03-stepped-back")
        _click(d, "#forward")  # and forward again
        _ready(d, second)
        _click(d, "#only-changes")
        _shot(d, "04-only-changes")
        _click(d, "#only-changes")

        _click(d, "#back")  # find from a state: the planted bug's violation of leader_in_isr
        _ready(d, first)
        Select(d.find_element(By.ID, "find-prop")).select_by_value("leader_in_isr")
        _click(d, "#find-go")
        found = _wait(
            d,
            lambda x: (
                (p := x.execute_script("return document.body.dataset.ready")) and len(p.split(".")) > 3 and p
            ),
        )
        assert "found a violation of leader_in_isr" in d.find_element(By.ID, "find-status").text
        verdict = d.find_element(By.CSS_SELECTOR, "#props tr.fails")
        assert "leader_in_isr" in verdict.text and "ISR" in verdict.text  # with its explanation
        _shot(d, "05-found-a-violation", "#props tr.fails")

        steps = len(found.split(".")) - 1  # diff two steps: the first and the last
        d.find_element(By.ID, "diff-a").clear()
        d.find_element(By.ID, "diff-a").send_keys("0")
        _click(d, "#diff-go")
        _wait(d, lambda x: x.find_element(By.ID, "diff-out").text)
        assert f"step 0 → step {steps}" in d.find_element(By.ID, "diff-out").text
        _shot(d, "06-diffed-two-steps", "#steps")

        Select(d.find_element(By.ID, "export-prop")).select_by_value("leader_in_isr")
        href = d.find_element(By.ID, "export-trace").get_attribute("href")
        with urllib.request.urlopen(href, timeout=30) as res:  # what the link downloads
            doc = json.loads(res.read())
        trace = tmp_path / "exported.json"
        trace.write_text(json.dumps(doc))
        _click(d, "#export-trace")  # and the browser downloads it too
        _wait(d, lambda x: any(f.endswith(".json") for f in os.listdir(d.downloads)))
        replay = subprocess.run(
            [sys.executable, "-m", "explorer", "replay", str(trace)], cwd=ROOT, capture_output=True, text=True
        )
        assert replay.returncode == 0 and "violation reproduced" in replay.stdout, (
            replay.stdout + replay.stderr
        )

        _click(d, "#pin")  # two paths diffed: the violation against a random walk
        _click(d, "#restart")
        _ready(d, "0")
        _click(d, "#walk-go")
        walked = _ready(d)
        assert len(walked.split(".")) > 1
        _click(d, "#tdiff-go")
        _wait(d, lambda x: "part at step" in x.find_element(By.ID, "tdiff-out").text)
        _shot(d, "07-random-walk-and-paths-diffed", "#tools")
        graph = d.find_element(By.ID, "export-graph").get_attribute("href")
        with urllib.request.urlopen(graph, timeout=30) as res:
            assert json.loads(res.read())["edges"]
    finally:
        assert app.stop() == 0
    assert "stopped" in "".join(app.lines)

    app = _Explore(str(trace))  # the saved counterexample, opened at its violating step
    try:
        d.get(app.url)
        at = _ready(d, found)
        assert "Counterexample: leader_in_isr" in d.find_element(By.ID, "trace-head").text
        assert d.find_elements(By.CSS_SELECTOR, "#steps tr.violating")
        _shot(d, "08-counterexample-at-its-violation")
        for k in range(steps - 1, -1, -1):  # step through it, back to the start
            _click(d, "#back")
            _ready(d, ".".join(at.split(".")[: k + 1]))
        _shot(d, "09-counterexample-initial-state", "#path-pane")
        _click(d, "#jump")
        _ready(d, found)
    finally:
        assert app.stop() == 0
    print(f"page ready {ready_s:.2f} s after the command (controller-small, with Chromium's start)")
