"""The HTTP side's bounds, in process: what a request holds (a stream slot, queued
pieces) is given back however the request ends.

A fake scheduler stands in for the model: these requests never reach synthesis.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from wyoming_kokoro.http.app import build_app
from wyoming_kokoro.http.request import Voices
from wyoming_kokoro.http.speech import ACTIVE_STREAMS, SPEECH_CONFIG, SpeechConfig
from wyoming_kokoro.scheduler import Job
from wyoming_kokoro.utterance import SpokenText

VOICE = "jm_kumo"
GOOD = {"model": "tts-1", "input": "Hello there.", "voice": VOICE, "response_format": "pcm"}


class FakeScheduler:
    """Records what is queued and cancelled; speaks nothing."""

    worker_pid = None

    def __init__(self) -> None:
        self.queued: dict[int, list[Job]] = {}
        self.submitted = 0
        self._ids = itertools.count(1)

    def submit(self, job: Job) -> Job:
        job.id = next(self._ids)
        self.submitted += 1
        self.queued.setdefault(job.client, []).append(job)
        return job

    def cancel(self, client: int) -> None:
        self.queued.pop(client, None)


def run(
    test: Callable[[TestClient, Any], Awaitable[None]], max_streams: int = 2, **config: Any
) -> None:
    """`test(client, app)` against the application on a real socket."""

    async def main() -> None:
        scheduler = FakeScheduler()
        ids = itertools.count(1)
        speech = SpeechConfig(
            scheduler=scheduler,  # type: ignore[arg-type]
            voices=Voices((VOICE,), VOICE, 1.0, 1000),
            next_client_id=lambda: next(ids),
            max_streams=max_streams,
            write_timeout=5.0,
            **config,
        )
        app = build_app(speech, None, ())
        async with TestClient(TestServer(app)) as client:
            await test(client, app)

    asyncio.run(main())


def test_a_failure_while_the_text_is_queued_frees_the_slot_and_the_queue(monkeypatch) -> None:
    """An exception between queueing the pieces and reading their audio kept the
    stream slot taken and the pieces queued: the worker stayed loaded for them."""

    def broken_finish(self: SpokenText) -> None:
        raise RuntimeError("the text pipeline failed")

    monkeypatch.setattr(SpokenText, "finish", broken_finish)

    async def check(client: TestClient, app: Any) -> None:
        scheduler = app[SPEECH_CONFIG].scheduler
        text = "The first sentence is long enough to go. And the second one waits."
        reply = await client.post("/v1/audio/speech", json={**GOOD, "input": text})
        assert reply.status == 500 and scheduler.submitted > 0
        assert app[ACTIVE_STREAMS] == set()
        assert scheduler.queued == {}  # nothing left to keep the worker loaded

    run(check)
