"""Text that segfaulted espeak-ng (and with it the worker and everyone it served) is
spoken by a real server, and the worker that spoke it is still the same process
(text/g2p/espeak_guard.py). A Japanese voice, as the embedded model has, reads Hindi
when the request names the language, as Home Assistant's does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.server_process import ServerProcess
from support.wyoming_io import Reply, collect, run
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize, SynthesizeVoice

from wyoming_kokoro.server.wyoming.speech import WORD_EVENT

pytestmark = pytest.mark.model

VOICE = "jf_alpha"
BYTES_PER_SECOND = 24000 * 2


async def say(uri: str, text: str, language: str) -> Reply:
    async with AsyncClient.from_uri(uri) as client:
        voice = SynthesizeVoice(name=VOICE, language=language)
        await client.write_event(Synthesize(text=text, voice=voice).event())
        return await collect(client, "audio-stop", 120)


def words_of(reply: Reply) -> list[str]:
    return [
        word["word"]
        for event in reply.events
        if event.type == WORD_EVENT
        for word in event.data["timestamps"]
    ]


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with ServerProcess("--idle-timeout", "300", "--word-events") as running:
        yield running


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # Each killed the worker before the guard (SIGSEGV in espeak-ng).
        ("″-नमस्कार, आप कैसे हैं?", "hi"),
        ("'-आज का मौसम साफ़ है।", "hi"),
        ("Quote: '-आज means today.", "en"),
        # These crash espeak in a fresh process; in a worker, whether they crash or
        # read garbage depends on what espeak read before. Digits become Devanagari
        # words, "₹-पाँच"; word times read "，-COVID-19" alone, a clause of its own.
        ("आज का दाम: ₹-5 है।", "hi"),
        ("मामले ，-COVID-19 फिर बढ़े।", "hi"),
        ("Cases of ，-COVID-19 rose again.", "en"),
    ],
)
def test_what_crashed_espeak_is_spoken_by_the_same_worker(server, text, language) -> None:
    warm = run(say(server.uri, "The lights are on.", "en"))
    assert warm.errors == [] and warm.audio
    workers = server.workers()
    assert len(workers) == 1
    reply = run(say(server.uri, text, language))
    assert reply.errors == [] and not reply.closed
    assert len(reply.audio) > BYTES_PER_SECOND  # spoken, not cut
    # Each word timed ("है।" comes back as "है।." today: the ends are not the point here).
    assert [w.rstrip("।.") for w in words_of(reply)] == [w.rstrip("।.") for w in text.split()]
    assert server.workers() == workers, "".join(server.log[-40:])
