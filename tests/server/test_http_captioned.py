"""Word times over HTTP: Kokoro-FastAPI's `POST /dev/captioned_speech` (whole and
streamed) and word events in the SSE stream, from a real server (real model) read
by real HTTP clients (urllib, sseclient-py).

The times must be where the words are in the audio the client receives: inside
speech, never in the lead silence or an SSML break, which lie between words.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import sseclient
from support.http_client import decode, http_base, http_server
from support.server_process import ServerProcess

TEXT = "It is 21°C at 7:30 pm. The garage door is open."
SSML = "<speak>The front door is locked.<break time='1s'/>All 3 windows are closed.</speak>"
RATE = 24000
FRAME = 0.025


@pytest.fixture(scope="module")
def server(taught_cache) -> Iterator[ServerProcess]:
    # The voice taught: each request's first sentence in windows, whose words come with
    # several blocks of audio (decoded whole, a call is one block).
    env = {"KOKORO_CACHE_DIR": str(taught_cache)}
    with http_server("--idle-timeout", "120", "--lead-silence", "500", env=env) as running:
        yield running


def post(server: ServerProcess, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        http_base(server) + path,
        json.dumps({"voice": "jm_kumo", "response_format": "pcm", **body}).encode(),
        {"Content-Type": "application/json"},
    )
    return urllib.request.urlopen(request, timeout=120)


def loud(audio: np.ndarray, start: float, end: float) -> float:
    """The level (dB of full scale) of the audio between two times."""
    part = audio[int(start * RATE) : int(end * RATE)].astype(np.float64) / 32768
    return float(10 * np.log10(np.mean(part**2) + 1e-12)) if len(part) else -120.0


@pytest.fixture(scope="module")
def whole(server) -> dict[str, Any]:
    with post(server, "/dev/captioned_speech", {"input": TEXT, "stream": False}) as reply:
        assert reply.headers["Content-Type"].startswith("application/json")
        return json.loads(reply.read())


def test_the_whole_answer_has_kokoro_fastapis_shape_and_the_written_words(whole) -> None:
    assert set(whole) == {"audio", "audio_format", "timestamps"}
    assert whole["audio_format"] == "pcm"
    assert [t["word"] for t in whole["timestamps"]] == TEXT.split()
    assert all(set(t) == {"word", "start_time", "end_time"} for t in whole["timestamps"])


def test_times_are_in_the_audio_after_the_lead_silence(whole) -> None:
    audio = decode(base64.b64decode(whole["audio"]), "pcm")
    words = whole["timestamps"]
    assert 0.5 <= words[0]["start_time"] < 0.7
    assert loud(audio, 0.0, 0.5) < -80  # the lead silence holds no word
    assert words[-1]["end_time"] <= len(audio) / RATE
    for word in words:  # every word's time holds its speech
        assert loud(audio, word["start_time"], word["end_time"]) > -40, word


def test_streamed_lines_with_a_break_place_every_word(server) -> None:
    with post(server, "/dev/captioned_speech", {"input": SSML}) as reply:
        assert reply.headers["Content-Type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in reply if line.strip()]
    assert len(lines) > 1 and all(line["audio_format"] == "pcm" for line in lines)
    audio = decode(b"".join(base64.b64decode(line["audio"]) for line in lines), "pcm")
    words = [t for line in lines for t in line["timestamps"]]
    assert [t["word"] for t in words] == [
        "The",
        "front",
        "door",
        "is",
        "locked.",
        "All",
        "3",
        "windows",
        "are",
        "closed.",
    ]
    before, after = words[4], words[5]  # "locked." and "All", the break between them
    assert after["start_time"] - before["end_time"] >= 1.0 - FRAME
    assert loud(audio, before["end_time"] + FRAME, after["start_time"] - FRAME) < -60
    for word in words:
        assert loud(audio, word["start_time"], word["end_time"]) > -40, word
    # Each line's words begin in that line's audio or later, never earlier; but a
    # sentence's last word, whose end is known only with the sentence's last audio:
    # it comes with that, and ends in it.
    at = 0.0
    for line in lines:
        for word in line["timestamps"]:
            if word["word"][-1] in ".!?":
                assert word["end_time"] >= at - FRAME, word
            else:
                assert word["start_time"] >= at - FRAME, word
        at += len(base64.b64decode(line["audio"])) / 2 / RATE


def test_sse_word_events_come_before_the_audio_they_begin_in(server, whole) -> None:
    body = {"input": TEXT, "stream_format": "sse", "return_timestamps": True}
    with post(server, "/v1/audio/speech", body) as reply:
        events = [json.loads(e.data) for e in sseclient.SSEClient(reply).events()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "speech.audio.timestamps" and kinds[-1] == "speech.audio.done"
    words = [t for e in events if e["type"] == "speech.audio.timestamps" for t in e["timestamps"]]
    assert [t["word"] for t in words] == TEXT.split()
    # The same speech as the captioned answer (windows may trim within a frame).
    for a, b in zip(words, whole["timestamps"], strict=True):
        assert abs(a["start_time"] - b["start_time"]) <= FRAME + 0.001


def test_plain_sse_has_no_word_events_and_a_bad_flag_is_refused(server) -> None:
    with post(server, "/v1/audio/speech", {"input": "Hello.", "stream_format": "sse"}) as reply:
        kinds = {json.loads(e.data)["type"] for e in sseclient.SSEClient(reply).events()}
    assert kinds == {"speech.audio.delta", "speech.audio.done"}
    with pytest.raises(urllib.error.HTTPError) as refused:
        post(server, "/dev/captioned_speech", {"input": "Hello.", "stream": "yes"})
    assert refused.value.code == 400
    assert json.loads(refused.value.read())["error"]["param"] == "stream"
