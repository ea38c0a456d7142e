"""The Wyoming door's I/O helpers, in-process: a write that a client does not read."""

from __future__ import annotations

import asyncio
import json

import pytest

from wyoming_kokoro.server.wyoming.wire import Limits, ProtocolError, read_event, write_or_abort
from wyoming_kokoro.settings import SpeechSettings


class _Transport(asyncio.WriteTransport):
    def __init__(self) -> None:
        super().__init__()
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True


def test_a_write_that_completes_leaves_the_connection() -> None:
    transport = _Transport()
    asyncio.run(write_or_abort(asyncio.sleep(0), transport, 1.0))
    assert not transport.aborted


def test_a_write_the_client_never_reads_aborts_the_connection() -> None:
    transport = _Transport()
    with pytest.raises(ConnectionResetError, match="stopped reading"):
        asyncio.run(write_or_abort(asyncio.sleep(60), transport, 0.01))
    assert transport.aborted


def test_no_transport_left_still_raises() -> None:
    with pytest.raises(ConnectionResetError):
        asyncio.run(write_or_abort(asyncio.sleep(60), None, 0.01))


def _read(data: bytes, limits: Limits) -> object:
    async def main() -> object:
        reader = asyncio.StreamReader()
        header = {"type": "synthesize", "data_length": len(data)}
        reader.feed_data(json.dumps(header).encode() + b"\n" + data)
        reader.feed_eof()
        return await read_event(reader, limits)

    return asyncio.run(main())


def test_the_longest_text_fits_however_its_json_is_written() -> None:
    """A client whose JSON escapes every character (\\uXXXX, two for an emoji) may
    send as many characters as the limit says; the door used to allow 4 bytes each."""
    speech = SpeechSettings(max_text_chars=5_000)
    limits = Limits(max_data_bytes=speech.max_text_json_bytes)
    for text in ("語" * 5_000, "😀" * 5_000):
        event = _read(json.dumps({"text": text}).encode(), limits)  # ensure_ascii
        assert event.data["text"] == text  # type: ignore[attr-defined]
    with pytest.raises(ProtocolError):
        _read(b" " * (speech.max_text_json_bytes + 1), limits)
