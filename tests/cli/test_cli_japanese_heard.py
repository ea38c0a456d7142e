"""kokoro-say in Japanese and Mandarin: a speech-like rate, few silences, and the words
heard by the judge (Whisper, on readings) as well as from kokoro-onnx on the same voice
and text, all checked on one kokoro-say run a case (its own file: xdist gives out files).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import soundfile
from support.speech_checks import morae, silence_ratio, syllables

from wyoming_kokoro.text.normalize import normalize


@pytest.mark.parametrize(
    ("args", "voice", "language", "text"),
    [
        # The language follows the voice: a Japanese voice reads Japanese text.
        (["-v", "jf_alpha"], "jf_alpha", "ja", "玄関のドアが開いています。確認してください。"),
        (["-v", "jm_kumo"], "jm_kumo", "ja", "おはようございます。今日の最高気温は25度です。"),
        # No z* voice here: the default (Japanese) voice reads the Mandarin phonemes.
        (["--lang", "zh"], "jm_kumo", "zh", "客厅的灯已经关了，前门也锁好了。"),
    ],
)
def test_kokoro_say_is_heard_in_its_language(
    tmp_path: Path, listener, args: list[str], voice: str, language: str, text: str
) -> None:
    out = tmp_path / "out.wav"
    result = subprocess.run(
        [sys.executable, "-m", "kokoro_say.main", text, "-o", str(out), "-q", *args],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    audio, rate = soundfile.read(out, dtype="int16")
    count = syllables(text) if language == "zh" else morae(normalize(text, "ja"))
    # Speech-like rate (see test_japanese / test_chinese for the measured ranges).
    assert 0.1 <= len(audio) / rate / count <= 0.45, (len(audio), count)
    assert silence_ratio(audio) < 0.5
    listener.check_later(text, audio, voice=voice, language=language, rate=rate)
