"""Word times in the time line of an utterance's audio, as every front end hands them on.

The engine gives each model call's words with times from the start of that call's
audio; the worker, the server and kokoro-say place them where that audio falls in
what the client receives (after lead silence, pauses, breaks and earlier calls). No
numpy here: the server imports this module.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class WordTime:
    """A written word and when it is said, in seconds; no times if it has none (not
    spoken, such as a dash, or `matched` False: spoken but not found in the phonemes)."""

    word: str
    start: float | None
    end: float | None
    matched: bool = True
    # The word goes on in the next call's audio (a long piece cut inside it): the
    # next call's first word is the rest of it.
    goes_on: bool = False

    def shifted(self, seconds: float) -> WordTime:
        if self.start is None or self.end is None:
            return self
        # In milliseconds, as the engine gives them: the sum of a time and an offset
        # in samples is float noise past them (0.29000000000000004).
        return replace(self, start=round(self.start + seconds, 3), end=round(self.end + seconds, 3))

    def to_list(self) -> list[Any]:
        """As it crosses the worker's pipe (JSON)."""
        return [self.word, self.start, self.end, self.matched, self.goes_on]

    @staticmethod
    def from_list(data: list[Any]) -> WordTime:
        word, start, end, matched, goes_on = data
        return WordTime(str(word), _seconds(start), _seconds(end), bool(matched), bool(goes_on))


def _seconds(value: Any) -> float | None:
    return None if value is None else float(value)


class Timeline:
    """Words of successive stretches of audio, placed in one time line: `add` each
    stretch's words with where the stretch begins, read the finished words back."""

    def __init__(self) -> None:
        self.words: list[WordTime] = []
        self._open: WordTime | None = None  # a word that goes on in the next call

    def add(self, words: list[WordTime], offset: float) -> list[WordTime]:
        """Place `words` (times from the start of a stretch of audio that begins
        `offset` seconds into the time line); returns the words now complete."""
        done: list[WordTime] = []
        for word in words:
            placed = word.shifted(offset)
            if self._open is not None:
                placed = _joined(self._open, placed)
                self._open = None
            if placed.goes_on:
                self._open = placed
            else:
                done.append(placed)
        self.words.extend(done)
        return done

    def close(self) -> list[WordTime]:
        """The end of the audio: a word still open is complete as it is."""
        if self._open is None:
            return []
        last, self._open = replace(self._open, goes_on=False), None
        self.words.append(last)
        return [last]

    @property
    def unmatched(self) -> list[str]:
        """The words that are spoken but could not be timed."""
        return [w.word for w in self.words if not w.matched]


def _joined(head: WordTime, rest: WordTime) -> WordTime:
    starts = [t for t in (head.start, rest.start) if t is not None]
    ends = [t for t in (head.end, rest.end) if t is not None]
    return WordTime(
        head.word,
        min(starts) if starts else None,
        max(ends) if ends else None,
        head.matched and rest.matched,
        rest.goes_on,
    )
