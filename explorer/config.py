"""Model configurations: frozen dataclasses loaded from TOML and ``--set key=value``.

Each field of a config dataclass is declared with :func:`key`, which records its
meaning and bounds; :func:`validate` checks every field and raises
:class:`ConfigError` with one line naming the bad key. Values come from the defaults,
then a TOML file, then ``--set`` overrides, in that order.

Example
-------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Cfg:
...     brokers: int = key(3, "number of brokers", min=1)
...     delays: tuple[int, ...] = key((1, 2), "delays to add", min=1)
>>> load_config(Cfg, overrides=["brokers=4", "delays=[2, 5]"])
Cfg(brokers=4, delays=(2, 5))
>>> load_config(Cfg, overrides=["brokers=0"])
Traceback (most recent call last):
...
explorer.config.ConfigError: brokers: must be at least 1, got 0
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import os
import typing
from collections.abc import Iterable
from typing import Any

from explorer.datafiles import DataFileError, loads_toml, read_toml

__all__ = ["ConfigError", "describe_keys", "did_you_mean", "key", "load_config", "parse_override", "validate"]


class ConfigError(ValueError):
    """A bad configuration: the message is one line that names the bad key or file."""


def key(
    default: Any,
    doc: str,
    *,
    min: int | None = None,
    max: int | None = None,
    choices: Iterable[Any] | None = None,
) -> Any:
    """Declare a config field with its default, meaning and bounds.

    ``min``/``max`` apply to an int or to every item of a tuple of ints; ``choices``
    lists the allowed values of a str or enum field.

    >>> f = key(2, "ticks", min=1)
    >>> f.metadata["doc"]
    'ticks'
    """
    meta = {"doc": doc, "min": min, "max": max, "choices": tuple(choices) if choices else None}
    return dataclasses.field(default=default, metadata=meta)


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is tuple:
        args = typing.get_args(tp)
        return f"list of {_type_name(args[0])}" if args else "list"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "one of " + ", ".join(m.value for m in tp)
    return getattr(tp, "__name__", str(tp))


def _coerce(name: str, tp: Any, value: Any, meta: Any) -> Any:
    """Convert a TOML / --set value to the field's type, or raise ConfigError."""
    origin = typing.get_origin(tp)
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{name}: expected a list, got {value!r}")
        item_tp = args[0] if args else Any
        return tuple(_coerce(f"{name}[{i}]", item_tp, v, meta) for i, v in enumerate(value))
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ConfigError(f"{name}: expected true or false, got {value!r}")
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{name}: expected an integer, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{name}: expected a string, got {value!r}")
        return value
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)  # a version-like choice read as a TOML number: 0.8 -> "0.8"
        for m in tp:
            if value == m.value or value == m.name or value is m:
                return m
        allowed = ", ".join(str(m.value) for m in tp)
        raise ConfigError(f"{name}: expected one of {allowed}, got {value!r}")
    return value


def _check_bounds(name: str, value: Any, meta: Any) -> None:
    if isinstance(value, tuple):
        for i, v in enumerate(value):
            _check_bounds(f"{name}[{i}]", v, meta)
        return
    lo, hi, choices = meta.get("min"), meta.get("max"), meta.get("choices")
    if isinstance(value, int) and not isinstance(value, bool):
        if lo is not None and value < lo:
            raise ConfigError(f"{name}: must be at least {lo}, got {value}")
        if hi is not None and value > hi:
            raise ConfigError(f"{name}: must be at most {hi}, got {value}")
    if choices is not None and value not in choices:
        allowed = ", ".join(str(c) for c in choices)
        raise ConfigError(f"{name}: expected one of {allowed}, got {value!r}")


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def validate(config: Any) -> Any:
    """Check every field's type and bounds; return the config or raise ConfigError.

    Call it from a config's ``__post_init__``; cross-field rules follow it there.
    """
    hints = _hints(type(config))
    for f in dataclasses.fields(config):
        v = getattr(config, f.name)
        coerced = _coerce(f.name, hints[f.name], v, f.metadata)
        if coerced is not v:  # e.g. "force" -> Mode.FORCE: equal for a str enum, not the same type
            object.__setattr__(config, f.name, coerced)
        _check_bounds(f.name, getattr(config, f.name), f.metadata)
    return config


def parse_override(text: str) -> tuple[str, Any]:
    """Split ``key=value``; the value is read as a TOML value, else as a bare string.

    >>> parse_override("delays=[1, 2]")
    ('delays', [1, 2])
    >>> parse_override("elector=legacy")
    ('elector', 'legacy')
    >>> parse_override("delays=" + "[" * 100 + "]" * 100)
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: --set delays: nested deeper than 64 levels
    """
    if "=" not in text:
        raise ConfigError(f"--set {text[:80]}: expected key=value")
    name, _, raw = text.partition("=")
    name = name.strip()
    raw = raw.strip()
    if not name:
        raise ConfigError(f"--set {text[:80]}: empty key")
    where = f"--set {name[:80]}"
    try:  # as data (explorer.datafiles): nesting bounded, so no RecursionError at any depth
        value = loads_toml(f"v = {raw}", where)["v"]
    except DataFileError as e:
        if not str(e).startswith(f"{where}: malformed TOML"):  # too deep, a huge integer, ...
            raise ConfigError(str(e)) from None
        value = raw  # not a TOML value: a bare string
    return name, value


def _read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A configuration file's TOML document, read as data (:func:`explorer.datafiles.read_toml`:
    bounded size and depth); ConfigError (one line naming the file) otherwise.

    >>> _read_toml("/nonexistent.toml")
    Traceback (most recent call last):
    ...
    explorer.config.ConfigError: /nonexistent.toml: no such file
    """
    try:
        return read_toml(path)
    except DataFileError as e:
        raise ConfigError(str(e)) from None


def load_config(
    cls: type,
    path: str | os.PathLike[str] | None = None,
    overrides: Iterable[str] = (),
    values: dict[str, Any] | None = None,
) -> Any:
    """Build a validated config of type ``cls`` from defaults, a TOML file and overrides.

    A TOML file may hold the keys at top level or under a ``[config]`` table (other
    tables, such as ``[meta]``, are ignored).
    """
    known = {f.name: f for f in dataclasses.fields(cls)}
    hints = _hints(cls)
    merged: dict[str, Any] = {}
    sources: list[tuple[str, dict[str, Any]]] = []
    if path is not None:
        data = _read_toml(path)
        table = data.get("config", data)
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [config] must be a table")
        if table is not data:  # with a [config] table, the top level holds only it and [meta]
            stray = [k for k in data if k != "config" and not (k == "meta" and isinstance(data[k], dict))]
            if stray:
                raise ConfigError(
                    f"{path}: unknown top-level key {stray[0]!r} (the keys go under [config]; [meta] is free)"
                )
        sources.append(
            (str(path), {k: v for k, v in table.items() if not (k == "meta" and isinstance(v, dict))})
        )
    if values:
        sources.append(("values", values))
    over: dict[str, Any] = {}
    for text in overrides:
        k, v = parse_override(text)
        over[k] = v
    sources.append(("--set", over))
    for origin, table in sources:
        for k, v in table.items():
            if k not in known:
                hint = did_you_mean(k, known) or f" ({len(known)} keys: {_few(known)})"
                where = f"{origin}: " if origin not in ("--set", "values") else ""
                raise ConfigError(f"{where}unknown key {k!r}{hint}")
            merged[k] = _coerce(k, hints[k], v, known[k].metadata)
    try:
        return validate(cls(**merged))
    except ConfigError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e).splitlines()[0]) from None


def _few(names: Iterable[str], most: int = 8) -> str:
    """The first ``most`` names, then how many more (for one-line errors).

    >>> _few("abcdefghij", 3)
    'a, b, c and 7 more; `kafka-mc models NAME` lists them'
    """
    names = list(names)
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[:most])} and {len(names) - most} more; `kafka-mc models NAME` lists them"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices`` to a mistyped ``word``, or "".

    >>> did_you_mean("brokerz", ["brokers", "topics"])
    " (did you mean 'brokers'?)"
    >>> did_you_mean("zzz", ["brokers", "topics"])
    ''
    """
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def describe_keys(cls: type) -> list[tuple[str, str, str, str]]:
    """Rows ``(key, type, default, meaning)`` for ``kafka-mc models``.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class C:
    ...     n: int = key(1, "how many", min=1)
    >>> describe_keys(C)
    [('n', 'int', '1', 'how many (>= 1)')]
    """
    hints = _hints(cls)
    rows = []
    for f in dataclasses.fields(cls):
        doc = f.metadata.get("doc", "")
        lo, hi = f.metadata.get("min"), f.metadata.get("max")
        bounds = []
        if lo is not None:
            bounds.append(f">= {lo}")
        if hi is not None:
            bounds.append(f"<= {hi}")
        if f.metadata.get("choices"):
            bounds.append("one of " + ", ".join(map(str, f.metadata["choices"])))
        if bounds:
            doc = f"{doc} ({'; '.join(bounds)})"
        default = f.default
        if isinstance(default, enum.Enum):
            shown = str(default.value)
        elif isinstance(default, tuple):
            shown = "[" + ", ".join(map(str, default)) + "]"
        else:
            shown = str(default).lower() if isinstance(default, bool) else str(default)
        rows.append((f.name, _type_name(hints[f.name]), shown, doc))
    return rows
