"""How long a call's windows are: small first, then as long as the clock allows.

The first window is small so the first audio comes early. Each later one is as
long as can be decoded before the audio in hand has played, so a listener never
waits between two, and no longer than `longest` frames: each decodes its context
once, so longer windows cost less in all, and a newcomer does not wait for one to
end (it is stopped, and decoded again later). What a window costs to decode here
is learned from the generator's runs (`Clock`): it depends on the CPU and on
whatever else runs beside. A worker that exits when idle leaves it to the next one
(`remember`, `recall`): else each burst's first call, the one a listener waits for,
would be sized blind, and on a CPU slower than about 12 ms a frame its second window
would come late (measured at 16 ms a frame: 0.45 s of silence after the first 0.3 s
of audio).
"""

from __future__ import annotations

import json
import logging
import math
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wyoming_kokoro.synthesis.graph import SAMPLES_PER_FRAME
from wyoming_kokoro.synthesis.keeping import keep

_LOGGER = logging.getLogger(__name__)

LEAD_FRAMES = 4  # decoded before the end of the leading pad (0.1 s)
SECONDS_PER_FRAME = SAMPLES_PER_FRAME / 24_000
MARGIN = 0.8  # of the audio in hand, what a window's decoding may take
_FORMAT = 1  # of the file `Clock.remember` writes
_PLAUSIBLE = (0.0005, 1.0)  # seconds a frame: anything else kept is not this generator's


@dataclass(frozen=True)
class Windows:
    """How a call is cut into windows, in frames of 25 ms."""

    first: int = 16  # the first window: the first audio a listener hears
    later: int = 48  # every later window when they are not paced (or cannot keep up)
    # The longest a paced later window grows to (its activations are held at once:
    # about what a whole call of 120 tokens holds). Against 48: a sentence in
    # windows costs less over its whole decode (bench/RESULTS.md, R).
    longest: int = 256
    # Decoded on each side of a window and dropped. What the generator makes of a
    # frame hardly depends on frames further than this (bench/RESULTS.md, R).
    context: int = 5
    # Decoded before the first window: the leading pad's frames, whose silence weighs
    # less, so fewer are needed there.
    lead_context: int = 4
    probes: int = 1  # rows decoded with the first window, for the statistics
    snippets: int = 7  # pieces each probe row is made of, spread over the call
    # Later windows sized to what can be decoded before the audio in hand has played
    # (up to `longest`); off: every later window is `later` frames.
    paced: bool = True


class Clock:
    """The generator's latest runs, timed: what a frame costs to decode here.

    The median of the latest windows' cost per frame: a run that another process
    stalled does not make every window after it short, nor a lucky one long. (Runs
    of 24 to 60 frames cost the same per frame within the noise, 10-11 ms on a
    2-core VM: there is no fixed part per run worth fitting.) Whole calls and
    batches stand in only until a window has run: per frame they cost a little more
    or less than windows depending on the CPU (12-13 against 10-11 ms on one VM,
    14.6 against 15-17 ms on a slower one).
    """

    def __init__(self, keep: int = 15) -> None:
        self._windows: deque[float] = deque(maxlen=keep)
        self._others: deque[float] = deque(maxlen=keep)

    def timed(self, frames: int, seconds: float, window: bool = True) -> None:
        if frames > 0:
            (self._windows if window else self._others).append(seconds / frames)

    def per_frame(self) -> float | None:
        runs = self._windows or self._others
        return float(np.median(runs)) if runs else None

    def remember(self, path: Path) -> None:
        """Keep what a frame costs here in `path`, for the next process's `recall`."""
        costs = {
            kind: float(np.median(runs)) if runs else None
            for kind, runs in (("window", self._windows), ("whole", self._others))
        }
        if costs["window"] is None and costs["whole"] is None:
            return
        keep(path, json.dumps({"format": _FORMAT, **costs}).encode(), "the generator's cost")

    def recall(self, path: Path) -> None:
        """Start from the costs `remember` kept, each as one run: the first windows of
        this process soon outweigh them if the machine is busier or quieter now."""
        try:
            costs = json.loads(path.read_text())
            if costs.get("format") != _FORMAT:
                return
        except FileNotFoundError:
            return
        except (OSError, ValueError, AttributeError) as err:
            _LOGGER.warning("Ignoring the generator's cost kept in %s (%s)", path, err)
            return
        for kind, runs in (("window", self._windows), ("whole", self._others)):
            cost = costs.get(kind)
            if isinstance(cost, float) and _PLAUSIBLE[0] < cost < _PLAUSIBLE[1]:
                runs.append(cost)


def schedule(
    w: Windows, per_frame: float | None, frames: int, start: int, end: int
) -> list[tuple[int, int]]:
    """The windows after the first (which ends at `end`), [a, b) in frames. Paced,
    each is as long as can be decoded (at `per_frame` seconds a frame) before the
    audio in hand has played,
    up to `longest` frames, but never so short that its context makes it slower than
    the audio it gives (see `_shortest`); a CPU too slow to keep up at all gets
    `later` throughout. Decided before the second window, so a call resumed after
    others had the model goes on as it would have."""
    ahead = (end - start - LEAD_FRAMES) * SECONDS_PER_FRAME  # the onset is trimmed
    shortest = _shortest(w, per_frame)
    spans = []
    while end < frames:
        size = w.later
        if per_frame and shortest < w.later:
            fits = int(MARGIN * ahead / per_frame) - 2 * w.context
            size = max(shortest, min(w.longest, fits))
        a, end = end, min(frames, end + size)
        if frames - end < w.first:
            end = frames  # no crumb of a last window
        spans.append((a, end))
        decoded = min(frames, end + w.context) - max(0, a - w.context)
        ahead += (end - a) * SECONDS_PER_FRAME - decoded * (per_frame or 0.0)
    return spans


def _shortest(w: Windows, per_frame: float | None) -> int:
    """The shortest later window worth decoding: twice the size at which its context
    makes it as slow as the audio it gives, and at least `first` frames; `later`
    when the CPU cannot keep up at all (or pacing is off)."""
    if not w.paced or per_frame is None or not 0 < per_frame < SECONDS_PER_FRAME:
        return w.later
    even = 2 * w.context * per_frame / (SECONDS_PER_FRAME - per_frame)
    return min(w.later, max(w.first, int(2 * even) + 1))


def first_size(w: Windows, per_frame: float | None) -> int:
    """The first window: `first` frames, or as many more as its audio needs to last
    while the shortest later window is decoded (at the cost known from earlier
    runs); else a listener would hear a gap right after it."""
    shortest = _shortest(w, per_frame)
    if per_frame is None or shortest >= w.later:
        return w.first
    needed = (shortest + 2 * w.context) * per_frame / (MARGIN * SECONDS_PER_FRAME)
    return max(w.first, math.ceil(needed) + LEAD_FRAMES)
