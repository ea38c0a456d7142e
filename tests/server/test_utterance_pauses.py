"""Where an utterance places the paragraph pause, and what its pieces carry to the
worker (the sentence pause, the request's normalization), for both doors alike:
`SpokenText` with a scheduler that only records what it is given."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from wyoming_kokoro.audio import BYTES_PER_SECOND, Pauses
from wyoming_kokoro.server.turns import Job
from wyoming_kokoro.server.utterance import SpokenText
from wyoming_kokoro.text.normalizing import Normalization

ONE = "The garage door is open now."
TWO = "The kitchen lights are off."


class Recorder:
    """Stands in for the scheduler: keeps the jobs, never speaks them."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def submit(self, job: Job) -> Job:
        self.jobs.append(job)
        return job


def queued(
    text: str, stream: bool = False, speed: float = 1.0, **kwargs: Any
) -> tuple[list[Any], list[Job]]:
    """What the utterance queues for `text`, in order: silences as seconds, jobs."""

    async def run() -> tuple[list[Any], list[Job]]:
        recorder: Any = Recorder()
        spoken = SpokenText(recorder, 1, "jm_kumo", speed, "en-us", 10_000, **kwargs)
        if stream:
            for chunk in text:
                spoken.add_text(chunk)
        else:
            spoken.submit(spoken.plan_text(text))
        spoken.finish()
        out: list[Any] = []
        while (item := spoken._jobs.get_nowait()) is not None:
            out.append(len(item) / BYTES_PER_SECOND if isinstance(item, bytes) else item.text)
        return out, recorder.jobs

    return asyncio.run(run())


@pytest.mark.parametrize("stream", [False, True])
def test_a_blank_line_queues_what_the_paragraph_pause_adds(stream: bool) -> None:
    text = f"{ONE}\n\n{TWO}\n\n"
    out, _ = queued(text, stream, pauses=Pauses(100, 1000))
    assert out == [ONE, 0.9, TWO]  # none after the last paragraph: the tail is its own
    assert queued(text, stream)[0] == [ONE, TWO]  # the defaults add nothing
    slow, _ = queued(text, stream, pauses=Pauses(100, 1000), speed=0.5)
    assert slow == [ONE, 1.8, TWO]  # scaled, as the sentence pause is


def test_every_piece_carries_the_sentence_pause_and_the_requests_normalization() -> None:
    how = Normalization(True, ("units", "phones"))
    _, jobs = queued(f"{ONE} {TWO}", pauses=Pauses(700, 900), normalization=how)
    assert [job.text for job in jobs] == [ONE, TWO]
    assert all(job.sentence_pause == 700 and job.normalization == how for job in jobs)
    _, plain = queued(ONE)
    assert plain[0].sentence_pause == 250 and plain[0].normalization == Normalization()


def test_an_ssml_voice_naming_a_preset_brings_the_presets_own_pauses() -> None:
    # Inside <voice name="slow">, the preset's pauses where it sets them (its sentence
    # pause, and its paragraph pause at a </p>); outside, and after it, the request's.
    from wyoming_kokoro.catalog.presets import Choice
    from wyoming_kokoro.catalog.voices import VoiceError
    from wyoming_kokoro.server.ssml_plan import ssml_voicing
    from wyoming_kokoro.text.ssml import parse

    slow = Choice("jm_kumo", 1.0, 1.0, "en-us", "slow", 900, 2000)

    def choose(name: str) -> Choice:
        if name == "slow":
            return slow
        raise VoiceError(name)

    voicing = ssml_voicing(choose, Choice("jm_kumo", 1.0, 1.0, "en-us"), 1.0)
    third = "The front door is locked."
    document = (
        f"<speak><p>{ONE}</p><voice name='slow'><p>{TWO}</p><p>{ONE}</p></voice>"
        f"<p>{third}</p></speak>"
    )

    async def run() -> tuple[list[Any], list[Job]]:
        recorder: Any = Recorder()
        spoken = SpokenText(recorder, 1, "jm_kumo", 1.0, "en-us", 10_000, pauses=Pauses(300, 600))
        spoken.submit(spoken.plan_ssml(parse(document), voicing))
        spoken.finish()
        out: list[Any] = []
        while (item := spoken._jobs.get_nowait()) is not None:
            out.append(
                round(len(item) / BYTES_PER_SECOND, 2) if isinstance(item, bytes) else item.text
            )
        return out, recorder.jobs

    out, jobs = asyncio.run(run())
    assert [(job.text, job.sentence_pause) for job in jobs] == [
        (ONE, 300),
        (TWO, 900),
        (ONE, 900),
        (third, 300),
    ]
    # A </p> adds what the paragraph pause has over the sentence pause: the request's
    # outside (600 - 300 ms), the preset's inside (2000 - 900 ms).
    assert out == [ONE, 0.3, TWO, 1.1, ONE, 1.1, third]  # the last </p>: no pause
