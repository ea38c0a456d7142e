"""What a client is told when its request fails: the right status (a text the worker
could not speak is the request's fault, a 4xx, which OpenAI clients do not retry; a
worker that cannot start is a 503) and a short text without Python's internals, at
both doors."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import given, settings
from hypothesis import strategies as st
from support.fake_door import fake_door

from wyoming_kokoro.server.http.app import build_app
from wyoming_kokoro.server.http.request import Voices
from wyoming_kokoro.server.http.speech import SpeechConfig
from wyoming_kokoro.server.redact import MAX_CLIENT_TEXT, for_client
from wyoming_kokoro.server.turns import Job, PieceFailed, SynthesisError
from wyoming_kokoro.server.wyoming.wire import Limits, read_event
from wyoming_kokoro.settings import SpeechSettings

VOICE = "jm_kumo"
GOOD = {"model": "tts-1", "input": "Hello there.", "voice": VOICE, "response_format": "pcm"}
# What Python says of a number of 5,000 digits, as a failure's text carried it
HUGE = "9" * 5_000
PYTHON_SAYS = (
    "Exceeds the limit (4300 digits) for integer string conversion: value has 5000 "
    "digits; use sys.set_int_max_str_digits() to increase the limit"
)
# Python's own words: what a client must never be shown
INTERNALS = re.compile(
    r"sys\.|set_int_max_str_digits|Traceback|\b[A-Z]\w*(Error|Exception)\b|0x[0-9a-f]{6,}"
    r"|__\w+__|NoneType|\bline \d+\b"
)


class _Failing:
    """A scheduler whose every piece fails with `error` (as the real one hands a
    worker's Failed answer, or a worker that cannot start, to the piece)."""

    worker_pid = None

    def __init__(self, error: SynthesisError) -> None:
        self.error = error
        self._ids = itertools.count(1)

    def submit(self, job: Job) -> Job:
        job.id = next(self._ids)
        job.chunks.put_nowait(self.error)
        return job

    def cancel(self, client: int) -> None:
        pass


def _post(scheduler: Any, body: bytes) -> tuple[int, dict[str, Any]]:
    async def main() -> tuple[int, dict[str, Any]]:
        config = SpeechConfig(
            scheduler=scheduler,
            voices=Voices((VOICE,), VOICE, 1.0, 10_000),
            next_client_id=itertools.count(1).__next__,
            max_streams=2,
            write_timeout=5.0,
            read_timeout=5.0,
        )
        app = build_app(config, None, (), SpeechSettings(max_text_chars=10_000).max_text_json_bytes)
        async with TestClient(TestServer(app)) as client:
            reply = await client.post(
                "/v1/audio/speech", data=body, headers={"Content-Type": "application/json"}
            )
            return reply.status, (await reply.json())["error"]

    return asyncio.run(main())


def test_a_text_the_worker_could_not_speak_is_a_422_not_a_503() -> None:
    """A 503 is retried by OpenAI clients, again and again, for a text that fails
    every time."""
    failed = PieceFailed(f"could not read {HUGE}: {PYTHON_SAYS}")
    status, error = _post(_Failing(failed), json.dumps(GOOD).encode())
    assert status == 422 and error["param"] == "input", (status, error)
    assert len(error["message"]) <= MAX_CLIENT_TEXT and "9" * 100 not in error["message"]
    assert not INTERNALS.search(error["message"]), error["message"]


def test_a_worker_that_cannot_start_is_still_a_503() -> None:
    unavailable = SynthesisError("not enough memory to load the voice model")
    status, error = _post(_Failing(unavailable), json.dumps(GOOD).encode())
    assert status == 503 and error["code"] == "unavailable", (status, error)


def test_a_body_with_a_huge_number_is_a_400_that_echoes_no_digits_and_no_internals() -> None:
    body = b'{"model": "tts-1", "input": "Hi.", "speed": ' + HUGE.encode() + b"}"
    status, error = _post(_Failing(SynthesisError("unused")), body)
    assert status == 400, (status, error)
    assert len(error["message"]) <= MAX_CLIENT_TEXT and "9" * 100 not in error["message"]
    assert not INTERNALS.search(error["message"]), error["message"]


def test_a_wyoming_header_with_a_huge_number_gets_a_short_error_without_internals() -> None:
    async def main() -> list[str]:
        async with fake_door() as door:
            port = int(door.uri.rsplit(":", 1)[1])
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b'{"type": "synthesize", "data_length": ' + HUGE.encode() + b"}\n")
            event = await asyncio.wait_for(read_event(reader, Limits()), 10)
            writer.close()
            assert event is not None and event.type == "error", event
            return [event.data["text"]]

    [text] = asyncio.run(main())
    assert len(text) <= MAX_CLIENT_TEXT and "9" * 100 not in text, text
    assert not INTERNALS.search(text), text


# Texts failures carry: Python's messages, exception names, long runs, paths
_FAILURE_TEXTS = st.lists(
    st.one_of(
        st.sampled_from(
            [
                PYTHON_SAYS,
                "IndexError",
                "KeyError: 'af_nobody'",
                "ValueError: invalid literal for int() with base 10: '12x'",
                "<object object at 0x7f3b83a76c30>",
                "/root/.cache/kokoro/model.onnx",
                "the synthesis process died (exit code -9)",
            ]
        ),
        st.text(min_size=0, max_size=40),
        st.integers(min_value=1, max_value=6_000).map(lambda n: "7" * n),
    ),
    min_size=1,
    max_size=6,
).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(_FAILURE_TEXTS)
def test_a_failures_text_for_a_client_is_bounded_and_names_no_internals(text: str) -> None:
    said = for_client(text)
    assert 0 < len(said) <= MAX_CLIENT_TEXT, said
    assert not INTERNALS.search(said), said
    assert "/root" not in said and "7" * 100 not in said, said
    plain = re.fullmatch(r"[A-Za-z0-9 .'()-]{1,80}", text) and not re.search(r"\S{41,}", text)
    if plain and text.strip() and not INTERNALS.search(text):
        assert said == text.strip()  # plain words pass unchanged


@pytest.mark.parametrize("route", ["/v1/audio/voices", "/v1/audio/speech", "/dev/captioned_speech"])
def test_the_servers_own_routes_are_not_taken_for_file_paths(route: str) -> None:
    # "see GET /v1/audio/voices" was cut to "see GET voices".
    assert (
        for_client(f"unknown voice 'x'; see GET {route}") == f"unknown voice 'x'; see GET {route}"
    )
