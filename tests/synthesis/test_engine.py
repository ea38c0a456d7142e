"""The synthesis core with the real model: intelligibility, speed, blends, seams."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from support.audio_distance import log_mel_distance

from wyoming_kokoro.audio import SAMPLE_RATE
from wyoming_kokoro.catalog.voices import parse_voice
from wyoming_kokoro.options import MAX_CALL_TOKENS
from wyoming_kokoro.text.g2p import Phonemizer
from wyoming_kokoro.text.pieces import split_text

# Home Assistant announcements; the default voice (jm_kumo) must be understood.
ANNOUNCEMENTS = [
    "The front door is locked.",
    "Turn on the kitchen lights.",
    "It is going to rain tomorrow afternoon.",
    "The garage door has been open for ten minutes.",
    "Good morning, the temperature outside is ten degrees.",
]


def speak(engine, text: str, voice: str = "jm_kumo", speed: float = 1.0) -> np.ndarray:
    spec = engine.voice(voice)
    return np.concatenate(
        [pcm for piece in split_text(text) for pcm in engine.speak(piece, spec, speed)]
    )


@pytest.mark.slow
def test_default_voice_is_intelligible(engine, listener) -> None:
    # The set heard as one clip, both sides alike: one judge window for them all.
    clips = [speak(engine, s) for s in ANNOUNCEMENTS]
    listener.check_later(tuple(ANNOUNCEMENTS), clips, margin=0.05)


def test_output_is_deterministic_and_mono_int16(engine) -> None:
    first = speak(engine, "The back door is open.")
    assert first.dtype == np.int16 and first.ndim == 1
    assert np.array_equal(first, speak(engine, "The back door is open."))


def test_speed_changes_duration_not_words(engine, listener) -> None:
    text = "The heating is now switched off."
    normal, fast = speak(engine, text), speak(engine, text, speed=1.6)
    assert 0.5 < len(fast) / len(normal) < 0.8
    listener.check_later(text, fast, speed=1.6)
    with pytest.raises(ValueError, match="speed"):
        speak(engine, text, speed=3.0)


def test_blend_sounds_different_but_still_speaks(engine, listener) -> None:
    text = "The front door is locked."
    blend = speak(engine, text, "jm_kumo(1)+jf_gongitsune(1)")
    assert not np.array_equal(blend[: len(blend) // 2], speak(engine, text)[: len(blend) // 2])
    listener.check_later(text, blend, voice="jm_kumo(1)+jf_gongitsune(1)")


def test_seams_start_and_end_at_silence(engine) -> None:
    spec = engine.voice("jm_kumo")
    pieces = list(engine.speak("First clause here, then the second one. And a third.", spec))
    for pcm in pieces:
        assert abs(int(pcm[0])) < 300  # faded in: no click at the start
        assert np.all(pcm[-int(0.04 * SAMPLE_RATE) :] == 0)  # ends with a pause


def test_a_piece_beyond_the_model_context_is_planned_in_calls_within_it(engine) -> None:
    # One "sentence" far beyond 510 phonemes, planned at the longest call allowed:
    # every call fits the model's context and together they hold every phoneme once.
    from dataclasses import replace

    clauses = [f"room {n} is warm" for n in ("one", "two", "three", "four", "five", "six")] * 6
    text = ", ".join(clauses) + ". The last words are the garage door is open."
    spec = engine.voice("jm_kumo")
    whole = engine.phonemes(text, "en-us")
    assert len(whole) > 510
    settings = engine.settings
    try:
        engine.settings = replace(settings, max_call_tokens=int(MAX_CALL_TOKENS.high or 0))
        calls = engine.plan(text, spec, lang="en-us")
    finally:
        engine.settings = settings
    assert len(calls) >= 2
    assert max(len(c.phonemes) for c in calls) > settings.max_call_tokens  # planned longer
    assert all(len(engine.kokoro.tokenizer.tokenize(c.phonemes)) <= 510 for c in calls)
    assert "".join(c.phonemes for c in calls).replace(" ", "") == whole.replace(" ", "")


def test_lexicon_respelling_and_phonemes() -> None:
    calls: list[str] = []

    def fake_espeak(text: str, lang: str) -> str:
        calls.append(text)
        return f"<{text.strip()}>"

    phonemize = Phonemizer(
        fake_espeak, lexicon={"ha": "home assistant", "kokoro": "/kˈOkəɹO/"}, prefer_misaki=False
    )
    assert (
        phonemize("Ask HA about Kokoro now", "en-us")
        == "<Ask home assistant> <about> kˈOkəɹO <now>"
    )
    assert "HA" not in " ".join(calls)


@pytest.fixture(scope="module")
def whole_planner():
    """The planner as --decode whole builds it, without the model: a listener's first
    call cut into phrases (a worker speaking so is test_worker's
    test_without_windows_the_first_piece_speaks_its_opening_phrase_alone)."""
    from kokoro_onnx.tokenizer import Tokenizer

    from wyoming_kokoro.settings import EngineSettings
    from wyoming_kokoro.synthesis.planner import Planner

    return Planner(EngineSettings(decode="whole"), Tokenizer(), {}, windows=False)


def test_with_windows_an_awaited_piece_cuts_nothing(engine) -> None:
    # Decoding in windows, a listener's first call is the whole sentence, in windows.
    spec = engine.voice("jm_kumo")
    text = "The weather today is sunny and warm with a light breeze."
    quick = engine.plan(text, spec, lang="en-us", awaited=True)
    assert [c.phonemes for c in quick] == [c.phonemes for c in engine.plan(text, spec)]
    assert quick[0].windowed


def test_an_awaited_piece_plans_its_opening_phrase_as_its_own_call(whole_planner) -> None:
    spec = parse_voice("jm_kumo", ("jm_kumo",))
    text = "The weather today is sunny and warm with a light breeze."
    quick = whole_planner.plan(text, spec, lang="en-us", awaited=True)
    assert [c.phonemes for c in quick] == [
        whole_planner.phonemes("The weather today is sunny", "en-us"),
        whole_planner.phonemes("and warm with a light breeze.", "en-us"),
    ]
    assert len(whole_planner.plan(text, spec, lang="en-us")) == 1
    # A short sentence with no place to breathe is one call either way.
    assert len(whole_planner.plan("Someone is at the front door.", spec, awaited=True)) == 1


def test_the_direct_baseline_is_the_whole_model(engine, direct) -> None:
    # Every audio test is judged against kokoro-onnx itself: that must be real audio
    # from the whole graph, the same the engine decodes for the same phonemes.
    spec = engine.voice("jm_kumo")
    call = engine.plan("The kitchen light is on.", spec)[0]
    kokoro = direct.kokoro()
    audio, rate = kokoro.create(
        call.phonemes, voice=engine.style(spec), is_phonemes=True, trim=True
    )
    assert rate == 24000 and audio.ndim == 1
    ours = engine.run(call).astype(np.float32) / 32768
    assert log_mel_distance(audio, ours[: len(audio)]) < 0.5
    assert abs(len(ours) - len(audio)) < 0.5 * 24000  # ours adds only the sentence pause


def test_the_engine_refuses_whole_graph_calls_it_cannot_make(engine) -> None:
    # With the cut model loaded, kokoro-onnx in the engine holds the plan part only.
    if engine.cut is None:
        pytest.skip("the cut model is not loaded")
    with pytest.raises(RuntimeError, match="whole graph is not loaded"):
        engine.kokoro.create("Hi.", voice="jm_kumo", lang="en-us")


def test_a_shortened_call_keeps_what_its_listener_has_in_hand_on_its_first_part(engine) -> None:
    voice = engine.voice("jm_kumo")
    (call,) = engine.plan("The living room lights are on, and the door is locked.", voice)
    parts = engine.shorten(replace(call, in_hand=1.5), 20)
    assert len(parts) > 1 and "".join(p.phonemes for p in parts).replace(" ", "") == (
        call.phonemes.replace(" ", "")
    )
    assert [p.in_hand for p in parts] == [1.5] + [None] * (len(parts) - 1)
