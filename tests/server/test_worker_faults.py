"""A worker that crashes or hangs mid-answer, for real: a real server and model, real
Wyoming clients, a real SIGSEGV (the worker's test-only crash hook) and SIGSTOP.

A worker failure costs the piece in flight, never an answer or another client.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import urllib.error
import urllib.request

import pytest
from support.http_client import http_base, http_server
from support.server_process import ServerProcess
from support.wyoming_io import collect, run, synthesize
from wyoming.audio import AudioChunk
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize

from wyoming_kokoro.server.watchdog import TEST_ONLY_ENV as STALL_ENV
from wyoming_kokoro.worker.crash_hook import CRASH_FOR_TESTS_ENV

MARKER = "Xyzzy"  # in a piece's text, it kills the worker (test-only hook)
CRASHING = [  # long enough to be a piece each (short sentences share one)
    "The front door has been open for ten minutes, and the hallway is getting cold.",
    f"The back door {MARKER} is locked, and the alarm is set for the night.",
    "The garage is closed, and both cars are parked inside for the evening.",
]
# Long sentences, each more than one model call: the dead worker held this answer
# part-spoken.
ANSWER = (
    "Tomorrow will be mostly sunny in the morning, with clouds gathering over the hills "
    "in the early afternoon and a light breeze coming in from the sea after lunch. "
    "In the evening the temperature drops to around twelve degrees, so the heating will "
    "turn on at seven and the bedroom windows should be closed before you go to sleep."
)
SENTENCE = "The washing machine has finished."


async def _first_audio(client: AsyncClient) -> None:
    while (event := await client.read_event()) is not None:
        if AudioChunk.is_type(event.type):
            return


@pytest.mark.slow
def test_a_crash_costs_its_piece_only_and_the_other_client_hears_everything(listener) -> None:
    async def scenario(uri: str):
        return await asyncio.gather(
            synthesize(uri, " ".join(CRASHING)), synthesize(uri, ANSWER, timeout=300)
        )

    env = {CRASH_FOR_TESTS_ENV: MARKER}
    with ServerProcess("--idle-timeout", "60", env=env) as srv:
        crashed, other = run(scenario(srv.uri))
        after = run(synthesize(srv.uri, SENTENCE))  # the next request is served
        log = "".join(srv.log)
    assert crashed.errors == [] and crashed.types[-1] == "audio-stop", log
    assert other.errors == [] and other.types[-1] == "audio-stop", log
    assert after.errors == [], log
    skipped = [line for line in log.splitlines() if "that piece is skipped" in line]
    assert len(skipped) == 1 and "exit code -11" in skipped[0], log
    assert MARKER not in skipped[0]  # the log names the job and client, not the text
    assert log.count("ready") >= 2  # a new worker took over
    assert "goes on on a new worker" in log  # the other answer's piece, part-spoken
    # That client hears its first and third sentences; the other its whole answer,
    # resumed on the new worker without a word said twice or lost.
    listener.check_later(" ".join([CRASHING[0], CRASHING[2]]), crashed.audio)
    listener.check_later(ANSWER, other.audio)
    listener.check_later(SENTENCE, after.audio)


def _health(base: str) -> int:
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as err:
        return err.code


@pytest.mark.slow
def test_a_stopped_worker_is_killed_and_service_comes_back(listener) -> None:
    """SIGSTOP on the worker mid-answer: the call in flight makes no progress for its
    bound (set low here), the worker is killed, /health says so meanwhile, and the
    waiting client is answered by a new worker."""
    stopped: list[int] = []

    async def scenario(srv: ServerProcess) -> tuple[list[int], float, object, object]:
        base = http_base(srv)
        async with AsyncClient.from_uri(srv.uri) as first:
            await first.write_event(Synthesize(text=ANSWER).event())
            await _first_audio(first)  # its answer is being spoken
            [worker] = srv.workers()
            os.kill(worker, signal.SIGSTOP)
            stopped.append(worker)
            since = time.monotonic()
            second = asyncio.ensure_future(synthesize(srv.uri, SENTENCE, timeout=120))
            statuses = []
            while not second.done():
                statuses.append(await asyncio.to_thread(_health, base))
                await asyncio.sleep(0.1)
            reply = await second
            back = time.monotonic() - since
            rest = await collect(first, "audio-stop", 120)
        statuses.append(await asyncio.to_thread(_health, base))
        return statuses, back, reply, rest

    env = {STALL_ENV: "15"}
    try:
        with http_server("--idle-timeout", "60", env=env) as srv:
            statuses, back, reply, rest = run(scenario(srv))
            log = "".join(srv.log)
    finally:
        for pid in stopped:  # whatever the outcome, leave no stopped process behind
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    print(f"service back {back:.1f} s after SIGSTOP (stall bound 15 s)")
    assert "no progress" in log and "that piece is skipped" in log, log
    assert 503 in statuses and statuses[-1] == 200, statuses
    assert reply.errors == [] and rest.errors == [], log
    assert rest.types[-1] == "audio-stop"  # the first answer went on after its lost piece
    assert back < 120
    listener.check_later(SENTENCE, reply.audio)
