"""How a call's windows are sized, and what the clock learns of the generator's cost.

No model here: the schedule is plain arithmetic on a cost, and the clock is fed times.
"""

from __future__ import annotations

import itertools

import pytest

from wyoming_kokoro.synthesis.pacing import (
    LEAD_FRAMES,
    SECONDS_PER_FRAME,
    Clock,
    Windows,
    first_size,
    schedule,
)


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
    # Fixed 48-frame windows leave a gap after the first (58 frames to decode, 0.3 s
    # of audio in hand).
    for per_frame in (0.0086, 0.011):
        sizes, silence = played(Windows(), per_frame)
        assert silence == 0.0 and sizes[0] < Windows().later
        # Growing past the unpaced size as the audio in hand allows, up to `longest`.
        assert Windows().later < max(sizes) <= Windows().longest
        assert sizes[:-1] == sorted(sizes[:-1])
        assert played(Windows(paced=False), per_frame)[1] > 0.15
    # The first window is longer only as much as the second one needs.
    assert first_size(Windows(), None) == first_size(Windows(), 0.0086) == Windows().first
    assert first_size(Windows(), 0.011) == 19


def test_a_cpu_that_cannot_keep_up_gets_unpaced_windows() -> None:
    sizes, _ = played(Windows(), 0.030)  # slower than real time at any size
    assert sizes[:-1] == [Windows().later] * (len(sizes) - 1)
    assert first_size(Windows(), 0.030) == Windows().first  # no use waiting longer
    # 15 ms: windows shorter than 15 frames would be slower than the audio they give.
    sizes, silence = played(Windows(), 0.015)
    assert min(sizes[:-1]) >= 2 * 15 and silence == 0.0


def test_the_clock_goes_by_the_windows_median_cost_per_frame() -> None:
    clock = Clock()
    assert clock.per_frame() is None
    clock.timed(200, 2.6, window=False)  # a whole call: the only guide until a window runs
    assert clock.per_frame() == pytest.approx(0.013)
    for seconds in (0.25, 0.26, 0.24, 0.72, 0.25):  # 24 frames; one run stalled
        clock.timed(24, seconds)
    assert clock.per_frame() == pytest.approx(0.25 / 24)
    clock.timed(0, 0.1)  # nothing decoded: nothing learned
    assert clock.per_frame() == pytest.approx(0.25 / 24)
    for _ in range(15):  # the latest runs count: the CPU got faster
        clock.timed(30, 0.24)
    assert clock.per_frame() == pytest.approx(0.008)


def test_the_clock_is_left_to_the_next_worker(tmp_path) -> None:
    # A worker exits when idle; the next one's first call, the one a listener waits
    # for, is sized from what its predecessor timed, not blind.
    path = tmp_path / "pace.json"
    fresh = Clock()
    fresh.remember(path)  # nothing timed: nothing to keep
    assert not path.exists()
    clock = Clock()
    clock.timed(200, 3.2, window=False)
    for seconds in (0.40, 0.38, 0.41):  # 25 frames at 16 ms: a slow CPU
        clock.timed(25, seconds)
    clock.remember(path)
    successor = Clock()
    successor.recall(path)
    assert successor.per_frame() == pytest.approx(0.016)
    # Sized from it, the first window lasts while the second is decoded (blind, it was
    # 16 frames and 0.45 s of silence followed at 16 ms a frame).
    assert first_size(Windows(), successor.per_frame()) > Windows().first
    assert played(Windows(), successor.per_frame())[1] == 0.0
    # Its own windows soon outweigh what it was left: the machine may be quieter now.
    for _ in range(2):
        successor.timed(25, 0.25)
    assert successor.per_frame() == pytest.approx(0.01)
    # Whole calls only: kept as such, standing in until a window runs.
    whole_only = Clock()
    whole_only.timed(100, 1.3, window=False)
    whole_only.remember(path)
    successor = Clock()
    successor.recall(path)
    assert successor.per_frame() == pytest.approx(0.013)
    successor.timed(25, 0.25)
    assert successor.per_frame() == pytest.approx(0.01)


@pytest.mark.parametrize(
    "kept",
    [
        "",
        "{not json",
        "[0.016]",
        '{"format": 99, "window": 0.016}',
        '{"format": 1, "window": "fast"}',
        '{"format": 1, "window": 7.0, "whole": -1.0}',
    ],
)
def test_a_damaged_or_foreign_clock_file_is_ignored(tmp_path, kept) -> None:
    path = tmp_path / "pace.json"
    path.write_text(kept)
    clock = Clock()
    clock.recall(path)
    assert clock.per_frame() is None
    clock.recall(tmp_path / "missing.json")
    assert clock.per_frame() is None


def test_a_read_only_cache_keeps_no_clock_and_raises_nothing(tmp_path) -> None:
    clock = Clock()
    clock.timed(25, 0.4)
    clock.remember(tmp_path / "no such folder" / "pace.json")
    assert not list(tmp_path.rglob("*"))
