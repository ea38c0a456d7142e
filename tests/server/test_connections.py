"""The Wyoming door's connections. Idle ones never lock the house out: a full table
of sockets that ask for nothing makes room for a newcomer (the oldest idle one is
closed), and `describe` is answered even when every connection is busy. A stopping
door closes idle connections at once, lets answers under way finish within the
grace period and ends the others with an error event. (The HTTP door's:
test_http_limits.py; SIGTERM to a real server: test_shutdown.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

from support.fake_worker import FakeWorker
from support.server_process import ServerProcess
from support.wyoming_io import collect, run, synthesize
from wyoming.client import AsyncClient
from wyoming.event import Event, async_write_event
from wyoming.info import Describe
from wyoming.ping import Ping
from wyoming.tts import SynthesizeChunk, SynthesizeStart, SynthesizeStop

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.protocol import WorkerConfig
from wyoming_kokoro.server.offer import Offer
from wyoming_kokoro.server.scheduler import Scheduler, SchedulerOptions
from wyoming_kokoro.server.wyoming.config import HandlerConfig
from wyoming_kokoro.server.wyoming.connections import Connections
from wyoming_kokoro.server.wyoming.handler import KokoroHandler
from wyoming_kokoro.server.wyoming.wire import Limits, read_event
from wyoming_kokoro.settings import EngineSettings, SpeechSettings

VOICES = ("jm_kumo", "af_heart")


async def _describe(uri: str) -> list[str]:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        return (await collect(client, "info", 10)).types


def test_a_table_full_of_idle_wyoming_sockets_makes_room_for_describe() -> None:
    """64 idle connections (a port scan, a client that leaks them) made every describe
    and request `busy` for the 10 minutes of --connection-timeout."""
    with ServerProcess("--max-connections", "3") as srv:

        async def full_then_describe() -> tuple[list[str], list[bytes], float]:
            idle = []
            for _ in range(3):
                idle.append(await asyncio.open_connection("127.0.0.1", srv.port))
                await asyncio.sleep(0.05)  # so the first is the oldest
            await asyncio.sleep(0.2)
            started = time.monotonic()
            types = await _describe(srv.uri)
            took = time.monotonic() - started
            ends = []
            for reader, writer in idle:
                try:
                    ends.append(await asyncio.wait_for(reader.read(), 0.5))
                except asyncio.TimeoutError:
                    ends.append(b"still open")
                writer.close()
            return types, ends, took

        types, ends, took = run(full_then_describe())
        print(f"describe answered {took:.3f} s after the table was full of idle sockets")
        assert types == ["info"], types
        # The oldest idle one made room: closed without a word; the others stay.
        assert ends == [b"", b"still open", b"still open"], ends


@contextlib.asynccontextmanager
async def _door(limit: int) -> AsyncIterator[tuple[str, Connections]]:
    """The Wyoming door as the server builds it (Connections in front of the real
    handler and scheduler), with the in-memory worker and `limit` connections."""
    worker = FakeWorker()
    assets = Assets(Path("m.onnx"), Path("v.npz"), VOICES, "test")
    scheduler = Scheduler(
        WorkerConfig(assets, EngineSettings(threads=1)), SchedulerOptions(60, 0), worker
    )
    offer = Offer(VOICES, {}, VOICES[0], streaming=True)
    speech = SpeechSettings()
    config = HandlerConfig(
        info=offer.info,
        voice_names=VOICES,
        default_voice=VOICES[0],
        speed=1.0,
        max_text_chars=speech.max_text_chars,
        limits=Limits(max_data_bytes=speech.max_text_json_bytes),
        idle_seconds=30.0,
        offer=offer,
    )
    ids = itertools.count(1)
    table = Connections(
        limit, lambda r, w: KokoroHandler(r, w, config, scheduler, next(ids)), config
    )
    scheduler.start()
    server = await asyncio.start_server(table.serve, "127.0.0.1", 0)
    try:
        yield f"tcp://127.0.0.1:{server.sockets[0].getsockname()[1]}", table
    finally:
        server.close()
        await table.close(grace=0)
        await scheduler.stop()


async def _open_stream(uri: str) -> AsyncClient:
    """A connection with an answer under way: a stream begun, its text still coming."""
    client = AsyncClient.from_uri(uri)
    await client.connect()
    await client.write_event(SynthesizeStart().event())
    await client.write_event(SynthesizeChunk(text="The text is still ").event())
    assert (await collect(client, "audio-start", 10)).types == ["audio-start"]
    return client


def test_with_every_connection_busy_describe_is_answered_and_a_request_is_busy() -> None:
    """Busy connections are never closed for a newcomer: it is answered describe and
    ping (Home Assistant's check that the service is there), and `busy` otherwise."""

    async def main() -> tuple[list[str], list[str], list[str], list[str]]:
        async with _door(limit=2) as (uri, _):
            busy = [await _open_stream(uri) for _ in range(2)]
            described = await _describe(uri)
            async with AsyncClient.from_uri(uri) as client:
                await client.write_event(Ping(text="hi").event())
                pinged = (await collect(client, "pong", 10)).types
            refused = await synthesize(uri, "Hello there.", timeout=10)
            # The busy ones go on: their streams end as usual.
            ended = []
            for client in busy:
                await client.write_event(SynthesizeChunk(text="coming.").event())
                await client.write_event(SynthesizeStop().event())
                ended.append((await collect(client, "synthesize-stopped", 10)).types[-1])
                await client.disconnect()
            return described, pinged, refused.errors, ended

    described, pinged, refused, ended = asyncio.run(main())
    assert described == ["info"] and pinged == ["pong"]
    assert len(refused) == 1 and "too many connections" in refused[0], refused
    assert ended == ["synthesize-stopped"] * 2


def test_a_full_table_of_idle_connections_makes_room_oldest_first_in_process(caplog) -> None:
    async def main() -> tuple[list[str], list[bytes]]:
        async with _door(limit=3) as (uri, _):
            idle = []
            for _ in range(3):
                idle.append(await asyncio.open_connection("127.0.0.1", int(uri.rsplit(":")[-1])))
                await asyncio.sleep(0.02)
            idle[0][1].write(b'{"type": "synthe')  # half a header is no request yet
            busy_then_idle = idle[1]  # one that was served is idle again
            await async_write_event(Describe().event(), busy_then_idle[1])
            assert (await read_event(busy_then_idle[0], Limits())) is not None
            await asyncio.sleep(0.05)
            said = await synthesize(uri, "Hello there.", timeout=10)
            ends = []
            for reader, writer in idle:
                try:
                    ends.append(await asyncio.wait_for(reader.read(), 0.3))
                except asyncio.TimeoutError:
                    ends.append(b"open")
                writer.close()
            return said.types, ends

    with caplog.at_level(logging.INFO, logger="wyoming_kokoro"):
        types, ends = asyncio.run(main())
    assert types[0] == "audio-start" and types[-1] == "audio-stop", types
    # The oldest idle one (not the one that was served after it) made room: one line
    # in the log, no warning for its half header.
    assert ends == [b"", b"open", b"open"], ends
    mine = [r for r in caplog.records if r.name.startswith("wyoming_kokoro")]
    assert [r for r in mine if r.levelno >= logging.WARNING] == [], caplog.text
    assert sum("to make room" in r.getMessage() for r in mine) == 1, caplog.text


async def _ends(connection: asyncio.StreamReader | AsyncClient) -> list[str]:
    """The events' types until the connection ends (errors as their texts), then EOF."""

    async def read() -> Event | None:
        if isinstance(connection, AsyncClient):
            return await connection.read_event()
        return await read_event(connection, Limits())

    seen = []
    while (event := await asyncio.wait_for(read(), 10)) is not None:
        seen.append(event.data["text"] if event.type == "error" else event.type)
    return [*seen, "EOF"]


def test_a_stopping_door_closes_idle_ones_lets_answers_finish_and_cuts_the_rest() -> None:
    async def main() -> tuple[list[str], list[str], list[str], list[str]]:
        async with _door(limit=8) as (uri, table):
            port = int(uri.rsplit(":", 1)[1])
            finishing, unfinished = await _open_stream(uri), await _open_stream(uri)
            idle = await asyncio.open_connection("127.0.0.1", port)
            await asyncio.sleep(0.05)
            closing = asyncio.ensure_future(table.close(grace=1.0))
            idle_end = await _ends(idle[0])
            # The answer under way goes on: its client ends it, and hears it whole.
            await finishing.write_event(SynthesizeChunk(text="coming.").event())
            await finishing.write_event(SynthesizeStop().event())
            finished = await _ends(finishing)
            # The one whose text never ends is cut short, with an error event.
            cut = await _ends(unfinished)
            await closing
            late = await asyncio.open_connection("127.0.0.1", port)
            refused = await _ends(late[0])
            for client in (finishing, unfinished):
                await client.disconnect()
            return idle_end, finished, cut, refused

    idle_end, finished, cut, refused = asyncio.run(main())
    assert idle_end == ["EOF"]
    assert finished[-3:] == ["audio-stop", "synthesize-stopped", "EOF"], finished
    assert cut[-2:] == ["the server is shutting down", "EOF"], cut
    assert refused == ["the server is shutting down", "EOF"], refused
