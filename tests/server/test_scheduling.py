"""Who gets the model, and when: call-by-call turns, held-back readers, early starts.

Behaviour is counted in model calls and processes (from the server's --debug log
and /proc), never in seconds.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from support.cores import THREADS
from support.server_process import ServerProcess, children
from support.worker_log import calls_by_client, newcomer_turn
from support.wyoming_io import collect, run, synthesize
from wyoming.audio import AudioChunk
from wyoming.client import AsyncClient, AsyncTcpClient
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.protocol import WorkerConfig
from wyoming_kokoro.server import scheduler as scheduler_module
from wyoming_kokoro.server.memory import rss_mb
from wyoming_kokoro.server.scheduler import Scheduler, SchedulerOptions
from wyoming_kokoro.server.turns import Job, SynthesisError
from wyoming_kokoro.server.wyoming.config import HandlerConfig
from wyoming_kokoro.server.wyoming.handler import KokoroHandler
from wyoming_kokoro.server.wyoming.info import build_info
from wyoming_kokoro.server.wyoming.wire import Limits
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.text.g2p import MAX_LEXICON_ENTRIES

ARTICLE = " ".join(
    f"Paragraph {n}: the heating schedule switched to evening mode, the blinds are "
    "closing, and the robot vacuum has finished the kitchen and the living room."
    for n in range(1, 13)
)
# Two calls: the announcement comes while the article has calls to go; the order
# of turns itself is tested in seconds with the fake worker (test_turns.py).
PARAGRAPH = ARTICLE.split(" Paragraph 2:")[0]
ANNOUNCEMENT = "The washing machine has finished."


async def _read_until_audio(client: AsyncClient) -> None:
    while (event := await client.read_event()) is not None:
        if AudioChunk.is_type(event.type):
            return


async def _first_audio(client: AsyncClient) -> bytes:
    while (event := await client.read_event()) is not None:
        if AudioChunk.is_type(event.type):
            return AudioChunk.from_event(event).audio
    return b""


@pytest.mark.slow
def test_a_newcomer_gets_the_model_at_the_next_call(listener) -> None:
    async def scenario(uri: str) -> tuple[bytes, bytes, bool]:
        async with AsyncClient.from_uri(uri) as article:
            await article.write_event(Synthesize(text=PARAGRAPH).event())
            first = await _first_audio(article)  # the article is being spoken
            reply = await synthesize(uri, ANNOUNCEMENT)
            rest = await collect(article, "audio-stop", 300)
        return reply.audio, first + rest.audio, "audio-stop" in rest.types

    with ServerProcess("--debug", "--idle-timeout", "60") as srv:
        audio, article_audio, article_done = run(scenario(srv.uri))
        events = calls_by_client(srv.log)
        log = "".join(srv.log)
    assert article_done
    listener.check_later(ANNOUNCEMENT, audio)
    # The article's call in flight was interrupted, not waited for, and spoken again
    # after: nothing of the article is lost.
    # (A call decoded in windows lets others go after the window in progress.)
    assert "Preempting job" in log and ("interrupted" in log or "lets others go" in log), log
    listener.check_later(PARAGRAPH, article_audio)
    article_client = events[0][1]
    between, after = newcomer_turn(events)
    # At most the call already running when the announcement came in.
    assert between in ([], [article_client]), events
    # ...and the article still had calls to go: it was interrupted, not finished.
    assert article_client in after, events


def test_a_client_that_leaves_mid_call_frees_the_model_at_once(listener) -> None:
    async def scenario(uri: str) -> bytes:
        async with AsyncClient.from_uri(uri) as article:
            await article.write_event(Synthesize(text=ARTICLE).event())
            await _read_until_audio(article)  # its next call is now running
        return (await synthesize(uri, ANNOUNCEMENT)).audio

    with ServerProcess("--debug", "--idle-timeout", "60") as srv:
        audio = run(scenario(srv.uri))
        log = "".join(srv.log)
        events = calls_by_client(srv.log)
    gone = re.search(r"Stopping job (\d+): client (\d+) is gone", log)
    assert gone, log
    # The worker gave up that call rather than finishing it for nobody...
    stopped = f"Call of piece {gone[1]} interrupted", f"Piece {gone[1]} lets others go"
    assert any(line in log for line in stopped), log
    # ...and the model spoke nothing more of the article.
    stopped_at = next(i for i, line in enumerate(srv.log) if "is gone" in line)
    later = calls_by_client(srv.log[stopped_at:])
    assert ("call", int(gone[2])) not in later, events
    listener.check_later(ANNOUNCEMENT, audio)


def test_synthesize_start_starts_the_worker_which_still_leaves_when_idle(listener) -> None:
    async def scenario(srv: ServerProcess) -> bytes:
        async with AsyncClient.from_uri(srv.uri) as client:
            await client.write_event(SynthesizeStart().event())
            # No text yet: the worker is loading while the LLM would be writing.
            assert await asyncio.to_thread(srv.wait_for, lambda: srv.workers() != [], 30)
            await client.write_event(SynthesizeChunk(text=ANNOUNCEMENT).event())
            await client.write_event(SynthesizeStop().event())
            return (await collect(client, "synthesize-stopped", 120)).audio

    with ServerProcess("--idle-timeout", "2") as srv:
        idle = rss_mb(srv.pid)
        audio = run(scenario(srv))
        listener.check_later(ANNOUNCEMENT, audio)
        assert srv.wait_for(lambda: srv.workers() == [], 30)
        # Every process of the server's tree is gone but the server, at its idle size
        # (the voice teacher, off in tests, is tested in test_teacher.py).
        assert children(srv.pid) == []
        assert rss_mb(srv.pid) < idle + 10


def test_a_large_lexicon_no_longer_stops_the_worker(tmp_path: Path, listener) -> None:
    # 300 KB of lexicon used to travel on the worker's command line, over Linux's
    # 128 KiB limit for one argument: every request then waited forever. The entry
    # heard comes first: entries past MAX_LEXICON_ENTRIES are left out.
    lines = [f"word{n}\trespelling number {n}" for n in range(MAX_LEXICON_ENTRIES - 1)]
    (tmp_path / "lexicon.txt").write_text("\n".join(["HA\tthe house", *lines]) + "\n")
    assert (tmp_path / "lexicon.txt").stat().st_size > 300_000
    with ServerProcess("--data-dir", str(tmp_path)) as srv:
        reply = run(synthesize(srv.uri, "Ask HA to lock the door.", timeout=120))
    assert reply.errors == []
    listener.check_later("Ask the house to lock the door.", reply.audio)


def _config() -> WorkerConfig:
    return WorkerConfig(resolve(None, None, []), EngineSettings(threads=THREADS))


def test_a_failed_worker_start_fails_the_waiting_jobs_and_the_next_one_retries(
    monkeypatch: pytest.MonkeyPatch, listener
) -> None:
    real_exec = asyncio.create_subprocess_exec
    refusals = []

    async def refuse_once(*args, **kwargs):
        if not refusals:
            refusals.append(args)
            raise OSError(12, "Cannot allocate memory")  # fork refused
        return await real_exec(*args, **kwargs)

    monkeypatch.setattr(scheduler_module.asyncio, "create_subprocess_exec", refuse_once)

    async def scenario() -> tuple[str, bytes]:
        scheduler = Scheduler(_config(), SchedulerOptions(idle_timeout=0, min_free_mb=0))
        scheduler.start()
        try:
            failed = scheduler.submit(Job(1, ANNOUNCEMENT, "jm_kumo", 1.0, "en-us"))
            with pytest.raises(SynthesisError) as error:
                async for _ in failed.audio():
                    pass
            retried = scheduler.submit(Job(2, ANNOUNCEMENT, "jm_kumo", 1.0, "en-us"))
            audio = b"".join([pcm async for pcm in retried.audio()])
            return str(error.value), audio
        finally:
            await scheduler.stop()

    text, audio = asyncio.run(scenario())
    assert "could not start" in text and "Cannot allocate memory" in text
    listener.check_later(ANNOUNCEMENT, audio)


def test_no_task_outlives_a_connection_refused_after_audio_start() -> None:
    # A text over the limit is refused after audio-start went out; the audio
    # sender task that begin() started must end with the connection.
    async def scenario() -> list[str]:
        scheduler = Scheduler(_config(), SchedulerOptions(idle_timeout=0, min_free_mb=0))
        config = HandlerConfig(
            info=build_info(("jm_kumo",), True).event(),
            voice_names=("jm_kumo",),
            default_voice="jm_kumo",
            speed=1.0,
            max_text_chars=20,
            limits=Limits(max_data_bytes=4096),
            idle_seconds=30,
        )
        done = asyncio.Event()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await KokoroHandler(reader, writer, config, scheduler, 1).run()
            done.set()

        server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Synthesize(text="far too long for the limit").event())
            reply = await collect(client, "error", 30)
        assert reply.errors and "limit of 20" in reply.errors[0]
        await asyncio.wait_for(done.wait(), 30)
        await asyncio.sleep(0)
        names = [t.get_name() for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        server.close()
        await scheduler.stop()
        return names

    assert "kokoro sender" not in asyncio.run(scenario())
