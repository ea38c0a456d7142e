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

# Settings whose flag says another thing or in other words; every other setting is
# its flag's value as it is, under the same name.
_TRANSLATED = frozenset(
    {"zeroconf_name", "zeroconf_interfaces", "data_dirs", "streaming", "normalize", "cors_origins"}
)
_AS_GIVEN = tuple(f.name for f in dataclasses.fields(Settings) if f.name not in _TRANSLATED)


def _settings_from(params: dict[str, Any]) -> Settings:
    zeroconf = params["zeroconf"]
    if zeroconf == "":  # flag given without a name
        zeroconf = f"kokoro-{socket.gethostname().split('.')[0]}"
    return Settings(
        **{name: params[name] for name in _AS_GIVEN},
        zeroconf_name=zeroconf,
        zeroconf_interfaces=tuple(params["zeroconf_interface"]),
        data_dirs=tuple(params["data_dir"]) or (default_data_dir(),),
        streaming=not params["no_streaming"],
        normalize=not params["no_normalize"],
        cors_origins=tuple(params["cors_origin"]),
    )


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@options.apply(options.SERVER)
@click.version_option(__version__, prog_name="wyoming-kokoro")
def main(**params: Any) -> None:
    """Kokoro-82M text to speech over the Wyoming protocol (Home Assistant)."""
    settings = _settings_from(params)
    logging.basicConfig(
        level=logging.DEBUG if settings.debug else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        asyncio.run(run_server(settings))
    except (AssetError, VoiceError, OSError, ValueError) as err:
        raise click.ClickException(str(err)) from err


if __name__ == "__main__":
    main()
