"""Bad input, stalled and vanishing clients, load: the server answers or hangs up, and
keeps serving everybody else."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.fake_worker import FakeWorker, heard
from support.server_process import ServerProcess
from support.wyoming_io import collect, run, synthesize
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.info import Describe
from wyoming.tts import Synthesize

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.protocol import Message, Preempt, WorkerConfig
from wyoming_kokoro.server.memory import rss_mb
from wyoming_kokoro.server.scheduler import Scheduler, SchedulerOptions
from wyoming_kokoro.server.turns import Job
from wyoming_kokoro.server.wyoming.config import HandlerConfig
from wyoming_kokoro.server.wyoming.handler import KokoroHandler
from wyoming_kokoro.server.wyoming.wire import MAX_HEADER_BYTES, Limits, ProtocolError, read_event
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis.edges import HOP


async def _read_all(data: bytes, limit: int = MAX_HEADER_BYTES) -> list[str]:
    """Event types read from `data`, then "!" if the reader refused something."""
    reader = asyncio.StreamReader(limit=limit)
    reader.feed_data(data)
    reader.feed_eof()
    types = []
    while True:
        try:
            event = await read_event(reader, Limits(max_data_bytes=40_000, max_payload_bytes=512))
        except ProtocolError:
            types.append("!")
            return types
        if event is None:
            return types
        types.append(event.type)


# Whole events, and the type the reader must return for each.
_GOOD = [
    (b'{"type": "ping"}\n', "ping"),
    (b'{"type": "synthesize", "data_length": 13}\n{"text": "a"}', "synthesize"),
    (b'{"type": "x", "payload_length": 3}\nabc', "x"),
    (b'{"type": "y", "data": {"a": [[1]]}}\n', "y"),
]
# Input that is no event, whatever follows it: the reader must refuse it, politely.
_BAD = [
    b"not json\n",
    b"\n",
    b"\xff\xfe\n",
    b'{"type": "x", "data_length": 1e9}\n',
    b'{"type": "x", "data_length": 99999999}\n',
    b'{"type": "x", "data": [1]}\n',
    b'{"type": 7}\n',
    b"[" * 60_000 + b"\n",  # nesting deeper than the JSON parser's recursion
    b'{"type": "x", "data_length": ' + b"9" * 5_000 + b"}\n",  # int() refuses 5,000 digits
    b'{"type": "x", "data": {"n": ' + b"1" * 5_000 + b"}}\n",
    b'{"type": "x", "data_length": 30000}\n' + b"[" * 30_000,
    b'{"type": "x", "data_length": 8}\n{"a": 1]',
    b'{"type": "x", "data_length": 5}\n[1,2]',
]
# ...and input that is only malformed where the stream ends in it.
_CUT_SHORT = [
    b'{"type": "x", "payload_length": 9}\nabc',
    b'{"type": "x", "data_length": 9}\n{"te',
    b'{"type": "ping"}',  # header without its newline
]


@pytest.mark.parametrize("data", _BAD[7:11], ids=["nesting", "digits", "data-digits", "body"])
def test_deep_nesting_and_huge_numbers_are_protocol_errors(data: bytes) -> None:
    assert asyncio.run(_read_all(data)) == ["!"]


_BAD_INDEX = st.sampled_from(range(len(_BAD)))  # indices: hypothesis prints them briefly


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(range(len(_GOOD))), max_size=5),
    st.one_of(st.none(), _BAD_INDEX),
    st.lists(st.sampled_from(range(len(_GOOD))), max_size=3),
    st.one_of(st.none(), st.sampled_from(_CUT_SHORT)),
)
def test_event_reader_never_fails_in_an_unexpected_way(
    good: list[int], bad: int | None, after: list[int], cut_short: bytes | None
) -> None:
    # Every whole event before a malformed one comes out as it was sent; the malformed
    # one is one ProtocolError, and nothing is read after it.
    data = b"".join(_GOOD[i][0] for i in good)
    expected = [_GOOD[i][1] for i in good]
    if bad is not None:
        data += _BAD[bad] + b"".join(_GOOD[i][0] for i in after)
        expected.append("!")
    elif cut_short is not None:
        data += cut_short
        expected.append("!")
    assert asyncio.run(_read_all(data)) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=40), _BAD_INDEX), max_size=6))
def test_any_bytes_end_in_events_eof_or_one_protocol_error(parts: list[bytes | int]) -> None:
    data = b"".join(_BAD[p] if isinstance(p, int) else p for p in parts)
    types = asyncio.run(_read_all(data))  # raises if anything but ProtocolError escapes
    assert "!" not in types[:-1]


def test_describe_answers_in_time_while_another_client_sends_forty_thousand_characters(
    server: ServerProcess,
) -> None:
    # Home Assistant gives describe one second; splitting one 40k-character line
    # into sentences used to hold the event loop for longer than that.
    sentence = "The living room is at twenty one degrees and the kitchen is a bit cooler. "
    payload = json.dumps({"text": (sentence * 600)[:40_000]}).encode()

    async def scenario() -> float:
        _, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(json.dumps({"type": "synthesize", "data_length": len(payload)}).encode())
        writer.write(b"\n" + payload)
        await writer.drain()
        loop = asyncio.get_running_loop()
        slowest = 0.0
        for _ in range(6):
            start = loop.time()
            async with AsyncClient.from_uri(server.uri) as client:
                await client.write_event(Describe().event())
                assert (await collect(client, "info", 10)).types == ["info"]
            slowest = max(slowest, loop.time() - start)
        writer.transport.abort()
        return slowest

    assert run(scenario()) < 1.0


class _NoScheduler:
    """Protocol errors come before any synthesis: nothing may reach the scheduler."""

    def prepare(self) -> None:
        pass

    def cancel(self, client: int) -> None:
        pass

    def submit(self, job: Job) -> Job:
        raise AssertionError(f"submitted {job.text!r}")


async def _handler_answers(data: bytes) -> tuple[list[str], list[BaseException]]:
    """Send raw bytes to an in-process handler; the event types until it hangs up."""
    config = HandlerConfig(
        info=Event("info", {}),
        voice_names=("af_heart", "am_adam"),
        default_voice="af_heart",
        speed=1.0,
        max_text_chars=1000,
        limits=Limits(),
        idle_seconds=5,
    )
    escaped: list[BaseException] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = KokoroHandler(reader, writer, config, _NoScheduler(), 1)  # type: ignore[arg-type]
        try:
            await handler.run()
        except Exception as err:  # what asyncio would log as a traceback
            escaped.append(err)

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0, limit=MAX_HEADER_BYTES)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    writer.write_eof()
    types = []
    while line := await asyncio.wait_for(reader.readline(), 10):
        header = json.loads(line)
        await reader.readexactly(header.get("data_length") or 0)
        types.append(header["type"])
    writer.close()
    server.close()
    await server.wait_closed()
    return types, escaped


def _synthesize(data: object, kind: str = "synthesize") -> bytes:
    return json.dumps({"type": kind, "data": data}).encode() + b"\n"


@pytest.mark.parametrize(
    ("data", "answers"),
    [
        (_synthesize({}), ["error"]),  # no text
        (b'{"type": "synthesize", "data": {"text": "\\ud800 Hi."}}\n', ["error"]),  # lone surrogate
        (_synthesize({"text": None}), ["error"]),
        (_synthesize({"text": "Hi.", "voice": "af_heart"}), ["error"]),
        (_synthesize({"text": "Hi.", "voice": ["af_heart"]}), ["error"]),
        (_synthesize({"text": "Hi.", "voice": {"name": 5}}), ["error"]),
        (_synthesize({"text": "Hi.", "voice": {"language": 5}}), ["error"]),
        (_synthesize({"text": "Hi.", "voice": {"name": "af_heart", "speaker": [1]}}), ["error"]),
        (_synthesize({"voice": {"name": {}}}, "synthesize-start"), ["error"]),
        (
            _synthesize({}, "synthesize-start") + _synthesize({}, "synthesize-chunk"),
            ["audio-start", "error"],
        ),
        (b"[" * 60_000 + b"\n", ["error"]),
        (b'{"type": "synthesize", "data_length": ' + b"9" * 5_000 + b"}\n", ["error"]),
    ],
    ids=[
        "no-text",
        "lone-surrogate",
        "null-text",
        "string-voice",
        "list-voice",
        "number-name",
        "number-language",
        "list-speaker",
        "start-object-name",
        "chunk-no-text",
        "nesting",
        "digits",
    ],
)
def test_malformed_events_get_one_error_a_close_and_one_log_line(
    data: bytes, answers: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        types, escaped = asyncio.run(_handler_answers(data))
    assert escaped == [] and types == answers
    mine = [r for r in caplog.records if r.name.startswith("wyoming_kokoro")]
    assert len(mine) == 1 and mine[0].exc_info is None, [r.getMessage() for r in mine]


EMPTY_TEXTS = ["", "   ", "...", "🎉", "\x00\x07", "**", "```\ncode\n```"]
# Chunks are joined into one text, so any sequence of them must say nothing too:
# "..." + "```" is no code fence (a fence starts a line), and "code" would be spoken.
EMPTY_CHUNKS = [*EMPTY_TEXTS[:-1], "\n```\ncode\n```\n"]

MALFORMED_EVENTS = [
    ("synthesize", {}),
    ("synthesize", {"text": "", "voice": "af_heart"}),
    ("synthesize-start", {"voice": ["af_heart"]}),
    ("synthesize-chunk", {}),
]

_OPS = st.lists(
    st.one_of(
        st.just(("describe",)),
        st.just(("ping",)),
        st.just(("start",)),
        st.just(("stop",)),
        st.tuples(st.just("chunk"), st.sampled_from(EMPTY_CHUNKS)),
        st.tuples(st.just("synthesize"), st.sampled_from(EMPTY_TEXTS)),
        st.just(("select-program",)),
        # valid JSON, but no Wyoming event: in any state, an error and a close
        st.tuples(st.just("bad"), st.sampled_from(MALFORMED_EVENTS)),
    ),
    min_size=1,
    max_size=10,
)


def _expected(ops: list[tuple]) -> list[str]:
    """The protocol as a state machine: what the server must answer, in order."""
    out: list[str] = []
    streaming = False
    for op in ops:
        kind = op[0]
        if kind == "describe":
            out.append("info")
        elif kind == "ping":
            out.append("pong")
        elif kind == "start":
            if streaming:
                return [*out, "error"]
            streaming = True
            out.append("audio-start")
        elif kind == "chunk" and not streaming:
            return [*out, "error"]
        elif kind == "stop":
            if not streaming:
                return [*out, "error"]
            streaming = False
            out += ["audio-stop", "synthesize-stopped"]
        elif kind == "synthesize" and not streaming:
            out += ["audio-start", "audio-stop"]
        elif kind == "bad":
            return [*out, "error"]
    return out


async def _converse(uri: str, ops: list[tuple]) -> list[str]:
    events = {
        "describe": lambda: Describe().event(),
        "ping": lambda: Event("ping", {}),
        "start": lambda: Event("synthesize-start", {}),
        "stop": lambda: Event("synthesize-stop", {}),
        "select-program": lambda: Event("select-program", {"name": "kokoro"}),
    }
    async with AsyncClient.from_uri(uri) as client:
        try:  # after an error the server hangs up: later writes may fail
            for op in ops:
                if op[0] == "bad":
                    await client.write_event(Event(*op[1]))
                elif op[0] in ("chunk", "synthesize"):
                    name = "synthesize-chunk" if op[0] == "chunk" else "synthesize"
                    await client.write_event(Event(name, {"text": op[1]}))
                else:
                    await client.write_event(events[op[0]]())
            await client.write_event(Event("ping", {"text": "end"}))
        except ConnectionError:
            pass
        got: list[str] = []
        while True:
            event = await asyncio.wait_for(client.read_event(), 10)
            if event is None or event.type == "error":
                return got + (["error"] if event else [])
            if event.type == "pong" and event.data.get("text") == "end":
                return got
            got.append(event.type)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_OPS)
def test_handler_follows_the_protocol_state_machine(server: ServerProcess, ops: list) -> None:
    assert run(_converse(server.uri, ops)) == _expected(ops)


def test_silent_and_stalled_clients_are_closed_in_bounded_time() -> None:
    with ServerProcess("--connection-timeout", "1") as srv:

        async def silent_then_stalled() -> tuple[bytes, bytes]:
            reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
            silent = await asyncio.wait_for(reader.read(), 10)  # EOF after ~1 s
            writer.close()
            reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
            writer.write(b'{"type": "synthesize", "data_length": 100}\n{"te')
            await writer.drain()
            stalled = await asyncio.wait_for(reader.read(), 10)
            writer.close()
            return silent, stalled

        silent, stalled = run(silent_then_stalled())
        assert silent == b"" and stalled == b""
        assert run(synthesize(srv.uri, "")).types == ["audio-start", "audio-stop"]


@pytest.mark.slow
def test_four_clients_at_once_all_get_their_own_audio(server: ServerProcess, listener) -> None:
    # Fifty at once, each with its own words, run in seconds on the fake worker
    # (test_door.py); here four share the real model, two on each text.
    texts = ["The door is open.", "The lights in the kitchen and the hall are on."]

    async def crowd() -> list:
        async def one(i: int) -> tuple[str, bytes, list[str]]:
            # One connection each: describe, then synthesize, all four open at once.
            async with AsyncClient.from_uri(server.uri) as client:
                await client.write_event(Describe().event())
                info = await collect(client, "info", 60)
                await client.write_event(Synthesize(text=texts[i % 2]).event())
                reply = await collect(client, "audio-stop", 240)
            return texts[i % 2], reply.audio, info.types + reply.types + reply.errors

        return await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(4))), 300)

    results = run(crowd())
    by_text: dict[str, set[bytes]] = {}
    for text, audio, types in results:
        assert types[:2] == ["info", "audio-start"] and types[-1] == "audio-stop", (text, types)
        by_text.setdefault(text, set()).add(audio)
    # A text's durations come from the model's front, the same every time, so a mix-up
    # of chunks between clients would change a length. The samples themselves may differ
    # a little: where the windows of a first call fall depends on how fast frames were
    # decoded so far (int8 scales are per window), and the trim that finds where speech
    # begins and ends judges those samples in steps of HOP, so a length may move by a
    # step at either end. The two texts are far more than that apart in length. So every
    # variant is heard, too: in clips of one variant of each text (Whisper drops a
    # sentence said four times in a row in one clip, though each alone is heard right).
    step = 2 * HOP * 2  # bytes: one step of the trim at each end, 16-bit samples
    lengths = {text: sorted(len(audio) for audio in variants) for text, variants in by_text.items()}
    assert all(found[-1] - found[0] <= step for found in lengths.values()), lengths
    assert abs(lengths[texts[0]][0] - lengths[texts[1]][0]) > 2 * step, lengths
    door, lights = (sorted(by_text[text]) for text in texts)
    for k in range(max(len(door), len(lights))):
        clip = [door[k % len(door)], lights[k % len(lights)]]
        listener.check_later(tuple(texts), clip)
    assert rss_mb(server.pid) < 150


@pytest.mark.parametrize("text", ["only punctuation ?!.,;", "🎉🔥👍", "ctrl\x01\x02chars here."])
def test_odd_text_is_spoken_or_silently_empty(server: ServerProcess, text: str) -> None:
    reply = run(synthesize(server.uri, text))
    assert reply.errors == []
    assert reply.types[0] == "audio-start" and reply.types[-1] == "audio-stop"


def test_a_megabyte_of_text_is_refused_without_growing_the_server(server: ServerProcess) -> None:
    payload = json.dumps({"text": "word " * 200_000}).encode()

    async def send() -> list[str]:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        header = {"type": "synthesize", "data_length": len(payload)}
        writer.write(json.dumps(header).encode() + b"\n" + payload)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), 30)
        writer.close()
        return [json.loads(line)["type"]] if line else []

    assert run(send()) == ["error"]
    assert rss_mb(server.pid) < 150


def test_the_fuzzers_silent_chunks_stay_silent_in_any_order() -> None:
    # The state-machine test relies on this: no sequence of them becomes speech.
    from itertools import product

    from wyoming_kokoro.text.pieces import SentenceStream

    for combo in product(EMPTY_CHUNKS, repeat=3):
        stream = SentenceStream("en-us")
        pieces = [p for chunk in combo for p in stream.feed(chunk)] + stream.finish()
        assert pieces == [], combo


async def _heard_one_utterance(scheduler: Scheduler, client: int) -> None:
    job = scheduler.submit(Job(client, "Earlier.", "af_heart", 1.0, "en-us", awaited=True))
    assert heard(b"".join([pcm async for pcm in job.audio()])) == "Earlier."


async def _in_flight(scheduler: Scheduler, worker: FakeWorker, job: Job) -> Job:
    """`job`, its call being spoken (held: it goes on until a Preempt reaches the worker)."""
    worker.hold()
    scheduler.submit(job)
    for _ in range(1_000):
        if worker.running == job.id:
            return job
        await asyncio.sleep(0)
    raise AssertionError("the call never started")


T = TypeVar("T")


def _run(scenario: Callable[[Scheduler, FakeWorker], Awaitable[T]]) -> T:
    """`scenario` with the real scheduler and the in-memory worker."""

    async def main() -> T:
        worker = FakeWorker()
        assets = Assets(Path("m.onnx"), Path("v.npz"), ("af_heart",), "test")
        config = WorkerConfig(assets, EngineSettings(threads=1))
        options = SchedulerOptions(idle_timeout=0, min_free_mb=0)
        scheduler = Scheduler(config, options, worker)
        scheduler.start()
        try:
            return await asyncio.wait_for(scenario(scheduler, worker), 30)
        finally:
            await scheduler.stop()

    return asyncio.run(main())


def test_a_second_utterance_on_a_persistent_connection_waits_for_nobody() -> None:
    # Client 1 keeps its connection for a second utterance: its listener hears
    # nothing of it yet, so it preempts a call of client 2, who has audio in hand.
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[int, list[Message]]:
        for client in (1, 2):
            await _heard_one_utterance(scheduler, client)
        article = Job(2, "A long article.", "af_heart", 1.0, None)
        await _in_flight(scheduler, worker, article)
        worker.sent.clear()
        scheduler.submit(Job(1, "Second utterance.", "af_heart", 1.0, None, awaited=True))
        await asyncio.sleep(0)
        return article.id, list(worker.sent)

    article_id, sent = _run(scenario)
    assert sent == [Preempt(article_id)]


def test_a_second_utterance_on_a_persistent_connection_is_not_preempted() -> None:
    # ...and its first call is not stopped for a newcomer: both wait for first audio.
    # It only pauses after its window in progress (a soft Preempt), so that the
    # newcomer's first window comes before its second.
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[int, list[Message]]:
        await _heard_one_utterance(scheduler, 1)
        job = Job(1, "Second utterance.", "af_heart", 1.0, None, awaited=True)
        await _in_flight(scheduler, worker, job)
        worker.sent.clear()
        scheduler.submit(Job(3, "A newcomer.", "af_heart", 1.0, None, awaited=True))
        await asyncio.sleep(0)
        return job.id, list(worker.sent)

    job_id, sent = _run(scenario)
    assert sent == [Preempt(job_id, soft=True)]
