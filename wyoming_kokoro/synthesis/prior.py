"""What a voice's calls have taught about the generator's statistics.

Windows need the statistics of the whole call before it is decoded (see
`decoder.py`). Probe rows estimate them at the cost of a second row beside the
first window. A voice's own earlier calls estimate them better and for nothing:
every call decoded whole yields its statistics anyway. A call's statistics move
with its length (its pad and silence are a larger share of a short call), so the
engine fits, per voice, each statistic as a straight line in 1 / frames over the
voice's calls, weighted by frames, and once that is trusted decodes a listener's
first call with the line's value at the call's length, without probes. (On 24
held-out sentences against the whole decode: 1.66 dB log-mel from 8 calls, where
their plain average gives 2.16 dB and the probe row 2.43 dB.)

Kept beside the cut model, one file per voice (about 480 KB), so a worker that
exits when idle does not forget: the next burst's first call is the one a listener
waits for.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

_LOGGER = logging.getLogger(__name__)

# Calls shorter than this (2 s) are mostly the model's pad and silence: their
# statistics would pull the average away from a sentence's (measured: a prior of
# three such calls alone is worse than no prior).
MIN_FRAMES = 80
TRUSTED = 8  # calls averaged before the prior replaces the probe rows
_SAVE_UNTIL = 64  # saved after every call up to this many, then at powers of two
_FORMAT = 2
# How far the line's slope is shrunk towards none, as if `_RIDGE` more calls had all
# been of the average length: few calls of similar lengths do not tilt it wildly.
_RIDGE = 0.3


class _Fit:
    """Weighted sums for a straight line y = a + b u (u = 1 / frames), per value."""

    def __init__(self, shapes: list[tuple[int, ...]]) -> None:
        self.y = [np.zeros(shape, np.float64) for shape in shapes]  # sum of w y
        self.uy = [np.zeros(shape, np.float64) for shape in shapes]  # sum of w u y
        self.w = self.wu = self.wuu = 0.0
        self.calls = 0
        self.u_max = 0.0  # the shortest call's u

    def add(self, values: list[np.ndarray], frames: int) -> None:
        u = 1.0 / frames
        for y, uy, value in zip(self.y, self.uy, values, strict=True):
            y += frames * value
            uy += frames * u * value
        self.w, self.wu, self.wuu = self.w + frames, self.wu + frames * u, self.wuu + frames * u * u
        self.calls += 1
        self.u_max = max(self.u_max, u)

    def at(self, frames: int) -> list[np.ndarray]:
        """Each value's line at `frames`, for a call no shorter than the shortest seen
        (towards longer ones the line runs to u = 0, a bounded way)."""
        mean_u = self.wu / self.w
        variance = max(0.0, self.wuu / self.w - mean_u**2)
        u = min(1.0 / frames, self.u_max) - mean_u
        values = []
        for y, uy in zip(self.y, self.uy, strict=True):
            mean_y = y / self.w
            if variance > 0:
                slope = (uy / self.w - mean_u * mean_y) / (variance * (1 + _RIDGE / self.calls))
                mean_y = mean_y + slope * u
            values.append(mean_y)
        return values

    def arrays(self) -> dict[str, Any]:
        arrays: dict[str, Any] = {f"y{i}": v for i, v in enumerate(self.y)}
        arrays.update({f"uy{i}": v for i, v in enumerate(self.uy)})
        arrays.update(
            weights=np.array([self.w, self.wu, self.wuu]),
            calls=self.calls,
            u_max=self.u_max,
        )
        return arrays

    @staticmethod
    def read(data: Any, count: int) -> _Fit:
        fit = _Fit([])
        fit.y = [np.array(data[f"y{i}"], np.float64) for i in range(count)]
        fit.uy = [np.array(data[f"uy{i}"], np.float64) for i in range(count)]
        fit.w, fit.wu, fit.wuu = (float(v) for v in data["weights"])
        fit.calls = int(data["calls"])
        fit.u_max = float(data["u_max"])
        if fit.w <= 0 or fit.calls <= 0:
            raise ValueError("no calls in it")
        return fit


class VoicePriors:
    """Per voice, its calls' statistics as lines in 1 / frames."""

    def __init__(self, directory: Path | None, kinds: dict[str, np.dtype]) -> None:
        """`kinds`: the generator's fed values and their types (a file made for
        another graph is not used)."""
        self._directory = directory
        self._kinds = kinds
        self._names = tuple(kinds)
        self._fits: dict[str, _Fit | None] = {}

    def _path(self, voice: str) -> Path | None:
        if self._directory is None:
            return None
        return self._directory / (re.sub(r"[^A-Za-z0-9_.+-]", "_", voice) + ".npz")

    def _fit(self, voice: str) -> _Fit | None:
        if voice in self._fits:
            return self._fits[voice]
        self._fits[voice] = None
        path = self._path(voice)
        if path is None or not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["format"]) != _FORMAT:  # an upgrade: nothing is wrong
                    _LOGGER.info("Learning the statistics for %s afresh (new format)", voice)
                    return None
                if tuple(data["names"]) != self._names:
                    raise ValueError("made for another model graph")
                self._fits[voice] = _Fit.read(data, len(self._names))
        except (OSError, ValueError, KeyError) as err:  # a damaged file: learn afresh
            _LOGGER.warning("Ignoring the statistics learned for %s (%s)", voice, err)
        return self._fits[voice]

    def calls(self, voice: str) -> int:
        """How many calls the voice's fit holds."""
        fit = self._fit(voice)
        return fit.calls if fit is not None else 0

    def learn(self, voice: str, statistics: dict[str, np.ndarray], frames: int) -> None:
        """Add one whole call's statistics."""
        if frames < MIN_FRAMES:
            return
        values = [np.asarray(statistics[name], np.float64) for name in self._names]
        fit = self._fit(voice)
        if fit is None:
            fit = self._fits[voice] = _Fit([v.shape for v in values])
        fit.add(values, frames)
        if fit.calls <= _SAVE_UNTIL or (fit.calls & (fit.calls - 1)) == 0:
            self._save(voice, fit)

    def estimate(self, voice: str, frames: int) -> dict[str, np.ndarray] | None:
        """The voice's statistics for a call of `frames`; None until it holds
        `TRUSTED` calls."""
        fit = self._fit(voice)
        if fit is None or fit.calls < TRUSTED:
            return None
        estimate = {}
        for value, name in zip(fit.at(frames), self._names, strict=True):
            kind = self._kinds[name]
            if kind == np.uint8:
                value = np.clip(np.round(value), 0, 255)
            estimate[name] = np.asarray(value).astype(kind)
        return estimate

    def _save(self, voice: str, fit: _Fit) -> None:
        path = self._path(voice)
        if path is None:
            return
        arrays = fit.arrays()
        arrays.update(format=_FORMAT, names=np.array(self._names))
        aside: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Written aside and renamed: another process reading it sees a whole file.
            with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as f:
                aside = f.name
                np.savez(f, **arrays)
            os.chmod(aside, 0o644)  # as the cache's other files (temporary files are 0600)
            os.replace(aside, path)
        except OSError as err:  # a read-only cache: the average lives as long as we do
            _LOGGER.debug("Cannot keep the statistics learned for %s: %s", voice, err)
            if aside is not None:
                Path(aside).unlink(missing_ok=True)
