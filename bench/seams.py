"""How much pitch and loudness jump where speech stops and starts again.

Measured on 60 ms of voiced audio on each side: pitch by autocorrelation
(70-400 Hz), loudness as RMS in dB. Used on the seam between two model calls and,
as the reference, on the pauses the model makes by itself inside one call.
"""

from __future__ import annotations

import math

import numpy as np

RATE = 24_000
_FRAME = RATE // 100  # 10 ms
_WINDOW = 6  # frames: 60 ms
_SILENT_DB = -40.0


def _frames_db(audio: np.ndarray) -> np.ndarray:
    usable = len(audio) // _FRAME * _FRAME
    frames = audio[:usable].astype(np.float64).reshape(-1, _FRAME) / 32768.0
    return 20 * np.log10(np.sqrt((frames**2).mean(axis=1)) + 1e-9)


def _pitch(segment: np.ndarray) -> float | None:
    x = segment.astype(np.float64) - segment.mean()
    if not x.any():
        return None
    corr = np.correlate(x, x, mode="full")[len(x) - 1 :]
    low, high = RATE // 400, RATE // 70
    lag = low + int(np.argmax(corr[low:high]))
    return RATE / lag if corr[lag] > 0.3 * corr[0] else None


def _side(audio: np.ndarray, levels: np.ndarray, at: int, before: bool) -> np.ndarray | None:
    """60 ms of voiced audio ending (before=True) or starting at frame `at`."""
    step = -1 if before else 1
    i = at - 1 if before else at
    while 0 <= i < len(levels) and levels[i] < _SILENT_DB:
        i += step
    lo, hi = (i - _WINDOW + 1, i + 1) if before else (i, i + _WINDOW)
    if lo < 0 or hi > len(levels):
        return None
    return audio[lo * _FRAME : hi * _FRAME]


def _compare(left: np.ndarray | None, right: np.ndarray | None) -> dict[str, float] | None:
    if left is None or right is None:
        return None
    p1, p2 = _pitch(left), _pitch(right)
    d1, d2 = _frames_db(left).mean(), _frames_db(right).mean()
    return {
        "semitones": abs(12 * math.log2(p2 / p1)) if p1 and p2 else float("nan"),
        "db": abs(float(d2 - d1)),
    }


def jump(head: np.ndarray, tail: np.ndarray) -> dict[str, float] | None:
    """Pitch and loudness jump between the end of `head` and the start of `tail`."""
    return _compare(
        _side(head, _frames_db(head), len(head) // _FRAME, before=True),
        _side(tail, _frames_db(tail), 0, before=False),
    )


def gap_jumps(audio: np.ndarray, min_gap_frames: int = 4) -> list[dict[str, float]]:
    """The same jump across every pause of 40 ms or more inside one call's audio."""
    levels = _frames_db(audio)
    silent = levels < _SILENT_DB
    found, i = [], 0
    while i < len(silent):
        if silent[i]:
            j = i
            while j < len(silent) and silent[j]:
                j += 1
            if j - i >= min_gap_frames and i > _WINDOW and j < len(silent) - _WINDOW:
                measured = _compare(
                    _side(audio, levels, i, before=True), _side(audio, levels, j, before=False)
                )
                if measured:
                    found.append(measured)
            i = j
        i += 1
    return found
