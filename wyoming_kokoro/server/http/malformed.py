"""Requests that are not valid HTTP: one log line and a short JSON 400.

aiohttp logs each with a traceback at ERROR and answers text/plain that echoes the
head of the request, so any port scanner floods the log. Its `handle_error` is the
one place such requests reach (before any route or middleware), so each connection's
handler gets a replacement for these; every other error keeps aiohttp's handling.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from wyoming_kokoro.server.http.errors import ApiError

_LOGGER = logging.getLogger(__name__)
_MAX_REASON = 80


def _reason(err: HttpProcessingError) -> str:
    """The first line of aiohttp's reason, printable and short (it may quote the client)."""
    text = (err.message or type(err).__name__).strip().splitlines()[0].strip(" :")
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


def refusal() -> web.Response:
    """The answer to a request that is not valid HTTP: it echoes nothing of it."""
    return ApiError(400, "the request is not valid HTTP", code="bad_request", close=True).response()


class _QuietHandler(RequestHandler):
    """aiohttp's connection handler, malformed requests answered as above."""

    __slots__ = ()

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if not isinstance(exc, HttpProcessingError):
            return super().handle_error(request, status, exc, message)
        # Non-HTTP bytes (TLS, scanners) at DEBUG, as aiohttp does; the rest at INFO.
        level = logging.DEBUG if isinstance(exc, BadHttpMethod) else logging.INFO
        _LOGGER.log(level, "A malformed HTTP request from %s: %s", request.remote, _reason(exc))
        return refusal()


def quiet_handlers(handlers: Callable[[], RequestHandler]) -> Callable[[], RequestHandler]:
    """aiohttp's connection handlers (`handlers`), malformed requests answered as above."""

    def handler() -> RequestHandler:
        made = handlers()
        # aiohttp builds its handlers itself (with slots, so no method can be set on
        # one): the same object, as the subclass that only changes handle_error.
        made.__class__ = _QuietHandler
        return made

    return handler
