"""The `wyoming-kokoro` command: flags and environment → Settings → server."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from pathlib import Path
from typing import Any

import click

from . import __version__
from .assets import AssetError, default_data_dir
from .modelfiles import DEFAULT_DOWNLOAD_URL, MODEL_FILES
from .options import max_call_tokens_option
from .server import serve
from .settings import DEFAULT_URI, Settings
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
        http=params["http"],
        api_key=params["api_key"],
        cors_origins=tuple(params["cors_origin"]),
        debug=params["debug"],
    )


@click.command(
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "KOKORO"}
)
@click.option("--uri", default=DEFAULT_URI, show_default=True, help="tcp://, unix:// or stdio://")
@click.option(
    "--zeroconf",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[NAME]",
    help="Advertise over zeroconf (_wyoming._tcp), optionally under NAME.",
)
@click.option("--zeroconf-address", help="Address to advertise (default: the outgoing interface).")
@click.option("--zeroconf-interface", multiple=True, help="Interface address(es) for mDNS.")
@click.option("--voice", help="Default voice or blend, e.g. af_bella(2)+af_sky(1).")
@click.option("--speed", type=click.FloatRange(0.5, 2.0), default=1.0, show_default=True)
@click.option(
    "--data-dir",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Where to look for model/voices/lexicon files (repeatable).",
)
@click.option("--model", type=click.Path(path_type=Path), help="Model .onnx file.")
@click.option("--voices", type=click.Path(path_type=Path), help="Voices .bin/.npz file.")
@click.option(
    "--download",
    type=click.Choice(sorted(MODEL_FILES)),
    help="Fetch the upstream model + voices into the first data dir if missing.",
)
@click.option("--download-url", default=DEFAULT_DOWNLOAD_URL, show_default=False)
@click.option("--threads", type=click.IntRange(0, 64), default=0, help="0 = automatic.")
@click.option(
    "--idle-timeout",
    type=click.FloatRange(0),
    default=300.0,
    show_default=True,
    help="Seconds before an idle worker exits; 0 keeps the model loaded.",
)
@click.option("--preload", is_flag=True, help="Start the worker at start-up.")
@click.option(
    "--prefork",
    is_flag=True,
    help="Keep a small parent with the libraries imported that forks each worker: "
    "the first request after an idle unload is answered sooner (about 0.2 s here, "
    "more on a Raspberry Pi); costs about 75 MB while idle.",
)
@click.option("--no-streaming", is_flag=True, help="Do not advertise streaming synthesis.")
@click.option("--max-text-chars", type=click.IntRange(1), default=100_000, show_default=True)
@click.option(
    "--min-free-mb",
    type=click.IntRange(0),
    default=400,
    show_default=True,
    help="Refuse to start the worker with less available memory.",
)
@click.option(
    "--connection-timeout",
    type=click.FloatRange(1),
    default=600.0,
    help="Close a connection that sends nothing for this long.",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1),
    default=64,
    show_default=True,
    help="Refuse further connections beyond this many at once.",
)
@click.option("--no-normalize", is_flag=True, help="Do not rewrite numbers and symbols.")
@max_call_tokens_option
@click.option(
    "--http",
    metavar="URI",
    help="Also serve the OpenAI-compatible HTTP API here, e.g. tcp://0.0.0.0:8880.",
)
@click.option("--api-key", help="Bearer token that HTTP requests must send.")
@click.option(
    "--cors-origin", multiple=True, help="Origin allowed to call the HTTP API from a browser."
)
@click.option("--debug", is_flag=True, help="Log in detail.")
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
