"""Parent side of the worker: start on demand, fair queue, death detection, idle exit.

Every piece of text a client wants spoken is a `Job`. Jobs wait in one queue per
client. The worker gets one model call at a time (`protocol.py`), and before each
call the scheduler picks the client served least recently, so a short
announcement waits for at most one call of a long article, never for the article.
A client that does not read its audio stops being served once a bounded amount
of its audio waits in the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from wyoming_kokoro.protocol import (
    Audio,
    BadMessage,
    Drop,
    Exited,
    Failed,
    Next,
    Piece,
    Preempt,
    Setup,
    WorkerConfig,
)
from wyoming_kokoro.server.memory import available_mb
from wyoming_kokoro.server.worker_handle import (
    ForkedWorker,
    SpawnedWorker,
    WorkerHandle,
    WorkerStartError,
)

_LOGGER = logging.getLogger(__name__)

_END = object()

# While other clients wait for the model, a long piece goes on in calls of at most
# this many phonemes (about 3 s of speech), so turns come round sooner. The cut
# falls between words, where the voice restarts its intonation: only then.
SHARED_CALL_TOKENS = 50

# Audio a client may have waiting in the server before its next call waits: 10 s
# of speech (480 kB), far ahead of any listener. A client that stops reading
# cannot make the worker speak a whole book into server memory.
MAX_BUFFERED_BYTES = 10 * 24_000 * 2


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
    volume: float = 1.0
    awaited: bool = False  # the first piece of an utterance: a listener waits for it
    id: int = 0
    chunks: asyncio.Queue[bytes | object | SynthesisError] = field(default_factory=asyncio.Queue)
    cancelled: bool = False
    started: bool = False  # the worker holds its plan
    on_consumed: Callable[[int], None] | None = None

    async def audio(self) -> AsyncIterator[bytes]:
        """PCM blocks of this job until it is done; raises SynthesisError on failure."""
        while True:
            item = await self.chunks.get()
            if item is _END:
                return
            if isinstance(item, SynthesisError):
                raise item
            assert isinstance(item, bytes)
            if self.on_consumed is not None:
                self.on_consumed(len(item))
            yield item


@dataclass(frozen=True)
class SchedulerOptions:
    idle_timeout: float  # seconds; 0 keeps the worker forever
    min_free_mb: int  # refuse to start a worker below this much available memory
    load_timeout: float = 180.0
    prefork: bool = False  # fork workers from a waiting parent with the imports done


class Scheduler:
    """Owns the worker process and decides which call it speaks next."""

    def __init__(
        self,
        worker_config: WorkerConfig,
        options: SchedulerOptions,
        worker: WorkerHandle | None = None,
    ) -> None:
        """`worker` makes the worker processes (default: spawned, or forked with
        `options.prefork`); tests plug in one that works in memory."""
        self._config = worker_config
        self._options = options
        self._queues: dict[int, deque[Job]] = {}
        self._served: dict[int, int] = {}  # client → tick of its last call
        self._buffered: dict[int, int] = {}  # client → bytes of audio not yet taken
        self._tick = 0
        self._wakeup = asyncio.Event()
        self._ids = itertools.count(1)
        if worker is None:
            worker = ForkedWorker() if options.prefork else SpawnedWorker()
        self._worker = worker
        self._task: asyncio.Task[None] | None = None
        self._drops: list[int] = []  # started jobs whose client went away
        self._prestart = False
        self._crowded = False  # another client waits for the model too
        self._in_flight: Job | None = None  # the job whose call the worker is speaking
        self._heard: set[int] = set()  # clients who have audio already
        # asyncio holds tasks weakly: each pending preempt is kept here until done.
        self._preempts: set[asyncio.Task[None]] = set()
        self.bursts = 0

    # -- client side ---------------------------------------------------------

    def submit(self, job: Job) -> Job:
        """Queue a job; its audio can be awaited with `job.audio()`."""
        job.id = next(self._ids)
        job.on_consumed = lambda size: self._consumed(job.client, size)
        _LOGGER.debug("Queued job %d of client %d (%d chars)", job.id, job.client, len(job.text))
        self._queues.setdefault(job.client, deque()).append(job)
        self._wakeup.set()
        if job.awaited:
            # A new utterance (a connection may speak several): its listener hears
            # nothing of it yet, whatever an earlier one gave.
            self._heard.discard(job.client)
        self._preempt_for(job)
        return job

    def _preempt_for(self, newcomer: Job) -> None:
        """A client who hears nothing yet does not wait for a call of one who does.

        The interrupted call is spoken again after the newcomer's first call; its
        listener has audio in hand meanwhile.
        """
        running = self._in_flight
        if running is None or running.client == newcomer.client:
            return
        if newcomer.client in self._heard or running.client not in self._heard:
            return
        _LOGGER.debug("Preempting job %d for client %d", running.id, newcomer.client)
        self._start_preempt(running.id)

    def _start_preempt(self, job_id: int) -> None:
        task = asyncio.get_running_loop().create_task(self._preempt(job_id))
        self._preempts.add(task)
        task.add_done_callback(self._preempts.discard)

    async def _preempt(self, job_id: int) -> None:
        if self._worker.pid is None:
            return  # stopped since the preempt was decided: nothing runs
        with contextlib.suppress(ConnectionError, OSError):  # a dead worker is seen by _call
            await self._worker.send(Preempt(job_id))

    def prepare(self) -> None:
        """A request is certain (its text is on the way): start the worker now."""
        if self._worker.pid is None:
            self._prestart = True
            self._wakeup.set()

    def cancel(self, client: int) -> None:
        """Forget a client's waiting jobs (it went away or its request failed)."""
        for job in self._queues.pop(client, ()):
            job.cancelled = True
            if job.started:
                self._drops.append(job.id)
        self._served.pop(client, None)
        self._buffered.pop(client, None)
        self._heard.discard(client)
        running = self._in_flight
        if running is not None and running.client == client:
            # Its call would take the model for up to a second with no one to hear it.
            _LOGGER.debug("Stopping job %d: client %d is gone", running.id, client)
            self._start_preempt(running.id)

    def _consumed(self, client: int, size: int) -> None:
        if client in self._buffered:
            was_full = self._buffered[client] >= MAX_BUFFERED_BYTES
            self._buffered[client] -= size
            if was_full and self._buffered[client] < MAX_BUFFERED_BYTES:
                self._wakeup.set()

    @property
    def worker_pid(self) -> int | None:
        return self._worker.pid

    @property
    def config(self) -> WorkerConfig:
        return self._config

    def reconfigure(self, config: WorkerConfig) -> None:
        """Hand `config` (new voices files, lexicon) to the next worker; a running
        one keeps its own until its burst ends."""
        self._config = config

    # -- lifecycle -----------------------------------------------------------

    def start(self, preload: bool = False) -> None:
        self._task = asyncio.create_task(self._run(preload), name="kokoro scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._worker.close()
        for client in list(self._queues):
            for job in self._queues.pop(client):
                job.chunks.put_nowait(SynthesisError("the server is shutting down"))

    def _next_job(self) -> Job | None:
        """The job of the client served least recently, among those with room.

        A client that was never served (an announcement arriving while an article
        is read) goes before one that was just served; between newcomers, the one
        with the shortest piece: an announcement arriving with three long answers
        waits for none of them.
        """
        for client in list(self._queues):
            queue = self._queues[client]
            while queue and queue[0].cancelled:
                queue.popleft()
            if not queue:
                del self._queues[client]
        ready = [c for c in self._queues if self._buffered.get(c, 0) < MAX_BUFFERED_BYTES]
        if not ready:
            return None
        self._crowded = len(ready) > 1
        client = min(ready, key=lambda c: (self._served.get(c, 0), len(self._queues[c][0].text)))
        self._tick += 1
        self._served[client] = self._tick
        return self._queues[client][0]

    def _finished(self, job: Job, item: object) -> None:
        job.chunks.put_nowait(item)
        queue = self._queues.get(job.client)
        if queue and queue[0] is job:
            queue.popleft()
            if not queue:
                del self._queues[job.client]

    async def _run(self, preload: bool) -> None:
        try:
            await self._worker.prepare()
        except WorkerStartError as err:
            _LOGGER.error("%s; retrying at the first request", err)
        if preload:
            await self._ensure_worker_or_fail(warm_up=True)
        while True:
            job = self._next_job()
            if job is None:
                if self._prestart:
                    self._prestart = False
                    await self._ensure_worker_or_fail()
                    continue
                self._wakeup.clear()
                # Jobs held back by a full client buffer are not idleness.
                idle = self._options.idle_timeout if self.worker_pid and not self._queues else 0
                try:
                    await asyncio.wait_for(self._wakeup.wait(), timeout=idle or None)
                except asyncio.TimeoutError:
                    _LOGGER.info("Idle for %.0f s: stopping the worker", idle)
                    await self._stop_worker()
                continue
            self._prestart = False
            if await self._ensure_worker_or_fail():
                await self._call(job)

    async def _ensure_worker_or_fail(self, warm_up: bool = False) -> bool:
        try:
            await self._ensure_worker(warm_up)
            return True
        except SynthesisError as err:
            _LOGGER.error("%s", err)
            # Every waiting job would meet the same failure: answer them now.
            for client in list(self._queues):
                for job in self._queues.pop(client):
                    job.chunks.put_nowait(err)
            return False

    async def _ensure_worker(self, warm_up: bool) -> None:
        if self.worker_pid is not None:
            return
        free = available_mb()
        if free is not None and free < self._options.min_free_mb:
            raise SynthesisError(
                f"not enough memory to load the voice model: {free} MB available, "
                f"{self._options.min_free_mb} MB needed"
            )
        self.bursts += 1
        _LOGGER.info("Starting the worker (burst %d)", self.bursts)
        setup = Setup(self._config.to_dict(), warm_up=warm_up)
        try:
            ready = await self._worker.start(setup, self._options.load_timeout)
        except WorkerStartError as err:
            raise SynthesisError(str(err)) from err
        _LOGGER.info("Worker %s ready", ready.pid)

    async def _call(self, job: Job) -> None:
        """One model call of `job`: its first (which plans the piece) or its next."""
        try:
            for dropped in self._drops:
                await self._worker.send(Drop(dropped))
            self._drops.clear()
            _LOGGER.debug("Call for job %d of client %d", job.id, job.client)
            if job.started:
                await self._worker.send(Next(job.id, SHARED_CALL_TOKENS if self._crowded else None))
            else:
                job.started = True
                piece = Piece(
                    job.id, job.text, job.voice, job.speed, job.lang, job.awaited, job.volume
                )
                await self._worker.send(piece)
            self._in_flight = job
            reply = await self._worker.receive()
            while isinstance(reply, Audio) and reply.window and reply.id == job.id:
                self._take(job, reply.pcm)  # a window: its listener hears it now
                reply = await self._worker.receive()
        except (ConnectionError, asyncio.IncompleteReadError, OSError, BadMessage) as err:
            _LOGGER.debug("Pipe to the worker broke: %s", err)
            reply = None
        finally:
            self._in_flight = None
        if isinstance(reply, Audio) and reply.id == job.id:
            self._take(job, reply.pcm)
            if not reply.more:
                self._finished(job, _END)
            return
        if isinstance(reply, Failed) and reply.id == job.id:
            self._finished(job, SynthesisError(reply.text))
            return
        code = reply.code if isinstance(reply, Exited) else await self._worker.stop()
        _LOGGER.error("The worker died (exit code %s) while speaking job %d", code, job.id)
        self._worker_lost(SynthesisError(f"the synthesis process died (exit code {code})"))

    def _take(self, job: Job, pcm: bytes) -> None:
        """Audio from the worker for `job`'s listener."""
        if pcm and not job.cancelled:
            first = job.client not in self._heard
            self._heard.add(job.client)
            # Newcomers that came together: once this one hears its first window, the
            # next waiting listener's first call goes before the rest of this one.
            if first and self._in_flight is job and self._awaiting_audio(job.client):
                _LOGGER.debug("Preempting job %d: another client has no audio yet", job.id)
                self._start_preempt(job.id)
            buffered = self._buffered.get(job.client, 0) + len(pcm)
            self._buffered[job.client] = buffered
            job.chunks.put_nowait(pcm)
            if buffered >= MAX_BUFFERED_BYTES:
                _LOGGER.debug("Client %d is not reading its audio: held back", job.client)

    def _awaiting_audio(self, other_than: int) -> bool:
        """Whether a client other than `other_than` waits for its first audio."""
        return any(
            client != other_than
            and client not in self._heard
            and any(not job.cancelled for job in queue)
            for client, queue in self._queues.items()
        )

    def _worker_lost(self, error: SynthesisError) -> None:
        """Pieces part-spoken by the dead worker fail; the others wait for a new one."""
        self._drops.clear()
        for queue in list(self._queues.values()):
            if queue and queue[0].started:
                self._finished(queue[0], error)

    async def _stop_worker(self) -> int | None:
        return await self._worker.stop()
