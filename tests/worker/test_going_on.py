"""A piece going on on a new worker where one that died left it (worker/going_on.py):
its plan cut again as its steps say, what its listener heard left out. No model."""

from __future__ import annotations

from collections import deque

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.audio import SAMPLE_RATE
from wyoming_kokoro.timeline import WordTime
from wyoming_kokoro.worker.going_on import ENDED, replay, unheard


def _shorten(call: str, limit: int) -> list[str]:
    """Cut between words into parts of at most `limit` characters (as the planner does
    with phonemes); one part if it fits."""
    parts: list[str] = []
    for word in call.split(" "):
        if parts and len(parts[-1]) + 1 + len(word) <= limit:
            parts[-1] += " " + word
        else:
            parts.append(word)
    return parts


@settings(max_examples=60, deadline=None)
@given(
    calls=st.lists(
        st.lists(st.text("abc", min_size=1, max_size=6), min_size=1, max_size=8).map(" ".join),
        min_size=1,
        max_size=6,
    ),
    moves=st.lists(st.one_of(st.just(ENDED), st.integers(4, 12)), max_size=12),
)
def test_a_plan_replayed_by_its_steps_is_where_the_dead_worker_left_it(calls, moves) -> None:
    # What a worker does with a piece's plan: cut its next call short, or say it whole.
    held, steps = deque(calls), []
    for move in moves:
        if not held:
            break
        if move == ENDED:
            held.popleft()
            steps.append(ENDED)
        else:
            parts = _shorten(held.popleft(), move)
            held.extendleft(reversed(parts))
            if len(parts) > 1:
                steps.append(move)
    fresh = deque(calls)
    replay(fresh, steps, _shorten)  # type: ignore[arg-type]
    assert fresh == held


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 50), min_size=1, max_size=6),
    heard=st.integers(0, 400),
)
def test_what_was_heard_is_left_out_to_the_sample(sizes, heard) -> None:
    total = sum(sizes)
    heard = min(heard, total) * 2  # bytes, of whole samples
    audio = np.arange(total, dtype=np.int16)
    words = [WordTime("one", 0.0, 0.1), WordTime("two", 0.2, 0.3)]
    blocks, at = [], 0
    for n, size in enumerate(sizes):
        last = n == len(sizes) - 1
        # A call's first block carries its words but the last, which comes with its
        # last block (a call decoded whole: one block with them all).
        told = words if len(sizes) == 1 else words[:-1] if n == 0 else words[-1:] if last else []
        blocks.append((audio[at : at + size], last, told))
        at += size
    kept = list(unheard(iter(blocks), heard))
    assert np.array_equal(np.concatenate([pcm for pcm, _, _ in kept]), audio[heard // 2 :])
    said = [word for _, _, told in kept for word in told]
    if not heard:
        assert said == words
    else:  # every word but the last was heard with the first audio: only it is to come
        cut = min(max(0, heard // 2 - (total - sizes[-1])), sizes[-1])  # of the last block
        assert said == [words[-1].shifted(-cut / SAMPLE_RATE)]
