"""Where model and voices come from, and how bad files are caught before loading."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from wyoming_kokoro.catalog.assets import (
    check_file,
    embedded_voices,
    prepare_model,
    resolve,
)
from wyoming_kokoro.catalog.files import MODEL_FILES, AssetError, KnownFile
from wyoming_kokoro.catalog.onnx_walk import model_problem


def _voices_file(path: Path, names: list[str]) -> Path:
    with path.open("wb") as handle:  # a handle: savez would add .npz to a name
        np.savez(handle, **{name: np.zeros((510, 1, 256), np.float32) for name in names})
    return path


def _own_model(path: Path, inputs: tuple[str, ...] = ("tokens", "style", "speed")) -> Path:
    """A tiny ONNX model with a Kokoro model's inputs (it computes nothing useful)."""
    import onnx
    from onnx import TensorProto, helper

    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1]) for n in inputs]
    out = helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1])
    node = helper.make_node("Identity", [inputs[0]], ["audio"])
    onnx.save(helper.make_model(helper.make_graph([node], "kokoro", ins, [out])), str(path))
    return path


def test_embedded_default_needs_no_configuration() -> None:
    assets = resolve(None, None, [])
    assert assets.embedded_model
    assert "embedded" in assets.source
    assert set(assets.voice_names) == {
        "jf_alpha",
        "jf_gongitsune",
        "jf_nezumi",
        "jf_tebukuro",
        "jm_kumo",
    }
    assert assets.voices == embedded_voices()


def test_data_dir_wins_over_embedded_and_explicit_wins_over_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wyoming_kokoro.catalog import data_dirs

    data = tmp_path / "data"
    data.mkdir()
    # Small stand-ins for the published models: their sizes and sha256 are what
    # resolve() checks.
    for name in ("kokoro-v1.0.fp16.onnx", "kokoro-v1.0.int8.onnx"):
        made = _own_model(data / name)
        digest = hashlib.sha256(made.read_bytes()).hexdigest()
        monkeypatch.setitem(data_dirs.BY_NAME, name, KnownFile(name, made.stat().st_size, digest))
    pack = _voices_file(data / "voices-v1.0.bin", ["af_heart", "bf_emma"])
    known = KnownFile(pack.name, pack.stat().st_size, "0" * 64)
    monkeypatch.setattr(data_dirs, "VOICES_FILE", known)
    assets = resolve(None, None, [tmp_path / "missing", data])
    assert assets.model == data / "kokoro-v1.0.fp16.onnx"  # best precision first
    assert assets.voice_names == ("af_heart", "bf_emma")
    assert not assets.embedded_model and "data dir" in assets.source

    mine = _voices_file(tmp_path / "mine.npz", ["zz_me"])
    explicit = resolve(data / "kokoro-v1.0.int8.onnx", mine, [data])
    assert (explicit.model.name, explicit.voice_names) == ("kokoro-v1.0.int8.onnx", ("zz_me",))
    assert "explicit" in explicit.source


def test_missing_and_corrupt_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(AssetError, match="model file not found"):
        resolve(tmp_path / "nope.onnx", None, [])
    broken = tmp_path / "voices.bin"
    broken.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(AssetError, match="unreadable or corrupt"):
        resolve(None, broken, [])


def test_truncated_and_corrupted_models_are_refused_before_loading(tmp_path: Path) -> None:
    known = MODEL_FILES["int8"]
    short = tmp_path / known.name
    short.write_bytes(b"x" * 1000)
    with pytest.raises(AssetError, match="truncated"):
        check_file(short)
    with short.open("wb") as file:
        file.truncate(known.size)  # right size, wrong bytes
    with pytest.raises(AssetError, match="corrupt"):
        check_file(short)


def test_a_verified_file_is_not_hashed_again_until_it_changes(tmp_path: Path) -> None:
    import hashlib

    path = tmp_path / "small.bin"
    path.write_bytes(b"hello")
    known = KnownFile("small.bin", 5, hashlib.sha256(b"hello").hexdigest())
    check_file(path, known)
    assert (tmp_path / "small.bin.verified").is_file()
    path.write_bytes(b"hellO")  # same size, new mtime: checked again
    with pytest.raises(AssetError, match="corrupt"):
        check_file(path, known)


def test_embedded_model_is_assembled_once_and_verified(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KOKORO_CACHE_DIR", str(tmp_path))
    assets = resolve(None, None, [])
    model = prepare_model(assets)
    assert model.parent == tmp_path and model.stat().st_size == MODEL_FILES["int8"].size
    # A damaged cache copy is noticed and rebuilt from the packages.
    with model.open("r+b") as file:
        file.seek(1000)
        file.write(b"\x00" * 64)
    assert prepare_model(assets) == model
    check_file(model)
    # The real model passes the look an own model gets before it is used.
    assert model_problem(model) is None


def test_unwritable_cache_loads_the_embedded_model_from_memory(tmp_path: Path, monkeypatch) -> None:
    import hashlib

    from wyoming_kokoro.catalog.assets import CacheUnwritableError, model_file

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")  # unwritable even for root, unlike chmod
    monkeypatch.setenv("KOKORO_CACHE_DIR", str(blocker / "cache"))
    assets = resolve(None, None, [])
    with pytest.raises(CacheUnwritableError, match=r"cannot write the model to .*a-file"):
        prepare_model(assets)
    with model_file(assets) as path:
        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == MODEL_FILES["int8"].sha256
    assert list(tmp_path.iterdir()) == [blocker]


def test_a_truncated_published_model_in_a_data_dir_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A cut-off download under a published name was loaded instead of the embedded
    model, and every request failed ("has 1000000 bytes, expected ...")."""
    import logging

    (tmp_path / MODEL_FILES["int8"].name).write_bytes(b"\x08\x07" * 500_000)
    with caplog.at_level(logging.WARNING):
        assets = resolve(None, None, [tmp_path])
    assert assets.embedded_model, assets.source
    about = [r.getMessage() for r in caplog.records if MODEL_FILES["int8"].name in r.getMessage()]
    assert len(about) == 1 and "1000000 bytes" in about[0], about


def test_an_onnx_file_that_is_no_kokoro_model_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A junk notes.onnx dropped in while the embedded model served was the next burst's
    model, and every request failed (INVALID_PROTOBUF) until it was deleted."""
    import logging

    (tmp_path / "notes.onnx").write_bytes(b"not a model" * 100)
    _own_model(tmp_path / "other.onnx", inputs=("image",))  # a model, not Kokoro
    whole = _own_model(tmp_path / "x.onnx").read_bytes()
    (tmp_path / "x.onnx").unlink()
    (tmp_path / "half.onnx").write_bytes(whole[: len(whole) // 2])  # a copy under way
    with caplog.at_level(logging.WARNING):
        assets = resolve(None, None, [tmp_path])
    assert assets.embedded_model, assets.source
    messages = [r.getMessage() for r in caplog.records]
    for name in ("notes.onnx", "other.onnx", "half.onnx"):
        assert len([m for m in messages if name in m]) == 1, (name, messages)
    # An own model of Kokoro's shape is still used: test_model_files.py.
