"""The option table (options.py) is the one source of every option's facts: both
commands, Settings, docs/options.md and the add-on's config.yaml and translations must
agree with it; `--help` shows a user's options, `--help-all` every one."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner
from kokoro_say.main import main as say_main

from wyoming_kokoro import flags, options
from wyoming_kokoro.__main__ import main as server_main
from wyoming_kokoro.settings import Settings, option_of

ROOT = Path(__file__).resolve().parents[2]
ADDON = ROOT / "addon"
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
    command: click.Command, option: flags.Option
) -> None:
    param = params_of(command)[option.name]
    assert param.envvar == option.envvar
    assert param.default == option.default
    if option.low is not None or option.high is not None:
        assert (param.type.min, param.type.max) == (option.low, option.high)  # type: ignore[attr-defined]


def test_every_server_option_is_in_the_table() -> None:
    table = {option.name for option in options.SERVER}
    assert set(params_of(server_main)) - {"version", "help", "help_all"} == table
    assert len(table) == len(options.SERVER), "an option is listed twice"


def test_settings_defaults_are_the_table_defaults() -> None:
    table = {option.name: option for option in options.SERVER}
    groups = [f.default_factory for f in dataclasses.fields(Settings) if f.name != "debug"]
    compared = 0
    for cls in groups:
        for setting in dataclasses.fields(cls):  # type: ignore[arg-type]
            name, negated = option_of(setting)
            option = table.get(name or "")
            if option is None or option.default is None:
                continue
            default = option.default if not negated else not option.default
            assert setting.default == (tuple(default) if option.multiple else default), name
            compared += 1
    assert compared >= 20  # the groups' fields were found


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


def addon_schema(option: flags.Option) -> tuple[str, Any]:
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
    # The add-on offers a few of the table's options (any subset), each as the table says.
    schema, defaults = addon_config["schema"], addon_config["options"]
    in_table = {option.addon: option for option in options.SERVER if option.addon}
    unaccounted = set(schema) - set(in_table) - set(ADDON_ONLY)
    assert not unaccounted, f"add-on options the table does not name: {unaccounted}"
    for name in set(schema) & set(in_table):
        option = in_table[name]
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
        if option.addon not in names["configuration"]:
            continue
        text = names["configuration"][option.addon]["description"]
        # A range the description spells out ("from 0.5 (slow) to 2.0") is the table's.
        spelled = re.search(r"from ([\d.]+)(?: \(\w+\))? to ([\d.]+)", text)
        if spelled:
            assert (float(spelled[1]), float(spelled[2])) == (option.low, option.high), text
            checked += 1
    if "speed" in addon_config["schema"]:
        assert checked >= 1, "speed spells out its range"


def server_part_of_docs() -> str:
    """docs/options.md up to its kokoro-say section (whose own options follow it)."""
    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    return text.split("\n## kokoro-say", 1)[0]


def docs_rows() -> dict[str, list[str]]:
    """docs/options.md's table rows by flag: | `--flag` | env var | default | meaning |."""
    text = server_part_of_docs()
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line.startswith("| `--"):
            continue
        # Cells split at each | that is not escaped (`int8\|fp16` is one cell).
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        flag = re.match(r"`(--[\w-]+)", cells[0])
        assert flag, line
        assert flag[1] not in rows, f"docs/options.md lists {flag[1]} twice"
        rows[flag[1]] = cells
    return rows


def test_docs_options_lists_every_server_option_with_its_env_and_default() -> None:
    rows = docs_rows()
    for option in options.SERVER:
        assert option.flag in rows, f"docs/options.md lacks {option.flag}"
        _, env, default, meaning = rows[option.flag][:4]
        assert env == f"`{option.envvar}`", option.flag
        assert meaning, option.flag
        if option.kind in ("int", "float"):
            assert float(default) == option.default, option.flag
        elif option.kind == "flag":
            assert default == "off", option.flag
        elif option.kind == "choice" and option.default is not None:
            assert default == f"`{option.default}`", option.flag
    stale = set(rows) - {option.flag for option in options.SERVER}
    assert not stale, f"docs/options.md lists options the server lacks: {stale}"


def docs_sections() -> dict[str, str]:
    """docs/options.md's flags by the heading they are under."""
    text = server_part_of_docs()
    where: dict[str, str] = {}
    heading = ""
    for line in text.splitlines():
        if line.startswith("## "):
            heading = line[3:]
        elif line.startswith("| `--"):
            where[re.findall(r"`(--[\w-]+)", line)[0]] = heading
    return where


def test_docs_options_tells_which_options_are_behind_help_all() -> None:
    # The advanced options, and only they, are under headings marked (--help-all).
    sections = docs_sections()
    for option in options.SERVER:
        behind = "(--help-all)" in sections[option.flag]
        assert behind == option.advanced, f"{option.flag} is under {sections[option.flag]!r}"


def help_options(args: list[str]) -> list[str]:
    """The options a help screen lists, by their long flag."""
    result = CliRunner().invoke(server_main, args, prog_name="wyoming-kokoro")
    assert result.exit_code == 0, result.output
    listed = result.output.split("\nOptions:\n", 1)[1]
    return re.findall(r"^  (?:-\w, )?(--[\w-]+)", listed, re.M)


def test_help_shows_a_users_options_and_help_all_every_one() -> None:
    shown = help_options(["--help"])
    assert len(shown) <= 16, f"--help lists {len(shown)} options: {shown}"
    user = [option.flag for option in options.SERVER if not option.advanced]
    assert [flag for flag in shown if flag in user] == user
    assert not {option.flag for option in options.SERVER if option.advanced} & set(shown)
    everything = help_options(["--help-all"])
    assert [flag for flag in everything if flag.startswith("--help")] == ["--help-all", "--help"]
    assert {option.flag for option in options.SERVER} <= set(everything)
    assert len(everything) == len(options.SERVER) + 3  # --help-all, --version, --help


def test_a_hidden_option_works_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOKORO_MIN_FREE_MB", "123")
    context = server_main.make_context(
        "wyoming-kokoro", ["--max-decode-seconds", "2.5", "--decode", "whole", "--prefork"]
    )
    assert context.params["max_decode_seconds"] == 2.5
    assert (context.params["decode"], context.params["prefork"]) == ("whole", True)
    assert context.params["min_free_mb"] == 123


def test_help_all_leaves_the_options_hidden_afterwards() -> None:
    help_options(["--help-all"])
    hidden = {param.name for param in server_main.params if getattr(param, "hidden", False)}
    assert hidden == {option.name for option in options.SERVER if option.advanced}


FLOAT_OPTIONS = [option for option in options.SERVER if option.kind == "float"]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "Infinity"])
@pytest.mark.parametrize("option", FLOAT_OPTIONS, ids=lambda o: o.flag)
def test_a_float_option_refuses_non_finite_values(option: flags.Option, value: str) -> None:
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


def test_docs_options_names_every_kokoro_say_option() -> None:
    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    section = text.split("\n## kokoro-say", 1)[1]
    flags = {
        opt
        for param in say_main.params
        for opt in param.opts
        if opt.startswith("--") and opt not in ("--help", "--version")
    }
    missing = {flag for flag in flags if f"`{flag}" not in section}
    assert not missing, f"docs/options.md's kokoro-say section lacks {sorted(missing)}"
