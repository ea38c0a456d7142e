"""A call's windows trimmed as they come end up as its whole decode trimmed at once."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from wyoming_kokoro.audio import FADE_SAMPLES
from wyoming_kokoro.synthesis.edges import Edges, trimmed


def a_call(seed: int) -> np.ndarray:
    """Model-like audio: silence, speech with a pause in it, and a quiet tail."""
    rng = np.random.default_rng(seed)
    parts = [
        np.zeros(7_000 + int(rng.integers(0, 2_000))),
        0.3 * rng.standard_normal(30_000),
        1e-5 * rng.standard_normal(6_000),  # a pause: quiet, not silent to the trim
        0.2 * rng.standard_normal(int(rng.integers(8_000, 40_000))),
        1e-6 * rng.standard_normal(int(rng.integers(1_000, 30_000))),  # the model's tail
    ]
    return np.concatenate(parts).astype(np.float32)


@pytest.mark.parametrize("seed", range(6))
def test_windows_trimmed_as_they_come_are_the_whole_call_trimmed(seed: int) -> None:
    audio = a_call(seed)
    rng = np.random.default_rng(100 + seed)
    # Windows of frames of 600 samples, from the end of a leading pad (not decoded).
    start = 600 * int(rng.integers(3, 10))
    cuts = [start]
    while cuts[-1] < len(audio):
        cuts.append(min(len(audio), cuts[-1] + 600 * int(rng.integers(16, 49))))
    edges = Edges(start)
    pieces = [edges.cut(audio[a:b], last=b == len(audio)) for a, b in itertools.pairwise(cuts)]
    assert np.array_equal(np.concatenate(pieces), trimmed(audio))
    # The call's fade-out has audio to fade: the quiet end waited for the last window.
    assert len(pieces[-1]) >= FADE_SAMPLES


def test_a_window_that_is_all_quiet_end_is_held_back() -> None:
    from kokoro_onnx.trim import trim

    audio = a_call(0)
    quiet = int(trim(audio)[1][1]) + 2_000  # well into the quiet end
    edges = Edges(0)
    first = edges.cut(audio[:quiet], last=False)
    held = edges.cut(audio[quiet : quiet + 600], last=False)
    rest = edges.cut(audio[quiet + 600 :], last=True)
    assert len(held) == 0 and len(rest) >= FADE_SAMPLES
    assert np.array_equal(np.concatenate([first, rest]), trimmed(audio))
