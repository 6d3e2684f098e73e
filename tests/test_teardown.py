"""A process that ends after its search keeps it until it exits (issue 56,
:mod:`explorer.search.teardown`).

* :func:`exit_process` runs the ``atexit`` handlers, flushes what was printed and exits with the
  code; with another thread alive it is a normal exit, which waits for the thread;
* ``kafka-mc check`` keeps its search (frozen, not freed) and ends through it: the answer and the
  exit code as before, the JSON result written;
* a library caller's search is freed when its result is built, by reference counts alone (no
  cycle holds the visited set: compiled, closures in ``finish`` once made one);
* a kept search is held, frozen, until the process ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _python(script: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=ROOT)


def test_exit_process_runs_the_exit_handlers_and_flushes() -> None:
    run = _python(
        "import atexit, sys\n"
        "from explorer.search.teardown import exit_process\n"
        "atexit.register(lambda: print('handler ran'))\n"
        "print('answer', end=' ')\n"
        "sys.stderr.write('note')\n"
        "exit_process(5)\n"
        "print('never')\n"
    )
    assert (run.returncode, run.stdout, run.stderr) == (5, "answer handler ran\n", "note")


def test_exit_process_waits_for_another_thread(tmp_path: Path) -> None:
    done = tmp_path / "done"
    run = _python(
        "import threading, time\n"
        "from pathlib import Path\n"
        "from explorer.search.teardown import exit_process\n"
        f"t = threading.Thread(target=lambda: (time.sleep(0.3), Path({str(done)!r}).write_text('x')))\n"
        "t.start()\n"
        "exit_process(0)\n"
    )
    assert run.returncode == 0, run.stderr
    assert done.read_text() == "x"  # os._exit would have killed the thread first


def test_the_check_command_keeps_its_search_and_answers_as_before(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "explorer", "check", "controller"]
    cmd += ["--config", "configs/controller-small.toml"]
    run = subprocess.run([*cmd, "--json", str(out)], env=env, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "held: one_controller_per_epoch" in run.stdout
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["exit_reason"] == "complete" and doc["distinct_states"] > 0
    bad = [sys.executable, "-m", "explorer", "check", "simple-timing-wheel"]
    bad += ["--config", "configs/simple-timing-wheel-small.toml"]
    violated = subprocess.run(bad, env=env, capture_output=True, text=True, cwd=ROOT)
    assert violated.returncode == 1, violated.stderr
    assert "violated" in violated.stdout.lower()


_SEARCH = (
    "import gc\n"
    "from explorer.api import CheckOptions\n"
    "from explorer.frontend import run_check\n"
    "from explorer.search import teardown\n"
    "from explorer.search.visited import StateVisited\n"
    "{setup}"
    "gc.collect()\n"
    "r, _, _ = run_check('controller', CheckOptions(max_states=2000), config_path='configs/controller-ref.toml')\n"
    "alive = sum(isinstance(o, StateVisited) for o in gc.get_objects())  # not the frozen ones\n"
    "kept = [type(o.visited).__name__ for o in teardown._KEPT]\n"
    "print(r.distinct_states, alive, kept, gc.get_freeze_count() > 0)\n"
)


def test_a_library_callers_search_is_freed_by_reference_counts() -> None:
    run = _python(_SEARCH.format(setup="gc.disable()\n"))  # the collector never runs
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["2002", "0", "[]", "False"]


def test_a_kept_search_stays_frozen_until_the_process_ends() -> None:
    run = _python(_SEARCH.format(setup="teardown.keep_until_exit()\n"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["2002", "0", "['StateVisited']", "True"]


def test_only_the_last_search_is_kept() -> None:
    """A process that runs several searches holds one finished search at most: the first is
    freed when the second is kept."""
    script = (
        "import weakref\n"
        "from explorer.api import CheckOptions\n"
        "from explorer.frontend import run_check\n"
        "from explorer.search import teardown\n"
        "teardown.keep_until_exit()\n"
        "cfg = 'configs/controller-ref.toml'\n"
        "run_check('controller', CheckOptions(max_states=500), config_path=cfg)\n"
        "first = weakref.ref(teardown._KEPT[0].monitor)\n"
        "run_check('controller', CheckOptions(max_states=2000), config_path=cfg)\n"
        "import gc; gc.collect()  # the first one's cycles too (it was frozen)\n"
        "print(len(teardown._KEPT), len(teardown._KEPT[0].visited), first() is None)\n"
    )
    run = _python(script)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["1", "2002", "True"]
