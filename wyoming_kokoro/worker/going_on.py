"""A piece going on on a new worker where one that died left it.

Every message of a piece tells the scheduler where the piece is (`protocol.Audio.steps`,
`.heard`): how its calls were cut short, which have ended, and how much of the call in
progress was sent. A new worker plans the piece again (the same text gives the same
plan), cuts it the same way, and leaves out what its listener heard. A call cut off
part-way is decoded again from its start and joined where its listener was.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from wyoming_kokoro.audio import SAMPLE_RATE

if TYPE_CHECKING:
    import numpy as np

    from wyoming_kokoro.synthesis.calls import Call
    from wyoming_kokoro.timeline import WordTime

    Blocks = Iterator[tuple[np.ndarray, bool, list[WordTime]]]

ENDED = -1  # a step: the piece's next call was said to its end

T = TypeVar("T")


def replay(calls: deque[T], steps: list[int], shorten: Callable[[Call, int], list[Call]]) -> None:
    """`calls`, a fresh plan, brought to where `steps` say: each call cut short as it
    was (`shorten`, to the phonemes the step names), each ended one gone."""
    for step in steps:
        if not calls:  # planned otherwise since (new voices or lexicon): nothing left
            return
        head = calls.popleft()
        if step != ENDED:
            calls.extendleft(reversed(shorten(head, step)))  # type: ignore[arg-type]


def unheard(blocks: Blocks, heard: int) -> Blocks:
    """A call's blocks less the first `heard` bytes of its audio, which its listener got
    from a worker that died. Of their words only the call's last is still to be said:
    a call's first audio carries all the others (`Engine.timed`)."""
    skip = heard // 2  # samples
    for pcm, last, words in blocks:
        if not heard:
            yield pcm, last, words
            continue
        cut = min(skip, len(pcm))
        skip -= cut
        kept = [word.shifted(-cut / SAMPLE_RATE) for word in words[-1:]] if last else []
        yield pcm[cut:], last, kept
