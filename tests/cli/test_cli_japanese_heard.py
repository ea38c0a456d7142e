"""kokoro-say in Japanese and Mandarin, heard by the judge (Whisper) on readings.

test_cli.py checks the rate and the silences of the same calls; this file asks
whether a listener hears the words, against kokoro-onnx on the same voice and text.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import soundfile


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
    listener.check(text, audio, voice=voice, language=language, rate=rate)
