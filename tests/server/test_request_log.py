"""One INFO line per request, alike at both doors: the door, the client, how many
characters, how many pieces (one piece, two pieces), the voice; never the text,
which only DEBUG shows. The real Wyoming door and HTTP app on the real scheduler,
with the in-memory worker."""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import given, settings
from hypothesis import strategies as st
from support.fake_door import fake_door
from support.fake_worker import FakeWorker
from support.wyoming_io import synthesize

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.protocol import WorkerConfig
from wyoming_kokoro.server.http.app import build_app
from wyoming_kokoro.server.http.request import Voices
from wyoming_kokoro.server.http.speech import SpeechConfig
from wyoming_kokoro.server.scheduler import Scheduler, SchedulerOptions
from wyoming_kokoro.settings import EngineSettings, SpeechSettings

ONE = "Zorblax opens the garage door."
TWO = "Zorblax opens the garage door. Then the porch light goes on."


def _infos(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]


def _wyoming(text: str) -> None:
    async def main() -> None:
        async with fake_door() as door:
            reply = await synthesize(door.uri, text)
            assert reply.errors == []

    asyncio.run(main())


def _http(text: str) -> None:
    async def main() -> None:
        assets = Assets(Path("m.onnx"), Path("v.npz"), ("jm_kumo",), "test")
        options = SchedulerOptions(60.0, min_free_mb=0)
        scheduler = Scheduler(
            WorkerConfig(assets, EngineSettings(threads=1)), options, FakeWorker()
        )
        scheduler.start()
        ids = itertools.count(1)
        speech = SpeechConfig(
            scheduler=scheduler,
            voices=Voices(("jm_kumo",), "jm_kumo", 1.0, 1000),
            next_client_id=lambda: next(ids),
            max_streams=2,
            write_timeout=5.0,
            read_timeout=5.0,
        )
        app = build_app(speech, None, (), SpeechSettings(max_text_chars=1000).max_text_json_bytes)
        try:
            async with TestClient(TestServer(app)) as client:
                body = {"input": text, "voice": "jm_kumo", "response_format": "pcm"}
                reply = await client.post("/v1/audio/speech", json=body)
                assert reply.status == 200, await reply.text()
                await reply.read()
        finally:
            await scheduler.stop()

    asyncio.run(main())


@pytest.mark.parametrize(
    ("door", "speak"), [("Wyoming", _wyoming), ("HTTP", _http)], ids=["wyoming", "http"]
)
def test_each_request_is_one_info_line_without_its_text(
    door: str, speak, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="wyoming_kokoro"):
        speak(ONE)
        speak(TWO)
    lines = [line for line in _infos(caplog) if line.startswith(f"{door} client")]
    assert len(lines) == 2, _infos(caplog)
    assert re.fullmatch(
        rf"{door} client \d+: {len(ONE)} characters, 1 piece, voice jm_kumo.*", lines[0]
    )
    assert re.fullmatch(
        rf"{door} client \d+: {len(TWO)} characters, 2 pieces, voice jm_kumo.*", lines[1]
    )
    assert not any("Zorblax" in line for line in _infos(caplog))


@pytest.mark.parametrize("speak", [_wyoming, _http], ids=["wyoming", "http"])
def test_the_text_is_logged_at_debug(speak, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="wyoming_kokoro"):
        speak(ONE)
    said = [r.getMessage() for r in caplog.records if "said:" in r.getMessage()]
    assert len(said) == 1 and ONE in said[0], said


@settings(max_examples=15, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=80))
def test_no_text_reaches_an_info_line(text: str) -> None:
    """Whatever is asked to be said, the INFO line is the same but for its counts."""
    marked = f"Qwxzv {text} qwxzv."
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("wyoming_kokoro")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        _wyoming(marked)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    lines = [r.getMessage() for r in records if r.getMessage().startswith("Wyoming client")]
    assert len(lines) == 1, [r.getMessage() for r in records]
    assert re.fullmatch(r"Wyoming client \d+: \d+ characters, \d+ pieces?, voice jm_kumo", lines[0])
    assert "Qwxzv" not in lines[0] and "qwxzv" not in lines[0]
