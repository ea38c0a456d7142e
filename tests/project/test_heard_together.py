"""The judge's clips packed into its 30-second windows (tests/support/heard_together.py):
as few windows as they fit in, and each clip given back its own words."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.heard_together import GAP_S, WINDOW_S, heard_together
from support.judge import RATE


class Ear:
    """Hears each stretch of sound as one word naming its level (a clip's own)."""

    def __init__(self) -> None:
        self.windows: list[float] = []

    def timed_words(self, audio: np.ndarray, rate: int, language: str) -> list[tuple]:
        assert rate == RATE and len(audio) <= WINDOW_S * RATE
        self.windows.append(len(audio) / RATE)
        edges = np.flatnonzero(np.diff(np.concatenate([[0.0], audio, [0.0]])))
        return [
            (f" w{round(float(audio[start]) * 1000)}", start / RATE, end / RATE)
            for start, end in zip(edges[::2], edges[1::2], strict=True)
        ]


def clip(n: int, seconds: float) -> np.ndarray:
    return np.full(int(seconds * RATE), (n + 1) / 1000, np.float32)


def test_clips_are_packed_longest_first() -> None:
    # In the order they came, 20 s, 15 s + 10 s, then 5 s took three windows.
    ear = Ear()
    lengths = (20.0, 15.0, 10.0, 5.0)
    heard = heard_together(ear, [clip(n, s) for n, s in enumerate(lengths)], RATE, "en")
    assert len(ear.windows) == 2
    assert [h.text if h else None for h in heard] == ["w1", "w2", "w3", "w4"]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(0.5, 31.0), min_size=1, max_size=12))
def test_every_clip_hears_its_own_words_in_few_windows(lengths: list[float]) -> None:
    ear = Ear()
    heard = heard_together(ear, [clip(n, s) for n, s in enumerate(lengths)], RATE, "en")
    for n, (seconds, said) in enumerate(zip(lengths, heard, strict=True)):
        if seconds > WINDOW_S:
            assert said is None  # heard alone, elsewhere
        else:
            assert said is not None and said.text == f"w{n + 1}"
    # No two windows could have been one.
    for n, first in enumerate(ear.windows):
        assert all(first + GAP_S + other > WINDOW_S for other in ear.windows[n + 1 :])


class AloneEar(Ear):
    """`Ear`, which also hears a clip alone (as `Judge.heard` does)."""

    def __init__(self) -> None:
        super().__init__()
        self.alone = 0

    def heard(self, audio: np.ndarray, rate: int, language: str) -> str:
        self.alone += 1
        return " ".join(word for word, _, _ in self.timed_words(np.asarray(audio), rate, language))


def test_a_word_that_must_not_be_heard_fails_its_clip_once_heard_alone() -> None:
    from conftest import Listener

    ear = AloneEar()
    listener = Listener(ear, None)  # type: ignore[arg-type]  # no direct: nothing is lost
    listener.check_later("w1", clip(0, 2.0), rate=RATE, unheard=r"\bw1\b")
    listener.check_later("w2", clip(1, 2.0), rate=RATE, unheard=r"\bw1\b")
    with pytest.raises(AssertionError, match="should not be heard") as failed:
        listener.settle()
    assert len(ear.windows) == 2 and ear.alone == 1  # together, then the first alone
    assert str(failed.value).count("should not be heard") == 1


def test_a_word_that_must_be_heard_fails_its_clip_if_missing() -> None:
    from conftest import Listener

    ear = AloneEar()
    listener = Listener(ear, None)  # type: ignore[arg-type]
    listener.check_later("w1", clip(0, 2.0), rate=RATE, heard_as=r"\bw1\b")
    listener.settle()  # heard: nothing to hear alone
    assert ear.alone == 0
    listener.check_later("w2", clip(1, 2.0), rate=RATE, margin=1.0, heard_as=r"\bw3\b")
    with pytest.raises(AssertionError, match="should be heard"):
        listener.settle()
