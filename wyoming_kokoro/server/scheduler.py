"""Parent side of the worker: start on demand, one call at a time, death and hang
detection, idle exit.

The worker gets one model call at a time (`protocol.py`); which job's call is
`turns.py`'s decision, and the scheduler carries it out: it makes the call
(`worker_call.py`), hands the audio to the job's listener and stops a call in flight
(`Preempt`) when the turns say so. A worker that dies, or makes no progress for its
call's bound (`watchdog.py`, then killed), costs the piece in flight only: it is
skipped, and the pieces the worker held go on on a new one from where their
listeners are.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from wyoming_kokoro.protocol import Preempt, Setup, WorkerConfig
from wyoming_kokoro.server import watchdog
from wyoming_kokoro.server.memory import available_mb
from wyoming_kokoro.server.turns import Job, Said, SynthesisError, Turns
from wyoming_kokoro.server.worker_call import run_call
from wyoming_kokoro.server.worker_handle import (
    ForkedWorker,
    SpawnedWorker,
    WorkerHandle,
    WorkerStartError,
)
from wyoming_kokoro.timeline import WordTime

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class SchedulerOptions:
    idle_timeout: float  # seconds; 0 keeps the worker forever
    min_free_mb: int  # refuse to start a worker below this much available memory
    load_timeout: float = 180.0
    prefork: bool = False  # fork workers from a waiting parent with the imports done
    # Seconds a call may go without progress (None: from its length, watchdog.py).
    stall_seconds: float | None = field(default_factory=watchdog.bound_for_tests)


class Scheduler:
    """Owns the worker process and has it speak the call `Turns` says is next."""

    def __init__(
        self,
        worker_config: WorkerConfig,
        options: SchedulerOptions,
        worker: WorkerHandle | None = None,
    ) -> None:
        """`worker` makes the worker processes (default: spawned, or forked with
        `options.prefork`); tests plug in one that works in memory."""
        self._config = worker_config
        self._loaded: WorkerConfig | None = None  # what the running worker was given
        self._why = "the new voices"  # what a worker that gives way is replaced for
        self._renewal = False  # it gives way only when nothing waits (`renew`)
        self._options = options
        self._turns = Turns()
        self._wakeup = asyncio.Event()
        if worker is None:
            worker = ForkedWorker() if options.prefork else SpawnedWorker()
        self._worker = worker
        self._task: asyncio.Task[None] | None = None
        self._prestart = False
        # asyncio holds tasks weakly: each pending preempt is kept here until done.
        self._preempts: set[asyncio.Task[None]] = set()
        self.bursts = 0
        self._watch = watchdog.Watchdog(options.stall_seconds)

    # -- client side ---------------------------------------------------------

    def submit(self, job: Job) -> Job:
        """Queue a job; its audio can be awaited with `job.audio()`."""
        self._turns.add(job)
        job.on_consumed = lambda size: self._consumed(job.client, size)
        _LOGGER.debug("Queued job %d of client %d (%d chars)", job.id, job.client, len(job.text))
        self._wakeup.set()
        running = self._turns.stops_for(job)
        if running is not None:
            _LOGGER.debug("Preempting job %d for client %d", running.id, job.client)
            self._start_preempt(running.id)
        elif (sharing := self._turns.shares_with(job)) is not None:
            _LOGGER.debug("Job %d lets client %d go after its next window", sharing.id, job.client)
            self._start_preempt(sharing.id, soft=True)
        return job

    def _start_preempt(self, job_id: int, soft: bool = False) -> None:
        task = asyncio.get_running_loop().create_task(self._preempt(job_id, soft))
        self._preempts.add(task)
        task.add_done_callback(self._preempts.discard)

    async def _preempt(self, job_id: int, soft: bool) -> None:
        if self._worker.pid is None:
            return  # stopped since the preempt was decided: nothing runs
        with contextlib.suppress(ConnectionError, OSError):  # a dead worker is seen by _call
            await self._worker.send(Preempt(job_id, soft))

    def prepare(self) -> None:
        """A request is certain (its text is on the way): start the worker now."""
        if self._worker.pid is None:
            self._prestart = True
            self._wakeup.set()

    def cancel(self, client: int) -> None:
        """Forget a client's waiting jobs (it went away or its request failed)."""
        running = self._turns.cancel(client)
        if running is not None:
            # Its call would take the model for up to a second with no one to hear it.
            _LOGGER.debug("Stopping job %d: client %d is gone", running.id, client)
            self._start_preempt(running.id)

    def _consumed(self, client: int, size: int) -> None:
        if self._turns.consumed(client, size):
            self._wakeup.set()

    @property
    def worker_pid(self) -> int | None:
        return self._worker.pid

    @property
    def stalled(self) -> bool:
        """A call made no progress for its bound: from then until a new worker is ready
        (or nobody waits any more)."""
        return self._watch.stalled

    @property
    def config(self) -> WorkerConfig:
        return self._config

    def reconfigure(self, config: WorkerConfig, why: str = "the new voices") -> None:
        """Hand `config` (new voices, model files or lexicon) to the workers from now on.

        The offer names the new voices at once, so a running worker must not take
        another piece: it finishes the pieces it holds (no listener's sentence is
        cut), then stops, and the next piece starts a worker with `config`; `why`
        names what it loads, for the log."""
        self._config = config
        self._why = why
        self._renewal = False
        self._wakeup.set()

    def renew(self, why: str) -> None:
        """The files a worker loads changed on disk (the model's cut was made): the
        running worker gives way, as after `reconfigure`, to one that loads them. A
        copy, not the same config: a worker starting now may have looked too early."""
        self.reconfigure(dataclasses.replace(self._config), why)
        self._renewal = True

    @property
    def _outdated(self) -> bool:
        return self.worker_pid is not None and self._loaded is not self._config

    # -- lifecycle -----------------------------------------------------------

    def start(self, preload: bool = False) -> None:
        self._task = asyncio.create_task(self._run(preload), name="kokoro scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._worker.close()
        self._turns.fail_all(SynthesisError("the server is shutting down"))

    async def _run(self, preload: bool) -> None:
        try:
            await self._worker.prepare()
        except WorkerStartError as err:
            _LOGGER.error("%s; retrying at the first request", err)
        if preload:
            await self._ensure_worker_or_fail(warm_up=True)
        while True:
            # New voices are named by the offer at once: the worker gives way between
            # pieces. Files that only do better (the cut) wait until nothing waits, so
            # no listener hears a reload mid-answer.
            urgent = self._outdated and not self._renewal
            if self._outdated and not (self._turns.planned if urgent else self._turns.waiting):
                kept = preload or self._renewal  # a loaded worker is replaced by a loaded one
                await self._retire()
                if kept:  # load the new files now, not at the next request
                    await self._ensure_worker_or_fail(warm_up=not self._turns.waiting)
            job = self._turns.next_job(started_only=self._outdated and not self._renewal)
            if job is None:
                self._watch.stalled = False  # nobody waits for a worker: nothing is stalled
                if self._prestart:
                    self._prestart = False
                    await self._ensure_worker_or_fail()
                    continue
                self._wakeup.clear()
                # Jobs held back by a full client buffer are not idleness.
                idle = (
                    self._options.idle_timeout if self.worker_pid and not self._turns.waiting else 0
                )
                try:
                    await asyncio.wait_for(self._wakeup.wait(), timeout=idle or None)
                except asyncio.TimeoutError:
                    _LOGGER.info("Idle for %.0f s: stopping the worker", idle)
                    await self._worker.stop()
                continue
            self._prestart = False
            if await self._ensure_worker_or_fail():
                longest = (self._loaded or self._config).engine.max_call_tokens
                await run_call(self._worker, self._turns, self._watch, job, longest, self._take)

    async def _retire(self) -> None:
        _LOGGER.info("Stopping worker %s: the next piece loads %s", self.worker_pid, self._why)
        self._turns.drops.clear()  # their plans end with the worker
        await self._worker.stop()

    async def _ensure_worker_or_fail(self, warm_up: bool = False) -> bool:
        try:
            await self._ensure_worker(warm_up)
            return True
        except SynthesisError as err:
            _LOGGER.error("%s", err)
            # Every waiting job would meet the same failure: answer them now.
            self._turns.fail_all(err)
            self._watch.stalled = False
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
        config = self._config
        setup = Setup(config.to_dict(), warm_up=warm_up)
        try:
            ready = await self._worker.start(setup, self._options.load_timeout)
        except WorkerStartError as err:
            raise SynthesisError(str(err)) from err
        self._loaded = config
        self._watch.stalled = False
        self._turns.new_burst()  # the pieces the last worker held go on from where they are
        _LOGGER.info("Worker %s ready", ready.pid)

    def _take(self, job: Job, pcm: bytes, words: list[list[Any]] | None = None) -> None:
        """Audio from the worker for `job`'s listener (and the words said from its start)."""
        if words and pcm and not job.cancelled:
            job.chunks.put_nowait(Said([WordTime.from_list(word) for word in words]))
        if self._turns.take(job, pcm):
            _LOGGER.debug("Preempting job %d: another client has no audio yet", job.id)
            self._start_preempt(job.id)
