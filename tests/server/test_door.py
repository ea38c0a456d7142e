"""The Wyoming door in-process, with the in-memory worker: the real handler, scheduler,
sockets and `wyoming` client, no model. Crowds and protocol sequences in seconds; the
"audio" each client gets back is its own text (fake_worker.py), so any mix-up, loss or
doubling shows byte for byte. What the model makes of the text is the job of the
end-to-end tests in test_server.py and test_robustness.py.
"""

from __future__ import annotations

import asyncio

from support.fake_door import fake_door
from support.fake_worker import heard
from support.wyoming_io import collect, stream, synthesize
from wyoming.client import AsyncClient
from wyoming.info import Describe
from wyoming.tts import Synthesize

from wyoming_kokoro.protocol import Piece
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


def test_a_text_over_the_limit_is_refused_before_any_audio() -> None:
    async def main() -> list[str]:
        async with fake_door() as door:
            limit = SpeechSettings().max_text_chars
            reply = await synthesize(door.uri, "x" * (limit + 1), timeout=30)
            assert not door.worker.calls(Piece)
            return reply.types

    assert asyncio.run(main()) == ["error"]
