"""A planned call's audio from the cut model: whole, or window by window.

The engine plans the call on the cut model and chooses how to decode it (see
`decoding.choose`); here that choice becomes int16 audio: a whole decode teaches the
call's voice its statistics, windows are trimmed and faded so that they join sample
to sample, and the last audio ends with the pause the call's punctuation calls for.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from wyoming_kokoro.audio import silence, to_pcm16
from wyoming_kokoro.synthesis.calls import Call
from wyoming_kokoro.synthesis.decoder import CutModel
from wyoming_kokoro.synthesis.decoding import Decoding, choose
from wyoming_kokoro.synthesis.edges import Edges, trimmed_at
from wyoming_kokoro.synthesis.graph import DURATIONS, SAMPLES_PER_FRAME
from wyoming_kokoro.synthesis.prior import VoicePriors
from wyoming_kokoro.synthesis.stopping import Stops
from wyoming_kokoro.synthesis.timing import CallClock


class CutAudio:
    """Calls decoded on one cut model, stopped through its `Stops`."""

    def __init__(self, cut: CutModel, stops: Stops) -> None:
        self._cut = cut
        self._stops = stops

    def plan(
        self,
        call: Call,
        inputs: dict[str, np.ndarray],
        priors: VoicePriors | None,
        max_decode_seconds: float,
        tag: object = None,
        clock: CallClock | None = None,
    ) -> tuple[dict[str, np.ndarray], Decoding]:
        """The call's plan (its token durations told to `clock`) and how to decode it."""
        plan = self._cut.plan(inputs, tag)
        if clock is not None:
            clock.durations = plan[DURATIONS]
        return plan, choose(call, plan, self._cut, priors, max_decode_seconds)

    def whole(
        self,
        call: Call,
        plan: dict[str, np.ndarray],
        priors: VoicePriors | None,
        tag: object = None,
        clock: CallClock | None = None,
    ) -> np.ndarray:
        """The call decoded at once, trimmed, with its pause; its statistics go to
        `priors`, and `clock` learns where the trimmed audio begins."""
        audio, statistics = self._cut.decode(plan, tag)
        if priors is not None:
            priors.learn(str(call.voice), statistics, self._cut.traits(plan))
        self._stops.done(tag)  # nothing is left to let others go after
        audio, start = trimmed_at(audio)
        if clock is not None:
            clock.start = start
        return np.concatenate([to_pcm16(audio), silence(call.pause)])

    def windows(
        self,
        call: Call,
        plan: dict[str, np.ndarray],
        way: Decoding,
        tag: object = None,
        shared: bool = False,
        clock: CallClock | None = None,
    ) -> Iterator[tuple[np.ndarray, bool]]:
        """The call window by window, each with whether it is the last (see
        `Engine.stream`); a stopped window comes as an empty array."""
        pause = silence(call.pause)
        edges, fade_in = Edges(SAMPLES_PER_FRAME * self._cut.first_frame(plan)), True
        windows = self._cut.windowed(plan, way.prior, tag, shared, way.longest, waited=way.windowed)
        for window, last in windows:
            if window is None:  # stopped: others go first
                yield np.zeros(0, np.int16), False
                continue
            if last:  # a stop that comes now is for nothing of this call
                self._stops.done(tag)
            audio = edges.cut(window, last)
            if clock is not None:
                clock.start = edges.start
            if len(audio) or last:  # else all of it is held back, a quiet stretch
                # Faded where the call begins and ends only: windows join sample to sample.
                pcm = to_pcm16(audio, fade_in=fade_in, fade_out=last)
                fade_in = False
                yield (np.concatenate([pcm, pause]), True) if last else (pcm, False)
