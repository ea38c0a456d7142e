"""The `wyoming-kokoro` command: flags and environment → Settings → server."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from typing import Any

import click

from wyoming_kokoro import __version__, flags, options
from wyoming_kokoro.catalog.files import AssetError
from wyoming_kokoro.catalog.places import default_data_dir
from wyoming_kokoro.catalog.voices import VoiceError
from wyoming_kokoro.logs import line_format
from wyoming_kokoro.server.startup import run_server
from wyoming_kokoro.settings import (
    ConnectionSettings,
    DiscoverySettings,
    EngineSettings,
    HttpSettings,
    ModelSettings,
    SchedulerSettings,
    Settings,
    SpeechSettings,
    WyomingSettings,
    from_params,
)


def settings_from(params: dict[str, Any]) -> Settings:
    """The settings the command's flags give (click's params, by option name)."""
    zeroconf = params["zeroconf"]
    if zeroconf == "":  # flag given without a name
        zeroconf = f"kokoro-{socket.gethostname().split('.')[0]}"
    default_dirs = (default_data_dir(),)
    return Settings(
        model=from_params(ModelSettings, params, data_dirs=params["data_dir"] or default_dirs),
        engine=from_params(EngineSettings, params),
        scheduler=from_params(SchedulerSettings, params),
        speech=from_params(SpeechSettings, params),
        connections=from_params(ConnectionSettings, params),
        wyoming=from_params(WyomingSettings, params),
        http=from_params(HttpSettings, params),
        discovery=from_params(DiscoverySettings, params, name=zeroconf),
        debug=params["debug"],
    )


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@flags.apply(options.SERVER, hide_advanced=True)
@flags.help_all()
@click.version_option(__version__, prog_name="wyoming-kokoro")
def main(**params: Any) -> None:
    """Kokoro-82M text to speech over the Wyoming protocol (Home Assistant).

    \b
    Each option can also be set in the environment as KOKORO_<OPTION>.
    More options (tuning, limits): --help-all. All explained:
    https://github.com/wyoming-kokoro/wyoming-kokoro/blob/main/docs/options.md
    """
    configured = settings_from(params)
    logging.basicConfig(
        level=logging.DEBUG if configured.debug else logging.INFO,
        format=line_format("%(levelname)s %(name)s: %(message)s"),
        stream=sys.stderr,
    )
    try:
        asyncio.run(run_server(configured))
    except (AssetError, VoiceError, OSError, ValueError) as err:
        raise click.ClickException(str(err)) from err


if __name__ == "__main__":
    main()
