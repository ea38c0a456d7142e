"""What the engine is asked for: how it runs (its options) and one model call."""

from __future__ import annotations

from dataclasses import dataclass, field

from wyoming_kokoro.catalog.voices import VoiceSpec
from wyoming_kokoro.cpus import automatic_threads
from wyoming_kokoro.options import DECODE, MAX_CALL_TOKENS, MAX_DECODE_SECONDS


@dataclass
class EngineOptions:
    """How the model runs and what text processing applies."""

    threads: int = field(default_factory=automatic_threads)
    normalize: bool = True
    lexicon: dict[str, str] = field(default_factory=dict)
    prefer_misaki: bool = True
    max_call_tokens: int = MAX_CALL_TOKENS.default
    # Calls longer than this decoded in windows of at most this long (memory); 0: whole.
    max_decode_seconds: float = MAX_DECODE_SECONDS.default
    optimized_copy: bool = True  # keep an optimized copy of the model (faster loads)
    decode: str = DECODE.default  # "windows": a listener's first call decoded in windows

    def __post_init__(self) -> None:
        MAX_CALL_TOKENS.check(self.max_call_tokens)
        MAX_DECODE_SECONDS.check(self.max_decode_seconds)


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
