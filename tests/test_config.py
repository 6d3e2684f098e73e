"""Config loading: defaults, TOML, --set overrides, validation naming the key."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

import pytest

from explorer.config import ConfigError, describe_keys, key, load_config, validate


class Mode(enum.Enum):
    FIXED = "fixed"
    LEGACY = "legacy"


@dataclass(frozen=True)
class Cfg:
    brokers: int = key(3, "number of brokers", min=1, max=5)
    delays: tuple[int, ...] = key((1, 2), "delays", min=0)
    unclean: bool = key(False, "unclean leader election")
    mode: Mode = key(Mode.FIXED, "elector design")

    def __post_init__(self) -> None:
        validate(self)
        if len(self.delays) > self.brokers:
            raise ConfigError("delays: at most one delay per broker")


def test_defaults_toml_then_overrides(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text('brokers = 4\nmode = "legacy"\n')
    c = load_config(Cfg, f, ["unclean=true", "delays=[0, 4, 4]"])
    assert c == Cfg(4, (0, 4, 4), True, Mode.LEGACY)
    assert load_config(Cfg) == Cfg()


def test_config_table_is_accepted(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text('[meta]\nnote = "x"\n[config]\nbrokers = 2\n')
    assert load_config(Cfg, f).brokers == 2


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("brokers=0", "brokers: must be at least 1, got 0"),
        ("brokers=9", "brokers: must be at most 5, got 9"),
        ("brokers=true", "brokers: expected an integer"),
        ("brokers=x", "brokers: expected an integer"),
        ("delays=3", "delays: expected a list"),
        ("delays=[1, -1]", "delays[1]: must be at least 0, got -1"),
        ("unclean=3", "unclean: expected true or false"),
        ("mode=modern", "mode: expected one of fixed, legacy"),
        ("delays=[1,1,1,1]", "delays: at most one delay per broker"),
        ("zookeepers=3", "unknown key 'zookeepers'"),
    ],
)
def test_errors_name_the_key(override: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(Cfg, overrides=[override])
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_direct_construction_is_validated() -> None:
    with pytest.raises(ConfigError, match="brokers: must be at least 1"):
        Cfg(brokers=0)


def test_describe_keys() -> None:
    rows = {r[0]: r for r in describe_keys(Cfg)}
    assert rows["brokers"] == ("brokers", "int", "3", "number of brokers (>= 1; <= 5)")
    assert rows["mode"][1] == "one of fixed, legacy" and rows["mode"][2] == "fixed"
    assert rows["delays"][2] == "[1, 2]" and rows["unclean"][2] == "false"


class StrMode(enum.StrEnum):
    FORCE = "force"
    GRACEFUL = "graceful"


@dataclass(frozen=True)
class StrCfg:
    mode: StrMode = key(StrMode.FORCE, "stop mode")

    def __post_init__(self) -> None:
        validate(self)


def test_str_enum_built_from_plain_string_becomes_the_member() -> None:
    c = StrCfg(mode="graceful")  # type: ignore[arg-type]
    assert type(c.mode) is StrMode and c.mode is StrMode.GRACEFUL
