"""The public API: :func:`check` a system's properties with one :class:`CheckOptions`.

The CLI (:mod:`explorer.cli`) and the release suite (:mod:`explorer.release`) are thin
users of it (through :mod:`explorer.frontend`, which also resolves model names).

Example
-------
>>> from explorer.core import always
>>> class Ring:
...     def init_states(self): return [0]
...     def successors(self, s): return [("inc", (s + 1) % 4)]
>>> r = check(Ring(), [always("lt3", lambda s: s < 3, "stays below 3")], CheckOptions(keep_going=True))
>>> r.exit_reason.value, r.violations[0].length
('violation', 3)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from explorer.core import CheckResult, Property
from explorer.engines import ENGINES, get_engine
from explorer.engines.base import CheckOptions, EngineSetupError, ModelError, UntrustedResultError

__all__ = ["ENGINES", "CheckOptions", "EngineSetupError", "ModelError", "UntrustedResultError", "check"]

_DEFAULT = CheckOptions()


def check(system: Any, properties: Iterable[Property], options: CheckOptions = _DEFAULT) -> CheckResult:
    """Run the engine ``options.engine`` names on ``system`` and return its result.

    Parameters
    ----------
    system:
        A transition system (``init_states``, ``successors``; see
        :class:`explorer.core.TransitionSystem`), or for ``engine="symbolic"`` a proof
        target's name.
    properties:
        The properties to check (the ``symbolic`` engine ignores them).
    options:
        Engine, budgets, switches and the engine's own options.

    Returns
    -------
    CheckResult
        The same result type, whatever the engine.

    Raises
    ------
    ValueError
        An unknown engine or a bad option (one line).
    EngineSetupError
        The engine cannot run here (e.g. Spark without Java 17).
    UntrustedResultError
        The engine cannot give a trustworthy answer (a fingerprint or hash collision).

    Examples
    --------
    >>> from tests.toys import Grid
    >>> check(Grid(3), Grid(3).properties(), CheckOptions(workers=2)).distinct_states
    16
    >>> walks = CheckOptions(engine="simulate", engine_options={"seed": 1, "walks": 5})
    >>> check(Grid(3), [], walks).budget  # a sampling engine never shows that a property holds
    'walks'
    >>> check(Grid(3), [], CheckOptions(workers=2, reduce="por"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --reduce por needs one process: ...

    ``--reduce symmetry`` with ``eventually`` or leads-to properties on a system with symmetries
    is refused (``explorer.search.symmetry.liveness_refusal``: the quotient cannot judge weak
    fairness per action).
    """
    why = options.refusal()
    if why is not None:
        raise ValueError(why)
    if options.reduce == "symmetry":
        from explorer.search.symmetry import liveness_refusal

        properties = list(properties)
        why = liveness_refusal(system, properties)
        if why is not None:
            raise ValueError(why)
    return get_engine(options.engine)(system, properties, options)
