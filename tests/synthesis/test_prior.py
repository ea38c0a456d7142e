"""What a voice's calls teach the windows, and how the windows after the first are sized.

No model here: the statistics are made-up arrays of the kinds the generator feeds, and
the window schedule is plain arithmetic on a cost per frame.
"""

from __future__ import annotations

import itertools
import logging

import numpy as np

from wyoming_kokoro.synthesis.decoder import (
    LEAD_FRAMES,
    SECONDS_PER_FRAME,
    Windows,
    first_size,
    schedule,
)
from wyoming_kokoro.synthesis.prior import MIN_FRAMES, TRUSTED, VoicePriors

KINDS = {"mean/fed": np.dtype(np.float32), "scale/fed": np.dtype(np.float32)}
KINDS["zero/fed"] = np.dtype(np.uint8)


def statistics(value: float) -> dict[str, np.ndarray]:
    return {
        "mean/fed": np.full((1, 4, 1), value, np.float32),
        "scale/fed": np.asarray(value / 10, np.float32),
        "zero/fed": np.asarray(int(value), np.uint8),
    }


def test_a_voice_is_trusted_after_enough_calls_and_weighted_by_their_frames(tmp_path) -> None:
    priors = VoicePriors(tmp_path, KINDS)
    for _ in range(TRUSTED - 1):
        priors.learn("af_heart", statistics(10.0), MIN_FRAMES)
    assert priors.estimate("af_heart") is None  # not enough calls yet
    priors.learn("af_heart", statistics(10.0), MIN_FRAMES - 1)  # mostly pad: not learned
    assert priors.calls("af_heart") == TRUSTED - 1
    priors.learn("af_heart", statistics(110.0), 7 * MIN_FRAMES)
    estimate = priors.estimate("af_heart")
    assert estimate is not None
    # (7 calls x 10 + 7 x 110) / 14 call-lengths: the long call counts for its frames.
    assert np.allclose(estimate["mean/fed"], 60.0) and estimate["mean/fed"].shape == (1, 4, 1)
    assert estimate["mean/fed"].dtype == np.float32 and estimate["scale/fed"].shape == ()
    assert estimate["zero/fed"].dtype == np.uint8 and int(estimate["zero/fed"]) == 60
    assert priors.estimate("af_bella") is None  # per voice


def test_what_a_worker_learned_the_next_one_knows(tmp_path) -> None:
    first = VoicePriors(tmp_path, KINDS)
    for value in range(TRUSTED):
        first.learn("af_bella(0.5)+af_sky(0.5)", statistics(float(value)), MIN_FRAMES)
    files = list(tmp_path.iterdir())
    assert [f.suffix for f in files] == [".npz"]  # one file, nothing left aside
    again = VoicePriors(tmp_path, KINDS).estimate("af_bella(0.5)+af_sky(0.5)")
    expected = first.estimate("af_bella(0.5)+af_sky(0.5)")
    assert again is not None and expected is not None
    assert all(np.array_equal(again[k], expected[k]) for k in KINDS)


def test_a_damaged_or_foreign_file_is_ignored_and_learned_afresh(tmp_path, caplog) -> None:
    priors = VoicePriors(tmp_path, KINDS)
    for _ in range(TRUSTED):
        priors.learn("af_heart", statistics(1.0), MIN_FRAMES)
    (path,) = tmp_path.iterdir()
    other = {"another/fed": np.dtype(np.float32)}  # another graph's values
    with caplog.at_level(logging.WARNING):
        assert VoicePriors(tmp_path, other).calls("af_heart") == 0
    assert "another model graph" in caplog.text
    path.write_bytes(b"not a numpy file")
    fresh = VoicePriors(tmp_path, KINDS)
    assert fresh.estimate("af_heart") is None
    fresh.learn("af_heart", statistics(1.0), MIN_FRAMES)  # and overwrites it
    assert VoicePriors(tmp_path, KINDS).calls("af_heart") == 1


def test_a_cache_it_cannot_write_keeps_the_average_in_memory(tmp_path) -> None:
    blocked = tmp_path / "a file"  # not a folder: nothing can be written below it
    blocked.write_text("")
    priors = VoicePriors(blocked / "priors", KINDS)
    for _ in range(TRUSTED):
        priors.learn("af_heart", statistics(2.0), MIN_FRAMES)
    assert priors.estimate("af_heart") is not None
    assert [p.name for p in tmp_path.iterdir()] == ["a file"]


def played(w: Windows, per_frame: float, frames: int = 400) -> tuple[list[int], float]:
    """The windows' sizes, and the silence a listener would hear between them if each
    took exactly `per_frame` a frame decoded (the first one's audio starts at 0)."""
    start = 15
    end = start + first_size(w, per_frame)
    spans = schedule(w, per_frame, frames, start, end)
    assert spans[0][0] == end and spans[-1][1] == frames
    assert all(b == c for (_, b), (c, _) in itertools.pairwise(spans))
    clock, audio_ends, silence = 0.0, (end - start - LEAD_FRAMES) * SECONDS_PER_FRAME, 0.0
    for a, b in spans:
        clock += (min(frames, b + w.context) - max(0, a - w.context)) * per_frame
        silence += max(0.0, clock - audio_ends)
        audio_ends = max(audio_ends, clock) + (b - a) * SECONDS_PER_FRAME
    return [b - a for a, b in spans], silence


def test_windows_after_the_first_grow_so_the_audio_never_runs_dry() -> None:
    # 8.6 ms a frame: this machine's generator on a usual day; 11 ms on a slow one.
    # Fixed 48-frame windows leave a gap after the first (60 frames to decode, 0.3 s
    # of audio in hand).
    for per_frame in (0.0086, 0.011):
        sizes, silence = played(Windows(), per_frame)
        assert silence == 0.0 and sizes[0] < Windows().later
        assert max(sizes) == Windows().later and sizes[:-1] == sorted(sizes[:-1])
        assert played(Windows(paced=False), per_frame)[1] > 0.2
    # The first window is longer only as much as the second one needs.
    assert first_size(Windows(), None) == first_size(Windows(), 0.0086) - 1 == Windows().first
    assert first_size(Windows(), 0.011) == 22


def test_a_cpu_that_cannot_keep_up_gets_the_longest_windows() -> None:
    sizes, _ = played(Windows(), 0.030)  # slower than real time at any size
    assert sizes[:-1] == [Windows().later] * (len(sizes) - 1)
    assert first_size(Windows(), 0.030) == Windows().first  # no use waiting longer
    # 15 ms: windows shorter than 18 frames would be slower than the audio they give.
    sizes, silence = played(Windows(), 0.015)
    assert min(sizes[:-1]) >= 2 * 18 and silence == 0.0
