"""The option table (options.py) is the one source of every option's facts: both
commands, Settings and the add-on's config.yaml and translations must agree with it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from kokoro_say.main import main as say_main

from wyoming_kokoro import __main__ as server_command
from wyoming_kokoro import options
from wyoming_kokoro.__main__ import main as server_main
from wyoming_kokoro.settings import Settings

ADDON = Path(__file__).resolve().parents[2] / "addon"
# Options only the add-on has, each turned into flags by its run script.
ADDON_ONLY = {
    "model": "embedded, or a variant to --download",
    "http_api": "--http on the add-on's declared port",
}


@pytest.fixture(scope="module")
def addon_config() -> dict[str, Any]:
    return yaml.safe_load((ADDON / "config.yaml").read_text(encoding="utf-8"))


def params_of(command: click.Command) -> dict[str, click.Parameter]:
    return {param.name: param for param in command.params if param.name}


@pytest.mark.parametrize("command", [server_main, say_main], ids=["server", "kokoro-say"])
@pytest.mark.parametrize("option", options.SHARED, ids=lambda o: o.flag)
def test_both_commands_take_shared_options_from_the_table(
    command: click.Command, option: options.Option
) -> None:
    param = params_of(command)[option.name]
    assert param.envvar == option.envvar
    assert param.default == option.default
    if option.low is not None or option.high is not None:
        assert (param.type.min, param.type.max) == (option.low, option.high)  # type: ignore[attr-defined]


def test_every_server_option_is_in_the_table() -> None:
    table = {option.name for option in options.SERVER}
    assert set(params_of(server_main)) - {"version", "help"} == table
    assert len(table) == len(options.SERVER), "an option is listed twice"


def test_settings_defaults_are_the_table_defaults() -> None:
    # The fields that take their flag's value as it is (the others are translated).
    groups = {f.name: f.default_factory for f in dataclasses.fields(Settings) if f.name != "debug"}
    fields = {
        f.name: f.default
        for group, cls in groups.items()
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if f.name in server_command._AS_GIVEN[group]
    }
    compared = 0
    for option in options.SERVER:
        if option.name in fields and option.default is not None:
            assert fields[option.name] == option.default, option.name
            compared += 1
    assert compared >= 15  # the groups' fields were found


def test_env_and_flag_reach_settings_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOKORO_SPEED", "1.5")
    monkeypatch.setenv("KOKORO_MAX_CALL_TOKENS", "200")
    context = server_main.make_context("wyoming-kokoro", ["--threads", "2"])
    assert (context.params["speed"], context.params["max_call_tokens"]) == (1.5, 200)
    assert context.params["threads"] == 2
    context = say_main.make_context("kokoro-say", [])
    assert (context.params["speed"], context.params["max_call_tokens"]) == (1.5, 200)


def test_a_value_out_of_range_is_refused_by_name() -> None:
    with pytest.raises(click.BadParameter, match=re.escape("2.5 is not in the range 0.5<=x<=2.0")):
        server_main.make_context("wyoming-kokoro", ["--speed", "2.5"])
    with pytest.raises(ValueError, match=re.escape("speed must be 0.5-2.0, got 3")):
        options.SPEED.check(3)


def addon_schema(option: options.Option) -> tuple[str, Any]:
    """The schema type and default the add-on must declare for a table option."""
    if option.kind == "flag":
        negated = option.flag.startswith("--no-")
        return "bool", not option.default if negated else option.default
    if option.kind in ("int", "float"):
        # A float whose bounds the table writes as whole numbers (seconds) is taken in
        # whole units by the add-on; bounds written as floats (a volume) stay floats.
        low, high = option.low, option.high
        assert low is not None and high is not None, f"{option.flag}: the add-on needs a range"
        whole = isinstance(low, int) and isinstance(high, int)
        kind = "int" if option.kind == "int" or whole else "float"
        bounds = f"{low},{high}" if kind == "float" else f"{int(low)},{int(high)}"
        return f"{kind}({bounds})", option.default
    return "str?", option.default


def test_the_addon_schema_follows_the_table(addon_config: dict[str, Any]) -> None:
    schema, defaults = addon_config["schema"], addon_config["options"]
    in_table = {option.addon: option for option in options.SERVER if option.addon}
    assert set(schema) == set(in_table) | set(ADDON_ONLY), "an add-on option is unaccounted for"
    for name, option in in_table.items():
        kind, default = addon_schema(option)
        if kind == "str?":
            # A secret is typed password? so the Supervisor hides it; unset means no value.
            assert schema[name] in ("str?", "password?"), name
            assert defaults.get(name) in (None, ""), name
            continue
        assert schema[name] == kind, f"{name}: {schema[name]} is not {kind} from {option.flag}"
        assert defaults[name] == default, f"{name}: default {defaults[name]} is not {default}"


def test_the_addon_translations_cover_exactly_its_options(addon_config: dict[str, Any]) -> None:
    names = yaml.safe_load((ADDON / "translations" / "en.yaml").read_text(encoding="utf-8"))
    assert set(names["configuration"]) == set(addon_config["schema"])
    checked = 0
    for option in options.SERVER:
        if option.addon is None:
            continue
        text = names["configuration"][option.addon]["description"]
        # A range the description spells out ("from 0.5 (slow) to 2.0") is the table's.
        spelled = re.search(r"from ([\d.]+)(?: \(\w+\))? to ([\d.]+)", text)
        if spelled:
            assert (float(spelled[1]), float(spelled[2])) == (option.low, option.high), text
            checked += 1
    assert checked >= 2, "speed and max_call_tokens spell out their ranges"


def test_the_readme_table_lists_every_server_option_with_its_default() -> None:
    readme = (ADDON.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Server options", 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        for flag in re.findall(r"`(--[\w-]+)", cells[0]) if line.startswith("| `--") else []:
            rows[flag] = cells[1]
    for option in options.SERVER:
        assert option.flag in rows, f"README's options table lacks {option.flag}"
        if option.kind in ("int", "float"):
            assert float(rows[option.flag]) == option.default, option.flag
        if option.kind == "flag":
            assert rows[option.flag] == "off", option.flag


FLOAT_OPTIONS = [option for option in options.SERVER if option.kind == "float"]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "Infinity"])
@pytest.mark.parametrize("option", FLOAT_OPTIONS, ids=lambda o: o.flag)
def test_a_float_option_refuses_non_finite_values(option: options.Option, value: str) -> None:
    # --connection-timeout nan used to close every connection at once.
    with pytest.raises(click.BadParameter, match="finite"):
        server_main.make_context("wyoming-kokoro", [option.flag, value])
    with pytest.raises(ValueError, match="finite"):
        option.check(float(value))


def test_a_non_finite_value_from_the_environment_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KOKORO_SPEED", "nan")
    with pytest.raises(click.BadParameter, match="finite"):
        say_main.make_context("kokoro-say", [])
