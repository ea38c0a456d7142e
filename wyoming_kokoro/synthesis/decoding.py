"""How one call is decoded on the cut model: whole, or in windows, and with what.

The choice the engine makes for each call from its plan, its listener and what its
voice has taught; the engine then decodes as chosen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wyoming_kokoro.synthesis.calls import Call
from wyoming_kokoro.synthesis.decoder import CutModel
from wyoming_kokoro.synthesis.held_calls import SHORT_FRAMES
from wyoming_kokoro.synthesis.pacing import SECONDS_PER_FRAME
from wyoming_kokoro.synthesis.prior import VoicePriors

# Windows bounded for memory are never shorter than this (1 s): their context, decoded
# twice, would cost more than the memory saved is worth.
_SHORTEST_BOUND = 40
_LIKE_CALLS = 4  # calls at least as long (or of a sentence's length) a voice has taught


@dataclass(frozen=True)
class Decoding:
    """What `choose` decided for one call."""

    whole: bool  # decoded at once, and it teaches its voice
    windowed: bool  # a listener waits for it (or it would come late): paced windows
    longest: int  # the most frames one window may decode (0: any number)
    prior: dict[str, np.ndarray] | None  # the statistics windows use (None: probe rows)


def choose(
    call: Call,
    plan: dict[str, np.ndarray],
    cut: CutModel,
    priors: VoicePriors | None,
    max_decode_seconds: float,
) -> Decoding:
    """Whole or in windows: windows for a listener waiting (or one whole call would keep
    waiting too long) or for memory (`max_decode_seconds`), as long as the voice has
    statistics to decode them with."""
    windowed = call.windowed or cut.late(plan, call.in_hand)
    longest = _longest(call, plan, cut, priors, windowed, max_decode_seconds)
    prior = None
    if (windowed or longest) and priors is not None:
        prior = priors.estimate(str(call.voice), cut.traits(plan))
    # A voice without statistics yet speaks whole: as itself, the same on every
    # request, and the call teaches it (probe rows only under a memory bound).
    unknown = windowed and prior is None and not longest and priors is not None
    whole = unknown or (not windowed and not (longest and prior is not None))
    if windowed and cut.fits_one_window(plan, prior is not None):
        whole = True
    return Decoding(whole, windowed, longest, prior)


def _longest(
    call: Call,
    plan: dict[str, np.ndarray],
    cut: CutModel,
    priors: VoicePriors | None,
    windowed: bool,
    seconds: float,
) -> int:
    """The most frames of `call` one window may decode for memory, or 0 if any number
    may (or, unless it is `windowed` anyway, it decodes whole)."""
    if not seconds:
        return 0
    longest = max(_SHORTEST_BOUND, round(seconds / SECONDS_PER_FRAME))
    frames = cut.frames(plan) - cut.first_frame(plan)  # windows skip the pad
    if frames <= longest:
        return 0
    if windowed or priors is None:
        return longest
    # Decoded whole (and taught) until the voice has said calls about as long: a
    # sentence's statistics predicted from short replies are far off, and a call
    # cut for memory teaches nothing.
    like = min(frames, SHORT_FRAMES)
    held = priors.lengths(str(call.voice))
    return longest if sum(length >= like for length in held) >= _LIKE_CALLS else 0
