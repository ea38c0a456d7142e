"""The `wyoming-kokoro` command: flags and environment → Settings → server."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from typing import Any

import click

from . import __version__, options
from .models.assets import AssetError, default_data_dir
from .server import serve
from .settings import Settings
from .voices import VoiceError


def _settings_from(params: dict[str, Any]) -> Settings:
    zeroconf = params["zeroconf"]
    if zeroconf == "":  # flag given without a name
        zeroconf = f"kokoro-{socket.gethostname().split('.')[0]}"
    return Settings(
        uri=params["uri"],
        zeroconf_name=zeroconf,
        zeroconf_address=params["zeroconf_address"],
        zeroconf_interfaces=tuple(params["zeroconf_interface"]),
        voice=params["voice"],
        speed=params["speed"],
        data_dirs=tuple(params["data_dir"]) or (default_data_dir(),),
        model=params["model"],
        voices=params["voices"],
        download=params["download"],
        download_url=params["download_url"],
        threads=params["threads"],
        idle_timeout=params["idle_timeout"],
        preload=params["preload"],
        prefork=params["prefork"],
        streaming=not params["no_streaming"],
        max_text_chars=params["max_text_chars"],
        min_free_mb=params["min_free_mb"],
        connection_timeout=params["connection_timeout"],
        max_connections=params["max_connections"],
        normalize=not params["no_normalize"],
        max_call_tokens=params["max_call_tokens"],
        volume=params["volume"],
        lead_silence=params["lead_silence"],
        tail_silence=params["tail_silence"],
        decode=params["decode"],
        http=params["http"],
        api_key=params["api_key"],
        cors_origins=tuple(params["cors_origin"]),
        debug=params["debug"],
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
        asyncio.run(serve(settings))
    except (AssetError, VoiceError, OSError, ValueError) as err:
        raise click.ClickException(str(err)) from err


if __name__ == "__main__":
    main()
