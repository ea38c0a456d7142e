"""Word times from the model's durations (synthesis/timing.py) through the ways a call
is decoded: windows or whole, a piece cut into several calls, another speed.

Every word must start where a forced aligner (support/aligner.py, independent of the
model) hears it start in the same audio, whichever way the audio is made; the same
words keep their times between windows and the whole decode, and every time falls
inside the audio it describes. bench/word_times.py measures the same on more
sentences, and against Whisper's word timestamps.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.aligner import Aligner, against_aligner

from wyoming_kokoro.synthesis.engine import Engine
from wyoming_kokoro.timeline import Timeline, WordTime

TEXT = (
    "The living room lights are on, the heating is set to 21°C, "
    "and the front door was locked at 10:45 pm."
)
RATE = 24000
FRAME = 0.025
# How far a word's start may lie from the aligner's, and the median of them all: the
# aligner's own frames are 10 ms, and a word's first sound is not one instant.
NEAR = 0.06
NEAR_MEDIAN = 0.03


def speak(
    engine: Engine, text: str, speed: float = 1.0, awaited: bool = False, limit: int = 0
) -> tuple[np.ndarray, list[WordTime], list[tuple[float, float]]]:
    """Audio, word times and where each call's audio lies, one piece."""
    voice = engine.voice("jm_kumo")
    calls = engine.plan(text, voice, speed, "en-us", awaited=awaited, words=True)
    if limit:
        calls = [part for call in calls for part in engine.shorten(call, limit)]
    line, audio, at, bounds = Timeline(), [], 0, []
    for call in calls:
        begin = at
        for pcm, _, words in engine.timed(call):
            line.add(words, begin / RATE)
            audio.append(pcm)
            at += len(pcm)
        bounds.append((begin / RATE, at / RATE))
    line.close()
    return np.concatenate(audio), line.words, bounds


@pytest.fixture(scope="module")
def aligner() -> Aligner:
    return Aligner()


def from_aligned(aligner: Aligner, audio: np.ndarray, words: list[WordTime]) -> list[float]:
    """Each word's start less where the forced aligner places its first spoken word."""
    aligned = aligner.starts(audio, TEXT)
    assert aligned is not None, "a word of TEXT is not in the aligner's dictionary"
    running, paused = against_aligner([(w.word, w.start) for w in words], aligned)
    assert len(running) + len(paused) == len(words), (words, aligned)
    return running + paused


def assert_near(differences: list[float]) -> None:
    assert max(map(abs, differences)) <= NEAR, differences
    assert float(np.median(np.abs(differences))) <= NEAR_MEDIAN, differences


@pytest.fixture(scope="module")
def whole(engine: Engine) -> tuple[np.ndarray, list[WordTime], list[tuple[float, float]]]:
    return speak(engine, TEXT)


def test_every_written_word_has_a_time_in_order(whole) -> None:
    audio, words, _ = whole
    assert [w.word for w in words] == TEXT.split()
    assert all(w.matched and w.start is not None and w.end is not None for w in words)
    starts = [w.start for w in words]
    assert starts == sorted(starts) and words[0].start < 0.2  # the trim took the lead pad
    assert all(w.start <= w.end for w in words)  # type: ignore[operator]
    assert words[-1].end <= len(audio) / RATE  # type: ignore[operator]


def test_every_word_starts_where_a_forced_aligner_hears_it(aligner: Aligner, whole) -> None:
    audio, words, _ = whole
    assert_near(from_aligned(aligner, audio, words))


def test_windows_give_the_whole_decodes_times_within_a_frame(engine: Engine, whole) -> None:
    windowed = speak(engine, TEXT, awaited=True)[1]
    for a, b in zip(whole[1], windowed, strict=True):
        assert abs(a.start - b.start) <= FRAME and abs(a.end - b.end) <= FRAME, (a, b)


def test_a_piece_cut_into_calls_keeps_each_word_in_its_calls_audio(
    engine: Engine, aligner: Aligner
) -> None:
    audio, words, bounds = speak(engine, TEXT, limit=40)
    assert len(bounds) >= 3
    assert [w.word for w in words] == TEXT.split()
    for word in words:
        assert word.start is not None and word.end is not None
        inside = [b for b in bounds if b[0] <= word.start <= b[1]]
        assert inside and word.end <= inside[0][1] + FRAME, (word, bounds)
    assert_near(from_aligned(aligner, audio, words))


def test_a_faster_speed_gives_earlier_times_in_proportion(
    engine: Engine, aligner: Aligner, whole
) -> None:
    audio, fast, _ = speak(engine, TEXT, speed=1.5)
    slow = whole[1]
    ratio = (fast[-1].start - fast[0].start) / (slow[-1].start - slow[0].start)  # type: ignore[operator]
    assert 1 / 1.5 - 0.08 < ratio < 1 / 1.5 + 0.08
    assert fast[-1].end <= len(audio) / RATE  # type: ignore[operator]
    assert_near(from_aligned(aligner, audio, fast))


@pytest.mark.parametrize(
    ("text", "lang", "voice", "expected"),
    [
        ("今日は10:30に3人で行きます。", "ja", "jf_alpha", ["今日", "は", "10:30", "に", "3"]),
        ("我早上7点买了3个苹果。", "zh", "jf_alpha", ["我", "早上"]),
    ],
)
def test_japanese_and_chinese_words_are_the_written_characters_each_reading_covers(
    engine: Engine, text: str, lang: str, voice: str, expected: list[str]
) -> None:
    calls = engine.plan(text, engine.voice(voice), 1.0, lang, words=True)
    line = Timeline()
    for call in calls:
        for _, _, words in engine.timed(call):
            line.add(words, 0.0)
    words = line.words
    assert "".join(w.word for w in words) == text  # every character, once, in order
    assert [w.word for w in words[: len(expected)]] == expected
    assert all(w.matched and w.start is not None for w in words)
    assert [w.start for w in words] == sorted(w.start for w in words)  # type: ignore[type-var]
