"""The `wyoming-kokoro` command: flags and environment → Settings → server."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket
import sys
from typing import Any

import click

from wyoming_kokoro import __version__, options
from wyoming_kokoro.catalog.assets import AssetError, default_data_dir
from wyoming_kokoro.catalog.voices import VoiceError
from wyoming_kokoro.server.startup import run_server
from wyoming_kokoro.settings import Settings

# Settings whose flag says another thing or in other words, as (group, field); every
# other setting is its flag's value as it is, under the same name.
_TRANSLATED = frozenset(
    {
        ("model", "data_dirs"),
        ("worker", "normalize"),
        ("speech", "streaming"),
        ("http", "uri"),
        ("http", "cors_origins"),
        ("discovery", "name"),
        ("discovery", "address"),
        ("discovery", "interfaces"),
    }
)
# Each group's class, from the defaults of Settings' fields.
_GROUPS: dict[str, Any] = {
    f.name: f.default_factory for f in dataclasses.fields(Settings) if f.name != "debug"
}
_AS_GIVEN = {
    group: tuple(f.name for f in dataclasses.fields(cls) if (group, f.name) not in _TRANSLATED)
    for group, cls in _GROUPS.items()
}


def _given(group: str, params: dict[str, Any], **translated: Any) -> Any:
    return _GROUPS[group](**{name: params[name] for name in _AS_GIVEN[group]}, **translated)


def _settings_from(params: dict[str, Any]) -> Settings:
    zeroconf = params["zeroconf"]
    if zeroconf == "":  # flag given without a name
        zeroconf = f"kokoro-{socket.gethostname().split('.')[0]}"
    return Settings(
        model=_given("model", params, data_dirs=tuple(params["data_dir"]) or (default_data_dir(),)),
        worker=_given("worker", params, normalize=not params["no_normalize"]),
        scheduler=_given("scheduler", params),
        speech=_given("speech", params, streaming=not params["no_streaming"]),
        connections=_given("connections", params),
        wyoming=_given("wyoming", params),
        http=_given("http", params, uri=params["http"], cors_origins=tuple(params["cors_origin"])),
        discovery=_given(
            "discovery",
            params,
            name=zeroconf,
            address=params["zeroconf_address"],
            interfaces=tuple(params["zeroconf_interface"]),
        ),
        debug=params["debug"],
    )


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@options.apply(options.SERVER, hide_advanced=True)
@options.help_all()
@click.version_option(__version__, prog_name="wyoming-kokoro")
def main(**params: Any) -> None:
    """Kokoro-82M text to speech over the Wyoming protocol (Home Assistant).

    \b
    Each option can also be set in the environment as KOKORO_<OPTION>.
    More options (tuning, limits): --help-all. All explained: docs/options.md.
    """
    configured = _settings_from(params)
    logging.basicConfig(
        level=logging.DEBUG if configured.debug else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        asyncio.run(run_server(configured))
    except (AssetError, VoiceError, OSError, ValueError) as err:
        raise click.ClickException(str(err)) from err


if __name__ == "__main__":
    main()
