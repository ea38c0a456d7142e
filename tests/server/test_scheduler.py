"""The order in which the worker speaks the jobs of several clients (`Turns`), and the
scheduler's preempts."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

from support.fake_worker import FakeWorker

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.protocol import Message, Preempt, WorkerConfig
from wyoming_kokoro.server.scheduler import Scheduler, SchedulerOptions
from wyoming_kokoro.server.turns import MAX_BUFFERED_BYTES, Job, Turns
from wyoming_kokoro.settings import EngineSettings


def _scheduler(worker: FakeWorker) -> Scheduler:
    """A running scheduler with the in-memory worker."""
    assets = Assets(Path("m.onnx"), Path("v.npz"), ("jm_kumo",), "test")
    config = WorkerConfig(assets, EngineSettings(threads=1))
    assert WorkerConfig.from_dict(config.to_dict()) == config  # what the worker receives
    scheduler = Scheduler(config, SchedulerOptions(idle_timeout=0, min_free_mb=0), worker)
    scheduler.start()
    return scheduler


def _job(client: int, text: str) -> Job:
    return Job(client, text, "jm_kumo", 1.0, "en-us")


def _speak_one_call(turns: Turns) -> Job | None:
    """What the scheduler does for a piece spoken in one model call."""
    job = turns.next_job()
    if job is not None:
        turns.done(job)
    return job


def test_a_newcomer_goes_before_the_client_just_served() -> None:
    turns = Turns()
    for n in range(4):
        turns.add(_job(1, f"article {n}"))
    assert _speak_one_call(turns).text == "article 0"  # in flight when the next one comes
    turns.add(_job(2, "announcement"))
    order = [_speak_one_call(turns).text for _ in range(4)]
    assert order == ["announcement", "article 1", "article 2", "article 3"]
    assert turns.next_job() is None


def test_clients_take_turns_and_cancelled_jobs_are_skipped() -> None:
    turns = Turns()
    for n in range(3):
        turns.add(_job(1, f"a{n}"))
        turns.add(_job(2, f"b{n}"))
        turns.add(_job(3, f"c{n}"))
    turns.cancel(3)
    order = [job.text for job in iter(lambda: _speak_one_call(turns), None)]
    assert order == ["a0", "b0", "a1", "b1", "a2", "b2"]


def test_newcomers_arriving_together_go_shortest_first() -> None:
    turns = Turns()
    turns.add(_job(1, "A long answer about the weather for the whole week ahead."))
    turns.add(_job(2, "Door open."))
    turns.add(_job(3, "A medium reply, two clauses."))
    order = [job.client for job in iter(lambda: _speak_one_call(turns), None)]
    assert order == [2, 3, 1]


def test_a_piece_keeps_its_place_between_its_calls_and_clients_alternate_per_call() -> None:
    turns = Turns()
    article = _job(1, "a long article piece")
    turns.add(article)
    assert turns.next_job() is article  # its first call
    turns.add(_job(2, "announcement"))
    assert turns.next_job().client == 2  # the newcomer takes the next call
    assert turns.crowded  # and the article's calls get shorter meanwhile
    assert turns.next_job() is article  # the article goes on where it was


def test_a_client_with_too_much_unread_audio_waits() -> None:
    turns = Turns()
    turns.add(_job(1, "a long article piece"))
    job = turns.next_job()
    turns.take(job, bytes(MAX_BUFFERED_BYTES))
    assert turns.next_job() is None  # held back, not idle: the job is still queued
    assert turns.waiting
    assert turns.consumed(1, 48_000)  # room again: the scheduler wakes up
    assert turns.next_job().client == 1


class _StuckPreempts(FakeWorker):
    """A worker that never takes a Preempt: its send waits on a future that nothing
    else holds."""

    async def send(self, message: Message) -> None:
        if isinstance(message, Preempt):
            self.sent.append(message)
            await asyncio.get_running_loop().create_future()
        await super().send(message)


async def _in_flight(scheduler: Scheduler, worker: FakeWorker, client: int) -> Job:
    """A job of `client` whose call the worker is speaking (held: it goes on until
    a Preempt reaches the worker)."""
    worker.hold()
    job = scheduler.submit(_job(client, "a long article piece"))
    for _ in range(1_000):
        if worker.running == job.id:
            return job
        await asyncio.sleep(0)
    raise AssertionError("the call never started")


def test_every_pending_preempt_is_kept_until_it_is_done() -> None:
    # asyncio holds tasks weakly: a pending preempt without a reference of ours
    # can be collected mid-send (and its Preempt never sent).
    async def scenario() -> list[bool]:
        worker = _StuckPreempts()
        scheduler = _scheduler(worker)
        try:
            job = await _in_flight(scheduler, worker, 1)
            before = asyncio.all_tasks()
            scheduler.cancel(1)  # its client hangs up mid-call
            await asyncio.sleep(0)  # the preempt starts, and waits in its send
            assert worker.calls(Preempt) == [Preempt(job.id)]
            started = [weakref.ref(t) for t in asyncio.all_tasks() - before]
            del before
            assert len(started) == 1
            gc.collect()
            return [task() is None for task in started]
        finally:
            await scheduler.stop()

    assert asyncio.run(scenario()) == [False]


def test_a_finished_preempt_is_let_go() -> None:
    async def scenario() -> list[bool]:
        worker = FakeWorker()
        scheduler = _scheduler(worker)
        try:
            job = await _in_flight(scheduler, worker, 1)
            before = asyncio.all_tasks()
            scheduler.cancel(1)
            started = [weakref.ref(t) for t in asyncio.all_tasks() - before]
            del before
            assert len(started) == 1
            for _ in range(3):
                await asyncio.sleep(0)
            assert worker.calls(Preempt) == [Preempt(job.id)]
            gc.collect()
            return [task() is None for task in started]
        finally:
            await scheduler.stop()

    assert asyncio.run(scenario()) == [True]
