"""The server command: settings → server + scheduler + discovery + signals."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import signal
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import click

from . import __version__
from .assets import AssetError, Assets, default_data_dir, resolve
from .g2p import LEXICON_NAME, load_lexicon
from .handler import HandlerConfig, KokoroHandler
from .info import build_info
from .modelfiles import DEFAULT_DOWNLOAD_URL, MODEL_FILES
from .scheduler import Scheduler, SchedulerOptions
from .settings import DEFAULT_URI, Settings
from .voices import VoiceError, default_voice, parse_voice
from .wire import MAX_HEADER_BYTES, Limits
from .worker import WorkerConfig

_LOGGER = logging.getLogger("wyoming_kokoro")


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
        streaming=not params["no_streaming"],
        max_text_chars=params["max_text_chars"],
        min_free_mb=params["min_free_mb"],
        connection_timeout=params["connection_timeout"],
        normalize=not params["no_normalize"],
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
@click.option("--no-normalize", is_flag=True, help="Do not rewrite numbers and symbols.")
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


def _prepare_assets(settings: Settings) -> Assets:
    if settings.download:
        from .download import DownloadError, download_model

        try:
            download_model(settings.download, settings.data_dirs[0], settings.download_url)
        except DownloadError as err:
            raise AssetError(str(err)) from err
    assets = resolve(settings.model, settings.voices, list(settings.data_dirs))
    _LOGGER.info("Using %s", assets.source)
    return assets


def _lexicon(data_dirs: tuple[Path, ...]) -> dict[str, str]:
    entries: dict[str, str] = {}
    for directory in reversed(data_dirs):  # the first directory wins
        if (directory / LEXICON_NAME).is_file():
            entries.update(load_lexicon(directory / LEXICON_NAME))
    return entries


async def serve(settings: Settings) -> None:
    """Run until SIGTERM/SIGINT."""
    assets = _prepare_assets(settings)
    voice = settings.voice or default_voice(assets.voice_names)
    parse_voice(voice, assets.voice_names)  # a bad default is a start-up error
    worker_config = WorkerConfig(
        model=str(assets.model),
        voices=str(assets.voices),
        voice_names=assets.voice_names,
        source=assets.source,
        embedded_model=assets.embedded_model,
        threads=settings.effective_threads,
        normalize=settings.normalize,
        lexicon=_lexicon(settings.data_dirs),
        debug=settings.debug,
    )
    scheduler = Scheduler(
        worker_config, SchedulerOptions(settings.idle_timeout, settings.min_free_mb)
    )
    config = HandlerConfig(
        info=build_info(assets.voice_names, settings.streaming).event(),
        voice_names=assets.voice_names,
        default_voice=voice,
        speed=settings.speed,
        max_text_chars=settings.max_text_chars,
        limits=Limits(max_data_bytes=settings.max_text_chars * 4 + 4096),
        idle_seconds=settings.connection_timeout,
    )
    client_ids = itertools.count(1)
    handlers: set[asyncio.Task[None]] = set()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = KokoroHandler(reader, writer, config, scheduler, next(client_ids))
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        try:
            await handler.run()
        finally:
            handlers.discard(task)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    scheduler.start(preload=settings.preload)
    server, port = await _listen(settings.uri, on_connect)
    discovery = None
    if settings.zeroconf_name and port is not None:
        discovery = await _advertise(settings, port)
    try:
        await stop.wait()
        _LOGGER.info("Stopping")
    finally:
        if server is not None:
            server.close()
        for task in list(handlers):
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        if discovery is not None:
            await discovery.stop()
        await scheduler.stop()


async def _listen(uri: str, on_connect: Any) -> tuple[asyncio.AbstractServer | None, int | None]:
    parsed = urlparse(uri)
    if parsed.scheme == "tcp":
        if parsed.hostname is None or parsed.port is None:
            raise ValueError(f"{uri}: a tcp:// URI needs a host and a port")
        server = await asyncio.start_server(
            on_connect, parsed.hostname, parsed.port, limit=MAX_HEADER_BYTES
        )
        port = server.sockets[0].getsockname()[1]
        host = parsed.hostname if ":" not in parsed.hostname else f"[{parsed.hostname}]"
        _LOGGER.info("Ready on tcp://%s:%d", host, port)
        return server, port
    if parsed.scheme == "unix":
        path = Path(parsed.netloc + parsed.path)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        server = await asyncio.start_unix_server(on_connect, str(path), limit=MAX_HEADER_BYTES)
        _LOGGER.info("Ready on unix://%s", path)
        return server, None
    if parsed.scheme == "stdio":
        reader = asyncio.StreamReader(limit=MAX_HEADER_BYTES)
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, sys.stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        _LOGGER.info("Ready on stdio://")
        asyncio.create_task(on_connect(reader, writer))  # noqa: RUF006 - lives as long as stdio
        return None, None
    raise ValueError(f"{uri}: use tcp://HOST:PORT, unix://PATH or stdio://")


async def _advertise(settings: Settings, port: int) -> Any:
    from .discovery import Discovery, advertised_address

    host = urlparse(settings.uri).hostname or ""
    address = advertised_address(host, settings.zeroconf_address)
    discovery = Discovery(
        settings.zeroconf_name or "kokoro",
        port,
        address,
        list(settings.zeroconf_interfaces) or None,
    )
    await discovery.start()
    return discovery


if __name__ == "__main__":
    main()
