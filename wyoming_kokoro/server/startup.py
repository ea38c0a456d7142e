"""The running server: assets → scheduler + listener + discovery, until a signal."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import signal
import socket
import sys
from functools import partial
from pathlib import Path
from typing import Any

from wyoming_kokoro.catalog.assets import Assets, resolve
from wyoming_kokoro.catalog.presets_file import load_presets
from wyoming_kokoro.catalog.voices import default_voice
from wyoming_kokoro.protocol import WorkerConfig
from wyoming_kokoro.server.model_cut import start_build
from wyoming_kokoro.server.offer import Offer
from wyoming_kokoro.server.rescan import Rescanner
from wyoming_kokoro.server.scheduler import Scheduler, SchedulerOptions
from wyoming_kokoro.server.uri import bracketed, uri_host, uri_host_port, uri_path, uri_scheme
from wyoming_kokoro.server.wyoming.config import HandlerConfig
from wyoming_kokoro.server.wyoming.connections import Connections
from wyoming_kokoro.server.wyoming.handler import KokoroHandler
from wyoming_kokoro.server.wyoming.wire import MAX_HEADER_BYTES, Limits
from wyoming_kokoro.settings import DiscoverySettings, ModelSettings, Settings
from wyoming_kokoro.text.g2p import load_lexicons

_LOGGER = logging.getLogger(__name__)

SEND_BUFFER_BYTES = 64 * 1024
# Seconds the answers under way may take to finish once the server is told to stop.
# Home Assistant gives an add-on 10 s after SIGTERM before SIGKILL (so do Docker
# and podman by default): the grace and the rest of the shutdown fit in that.
SHUTDOWN_GRACE = 6.0


def _resolve(model: ModelSettings) -> Assets:
    return resolve(model.model, model.voices, list(model.data_dirs))


def _prepare_assets(model: ModelSettings) -> Assets:
    if model.download:
        from wyoming_kokoro.catalog.download import DownloadError, download_model, progress_for

        # Before Ready: the model asked for is the one the server speaks with. Progress
        # shows while the user waits (a bar on a terminal, else a line every few seconds).
        try:
            download_model(model.download, model.data_dirs[0], model.download_url, progress_for())
        except DownloadError as err:
            # Offline or a read-only data dir at boot must not silence the house:
            # speak with what is there (at least the embedded model); retry next start.
            _LOGGER.error("Download of the %s model failed: %s", model.download, err)
            _LOGGER.error("Using the files already available; the download is retried at restart")
    assets = _resolve(model)
    _LOGGER.info("Using %s", assets.source)
    return assets


async def run_server(settings: Settings) -> None:
    """Run until SIGTERM/SIGINT."""
    assets = _prepare_assets(settings.model)
    speech, connections = settings.speech, settings.connections
    data_dirs = settings.model.data_dirs
    presets = load_presets(data_dirs, assets.voice_names)
    # A --voice that cannot be spoken now costs a warning, not the start: the offer
    # uses the automatic default until a rescan brings it (an add-on restarts).
    offer = Offer(
        assets.voice_names,
        presets,
        speech.voice or default_voice(assets.voice_names),
        speech.streaming,
        pinned=speech.voice is not None,
    )
    voice = offer.default_voice
    chosen = offer.choose(voice, speech.speed)
    # Threads found here, once: the log says so at start-up, not at every burst.
    engine = dataclasses.replace(settings.engine, threads=settings.engine.effective_threads)
    worker_config = WorkerConfig(assets, engine, load_lexicons(data_dirs), settings.debug)
    scheduling = settings.scheduler
    options = SchedulerOptions(
        scheduling.idle_timeout, scheduling.min_free_mb, prefork=scheduling.prefork
    )
    scheduler = Scheduler(worker_config, options)
    rescanner = Rescanner(
        data_dirs,
        offer,
        worker_config.lexicon,
        lambda: _resolve(settings.model),
        lambda found: _use_assets(scheduler, found),
        lambda lexicon: scheduler.reconfigure(
            dataclasses.replace(scheduler.config, lexicon=lexicon), "the new lexicon"
        ),
    )
    offer.refresh = rescanner.refresh
    config = HandlerConfig(
        info=offer.info,
        voice_names=assets.voice_names,
        default_voice=voice,
        speed=speech.speed,
        max_text_chars=speech.max_text_chars,
        limits=Limits(max_data_bytes=speech.max_text_json_bytes),
        idle_seconds=connections.connection_timeout,
        eof_is_hang_up=not settings.wyoming.uri.startswith("stdio:"),
        offer=offer,
        volume=speech.volume,
        lead_ms=speech.lead_silence,
        tail_ms=speech.tail_silence,
        pauses=speech.pauses,
        phrase_wait=speech.phrase_wait,
        word_events=speech.word_events,
    )
    client_ids = itertools.count(1)

    def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> KokoroHandler:
        _bound_send_buffer(writer)
        return KokoroHandler(reader, writer, config, scheduler, next(client_ids))

    wyoming = Connections(connections.max_connections, handler, config)

    stop = asyncio.Event()
    _stop_on_signals(stop)
    scheduler.start(preload=scheduling.preload)
    windows = settings.engine.decode == "windows"
    # --no-teaching: no voice is taught, not even the server's own in the cut's process.
    teach = chosen.voice if scheduling.teaching else None
    cutting = (
        start_build(assets, teach, scheduling.teaching, partial(scheduler.renew, "the model's cut"))
        if windows
        else None
    )
    http = None
    if settings.http.uri or settings.http.ingress:
        # Imported here: aiohttp's idle memory is only paid with --http or --ingress.
        from wyoming_kokoro.server.http import start_http
        from wyoming_kokoro.server.http.editing import Editing

        http = await start_http(
            settings.http,
            speech,
            connections,
            scheduler,
            assets.voice_names,
            voice,
            lambda: next(client_ids),
            offer,
            Editing(data_dirs, rescanner.reread),
        )
    server, port = await _listen(settings.wyoming.uri, wyoming.serve, stop)
    discovery = None
    if settings.discovery.name and port is not None:
        discovery = await _advertise(settings.discovery, settings.wyoming.uri, port)
    try:
        await stop.wait()
        _LOGGER.info("Stopping: answers under way have %g s to finish", SHUTDOWN_GRACE)
    finally:
        # No new connections; both doors and the advertisement wind down together,
        # while the scheduler still speaks for the answers under way.
        if server is not None:
            server.close()
        closing = [wyoming.close(SHUTDOWN_GRACE)]
        if http is not None:
            closing.append(http.stop(SHUTDOWN_GRACE))
        if discovery is not None:
            closing.append(discovery.stop())
        await asyncio.gather(*closing)
        if cutting is not None:
            cutting.cancel()
            await asyncio.gather(cutting, return_exceptions=True)
        await scheduler.stop()


def _use_assets(scheduler: Scheduler, assets: Assets) -> None:
    """New voices or model files found by a rescan: the offer names them already, so
    a loaded worker gives way to one that has them (`Scheduler.reconfigure`)."""
    current: WorkerConfig = scheduler.config
    if current.assets != assets:
        scheduler.reconfigure(dataclasses.replace(current, assets=assets))
        _LOGGER.info("Workers from now on use %s", assets.source)


def _stop_on_signals(stop: asyncio.Event) -> None:
    """SIGTERM/SIGINT set `stop`; where the loop cannot watch signals, fall back.

    Some containers (LXC, Proxmox) and embedding in a thread refuse
    add_signal_handler; the server must run there all the same.
    """
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError, ValueError) as err:
            try:
                signal.signal(sig, lambda *_: loop.call_soon_threadsafe(stop.set))
            except (ValueError, OSError):  # not the main thread: the embedder stops us
                _LOGGER.warning("Cannot watch %s here (%s); stop by cancelling", sig.name, err)


def _bound_send_buffer(writer: asyncio.StreamWriter) -> None:
    # The kernel would grow a silent client's send buffer to megabytes of audio;
    # a small buffer keeps a reading client's pipe just as full.
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)


async def _listen(
    uri: str, on_connect: Any, stop: asyncio.Event
) -> tuple[asyncio.AbstractServer | None, int | None]:
    kind = uri_scheme(uri)
    if kind == "tcp":
        address = uri_host_port(uri)
        if address is None:
            raise ValueError(f"{uri}: a tcp:// URI needs a host and a port")
        host, port = address
        server = await asyncio.start_server(on_connect, host, port, limit=MAX_HEADER_BYTES)
        port = server.sockets[0].getsockname()[1]
        _LOGGER.info("Ready on tcp://%s:%d", bracketed(host), port)
        return server, port
    if kind == "unix":
        path = Path(uri_path(uri))
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        server = await asyncio.start_unix_server(on_connect, str(path), limit=MAX_HEADER_BYTES)
        _LOGGER.info("Ready on unix://%s", path)
        return server, None
    if kind == "stdio":
        reader = asyncio.StreamReader(limit=MAX_HEADER_BYTES)
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, sys.stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        _LOGGER.info("Ready on stdio://")
        # One client for the life of the process: when it hangs up, the server is done.
        session = asyncio.create_task(on_connect(reader, writer))
        session.add_done_callback(lambda _task: stop.set())
        return None, None
    raise ValueError(f"{uri}: use tcp://HOST:PORT, unix://PATH or stdio://")


async def _advertise(settings: DiscoverySettings, uri: str, port: int) -> Any:
    from wyoming_kokoro.server.discovery import Discovery, advertised_address

    address = advertised_address(uri_host(uri), settings.address)
    discovery = Discovery(
        settings.name or "kokoro",
        port,
        address,
        list(settings.interfaces) or None,
    )
    await discovery.start()
    return discovery
