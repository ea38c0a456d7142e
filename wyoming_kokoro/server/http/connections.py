"""The HTTP door's open connections: counted, made room for, and told apart.

A connection is *idle* while no request of it is being answered (a keep-alive
connection between requests, one that never sent a whole request). When the
table is full, the oldest idle connection is closed to make room, as a browser
expects of keep-alive; a busy one never is. With every connection busy, a few
more are let in for `/health` alone (a health check must not fail because the
server is working), and the rest get a 503 at once.

At shutdown, idle connections close at once and answers under way have a grace
period to finish; those that do not are cut off (aborted without the chunked
body's last chunk, which tells a client the body is incomplete).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator

from aiohttp import web
from aiohttp.typedefs import Handler

from wyoming_kokoro.server.http.errors import ApiError

_LOGGER = logging.getLogger(__name__)

# Connections let in beyond the table while every connection in it is busy: room
# for health checks, and no more.
OVERFLOW = 8


class _Counted(asyncio.Protocol):
    """aiohttp's protocol for one connection, in the table while it is open.

    Counted here, not by aiohttp: it learns of a connection only once it is made,
    after a whole burst of accepted ones has passed the check.
    """

    def __init__(self, inner: asyncio.Protocol, table: ConnectionTable, overflow: bool) -> None:
        self.inner = inner
        self.overflow = overflow  # let in while all were busy: /health only
        self.busy = 0  # requests being answered
        self.idle_since = asyncio.get_running_loop().time()
        self.transport: asyncio.BaseTransport | None = None
        self._table = table
        table.add(self)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)  # type: ignore[attr-defined]

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()  # type: ignore[attr-defined, no-any-return]

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._table.discard(self)
        self.inner.connection_lost(exc)


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


class ConnectionTable:
    """At most `limit` connections, and `OVERFLOW` more for `/health` while all are busy."""

    def __init__(self, limit: int, refusal: bytes) -> None:
        self.limit = limit
        self._refusal = refusal
        self._live: dict[asyncio.Protocol, _Counted] = {}  # by aiohttp's protocol
        self._overflow = 0
        self._answering = 0  # requests being answered, in all connections
        self._quiet = asyncio.Event()  # set when none is, once closing
        self.closing = False

    def add(self, counted: _Counted) -> None:
        self._live[counted.inner] = counted
        self._overflow += counted.overflow

    def discard(self, counted: _Counted) -> None:
        if self._live.pop(counted.inner, None) is counted:
            self._overflow -= counted.overflow

    def factory(self, handlers: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """The listener's protocol factory around aiohttp's (`handlers`)."""

        def connection() -> asyncio.Protocol:
            if len(self._live) - self._overflow >= self.limit and not self._make_room():
                if self._overflow >= OVERFLOW:
                    _LOGGER.warning("Refusing an HTTP connection: %d open", len(self._live))
                    return _Refusal(self._refusal)
                return _Counted(handlers(), self, overflow=True)
            return _Counted(handlers(), self, overflow=False)

        return connection

    def _make_room(self) -> bool:
        """Close the oldest idle connection; False if every one is busy."""
        idle = [c for c in self._live.values() if not c.busy and not c.overflow]
        if not idle:
            return False
        oldest = min(idle, key=lambda c: c.idle_since)
        _LOGGER.info("Closing an idle HTTP connection to make room for a new one")
        self.discard(oldest)
        if oldest.transport is not None:
            oldest.transport.close()
        return True

    @contextlib.contextmanager
    def answering(self, protocol: object) -> Iterator[bool]:
        """While a request of the connection `protocol` is answered: busy. Yields
        False for a connection let in over the limit (it may ask for /health only)."""
        counted = self._live.get(protocol)  # type: ignore[call-overload]
        if counted is None:  # made room for, or not one of ours (tests' own servers)
            yield True
            return
        counted.busy += 1
        self._answering += 1
        try:
            yield not counted.overflow
        finally:
            counted.busy -= 1
            self._answering -= 1
            if not counted.busy:
                counted.idle_since = asyncio.get_running_loop().time()
            if self.closing and not self._answering:
                self._quiet.set()

    async def drain(self, grace: float) -> None:
        """Close idle connections now; wait up to `grace` seconds for the answers
        under way, then cut off those that are left."""
        self.closing = True
        for counted in list(self._live.values()):
            if not counted.busy and counted.transport is not None:
                counted.transport.close()
        if self._answering:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._quiet.wait(), grace)
        for counted in list(self._live.values()):
            if counted.busy and isinstance(counted.transport, asyncio.Transport):
                _LOGGER.info("An HTTP answer is cut short: the server is stopping")
                counted.transport.abort()


CONNECTIONS: web.AppKey[ConnectionTable] = web.AppKey("connections", ConnectionTable)


@web.middleware
async def room_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Marks the connection busy while its request is answered; a connection let in
    over the limit is answered on /health only."""
    table = request.app.get(CONNECTIONS)
    if table is None:
        return await handler(request)
    if table.closing:  # a kept-alive connection's next request, while the server stops
        raise ApiError(503, "the server is shutting down", code="shutting_down", close=True)
    with table.answering(request.protocol) as in_table:
        if not in_table and request.path != "/health":
            raise ApiError(
                503, f"too many connections (limit {table.limit})", code="busy", close=True
            )
        return await handler(request)
