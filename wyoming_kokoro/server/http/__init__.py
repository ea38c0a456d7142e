"""The OpenAI-compatible HTTP API, served next to Wyoming on the same scheduler.

Imported only when `--http` is given: a server without it never loads aiohttp.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from aiohttp import web

from wyoming_kokoro.server.http.app import build_app
from wyoming_kokoro.server.http.errors import ApiError
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


class HttpServer:
    """The listening HTTP side; `stop` closes it and its open requests."""

    def __init__(self, runner: web.AppRunner, listener: asyncio.AbstractServer) -> None:
        self._runner = runner
        self._listener = listener

    async def stop(self) -> None:
        self._listener.close()
        await self._runner.cleanup()


class _Counted(asyncio.Protocol):
    """aiohttp's protocol for one connection, counted in `live` while it is open.

    Counted here, not by aiohttp: it learns of a connection only once it is made,
    after a whole burst of accepted ones has passed the check.
    """

    def __init__(self, inner: asyncio.Protocol, live: set[_Counted]) -> None:
        self._inner = inner
        self._live = live
        live.add(self)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._live.discard(self)
        self._inner.connection_lost(exc)


class _Refusal(asyncio.Protocol):
    """A 503 in OpenAI's shape, then a hang-up that cannot reset the answer away."""

    def __init__(self, body: bytes) -> None:
        self._answer = (
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
        )
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(self._answer)
        if transport.can_write_eof():
            transport.write_eof()
        # What the client still sends is read and dropped, for at most a second:
        # closing with unread input would send a reset.
        self._timer = asyncio.get_running_loop().call_later(1.0, transport.close)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()


async def start_http(
    http: HttpSettings,
    speech: SpeechSettings,
    connections: ConnectionSettings,
    scheduler: Scheduler,
    voice_names: tuple[str, ...],
    default_voice: str,
    next_client_id: Callable[[], int],
    offer: Offer | None = None,
) -> HttpServer:
    """Listen where `http.uri` says (tcp://HOST:PORT)."""
    assert http.uri is not None
    address = uri_host_port(http.uri) if uri_scheme(http.uri) in ("tcp", "http") else None
    if address is None:
        raise ValueError(f"{http.uri}: --http needs tcp://HOST:PORT")
    bind_host, bind_port = address
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
        ),
        next_client_id=next_client_id,
        max_streams=connections.max_connections,
        write_timeout=connections.connection_timeout,
        read_timeout=connections.connection_timeout,
    )
    api_key = http.api_key or None  # an empty --api-key or KOKORO_API_KEY is none
    app = build_app(config, api_key, http.cors_origins, speech.max_text_json_bytes)
    # handler_cancellation: a client that hangs up cancels its request, which
    # drops its queued pieces at once instead of at the next write.
    # shutdown_timeout: aiohttp's default waits 60 s (twice) for open speech streams,
    # while the worker keeps speaking for them; a stopping server cuts them off.
    # keepalive_timeout: a connection that sends no (whole) request this long is
    # closed, a new one too; aiohttp's default is an hour.
    runner = web.AppRunner(
        app,
        handler_cancellation=True,
        access_log=None,
        shutdown_timeout=1.0,
        keepalive_timeout=connections.connection_timeout,
    )
    await runner.setup()
    handlers = runner.server
    assert handlers is not None
    limit = connections.max_connections + SPARE_CONNECTIONS
    refusal = ApiError(503, f"too many connections (limit {limit})", code="busy").body()
    live: set[_Counted] = set()

    def connection() -> asyncio.Protocol:
        if len(live) >= limit:
            _LOGGER.warning("Refusing an HTTP connection: %d already open", len(live))
            return _Refusal(refusal)
        return _Counted(handlers(), live)

    listener = await asyncio.get_running_loop().create_server(connection, bind_host, bind_port)
    port = listener.sockets[0].getsockname()[1] if listener.sockets else bind_port
    host = bracketed(bind_host)
    _LOGGER.info("HTTP API on http://%s:%d/v1 (page at http://%s:%d/)", host, port, host, port)
    if api_key is None and bind_host not in ("127.0.0.1", "localhost", "::1"):
        _LOGGER.warning("The HTTP API is open to the network without --api-key")
    return HttpServer(runner, listener)
