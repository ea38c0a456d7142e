"""What a voice's calls teach the windows.

No model here: the statistics are made-up arrays of the kinds the generator feeds.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from wyoming_kokoro.synthesis.held_calls import KEPT, SHORT_FRAMES, Traits
from wyoming_kokoro.synthesis.prior import MIN_FRAMES, TRUSTED, VoicePriors

KINDS = {"mean/fed": np.dtype(np.float32), "scale/fed": np.dtype(np.float32)}
KINDS["zero/fed"] = np.dtype(np.uint8)


def statistics(value: float) -> dict[str, np.ndarray]:
    return {
        "mean/fed": np.full((1, 4, 1), value, np.float32),
        "scale/fed": np.asarray(value / 10, np.float32),
        "zero/fed": np.asarray(int(value), np.uint8),
    }


def traits(frames: int, summary: float = 0.0) -> Traits:
    return Traits(frames, np.full(8, summary))


def test_a_voice_is_trusted_after_enough_calls_of_a_second_or_more(tmp_path) -> None:
    priors = VoicePriors(tmp_path, KINDS)
    for _ in range(TRUSTED - 1):
        priors.learn("af_heart", statistics(10.0), traits(MIN_FRAMES))
    assert priors.estimate("af_heart", traits(100)) is None  # not enough calls yet
    priors.learn("af_heart", statistics(10.0), traits(MIN_FRAMES - 1))  # mostly pad: not learned
    assert priors.calls("af_heart") == TRUSTED - 1
    priors.learn("af_heart", statistics(30.0), traits(MIN_FRAMES))
    estimate = priors.estimate("af_heart", traits(100))
    assert estimate is not None
    # All of one length: the plain average, (7 x 10 + 30) / 8.
    assert np.allclose(estimate["mean/fed"], 12.5) and estimate["mean/fed"].shape == (1, 4, 1)
    assert estimate["mean/fed"].dtype == np.float32 and estimate["scale/fed"].shape == ()
    assert estimate["zero/fed"].dtype == np.uint8 and int(estimate["zero/fed"]) == 12
    assert priors.estimate("af_bella", traits(100)) is None  # per voice


def test_the_estimate_follows_the_length_of_the_call(tmp_path) -> None:
    # A short call's pad and silence weigh more in its statistics: here each is
    # exactly 5 + 400 / frames, and the estimate follows that line.
    priors = VoicePriors(tmp_path, KINDS)
    for frames in (80, 100, 120, 150, 180, 220, 260, 300):
        priors.learn("af_heart", statistics(5.0 + 400.0 / frames), traits(frames))

    def mean_at(frames: int) -> float:
        estimate = priors.estimate("af_heart", traits(frames))
        assert estimate is not None
        return float(estimate["mean/fed"].ravel()[0])

    # Within the slope's shrinking (few calls must not tilt the line wildly).
    assert mean_at(100) == pytest.approx(9.0, abs=0.15)
    assert mean_at(250) == pytest.approx(6.6, abs=0.15)
    assert mean_at(90) > mean_at(100) > mean_at(250)
    # Never shorter than the calls it has seen; longer ones run towards the intercept.
    assert mean_at(10) == mean_at(80)
    assert 5.0 < mean_at(2000) < mean_at(300)


def test_the_estimate_follows_what_the_plan_shows_of_the_call(tmp_path) -> None:
    # Calls of one length whose statistics follow their plan's features: the
    # estimate for a new call follows its features, not the calls' average.
    rng = np.random.default_rng(1)
    direction = rng.standard_normal(32)

    def call(z: float) -> Traits:
        return Traits(150, z * direction + 0.05 * rng.standard_normal(32))

    priors = VoicePriors(tmp_path, KINDS)
    taught = rng.uniform(-1.0, 1.0, 12)
    for z in taught:
        priors.learn("af_heart", statistics(10.0 + 4.0 * z), call(z))
    for z in (-0.8, 0.0, 0.6):
        estimate = priors.estimate("af_heart", call(z))
        assert estimate is not None
        truth, average = 10.0 + 4.0 * z, 10.0 + 4.0 * taught.mean()
        error = abs(float(estimate["mean/fed"].ravel()[0]) - truth)
        assert error < 0.2 * max(0.5, abs(average - truth))


def test_the_latest_calls_are_kept(tmp_path) -> None:
    priors = VoicePriors(tmp_path, KINDS)
    for _ in range(KEPT):
        priors.learn("af_heart", statistics(50.0), traits(MIN_FRAMES))
    for _ in range(KEPT):  # the voice's calls changed: what it says now counts
        priors.learn("af_heart", statistics(20.0), traits(MIN_FRAMES))
    assert priors.calls("af_heart") == 2 * KEPT
    estimate = priors.estimate("af_heart", traits(MIN_FRAMES))
    assert estimate is not None and np.allclose(estimate["mean/fed"], 20.0)
    again = VoicePriors(tmp_path, KINDS)  # as saved (every few calls)
    assert again.calls("af_heart") == 2 * KEPT


def test_short_replies_and_sentences_each_keep_calls_of_their_length(tmp_path) -> None:
    # A few sentences, then a long run of short replies only (as many a home hears):
    # the replies take the room of the oldest replies, not of the sentences, so a
    # sentence is still predicted from sentences. Each value is 5 + 400 / frames.
    sentence, reply = SHORT_FRAMES + 50, SHORT_FRAMES - 90
    priors = VoicePriors(tmp_path, KINDS)
    for _ in range(TRUSTED):
        priors.learn("af_heart", statistics(5.0 + 400.0 / sentence), traits(sentence))
    for _ in range(3 * KEPT):
        priors.learn("af_heart", statistics(5.0 + 400.0 / reply), traits(reply))
    for frames in (sentence, reply):
        estimate = priors.estimate("af_heart", traits(frames))
        assert estimate is not None
        assert float(estimate["mean/fed"].ravel()[0]) == pytest.approx(
            5.0 + 400.0 / frames, abs=0.1
        )


def test_an_articles_short_clauses_leave_the_shortest_replies_their_room(tmp_path) -> None:
    # "Hi." and "Done." (46 frames) after a long text read aloud, whose clauses of
    # 80-150 frames are short calls too: they must not push out the voice's calls of
    # about its length, else "Hi." is predicted as a clause (3.7 dB from its whole
    # decode, against 1.7). Each value is 5 + 400 / frames.
    greeting, clause = 55, 120
    priors = VoicePriors(tmp_path, KINDS)
    for _ in range(TRUSTED):
        priors.learn("af_heart", statistics(5.0 + 400.0 / greeting), traits(greeting))
    for frames in (clause, 2 * clause, 3 * clause) * KEPT:
        priors.learn("af_heart", statistics(5.0 + 400.0 / frames), traits(frames))
    assert min(priors.lengths("af_heart")) == greeting
    estimate = priors.estimate("af_heart", traits(46))
    assert estimate is not None
    assert float(estimate["mean/fed"].ravel()[0]) == pytest.approx(5.0 + 400.0 / greeting, abs=0.3)


def test_what_was_learned_since_the_last_save_is_kept_on_flush(tmp_path) -> None:
    priors = VoicePriors(tmp_path, KINDS)
    for _ in range(TRUSTED + 3):  # past TRUSTED, saved only every few calls
        priors.learn("af_heart", statistics(4.0), traits(MIN_FRAMES))
    assert VoicePriors(tmp_path, KINDS).calls("af_heart") == TRUSTED
    priors.flush()  # as a worker does before it exits
    assert VoicePriors(tmp_path, KINDS).calls("af_heart") == TRUSTED + 3


def test_what_a_worker_learned_the_next_one_knows(tmp_path) -> None:
    first = VoicePriors(tmp_path, KINDS)
    for value in range(TRUSTED):
        taught = traits(MIN_FRAMES + value, float(value % 3))
        first.learn("af_bella(0.5)+af_sky(0.5)", statistics(float(value)), taught)
    files = list(tmp_path.iterdir())
    assert [f.suffix for f in files] == [".npz"]  # one file, nothing left aside
    for frames in (MIN_FRAMES, 3 * MIN_FRAMES):
        again = VoicePriors(tmp_path, KINDS).estimate("af_bella(0.5)+af_sky(0.5)", traits(frames))
        expected = first.estimate("af_bella(0.5)+af_sky(0.5)", traits(frames))
        assert again is not None and expected is not None
        assert all(
            np.allclose(
                again[k],
                expected[k],
            )
            for k in KINDS
        )


def test_a_damaged_or_foreign_file_is_ignored_and_learned_afresh(tmp_path, caplog) -> None:
    priors = VoicePriors(tmp_path, KINDS)
    for _ in range(TRUSTED):
        priors.learn("af_heart", statistics(1.0), traits(MIN_FRAMES))
    (path,) = tmp_path.iterdir()
    other = {"another/fed": np.dtype(np.float32)}  # another graph's values
    with caplog.at_level(logging.WARNING):
        assert VoicePriors(tmp_path, other).calls("af_heart") == 0
    assert "another model graph" in caplog.text
    path.write_bytes(b"not a numpy file")
    fresh = VoicePriors(tmp_path, KINDS)
    assert fresh.estimate("af_heart", traits(100)) is None
    fresh.learn("af_heart", statistics(1.0), traits(MIN_FRAMES))  # and overwrites it
    assert VoicePriors(tmp_path, KINDS).calls("af_heart") == 1


def test_a_cache_it_cannot_write_keeps_the_calls_in_memory(tmp_path) -> None:
    blocked = tmp_path / "a file"  # not a folder: nothing can be written below it
    blocked.write_text("")
    priors = VoicePriors(blocked / "priors", KINDS)
    for _ in range(TRUSTED):
        priors.learn("af_heart", statistics(2.0), traits(MIN_FRAMES))
    assert priors.estimate("af_heart", traits(100)) is not None
    assert [p.name for p in tmp_path.iterdir()] == ["a file"]
