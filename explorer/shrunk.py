"""A shrunk counterexample (:class:`Shrunk`) and the ways it is published: readable
steps, a replayable trace file, a runnable pytest module (:func:`pytest_source`).

:mod:`explorer.shrink` makes one; this module only holds and renders it.

Example
-------
>>> from explorer.search import trace_steps
>>> out = Shrunk("grid", {"n": 2}, "sum_below_limit", "always", "a + b < 1",
...              trace_steps([(0, 0), (1, 0)], ["counter 0 increments"]), 1, {"n": 3})
>>> out.length, out.config_changes()
(1, ['n 3 -> 2'])
"""

from __future__ import annotations

import builtins
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from explorer.core import TraceStep, Violation
from explorer.datafiles import check_system_ref
from explorer.tracefile import trace_document

__all__ = ["Shrunk", "identifier", "pytest_source", "show_value"]


@dataclass
class Shrunk:
    """A shrunk counterexample. Unpacks as ``(config, steps)``."""

    model: str
    config: dict[str, Any]
    property: str
    kind: str
    doc: str
    steps: list[TraceStep]
    original_length: int
    original_config: dict[str, Any]
    system_ref: str | None = None
    notes: list[str] = field(default_factory=list)
    #: why it fails at its end, in the model's words (:mod:`explorer.explain`)
    explanation: list[str] = field(default_factory=list)
    #: a liveness lasso's loop: the index of the step whose state the trace returns to
    loop_start: int | None = None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.config, self.steps))

    @builtins.property
    def length(self) -> int:
        """The number of steps (actions) of the shrunk trace."""
        return len(self.steps) - 1

    def config_changes(self) -> list[str]:
        """``key old -> new`` for every key the shrinker changed."""
        return [
            f"{k} {show_value(self.original_config.get(k))} -> {show_value(v)}"
            for k, v in self.config.items()
            if self.original_config.get(k) != v
        ]

    def violation(self) -> Violation:
        """The shrunk counterexample as a :class:`Violation`."""
        msg = "no successor (deadlock)" if self.property == "deadlock" else f"{self.property} does not hold"
        return Violation(
            self.property,
            self.kind,
            self.doc,
            msg,
            self.length,
            self.steps,
            loop_start=self.loop_start,
            explanation=list(self.explanation),
        )

    def trace_document(self) -> dict[str, Any]:
        """The replayable trace file (schema ``kafka-mc/trace/1``)."""
        return trace_document(self.model, self.config, self.violation(), self.system_ref)

    def readable(self) -> str:
        """The minimal trace as numbered steps with what each changed."""
        head = f"{self.model}: {self.property} ({self.kind}) violated after {self.length} steps"
        loop = self.loop_start
        if loop is not None:
            head += f": a prefix of {loop} steps, then a loop of {self.length - loop} steps repeated forever"
        lines = [head, *(f"  why: {line}" for line in self.explanation)]
        if self.config:
            lines.append("  config: " + ", ".join(f"{k}={show_value(v)}" for k, v in self.config.items()))
        for st in self.steps:
            mark = "  <- the loop starts here" if st.index == loop else ""
            lines.append(f"  {st.index:>3}  {st.action or 'initial state'}{mark}")
            lines.extend(f"         {ch}" for ch in st.changes)
        if loop is not None:
            lines.append(f"  (back to the state of step {loop}: the loop repeats)")
        return "\n".join(lines)

    def pytest_source(self, mode: str = "bug") -> str:
        """A runnable pytest module reproducing this counterexample (see :func:`pytest_source`)."""
        return pytest_source(self, mode)


def show_value(v: Any) -> str:
    """A config value as the shrinker prints it (JSON for lists, strings, bools, None).

    >>> show_value([1, 2]), show_value(3)
    ('[1, 2]', '3')
    """
    return json.dumps(v) if isinstance(v, (list, str, bool)) or v is None else str(v)


_CHECKS = {
    "always": """\
def violated_at_end(system, props, states):
    \"\"\"True when the property fails in the trace's last state.\"\"\"
    return not props[PROPERTY].check(states[-1])
""",
    "transition": """\
def violated_at_end(system, props, states):
    \"\"\"True when the trace's last step (s, action, s') violates the property.\"\"\"
    prev, last = states[-2], states[-1]
    return any(
        str(a) == STEPS[-1]["action"] and t == last and not props[PROPERTY].check(prev, a, t)
        for a, t in system.successors(prev)
    )
""",
    "deadlock": """\
def violated_at_end(system, props, states):
    \"\"\"True when the trace's last state has no successor and is not terminal.\"\"\"
    last = states[-1]
    is_terminal = getattr(system, "is_terminal", lambda s: False)
    return not list(system.successors(last)) and not is_terminal(last)
""",
}


def _doc_safe(text: str) -> str:
    """Text that can sit inside a triple-quoted docstring and read the same."""
    return text.replace("\\", "\\\\").replace('"""', '\\"""')


def identifier(text: str) -> str:
    """``text`` as a lower-case Python identifier.

    >>> identifier("Grid:sum below")
    'grid_sum_below'
    """
    return re.sub(r"\W+", "_", text).strip("_").lower() or "trace"


def pytest_source(shrunk: Shrunk, mode: str = "bug") -> str:
    """A pytest module that replays ``shrunk`` and checks its property at the end.

    ``mode="bug"``: the test asserts the violation, so it **passes while the bug
    exists** and fails (with a message saying so) when the trace stops reproducing
    it. ``mode="fixed"``: the test asserts that the trace no longer replays or that
    the property holds at its end (a regression test once the bug is fixed).

    >>> from explorer.search import trace_steps
    >>> out = Shrunk("grid", {"n": 2}, "sum_below_limit", "always", "a + b < 1",
    ...              trace_steps([(0, 0), (1, 0)], ["counter 0 increments"]), 1, {"n": 2}, "tests.toys:grid")
    >>> src = pytest_source(out)
    >>> "def test_sum_below_limit_is_violated" in src and "replay_steps(system, STEPS)" in src
    True
    """
    if mode not in ("bug", "fixed"):
        raise ValueError(f"mode: expected 'bug' or 'fixed', got {mode!r}")
    if shrunk.kind == "eventually":
        return _lasso_source(shrunk, mode)
    steps = [{"action": s.action, "fingerprint": s.fingerprint} for s in shrunk.steps]
    steps_src = "[\n" + "".join(f"    {s!r},\n" for s in steps) + "]"
    listing = "\n".join(f"    {s.index:>3}  {s.action or 'initial state'}" for s in shrunk.steps)
    if shrunk.system_ref:
        # the generated test imports this module: dotted Python names only, written as a literal
        build = f'''SYSTEM = {check_system_ref(shrunk.system_ref, "system")!r}


def build():
    """The system and its properties, from the factory with CONFIG as keywords."""
    module, _, factory = SYSTEM.partition(":")
    system = getattr(importlib.import_module(module), factory)(**CONFIG)
    return system, {{p.name: p for p in system.properties()}}
'''
        imports = "import importlib\n\nfrom explorer.tracefile import ReplayError, replay_steps\n"
    else:
        build = f'''MODEL = {shrunk.model!r}


def build():
    """The model and its properties in CONFIG."""
    spec = get_model(MODEL)
    config = load_config(spec.config_cls, values=CONFIG)
    return spec.build(config), {{p.name: p for p in spec.properties(config)}}
'''
        imports = (
            "from explorer.config import load_config\n"
            "from explorer.tracefile import ReplayError, replay_steps\n"
            "from invariants import get_model\n"
        )
    imports += "from explorer.search.shrink_hypothesis import reproduces\n"
    if mode == "bug":
        imports = imports.replace("ReplayError, ", "")
        purpose = (
            "This test PASSES while the bug exists: it asserts that the property is violated\n"
            "at the end of the trace. It fails once the trace no longer replays (a step is not\n"
            "enabled, or a state differs) or the property holds there."
        )
        test = f"""def test_{identifier(shrunk.property)}_is_violated():
    system, props = build()
    states = replay_steps(system, STEPS)  # raises ReplayError if a step no longer replays
    assert violated_at_end(system, props, states), (
        f"{{PROPERTY}} holds at the end of the {{len(STEPS) - 1}}-step trace: the bug is gone"
    )


def test_{identifier(shrunk.property)}_is_violated_through_hypothesis():
    # the same steps replayed as a Hypothesis example (what ``kafka-mc shrink`` shrank)
    assert reproduces(_build_for_hypothesis, CONFIG, ACTIONS, PROPERTY), (
        f"{{PROPERTY}}: the trace no longer fails as a Hypothesis example: the bug is gone"
    )
"""
    else:
        purpose = (
            "This test PASSES once the bug is fixed: the trace no longer replays, or the\n"
            "property holds at its end. It fails while the counterexample still reproduces."
        )
        test = f"""def test_{identifier(shrunk.property)}_is_fixed():
    system, props = build()
    try:
        states = replay_steps(system, STEPS)
    except ReplayError:
        return  # the counterexample's path no longer exists
    assert not violated_at_end(system, props, states), (
        f"{{PROPERTY}} is still violated after the {{len(STEPS) - 1}}-step trace"
    )


def test_{identifier(shrunk.property)}_is_fixed_through_hypothesis():
    # the same steps replayed as a Hypothesis example no longer fail
    assert not reproduces(_build_for_hypothesis, CONFIG, ACTIONS, PROPERTY), (
        f"{{PROPERTY}} still fails as a Hypothesis example"
    )
"""
    config_src = "{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in shrunk.config.items()) + "}"
    doc_line = _doc_safe(shrunk.doc)
    listing = _doc_safe(listing)
    why = "".join(f"\n    {line}" for line in shrunk.explanation)
    why = _doc_safe(f"\n\nWhy it fails at the end (when it was shrunk):{why}") if why else ""
    head = _doc_safe(f"{shrunk.property} ({shrunk.kind}) in {shrunk.model}").replace("\n", " ")
    return f'''"""Counterexample of {head}, shrunk by kafka-mc shrink.

{doc_line}

{purpose}

Steps:
{listing}{why}
"""

{imports}
CONFIG = {config_src}
PROPERTY = {shrunk.property!r}
STEPS = {steps_src}
ACTIONS = [step["action"] for step in STEPS[1:]]

{build}

def _build_for_hypothesis(values):
    """``build`` as :func:`explorer.search.shrink_hypothesis.reproduces` calls it."""
    system, props = build()
    return system, list(props.values()), dict(values)


{_CHECKS[shrunk.kind]}

{test}'''


def _lasso_source(shrunk: Shrunk, mode: str) -> str:
    """:func:`pytest_source` for a liveness counterexample (``eventually`` / leads-to): the
    trace replayed step by step and checked whole as ``kafka-mc replay`` checks a lasso
    (:func:`explorer.search.liveness.replay_lasso`: the loop closes, Q never holds in it, P holds
    before it, the loop is weakly fair); or, without a loop, the behaviour ends without Q."""
    steps = [{"action": s.action, "fingerprint": s.fingerprint} for s in shrunk.steps]
    steps_src = "[\n" + "".join(f"    {s!r},\n" for s in steps) + "]"
    listing = "\n".join(
        f"    {s.index:>3}  {s.action or 'initial state'}"
        + ("  <- the loop starts here" if s.index == shrunk.loop_start else "")
        for s in shrunk.steps
    )
    config_src = "{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in shrunk.config.items()) + "}"
    if shrunk.system_ref:
        build = f'''SYSTEM = {check_system_ref(shrunk.system_ref, "system")!r}


def build():
    """The system and its properties, from the factory with CONFIG as keywords."""
    module, _, factory = SYSTEM.partition(":")
    system = getattr(importlib.import_module(module), factory)(**CONFIG)
    return system, {{p.name: p for p in system.properties()}}
'''
        imports = "import importlib\n\n"
    else:
        build = f'''MODEL = {shrunk.model!r}


def build():
    """The model and its properties in CONFIG."""
    spec = get_model(MODEL)
    config = load_config(spec.config_cls, values=CONFIG)
    return spec.build(config), {{p.name: p for p in spec.properties(config)}}
'''
        imports = "from explorer.config import load_config\nfrom invariants import get_model\n"
    imports += "from explorer.search.liveness import replay_lasso\nfrom explorer.tracefile import ReplayError, replay_steps\n"
    name = identifier(shrunk.property)
    if mode == "bug":
        purpose = (
            "This test PASSES while the bug exists: it asserts that the trace is still a lasso\n"
            "counterexample of the property. It fails once a step no longer replays or the lasso\n"
            "is no longer one (Q holds in the loop, the loop is not weakly fair...)."
        )
        test = f"""def test_{name}_is_violated():
    system, props = build()
    states = replay_steps(system, STEPS)  # raises ReplayError if a step no longer replays
    ok, lines = replay_lasso(system, props[PROPERTY], states, STEPS, LOOP_START)
    assert ok, f"{{PROPERTY}}: the trace is no longer a counterexample: {{lines}}"
"""
    else:
        purpose = (
            "This test PASSES once the bug is fixed: the trace no longer replays, or it is no\n"
            "longer a lasso counterexample of the property. It fails while it still is."
        )
        test = f"""def test_{name}_is_fixed():
    system, props = build()
    try:
        states = replay_steps(system, STEPS)
    except ReplayError:
        return  # the counterexample's path no longer exists
    ok, lines = replay_lasso(system, props[PROPERTY], states, STEPS, LOOP_START)
    assert not ok, f"{{PROPERTY}} is still violated by the lasso: {{lines}}"
"""
    why = "".join(f"\n    {line}" for line in shrunk.explanation)
    why = _doc_safe(f"\n\nWhy it fails (when it was shrunk):{why}") if why else ""
    head = _doc_safe(f"{shrunk.property} ({shrunk.kind}) in {shrunk.model}").replace("\n", " ")
    return f'''"""Lasso counterexample of {head}, shrunk by kafka-mc shrink.

{_doc_safe(shrunk.doc)}

{purpose}

Steps (the loop returns to the state of step {shrunk.loop_start}):
{_doc_safe(listing)}{why}
"""

{imports}
CONFIG = {config_src}
PROPERTY = {shrunk.property!r}
LOOP_START = {shrunk.loop_start!r}
STEPS = {steps_src}

{build}

{test}'''
