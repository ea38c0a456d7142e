"""Word times from token durations (synthesis/timing.py), without the model."""

from __future__ import annotations

import numpy as np

from wyoming_kokoro.catalog.voices import parse_voice
from wyoming_kokoro.synthesis.calls import Call
from wyoming_kokoro.synthesis.timing import LEAD_SECONDS, CallClock, mark
from wyoming_kokoro.text.words import Reading

PHONEMES = "ɪt ɪz sˈɛt, sˈO ɡˈO."  # "It is set, so go."
READINGS = [Reading("It", "ɪt"), Reading("is", "ɪz"), Reading("set,", "sˈɛt,")]
READINGS += [Reading("so", "sˈO"), Reading("go.", "ɡˈO.")]


def test_a_word_run_on_from_the_last_begins_with_the_space_between_them() -> None:
    # The model makes a run-on word's first sound in the space's frames; a word after
    # punctuation begins with its own first sound, as the first word does.
    call = Call(PHONEMES, parse_voice("jm_kumo", ("jm_kumo",)), 1.0)
    (call,) = mark([call], READINGS, set(PHONEMES))
    assert call.words is not None
    assert [s.run_on for s in call.words] == [False, True, True, False, True]
    clock = CallClock(call)
    tokens = len(PHONEMES)
    clock.durations = np.full(tokens + 2, 2)  # the pads' and every token's: 2 frames
    clock.start = 0
    words = clock.words()

    def at(token: int) -> float:  # where a token's frames begin, as a word's time
        return round(max(0.0, (1 + token) * 2 * 0.025 - LEAD_SECONDS), 3)

    begins = [PHONEMES.index(p) for p in ("ɪt", "ɪz", "sˈɛt", "sˈO", "ɡˈO")]
    assert [w.start for w in words] == [
        at(begins[0]),
        at(begins[1] - 1),  # the space before "is"
        at(begins[2] - 1),
        at(begins[3]),  # after ", ": its own first sound
        at(begins[4] - 1),
    ]
    # Each word ends where the next one's space begins: no overlap, no gap.
    assert [w.end for w in words[:2]] == [words[1].start, words[2].start]
