"""Voices files in a data dir add to the installed voices; a file or a voice in it that
cannot be read is skipped with one warning, and what the worker loads holds only
voices that were checked (never pickles, never arrays of the wrong shape or type)."""

from __future__ import annotations

import io
import logging
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from wyoming_kokoro.catalog.assets import embedded_voices, resolve
from wyoming_kokoro.catalog.files import AssetError
from wyoming_kokoro.catalog.voices import default_voice

EMBEDDED = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOKORO_CACHE_DIR", str(tmp_path / "cache"))


def _real(name: str = "jf_alpha") -> np.ndarray:
    path = embedded_voices()
    assert path is not None
    with np.load(path) as voices:
        return voices[name]


def _loaded(path: Path) -> dict[str, np.ndarray]:
    # As kokoro-onnx reads it (allow_pickle stays False), every voice in turn.
    with np.load(path) as voices:
        return {name: voices[name] for name in voices.files}


def test_a_users_voices_file_adds_to_the_installed_voices(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    np.savez(data / "my_voice.npz", zf_mine=_real("jf_alpha"))
    assets = resolve(None, None, [data])
    assert assets.voice_names == (*EMBEDDED, "zf_mine")
    assert default_voice(assets.voice_names) == "jm_kumo"
    loaded = _loaded(assets.voices)
    assert sorted(loaded) == sorted(assets.voice_names)
    assert np.array_equal(loaded["zf_mine"], _real("jf_alpha"))
    assert np.array_equal(loaded["jm_kumo"], _real("jm_kumo"))
    assert "my_voice.npz" in assets.source


def test_an_installed_name_in_a_users_file_keeps_the_installed_voice(tmp_path: Path) -> None:
    np.savez(tmp_path / "clash.npz", jm_kumo=_real("jf_alpha"), zf_new=_real("jf_nezumi"))
    assets = resolve(None, None, [tmp_path])
    assert assets.voice_names == (*EMBEDDED, "zf_new")
    assert np.array_equal(_loaded(assets.voices)["jm_kumo"], _real("jm_kumo"))


def _hostile(data: Path) -> dict[str, str]:
    """Files an attacker (or a careless copy) leaves in a data dir, by what is wrong."""
    np.savez(data / "pickled.npz", zz_pickle=np.array([{"a": 1}], dtype=object))
    np.savez(data / "shape.npz", zz_shape=np.zeros((10, 256), np.float32))
    np.savez(data / "dtype.npz", zz_dtype=_real().astype(np.float64))
    np.savez(data / "fortran.npz", zz_fortran=np.asfortranarray(_real()))
    (data / "junk.npz").write_bytes(os.urandom(5000))
    (data / "zero.npz").symlink_to("/dev/zero")
    (data / "nowhere.bin").symlink_to(data / "missing")
    good = data / "whole.npz"
    np.savez(good, zz_truncated=_real())
    (data / "truncated.npz").write_bytes(good.read_bytes()[:300_000])
    good.unlink()
    # Written as a stream (sizes after the data): a valid file all the same
    streamed = zipfile.ZipFile(data / "streamed.npz", "w")
    with streamed, streamed.open("zz_streamed.npy", "w") as member:
        np.lib.format.write_array(member, _real())
    # A header that promises a voice, and data that stop short of it
    whole = io.BytesIO()
    np.lib.format.write_array(whole, _real())
    with zipfile.ZipFile(data / "liar.npz", "w") as archive:
        archive.writestr("zz_liar.npy", whole.getvalue()[:1000])
    return {
        "pickled.npz": "zz_pickle",
        "shape.npz": "zz_shape",
        "dtype.npz": "zz_dtype",
        "fortran.npz": "zz_fortran",
        "junk.npz": "",
        "zero.npz": "",
        "truncated.npz": "",
        "liar.npz": "zz_liar",
    }


def test_hostile_voices_files_are_skipped_with_one_warning_each(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    bad = _hostile(data)
    np.savez(data / "mixed.npz", zf_good=_real("jf_nezumi"), zz_evil=np.array([print]))
    with caplog.at_level(logging.WARNING):
        assets = resolve(None, None, [data])
    assert assets.voice_names == (*EMBEDDED, "zf_good", "zz_streamed")
    loaded = _loaded(assets.voices)  # no pickle, no error reading any voice
    assert sorted(loaded) == sorted(assets.voice_names)
    assert all(v.dtype == np.float32 and v.shape == (510, 1, 256) for v in loaded.values())
    messages = [r.getMessage() for r in caplog.records]
    for name in [*bad, "mixed.npz"]:
        about = [m for m in messages if name in m]
        assert len(about) == 1, (name, messages)
    assert "zz_evil" in next(m for m in messages if "mixed.npz" in m)


def test_a_users_file_alone_still_is_a_voice_set(tmp_path: Path, monkeypatch) -> None:
    # Without the embedded voices, the user's file is all there is.
    import wyoming_kokoro.catalog.assets as assets_module

    monkeypatch.setattr(assets_module, "embedded_voices", lambda: None)
    np.savez(tmp_path / "mine.npz", zf_one=_real(), zz_bad=np.zeros(3))
    assets = resolve(None, None, [tmp_path])
    assert assets.voice_names == ("zf_one",)
    assert sorted(_loaded(assets.voices)) == ["zf_one"]
    (tmp_path / "mine.npz").write_bytes(b"junk")
    with pytest.raises(AssetError, match="no voices"):
        resolve(None, None, [tmp_path])


def test_an_explicit_voices_file_is_the_whole_set(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    np.savez(data / "extra.npz", zf_extra=_real())
    mine = tmp_path / "mine.npz"
    np.savez(mine, zf_me=_real(), zz_pickle=np.array([{}], dtype=object))
    assets = resolve(None, mine, [data])
    assert assets.voice_names == ("zf_me",)
    assert sorted(_loaded(assets.voices)) == ["zf_me"]


def test_a_damaged_published_voices_file_leaves_the_embedded_voices(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    np.savez(tmp_path / "voices-v1.0.npz", af_heart=_real())
    (tmp_path / "voices-v1.0.npz").rename(tmp_path / "voices-v1.0.bin")
    with caplog.at_level(logging.WARNING):
        assets = resolve(None, None, [tmp_path])
    assert assets.voice_names == EMBEDDED
    assert [r.getMessage() for r in caplog.records if "voices-v1.0.bin" in r.getMessage()]


def test_a_fifo_or_a_dangling_link_is_not_a_model(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "a.onnx")
    (tmp_path / "b.onnx").symlink_to(tmp_path / "missing.onnx")
    assets = resolve(None, None, [tmp_path])  # would block or fail on the FIFO
    assert assets.embedded_model


def test_a_voice_name_with_a_line_break_is_not_a_voice(tmp_path: Path) -> None:
    """`$` matches before a final newline: "zz_evil\\n" was offered (in `info`, in
    GET /v1/audio/voices) as a voice nobody could choose, its name broken over lines."""
    whole = io.BytesIO()
    np.lib.format.write_array(whole, _real())
    with zipfile.ZipFile(tmp_path / "newline.npz", "w") as archive:
        archive.writestr("zz_evil\n.npy", whole.getvalue())
        archive.writestr("zz_fine.npy", whole.getvalue())
    assert resolve(None, None, [tmp_path]).voice_names == (*EMBEDDED, "zz_fine")


def test_a_symlink_loop_named_npz_is_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`ln -s loop.npz loop.npz` stopped start-up (RuntimeError: Symlink loop) and,
    dropped in while running, made every later voices change "cannot be used"."""
    os.symlink("loop.npz", tmp_path / "loop.npz")
    np.savez(tmp_path / "mine.npz", zf_mine=_real())
    with caplog.at_level(logging.WARNING):
        assets = resolve(None, None, [tmp_path])
    assert assets.voice_names == (*EMBEDDED, "zf_mine")
    about = [r.getMessage() for r in caplog.records if "loop.npz" in r.getMessage()]
    assert len(about) == 1, about


def test_a_voice_with_nan_or_inf_is_skipped_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A voice of NaN was offered and spoke a quarter second of zeros, nothing logged."""
    nan, inf, ninf = _real(), _real(), _real()
    nan[:, :, :8] = np.nan
    inf[509, 0, 255] = np.inf  # the very last value
    ninf[0, 0, 0] = -np.inf  # the very first
    big = _real() * 1e6  # finite: a voice, if a loud one
    np.savez(tmp_path / "bad.npz", zz_nan=nan, zz_inf=inf, zz_ninf=ninf, zz_big=big)
    with caplog.at_level(logging.WARNING):
        assets = resolve(None, None, [tmp_path])
    assert assets.voice_names == (*EMBEDDED, "zz_big")
    loaded = _loaded(assets.voices)
    assert all(np.isfinite(v).all() for v in loaded.values())
    about = [r.getMessage() for r in caplog.records if "bad.npz" in r.getMessage()]
    assert len(about) == 1, about
    assert all(f"{name}: " in about[0] for name in ("zz_nan", "zz_inf", "zz_ninf")), about


def test_many_junk_files_cost_ten_warnings_and_a_count(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """20,000 junk .npz gave 20,000 warnings at start-up and again at every rescan."""
    for i in range(300):
        (tmp_path / f"junk{i:03d}.npz").write_bytes(b"x")
        (tmp_path / f"junk{i:03d}.onnx").write_bytes(b"x")
    with caplog.at_level(logging.WARNING):
        assets = resolve(None, None, [tmp_path])
    assert assets.voice_names == EMBEDDED and assets.embedded_model
    messages = [r.getMessage() for r in caplog.records]
    assert len([m for m in messages if ".npz" in m]) == 10, messages
    assert len([m for m in messages if ".onnx" in m]) == 10, messages
    assert any("290 more voices files skipped" in m for m in messages), messages
    assert any("290 more model files skipped" in m for m in messages), messages
    assert len(messages) == 22, messages
