"""Word times from the model's own durations.

The cut model's plan gives every token its length in frames (25 ms, at the call's
speed) before any audio is decoded, windows or not. A call's words (`Span`: which
of its tokens each written word covers, from `text/words.py`) then have their times
from the start of the call's audio: the frames before their first token (or before
the space that runs it on from the word before), less what the trim took off the
call's start.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import replace
from typing import TYPE_CHECKING

from wyoming_kokoro.audio import SAMPLE_RATE
from wyoming_kokoro.synthesis.calls import Call, Span
from wyoming_kokoro.text.words import Reading, Stretch, align
from wyoming_kokoro.timeline import WordTime

if TYPE_CHECKING:
    import numpy as np


_LOGGER = logging.getLogger(__name__)
SAMPLES_PER_FRAME = 600  # as graph.py's; not imported from there (it pulls in onnx names)
# A phoneme is heard a little before its planned frames begin: the generator's
# convolutions reach both ways (bench/word_times.py compares with the sound's onsets).
LEAD_SECONDS = 0.04


def said(phonemes: str, vocabulary: Collection[str]) -> str:
    """A call's phonemes as its tokens, one letter each (as the engine tokenizes them)."""
    return "".join(p for p in " ".join(phonemes.split()) if p in vocabulary)


def mark(calls: list[Call], readings: list[Reading], vocabulary: Collection[str]) -> list[Call]:
    """`calls` (one piece's, in order) each with the spans of its written words."""
    letters = [said(call.phonemes, vocabulary) for call in calls]
    stretches = align(readings, " ".join(letters))
    lost = [s.word for s in stretches if not s.matched]
    if lost:
        _LOGGER.warning("Words not found in the phonemes (no times): %s", " ".join(lost))
    return [
        replace(call, words=tuple(spans))
        for call, spans in zip(calls, _by_call(stretches, letters), strict=True)
    ]


def divide(call: Call, parts: list[Call], vocabulary: Collection[str]) -> list[Call]:
    """`parts` (`call` cut between words) with its spans, each in the part it is in."""
    if call.words is None:
        return parts
    letters = [said(part.phonemes, vocabulary) for part in parts]
    if " ".join(letters) != said(call.phonemes, vocabulary):  # cut inside a word
        lost = [replace(s, first=None, last=None, matched=False) for s in call.words]
        _LOGGER.warning("A call cut inside a word: its words have no times")
        return [replace(parts[0], words=tuple(lost)), *(replace(p, words=()) for p in parts[1:])]
    stretches = [Stretch(s.word, s.first, s.last, s.matched) for s in call.words]
    return [
        replace(part, words=tuple(spans))
        for part, spans in zip(parts, _by_call(stretches, letters), strict=True)
    ]


def _by_call(stretches: list[Stretch], letters: list[str]) -> list[list[Span]]:
    """Stretches over the calls' letters joined by spaces, as spans in each call. A word
    without a stretch goes with the call of the word before it."""
    bounds, begin = [], 0
    for text in letters:
        bounds.append((begin, begin + len(text) - 1))
        begin += len(text) + 1
    out: list[list[Span]] = [[] for _ in letters]
    at = 0  # the call the last placed word ended in
    for s in stretches:
        if s.first is None or s.last is None:
            out[at].append(Span(s.word, None, None, s.matched))
            continue
        inside = [i for i, (a, b) in enumerate(bounds) if a <= s.last and s.first <= b]
        for n, i in enumerate(inside):
            a, b = bounds[i]
            first, text = max(s.first, a) - a, letters[i]
            run_on = n == 0 and first >= 2 and text[first - 1] == " " and text[first - 2].isalpha()
            out[i].append(
                Span(s.word, first, min(s.last, b) - a, True, n < len(inside) - 1, run_on)
            )
        at = inside[-1] if inside else at
    return out


class CallClock:
    """What a call's word times need, as its decode learns them: the frames of its
    tokens (from the plan) and where its audio begins (from the trim)."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.durations: np.ndarray | None = None
        self.start: int | None = None  # the sample of the untrimmed call its audio begins at
        self._held: list[WordTime] | None = None  # the call's last word, until its audio ends
        self._samples = 0
        # The pause after the call, as the engine adds it (audio.silence).
        self._pause = int(call.pause * SAMPLE_RATE)

    def heard(self, samples: int, last: bool) -> list[WordTime]:
        """The words to hand on with the call's next `samples` of audio."""
        out: list[WordTime] = []
        if self._held is None and (samples or last):
            words = self.words()
            if words and self.durations is None:
                _LOGGER.warning(
                    "No word times: they need the model's cut, which this process has not "
                    "loaded (a server makes it in the background at its first start)"
                )
            out, self._held = words[:-1], words[-1:]
        self._samples += samples
        if last and self._held:
            end = max(0, self._samples - self._pause) / SAMPLE_RATE
            out += [_within(word, round(end, 3)) for word in self._held]
            self._held = []
        return out

    def words(self) -> list[WordTime]:
        """The call's words, timed from the start of its audio (no times without
        durations: a model that is not cut)."""
        spans = self.call.words or ()
        if self.durations is None or self.start is None:
            return [WordTime(s.word, None, None, s.matched, s.goes_on) for s in spans]
        import numpy as np

        # Frame edges of the tokens: the leading pad token is the first duration.
        edges = np.concatenate([[0], np.cumsum(self.durations.ravel())])
        begin = self.start

        def second(frame: int) -> float:
            seconds = (SAMPLES_PER_FRAME * frame - begin) / SAMPLE_RATE - LEAD_SECONDS
            return round(max(0.0, seconds), 3)

        out = []
        for s in spans:
            if s.first is None or s.last is None:
                out.append(WordTime(s.word, None, None, s.matched, s.goes_on))
                continue
            begins = int(edges[s.first] if s.run_on else edges[s.first + 1])  # see Span.run_on
            start, end = second(begins), second(int(edges[s.last + 2]))
            out.append(WordTime(s.word, start, end, True, s.goes_on))
        return out


def _within(word: WordTime, end: float) -> WordTime:
    """`word` ending no later than the call's audio (its last token holds the
    silence the trim took away)."""
    if word.start is None or word.end is None:
        return word
    return replace(word, start=min(word.start, end), end=min(word.end, end))
