"""Several clips heard in as few of the judge's 30-second windows as they fit in.

Whisper costs a whole 30 s window however short the clip: the tests' clips of a few
seconds each, heard one by one, cost a window each. Here they are laid end to end
with a silence between them, heard together, and each word is given back to
the clip its middle falls in (halfway through a silence is where one clip's time ends).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from support.judge import RATE, Judge, to_16k

WINDOW_S = 29.0  # what one window may hold, short of Whisper's 30 s
# Between clips: more than twice what Whisper's word times are off by, so a word's
# middle falls on its own side of the gap's middle. A word given to the wrong clip can
# only cost that clip a check alone (it is then a word too many or too few).
GAP_S = 0.75


class Heard(NamedTuple):
    text: str
    alone: bool  # the clip had its window to itself: heard as `Judge.heard` hears it


def heard_together(ear: Judge, clips: list[Any], rate: int, language: str) -> list[Heard | None]:
    """What `ear` hears in each clip (int16 bytes or arrays, or float arrays at `rate`);
    None for a clip longer than a window (hear it alone)."""
    audio = [to_16k(clip, rate) for clip in clips]
    said: list[Heard | None] = [None] * len(audio)
    # A window costs the same however full: longest first, each clip into the first
    # window it still fits in, they take fewer windows than in the order they came.
    windows: list[list[int]] = []
    for index in sorted(range(len(audio)), key=lambda i: -len(audio[i])):
        if len(audio[index]) > WINDOW_S * RATE:
            continue
        fits = (batch for batch in windows if _seconds(audio, [*batch, index]) <= WINDOW_S)
        batch = next(fits, None)
        if batch is None:
            windows.append([index])
        else:
            batch.append(index)
    for batch in windows:
        _hear(ear, audio, batch, language, said)
    return said


def _seconds(audio: list[np.ndarray], batch: list[int]) -> float:
    return sum(len(audio[i]) for i in batch) / RATE + GAP_S * (len(batch) - 1)


def _hear(
    ear: Judge, audio: list[np.ndarray], batch: list[int], language: str, said: list[Heard | None]
) -> None:
    gap = np.zeros(int(GAP_S * RATE), np.float32)
    parts: list[np.ndarray] = []
    ends: list[float] = []  # where each clip's time ends: halfway through the gap after it
    at = 0.0
    for index in batch:
        parts += [audio[index], gap]
        at += len(audio[index]) / RATE
        ends.append(at + GAP_S / 2)
        at += GAP_S
    words = ear.timed_words(np.concatenate(parts[:-1]), RATE, language)
    texts: list[list[str]] = [[] for _ in batch]
    for word, start, end in words:
        middle = (start + end) / 2
        slot = next((n for n, last in enumerate(ends) if middle < last), len(batch) - 1)
        texts[slot].append(word)
    for index, text in zip(batch, texts, strict=True):
        said[index] = Heard("".join(text).strip(), len(batch) == 1)
