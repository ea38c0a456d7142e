"""Equal loudness across voices and blends, a volume, and a true-peak limit.

Every voice is brought to TARGET_LUFS by a gain of its own: the voice's integrated
loudness (ITU-R BS.1770-4, measured as pyloudnorm does) is known for the embedded
voices, measured on a voice's first seconds of speech for any other voice and
cached on disk, and taken for a blend as the weighted mean of its parts' (close to
the blend measured: bench/loudness.py). A volume multiplies on top; a
limiter keeps the true peak (4x oversampled) under LIMIT_DBTP, so nothing clips.

Runs in the worker (and `kokoro-say`); numpy is imported when needed. The meter is
numpy alone: pyloudnorm pulls in scipy for its two weighting filters only.
"""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from wyoming_kokoro.catalog.voices import VoiceSpec

_LOGGER = logging.getLogger(__name__)

TARGET_LUFS = -20.0
LIMIT_DBTP = -1.0
RATE = 24_000
# A voice outside the table is measured on this much of its speech, then cached.
MEASURE_SECONDS = 10.0
_MIN_MEASURE_SECONDS = 2.0  # pyloudnorm's gating needs whole 0.4 s blocks; below, no guess
# Integrated loudness of the embedded voices as the engine speaks them (LUFS), mean of
# two English sentences each (bench/loudness.py).
KNOWN_LUFS: dict[str, float] = {
    "jf_alpha": -19.78,
    "jf_gongitsune": -20.97,
    "jf_nezumi": -20.39,
    "jf_tebukuro": -21.25,
    "jm_kumo": -20.26,
}


class Leveler:
    """The gain of each voice toward TARGET_LUFS; measures voices it does not know."""

    def __init__(self, cache: Path | None, voices_key: str) -> None:
        self._cache = cache
        self._key = voices_key  # measured loudness belongs to one voices file
        self._lufs: dict[str, float] = dict(KNOWN_LUFS)
        self._pending: dict[str, list[np.ndarray]] = {}
        self._guess: dict[str, float] = {}
        self._lufs.update(self._load())

    def _load(self) -> dict[str, float]:
        if self._cache is None:
            return {}
        try:
            data = json.loads(self._cache.read_text())
            found = data.get(self._key, {})
            return {str(k): float(v) for k, v in found.items() if math.isfinite(float(v))}
        except (OSError, ValueError, TypeError, AttributeError):
            return {}

    def _save(self, name: str, lufs: float) -> None:
        if self._cache is None:
            return
        try:
            try:
                data = json.loads(self._cache.read_text())
                if not isinstance(data, dict):
                    data = {}
            except (OSError, ValueError):
                data = {}
            data.setdefault(self._key, {})[name] = round(lufs, 2)
            self._cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = self._cache.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
            tmp.replace(self._cache)
        except OSError as err:  # a read-only cache: measured again next burst
            _LOGGER.debug("Cannot cache loudness of %s: %s", name, err)

    def loudness(self, spec: VoiceSpec) -> float | None:
        """The spec's loudness (LUFS); None while a part of it is not measured."""
        total = 0.0
        for name, weight in spec.parts:
            lufs = self._lufs.get(name, self._guess.get(name))
            if lufs is None:
                return None
            total += weight * lufs
        return total

    def gain(self, spec: VoiceSpec) -> float:
        """Linear gain that brings the spec to TARGET_LUFS (1 while unknown)."""
        lufs = self.loudness(spec)
        return 1.0 if lufs is None else 10 ** ((TARGET_LUFS - lufs) / 20)

    def observe(self, spec: VoiceSpec, pcm: np.ndarray) -> None:
        """Measure a single voice not in the table on its first seconds of speech."""
        if len(spec.parts) != 1:
            return  # a blend's parts are learnt when each speaks alone
        name = spec.parts[0][0]
        if name in self._lufs:
            return
        import numpy as np

        chunks = self._pending.setdefault(name, [])
        chunks.append(np.asarray(pcm, dtype=np.int16))
        seconds = sum(len(c) for c in chunks) / RATE
        if seconds < _MIN_MEASURE_SECONDS:
            return
        lufs = measure(np.concatenate(chunks))
        if not math.isfinite(lufs):
            return
        if seconds < MEASURE_SECONDS:
            self._guess[name] = lufs
            return
        del self._pending[name]
        self._guess.pop(name, None)
        self._lufs[name] = lufs
        _LOGGER.info("Voice %s measured at %.1f LUFS", name, lufs)
        self._save(name, lufs)


def for_voices_file(voices: Path) -> Leveler:
    """A leveler whose measurements are cached for this voices file (by name, size, time)."""
    from wyoming_kokoro.catalog.places import cache_dir

    try:
        stat = voices.stat()
        key = f"{voices.name}:{stat.st_size}:{int(stat.st_mtime)}"
    except OSError:
        key = voices.name
    return Leveler(cache_dir() / "loudness.json", key)


def measure(pcm: np.ndarray, rate: int = RATE) -> float:
    """Integrated loudness (LUFS, BS.1770-4) of int16 or float audio."""
    import numpy as np

    audio = np.asarray(pcm)
    audio = audio.astype(np.float64) / 32768.0 if audio.dtype == np.int16 else audio
    audio = np.asarray(audio, np.float64).reshape(len(audio), -1)
    if len(audio) < round(_BLOCK_SECONDS * rate):
        raise ValueError("audio must be longer than one 0.4 s gating block")
    weighted = np.stack([_k_weighted(channel, rate) for channel in audio.T])
    # Blocks of 0.4 s every 0.1 s, bounded and counted as pyloudnorm does.
    blocks = round((len(audio) / rate - _BLOCK_SECONDS) / (_BLOCK_SECONDS * 0.25)) + 1
    bounds = [
        (int(_BLOCK_SECONDS * (j * 0.25) * rate), int(_BLOCK_SECONDS * (j * 0.25 + 1) * rate))
        for j in range(blocks)
    ]
    power = np.array([[np.sum(np.square(ch[lo:hi])) for lo, hi in bounds] for ch in weighted]) / (
        _BLOCK_SECONDS * rate
    )
    gains = np.array([1.0, 1.0, 1.0, 1.41, 1.41])[: len(weighted), None]
    with np.errstate(divide="ignore"):
        block_lufs = -0.691 + 10.0 * np.log10(np.sum(gains * power, axis=0))
    gated = block_lufs >= -70.0  # absolute gate
    if not gated.any():
        return float("-inf")
    relative = -0.691 + 10.0 * np.log10(np.sum(gains[:, 0] * power[:, gated].mean(axis=1))) - 10
    gated = (block_lufs > relative) & (block_lufs > -70.0)
    if not gated.any():
        return float("-inf")
    with np.errstate(divide="ignore"):
        return float(-0.691 + 10.0 * np.log10(np.sum(gains[:, 0] * power[:, gated].mean(axis=1))))


_BLOCK_SECONDS = 0.4


def _biquad(
    kind: str, gain_db: float, q: float, fc: float, rate: int
) -> tuple[list[float], list[float]]:
    """RBJ cookbook coefficients (b, a), as pyloudnorm computes the K-weighting stages."""
    import numpy as np

    a_ = 10 ** (gain_db / 40.0)
    w0 = 2.0 * np.pi * fc / rate
    alpha, cos = np.sin(w0) / (2.0 * q), np.cos(w0)
    if kind == "high_shelf":
        root = 2 * np.sqrt(a_) * alpha
        b = [
            a_ * ((a_ + 1) + (a_ - 1) * cos + root),
            -2 * a_ * ((a_ - 1) + (a_ + 1) * cos),
            a_ * ((a_ + 1) + (a_ - 1) * cos - root),
        ]
        a = [(a_ + 1) - (a_ - 1) * cos + root, 2 * ((a_ - 1) - (a_ + 1) * cos)]
        a.append((a_ + 1) - (a_ - 1) * cos - root)
    else:  # high pass
        b = [(1 + cos) / 2, -(1 + cos), (1 + cos) / 2]
        a = [1 + alpha, -2 * cos, 1 - alpha]
    return [x / a[0] for x in b], [x / a[0] for x in a]


def _k_weighted(channel: np.ndarray, rate: int) -> np.ndarray:
    """The K-weighting filter (a high shelf, then the RLB high pass) applied in the
    frequency domain: the same causal IIR output as a direct-form filter, up to
    rounding, with room after the signal for its impulse response to die away."""
    import numpy as np

    n = len(channel)
    # The high pass's poles sit near z = 1 (38 Hz): its response needs a few thousand
    # samples to fall below float64 rounding; a second of padding is ample.
    size = 1 << int(np.ceil(np.log2(n + max(rate, 4096))))
    spectrum = np.fft.rfft(channel, size)
    for kind, gain_db, q, fc in (
        ("high_shelf", 4.0, 1 / np.sqrt(2), 1500.0),
        ("high_pass", 0.0, 0.5, 38.0),
    ):
        b, a = _biquad(kind, gain_db, q, fc, rate)
        spectrum *= np.fft.rfft(b, size) / np.fft.rfft(a, size)
    return np.fft.irfft(spectrum, size)[:n]


def true_peak(audio: np.ndarray, factor: int = 4) -> np.ndarray:
    """Per-sample true-peak magnitude (the sample's and the 3 inter-sample values after it),
    by band-limited (FFT) interpolation."""
    import numpy as np

    n = len(audio)
    if n < 2:
        return np.abs(audio)
    spectrum = np.fft.rfft(audio)
    fine = np.fft.irfft(spectrum, n * factor) * factor
    return np.abs(fine).reshape(n, factor).max(axis=1)


def apply_gain(pcm: np.ndarray, gain: float) -> np.ndarray:
    """int16 audio times `gain`, its true peak held under LIMIT_DBTP by a smooth limiter."""
    import numpy as np

    if gain == 1.0 or len(pcm) == 0:
        return pcm
    audio = pcm.astype(np.float64) * (gain / 32768.0)
    limit = 10 ** (LIMIT_DBTP / 20)
    peaks = true_peak(audio)
    if peaks.max(initial=0.0) > limit:
        audio *= limiter_gain(peaks, limit)
    return np.clip(np.round(audio * 32768.0), -32768, 32767).astype(np.int16)


def limiter_gain(peaks: np.ndarray, limit: float, width: int = 120) -> np.ndarray:
    """A gain curve never above what each sample needs, with 5 ms ramps (no clicks).

    The least gain needed within `width` samples of each one, averaged over `width`:
    every value averaged is at most the centre's need, so the peak stays under.
    """
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    need = np.minimum(1.0, limit / np.maximum(peaks, 1e-12))
    padded = np.pad(need, width, mode="edge")
    least = sliding_window_view(padded, 2 * width + 1).min(axis=1)
    kernel = np.ones(width + 1) / (width + 1)
    smooth = np.convolve(np.pad(least, width // 2, mode="edge"), kernel, mode="valid")
    return np.asarray(smooth[: len(need)])
