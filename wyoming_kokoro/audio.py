"""PCM format and helpers shared by the engine, the worker, the server and the CLI.

numpy is imported inside the helpers: the server reads only the format constants
and stays free of numpy (its resident memory).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

SAMPLE_RATE = 24_000
SAMPLE_WIDTH = 2  # bytes, s16le
BYTES_PER_SECOND = SAMPLE_RATE * SAMPLE_WIDTH  # mono PCM as it crosses every door
CHANNELS = 1

# A few milliseconds of fade at every seam: the model's output does not start
# or end at zero, and a jump there is heard as a click.
FADE_SAMPLES = int(0.004 * SAMPLE_RATE)

# The silence after a sentence's end and after a clause's, at speed 1.0: a sentence's
# is a setting (--sentence-pause), this its default; a clause's is fixed.
SENTENCE_PAUSE_MS = 250
CLAUSE_PAUSE_MS = 100
# Longest sentence or paragraph pause anyone may ask for: a longer one is a mistake.
LONGEST_PAUSE_MS = 5000


@dataclass(frozen=True)
class Pauses:
    """The silence after a sentence and between paragraphs, in milliseconds at speed 1.0.

    A paragraph ends with its last piece's own pause (a sentence's, a clause's) and
    what the paragraph pause has over the sentence pause: after a sentence, the
    paragraph pause in all (never shorter than a sentence's). The defaults add
    nothing, so a blank line is as long as it always was."""

    sentence: int = SENTENCE_PAUSE_MS
    paragraph: int = SENTENCE_PAUSE_MS

    def __post_init__(self) -> None:
        for name in ("sentence", "paragraph"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"the {name} pause must be a whole number of milliseconds")
            if not 0 <= value <= LONGEST_PAUSE_MS:
                raise ValueError(
                    f"the {name} pause must be 0 to {LONGEST_PAUSE_MS} ms, not {value}"
                )

    def after_paragraph(self, speed: float = 1.0) -> int:
        """Milliseconds of silence to add after a paragraph's last piece (whose own
        pause it ends with), said at `speed`."""
        return max(0, round((self.paragraph - self.sentence) / speed))

    def over(self, sentence: int | None = None, paragraph: int | None = None) -> Pauses:
        """These pauses with the ones given (a preset's, a request's) in their place."""
        return Pauses(
            self.sentence if sentence is None else sentence,
            self.paragraph if paragraph is None else paragraph,
        )


def to_pcm16(audio: np.ndarray, fade_in: bool = True, fade_out: bool = True) -> np.ndarray:
    """Float audio in [-1, 1] to int16 samples, with faded edges.

    A window inside a call continues the audio before it: it is not faded where it
    joins its neighbours (a fade there is a notch in the middle of a word).
    """
    import numpy as np

    audio = np.asarray(audio, dtype=np.float32).copy()
    n = min(FADE_SAMPLES, len(audio) // 2)
    if n:
        ramp = np.linspace(0.0, 1.0, n, dtype=np.float32)
        if fade_in:
            audio[:n] *= ramp
        if fade_out:
            audio[-n:] *= ramp[::-1]
    if float(np.abs(audio).max(initial=0.0)) > 1.0:
        # The model overshoots full scale now and then: a smooth
        # gain around those peaks keeps their shape, where clipping would flatten them
        # (and a voice turned down afterwards would keep the flat tops).
        from wyoming_kokoro.synthesis.loudness import limiter_gain

        audio *= limiter_gain(np.abs(audio), 1.0)
    return (np.clip(audio, -1.0, 1.0) * 32767.0).astype(np.int16)


def silence(seconds: float) -> np.ndarray:
    """int16 silence of the given length."""
    import numpy as np

    return np.zeros(int(seconds * SAMPLE_RATE), dtype=np.int16)


def silence_bytes(ms: float) -> bytes:
    """s16le silence of `ms` milliseconds, made without numpy (the server has none)."""
    return bytes(int(ms * SAMPLE_RATE / 1000) * SAMPLE_WIDTH)


def pause_after(text: str, sentence_ms: int = SENTENCE_PAUSE_MS) -> float:
    """Seconds of silence after a piece, by how the piece ends (at speed 1.0):
    `sentence_ms` after a sentence."""
    # Closing quotes and brackets: misaki writes Japanese 「」 as “” in phonemes.
    mark = text.rstrip().rstrip("'\")]”’»」』）")[-1:]
    if mark and mark in ".!?…。！？":
        return sentence_ms / 1000
    if mark and mark in ",;:—–、，；：":
        return CLAUSE_PAUSE_MS / 1000
    return 0.0  # cut between two words of a clause: any pause is heard as a stumble
