"""Equal loudness: every voice and blend at the target, volume on top, never clipped.

The meter is pyloudnorm (ITU-R BS.1770-4 integrated loudness, K-weighted, gated).
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from support.run_cache import unlearned
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize

from wyoming_kokoro.audio import to_pcm16
from wyoming_kokoro.catalog.voices import parse_voice
from wyoming_kokoro.synthesis.loudness import (
    LIMIT_DBTP,
    TARGET_LUFS,
    Leveler,
    apply_gain,
    true_peak,
)

TEXT = "Someone is at the front door, and a parcel was left on the porch."
VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
BLENDS = ("jf_alpha(1)+jm_kumo(1)", "jf_nezumi(2)+jf_tebukuro(1)")
# Volume is a gain on whatever was said: a short sentence shows it as well.
SHORT = "The front door is open."


def lufs(pcm: bytes | np.ndarray) -> float:
    import pyloudnorm  # here, not at the top: scipy's import would cost every test process

    audio = np.frombuffer(pcm, np.int16) if isinstance(pcm, bytes) else pcm
    return float(pyloudnorm.Meter(24000).integrated_loudness(audio.astype(np.float64) / 32768))


def test_a_big_gain_is_limited_not_clipped() -> None:
    t = np.arange(24000) / 24000
    loud = (np.sin(2 * np.pi * 440 * t) * 0.9 * 32767).astype(np.int16)
    out = apply_gain(loud, 4.0)
    peak = true_peak(out.astype(np.float64) / 32768).max()
    assert 20 * np.log10(peak) <= LIMIT_DBTP + 0.1
    assert np.abs(out.astype(np.int32)).max() < 32767  # no sample at full scale
    quiet = (loud // 10).astype(np.int16)
    assert np.allclose(apply_gain(quiet, 2.0), quiet.astype(np.int32) * 2, atol=1)  # untouched
    assert apply_gain(loud, 1.0) is loud


def test_an_unknown_voice_is_measured_then_cached(tmp_path: Path) -> None:
    cache = tmp_path / "loudness.json"
    leveler = Leveler(cache, "voices.bin:1:2")
    spec = parse_voice("af_mine", ("af_mine",))
    assert leveler.gain(spec) == 1.0  # nothing known yet
    rng = np.random.default_rng(1)
    second = (rng.standard_normal(24000) * 0.05 * 32767).astype(np.int16)
    for _ in range(3):
        leveler.observe(spec, second)
    guess = leveler.gain(spec)
    assert guess != 1.0 and not cache.exists()  # a first guess, not yet kept
    for _ in range(8):
        leveler.observe(spec, second)
    expected = 10 ** ((TARGET_LUFS - lufs(np.concatenate([second] * 10))) / 20)
    assert leveler.gain(spec) == pytest.approx(expected, rel=0.05)
    assert "af_mine" in json.loads(cache.read_text())["voices.bin:1:2"]
    again = Leveler(cache, "voices.bin:1:2")
    assert again.gain(spec) == pytest.approx(leveler.gain(spec), rel=0.01)
    assert Leveler(cache, "another.bin:1:2").gain(spec) == 1.0  # another file's voice


def test_a_blend_is_the_weighted_mean_of_its_parts() -> None:
    leveler = Leveler(None, "x")
    spec = parse_voice("jf_alpha(1)+jf_tebukuro(3)", ("jf_alpha", "jf_tebukuro"))
    assert leveler.loudness(spec) == pytest.approx(0.25 * -19.78 + 0.75 * -21.25)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    # Nothing learned: every voice's loudness is measured afresh.
    cache = unlearned(tmp_path_factory.mktemp("cache"))
    with ServerProcess("--http", "tcp://127.0.0.1:0", env={"KOKORO_CACHE_DIR": str(cache)}) as s:
        yield s


def test_the_models_overs_are_limited_not_clipped() -> None:
    # jm_kumo overshoots full scale by up to 2 dB on ordinary sentences (peak 1.25
    # measured): converted to 16 bits, those peaks keep their shape, with no flat top.
    t = np.arange(4800) / 24000
    wave = (0.6 * np.sin(2 * np.pi * 150 * t)).astype(np.float32)
    wave[2000:2600] *= 2.1  # a burst 2 dB over full scale
    pcm = to_pcm16(wave)
    full = np.abs(pcm.astype(np.int32)) >= 32767
    assert not (full[2:] & full[1:-1] & full[:-2]).any()  # clipping holds it ~20 samples
    burst = slice(2000, 2600)
    assert np.corrcoef(pcm[burst], wave[burst])[0, 1] > 0.999  # the same shape, quieter
    untouched = slice(200, 1500)  # well away from the burst: as it was
    assert np.abs(pcm[untouched] / 32767 - wave[untouched]).max() < 1e-3
    assert np.array_equal(to_pcm16(wave * 0.5), to_pcm16(wave * 0.5))  # under 1.0: as before


@pytest.mark.slow
def test_voices_and_blends_speak_within_one_lu_of_the_target(served) -> None:
    # The spread before (the engine's own output) is bench/loudness.py's to show.
    after = {}
    for voice in VOICES + BLENDS:
        reply = run(synthesize(served.uri, TEXT, voice))
        assert not reply.errors
        after[voice] = lufs(reply.audio)
    spread = {v: round(x - TARGET_LUFS, 2) for v, x in after.items()}
    assert all(abs(d) <= 1.0 for d in spread.values()), spread


def test_http_volume_multiplier_and_the_limit(served) -> None:
    import re

    port = next(
        int(m.group(1))
        for line in served.log
        if (m := re.search(r"HTTP API on http://127\.0\.0\.1:(\d+)", line))
    )

    def speak(**extra: object) -> bytes:
        body = {"input": SHORT, "voice": "jm_kumo", "response_format": "pcm", **extra}
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/audio/speech",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.read()

    normal, half, loud = speak(), speak(volume_multiplier=0.5), speak(volume_multiplier=4)
    assert lufs(half) - lufs(normal) == pytest.approx(-6.02, abs=0.3)
    peak = true_peak(np.frombuffer(loud, np.int16).astype(np.float64) / 32768).max()
    assert 20 * np.log10(peak) <= LIMIT_DBTP + 0.3  # four times louder, and no clipping
    with pytest.raises(urllib.error.HTTPError) as refused:
        speak(volume_multiplier="loud")
    assert refused.value.code == 400
