"""How far one recording is from another: MFCC frames aligned by DTW, in numpy.

The recognizer forgives what a listener still hears: a longer pause, a fade that
eats a syllable, a flatter or louder voice. These measures do not:

- `spectral`: mean distance of MFCC frames (c0, the loudness, included) along the
  best alignment, so a gain step or a changed timbre shows;
- `warp_ms`: how far that alignment strays from the same moment in both, so a
  pause moved, lengthened or shortened shows;
- `length_ratio`: the durations.
No pytest here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RATE = 16000
_FRAME = 400  # 25 ms
_HOP = 160  # 10 ms
_MELS = 26
_COEFFS = 13
_FLOOR = 1e-2


def _mel_filters(rate: int = RATE, n_fft: int = 512, mels: int = _MELS) -> np.ndarray:
    def mel(hz: np.ndarray) -> np.ndarray:
        return 2595 * np.log10(1 + hz / 700)

    def hz(m: np.ndarray) -> np.ndarray:
        return 700 * (10 ** (m / 2595) - 1)

    edges = hz(np.linspace(mel(np.array(60.0)), mel(np.array(rate / 2 * 0.95)), mels + 2))
    bins = np.fft.rfftfreq(n_fft, 1 / rate)
    filters = np.zeros((mels, len(bins)))
    for i in range(mels):
        low, mid, high = edges[i : i + 3]
        filters[i] = np.clip(
            np.minimum((bins - low) / (mid - low), (high - bins) / (high - mid)), 0, None
        )
    return filters


def mfcc(audio: np.ndarray, rate: int = RATE) -> np.ndarray:
    """13 MFCCs per 10 ms frame of float mono audio at `rate` (16 kHz expected)."""
    if len(audio) < _FRAME:
        audio = np.pad(audio, (0, _FRAME - len(audio)))
    count = 1 + (len(audio) - _FRAME) // _HOP
    index = np.arange(_FRAME)[None, :] + _HOP * np.arange(count)[:, None]
    frames = audio[index] * np.hanning(_FRAME)
    power = np.abs(np.fft.rfft(frames, 512)) ** 2
    # A floor about 60 dB below full scale: the pauses are digital silence, and
    # rounding noise in them (a 16-bit file) must not count as a change of sound.
    energies = np.log(power @ _mel_filters(rate).T + _FLOOR)
    n = np.arange(_MELS)
    dct = np.cos(np.pi / _MELS * (n[None, :] + 0.5) * np.arange(_COEFFS)[:, None])
    return energies @ dct.T


@dataclass
class Distance:
    spectral: float  # mean MFCC distance per aligned frame pair
    worst: float  # the largest one (a change in one place: a fade, a click)
    warp_ms: float  # largest time offset between aligned frames
    length_ratio: float  # candidate's duration over the reference's


def dtw(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Frame distances along the best monotonic alignment of a and b, and the path."""
    cost = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2))
    n, m = cost.shape
    total = np.full((n + 1, m + 1), np.inf)
    total[0, 0] = 0.0
    for i in range(1, n + 1):
        # Diagonal and vertical steps for the whole row at once; horizontal ones
        # depend on the row's own left neighbour, so they run as a running min.
        row = cost[i - 1] + np.minimum(total[i - 1, 1:], total[i - 1, :-1])
        for j in range(1, m):
            row[j] = min(row[j], cost[i - 1, j] + row[j - 1])
        total[i, 1:] = row
    path, i, j = [(n - 1, m - 1)], n, m
    while (i, j) != (1, 1):
        steps = [(i - 1, j - 1), (i - 1, j), (i, j - 1)]
        i, j = min((s for s in steps if s[0] >= 1 and s[1] >= 1), key=lambda s: total[s])
        path.append((i - 1, j - 1))
    path.reverse()
    return np.array([cost[p] for p in path]), path


def distance(reference: np.ndarray, candidate: np.ndarray, rate: int = RATE) -> Distance:
    """How far `candidate` is from `reference` (float mono audio, same rate)."""
    a, b = mfcc(reference, rate), mfcc(candidate, rate)
    costs, path = dtw(a, b)
    warp = max(abs(i - j) for i, j in path) * _HOP / rate * 1000
    length = len(candidate) / max(1, len(reference))
    return Distance(float(costs.mean()), float(costs.max()), warp, length)


def log_mel_frames(reference: np.ndarray, candidate: np.ndarray, rate: int = 24000) -> np.ndarray:
    """Mean |Δ| in dB of two float clips' log-mel spectrograms (80 bands, 1024-point
    frames every 256 samples), per frame, on their common length, with bins more than
    80 dB below the loudest raised to that floor (differences in near-silence do not
    count)."""
    length = min(len(reference), len(candidate))
    filters = _mel_filters(rate, 1024, 80)

    def spectrum(audio: np.ndarray) -> np.ndarray:
        padded = np.pad(audio[:length].astype(np.float64), 512)
        count = 1 + (len(padded) - 1024) // 256
        frames = np.stack([padded[i * 256 : i * 256 + 1024] for i in range(count)])
        power = np.abs(np.fft.rfft(frames * np.hanning(1024), axis=1)) ** 2
        return 10 * np.log10(power @ filters.T + 1e-10)

    a, b = spectrum(reference), spectrum(candidate)
    floor = max(a.max(), b.max()) - 80
    return np.mean(np.abs(np.maximum(a, floor) - np.maximum(b, floor)), axis=1)


def log_mel_distance(reference: np.ndarray, candidate: np.ndarray, rate: int = 24000) -> float:
    """`log_mel_frames`, averaged over the clip."""
    return float(np.mean(log_mel_frames(reference, candidate, rate)))
