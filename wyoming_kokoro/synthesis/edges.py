"""Where a call's audio begins and ends: the model's silence trimmed away.

A whole call is trimmed as kokoro-onnx trims it: the stretches at either end 60 dB
under the call's loudest moment go, judged in steps of `HOP` samples counted from
the call's first sample. A call decoded in windows is trimmed the same way as its
windows come (`Edges`): the steps are counted from the call's first sample wherever
a window begins, and a window's quiet end waits for the next window, so the call
begins and ends where its whole decode would, however it was cut.
"""

from __future__ import annotations

import numpy as np

from wyoming_kokoro.audio import FADE_SAMPLES

HOP = 512  # the trim judges silence in steps of this many samples (its default)
_FRAME = 2048  # ... over frames this long, centred on the steps


def trimmed(audio: np.ndarray) -> np.ndarray:
    """A whole call's audio without the silence at its ends."""
    return trimmed_at(audio)[0]


def trimmed_at(audio: np.ndarray) -> tuple[np.ndarray, int]:
    """`trimmed`, and the sample of `audio` the trimmed audio begins at."""
    from kokoro_onnx.trim import trim

    kept, (begin, _) = trim(audio, hop_length=HOP)
    return kept, int(begin)


class Edges:
    """Trims one call's windows, in order, as its whole decode is trimmed.

    Each window's quiet end is held back until a later window shows whether the
    call speaks again after it: the call's trailing silence can begin in any window,
    not only the last.
    """

    def __init__(self, position: int) -> None:
        """`position`: where the first window begins in the call's audio, in samples."""
        self._position = position
        # The call's audio from a step of the trim on, and how much of it was given
        # (what is kept before that gives the trim's frames their whole width).
        self._audio = np.zeros(0, np.float32)
        self._given = -1  # the onset is not found yet
        self._loudest = 0.0  # the call's loudest moment so far: "silence" is relative to it
        self.start: int | None = None  # the call's sample its first given sample is

    def cut(self, audio: np.ndarray, last: bool) -> np.ndarray:
        """What can be given of the call after its next window: its leading silence
        and (once `last`) its trailing silence trimmed, a quiet end held back."""
        from kokoro_onnx.trim import rms, trim

        if self._given < 0:  # the steps of the trim begin on the call's first sample
            audio = audio[-self._position % HOP :]
        self._audio = np.concatenate([self._audio, audio])
        self._loudest = max(self._loudest, float(np.max(rms(y=self._audio), initial=0.0)))
        begin, end = (int(i) for i in trim(self._audio, ref=self._loudest, hop_length=HOP)[1])
        if self._given < 0:  # against the first window's loudest moment: the rest is to come
            self._given = min(begin, end)
            self.start = self._position + -self._position % HOP + self._given
        if not last:  # the trim's frames this close to the end see padding, not audio;
            # and the call's fade-out needs audio left to fade
            end = min(end - FADE_SAMPLES, len(self._audio) - _FRAME // 2)
        end = max(end, self._given)
        given, self._given = self._audio[self._given : end], end
        drop = max(0, end - _FRAME) // HOP * HOP  # on the steps, a whole frame kept before
        self._audio, self._given = self._audio[drop:], self._given - drop
        return given
