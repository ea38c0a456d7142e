"""Voices taught for windows (real model, real cut)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from support.audio_distance import log_mel_distance
from support.cores import THREADS
from support.recorded_windows import recorded_windows

from wyoming_kokoro.catalog.assets import Assets, resolve
from wyoming_kokoro.settings import EngineSettings
from wyoming_kokoro.synthesis import cutting, graph, teaching
from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.synthesis.held_calls import SHORT_FRAMES
from wyoming_kokoro.synthesis.prior import MIN_FRAMES, TRUSTED, VoicePriors


@pytest.fixture(scope="module")
def assets() -> Assets:
    return resolve(None, None, [])


@pytest.fixture(scope="module")
def engine(assets) -> Engine:
    cutting.ready(assets.model) or cutting.build(assets, threads=2)
    return Engine(assets, EngineSettings(threads=THREADS))


def test_every_text_is_one_call_of_the_length_it_teaches(engine) -> None:
    voice = engine.voice("jm_kumo")
    cut = engine.cut
    for texts, low, high in (
        (teaching.SENTENCES, SHORT_FRAMES, 10_000),
        (teaching.REPLIES, MIN_FRAMES, SHORT_FRAMES - 1),
    ):
        for text in texts:
            calls = engine.plan(text, voice)
            assert len(calls) == 1, text
            assert low <= cut.frames(cut.plan(engine.inputs(calls[0]))) <= high, text


def test_a_taught_voice_windows_its_first_listener_with_its_statistics(
    engine, tmp_path, caplog
) -> None:
    engine.priors = VoicePriors(tmp_path, engine.cut.kinds)
    assert engine.calls_learned("jm_kumo") == 0
    # A sentence and short replies: both kinds are taught, at the least decoding.
    sentences, replies = teaching.SENTENCES[:1], teaching.REPLIES[: TRUSTED - 1]
    assert teaching.teach(engine, "jm_kumo", sentences, replies) == TRUSTED
    # Kept on disk, where the next worker looks.
    assert VoicePriors(tmp_path, engine.cut.kinds).calls("jm_kumo") == TRUSTED
    # Taught once: a second run speaks nothing more.
    assert teaching.teach(engine, "jm_kumo", sentences, replies) == TRUSTED
    assert engine.calls_learned("jm_kumo") == TRUSTED
    # Taught, it is frozen: more texts teach it nothing, so every request sounds alike.
    assert teaching.teach(engine, "jm_kumo", sentences, teaching.REPLIES) == TRUSTED
    assert engine.priors.taught("jm_kumo")
    call = engine.plan(teaching.SENTENCES[-1], engine.voice("jm_kumo"), awaited=True)[0]
    with caplog.at_level(logging.DEBUG, logger="wyoming_kokoro.synthesis.engine"):
        assert len(list(engine.stream(call))) > 1
    assert "Windows with the voice's statistics" in caplog.text
    # Short replies are windowed too, and sound as their whole decode does: predicted
    # from sentences alone, "Hi." was 14 dB away (here about 2 dB).
    cut, voice = engine.cut, engine.voice("jm_kumo")
    for text in ("Hi.", "The door is open."):
        call = engine.plan(text, voice, awaited=True)[0]
        caplog.clear()
        # The windows as the engine decoded them, compared with the whole decode.
        logged = caplog.at_level(logging.DEBUG, logger="wyoming_kokoro.synthesis.engine")
        with recorded_windows(cut) as recorded, logged:
            list(engine.stream(call))
        assert "Windows with the voice's statistics" in caplog.text, text
        (plan,) = recorded.plans
        start = graph.SAMPLES_PER_FRAME * cut.first_frame(plan)
        joined = np.concatenate(recorded.windows)
        assert log_mel_distance(cut.whole(plan)[start:], joined) < 3.0, text


def test_a_voice_holding_no_call_as_short_as_hi_is_taught_the_replies_again(
    engine, tmp_path
) -> None:
    # A cache from before calls were kept per band of lengths: an article's sentences
    # of 80-150 frames had pushed the replies out.
    engine.priors = VoicePriors(tmp_path, engine.cut.kinds)
    cut = engine.cut
    call = engine.plan("The door is open and the lights are on.", engine.voice("jm_kumo"))[0]
    plan = cut.plan(engine.inputs(call))
    statistics, traits = cut.statistics(plan), cut.traits(plan)
    assert 70 <= traits.frames < SHORT_FRAMES
    for _ in range(len(teaching.REPLIES)):
        engine.priors.learn("jm_kumo", statistics, traits)
    replies = teaching.REPLIES[:2]
    assert teaching.teach(engine, "jm_kumo", (), replies) == len(teaching.REPLIES) + 2
    assert min(engine.lengths_learned("jm_kumo")) < 70
    assert teaching.teach(engine, "jm_kumo", (), replies) == len(teaching.REPLIES) + 2


def test_a_voice_reading_another_language_is_taught_in_english(engine, tmp_path) -> None:
    engine.priors = VoicePriors(tmp_path, engine.cut.kinds)
    # A Japanese voice's statistics follow its style more than its language: it reads
    # the English texts (bench/sound.py compares Japanese ones).
    assert teaching.teach(engine, "jf_alpha", teaching.SENTENCES[:1], teaching.REPLIES[:1]) == 2
    assert engine.priors.taught("jf_alpha")
    assert [path.name for path in tmp_path.iterdir()] == ["jf_alpha.npz"]
