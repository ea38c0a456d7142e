"""Measures of Japanese and Mandarin speech the recognizer does not judge.

Whisper (tests/support/judge.py) tells whether the words are heard; these tell whether
they come at a speaking rate per mora or syllable, with few silent frames, and with
loudness peaks (syllable nuclei) at the rate of the syllables: a voice that drawls
or pauses between every word is still understood, but is not right.
"""

from __future__ import annotations

import re

import numpy as np

_FRAME = 240  # 10 ms at 24 kHz
_SMALL_KANA = set("ァィゥェォャュョヮ")


def _frame_db(pcm: np.ndarray) -> np.ndarray:
    samples = pcm.astype(np.float32) / 32768.0
    frames = samples[: len(samples) // _FRAME * _FRAME].reshape(-1, _FRAME)
    rms = np.sqrt(np.mean(frames**2, axis=1)) + 1e-9
    return 20 * np.log10(rms / rms.max())


def silence_ratio(pcm: np.ndarray, floor_db: float = -40.0) -> float:
    """Share of 10 ms frames more than 40 dB below the loudest one."""
    return float(np.mean(_frame_db(pcm) < floor_db))


def nuclei(pcm: np.ndarray) -> int:
    """Count loudness peaks at least 80 ms apart and within 25 dB of the loudest."""
    db = _frame_db(pcm)
    smooth = np.convolve(db, np.ones(5) / 5, mode="same")
    count = 0
    for i in range(4, len(smooth) - 4):
        window = smooth[i - 4 : i + 5]
        if smooth[i] == window.max() and smooth[i] > -25 and smooth[i] - window.min() > 3:
            count += 1
    return count


def morae(text: str) -> int:
    """Morae of Japanese text as OpenJTalk reads it (ー, ッ and ン count, ャュョ do not)."""
    import pyopenjtalk

    kana = pyopenjtalk.g2p(text, kana=True, use_sudachi_kanji_yomi=False)
    return sum(1 for c in kana if "ァ" <= c <= "ヴ" or c == "ー") - sum(
        1 for c in kana if c in _SMALL_KANA
    )


def syllables(text: str) -> int:
    """Mandarin syllables: one per Han character."""
    return len(re.findall(r"[\u4e00-\u9fff]", text))
