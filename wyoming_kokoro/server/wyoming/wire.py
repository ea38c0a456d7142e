"""Reading Wyoming events from untrusted clients, with limits and clear failures.

The `wyoming` library's reader returns None for bad JSON exactly as for EOF, so a
client that sends garbage would just be dropped without a word. Here every way
an event can be malformed becomes a `ProtocolError` the handler can answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass

from wyoming.event import Event

from wyoming_kokoro.server.redact import json_failure, loads_json

# asyncio.StreamReader's line limit; also the longest header line accepted.
MAX_HEADER_BYTES = 64 * 1024


# Besides JSONDecodeError and UnicodeDecodeError (both ValueErrors), the parser raises
# RecursionError for deep nesting ("[[[[…") and a plain ValueError for an integer
# of more than 4,300 digits.
_JSON_ERRORS = (ValueError, RecursionError)


class ProtocolError(ValueError):
    """The client sent something that is not a valid Wyoming event."""


@dataclass(frozen=True)
class Limits:
    max_data_bytes: int = 4 * 1024 * 1024
    max_payload_bytes: int = 4 * 1024 * 1024


def _length(header: dict, key: str, limit: int) -> int:
    value = header.get(key)
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ProtocolError(f"{key} must be a non-negative integer")
    if value > limit:
        raise ProtocolError(f"{key} {value} is larger than the limit of {limit} bytes")
    return value


async def read_event(reader: asyncio.StreamReader, limits: Limits) -> Event | None:
    """The next event, None at a clean end of stream, ProtocolError if malformed."""
    try:
        line = await reader.readline()
    except (ValueError, asyncio.LimitOverrunError) as err:
        raise ProtocolError(f"header line longer than {MAX_HEADER_BYTES} bytes") from err
    if not line:
        return None
    if not line.endswith(b"\n"):
        raise ProtocolError("connection closed in the middle of an event header")
    try:
        header = loads_json(line.rstrip(b"\r\n"))  # an error on its line, not past it
    except _JSON_ERRORS as err:
        raise ProtocolError(f"event header is {json_failure(err)}") from err
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise ProtocolError("event header must be a JSON object with a string 'type'")
    data = header.get("data") or {}
    if not isinstance(data, dict):
        raise ProtocolError("event 'data' must be a JSON object")
    data_length = _length(header, "data_length", limits.max_data_bytes)
    payload_length = _length(header, "payload_length", limits.max_payload_bytes)
    try:
        if data_length:
            extra = loads_json(await reader.readexactly(data_length))
            if not isinstance(extra, dict):
                raise ProtocolError("event data must be a JSON object")
            data.update(extra)
        payload = await reader.readexactly(payload_length) if payload_length else None
    except asyncio.IncompleteReadError as err:
        raise ProtocolError("connection closed in the middle of an event") from err
    except _JSON_ERRORS as err:
        raise ProtocolError(f"event data is {json_failure(err)}") from err
    return Event(type=header["type"], data=data, payload=payload)


async def write_or_abort(
    write: Awaitable[object], transport: asyncio.WriteTransport | None, timeout: float
) -> None:
    """Await `write` for at most `timeout` seconds, else abort the connection.

    A client that stops reading holds its audio in our buffers: it is given up on,
    with an abort because close() would wait for the unread audio to be flushed:
    forever. Raises ConnectionResetError then. Both doors, Wyoming and HTTP, use it.
    """
    try:
        await asyncio.wait_for(write, timeout)
    except asyncio.TimeoutError:
        if transport is not None:
            transport.abort()
        raise ConnectionResetError("the client stopped reading") from None


async def linger_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Finish sending, then close without a reset.

    Closing a socket with unread input makes the kernel send a reset, which can
    destroy the last event (an error) before the client reads it; so stop
    writing and discard what the client still sends, for at most a second.
    """
    with contextlib.suppress(ConnectionError, OSError, RuntimeError):
        if writer.can_write_eof():
            writer.write_eof()
        with contextlib.suppress(asyncio.TimeoutError, ValueError):
            await asyncio.wait_for(_discard(reader), 1.0)
    writer.close()


async def _discard(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass
