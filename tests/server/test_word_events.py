"""--word-events: each word's time over Wyoming, in events of the server's own sent just
before the audio chunk the word begins in; off by default (Home Assistant has no use
for them). A real server and the wyoming library's own client, as Home Assistant
streams an LLM's answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.server_process import ServerProcess
from support.wyoming_io import run, stream
from wyoming.audio import AudioChunk

from wyoming_kokoro.server.wyoming.config import HandlerConfig
from wyoming_kokoro.server.wyoming.speech import WORD_EVENT
from wyoming_kokoro.settings import SpeechSettings

TEXT = "The washing machine is done. It took 45 minutes at 40°C."
BYTES_PER_SECOND = 24000 * 2


def test_word_events_are_off_unless_asked_for() -> None:
    assert SpeechSettings().word_events is False
    assert "word_events" in HandlerConfig.__dataclass_fields__
    assert HandlerConfig.__dataclass_fields__["word_events"].default is False


@pytest.fixture(scope="module")
def server(taught_cache) -> Iterator[ServerProcess]:
    # The voice taught: the first sentence in windows, its words over several blocks.
    env = {"KOKORO_CACHE_DIR": str(taught_cache)}
    with ServerProcess("--idle-timeout", "120", "--word-events", env=env) as running:
        yield running


def test_each_word_comes_just_before_the_chunk_it_begins_in(server) -> None:
    # But a sentence's last word: its end is known only with the sentence's last audio,
    # so it comes just before that, once it is known, never after its own end.
    reply = run(stream(server.uri, TEXT, every=0.02))
    assert not reply.errors and reply.audio
    heard = 0  # bytes of audio before the current event
    words = []
    for index, event in enumerate(reply.events):
        if AudioChunk.is_type(event.type):
            heard += len(AudioChunk.from_event(event).audio)
        elif event.type == WORD_EVENT:
            nxt = next(e for e in reply.events[index:] if AudioChunk.is_type(e.type))
            end = heard + len(AudioChunk.from_event(nxt).audio)
            for word in event.data["timestamps"]:
                if word["word"][-1] in ".!?":
                    assert heard / BYTES_PER_SECOND <= word["end_time"] + 0.001, word
                else:
                    assert heard / BYTES_PER_SECOND <= word["start_time"] + 0.001, word
                assert word["start_time"] < end / BYTES_PER_SECOND, word
                assert word["start_time"] < word["end_time"] <= len(reply.audio) / BYTES_PER_SECOND
                words.append(word["word"])
    assert words == TEXT.split()
    kinds = [t for t in reply.types if t != "audio-chunk"]
    assert kinds[0] == "audio-start" and kinds[-2:] == ["audio-stop", "synthesize-stopped"]
