"""The bug zoo: Kafka controller bugs that shipped, each a named variant of the model.

One module of this package per bug family (``kafka_4229.py``), holding the seam classes that
bring the bug back over today's components (as ``kafka_version = "0.8"`` brings back the 0.8
controller, ``model/controller/v08.py``), registered with :func:`bug` under the JIRA's name.
A bug may also imply values of the variant keys it needs (``implies``: KAFKA-1120's
``broker_epoch = false``), as ``kafka_version`` does. Nothing else is edited to add one:
dropping the module into the package registers it, the config key ``bug`` lists it
(``invariants/mutants/controller.py``) and ``docs/bugs.md`` tells its story; the release finds
each one (``configs/release.toml``, ``tests/test_bugs.py``).

>>> sorted(BUGS)[:2]
['KAFKA-10548', 'KAFKA-1096']
>>> BUGS["KAFKA-1120"].implies
(('broker_epoch', False),)
>>> from model.controller.system import SEAMS
>>> compose("KAFKA-1681", SEAMS)["kafka_controller"].__name__
'Kafka1681'
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BUGS", "NONE", "Bug", "bug", "compose", "names"]

NONE = "none"
"""The name of the model without a historic bug."""


@dataclass(frozen=True)
class Bug:
    """One historic bug: its JIRA (``name``), the related JIRAs of its family, the Kafka
    versions that shipped it, what went wrong in one line, the fix, the seam classes that
    bring it back (``(seam, class)`` pairs) and the variant keys it implies."""

    name: str
    versions: str
    doc: str
    fixed_by: str
    family: tuple[str, ...] = ()
    seams: tuple[tuple[str, type], ...] = ()
    implies: tuple[tuple[str, Any], ...] = ()


BUGS: dict[str, Bug] = {}
"""Every registered bug by its JIRA name."""


def _seam_of(cls: type) -> str:
    """The seam a class replaces: the one whose default class it subclasses."""
    from model.controller.system import SEAMS

    return next(name for name, base in SEAMS.items() if issubclass(cls, base))


def bug(
    name: str,
    *,
    versions: str,
    doc: str,
    fixed_by: str,
    family: tuple[str, ...] = (),
    implies: Mapping[str, Any] | None = None,
    also: tuple[type, ...] = (),
) -> Callable[[type], type]:
    """Register the decorated seam class (a subclass of one of ``SEAMS``' classes), with the
    classes ``also`` names, as bug ``name``; ``implies``: variant keys the bug needs."""

    def add(cls: type) -> type:
        register(
            name,
            versions=versions,
            doc=doc,
            fixed_by=fixed_by,
            family=family,
            implies=implies,
            classes=(cls, *also),
        )
        return cls

    return add


def register(
    name: str,
    *,
    versions: str,
    doc: str,
    fixed_by: str,
    family: tuple[str, ...] = (),
    implies: Mapping[str, Any] | None = None,
    classes: tuple[type, ...] = (),
) -> Bug:
    """Register bug ``name`` (see :func:`bug`); a bug that is only variant keys has no class."""
    if name in BUGS:
        raise ValueError(f"bug {name!r} registered twice")
    found = Bug(
        name,
        versions,
        doc,
        fixed_by,
        family,
        tuple((_seam_of(c), c) for c in classes),
        tuple(sorted((implies or {}).items())),
    )
    BUGS[name] = found
    return found


def names() -> tuple[str, ...]:
    """``none`` and every bug's name, sorted (the choices of the config key ``bug``)."""
    return (NONE, *sorted(BUGS))


_COMPOSED: dict[tuple[type, type], type] = {}


def compose(name: str, classes: Mapping[str, type]) -> dict[str, type]:
    """The seams of bug ``name`` over ``classes`` (the defaults, or a mutant's class in one
    seam): in each seam the bug replaces, its class, over the one given."""
    from model.controller.system import SEAMS

    out = dict(classes)
    if name == NONE:
        return out
    for seam, cls in BUGS[name].seams:
        given = classes[seam]
        if given is SEAMS[seam]:
            out[seam] = cls
            continue
        got = _COMPOSED.get((given, cls))
        if got is None:
            got = type(given.__name__ + cls.__name__, (given, cls), {})
            got.__module__ = given.__module__
            _COMPOSED[(given, cls)] = got
        out[seam] = got
    return out


for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")
