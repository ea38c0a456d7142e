"""The Wyoming door's open connections: admitted, made room for, drained at shutdown.

A connection is *idle* while it waits for its next request with nothing under way.
When the table is full, the oldest idle connection is closed to make room (Home
Assistant opens a connection per request, so an idle one is a leaked or stray
socket); a busy one never is. With every connection busy, a few more are let in to
be answered `describe` and `ping` (Home Assistant's check that the service is
there), and `busy` for anything else.

At shutdown, idle connections close at once and answers under way have a grace
period to finish; those that do not get an error event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from wyoming.error import Error
from wyoming.event import async_write_event
from wyoming.info import Describe
from wyoming.ping import Ping, Pong

from wyoming_kokoro.server.wyoming.config import HandlerConfig
from wyoming_kokoro.server.wyoming.handler import KokoroHandler
from wyoming_kokoro.server.wyoming.wire import ProtocolError, linger_close, read_event

_LOGGER = logging.getLogger(__name__)

# Connections let in beyond the table while every connection in it is busy, and
# how long one of them may take to ask its question.
OVERFLOW = 8
OVERFLOW_SECONDS = 5.0

Factory = Callable[[asyncio.StreamReader, asyncio.StreamWriter], KokoroHandler]


class Connections:
    """At most `limit` handlers at once; `serve` is the listener's callback."""

    def __init__(self, limit: int, make_handler: Factory, config: HandlerConfig) -> None:
        self.limit = limit
        self._make_handler = make_handler
        self._config = config
        self._handlers: dict[KokoroHandler, asyncio.Task[None]] = {}
        self._overflow = 0
        self._closing = False

    def __len__(self) -> int:
        return len(self._handlers)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection, from its first byte to its close."""
        try:
            await self._serve(reader, writer)
        except asyncio.CancelledError:
            # Cancelled from outside (the loop ends): the connection is closed all the
            # same, and a connection's task never ends cancelled (asyncio logs that).
            _LOGGER.debug("A connection was cancelled")
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._closing:
            await refuse(reader, writer, "the server is shutting down", "shutting-down")
            return
        if len(self._handlers) >= self.limit and not self._make_room():
            await self._overflowing(reader, writer)
            return
        handler = self._make_handler(reader, writer)
        task = asyncio.current_task()
        assert task is not None
        self._handlers[handler] = task
        try:
            await handler.run()
        finally:
            self._handlers.pop(handler, None)

    def _make_room(self) -> bool:
        """Close the oldest idle connection; False if every one is busy."""
        idle = [h for h in self._handlers if h.idle_since is not None]
        if not idle:
            return False
        oldest = min(idle, key=lambda h: h.idle_since or 0.0)
        del self._handlers[oldest]  # its place is the newcomer's now
        oldest.close_idle("to make room for a new connection")
        return True

    async def _overflowing(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        limit = self.limit
        if self._overflow >= OVERFLOW:
            _LOGGER.warning("Refusing a connection: %d open, all busy", len(self._handlers))
            await refuse(reader, writer, f"too many connections (limit {limit})")
            return
        self._overflow += 1
        try:
            await asyncio.wait_for(self._describe_only(reader, writer), OVERFLOW_SECONDS)
        except (asyncio.TimeoutError, ConnectionError, OSError, ProtocolError):
            writer.close()
        finally:
            self._overflow -= 1

    async def _describe_only(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Answer describe and ping; anything else is told the server is busy."""
        while True:
            event = await read_event(reader, self._config.limits)
            if event is None:
                writer.close()
                return
            if Describe.is_type(event.type):
                await async_write_event(await self._config.describe(), writer)
            elif Ping.is_type(event.type):
                await async_write_event(Pong(text=event.data.get("text")).event(), writer)
            else:
                _LOGGER.warning("Refusing a request: %d connections open, all busy", self.limit)
                await refuse(reader, writer, f"too many connections (limit {self.limit})")
                return

    async def close(self, grace: float) -> None:
        """Idle connections now; answers under way when done, or after `grace` seconds
        with an error event. Returns once every connection is closed."""
        self._closing = True
        for handler in list(self._handlers):
            handler.drain()
        tasks = set(self._handlers.values())
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=grace)
            for handler, task in list(self._handlers.items()):
                if task in late:
                    handler.stop(task)
            await asyncio.gather(*tasks, return_exceptions=True)


async def refuse(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, text: str, code: str = "busy"
) -> None:
    """Tell a client why it is turned away, then hang up."""
    with contextlib.suppress(ConnectionError, OSError):
        await async_write_event(Error(text=text, code=code).event(), writer)
    await linger_close(reader, writer)
