"""--prefork: workers forked from a waiting parent that has the libraries imported.

The parent stays between bursts; the worker it forks still exits when idle, a
killed worker or parent still costs at most one request a clear error.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

import pytest
from support.server_process import ServerProcess, children
from support.wyoming_io import collect, run, synthesize
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize

from wyoming_kokoro.server.memory import rss_mb

# Starts a real worker or loads the model: not in the fast tier (script/test --fast).
pytestmark = pytest.mark.model

SENTENCE = "The garage door has been open for ten minutes."
ARTICLE = " ".join(["The heating schedule switched to evening mode an hour ago."] * 4)


def forked_workers(srv: ServerProcess) -> list[int]:
    return [pid for parent in srv.workers() for pid in children(parent)]


def test_the_forked_worker_speaks_then_leaves_the_parent_waiting(listener, tmp_path: Path) -> None:
    with ServerProcess("--prefork", "--idle-timeout", "2", env={"TMPDIR": str(tmp_path)}) as srv:
        assert srv.wait_for(lambda: len(srv.workers()) == 1, 30)  # the waiting parent
        parent = srv.workers()[0]
        assert forked_workers(srv) == []
        reply = run(synthesize(srv.uri, SENTENCE))
        assert reply.errors == []
        # Counted before the audio is judged: the judge may take longer than the idle 2 s.
        assert len(forked_workers(srv)) == 1
        # espeak's library is loaded in place or from the cache: no copy per run.
        assert list(tmp_path.glob("wyoming-kokoro-*")) and not list(tmp_path.rglob("libespeak*"))
        listener.check_later(SENTENCE, reply.audio)
        # Idle: the worker exits and gives its memory back; the parent waits on.
        assert srv.wait_for(lambda: forked_workers(srv) == [], 30)
        assert srv.workers() == [parent]
        # Nor does it leave espeak's library copies behind (os._exit finalizes nothing).
        assert list(tmp_path.rglob("libespeak*")) == []
        tree = rss_mb(srv.pid) + rss_mb(parent)
        assert tree < 150, tree  # server ~28 MB + parent ~75 MB; a loaded worker is 300+
        # The next burst is forked by the same parent.
        assert run(synthesize(srv.uri, SENTENCE)).errors == []
        assert srv.workers() == [parent]


@pytest.mark.slow
def test_a_killed_worker_or_parent_costs_one_piece_at_most(listener) -> None:
    async def killed_mid_request(srv: ServerProcess) -> list[str]:
        async with AsyncClient.from_uri(srv.uri) as client:
            await client.write_event(Synthesize(text=ARTICLE).event())
            while (event := await client.read_event()) is not None:
                if event.type == "audio-chunk":
                    break  # a call is surely in flight
            (worker,) = forked_workers(srv)
            os.kill(worker, signal.SIGKILL)
            return (await collect(client, "audio-stop", 300)).errors

    with ServerProcess("--prefork", "--idle-timeout", "60") as srv:
        errors = asyncio.run(killed_mid_request(srv))
        # The piece in flight is skipped; the answer goes on on a new worker.
        assert errors == [] and "(exit code -9) while speaking" in "".join(srv.log)
        reply = run(synthesize(srv.uri, SENTENCE))
        assert reply.errors == []
        listener.check_later(SENTENCE, reply.audio)
        # A worker killed between requests costs nothing: the next one gets a new worker.
        (worker,) = forked_workers(srv)
        os.kill(worker, signal.SIGKILL)
        assert srv.wait_for(lambda: forked_workers(srv) == [], 30)
        assert run(synthesize(srv.uri, SENTENCE)).errors == []
        # Nor does the waiting parent killed between bursts (with its worker).
        for pid in [*forked_workers(srv), *srv.workers()]:
            os.kill(pid, signal.SIGKILL)
        assert srv.wait_for(lambda: srv.workers() == [], 30)
        reply = run(synthesize(srv.uri, SENTENCE))
        assert reply.errors == [] and len(reply.audio) > 24000  # a second of it, at least
        assert len(srv.workers()) == 1 and len(forked_workers(srv)) == 1
        assert srv.stop() == 0


def _descendants(pid: int) -> list[int]:
    found = []
    for child in children(pid):
        found += [child, *_descendants(child)]
    return found


@pytest.mark.parametrize("prefork", [True, False])
def test_a_worker_hanging_while_loading_leaves_nothing_behind(tmp_path, prefork: bool) -> None:
    # A model that never finishes loading (a FIFO: opening it blocks for ever) runs
    # into the start timeout; no process started for it may outlive that.
    from wyoming_kokoro.catalog.assets import Assets, resolve
    from wyoming_kokoro.protocol import Setup, WorkerConfig
    from wyoming_kokoro.server.worker_handle import (
        ForkedWorker,
        SpawnedWorker,
        WorkerStartError,
        process_alive,
    )
    from wyoming_kokoro.settings import EngineSettings

    embedded = resolve(None, None, [])
    fifo = tmp_path / "hangs.onnx"  # not a published name: only stat()ed before the load
    os.mkfifo(fifo)
    assets = Assets(fifo, embedded.voices, embedded.voice_names, "test")
    setup = Setup(WorkerConfig(assets, EngineSettings(threads=1)).to_dict())

    async def start_and_watch() -> tuple[list[int], list[int]]:
        worker = ForkedWorker() if prefork else SpawnedWorker()
        starting = asyncio.ensure_future(worker.start(setup, timeout=4))
        seen: set[int] = set()
        try:
            for _ in range(300):  # every process of this start, while it hangs
                seen.update(_descendants(os.getpid()))
                if starting.done():
                    break
                await asyncio.sleep(0.1)
            # It hung here once: the orphan held the pipe the killed parent was awaited on.
            assert starting.done(), "the start did not give up within 30 s"
            with pytest.raises(WorkerStartError, match="took too long"):
                await starting
            # A fresh waiting parent may wait on (it is ready for the next burst).
            fresh = worker.parent_pid if isinstance(worker, ForkedWorker) else None
            alive = sorted(pid for pid in seen if pid != fresh and process_alive(pid))
            await worker.close()
            return sorted(seen), alive
        finally:
            for pid in seen:  # whatever the outcome, leave nothing for the next tests
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    seen, alive = asyncio.run(start_and_watch())
    assert len(seen) >= (2 if prefork else 1), seen  # the start was watched
    assert alive == [], (seen, alive)
