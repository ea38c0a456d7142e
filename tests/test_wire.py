"""The Wyoming door's I/O helpers, in-process: a write that a client does not read."""

from __future__ import annotations

import asyncio

import pytest

from wyoming_kokoro.server.wyoming.wire import write_or_abort


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
