"""Parent side of the worker: start on demand, fair queue, death detection, idle exit.

Every piece of text a client wants spoken is a `Job`. Jobs wait in one queue per
client and are sent to the worker one at a time, taking clients in turn, so a
short announcement is never stuck behind a long article.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import sys
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from wyoming.event import Event, async_read_event, async_write_event

from .memory import available_mb
from .worker import WorkerConfig

_LOGGER = logging.getLogger(__name__)

_END = object()


class SynthesisError(RuntimeError):
    """A job could not be spoken; the text is meant for the client."""


@dataclass
class Job:
    """One piece of text for one client; audio arrives on `chunks`."""

    client: int
    text: str
    voice: str
    speed: float
    lang: str | None
    first: bool = False  # the first piece of an utterance: someone waits for it
    id: int = 0
    chunks: asyncio.Queue[bytes | object | SynthesisError] = field(default_factory=asyncio.Queue)
    cancelled: bool = False

    async def audio(self) -> AsyncIterator[bytes]:
        """PCM blocks of this job until it is done; raises SynthesisError on failure."""
        while True:
            item = await self.chunks.get()
            if item is _END:
                return
            if isinstance(item, SynthesisError):
                raise item
            assert isinstance(item, bytes)
            yield item


@dataclass(frozen=True)
class SchedulerOptions:
    idle_timeout: float  # seconds; 0 keeps the worker forever
    min_free_mb: int  # refuse to start a worker below this much available memory
    load_timeout: float = 180.0


class Scheduler:
    """Owns the worker process and decides which job it speaks next."""

    def __init__(self, worker_config: WorkerConfig, options: SchedulerOptions) -> None:
        self._config = worker_config
        self._options = options
        self._queues: dict[int, deque[Job]] = {}
        self._served: dict[int, int] = {}  # client → tick of its last job
        self._tick = 0
        self._wakeup = asyncio.Event()
        self._ids = itertools.count(1)
        self._process: asyncio.subprocess.Process | None = None
        self._task: asyncio.Task[None] | None = None
        self._current: Job | None = None
        self.worker_starts = 0  # how many bursts so far (for logs and tests)

    # -- client side ---------------------------------------------------------

    def submit(self, job: Job) -> Job:
        """Queue a job; its audio can be awaited with `job.audio()`."""
        job.id = next(self._ids)
        self._queues.setdefault(job.client, deque()).append(job)
        self._wakeup.set()
        return job

    def cancel(self, client: int) -> None:
        """Forget a client's waiting jobs (it went away or its request failed)."""
        for job in self._queues.pop(client, ()):
            job.cancelled = True
        self._served.pop(client, None)

    @property
    def worker_pid(self) -> int | None:
        if self._process is None or self._process.returncode is not None:
            return None
        return self._process.pid

    # -- lifecycle -----------------------------------------------------------

    def start(self, preload: bool = False) -> None:
        self._task = asyncio.create_task(self._run(preload), name="kokoro scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._stop_worker()
        waiting = [self._current] if self._current else []
        for client in list(self._queues):
            waiting += self._queues.pop(client)
        for job in waiting:
            job.chunks.put_nowait(SynthesisError("the server is shutting down"))

    def _next_job(self) -> Job | None:
        """The waiting client served least recently goes next.

        A client that was never served (an announcement arriving while an article
        is read) goes before one that was just served, whatever the queue order;
        between newcomers, the one with the shortest piece.
        """
        for client in list(self._queues):
            queue = self._queues[client]
            while queue and queue[0].cancelled:
                queue.popleft()
            if not queue:
                del self._queues[client]
        if not self._queues:
            return None
        # Among clients never served yet, the shortest piece goes first: an
        # announcement arriving with three long answers waits for none of them.
        client = min(
            self._queues, key=lambda c: (self._served.get(c, 0), len(self._queues[c][0].text))
        )
        self._tick += 1
        self._served[client] = self._tick
        queue = self._queues[client]
        job = queue.popleft()
        if not queue:
            del self._queues[client]
        return job

    async def _run(self, preload: bool) -> None:
        if preload:
            await self._ensure_worker_or_fail()
        while True:
            job = self._next_job()
            if job is None:
                self._wakeup.clear()
                idle = self._options.idle_timeout if self.worker_pid else None
                try:
                    await asyncio.wait_for(self._wakeup.wait(), timeout=idle or None)
                except asyncio.TimeoutError:
                    _LOGGER.info("Idle for %.0f s: stopping the worker", idle)
                    await self._stop_worker()
                continue
            if not await self._ensure_worker_or_fail(job):
                continue
            self._current = job
            await self._speak(job)
            self._current = None

    async def _ensure_worker_or_fail(self, job: Job | None = None) -> bool:
        try:
            await self._ensure_worker(warm_up=job is None)
            return True
        except SynthesisError as err:
            _LOGGER.error("%s", err)
            # Every waiting job would meet the same failure: answer them now.
            failed = [job] if job else []
            for client in list(self._queues):
                failed += self._queues.pop(client)
            for waiting in failed:
                waiting.chunks.put_nowait(err)
            return False

    async def _ensure_worker(self, warm_up: bool = False) -> None:
        if self.worker_pid is not None:
            return
        free = available_mb()
        if free is not None and free < self._options.min_free_mb:
            raise SynthesisError(
                f"not enough memory to load the voice model: {free} MB available, "
                f"{self._options.min_free_mb} MB needed"
            )
        self.worker_starts += 1
        _LOGGER.info("Starting the worker (burst %d)", self.worker_starts)
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "wyoming_kokoro.worker",
            self._config.to_json(),
            *(["--warm-up"] if warm_up else []),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 24,
        )
        try:
            event = await asyncio.wait_for(self._read(), self._options.load_timeout)
        except asyncio.TimeoutError:
            event = Event("fatal", {"text": "the model took too long to load"})
        if event is None or event.type != "ready":
            text = event.data.get("text") if event else None
            await self._stop_worker()
            raise SynthesisError(f"the voice model could not be loaded: {text or 'worker died'}")
        _LOGGER.info("Worker %s ready", self._process.pid)

    async def _read(self) -> Event | None:
        assert self._process is not None and self._process.stdout is not None
        return await async_read_event(self._process.stdout)

    async def _speak(self, job: Job) -> None:
        assert self._process is not None and self._process.stdin is not None
        data = {"id": job.id, "text": job.text, "voice": job.voice, "speed": job.speed}
        data.update(lang=job.lang, first=job.first)
        try:
            await async_write_event(Event("job", data), self._process.stdin)
            while (event := await self._read()) is not None:
                if event.type == "audio" and event.payload:
                    if not job.cancelled:
                        job.chunks.put_nowait(event.payload)
                elif event.type == "done":
                    job.chunks.put_nowait(_END)
                    return
                elif event.type == "failed":
                    job.chunks.put_nowait(SynthesisError(event.data.get("text", "failed")))
                    return
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as err:
            _LOGGER.debug("Pipe to the worker broke: %s", err)
        code = await self._stop_worker()
        _LOGGER.error("The worker died (exit code %s) while speaking job %d", code, job.id)
        job.chunks.put_nowait(SynthesisError(f"the synthesis process died (exit code {code})"))

    async def _stop_worker(self) -> int | None:
        process, self._process = self._process, None
        if process is None:
            return None
        if process.returncode is None and process.stdin is not None:
            process.stdin.close()  # EOF: the worker leaves its loop and exits
        try:
            return await asyncio.wait_for(process.wait(), timeout=5)
        except asyncio.TimeoutError:
            process.kill()
            return await process.wait()
