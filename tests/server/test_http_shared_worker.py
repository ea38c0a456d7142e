"""Wyoming and HTTP clients at once: one worker, fair turns, and idle unload after.

Turns are counted in model calls from the --debug log, never in seconds.
"""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request

import pytest
from support.http_client import get_json, http_base, http_server
from support.worker_log import calls_by_client, newcomer_turn
from support.wyoming_io import run, synthesize

ARTICLE = (
    "The front door is locked and the lights in the garden are off. "
    "The heating is on in the living room, and the blinds are closing in the kitchen. "
    "The robot vacuum has finished the hall and is back on its dock. "
)
ANNOUNCEMENT = "The washing machine has finished."


@pytest.mark.slow
def test_wyoming_and_http_share_one_worker_fairly_and_it_still_unloads(listener) -> None:
    with http_server("--debug", "--idle-timeout", "3") as srv:
        base = http_base(srv)
        workers: set[int] = set()

        def long_http() -> bytes:
            body = json.dumps(
                {"model": "tts-1", "input": ARTICLE, "voice": "jm_kumo", "response_format": "pcm"}
            ).encode()
            request = urllib.request.Request(
                base + "/v1/audio/speech", body, {"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request) as reply:
                first = reply.read(4800)
                workers.update(srv.workers())
                started.set()
                return first + reply.read()

        async def scenario() -> tuple[bytes, bytes]:
            article = asyncio.create_task(asyncio.to_thread(long_http))
            await asyncio.to_thread(started.wait, 120)
            reply = await synthesize(srv.uri, ANNOUNCEMENT)  # Home Assistant, meanwhile
            workers.update(srv.workers())
            return reply.audio, await article

        started = threading.Event()
        announcement, article = run(scenario())
        events = calls_by_client(srv.log)
        assert len(workers) == 1  # one model in memory for both protocols
        # Both heard as one clip (one judge call), against the model saying both.
        listener.check_later((ANNOUNCEMENT, ARTICLE), [announcement, article])
        http_client = events[0][1]
        between, after = newcomer_turn(events)
        # The Wyoming client waited at most for the HTTP call already running...
        assert between in ([], [http_client]), events
        # ...while the article still had calls to go.
        assert http_client in after, events
        # Idle: the worker leaves (3 s), and /health says so without starting it again.
        assert srv.wait_for(lambda: srv.workers() == [], timeout=30)
        assert get_json(base + "/health")["worker"] == "unloaded"
        assert srv.workers() == []
