"""An SSML document with nothing to say, only breaks: the same at both doors as text
with nothing to say (Wyoming: audio-start then audio-stop, as Home Assistant expects
of empty text; HTTP: 422 no_speech), never minutes of silence."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from support.http_client import http_base, http_server
from support.server_process import ServerProcess
from support.wyoming_io import run, stream, synthesize

# A real server; a stream starts its worker as its text begins.
pytestmark = pytest.mark.model

DOCUMENTS = [
    '<speak><break time="10s"/></speak>',
    '<speak><break time="10s"/><break strength="x-strong"/><p> </p></speak>',
    '<speak>🙂<break time="4s"/>★</speak>',  # symbols are not read aloud
]


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerProcess]:
    with http_server() as running:
        yield running


def http_refusal(base: str, text: str) -> tuple[int, dict]:
    body = {"model": "tts-1", "input": text, "voice": "jm_kumo", "response_format": "pcm"}
    request = urllib.request.Request(
        f"{base}/v1/audio/speech",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, {"audio_bytes": len(reply.read())}
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())["error"]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_only_breaks_is_nothing_to_say_at_both_doors(srv: ServerProcess, document: str) -> None:
    said = run(synthesize(srv.uri, document, timeout=30))
    assert said.types == ["audio-start", "audio-stop"], (said.types, len(said.audio))
    status, error = http_refusal(http_base(srv), document)
    assert status == 422 and error["code"] == "no_speech", (status, error)
    streamed = run(stream(srv.uri, document, timeout=30))
    assert streamed.types == ["audio-start", "audio-stop", "synthesize-stopped"]
