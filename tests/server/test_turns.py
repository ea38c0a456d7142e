"""The real scheduler with the in-memory worker: turns, preemption, deaths, hang-ups, bursts.

No model and no clock: what is asserted is which calls the worker was sent and
what each listener got back, byte for byte (the fake's "audio" is the text).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.fake_worker import FakeWorker, heard, said

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.presets import Choice
from wyoming_kokoro.protocol import Drop, Next, Piece, Preempt, Ready, Setup, WorkerConfig
from wyoming_kokoro.server import turns as turns_module
from wyoming_kokoro.server.scheduler import Scheduler, SchedulerOptions
from wyoming_kokoro.server.ssml_plan import ssml_voicing
from wyoming_kokoro.server.turns import MAX_BUFFERED_BYTES, Job, SynthesisError, Turns
from wyoming_kokoro.server.utterance import SpokenText
from wyoming_kokoro.server.worker_call import SHARED_WINDOWS
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.text.ssml import parse as parse_ssml

ARTICLE = " ".join(f"Paragraph {n} of the article." for n in range(1, 9))
ANNOUNCEMENT = "The washing machine has finished."
T = TypeVar("T")


def _config() -> WorkerConfig:
    assets = Assets(Path("m.onnx"), Path("v.npz"), ("jm_kumo",), "test")
    return WorkerConfig(assets, EngineSettings(threads=1))


def _job(client: int, text: str, awaited: bool = True) -> Job:
    return Job(client, text, "jm_kumo", 1.0, "en-us", awaited=awaited)


async def _all(job: Job) -> str:
    return heard(b"".join([pcm async for pcm in job.audio()]))


async def _until(condition: Callable[[], bool], limit: int = 10_000) -> None:
    """Let the loop run until `condition` holds (bounded: a test must not hang)."""
    for _ in range(limit):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never came true")


def _run(
    scenario: Callable[[Scheduler, FakeWorker], Awaitable[T]],
    idle_timeout: float = 0,
    windows: int = 1,
    pad: int = 0,
    stall_seconds: float | None = None,
) -> tuple[T, FakeWorker]:
    worker = FakeWorker(windows, pad)

    async def main() -> T:
        options = SchedulerOptions(idle_timeout, 0, stall_seconds=stall_seconds)
        scheduler = Scheduler(_config(), options, worker)
        scheduler.start()
        try:
            return await asyncio.wait_for(scenario(scheduler, worker), 30)
        finally:
            await scheduler.stop()

    return asyncio.run(main()), worker


def test_every_word_arrives_once_and_in_order() -> None:
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> str:
        return await _all(scheduler.submit(_job(1, ARTICLE)))

    text, worker = _run(scenario)
    assert text == ARTICLE
    assert len(worker.calls(Piece)) == 1 and len(worker.calls(Next)) == 7


def test_windows_reach_the_listener_in_order() -> None:
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> str:
        return await _all(scheduler.submit(_job(1, ARTICLE)))

    text, _ = _run(scenario, windows=3)
    assert text == ARTICLE


def test_a_newcomer_waits_for_at_most_one_call_of_an_article() -> None:
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[str, str]:
        article = scheduler.submit(_job(1, ARTICLE))
        chunks = article.audio()
        await anext(chunks)  # the article's listener hears its first call
        worker.hold()
        await _until(lambda: worker.running is not None)
        announcement = scheduler.submit(_job(2, ANNOUNCEMENT))
        worker.release()
        said = await _all(announcement)
        rest = heard(b"".join([pcm async for pcm in chunks]))
        return said, rest

    (said, rest), worker = _run(scenario)
    assert said == ANNOUNCEMENT
    assert rest == ARTICLE.split(" ", 5)[-1]  # the article lost nothing: "Paragraph 2 ..."
    order = [m.id for m in worker.sent if isinstance(m, (Piece, Next))]
    # article, its second call (preempted or spoken), then the announcement at once.
    assert order.index(2) <= 2


def test_a_preempted_call_is_spoken_again_and_nothing_is_doubled() -> None:
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[str, str]:
        article = scheduler.submit(_job(1, ARTICLE))
        chunks = article.audio()
        first = await anext(chunks)
        worker.hold()  # the article's second call is in progress when the newcomer comes
        await _until(lambda: worker.running == article.id)
        announcement = scheduler.submit(_job(2, ANNOUNCEMENT))
        await _until(lambda: bool(worker.calls(Preempt)))
        worker.release()
        said = await _all(announcement)
        rest = b"".join([pcm async for pcm in chunks])
        return said, heard(first + rest)

    (said, article), worker = _run(scenario)
    assert said == ANNOUNCEMENT and article == ARTICLE
    assert [m.id for m in worker.calls(Preempt)] == [1]


def test_a_preempt_between_windows_keeps_the_windows_already_heard() -> None:
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[str, str]:
        article = scheduler.submit(_job(1, ARTICLE))
        chunks = article.audio()
        got = [await anext(chunks)]  # a window of the first call
        worker.hold()
        await _until(lambda: worker.running == article.id)
        announcement = scheduler.submit(_job(2, ANNOUNCEMENT))
        await _until(lambda: bool(worker.calls(Preempt)))
        worker.release()
        said = await _all(announcement)
        got += [pcm async for pcm in chunks]
        return said, heard(b"".join(got))

    (said, article), _ = _run(scenario, windows=3)
    assert said == ANNOUNCEMENT and article == ARTICLE


def test_newcomers_arriving_together_each_hear_a_window_before_anyone_a_second() -> None:
    texts = [f"Client {n} asks for the weather. It is sunny and mild." for n in (1, 2, 3)]

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> list[str]:
        jobs = [scheduler.submit(_job(n, text)) for n, text in enumerate(texts, 1)]
        return list(await asyncio.gather(*(_all(job) for job in jobs)))

    spoken, worker = _run(scenario, windows=3)
    assert spoken == texts  # nothing lost or doubled by the turns
    # Every client's first call began before any client's first call was resumed or
    # its second call began: each listener waited for first windows only.
    order = [type(m).__name__ for m in worker.sent if isinstance(m, (Piece, Next))]
    assert order[:3] == ["Piece"] * 3, order
    # Each call was told, as it was sent, to let the others go after one window
    # (while someone still waited): no Preempt had to catch up with it. Then, while
    # others have text queued, a turn is at most SHARED_WINDOWS windows; alone, a
    # call goes on to its end.
    assert [m.windows for m in worker.calls(Piece)] == [1, 1, SHARED_WINDOWS]
    assert not worker.calls(Preempt)
    later = [m.windows for m in worker.calls(Next)]
    assert later[-1] == 0 and set(later[:-1]) == {SHARED_WINDOWS}


def test_a_newcomer_arriving_after_a_call_was_sent_still_gets_the_model_at_its_next_window() -> (
    None
):
    texts = [f"Client {n} asks for the weather. It is sunny and mild." for n in (1, 2)]

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> list[str]:
        worker.hold()
        first = scheduler.submit(_job(1, texts[0]))
        await _until(lambda: worker.running == first.id)
        second = scheduler.submit(_job(2, texts[1]))
        worker.release()
        return list(await asyncio.gather(_all(first), _all(second)))

    spoken, worker = _run(scenario, windows=3)
    assert spoken == texts
    assert [m.windows for m in worker.calls(Piece)] == [0, SHARED_WINDOWS]
    # The first call was sent alone; the newcomer, arriving before its first window,
    # had it pause after that window (soft: its plan and window were not stopped).
    assert worker.calls(Preempt) == [Preempt(1, soft=True)]
    order = [(type(m).__name__, m.id) for m in worker.sent if isinstance(m, (Piece, Next))]
    assert order[:3] == [("Piece", 1), ("Piece", 2), ("Next", 1)], order


def test_a_later_piece_goes_with_how_much_audio_its_listener_has_in_hand() -> None:
    # The fake's audio is its text's bytes: a listener who heard "It is cloudy."
    # has 0.0003 s of it in hand; with 4 s of audio (`pad`) a call, nearly 4 s. The
    # worker decodes the piece's first call in windows if a whole call would be late.
    text = "It is cloudy. The rain will start at noon and stop before the evening."

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> None:
        first, rest = text.split(". ")
        await _all(scheduler.submit(_job(1, first + ".")))
        await _all(scheduler.submit(_job(1, rest, awaited=False)))

    def pieces(pad: int) -> list[tuple[bool, float | None]]:
        _, worker = _run(scenario, pad=pad)
        return [(m.awaited, m.in_hand) for m in worker.calls(Piece)]  # type: ignore[attr-defined]

    (first, none), (later, little) = pieces(pad=0)
    assert (first, none, later) == (True, None, False) and 0 <= little < 0.01
    (first, none), (later, plenty) = pieces(pad=4 * 48_000)
    assert (first, none, later) == (True, None, False) and 3.0 < plenty <= 4.0


def test_a_pieces_next_call_goes_with_how_much_audio_its_listener_has_in_hand() -> None:
    # Two sentences in one piece are two calls of the fake: the second can be late too.
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> None:
        await _all(scheduler.submit(_job(1, "It is cloudy. The rain will start at noon.")))

    def next_calls(pad: int) -> list[float | None]:
        _, worker = _run(scenario, pad=pad)
        return [m.in_hand for m in worker.calls(Next)]  # type: ignore[attr-defined]

    (little,) = next_calls(pad=0)
    assert little is not None and 0 <= little < 0.01
    (plenty,) = next_calls(pad=4 * 48_000)
    assert plenty is not None and 3.0 < plenty <= 4.01


def test_audio_in_hand_counts_from_where_a_player_that_ran_dry_plays_again(monkeypatch) -> None:
    # A player that ran out waits for the next audio and plays it from then on: what is
    # left to hear counts from there, not from the utterance's first audio.
    clock = [100.0]
    monkeypatch.setattr(turns_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    turns, job = Turns(), _job(1, "It is cloudy.")
    turns.add(job)
    assert turns.in_hand(1) is None  # nothing heard yet
    second = 48_000  # bytes: 24 kHz, 16-bit, mono
    turns.take(job, bytes(4 * second))
    clock[0] = 101.0
    assert turns.in_hand(1) == pytest.approx(3.0)
    clock[0] = 106.0  # 2 s of silence: the next audio comes late
    assert turns.in_hand(1) == 0.0
    turns.take(job, bytes(4 * second))
    clock[0] = 107.0
    assert turns.in_hand(1) == pytest.approx(3.0)  # not 1.0: 8 s sent since 100.0


def test_a_client_that_hangs_up_mid_call_frees_the_model_and_its_piece_is_dropped() -> None:
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> str:
        article = scheduler.submit(_job(1, ARTICLE))
        chunks = article.audio()
        await anext(chunks)
        worker.hold()
        await _until(lambda: worker.running == article.id)
        scheduler.cancel(1)  # the connection closed
        await _until(lambda: bool(worker.calls(Preempt)))
        worker.release()
        return await _all(scheduler.submit(_job(2, ANNOUNCEMENT)))

    said, worker = _run(scenario)
    assert said == ANNOUNCEMENT
    assert [m.id for m in worker.calls(Drop)] == [1]
    assert all(m.id != 1 for m in worker.calls(Next)[1:])  # no call for nobody


def test_a_dead_worker_costs_the_piece_it_was_speaking_and_nothing_else() -> None:
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[str, str]:
        article = scheduler.submit(_job(1, ARTICLE))
        chunks = article.audio()
        first = await anext(chunks)
        worker.hold()
        await _until(lambda: worker.running == article.id)
        waiting = scheduler.submit(_job(2, ANNOUNCEMENT))
        worker.die()
        worker.release()
        rest = b"".join([pcm async for pcm in chunks])  # no error: the answer goes on
        return heard(first + rest), await _all(waiting)

    (article, said), worker = _run(scenario)
    # The piece in flight ends where it was, without an error (its answer would go on
    # with its next piece: see the test below).
    assert article == "Paragraph 1 of the article."
    assert said == ANNOUNCEMENT  # spoken by the next worker
    assert len(worker.setups) == 2
    assert [p.id for p in worker.calls(Piece)].count(1) == 1  # never sent again


CRASH = "CRASH"  # the fake's crash marker (as the worker's test-only hook)


async def _utterance(
    scheduler: Scheduler, client: int, pieces: list[str], skipped: list[int] | None = None
) -> str:
    """What one utterance of `pieces` was heard as (`skipped`: gets how many pieces were
    skipped, as a door can tell)."""
    spoken = SpokenText(scheduler, client, "jm_kumo", 1.0, "en-us", 10_000)
    spoken.submit([(("jm_kumo", 1.0, "en-us", 1.0, (None, None)), pieces)])
    spoken.finish()
    said = heard(b"".join([pcm async for pcm in spoken.audio()]))
    if skipped is not None:
        skipped.append(spoken.skipped)
    return said


@pytest.mark.parametrize("windows", [1, 3])
def test_a_crash_skips_its_piece_and_the_pieces_the_dead_worker_held_go_on(windows) -> None:
    """Two answers at once; a piece of one kills the worker. That answer goes on with its
    next piece; the other, part-spoken by the dead worker (in windows: part-way through a
    call), goes on on a new worker from where its listener was, nothing said twice."""
    crashing = ["Front door open.", f"Back door {CRASH}.", "Garage closed."]

    skipped: list[int] = []

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[str, str]:
        worker.crash_on(CRASH)
        article = asyncio.ensure_future(_utterance(scheduler, 1, [ARTICLE], skipped))
        await _until(lambda: bool(worker.calls(Piece)))
        answer = await _utterance(scheduler, 2, crashing, skipped)
        return await article, answer

    (article, answer), worker = _run(scenario, windows=windows)
    assert answer == "Front door open. Garage closed."
    assert article == ARTICLE
    assert sorted(skipped) == [0, 1]  # the doors can tell an answer lost a piece
    assert len(worker.setups) == 2
    crashed = [p for p in worker.calls(Piece) if CRASH in p.text]
    assert len(crashed) == 1  # a piece that killed a worker is never sent again
    resumed = [p for p in worker.calls(Piece) if p.text == ARTICLE and p.steps]
    assert len(resumed) == 1, worker.calls(Piece)
    if windows > 1:
        assert resumed[0].heard > 0  # part-way through a call: resumed within it


@settings(max_examples=25, deadline=None)
@given(
    windows=st.integers(1, 4),
    crashing=st.integers(0, 2),
    pad=st.sampled_from([0, 40]),
    sentences=st.integers(1, 6),
)
def test_whichever_piece_kills_the_worker_only_it_is_lost(windows, crashing, pad, sentences):
    """Any piece of one answer kills the worker, at any point of the other's: that piece
    alone is lost; the other answer, however far it was, is heard whole and once."""
    article = " ".join(f"Paragraph {n} of the article." for n in range(1, sentences + 1))
    pieces = [f"Sentence {n} of {CRASH if n == crashing else 'the'} answer." for n in range(3)]

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[str, str]:
        worker.crash_on(CRASH)
        other = asyncio.ensure_future(_utterance(scheduler, 1, [article]))
        await _until(lambda: bool(worker.calls(Piece)))
        answer = await _utterance(scheduler, 2, pieces)
        return await other, answer

    (other, answer), _ = _run(scenario, windows=windows, pad=pad)
    assert other == article
    assert answer == " ".join(p for n, p in enumerate(pieces) if n != crashing)


def test_workers_that_keep_dying_fail_the_waiting_answers() -> None:
    """Every piece kills its worker: after a few in a row, the waiting answers are told
    why rather than each costing a worker."""

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> list[str]:
        worker.crash_on("")  # any piece
        jobs = [scheduler.submit(_job(n, f"Piece {n}.")) for n in range(1, 7)]
        errors = []
        for job in jobs:
            try:
                await _all(job)
            except SynthesisError as err:
                errors.append(str(err))
        return errors

    errors, worker = _run(scenario)
    assert errors and all("died" in error for error in errors)
    assert len(worker.setups) < 6


def test_a_call_without_progress_costs_its_worker_and_the_others_go_on() -> None:
    """A hung worker (here: a call held for ever) is killed once its call has made no
    progress for its bound; the piece in flight is skipped as after a crash, the
    piece the worker held goes on on a new worker, and the scheduler says it is
    stalled until then."""

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[str, str, list[bool]]:
        seen: list[bool] = []
        kill = worker.kill

        async def watched_kill() -> int | None:
            seen.append(scheduler.stalled)
            return await kill()

        worker.kill = watched_kill  # type: ignore[method-assign]
        article = scheduler.submit(_job(1, ARTICLE))
        chunks = article.audio()
        first = await anext(chunks)
        worker.hold()  # from now on the worker hangs: nothing comes back
        await _until(lambda: worker.running == article.id)
        hung = scheduler.submit(_job(2, ANNOUNCEMENT))  # preempts the article, then hangs
        await _until(lambda: worker.kills == 1, 1_000_000)
        worker.release()
        rest = b"".join([pcm async for pcm in chunks])
        return heard(first + rest), await _all(hung), [*seen, scheduler.stalled]

    (article, hung, stalled), worker = _run(scenario, stall_seconds=0.05)
    assert hung == ""  # skipped: no audio, no error
    assert article == ARTICLE  # the preempted article went on on the next worker
    assert stalled == [True, False]
    assert len(worker.setups) == 2 and worker.kills == 1


def test_a_failed_start_fails_the_waiting_jobs_and_the_next_one_retries() -> None:
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[str, str]:
        worker.refuse_start("Cannot allocate memory")
        failed = scheduler.submit(_job(1, ANNOUNCEMENT))
        with pytest.raises(SynthesisError) as error:
            await _all(failed)
        worker.refuse_start(None)
        return str(error.value), await _all(scheduler.submit(_job(2, ANNOUNCEMENT)))

    (error, said), _ = _run(scenario)
    assert "Cannot allocate memory" in error and said == ANNOUNCEMENT


def test_the_worker_leaves_when_idle_and_the_next_request_starts_a_burst() -> None:
    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[str, int, str]:
        first = await _all(scheduler.submit(_job(1, ANNOUNCEMENT)))
        while worker.pid is not None:
            await asyncio.sleep(0.01)
        stops = worker.stops
        return first, stops, await _all(scheduler.submit(_job(1, ANNOUNCEMENT)))

    (first, stops, second), worker = _run(scenario, idle_timeout=0.05)
    assert first == second == ANNOUNCEMENT
    assert stops == 1 and len(worker.setups) == 2 and worker.prepared == 1


def test_a_client_that_does_not_read_is_held_back_and_others_are_served() -> None:
    sentences = [f"Sentence {n:05d} {'x' * 2000}." for n in range(400)]
    long_text, size = " ".join(sentences), len(said(sentences[0])[0])  # bytes per call

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[int, str]:
        unread = scheduler.submit(_job(1, long_text))
        await _until(lambda: unread.chunks.qsize() * size >= MAX_BUFFERED_BYTES, 100_000)
        spoken = await _all(scheduler.submit(_job(2, ANNOUNCEMENT)))
        calls = len([m for m in worker.sent if getattr(m, "id", None) == unread.id])
        return calls, spoken

    (calls, spoken), _ = _run(scenario)
    size = len(said(sentences[0])[0])
    assert spoken == ANNOUNCEMENT
    assert calls <= MAX_BUFFERED_BYTES // size + 2  # its buffer full, far from the book


def test_the_volume_reaches_the_worker_as_a_field_of_the_piece() -> None:
    """The request's volume, times a preset's and SSML's, travels beside the voice name."""

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> str:
        spoken = SpokenText(scheduler, 1, "jm_kumo", 1.0, "en-us", 10_000, volume=0.5)
        spoken.submit(spoken.plan_text("Plain words."))
        loud = Choice("af_heart", 1.0, 2.0, "en-us")  # a preset twice as loud
        segments = parse_ssml('<speak><prosody volume="+6dB">Loud words.</prosody></speak>')
        spoken.submit(spoken.plan_ssml(segments, ssml_voicing(lambda _: loud, loud, 0.5)))
        spoken.finish()
        return heard(b"".join([pcm async for pcm in spoken.audio()]))

    text, worker = _run(scenario)
    assert text == "Plain words. Loud words."
    pieces = worker.calls(Piece)
    assert (pieces[0].voice, pieces[0].volume) == ("jm_kumo", 0.5)
    assert pieces[1].voice == "af_heart" and 1.9 < pieces[1].volume < 2.1  # 2 x 0.5 x +6 dB


def test_new_voices_reach_a_loaded_worker_after_the_piece_it_is_speaking() -> None:
    """A rescan found voices while a worker speaks: its piece ends whole, then a new
    worker loads them for the next piece (the offer names them already)."""
    found = Assets(Path("m.onnx"), Path("w.npz"), ("af_heart", "jm_kumo"), "test")

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> tuple[str, str]:
        article = scheduler.submit(_job(1, ARTICLE))
        chunks = article.audio()
        first = await anext(chunks)
        worker.hold()
        await _until(lambda: worker.running == article.id)
        scheduler.reconfigure(WorkerConfig(found, EngineSettings(threads=1)))
        newcomer = scheduler.submit(Job(2, ANNOUNCEMENT, "af_heart", 1.0, "en-us", awaited=True))
        worker.release()
        said = await _all(newcomer)
        return said, heard(first + b"".join([pcm async for pcm in chunks]))

    (said, article), worker = _run(scenario)
    assert article == ARTICLE  # the listener's piece was not cut
    assert said == ANNOUNCEMENT
    assert len(worker.setups) == 2 and worker.stops >= 1
    assert worker.setups[1].config["assets"]["voice_names"] == ["af_heart", "jm_kumo"]
    pieces = [m.id for m in worker.sent if isinstance(m, (Piece, Next))]
    assert pieces.index(2) > max(i for i, n in enumerate(pieces) if n == 1)


def test_a_loaded_idle_worker_gives_way_to_one_that_loads_the_cut() -> None:
    """The model's cut was made while a worker was loaded: it is replaced, loaded, at
    once (its first calls would have no word times until its idle exit)."""

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> str:
        said = await _all(scheduler.submit(_job(1, ANNOUNCEMENT)))
        scheduler.renew("the model's cut")
        await _until(lambda: len(worker.setups) == 2 and scheduler.worker_pid is not None)
        return said

    said, worker = _run(scenario, idle_timeout=600)
    assert said == ANNOUNCEMENT
    assert worker.stops >= 1 and len(worker.setups) == 2


def test_a_worker_that_gives_way_for_the_cut_finishes_what_waits_first() -> None:
    """No listener hears a reload mid-answer for the cut: the article's pieces all go
    to the worker that began them, the new one loads once nothing waits."""
    loads: list[int] = []  # how many messages the scheduler had sent at each load

    async def scenario(scheduler: Scheduler, worker: FakeWorker) -> str:
        start = worker.start

        async def counted(setup: Setup, timeout: float) -> Ready:
            loads.append(len(worker.sent))
            return await start(setup, timeout)

        worker.start = counted  # type: ignore[method-assign]
        article = scheduler.submit(_job(1, ARTICLE))
        rest = [scheduler.submit(_job(1, f"Part {n} of the rest.", awaited=False)) for n in (2, 3)]
        chunks = article.audio()
        first = await anext(chunks)
        worker.hold()
        await _until(lambda: worker.running == article.id)
        scheduler.renew("the model's cut")
        worker.release()
        said = heard(first + b"".join([pcm async for pcm in chunks]))
        for job in rest:
            said += " " + await _all(job)
        await _until(lambda: len(loads) == 2)
        return said

    said, worker = _run(scenario, idle_timeout=600)
    assert said == f"{ARTICLE} Part 2 of the rest. Part 3 of the rest."
    calls = [n for n, m in enumerate(worker.sent) if isinstance(m, (Piece, Next))]
    assert len(loads) == 2 and max(calls) < loads[1], (loads, calls)
