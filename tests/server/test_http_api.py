"""The OpenAI-compatible HTTP API, driven by OpenAI's own Python client.

A real server (real model) with `--http` on 127.0.0.1; every response format is
decoded with PyAV and must be heard by the speech recognizer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from support.http_client import decode, get_json, http_base, http_server
from support.server_process import ServerProcess

from wyoming_kokoro.server.http.voicemap import openai_voice

TEXT = "Turn on the kitchen lights."
FORMATS = ("mp3", "opus", "aac", "flac", "wav", "pcm")
# One sentence per format, all different: heard as one clip, six times the same words
# made the recognizer hear them a seventh time.
SAID = (
    TEXT,
    "The garage door is closed.",
    "Set a timer for ten minutes.",
    "The dishwasher has finished.",
    "It is raining in the garden.",
    "Good night, sleep well.",
)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with http_server("--idle-timeout", "120") as running:
        yield running


@pytest.fixture(scope="module")
def client(server):
    from openai import OpenAI

    return OpenAI(base_url=http_base(server) + "/v1", api_key="not-needed", max_retries=0)


def test_health_voices_and_models_do_not_start_the_worker(server) -> None:
    base = http_base(server)
    assert get_json(base + "/health") == {"status": "ok", "worker": "unloaded", "version": "0.1.0"}
    voices = get_json(base + "/v1/audio/voices")
    ids = [v["id"] for v in voices["voices"]]
    assert "jm_kumo" in ids and all(v["name"] and v["language"] for v in voices["voices"])
    assert set(voices["openai_voices"]) >= {"alloy", "echo", "fable", "onyx", "nova", "shimmer"}
    assert set(voices["openai_voices"].values()) <= set(ids)
    models = get_json(base + "/v1/models")
    assert models["object"] == "list"
    assert {"tts-1", "tts-1-hd", "kokoro"} <= {m["id"] for m in models["data"]}
    assert all(m["object"] == "model" for m in models["data"])
    assert server.workers() == []


def test_every_format_through_the_openai_client_is_heard(server, client, listener) -> None:
    installed = tuple(v["id"] for v in get_json(http_base(server) + "/v1/audio/voices")["voices"])
    voice = openai_voice("onyx", installed, "jm_kumo")
    clips = []
    for fmt, text in zip(FORMATS, SAID, strict=True):
        response = client.audio.speech.create(
            model="tts-1", voice="onyx", input=text, response_format=fmt
        )
        assert response.response.headers["x-kokoro-voice"] == voice
        samples = decode(response.content, fmt)
        assert 0.8 < len(samples) / 24000 < 5, fmt
        clips.append(samples)
    # Heard as one clip (one judge window): a format that lost the words fails it.
    listener.check_later(SAID, clips, voice=voice)  # lossy ones lose nothing
    assert len(server.workers()) == 1


def test_streaming_response_starts_before_the_speech_ends(client, listener) -> None:
    text = (
        "Good morning. The front door is locked and the alarm is set. "
        "It will rain this afternoon, so take an umbrella when you leave."
    )
    started = time.monotonic()
    arrivals: list[float] = []
    audio = b""
    with client.audio.speech.with_streaming_response.create(
        model="kokoro", voice="jm_kumo", input=text, response_format="pcm"
    ) as response:
        assert response.headers["transfer-encoding"] == "chunked"
        for chunk in response.iter_bytes():
            arrivals.append(time.monotonic() - started)
            audio += chunk
    total = arrivals[-1]
    # The first piece ("Good morning.") is sent while the rest is being spoken.
    assert arrivals[0] < 0.6 * total, (arrivals[0], total)
    listener.check_later(text, audio)


def test_markdown_blends_and_speed(client, listener) -> None:
    text = "**Turn on** the _kitchen_ lights."
    normal = client.audio.speech.create(
        model="tts-1-hd", voice="jm_kumo(3)+jf_gongitsune(1)", input=text, response_format="pcm"
    )
    assert normal.response.headers["x-kokoro-voice"] == "jm_kumo(0.75)+jf_gongitsune(0.25)"
    # The markup is not read aloud.
    listener.check_later(TEXT, normal.content, voice="jm_kumo(3)+jf_gongitsune(1)")
    # OpenAI allows up to 4.0; Kokoro speaks at most at 2.0: clamped, not refused.
    fast = client.audio.speech.create(
        model="tts-1", voice="jm_kumo", input=TEXT, response_format="pcm", speed=4.0
    )
    ratio = len(fast.content) / len(normal.content)
    assert 0.35 < ratio < 0.75, ratio
