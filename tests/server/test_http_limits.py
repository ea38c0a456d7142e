"""The HTTP side's bounds, in process: what a request holds (a stream slot, queued
pieces) is given back however the request ends; slow, idle and surplus connections
are closed or refused, as `--connection-timeout` and `--max-connections` say.

A fake scheduler stands in for the model: these requests never reach synthesis.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from wyoming_kokoro.server.http import start_http
from wyoming_kokoro.server.http.app import build_app
from wyoming_kokoro.server.http.request import Voices
from wyoming_kokoro.server.http.speech import ACTIVE_STREAMS, SPEECH_CONFIG, SpeechConfig
from wyoming_kokoro.server.turns import Job
from wyoming_kokoro.server.utterance import SpokenText
from wyoming_kokoro.settings import ConnectionSettings, HttpSettings, SpeechSettings

VOICE = "jm_kumo"
GOOD = {"model": "tts-1", "input": "Hello there.", "voice": VOICE, "response_format": "pcm"}


class FakeScheduler:
    """Records what is queued and cancelled; speaks nothing."""

    worker_pid = None
    stalled = False  # what /health reads of a hung worker

    def __init__(self) -> None:
        self.queued: dict[int, list[Job]] = {}
        self.submitted = 0
        self._ids = itertools.count(1)

    def submit(self, job: Job) -> Job:
        job.id = next(self._ids)
        self.submitted += 1
        self.queued.setdefault(job.client, []).append(job)
        return job

    def cancel(self, client: int) -> None:
        self.queued.pop(client, None)


def run(
    test: Callable[[TestClient, Any], Awaitable[None]], max_streams: int = 2, **config: Any
) -> None:
    """`test(client, app)` against the application on a real socket."""

    async def main() -> None:
        scheduler = FakeScheduler()
        ids = itertools.count(1)
        speech = SpeechConfig(
            scheduler=scheduler,  # type: ignore[arg-type]
            voices=config.pop("voices", Voices((VOICE,), VOICE, 1.0, 1000)),
            next_client_id=lambda: next(ids),
            max_streams=max_streams,
            write_timeout=5.0,
            read_timeout=5.0,
            **config,
        )
        app = build_app(speech, None, (), SpeechSettings(max_text_chars=1000).max_text_json_bytes)
        async with TestClient(TestServer(app)) as client:
            await test(client, app)

    asyncio.run(main())


def test_a_failure_while_the_text_is_queued_frees_the_slot_and_the_queue(monkeypatch) -> None:
    """An exception between queueing the pieces and reading their audio kept the
    stream slot taken and the pieces queued: the worker stayed loaded for them."""

    def broken_finish(self: SpokenText) -> None:
        raise RuntimeError("the text pipeline failed")

    monkeypatch.setattr(SpokenText, "finish", broken_finish)

    async def check(client: TestClient, app: Any) -> None:
        scheduler = app[SPEECH_CONFIG].scheduler
        text = "The first sentence is long enough to go. And the second one waits."
        reply = await client.post("/v1/audio/speech", json={**GOOD, "input": text})
        assert reply.status == 500 and scheduler.submitted > 0
        assert app[ACTIVE_STREAMS] == set()
        assert scheduler.queued == {}  # nothing left to keep the worker loaded

    run(check)


PORT = re.compile(r"HTTP API on http://[^ ]+:(\d+)/v1")
# A body announced and not (yet) sent in full
PARTIAL = (
    b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: 100\r\n\r\n" + b'{"input": "Hel'
)
HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"


def serve(
    caplog: Any,
    test: Callable[[int], Awaitable[None]],
    host: str = "127.0.0.1",
    api_key: str | None = None,
    **connections: Any,
) -> None:
    """`test(port)` against the HTTP side as the server starts it (start_http)."""

    async def main() -> None:
        with caplog.at_level(logging.INFO, logger="wyoming_kokoro.server.http"):
            server = await start_http(
                HttpSettings(uri=f"tcp://{host}:0", api_key=api_key),
                SpeechSettings(),
                ConnectionSettings(**connections),
                FakeScheduler(),  # type: ignore[arg-type]
                (VOICE,),
                VOICE,
                itertools.count(1).__next__,
            )
        try:
            match = PORT.search(caplog.text)
            assert match, caplog.text
            await test(int(match.group(1)))
        finally:
            await server.stop()

    asyncio.run(main())


async def first_bytes(port: int, data: bytes, wait: float) -> bytes:
    """What the server answers to `data` within `wait` seconds (b"": it hung up)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(65536), wait)
    finally:
        writer.close()


def test_a_body_that_does_not_arrive_in_time_is_a_408(caplog) -> None:
    async def check(port: int) -> None:
        reply = await first_bytes(port, PARTIAL, wait=4)
        assert reply.startswith(b"HTTP/1.1 408 "), reply

    serve(caplog, check, connection_timeout=1.0)


@pytest.mark.parametrize(
    "sent", [b"", b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\n"], ids=["nothing", "half"]
)
def test_a_connection_that_sends_nothing_or_half_its_headers_is_closed(caplog, sent) -> None:
    async def check(port: int) -> None:
        assert await first_bytes(port, sent, wait=4) == b""

    serve(caplog, check, connection_timeout=1.0)


def test_the_stream_cap_is_checked_before_the_body_is_read(caplog) -> None:
    """One stream at a time: a second request is refused at once, not after its
    body (which may never come) has been read."""

    async def check(port: int) -> None:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(PARTIAL)  # takes the one stream slot, sends its body slowly
        await asyncio.sleep(0.3)
        try:
            reply = await first_bytes(port, PARTIAL, wait=3)
        finally:
            writer.close()
        assert reply.startswith(b"HTTP/1.1 503 "), reply
        assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "busy"

    serve(caplog, check, max_connections=1, connection_timeout=30.0)


def test_idle_connections_make_room_for_new_ones_oldest_first(caplog) -> None:
    """A full table of idle connections (keep-alive ones, ones that never sent a
    request) made every request a 503, /health too, until --connection-timeout."""

    async def check(port: int) -> None:
        idle = []
        for _ in range(9):  # one speech stream and 8 more: the table is full
            idle.append(await asyncio.open_connection("127.0.0.1", port))
            await asyncio.sleep(0.02)  # so the first is the oldest
        reader, writer = idle[-1]  # one that was served, and kept alive
        writer.write(HEALTH)
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 "), head
        length = re.search(rb"Content-Length: (\d+)", head, re.IGNORECASE)
        assert length
        await reader.readexactly(int(length.group(1)))
        await asyncio.sleep(0.2)
        for _ in range(2):
            assert (await first_bytes(port, HEALTH, wait=3)).startswith(b"HTTP/1.1 200 ")
        # The two oldest made room, without a word; the newer ones stay open.
        ends = []
        for reader, _ in idle:
            try:
                ends.append(await asyncio.wait_for(reader.read(1), 0.3))
            except asyncio.TimeoutError:
                ends.append(b"open")
        for _, writer in idle:
            writer.close()
        assert ends == [b"", b""] + [b"open"] * 7, ends

    serve(caplog, check, max_connections=1, connection_timeout=30.0)


def test_when_every_connection_is_busy_only_health_is_answered(caplog, monkeypatch) -> None:
    """Busy connections are not closed for newcomers; those get /health, and a 503
    for anything else, until the overflow's own bound is reached."""
    import wyoming_kokoro.server.http as door

    monkeypatch.setattr(door, "SPARE_CONNECTIONS", 0)
    speak = (
        b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(json.dumps(GOOD)), json.dumps(GOOD).encode())
    )

    async def check(port: int) -> None:
        busy = []
        for _ in range(2):  # two streams that wait for audio (the fake speaks nothing)
            busy.append(await asyncio.open_connection("127.0.0.1", port))
            busy[-1][1].write(speak)
        await asyncio.sleep(0.3)
        try:
            assert (await first_bytes(port, HEALTH, wait=3)).startswith(b"HTTP/1.1 200 ")
            reply = await first_bytes(port, speak, wait=3)
            assert reply.startswith(b"HTTP/1.1 503 "), reply
            error = json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"]
            assert error["code"] == "busy" and "connections" in error["message"]
            for reader, _ in busy:  # still served, not closed to make room
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(reader.read(1), 0.2)
        finally:
            for _, writer in busy:
                writer.close()

    serve(caplog, check, max_connections=2, connection_timeout=30.0)


def test_an_empty_api_key_warns_like_no_key(caplog) -> None:
    """`--api-key ""` turns authentication off: it must say so, as no key does."""

    async def check(port: int) -> None:
        reply = await first_bytes(port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", 3)
        assert reply.startswith(b"HTTP/1.1 200 ")

    serve(caplog, check, host="0.0.0.0", api_key="")
    assert "open to the network without --api-key" in caplog.text


def test_a_long_input_is_split_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Splitting 100k characters into sentences held the loop (every other client's
    describe and audio waited): a long input is split in a thread, as over Wyoming."""
    import threading

    from wyoming_kokoro.text.pieces import SentenceStream

    threads: list[str] = []
    feed = SentenceStream.feed

    def recorded(self: SentenceStream, *args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return feed(self, *args, **kwargs)

    monkeypatch.setattr(SentenceStream, "feed", recorded)
    text = "The kitchen lights are on and the door is locked. " * 100

    async def test(client: TestClient, app: Any) -> None:
        # The fake scheduler never speaks: the request waits for audio once split.
        request = client.post("/v1/audio/speech", json={**GOOD, "input": text})
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(request, 2)

    run(test, voices=Voices((VOICE,), VOICE, 1.0, 10_000))
    assert threads and threading.main_thread().name not in threads, threads


async def queued_voice(client: TestClient, app: Any, body: dict[str, Any]) -> str:
    """The voice of the first piece a request queues (the fake scheduler never speaks)."""
    scheduler = app[SPEECH_CONFIG].scheduler
    voices: list[str] = []
    submit = scheduler.submit

    def recorded(job: Job) -> Job:
        voices.append(job.voice)
        return submit(job)

    scheduler.submit = recorded
    request = asyncio.ensure_future(client.post("/v1/audio/speech", json=body))
    for _ in range(500):
        if voices or request.done():
            break
        await asyncio.sleep(0.01)
    if not voices:
        reply = await request
        raise AssertionError(f"{reply.status}: {await reply.text()}")
    request.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await request
    return voices[0]


@pytest.mark.parametrize(
    "voice", ["absent", None, "", {"id": None}], ids=["absent", "null", "empty", "null-id"]
)
def test_without_a_voice_the_offers_default_speaks_after_a_rescan(voice: object) -> None:
    """No voice is the server's default voice, the one the last rescan chose (as over
    Wyoming and in GET /v1/audio/voices), not the one of start-up: that one may be gone."""
    from wyoming_kokoro.server.offer import Offer

    offer = Offer((VOICE,), {}, VOICE, False)
    offer.update(("af_heart",), {})  # the start-up default went, af_heart came
    body = {key: value for key, value in GOOD.items() if key != "voice"}
    if voice != "absent":
        body["voice"] = voice

    async def test(client: TestClient, app: Any) -> None:
        assert await queued_voice(client, app, body) == "af_heart"

    run(test, voices=Voices((VOICE,), VOICE, 1.0, 1000, offer=offer))


def test_a_client_that_hangs_up_mid_body_is_one_quiet_log_line(caplog) -> None:
    """aiohttp logged an ERROR with a traceback for every client that went away while
    sending its body: a client leaving is no server error."""

    async def check(port: int) -> None:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(PARTIAL)
        await writer.drain()
        await asyncio.sleep(0.3)  # the request is being read
        writer.close()
        await asyncio.sleep(0.5)
        # Still serving
        assert (await first_bytes(port, HEALTH, wait=3)).startswith(b"HTTP/1.1 200 ")

    loggers = caplog.at_level(logging.DEBUG, logger="aiohttp")
    with loggers, caplog.at_level(logging.INFO, logger="wyoming_kokoro"):
        serve(caplog, check, connection_timeout=30.0)
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert loud == [], caplog.text
    left = [r for r in caplog.records if "went away" in r.getMessage()]
    assert len(left) == 1 and left[0].levelno == logging.INFO, caplog.text


class _Stalling(FakeScheduler):
    """Speaks the first block of every piece, then nothing more."""

    def submit(self, job: Job) -> Job:
        job = super().submit(job)
        job.chunks.put_nowait(b"\0" * 4800)
        return job


def test_a_stopping_door_closes_idle_ones_and_cuts_a_stream_that_does_not_end(caplog) -> None:
    """At SIGTERM (HttpServer.stop), a stream that cannot finish within the grace is
    cut without the chunked body's last chunk: its client can tell it is incomplete."""
    speak = (
        b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(json.dumps(GOOD)), json.dumps(GOOD).encode())
    )

    async def main() -> tuple[bytes, bytes]:
        with caplog.at_level(logging.INFO, logger="wyoming_kokoro.server.http"):
            server = await start_http(
                HttpSettings(uri="tcp://127.0.0.1:0"),
                SpeechSettings(),
                ConnectionSettings(connection_timeout=30.0),
                _Stalling(),  # type: ignore[arg-type]
                (VOICE,),
                VOICE,
                itertools.count(1).__next__,
            )
            match = PORT.search(caplog.text)
            assert match, caplog.text
            port = int(match.group(1))
            idle = await asyncio.open_connection("127.0.0.1", port)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(speak)
            streamed = await reader.readuntil(b"\r\n\r\n")  # it has begun
            stopping = asyncio.ensure_future(server.stop(grace=0.5))
            idle_end = await asyncio.wait_for(idle[0].read(), 5)
            with contextlib.suppress(ConnectionError):
                while chunk := await asyncio.wait_for(reader.read(65536), 5):
                    streamed += chunk
            await stopping
            for _, w in (idle, (reader, writer)):
                w.close()
            return idle_end, streamed

    idle_end, streamed = asyncio.run(main())
    assert idle_end == b""
    assert streamed.startswith(b"HTTP/1.1 200 ") and b"Transfer-Encoding: chunked" in streamed
    assert len(streamed.split(b"\r\n\r\n", 1)[1]) >= 4800, streamed[:300]  # the audio came
    assert not streamed.endswith(b"0\r\n\r\n"), streamed[-20:]  # its last chunk did not
    assert "cut short" in caplog.text
