"""Which generator a machine keeps (`generator_choice.py`), with its timing injected:
the int8 one only where it is faster and sounds like today's; a cache moved to
another CPU uses today's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_kokoro.synthesis import generator_choice
from wyoming_kokoro.synthesis.generator_choice import (
    CHOSEN,
    FARTHEST_DB,
    FASTER,
    INT8,
    Trial,
    generator_file,
    log_mel_distance,
    prefer_int8,
    trial,
)
from wyoming_kokoro.synthesis.graph import GENERATOR

RATE = 24_000


def tone(seconds: float = 0.5, hz: float = 220.0, gain: float = 0.3) -> np.ndarray:
    t = np.arange(int(RATE * seconds)) / RATE
    return (gain * np.sin(2 * np.pi * hz * t)).astype(np.float32)


class Ticking:
    """A CPU clock each decode advances by its own cost per plan."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def decoder(self, cost: float, sound: np.ndarray) -> object:
        def decode(plan: object) -> np.ndarray:
            self.now += cost
            return sound

        return decode


def test_a_faster_generator_that_sounds_the_same_is_kept() -> None:
    clock = Ticking()
    result = trial(clock.decoder(1.0, tone()), clock.decoder(0.5, tone()), [1, 2, 3], clock)
    assert result == Trial(3.0, 1.5, 0.0)
    assert prefer_int8(result) and "runs on int8" in generator_choice.describe(result)


def test_a_slower_generator_is_not_kept() -> None:
    # An ARM board or a CPU without byte-multiply instructions: the int8 kernels lose.
    clock = Ticking()
    result = trial(clock.decoder(1.0, tone()), clock.decoder(1.2, tone()), [1, 2], clock)
    assert result.ratio > 1 and not prefer_int8(result)
    assert "stays on today's" in generator_choice.describe(result)


def test_a_faster_generator_that_sounds_different_is_not_kept() -> None:
    clock = Ticking()
    result = trial(clock.decoder(1.0, tone()), clock.decoder(0.3, tone(hz=330)), [1], clock)
    assert result.distance > FARTHEST_DB and not prefer_int8(result)


def test_the_best_round_of_each_counts() -> None:
    # A round slowed by another process does not decide; each generator's best does.
    costs = itertools.cycle([5.0, 1.0])  # today's first round slow, then quick
    clock = Ticking()

    def today(plan: object) -> np.ndarray:
        clock.now += next(costs)
        return tone()

    result = trial(today, clock.decoder(0.8, tone()), [1], clock)
    assert (result.today, result.int8) == pytest.approx((1.0, 0.8))


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 100), st.floats(0.01, 100), st.floats(0, 10, allow_nan=False))
def test_the_choice_is_faster_by_the_margin_and_within_the_bar(
    today: float, int8: float, distance: float
) -> None:
    chosen = prefer_int8(Trial(today, int8, distance))
    assert chosen == (int8 <= FASTER * today and distance <= FARTHEST_DB)


def test_the_distance_is_zero_for_the_same_sound_and_grows_with_a_change() -> None:
    sound = tone(1.0)
    assert log_mel_distance(sound, sound) == 0.0
    noise = np.random.default_rng(0).standard_normal(len(sound)).astype(np.float32)
    slight, loud = (log_mel_distance(sound, sound + g * noise) for g in (1e-3, 1e-1))
    assert 0 < slight < loud


def test_the_worker_loads_the_generator_its_cpu_chose() -> None:
    recorded = {GENERATOR: ("0" * 64, 1), INT8: ("1" * 64, 1)}
    note = f"20 samples bit-identical\n{CHOSEN} abc123\n"
    assert generator_file(note, recorded, "abc123") == INT8
    # Chosen on another CPU (an image built elsewhere): today's until cut here.
    assert generator_file(note, recorded, "def456") == GENERATOR
    # Not chosen, an entry from before the choice, or a mark without digests.
    assert generator_file("20 samples bit-identical\n", {GENERATOR: ("0" * 64, 1)}, "x") == (
        GENERATOR
    )
    assert generator_file(note, None, "abc123") == GENERATOR


def test_a_model_without_measured_ranges_keeps_today_s_generator(tmp_path) -> None:
    # The fp32 and fp16 files have float convolutions: nothing is tried, nothing written.
    assert generator_choice.make_and_choose("kokoro-v1.0.onnx", tmp_path, 1, []) is None
    assert not (tmp_path / INT8).exists()


@pytest.mark.parametrize(("bits", "tried"), [(7, False), (8, True)])
def test_only_a_cpu_with_vnni_or_not_x86_tries_the_int8_generator(
    tmp_path, monkeypatch, caplog, bits: int, tried: bool
) -> None:
    # x86 without VNNI (7-bit weights) keeps today's generator without a trial; where
    # bytes multiply in one instruction the trial starts (here it finds no generator).
    monkeypatch.setattr(generator_choice, "weight_bits", lambda: bits)
    with caplog.at_level("INFO", logger=generator_choice.__name__):
        assert generator_choice.make_and_choose("kokoro-v1.0.int8.onnx", tmp_path, 1, []) is None
    assert ("Trying the generator on int8 kernels" in caplog.text) is tried
    assert ("this CPU has no VNNI" in caplog.text) is not tried
    assert not (tmp_path / INT8).exists()
