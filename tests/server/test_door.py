"""The Wyoming door in-process, with the in-memory worker: the real handler, scheduler,
sockets and `wyoming` client, no model. Crowds and protocol sequences in seconds; the
"audio" each client gets back is its own text (fake_worker.py), so any mix-up, loss or
doubling shows byte for byte. What the model makes of the text is the job of the
end-to-end tests in test_server.py and test_robustness.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from support.fake_door import VOICES, Door, fake_door
from support.fake_worker import heard
from support.wyoming_io import collect, stream, synthesize
from wyoming.client import AsyncClient
from wyoming.event import async_write_event
from wyoming.info import Describe
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart

from wyoming_kokoro.protocol import Next, Piece
from wyoming_kokoro.server.turns import MAX_BUFFERED_BYTES
from wyoming_kokoro.server.utterance import HEAD_WAIT_S
from wyoming_kokoro.settings import SpeechSettings


def test_fifty_clients_at_once_each_get_their_own_words() -> None:
    texts = [f"Client number {i} asked for this." for i in range(50)]

    async def one(uri: str, text: str) -> tuple[list[str], str]:
        # One connection each: describe, then synthesize, all 50 open at once.
        async with AsyncClient.from_uri(uri) as client:
            await client.write_event(Describe().event())
            info = await collect(client, "info", 30)
            await client.write_event(Synthesize(text=text).event())
            reply = await collect(client, "audio-stop", 60)
        return info.types + reply.types + reply.errors, heard(reply.audio)

    async def main() -> list[tuple[list[str], str]]:
        async with fake_door() as door:
            return await asyncio.gather(*(one(door.uri, text) for text in texts))

    for text, (types, said) in zip(texts, asyncio.run(main()), strict=True):
        assert types[:2] == ["info", "audio-start"] and types[-1] == "audio-stop", types
        assert said == text


def test_a_streamed_answer_is_spoken_once_and_ends_with_stopped() -> None:
    """Home Assistant sends start, mid-word chunks, the same text again as a plain
    synthesize (for servers that cannot stream), then stop: the text is said once."""
    text = "The lights are on. The door is locked. Good night."

    async def main() -> tuple[list[str], str, list[str]]:
        async with fake_door() as door:
            reply = await stream(door.uri, text, piece=5)
            pieces = [m.text for m in door.worker.calls(Piece)]  # type: ignore[attr-defined]
            return reply.types, heard(reply.audio), pieces

    types, said, pieces = asyncio.run(main())
    assert types[0] == "audio-start" and types[-2:] == ["audio-stop", "synthesize-stopped"]
    assert said == text
    assert " ".join(pieces) == text  # sent to the worker once, as it came


def test_a_client_that_vanishes_mid_answer_costs_the_others_nothing() -> None:
    article = " ".join(f"Paragraph {n} of the article." for n in range(1, 9))

    async def main() -> tuple[str, list[str]]:
        async with fake_door() as door:
            door.worker.hold()  # the article's first call does not finish...
            async with AsyncClient.from_uri(door.uri) as client:
                await client.write_event(Synthesize(text=article).event())
                while not door.worker.calls(Piece):
                    await asyncio.sleep(0.01)
            # ...and its client is gone: the next one is served in full.
            door.worker.release()
            reply = await synthesize(door.uri, "The door is open.", timeout=30)
            return heard(reply.audio), reply.errors

    said, errors = asyncio.run(main())
    assert (said, errors) == ("The door is open.", [])


def test_an_opening_phrase_due_after_its_client_left_is_never_spoken() -> None:
    # The opening phrase of a stream waits HEAD_WAIT_S for the rest of its sentence:
    # a client gone by then must not leave it queued for nobody.
    async def main() -> list[str]:
        async with fake_door() as door:
            async with AsyncClient.from_uri(door.uri) as client:
                await client.write_event(SynthesizeStart().event())
                chunk = "The living room lights are on, the heating is set"
                await client.write_event(SynthesizeChunk(text=chunk).event())
                await asyncio.sleep(0.05)
            await asyncio.sleep(HEAD_WAIT_S + 0.3)
            return [m.text for m in door.worker.calls(Piece)]  # type: ignore[attr-defined]

    assert asyncio.run(main()) == []


def test_a_text_over_the_limit_is_refused_before_any_audio() -> None:
    async def main() -> list[str]:
        async with fake_door() as door:
            limit = SpeechSettings().max_text_chars
            reply = await synthesize(door.uri, "x" * (limit + 1), timeout=30)
            assert not door.worker.calls(Piece)
            return reply.types

    assert asyncio.run(main()) == ["error"]


def test_a_text_given_whole_goes_to_the_worker_in_whole_sentences() -> None:
    # `synthesize` knows the whole text: a one-sentence answer is one call, its first
    # audio decoded in windows. Cut into an opening phrase and the rest, it lost its
    # prosody, and each later phrase, a whole call of its own, came after a gap when
    # the CPU was slow (1.5-1.9 s inside this sentence at 16 ms a frame). Streamed
    # as fast as a cloud LLM writes, the sentence is waited for and said whole too;
    # streamed slowly (1.5 s for this sentence), its opening phrase goes ahead once
    # HEAD_WAIT_S has passed.
    text = (
        "The living room lights are on, the heating is set to twenty one degrees, "
        "and the door is locked."
    )
    ways = (
        synthesize,
        lambda uri, text: stream(uri, text, piece=7),
        lambda uri, text: stream(uri, text, piece=7, every=0.1),
    )

    async def main() -> list[list[str]]:
        sent = []
        for speak in ways:
            async with fake_door() as door:
                reply = await speak(door.uri, text)
                assert heard(reply.audio) == text
                sent.append([m.text for m in door.worker.calls(Piece)])  # type: ignore[attr-defined]
        return sent

    whole, fast, slow = asyncio.run(main())
    assert whole == [text] and fast == [text]
    assert slow[0] == "The living room lights are on," and " ".join(slow) == text


class _Lines(logging.Handler):
    """The server's log lines, as the --debug log shows them."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def saw(self, part: str) -> bool:
        return any(part in line for line in self.lines)


PAD = 96_000  # bytes of the fake's audio per call: about a real call's 2 s


def test_a_client_that_never_reads_is_held_back_then_closed() -> None:
    # 400 sentences of "audio" as large as a real call's (~2 s at 24 kHz); the
    # client's socket takes 4 KB and nobody reads it.
    book = " ".join(f"Sentence {n} of the book." for n in range(400))
    log, package = _Lines(), logging.getLogger("wyoming_kokoro")
    level = package.level

    def calls(door: Door) -> int:
        return sum(isinstance(m, (Piece, Next)) for m in door.worker.sent)

    async def main() -> tuple[int, int, str, bool]:
        async with fake_door(connection_timeout=1.0, pad=PAD) as door:
            host, port = door.uri.removeprefix("tcp://").split(":")
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect((host, int(port)))
            reader, writer = await asyncio.open_connection(sock=sock)
            await async_write_event(Synthesize(text=book).event(), writer)
            await until(lambda: log.saw("held back"))
            at_hold = await settled(lambda: calls(door))  # the sockets' buffers filled too
            other = await synthesize(door.uri, "The washing machine has finished.", timeout=30)
            # Still not reading: given up on after the connection timeout (1 s here).
            await until(lambda: log.saw("stopped reading"))
            try:  # what had reached this socket, then the end of the connection
                closed = await asyncio.wait_for(reader.read(), 10) is not None
            except ConnectionResetError:
                closed = True
            writer.close()
            return at_hold, calls(door), heard(other.audio), closed

    package.addHandler(log)
    package.setLevel(logging.DEBUG)
    try:
        at_hold, at_end, other, closed = asyncio.run(main())
    finally:
        package.removeHandler(log)
        package.setLevel(level)
    assert other == "The washing machine has finished."  # someone else is served meanwhile
    assert closed
    # Held back, the book made no more calls: only the announcement's (and the one in
    # flight at most) ...
    assert at_end - at_hold <= 2, (at_hold, at_end)
    # ... and it was held back long before the end of the book: no more audio was made
    # than its share in the server and what the kernel's socket buffers take.
    kernel = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2]) + 4096
    assert (at_hold - 2) * PAD <= MAX_BUFFERED_BYTES + kernel, at_hold
    assert at_hold < 100  # of 400


async def settled(count: Callable[[], int], quiet: float = 0.3) -> int:
    """`count` once it has not changed for `quiet` seconds."""
    value, since = count(), asyncio.get_running_loop().time()
    while asyncio.get_running_loop().time() - since < quiet:
        await asyncio.sleep(0.01)
        if count() != value:
            value, since = count(), asyncio.get_running_loop().time()
    return value


async def until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the condition never came true")
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("kind", ["synthesize", "synthesize-start"])
def test_a_null_voice_is_the_default_voice_as_over_http(kind: str) -> None:
    """`"voice": null` is no voice on both doors (OpenAI's clients send null for an
    optional field): the default voice speaks, not a protocol error."""

    async def main() -> tuple[list[str], list[str]]:
        async with fake_door() as door:
            reader, writer = await asyncio.open_connection(*door.uri[6:].split(":"))
            data = {"voice": None} if kind == "synthesize-start" else {"text": "Hi.", "voice": None}
            events: list[dict[str, object]] = [{"type": kind, "data": data}]
            if kind == "synthesize-start":
                events += [
                    {"type": "synthesize-chunk", "data": {"text": "Hi there."}},
                    {"type": "synthesize-stop"},
                ]
            for event in events:
                writer.write(json.dumps(event).encode() + b"\n")
            await writer.drain()
            types = []
            while not types or types[-1] not in ("audio-stop", "error"):
                header = json.loads(await asyncio.wait_for(reader.readline(), 10))
                await reader.readexactly(header.get("data_length") or 0)
                await reader.readexactly(header.get("payload_length") or 0)
                types.append(header["type"])
            writer.close()
            voices = [m.voice for m in door.worker.calls(Piece)]  # type: ignore[attr-defined]
            return types, voices

    types, voices = asyncio.run(main())
    assert types[0] == "audio-start" and types[-1] == "audio-stop", types
    assert voices and set(voices) == {VOICES[0]}
