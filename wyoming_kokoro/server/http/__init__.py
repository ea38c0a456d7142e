"""The OpenAI-compatible HTTP API, served next to Wyoming on the same scheduler; also
on the ingress listener of Home Assistant's panel (`--ingress`).

Imported only when `--http` or `--ingress` is given: a server without them never
loads aiohttp.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from wyoming_kokoro.server.http.app import build_app
from wyoming_kokoro.server.http.connections import CONNECTIONS, ConnectionTable
from wyoming_kokoro.server.http.editing import Editing
from wyoming_kokoro.server.http.errors import ApiError
from wyoming_kokoro.server.http.malformed import quiet_handlers
from wyoming_kokoro.server.http.request import Voices
from wyoming_kokoro.server.http.speech import SpeechConfig
from wyoming_kokoro.server.offer import Offer
from wyoming_kokoro.server.scheduler import Scheduler
from wyoming_kokoro.server.uri import bracketed, uri_host_port, uri_scheme
from wyoming_kokoro.settings import ConnectionSettings, HttpSettings, SpeechSettings

_LOGGER = logging.getLogger(__name__)


# A speech stream takes one connection; these more leave room for a browser's
# parallel requests (it opens up to 6 to one host) and health checks.
SPARE_CONNECTIONS = 8
# Seconds the ingress listener keeps an idle connection (see `start_http`).
INGRESS_KEEPALIVE_S = 5.0


@dataclass(frozen=True)
class _Listener:
    runner: web.AppRunner
    server: asyncio.AbstractServer
    table: ConnectionTable
    host: str  # as bound
    port: int


class HttpServer:
    """The listening HTTP side (one listener or two); `stop` closes them and their
    open requests."""

    def __init__(self, listeners: list[_Listener]) -> None:
        self._listeners = listeners

    async def stop(self, grace: float = 0.0) -> None:
        """No new connections; answers under way have `grace` seconds to finish."""
        for listener in self._listeners:
            listener.server.close()
        await asyncio.gather(*(listener.table.drain(grace) for listener in self._listeners))
        for listener in self._listeners:
            await listener.runner.cleanup()


async def start_http(
    http: HttpSettings,
    speech: SpeechSettings,
    connections: ConnectionSettings,
    scheduler: Scheduler,
    voice_names: tuple[str, ...],
    default_voice: str,
    next_client_id: Callable[[], int],
    offer: Offer | None = None,
    editing: Editing | None = None,
) -> HttpServer:
    """Listen where `http.uri` says (tcp://HOST:PORT), and where `http.ingress` does."""
    config = SpeechConfig(
        scheduler=scheduler,
        voices=Voices(
            voice_names,
            default_voice,
            speech.speed,
            speech.max_text_chars,
            offer=offer,
            volume=speech.volume,
            lead_ms=speech.lead_silence,
            tail_ms=speech.tail_silence,
            pauses=speech.pauses,
        ),
        next_client_id=next_client_id,
        max_streams=connections.max_connections,
        write_timeout=connections.connection_timeout,
        read_timeout=connections.connection_timeout,
    )
    api_key = http.api_key or None  # an empty --api-key or KOKORO_API_KEY is none
    listeners = []
    if http.uri:
        app = build_app(config, api_key, http.cors_origins, speech.max_text_json_bytes, editing)
        api = await _listen(app, http.uri, "--http", connections, connections.connection_timeout)
        listeners.append(api)
        host = bracketed(api.host)
        _LOGGER.info(
            "HTTP API on http://%s:%d/v1 (page at http://%s:%d/)", host, api.port, host, api.port
        )
        if api_key is None and api.host not in ("127.0.0.1", "localhost", "::1"):
            _LOGGER.warning("The HTTP API is open to the network without --api-key")
    if http.ingress:
        peer = http.ingress_peer
        app = build_app(config, None, (), speech.max_text_json_bytes, editing, ingress_peer=peer)
        # The Supervisor's proxy may keep an idle connection open after the panel's last
        # request; the add-on restarts the server (for the voice pack) only once no
        # connection is open, so an idle one is let go soon.
        keepalive = min(connections.connection_timeout, INGRESS_KEEPALIVE_S)
        panel = await _listen(app, http.ingress, "--ingress", connections, keepalive)
        listeners.append(panel)
        _LOGGER.info(
            "Ingress page on http://%s:%d/ (for %s only)", bracketed(panel.host), panel.port, peer
        )
    return HttpServer(listeners)


async def _listen(
    app: web.Application, uri: str, flag: str, connections: ConnectionSettings, keepalive: float
) -> _Listener:
    """The app served at `uri` (tcp://HOST:PORT)."""
    address = uri_host_port(uri) if uri_scheme(uri) in ("tcp", "http") else None
    if address is None:
        raise ValueError(f"{uri}: {flag} needs tcp://HOST:PORT")
    bind_host, bind_port = address
    limit = connections.max_connections + SPARE_CONNECTIONS
    refusal = ApiError(503, f"too many connections (limit {limit})", code="busy").body()
    table = ConnectionTable(limit, refusal)
    app[CONNECTIONS] = table  # before the runner freezes the application
    # handler_cancellation: a client that hangs up cancels its request, which
    # drops its queued pieces at once instead of at the next write.
    # shutdown_timeout: aiohttp's default waits 60 s (twice) for open speech streams;
    # the table's drain has given them their grace already (HttpServer.stop).
    # keepalive_timeout: a connection that sends no (whole) request this long is
    # closed, a new one too; aiohttp's default is an hour.
    runner = web.AppRunner(
        app,
        handler_cancellation=True,
        access_log=None,
        shutdown_timeout=1.0,
        keepalive_timeout=keepalive,
    )
    await runner.setup()
    handlers = runner.server
    assert handlers is not None
    connection = table.factory(quiet_handlers(handlers))
    listener = await asyncio.get_running_loop().create_server(connection, bind_host, bind_port)
    port = listener.sockets[0].getsockname()[1] if listener.sockets else bind_port
    return _Listener(runner, listener, table, bind_host, port)
