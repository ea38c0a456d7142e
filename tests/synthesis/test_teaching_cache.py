"""What teaching keeps: frozen statistics, per style, shared between processes.

No model here: the statistics are made-up arrays of the kinds the generator feeds.
"""

from __future__ import annotations

import numpy as np

from wyoming_kokoro.synthesis.held_calls import Traits
from wyoming_kokoro.synthesis.prior import MIN_FRAMES, TRUSTED, VoicePriors

KINDS = {"mean/fed": np.dtype(np.float32), "zero/fed": np.dtype(np.uint8)}


def statistics(value: float) -> dict[str, np.ndarray]:
    return {
        "mean/fed": np.full((1, 4, 1), value, np.float32),
        "zero/fed": np.asarray(int(value), np.uint8),
    }


def traits(frames: int = MIN_FRAMES) -> Traits:
    return Traits(frames, np.zeros(8))


def styles(table: dict[str, float]):  # type: ignore[no-untyped-def]
    return lambda voice: np.full((3, 1, 256), table[voice], np.float32)


def taught(priors: VoicePriors, voice: str, value: float) -> None:
    for _ in range(TRUSTED):
        priors.learn(voice, statistics(value), traits())
    priors.mark_taught(voice)


def test_a_taught_voice_learns_nothing_more_so_every_request_sounds_the_same(tmp_path) -> None:
    priors = VoicePriors(tmp_path, KINDS, styles({"af_heart": 1.0}))
    taught(priors, "af_heart", 10.0)
    before = priors.estimate("af_heart", traits(100))
    assert before is not None and priors.taught("af_heart")
    priors.learn("af_heart", statistics(90.0), traits())  # a listener's whole call
    priors.flush()
    assert priors.calls("af_heart") == TRUSTED
    again = VoicePriors(tmp_path, KINDS, styles({"af_heart": 1.0}))  # the next worker
    after = again.estimate("af_heart", traits(100))
    assert after is not None
    assert all(np.array_equal(before[name], after[name]) for name in KINDS)


def test_a_voice_whose_style_changed_is_learned_afresh(tmp_path) -> None:
    taught(VoicePriors(tmp_path, KINDS, styles({"af_heart": 1.0})), "af_heart", 10.0)
    changed = VoicePriors(tmp_path, KINDS, styles({"af_heart": 2.0}))  # a new voices file
    assert not changed.taught("af_heart") and changed.calls("af_heart") == 0
    assert changed.estimate("af_heart", traits(100)) is None
    assert changed.wanted() == ["af_heart"]  # noted for the teacher


def test_what_the_teacher_keeps_reaches_a_running_worker(tmp_path) -> None:
    style = styles({"af_heart(0.5)+af_sky(0.5)": 1.0})
    worker = VoicePriors(tmp_path, KINDS, style)
    blend = "af_heart(0.5)+af_sky(0.5)"
    assert worker.estimate(blend, traits(100)) is None
    assert worker.wanted() == [blend]
    worker.learn(blend, statistics(50.0), traits())  # its first call, decoded whole
    teacher = VoicePriors(tmp_path, KINDS, style)
    taught(teacher, blend, 10.0)  # goes on from the worker's call
    assert teacher.wanted() == []
    expected = teacher.estimate(blend, traits(100))
    assert expected is not None
    # The worker reads the teacher's file, and its own call does not overwrite it.
    worker.learn(blend, statistics(70.0), traits())
    worker.flush()
    estimate = worker.estimate(blend, traits(100))
    assert estimate is not None and worker.taught(blend)
    assert np.array_equal(estimate["mean/fed"], expected["mean/fed"])
    assert VoicePriors(tmp_path, KINDS, style).calls(blend) == TRUSTED + 1


def test_a_file_from_before_styles_were_kept_is_adopted_untaught(tmp_path) -> None:
    old = VoicePriors(tmp_path, KINDS)
    for _ in range(TRUSTED):
        old.learn("af_heart", statistics(10.0), traits())
    with np.load(tmp_path / "af_heart.npz") as data:
        arrays = {k: data[k] for k in data.files if k not in ("digest", "taught")}
    arrays["format"] = np.array(3)
    np.savez(tmp_path / "af_heart.npz", **arrays)
    adopted = VoicePriors(tmp_path, KINDS, styles({"af_heart": 1.0}))
    assert adopted.calls("af_heart") == TRUSTED and not adopted.taught("af_heart")
    assert adopted.estimate("af_heart", traits(100)) is not None


class _Voices:
    """What teach_all asks of an engine: its priors, its voices and their names."""

    def __init__(self, priors: VoicePriors, installed: list[str]) -> None:
        self.priors = priors
        self.voice_names = installed

    def voice(self, name: str) -> str:
        if name.startswith("gone"):
            from wyoming_kokoro.catalog.voices import VoiceError

            raise VoiceError(f"unknown voice {name}")
        return name


def test_the_teacher_takes_wanted_voices_first_then_the_servers_then_the_rest_and_ends(
    tmp_path, monkeypatch
) -> None:
    from wyoming_kokoro.synthesis import teaching

    table = {v: 1.0 for v in ("af_heart", "jm_kumo", "jf_alpha", "bf_emma", "blend")}
    priors = VoicePriors(tmp_path, KINDS, styles(table))
    taught(priors, "bf_emma", 3.0)  # taught by an earlier teacher: skipped
    for voice in ("blend", "gone_voice"):  # a worker was asked for these before they were taught
        assert priors.estimate(voice, traits(100)) is None
    assert sorted(priors.wanted()) == ["blend", "gone_voice"]
    order: list[str] = []

    def teach(engine, voice) -> int:  # type: ignore[no-untyped-def]
        order.append(voice)
        if voice == "jf_alpha":
            raise RuntimeError("one voice's trouble")
        taught(priors, voice, 2.0)
        return TRUSTED

    monkeypatch.setattr(teaching, "teach", teach)
    engine = _Voices(priors, ["af_heart", "bf_emma", "jf_alpha", "jm_kumo"])
    done = teaching.teach_all(engine, first="jm_kumo")  # type: ignore[arg-type]
    assert order == ["blend", "jm_kumo", "af_heart", "jf_alpha"]
    assert done == ["blend", "jm_kumo", "af_heart"]
    assert priors.wanted() == []  # the gone voice forgotten, the blend taught
    # Nothing left: the next teacher ends at once, teaching nothing.
    assert teaching.teach_all(engine, first="jm_kumo") == []  # type: ignore[arg-type]
    assert order == ["blend", "jm_kumo", "af_heart", "jf_alpha", "jf_alpha"]
