"""Sentences into the pieces they are said in: a short one joined to the next, a long one cut."""

from __future__ import annotations

import re

from wyoming_kokoro.text.clauses import MIN_PIECE_CHARS, WIDE, piece_length, split_long
from wyoming_kokoro.text.long_runs import bound_runs
from wyoming_kokoro.text.phrases import opening_phrases

_ENDS_SENTENCE = re.compile(r"[.!?…。！？：；:;।॥]['\")\]」』）]*$")


class Joiner:
    """Takes sentences one by one and gives the pieces that are ready to be said.

    A sentence too short to sound natural alone waits for its neighbour; one too
    long for a call is cut at clauses (`split_long`).
    """

    def __init__(self) -> None:
        self._held = ""  # a short sentence waiting for a neighbour
        self._head_said = 0  # characters of a sentence's head said; its rest is next

    @property
    def holding(self) -> bool:
        """A short sentence is waiting for its neighbour."""
        return bool(self._held)

    def head_said(self, chars: int) -> None:
        """The opening phrase of a sentence, `chars` long, was just said alone."""
        self._head_said = chars

    def pieces(self, sentence: str, boundary: bool, force: bool) -> list[str]:
        """The pieces `sentence` completes: `boundary` ends it as a sentence (a heading,
        a list item), `force` gives a short one without waiting."""
        if sentence and not re.search(r"\w", sentence):
            sentence = ""  # only punctuation or symbols: nothing to say
        sentence = bound_runs(sentence).strip()  # before split_long could cut a run
        if boundary and sentence and not _ENDS_SENTENCE.search(sentence):
            # Headings and list items: pause as after a sentence.
            sentence += "。" if WIDE.search(sentence[-1]) else "."
        text = f"{self._held} {sentence}".strip() if self._held else sentence
        self._held = ""
        if not text:
            return []
        if self._head_said:
            # The rest of a sentence whose head was said goes next on its own, however
            # short (joined to the next sentence it would be late), in phrases while
            # it is too long to follow the head without a gap.
            said, self._head_said = self._head_said, 0
            return [p for part in opening_phrases(text, said) for p in split_long(part)]
        if piece_length(text) < MIN_PIECE_CHARS and not force:
            self._held = text
            return []
        return list(split_long(text))
