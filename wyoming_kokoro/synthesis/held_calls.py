"""A voice's latest calls, and a new call's statistics predicted from them.

The statistics move from call to call with what the call says, and the plan, which
runs before any window, shows much of that: its features' average over the call
(`Traits`). A new call's statistics are predicted from its traits: a straight line
in 1 / frames (a short call's pad and silence weigh more), and what the line leaves,
by ridge regression on the features' averages, which comes closer to the whole
decode than the line alone or the probe row, and closer the more calls it has.
Short replies and sentences both need calls of their own length held (see `BANDS`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KEPT = 48  # the latest calls a voice's estimate is made from
# Short replies and sentences each need calls of their length held: learned from
# one kind only, the other is predicted far from its whole decode (bench/RESULTS.md, R).
SHORT_FRAMES = 150
# So the latest calls are kept per band of lengths (in frames), the band holding the
# most making room: a long article read aloud fills the bands of its lengths, and
# "Hi." is still predicted from the shortest calls the voice has said. (With two
# bands, an article's mid-length sentences took the place of the taught replies.)
BANDS = (70, 110, SHORT_FRAMES, 260)
# How far the line's slope is shrunk towards none, as if `_RIDGE_LINE` more calls
# had all been of the average length: few calls of similar lengths do not tilt it.
_RIDGE_LINE = 0.3
# The regression's ridge, per call, on standardized features: what it leaves
# unexplained goes to the line (chosen on held-out sentences; hardly sensitive to it).
_RIDGE = 1.0


@dataclass(frozen=True)
class Traits:
    """What the plan shows of a call before it is decoded."""

    frames: int
    summary: np.ndarray  # the plan's features averaged over the call, 1-D


class HeldCalls:
    """A voice's latest calls: their traits and the values their decodes were fed."""

    def __init__(self, frames: np.ndarray, summaries: np.ndarray, values: np.ndarray) -> None:
        self.frames = frames  # [n]
        self.summaries = summaries  # [n, features]
        self.values = values  # [n, every fed value flattened]
        self.learned = len(frames)  # every call ever learned, not only those kept
        self.taught = False  # frozen: `teaching.py` spoke its texts in the voice

    def add(self, traits: Traits, values: np.ndarray) -> None:
        keep: slice | np.ndarray = slice(None)
        if len(self.frames) >= KEPT:
            band = np.searchsorted(BANDS, self.frames, side="right")
            counts = np.bincount(band)
            fullest = np.isin(band, np.flatnonzero(counts == counts.max()))
            keep = np.arange(len(self.frames)) != np.flatnonzero(fullest)[0]  # its oldest
        self.frames = np.append(self.frames[keep], traits.frames)
        self.summaries = np.vstack([self.summaries[keep], traits.summary.astype(np.float32)])
        self.values = np.vstack([self.values[keep], values.astype(np.float32)])
        self.learned += 1

    def predict(self, traits: Traits) -> np.ndarray:
        """The values at these traits: the line in 1 / frames, then the regression of
        what it leaves on the summaries (never past the range of the calls held).

        Both are linear in the calls' values, so the estimate is worked out as one
        weighting of the calls held (the values, ~17,000 a call, are read once)."""
        weights = self.frames / self.frames.mean()  # a longer call says more
        share = weights / weights.sum()  # the weighted mean's coefficients
        u = 1.0 / self.frames
        du = u - share @ u
        variance = share @ du**2
        query_u = min(1.0 / traits.frames, u.max()) - share @ u  # never shorter than held
        # The line's slope as coefficients on the calls (none if all are of one length).
        if variance > 1e-9 * (share @ u) ** 2:  # else rounding, not lengths, differs
            tilt = share * du / (variance * (1 + _RIDGE_LINE / len(u)))
        else:
            tilt = np.zeros_like(du)
        x = self.summaries.astype(np.float64)
        centre = share @ x
        scale = x.std(axis=0) + 1e-6
        rows = np.sqrt(weights)[:, None] * (x - centre) / scale
        gram = rows @ rows.T + _RIDGE * len(u) * np.eye(len(u))
        query = (np.clip(traits.summary, x.min(axis=0), x.max(axis=0)) - centre) / scale
        # Ridge on what the line leaves: left = y - mean - du * slope, weighted by
        # sqrt(weights); its prediction g @ left is again a weighting of the calls.
        g = np.sqrt(weights) * np.linalg.solve(gram, rows @ query)
        c = share + query_u * tilt + g - g.sum() * share - (g @ du) * tilt
        return c @ self.values.astype(np.float64)
