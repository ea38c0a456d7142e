"""Which model file in a data dir is used: a published name only as the published
file (its sha256), any other file only as a published file renamed or a model of
Kokoro's shape (a user's fine-tune). A look's verdict is kept while the file is
unchanged. Real files: the embedded model, changed copies of it, small ONNX graphs."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from wyoming_kokoro.catalog import data_dirs
from wyoming_kokoro.catalog.assets import prepare_model, resolve
from wyoming_kokoro.catalog.files import MODEL_FILES

INT8 = MODEL_FILES["int8"].name


@pytest.fixture(scope="module")
def published() -> Path:
    """The embedded model, as the run's cache holds it (never written)."""
    return prepare_model(resolve(None, None, []))


def _changed_copy(source: Path, target: Path) -> Path:
    """A copy of `source` with a few bytes of its weights changed (in the last quarter,
    where the generator's big weights are): Kokoro's graph, other numbers, its size."""
    shutil.copyfile(source, target)
    with open(target, "r+b") as out:
        out.seek(source.stat().st_size * 3 // 4)
        data = out.read(8)
        out.seek(-8, os.SEEK_CUR)
        out.write(bytes(b ^ 0x01 for b in data))
    return target


def _stray(path: Path) -> Path:
    """A small ONNX graph with Kokoro's inputs, style width and output name: it speaks
    noise in Kokoro's place."""
    import onnx
    from onnx import TensorProto, helper

    ins = [
        helper.make_tensor_value_info("tokens", TensorProto.INT64, [1, "sequence_length"]),
        helper.make_tensor_value_info("style", TensorProto.FLOAT, [1, 256]),
        helper.make_tensor_value_info("speed", TensorProto.FLOAT, [1]),
    ]
    out = helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 256])
    node = helper.make_node("Identity", ["style"], ["audio"])
    onnx.save(helper.make_model(helper.make_graph([node], "stray", ins, [out])), str(path))
    return path


def _skipped(caplog: pytest.LogCaptureFixture, name: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if name in r.getMessage()]


def test_a_stray_onnx_named_like_kokoro_does_not_replace_the_model(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """It has Kokoro's input names, and every answer was a quarter second of noise."""
    _stray(tmp_path / "stray.onnx")
    with caplog.at_level(logging.WARNING):
        assets = resolve(None, None, [tmp_path])
    assert assets.embedded_model, assets.source
    warned = _skipped(caplog, "stray.onnx")
    assert len(warned) == 1 and "not Kokoro's" in warned[0], warned


def test_a_corrupt_file_under_a_published_name_is_skipped(
    tmp_path: Path, published: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The right size, wrong bytes: the worker refused it and every request failed."""
    _changed_copy(published, tmp_path / INT8)
    with caplog.at_level(logging.WARNING):
        assets = resolve(None, None, [tmp_path])
    assert assets.model != tmp_path / INT8, assets.source
    warned = _skipped(caplog, INT8)
    assert len(warned) == 1 and "sha256" in warned[0], warned


def test_a_fine_tune_of_kokoro_and_a_renamed_published_file_are_used(
    tmp_path: Path, published: Path
) -> None:
    own = tmp_path / "own"
    own.mkdir()
    mine = _changed_copy(published, own / "my-kokoro.onnx")
    assert resolve(None, None, [own]).model == mine
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    (renamed / "kokoro.onnx").symlink_to(published)
    assert resolve(None, None, [renamed]).model == renamed / "kokoro.onnx"


def test_a_verdict_is_kept_until_the_file_changes(
    tmp_path: Path, published: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hashing a 300 MB file at every start would take seconds on a Pi."""
    hashed: list[Path] = []
    real: Callable[[Path], str] = data_dirs.sha256_of

    def counting(path: Path) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(data_dirs, "sha256_of", counting)
    shutil.copyfile(published, tmp_path / INT8)
    for _ in range(2):
        assert resolve(None, None, [tmp_path]).model == tmp_path / INT8
    assert len(hashed) == 1
    stat = (tmp_path / INT8).stat()
    # Its mtime set back to what it was: its ctime changes all the same.
    os.utime(tmp_path / INT8, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    resolve(None, None, [tmp_path])
    assert len(hashed) == 2


def test_a_server_beside_a_stray_onnx_speaks_with_the_model(tmp_path: Path, listener) -> None:
    """End to end: the stray file's noise was every answer, and nothing was logged."""
    from support.server_process import ServerProcess
    from support.wyoming_io import run, synthesize

    _stray(tmp_path / "stray.onnx")
    sentence = "The porch light turns off at midnight."
    with ServerProcess("--data-dir", str(tmp_path), "--idle-timeout", "1") as srv:
        reply = run(synthesize(srv.uri, sentence))
        assert reply.errors == [], "".join(srv.log)
    assert len([line for line in srv.log if "stray.onnx skipped" in line]) == 1, srv.log
    listener.check_later(sentence, reply.audio)
