"""Ordinary text that silenced an answer, or made it minutes long, end to end through
kokoro-say (the doors share its text path: `SentenceStream`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import soundfile


def say(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "kokoro_say.main", *args],
        capture_output=True,
        timeout=600,
        check=False,
    )


def _seconds(tmp_path: Path, text: str, name: str, *args: str) -> float:
    out = tmp_path / f"{name}.wav"
    result = say("-o", str(out), "-q", *args, text)
    assert result.returncode == 0, result.stderr
    return float(soundfile.info(out).duration)


@pytest.mark.model
def test_a_line_starting_with_backticks_keeps_the_answer(tmp_path: Path, listener) -> None:
    # The first line opened a "code block" that never closed: nothing was said.
    text = "```ls -la``` shows all files.\nThe answer is four, and that is all."
    out = tmp_path / "fence.wav"
    result = say("-o", str(out), "-q", text)
    assert result.returncode == 0, result.stderr
    audio, _ = soundfile.read(out, dtype="int16")
    listener.check_later("ls -la shows all files. The answer is four, and that is all.", audio)


@pytest.mark.model
def test_a_run_of_twenty_thousand_digits_is_read_as_its_head(tmp_path: Path) -> None:
    # Cut into pieces before its cut, it was read as some 1,700 nines: minutes of audio.
    # Both at the fastest speed, in half the audio: minutes would still be minutes.
    fast = ("--speed", "2")
    run = _seconds(tmp_path, "The code is " + "9" * 20_000 + " and that is all.", "run", *fast)
    head = _seconds(tmp_path, "The code is " + "9" * 20 + " and that is all.", "head", *fast)
    assert run < 3 * head


@pytest.mark.model
@pytest.mark.parametrize(
    ("written", "plain"),
    [
        ("𝕳𝖊𝖑𝖑𝖔 there, my friend.", "Hello there, my friend."),
        ("ｆｕｌｌｗｉｄｔｈ letters are fine.", "fullwidth letters are fine."),
        ("Press <Ctrl> and <Alt> keys.", "Press Ctrl and Alt keys."),
    ],
)
def test_styled_letters_and_bracketed_keys_take_as_long_as_plain_ones(
    tmp_path: Path, written: str, plain: str
) -> None:
    # Styled letters were spelled out one by one; "<Ctrl>" was taken for a tag and dropped.
    ratio = _seconds(tmp_path, written, "written") / _seconds(tmp_path, plain, "plain")
    assert 0.8 < ratio < 1.25
