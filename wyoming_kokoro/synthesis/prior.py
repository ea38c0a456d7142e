"""What a voice's calls have taught about the generator's statistics.

Windows need the statistics of the whole call before it is decoded (see
`decoder.py`). Probe rows estimate them at the cost of a second row beside the
first window. A voice's own earlier calls estimate them better and for nothing:
every call decoded whole yields its statistics anyway, and their average over a
voice's calls, weighted by frames, is closer to a new call's than the probe rows
are once it holds a few calls. So the engine learns one average per voice and,
once it is trusted, decodes a listener's first call without probes.

Kept beside the cut model, one file per voice (about 240 KB), so a worker that
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
_FORMAT = 1


class VoicePriors:
    """Per voice, the frame-weighted average of the statistics of its calls."""

    def __init__(self, directory: Path | None, kinds: dict[str, np.dtype]) -> None:
        """`kinds`: the generator's fed values and their types (a file made for
        another graph is not used)."""
        self._directory = directory
        self._kinds = kinds
        self._names = tuple(kinds)
        self._sums: dict[str, list[np.ndarray]] = {}
        self._weights: dict[str, tuple[float, int]] = {}  # frames, calls

    def _path(self, voice: str) -> Path | None:
        if self._directory is None:
            return None
        return self._directory / (re.sub(r"[^A-Za-z0-9_.+-]", "_", voice) + ".npz")

    def _load(self, voice: str) -> None:
        if voice in self._sums:
            return
        self._sums[voice], self._weights[voice] = [], (0.0, 0)
        path = self._path(voice)
        if path is None or not path.is_file():
            return
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["format"]) != _FORMAT or tuple(data["names"]) != self._names:
                    raise ValueError("made for another model graph")
                sums = [np.array(data[f"s{i}"], np.float64) for i in range(len(self._names))]
                weights = (float(data["frames"]), int(data["calls"]))
        except (OSError, ValueError, KeyError) as err:  # a damaged file: learn afresh
            _LOGGER.warning("Ignoring the statistics learned for %s (%s)", voice, err)
            return
        self._sums[voice], self._weights[voice] = sums, weights

    def calls(self, voice: str) -> int:
        """How many calls the voice's average holds."""
        self._load(voice)
        return self._weights[voice][1]

    def learn(self, voice: str, statistics: dict[str, np.ndarray], frames: int) -> None:
        """Add one whole call's statistics."""
        if frames < MIN_FRAMES:
            return
        self._load(voice)
        sums = self._sums[voice]
        if not sums:
            sums[:] = [np.zeros(np.shape(statistics[name]), np.float64) for name in self._names]
        for total, name in zip(sums, self._names, strict=True):
            total += frames * np.asarray(statistics[name], np.float64)
        weight, calls = self._weights[voice]
        self._weights[voice] = (weight + frames, calls + 1)
        if calls + 1 <= _SAVE_UNTIL or ((calls + 1) & calls) == 0:
            self._save(voice)

    def estimate(self, voice: str) -> dict[str, np.ndarray] | None:
        """The voice's average statistics; None until it holds `TRUSTED` calls."""
        if self.calls(voice) < TRUSTED:
            return None
        weight = self._weights[voice][0]
        values = {}
        for total, name in zip(self._sums[voice], self._names, strict=True):
            mean, kind = total / weight, self._kinds[name]
            values[name] = np.asarray(np.round(mean) if kind == np.uint8 else mean).astype(kind)
        return values

    def _save(self, voice: str) -> None:
        path = self._path(voice)
        if path is None:
            return
        frames, calls = self._weights[voice]
        arrays: dict[str, Any] = {f"s{i}": v for i, v in enumerate(self._sums[voice])}
        arrays.update(format=_FORMAT, names=np.array(self._names), frames=frames, calls=calls)
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
