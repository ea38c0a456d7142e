"""PCM format and helpers shared by the engine, the worker, the server and the CLI.

numpy is imported inside the helpers: the server reads only the format constants
and stays free of numpy (its resident memory).
"""

from __future__ import annotations

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


def pause_after(text: str) -> float:
    """Seconds of silence after a piece, by how the piece ends."""
    # Closing quotes and brackets: misaki writes Japanese 「」 as “” in phonemes.
    mark = text.rstrip().rstrip("'\")]”’»」』）")[-1:]
    if mark and mark in ".!?…。！？":
        return 0.25
    if mark and mark in ",;:—–、，；：":
        return 0.1
    return 0.0  # cut between two words of a clause: any pause is heard as a stumble
