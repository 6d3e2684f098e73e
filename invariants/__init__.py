"""Properties of each model, and the registry of models the CLI knows.

Each module here pairs a model of ``model/`` with its properties and exposes a
``SPEC`` (:class:`explorer.core.ModelSpec`); :data:`MODELS` collects them by name.
"""

from __future__ import annotations

import importlib

from explorer.core import ModelSpec

__all__ = ["MODELS", "MODEL_MODULES", "get_model"]

#: model name -> module in this package that defines its ``SPEC``
MODEL_MODULES: dict[str, str] = {
    "timing-wheel": "invariants.timing_wheel",
    "purgatory": "invariants.purgatory",
    "simple-timing-wheel": "invariants.simple_timing_wheel",
    "controller": "invariants.controller",
}


def get_model(name: str) -> ModelSpec:
    """Return the spec of a registered model (KeyError if unknown).

    >>> get_model("timing-wheel").name
    'timing-wheel'
    """
    module = importlib.import_module(MODEL_MODULES[name])
    spec: ModelSpec = module.SPEC
    return spec


class _Registry(dict[str, ModelSpec]):
    """A lazily loaded mapping of every registered model."""

    def __missing__(self, name: str) -> ModelSpec:
        spec = get_model(name)
        self[name] = spec
        return spec

    def __iter__(self):  # type: ignore[override]
        return iter(MODEL_MODULES)

    def __len__(self) -> int:
        return len(MODEL_MODULES)

    def __contains__(self, name: object) -> bool:
        return name in MODEL_MODULES

    def keys(self):  # type: ignore[override]
        return MODEL_MODULES.keys()


MODELS: dict[str, ModelSpec] = _Registry()
