"""The OpenAI-compatible HTTP API, served next to Wyoming on the same scheduler.

Imported only when `--http` is given: a server without it never loads aiohttp.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import urlparse

from aiohttp import web

from ..scheduler import Scheduler
from ..settings import Settings
from .app import build_app
from .request import Voices
from .speech import SpeechConfig

_LOGGER = logging.getLogger(__name__)


class HttpServer:
    """The listening HTTP side; `stop` closes it and its open requests."""

    def __init__(self, runner: web.AppRunner) -> None:
        self._runner = runner

    async def stop(self) -> None:
        await self._runner.cleanup()


async def start_http(
    settings: Settings,
    scheduler: Scheduler,
    voice_names: tuple[str, ...],
    default_voice: str,
    next_client_id: Callable[[], int],
) -> HttpServer:
    """Listen where `settings.http` says (tcp://HOST:PORT)."""
    assert settings.http is not None
    parsed = urlparse(settings.http)
    if parsed.scheme not in ("tcp", "http") or parsed.hostname is None or parsed.port is None:
        raise ValueError(f"{settings.http}: --http needs tcp://HOST:PORT")
    config = SpeechConfig(
        scheduler=scheduler,
        voices=Voices(voice_names, default_voice, settings.speed, settings.max_text_chars),
        next_client_id=next_client_id,
        max_streams=settings.max_connections,
        write_timeout=settings.connection_timeout,
    )
    app = build_app(config, settings.api_key, settings.cors_origins)
    # handler_cancellation: a client that hangs up cancels its request, which
    # drops its queued pieces at once instead of at the next write.
    # shutdown_timeout: aiohttp's default waits 60 s (twice) for open speech streams,
    # while the worker keeps speaking for them; a stopping server cuts them off.
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, parsed.hostname, parsed.port)
    await site.start()
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    port = sockets[0].getsockname()[1] if sockets else parsed.port
    host = parsed.hostname if ":" not in parsed.hostname else f"[{parsed.hostname}]"
    _LOGGER.info("HTTP API on http://%s:%d/v1 (page at http://%s:%d/)", host, port, host, port)
    if settings.api_key is None and parsed.hostname not in ("127.0.0.1", "localhost", "::1"):
        _LOGGER.warning("The HTTP API is open to the network without --api-key")
    return HttpServer(runner)
