"""The server's voice taught when the model is cut (real model, real cut)."""

from __future__ import annotations

import logging

import pytest

from wyoming_kokoro.catalog.assets import Assets, resolve
from wyoming_kokoro.synthesis import split, teaching
from wyoming_kokoro.synthesis.engine import Engine, EngineOptions
from wyoming_kokoro.synthesis.prior import MIN_FRAMES, TRUSTED, VoicePriors


@pytest.fixture(scope="module")
def assets() -> Assets:
    return resolve(None, None, [])


@pytest.fixture(scope="module")
def engine(assets) -> Engine:
    split.ready(assets.model) or split.build(assets, threads=2)
    return Engine(assets, EngineOptions(threads=2))


def test_every_sentence_is_long_enough_to_teach(engine) -> None:
    voice = engine.voice("jm_kumo")
    cut = engine._split
    for text in teaching.TEXTS:
        calls = engine.plan(text, voice)
        assert len(calls) == 1, text
        assert cut.frames(cut.plan(engine._inputs(calls[0]))) >= MIN_FRAMES, text


def test_a_taught_voice_windows_its_first_listener_with_its_statistics(
    engine, tmp_path, caplog
) -> None:
    engine._priors = VoicePriors(tmp_path, engine._split.kinds)
    assert engine.calls_learned("jm_kumo") == 0
    assert teaching.teach(engine, "jm_kumo", teaching.TEXTS[:TRUSTED]) == TRUSTED
    # Kept on disk, where the next worker looks.
    assert VoicePriors(tmp_path, engine._split.kinds).calls("jm_kumo") == TRUSTED
    # Taught once: a second run speaks nothing more.
    assert teaching.teach(engine, "jm_kumo", teaching.TEXTS[:TRUSTED]) == TRUSTED
    assert engine.calls_learned("jm_kumo") == TRUSTED
    call = engine.plan(teaching.TEXTS[-1], engine.voice("jm_kumo"), awaited=True)[0]
    with caplog.at_level(logging.DEBUG, logger="wyoming_kokoro.synthesis.engine"):
        assert len(list(engine.stream(call))) > 1
    assert "Windows with the voice's statistics" in caplog.text


def test_a_voice_reading_another_language_is_not_taught_english(engine, tmp_path) -> None:
    engine._priors = VoicePriors(tmp_path, engine._split.kinds)
    # A Japanese voice reads kana as Japanese: English sentences would not match it.
    assert teaching.teach(engine, "jf_alpha", ("今日はとても良い天気ですね。",)) == 0
    assert not list(tmp_path.iterdir())
