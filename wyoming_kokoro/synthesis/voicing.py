"""How a piece is voiced, and the audio as every front end hands it on.

The worker (for both doors) and kokoro-say speak through `Voiced`: a piece's voice
parsed once, its volume within range, and the engine's audio brought to every voice's
equal loudness times that volume; with its words' times if asked (`timed`). The
engine below stays raw, so windows and whole decodes can be compared sample for sample.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wyoming_kokoro.audio import SENTENCE_PAUSE_MS
from wyoming_kokoro.options import VOLUME_RANGE
from wyoming_kokoro.synthesis.loudness import Leveler, apply_gain

if TYPE_CHECKING:
    import numpy as np

    from wyoming_kokoro.catalog.voices import VoiceSpec
    from wyoming_kokoro.synthesis.engine import Engine
    from wyoming_kokoro.timeline import WordTime


@dataclass(frozen=True)
class Voicing:
    """A piece's voice (a single voice or a blend), speed, volume and sentence pause."""

    voice: VoiceSpec
    speed: float = 1.0
    volume: float = 1.0  # times the voice's equal loudness
    sentence_pause: int = SENTENCE_PAUSE_MS  # milliseconds after a sentence, at speed 1.0


class Voiced:
    """An engine whose audio leaves at every voice's equal loudness, times the volume."""

    def __init__(self, engine: Engine, leveler: Leveler | None) -> None:
        self.engine = engine
        self._leveler = leveler  # None: the engine's own loudness (tests, benchmarks)

    def voicing(
        self,
        voice: str,
        speed: float = 1.0,
        volume: float = 1.0,
        sentence_pause: int = SENTENCE_PAUSE_MS,
    ) -> Voicing:
        """Parse `voice` against the loaded voices (VoiceError if unknown)."""
        volume = min(max(volume, VOLUME_RANGE[0]), VOLUME_RANGE[1])
        return Voicing(self.engine.voice(voice), speed, volume, sentence_pause)

    def level(self, voicing: Voicing, audio: np.ndarray) -> np.ndarray:
        """One stretch of the engine's audio as it leaves: levelled, times the volume."""
        gain = voicing.volume
        if self._leveler is not None:
            self._leveler.observe(voicing.voice, audio)
            gain *= self._leveler.gain(voicing.voice)
        return apply_gain(audio, gain)

    def speak(
        self, piece: str, voicing: Voicing, lang: str | None = None, awaited: bool = False
    ) -> Iterator[np.ndarray]:
        """One piece of text as levelled int16 audio, one array per model call."""
        engine = self.engine
        pause = voicing.sentence_pause
        for audio in engine.speak(piece, voicing.voice, voicing.speed, lang, awaited, pause):
            yield self.level(voicing, audio)

    def timed(
        self, piece: str, voicing: Voicing, lang: str | None = None, awaited: bool = False
    ) -> Iterator[tuple[np.ndarray, list[WordTime]]]:
        """`speak`, each call's audio with its written words timed from its start."""
        import numpy as np

        engine = self.engine
        for call in engine.plan(
            piece,
            voicing.voice,
            voicing.speed,
            lang,
            awaited,
            words=True,
            sentence_pause=voicing.sentence_pause,
        ):
            audio, words = [], []
            for pcm, _, told in engine.timed(call):
                audio.append(pcm)
                words += told
            yield self.level(voicing, np.concatenate(audio)), words
