"""Bad input, stalled and vanishing clients, load: the server answers or hangs up, and
keeps serving everybody else."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import ServerProcess, wer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wyoming.client import AsyncClient
from wyoming.info import Describe
from wyoming.tts import Synthesize
from wyoming_io import collect, run, synthesize

from wyoming_kokoro.memory import rss_mb
from wyoming_kokoro.wire import Limits, ProtocolError, read_event


async def _read_all(data: bytes) -> list[str]:
    reader = asyncio.StreamReader(limit=1024)
    reader.feed_data(data)
    reader.feed_eof()
    types = []
    while True:
        try:
            event = await read_event(reader, Limits(max_data_bytes=512, max_payload_bytes=512))
        except ProtocolError:
            types.append("!")
            return types
        if event is None:
            return types
        types.append(event.type)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=40),
            st.sampled_from(
                [
                    b'{"type": "ping"}\n',
                    b'{"type": "synthesize", "data_length": 13}\n{"text": "a"}',
                    b'{"type": "x", "payload_length": 3}\nabc',
                    b'{"type": "x", "data_length": 1e9}\n',
                    b'{"type": "x", "data": [1]}\n',
                    b"\n",
                    b"{",
                ]
            ),
        ),
        max_size=8,
    ).map(b"".join)
)
def test_event_reader_never_fails_in_an_unexpected_way(data: bytes) -> None:
    # Every input ends in events, a clean EOF or one ProtocolError: nothing else.
    types = asyncio.run(_read_all(data))
    assert all(isinstance(t, str) for t in types)


EMPTY_TEXTS = ["", "   ", "...", "🎉", "\x00\x07", "**", "```\ncode\n```"]
# Chunks are joined into one text, so any sequence of them must say nothing too:
# "..." + "```" is no code fence (a fence starts a line), and "code" would be spoken.
EMPTY_CHUNKS = [*EMPTY_TEXTS[:-1], "\n```\ncode\n```\n"]

_OPS = st.lists(
    st.one_of(
        st.just(("describe",)),
        st.just(("ping",)),
        st.just(("start",)),
        st.just(("stop",)),
        st.tuples(st.just("chunk"), st.sampled_from(EMPTY_CHUNKS)),
        st.tuples(st.just("synthesize"), st.sampled_from(EMPTY_TEXTS)),
        st.just(("select-program",)),
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
    return out


async def _converse(uri: str, ops: list[tuple]) -> list[str]:
    from wyoming.event import Event

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
                if op[0] in ("chunk", "synthesize"):
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


def test_connection_limit_turns_extra_clients_away() -> None:
    with ServerProcess("--max-connections", "2") as srv:

        async def three() -> list[str]:
            held = [await asyncio.open_connection("127.0.0.1", srv.port) for _ in range(2)]
            await asyncio.sleep(0.2)
            async with AsyncClient.from_uri(srv.uri) as client:
                await client.write_event(Describe().event())
                reply = await collect(client, "info", 10)
            for _, writer in held:
                writer.close()
            await asyncio.sleep(0.3)
            return reply.errors

        errors = run(three())
        assert errors and "too many connections" in errors[0]
        assert run(synthesize(srv.uri, "")).types == ["audio-start", "audio-stop"]


@pytest.mark.slow
def test_fifty_clients_at_once_all_get_their_own_audio(server: ServerProcess, recognizer) -> None:
    texts = ["The door is open.", "The lights are on."]

    async def crowd() -> list:
        async def one(i: int) -> tuple[str, bytes, list[str]]:
            # One connection each: describe, then synthesize, all 50 open at once.
            async with AsyncClient.from_uri(server.uri) as client:
                await client.write_event(Describe().event())
                info = await collect(client, "info", 60)
                await client.write_event(Synthesize(text=texts[i % 2]).event())
                reply = await collect(client, "audio-stop", 240)
            return texts[i % 2], reply.audio, info.types + reply.types + reply.errors

        return await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(50))), 300)

    results = run(crowd())
    by_text: dict[str, set[bytes]] = {}
    for text, audio, types in results:
        assert types[:2] == ["info", "audio-start"] and types[-1] == "audio-stop", (text, types)
        by_text.setdefault(text, set()).add(audio)
    # The model is deterministic: any mix-up between clients would show as a difference.
    assert all(len(variants) == 1 for variants in by_text.values())
    for text, variants in by_text.items():
        assert wer(text, recognizer.transcribe(next(iter(variants)))) <= 0.25
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

    from wyoming_kokoro.text import SentenceStream

    for combo in product(EMPTY_CHUNKS, repeat=3):
        stream = SentenceStream("en-us")
        pieces = [p for chunk in combo for p in stream.feed(chunk)] + stream.finish()
        assert pieces == [], combo
