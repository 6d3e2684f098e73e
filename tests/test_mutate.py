"""The mutation harness (``kafka-mc mutate``, explorer/mutation/command.py) and its source-mutant
generator (explorer/mutation/source.py): the generator on small snippets, and the
bookkeeping on the toy model ``tests/toy_mutation.py`` (fast: each mutant is a
subprocess of about half a second). A sample on the controller is marked ``slow``."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.mutation.command import format_matrix, mutant_status, score_of
from explorer.mutation.source import apply_mutant, generate, generate_files, sample
from explorer.report.page import mutation_summary, render_html

ROOT = Path(__file__).resolve().parents[1]
TOY = "tests/toy_mutation.py"


def _one(src: str, operator: str) -> str:
    """The source with the single mutant of ``operator`` applied."""
    ms = [m for m in generate("s.py", src) if m.operator == operator]
    assert len(ms) == 1, [m.id for m in generate("s.py", src)]
    return apply_mutant(src, ms[0])


@pytest.mark.parametrize(
    ("src", "operator", "expected"),
    [
        ("x = a < b\n", "lt-le", "x = (a <= b)\n"),
        ("x = a <= b\n", "le-lt", "x = (a < b)\n"),
        ("x = a > b\n", "gt-ge", "x = (a >= b)\n"),
        ("x = a >= b\n", "ge-gt", "x = (a > b)\n"),
        ("x = a == b\n", "eq-ne", "x = (a != b)\n"),
        ("x = a != b\n", "ne-eq", "x = (a == b)\n"),
        ("x = a < b < c\n", "lt-le#1", "x = (a < b <= c)\n"),
        ("x = a and b\n", "and-or", "x = (a or b)\n"),
        ("x = a or b\n", "or-and", "x = (a and b)\n"),
        ("x = 2\n", "int+1", "x = (3)\n"),
        ("x = 0\n", "int-1", "x = (-1)\n"),
        ("if a:\n    b()\n", "not-if", "if (not (a)):\n    b()\n"),
        ("def f():\n    return True\n", "ret-flip", "def f():\n    return False\n"),
        ("def f():\n    '''doc'''\n    y()\n", "drop", "def f():\n    '''doc'''\n    pass\n"),
        ("x = a and b and c\n", "and-drop#1", "x = (a and c)\n"),
        ("x = a or b\n", "or-drop#0", "x = (b)\n"),
        ("g(a, b.d, c)\n", "swap-args#0", "g(b.d, a, c)\n"),
    ],
)
def test_each_operator_on_a_snippet(src: str, operator: str, expected: str) -> None:
    assert _one(src, operator) == expected


def test_what_is_not_mutated() -> None:
    src = (
        "def f(a: int = 2) -> None:\n"  # the annotation is left alone, the default is not
        "    '''a docstring is never dropped'''\n"
        "    print(f'{a < 1}')\n"  # nothing inside an f-string
        "    return a is None or 10\n"  # 10 is no small int; `is` is not swapped
        "x = 1\n"  # a module-level assignment is not dropped
    )
    ops = sorted(m.id for m in generate("s.py", src))
    assert ops == [
        "s.py:1:15:int+1",
        "s.py:1:15:int-1",
        "s.py:3:4:drop",
        "s.py:4:11:or-and",
        "s.py:4:11:or-drop#0",
        "s.py:4:11:or-drop#1",
        "s.py:5:4:int+1",
        "s.py:5:4:int-1",
    ]


def test_apply_keeps_the_rest_of_the_file_and_utf8() -> None:
    src = "# 新建 Topic: a comment with non-ASCII text\ndef f(a):  # 注释\n    return a < 2  # keep me\n"
    m = next(m for m in generate("s.py", src) if m.operator == "lt-le")
    assert apply_mutant(src, m) == src.replace("a < 2", "(a <= 2)")


@pytest.mark.slow  # over a CPU-second: the ci selection runs it
def test_generation_is_deterministic_with_stable_ids() -> None:
    files = sorted((ROOT / "model" / "controller").glob("*.py"))
    a, b = generate_files(ROOT, files), generate_files(ROOT, list(reversed(files)))
    assert [m.id for m in a] == [m.id for m in b]
    assert len({m.id for m in a}) == len(a) > 1000
    assert a[0].id.startswith("model/controller/")
    assert [m.id for m in sample(a, 30, 5)] == [m.id for m in sample(a, 30, 5)]
    assert [m.id for m in sample(a, 30, 5)] != [m.id for m in sample(a, 30, 6)]
    for m in sample(a, 60, 1):  # every sampled mutant applies and is still Python
        ast.parse(apply_mutant((ROOT / m.file).read_text(encoding="utf-8"), m))


def test_status_and_score() -> None:
    assert mutant_status({}) == "not run"
    assert mutant_status({"a": {"status": "timeout"}, "b": {"status": "survived"}}) == "timeout"
    s = score_of([{"status": "killed"}, {"status": "crashed"}, {"status": "equivalent"}])
    assert (s["killed"], s["considered"], s["score"]) == (1, 2, 0.5)
    assert score_of([{"status": "equivalent"}])["score"] is None


def _mutate(tmp_path: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "m.json"
    code = main(["mutate", "--system", "tests.toy_mutation:make", "--quiet", "--json", str(out), *extra])
    return code, json.loads(out.read_text())


@pytest.mark.slow  # over 1.3 CPU-s in the CI of session 17
def test_toy_kill_matrix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (ROOT / TOY).read_bytes()
    eq = tmp_path / "eq.toml"
    eq.write_text(f'[equivalent]\n"{TOY}:41:8:drop" = "renaming it would be equivalent"\n')
    ids = [f"{TOY}:37:11:not-if", f"{TOY}:42:11:lt-le", f"{TOY}:55:22:int+1", f"{TOY}:41:8:drop"]
    code, doc = _mutate(tmp_path, "--set", "limit=2", "--ids", ",".join(ids), "--equivalent", str(eq))
    assert code == 1  # not every mutant was killed
    by = {m["name"]: m for m in doc["mutants"]}
    assert [m["kind"] for m in doc["mutants"]] == ["catalogue"] * 2 + ["source"] * 4
    assert by["overflow"]["status"] == "killed"
    assert by["overflow"]["cells"]["system"]["property"] == "within_limit"
    assert by["overflow"]["cells"]["system"]["length"] == 3
    # the mutated copy is what runs: only the copy raises
    crashed = by[f"{TOY}:37:11:not-if"]
    assert crashed["status"] == "crashed"
    assert "RuntimeError: the mutated copy ran" in crashed["cells"]["system"]["message"]
    assert by[f"{TOY}:42:11:lt-le"]["status"] == "killed"
    assert by[f"{TOY}:55:22:int+1"]["status"] == "survived"  # the factory's default is overridden
    assert by[f"{TOY}:41:8:drop"]["status"] == "equivalent"
    assert doc["baseline"]["system"]["status"] == "survived"
    assert (doc["score"]["killed"], doc["score"]["considered"]) == (3, 5)
    assert (ROOT / TOY).read_bytes() == before  # the real tree is never modified
    table = capsys.readouterr().out
    assert "within_limit (3)" in table and "mutation score 60.0%" in table
    assert table == format_matrix(doc) + "\n"


@pytest.mark.slow  # over 1.3 CPU-s in the CI of session 17
def test_toy_crash_kills_and_timeout(tmp_path: Path) -> None:
    code, doc = _mutate(tmp_path, "--ids", f"{TOY}:37:11:not-if", "--mutants", "stuck", "--crash-kills")
    assert code == 0 and [m["status"] for m in doc["mutants"]] == ["killed", "killed"]
    code, doc = _mutate(
        tmp_path, "--no-baseline", "--mutants", "overflow", "--set", "limit=100000000", "--max-seconds", "0.3"
    )
    assert code == 1 and doc["mutants"][0]["status"] == "timeout"


@pytest.mark.slow  # 0.7 CPU-s in a loaded default run (2026-11-29)
def test_baseline_must_pass_and_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["mutate", "--system", "tests.toy_mutation:make", "--quiet"]
    assert main([*argv, "--set", "limit=100000000", "--max-seconds", "0.3"]) == 2
    assert "the unmutated model does not pass entry system" in capsys.readouterr().err
    assert main([*argv, "--mutants", "nope"]) == 2
    assert main(["mutate", "--suite", str(ROOT / "configs" / "release.toml"), "--entries", "nope"]) == 2
    assert main(["mutate", "controller"]) == 2  # no suite and no config
    assert main([*argv, "--list", "--sample", "3", "--seed", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2 + 3


def test_release_report_shows_the_mutation_score() -> None:
    mut = {
        "schema": "kafka-mc/mutation/1",
        "entries": [{"name": "controller-small"}],
        "score": {"score": 0.75, "killed": 3, "considered": 4},
        "mutants": [{"name": "no-watch", "status": "survived", "doc": "the watch is not re-registered"}],
    }
    page = render_html({"entries": [], "mutation": mutation_summary(mut)})
    assert "<h2>Mutation score</h2>" in page and "75.0% (3 of 4" in page and "no-watch" in page
    assert "Mutation score" not in render_html({"entries": []})


@pytest.mark.slow
def test_controller_small_sample(tmp_path: Path) -> None:
    """A few catalogue and source mutants of the controller on controller-small (about a minute)."""
    out = tmp_path / "m.json"
    code = main(
        [
            "mutate",
            "--suite",
            str(ROOT / "configs" / "release.toml"),
            "--entries",
            "controller-small",
            "--mutants",
            "no-epoch-bump,no-leader-epoch-bump,leader-outside-isr",
            "--sample",
            "4",
            "--seed",
            "3",
            "--max-seconds",
            "30",
            "--quiet",
            "--json",
            str(out),
        ]
    )
    doc = json.loads(out.read_text())
    assert code in (0, 1)
    assert [m["status"] for m in doc["mutants"][:3]] == ["killed"] * 3
    assert len(doc["mutants"]) == 7 and all(m["status"] != "not run" for m in doc["mutants"])


@pytest.mark.slow  # 1.9 CPU-s in a loaded default run (2026-11-29)
def test_results_file_resumes_a_stopped_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--results FILE: each finished mutant is appended as it ends; a run started again on the
    file skips what it holds (and refuses a file written for other entries or options)."""
    res = tmp_path / "runs" / "r.jsonl"
    ids = [f"{TOY}:42:11:lt-le", f"{TOY}:55:22:int+1"]
    base = ["--set", "limit=2", "--no-catalogue", "--results", str(res)]
    code, first = _mutate(tmp_path, *base, "--ids", ids[0])
    lines = res.read_text().splitlines()
    assert code == 0 and len(lines) == 4  # the header, the baseline, the entries' lines, one mutant
    # a run killed after its first mutant: the file holds it; the rerun does only the second
    res.write_text("\n".join(lines) + '\n{"mutant": {"name": "cut by a kil')  # a torn last line
    code, doc = _mutate(tmp_path, *base, "--ids", ",".join(ids))
    assert [m["name"] for m in doc["mutants"]] == ids
    assert doc["mutants"][0] == first["mutants"][0]  # taken from the file, not run again
    assert doc["mutants"][1]["status"] == "survived"
    assert (
        sum('"mutant"' in x for x in res.read_text().splitlines()) == 2
    )  # the torn line dropped, one appended
    out = main(["mutate", "--system", "tests.toy_mutation:make", "--quiet", "--set", "limit=2", "--no-catalogue",
                "--ids", ids[0], "--results", str(res), "--continue"])  # fmt: skip
    assert out == 2 and "written by another run (its keep_going setting" in capsys.readouterr().err


@pytest.mark.slow  # 1.9 CPU-s in a loaded default run (2026-11-29)
def test_an_equivalence_found_after_the_run_applies_on_resume(tmp_path: Path) -> None:
    """A survivor that the catalogue lists as equivalent after its run is reported equivalent
    when the results file is read again (its cells kept); a killed mutant stays killed."""
    res = tmp_path / "r.jsonl"
    ids = [f"{TOY}:42:11:lt-le", f"{TOY}:55:22:int+1"]
    base = ["--set", "limit=2", "--no-catalogue", "--results", str(res), "--ids", ",".join(ids)]
    _, first = _mutate(tmp_path, *base)
    status = {m["name"]: m["status"] for m in first["mutants"]}
    assert status == {ids[0]: "killed", ids[1]: "survived"}
    eq = tmp_path / "eq.toml"
    eq.write_text(f'[equivalent]\n"{ids[0]}" = "a wrong reason"\n"{ids[1]}" = "found equivalent later"\n')
    _, again = _mutate(tmp_path, *base, "--equivalent", str(eq))
    by = {m["name"]: m for m in again["mutants"]}
    assert by[ids[0]]["status"] == "killed"
    assert by[ids[1]]["status"] == "equivalent" and by[ids[1]]["equivalent"] == "found equivalent later"
    assert by[ids[1]]["cells"] == {m["name"]: m for m in first["mutants"]}[ids[1]]["cells"]


def test_a_results_file_names_configurations_relative_to_the_project(tmp_path: Path) -> None:
    """The header of a results file records configurations relative to the project, so the file
    resumes in another clone (a background run in a second clone was refused: absolute paths)."""
    from explorer.mutation.command import PROJECT_ROOT, _portable

    assert (
        _portable(str(PROJECT_ROOT / "configs" / "controller-small.toml")) == "configs/controller-small.toml"
    )
    outside = str(tmp_path / "mine.toml")
    assert _portable(outside) == outside


def _statuses(doc: dict) -> dict[str, str]:
    return {m["name"]: m["status"] for m in doc["mutants"]}


@pytest.mark.slow  # 1.4 CPU-s in a loaded default run (2026-11-29)
def test_a_mutant_no_entry_reaches_is_not_covered_and_runs_nothing(tmp_path: Path) -> None:
    """The entries' lines are traced once; a mutant of a statement no entry executes is "not
    covered" at once (no worker runs), the others run as before."""
    ids = [f"{TOY}:64:11:gt-ge", f"{TOY}:42:11:lt-le"]
    code, doc = _mutate(tmp_path, "--set", "limit=2", "--no-catalogue", "--ids", ",".join(ids))
    assert code == 1 and _statuses(doc) == {ids[0]: "not covered", ids[1]: "killed"}
    first = doc["mutants"][0]
    assert first["cells"]["system"]["status"] == "not run" and first["seconds"] < 0.5
    assert doc["score"]["not covered"] == 1 and doc["score"]["score"] == 0.5
    cov = doc["line_coverage"]["files"][TOY]
    assert 64 in cov["missed"] and cov["executed"] < cov["statements"]
    # the release report reads it: the not-covered mutant among the survivors, the statements
    from explorer.report.mutation import _mutation
    from explorer.tracefile import mutation_problem

    assert mutation_problem(doc) is None
    html = _mutation(mutation_summary(doc))
    assert "not covered" in html and "statements" in html and f"<code>{TOY}</code>" in html
    # grouped by function; without a catalogue none has a reason
    assert cov["functions"]["unused_rule"] == {"lines": [64], "why": None}
    assert doc["line_coverage"]["explained"] == 0 and "no reason given" in html


@pytest.mark.slow  # 1.0 CPU-s in a loaded default run (2026-11-29)
def test_the_catalogue_says_why_a_statement_is_never_executed(tmp_path: Path) -> None:
    """An ``[unreached]`` table (beside ``[equivalent]``) gives, per function, why no entry
    executes its missed statements: the measure counts them, the report shows the reason."""
    eq = tmp_path / "eq.toml"
    eq.write_text(f'[unreached]\n"{TOY}::unused_rule" = "kept to show a mutant no entry reaches"\n')
    ids = f"{TOY}:64:11:gt-ge"
    code, doc = _mutate(tmp_path, "--set", "limit=2", "--no-catalogue", "--ids", ids, "--equivalent", str(eq))
    assert code == 1  # the mutant is not covered: not killed
    cov = doc["line_coverage"]
    assert cov["files"][TOY]["functions"]["unused_rule"]["why"] == "kept to show a mutant no entry reaches"
    assert 0 < cov["explained"] < cov["statements"] - cov["executed"]
    from explorer.mutation.score import format_matrix
    from explorer.report.mutation import _mutation

    assert f"{cov['explained']} have a reason" in format_matrix(doc)
    assert "kept to show a mutant no entry reaches" in _mutation(mutation_summary(doc))
    eq.write_text('[unreached]\n"x" = 3\n')
    assert main(["mutate", "--system", "tests.toy_mutation:make", "--quiet", "--no-catalogue", "--ids", ids,
                 "--equivalent", str(eq)]) == 2  # fmt: skip


def test_every_unreached_reason_names_a_function_of_the_code_as_it_is() -> None:
    """The ``[unreached]`` reasons are keyed by function; a key whose function was renamed or
    moved is stale (and its statements would show with no reason)."""
    from explorer.mutation.command import load_equivalent
    from explorer.mutation.line_coverage import unreached_keys_missing

    why = load_equivalent(ROOT / "invariants" / "mutants" / "controller_equivalent.toml", "unreached")
    assert why and unreached_keys_missing(why, ROOT) == []


@pytest.mark.slow
def test_routing_changes_no_verdict_on_the_toy(tmp_path: Path) -> None:
    """Every source mutant of the toy, routed and not: the same status, except that a mutant
    no entry reaches is "not covered" where the unrouted run found it survived."""
    base = ["--set", "limit=2", "--no-catalogue", "--all-source", "--source", TOY]
    _, routed = _mutate(tmp_path, *base)
    _, full = _mutate(tmp_path, *base, "--no-routing")
    a, b = _statuses(routed), _statuses(full)
    assert a.keys() == b.keys() and len(a) > 20
    for name in a:
        assert a[name] == b[name] or (a[name] == "not covered" and b[name] == "survived"), name
    assert "not covered" in a.values()


@pytest.mark.slow
def test_routing_changes_no_verdict_on_a_controller_sample(tmp_path: Path) -> None:
    """A seeded sample of controller source mutants against two suite entries, routed and not:
    the same statuses (a routed mutant skips only entries that never execute its statement)."""
    base = ["--suite", str(ROOT / "configs" / "release.toml"), "--entries", "controller-small,controller-topic-creation",
            "--no-catalogue", "--sample", "16", "--seed", "3", "--source", "model/controller"]  # fmt: skip
    docs = []
    for extra in ([], ["--no-routing"]):
        out = tmp_path / f"m{len(docs)}.json"
        main(["mutate", "--quiet", "--json", str(out), *base, *extra])
        docs.append(json.loads(out.read_text()))
    a, b = _statuses(docs[0]), _statuses(docs[1])
    assert a.keys() == b.keys() and len(a) == 16
    for name in a:
        assert a[name] == b[name] or (a[name] == "not covered" and b[name] == "survived"), (
            name,
            a[name],
            b[name],
        )


@pytest.mark.slow
def test_entries_run_with_their_reduction_as_in_the_release(tmp_path: Path) -> None:
    """A suite entry with ``reduce = "symmetry"`` runs reduced under mutate too (11,604 states,
    the release's count, not the full 20,374), so mutants of the symmetry renamer are reached."""
    out = tmp_path / "m.json"
    main(["mutate", "--suite", str(ROOT / "configs" / "release.toml"), "--entries", "controller-spare-brokers",
          "--no-catalogue", "--source", "model/controller/renamer.py", "--sample", "2", "--seed", "1",
          "--quiet", "--json", str(out)])  # fmt: skip
    doc = json.loads(out.read_text())
    assert doc["baseline"]["controller-spare-brokers"]["distinct_states"] == 11_604
    assert doc["line_coverage"]["files"]["model/controller/renamer.py"]["executed"] > 100


def test_every_equivalent_mutant_names_a_mutant_of_the_code_as_it_is() -> None:
    """The equivalent-mutant catalogue is keyed by source positions, which move when the model
    is edited: every key must still name a source mutant of today's code (or a catalogue
    mutant), so a stale reason never silently excuses a different mutant."""
    from explorer.mutation.command import _catalogue, load_equivalent

    keys = load_equivalent(ROOT / "invariants" / "mutants" / "controller_equivalent.toml")
    files = sorted({ROOT / k.split(":")[0] for k in keys if ":" in k})
    ids = {m.id for m in generate_files(ROOT, files)}
    stale = sorted(k for k in keys if k not in ids and k not in _catalogue("controller"))
    assert keys and stale == []


def test_a_keyed_equivalent_survives_an_edit_elsewhere_in_the_file(tmp_path: Path) -> None:
    """A table key (:attr:`SourceMutant.key`, ``file::f@path:op``) names the same mutant after
    lines are added above the function and inside it above the node's statement, where a
    ``file:line:col:op`` key would name another place; a key whose function is gone stays
    unresolved, so it shows as stale."""
    from explorer.mutation.source import generate, resolve_keys

    src = "def f(a):\n    return a < 2\n"
    (tmp_path / "m.py").write_text(src)
    m = next(x for x in generate("m.py", src) if x.operator == "lt-le")
    assert m.key == "m.py::f@body[0].value:lt-le"
    (tmp_path / "m.py").write_text("X = 1\nY = 2\n\ndef f(a):\n    # why\n    return a < 2\n")
    moved = resolve_keys({m.key: "why", "m.py::g@body[0].value:lt-le": "gone"}, tmp_path)
    ids = {x.id for x in generate("m.py", (tmp_path / "m.py").read_text())}
    assert moved == {"m.py:6:11:lt-le": "why", "m.py::g@body[0].value:lt-le": "gone"}
    assert "m.py:6:11:lt-le" in ids and m.id not in ids


@pytest.mark.slow  # two traced entries and a mutant, each in a subprocess: about 2 CPU-s
def test_routing_credits_what_the_import_runs_to_every_entry(tmp_path: Path) -> None:
    """A function body run while the model is imported (here a continuation class's
    ``__init_subclass__``, which gives a one-field continuation its field's property) is reached
    by every entry, not only by the first one traced: each entry is traced in a process of its
    own. The 300-mutant measure at 907ad5d, which traced every entry in one process, routed this
    mutant to controller-small alone and found it surviving; controller-topic-creation kills it."""
    file = "model/controller/continuations.py"
    source = (ROOT / file).read_text()
    line = next(i for i, t in enumerate(source.splitlines(), 1) if "names[0], property(itemgetter(1))" in t)
    mid = max(
        (m for m in generate(file, source) if m.line == line and m.operator == "int+1"), key=lambda m: m.col
    ).id
    out = tmp_path / "m.json"
    main(["mutate", "--quiet", "--json", str(out), "--suite", str(ROOT / "configs" / "release.toml"),
          "--entries", "controller-small,controller-topic-creation", "--no-catalogue", "--ids", mid])  # fmt: skip
    (m,) = json.loads(out.read_text())["mutants"]
    assert m["status"] == "killed"
    cell = m["cells"]["controller-topic-creation"]
    assert cell["property"] == "no_leaderless_partition_when_quiet" and cell["length"] == 12


@pytest.mark.slow  # two worker processes and two seconds of sleeping
def test_timeout_factor_bounds_a_mutant_by_the_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``--timeout-factor`` a mutant 40 times slower than the baseline runs to its end
    (2 s) and survives; with it, its budget is a few baselines (here the floor, lowered to
    0.3 s) and it times out there, counted apart from the kills."""
    import explorer.mutation.command as mutate_module

    def run(*extra: str) -> dict[str, object]:
        out = tmp_path / f"m{len(extra)}.json"
        main(["mutate", "--system", "tests.toy_slow:make", "--quiet", "--json", str(out), *extra])
        return json.loads(out.read_text())

    doc = run()
    assert doc["mutants"][0]["status"] == "survived" and doc["mutants"][0]["seconds"] >= 2.0
    monkeypatch.setattr(mutate_module, "MIN_MUTANT_SECONDS", 0.3)
    doc = run("--timeout-factor", "2")
    slow = doc["mutants"][0]
    assert slow["status"] == "timeout" and slow["seconds"] < 2.0, slow
    assert doc["baseline"]["system"]["status"] == "survived"
