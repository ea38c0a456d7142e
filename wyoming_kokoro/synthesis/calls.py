"""What the engine is asked for: one model call."""

from __future__ import annotations

from dataclasses import dataclass

from wyoming_kokoro.audio import SENTENCE_PAUSE_MS, pause_after
from wyoming_kokoro.catalog.voices import VoiceSpec


@dataclass(frozen=True)
class Span:
    """A written word's tokens in one call: `first` to `last` (inclusive), or None."""

    word: str
    first: int | None
    last: int | None
    matched: bool = True
    goes_on: bool = False  # the word's next tokens open the next call
    # Said straight after the word before (a space alone between them): the model makes
    # the word's first sound (a stop's closure, a fricative's noise) in that space's frames.
    run_on: bool = False


@dataclass(frozen=True)
class Call:
    """One model call: phonemes in a voice at a speed."""

    phonemes: str
    voice: VoiceSpec
    speed: float
    windowed: bool = False  # a listener waits for it: decode it in windows
    # Seconds of audio its listener has yet to hear when it is decoded: in windows too
    # if a whole call would come later than that (any call but an utterance's first).
    in_hand: float | None = None
    # The written words its tokens say, when word times are asked for (timing.py).
    words: tuple[Span, ...] | None = None
    sentence_pause: int = SENTENCE_PAUSE_MS  # milliseconds after a sentence, at speed 1.0

    @property
    def pause(self) -> float:
        """Seconds of silence after the call's audio, by how its phonemes end."""
        return pause_after(self.phonemes, self.sentence_pause) / self.speed
