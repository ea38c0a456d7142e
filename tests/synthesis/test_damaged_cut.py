"""A damaged cut model is never used: its parts' sha256, kept in the `verified` mark,
are checked before a part is read; a part that differs is named in one warning, the
worker speaks with the whole model, and the server cuts the model again.

Each test damages a copy of the run's cut in a cache of its own (never the shared
one: tests/support/run_cache.py links it)."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
from pathlib import Path

import pytest
from support.cores import THREADS
from support.run_cache import playing_the_cut
from support.server_process import ServerProcess
from support.wyoming_io import run, synthesize

from wyoming_kokoro.catalog.assets import Assets, resolve
from wyoming_kokoro.catalog.cut import VERIFIED, cut_dir
from wyoming_kokoro.catalog.files import MODEL_FILES
from wyoming_kokoro.synthesis.graph import GENERATOR, PARTS, PLAN
from wyoming_kokoro.synthesis.loading import ModelLoading

pytestmark = pytest.mark.model

SENTENCE = "The kitchen window is still open."
MODEL = MODEL_FILES["int8"].name


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def own_cut(cache: Path, digests: bool = True) -> Path:
    """`cache` made to hold the model (linked) and a copy of the run's cut, marked
    as a cut made now marks it (each part's sha256 and size) or, without `digests`,
    as one made before; the copy's entry."""
    run_cache = _RUN_CACHES[cache]
    source = cut_dir(run_cache / MODEL, run_cache)
    assert source is not None and (source / VERIFIED).is_file(), "the run has no cut model"
    cache.mkdir(parents=True, exist_ok=True)
    for name in (MODEL, f"{MODEL}.verified"):
        if (run_cache / name).exists():
            (cache / name).symlink_to((run_cache / name).resolve())
    entry = cache / source.name
    entry.mkdir()
    lines = ["20 samples bit-identical"]
    for name in PARTS:
        shutil.copyfile(source / name, entry / name)  # a copy: never the linked file
        lines.append(f"{_sha256(entry / name)} {(entry / name).stat().st_size} {name}")
    (entry / VERIFIED).write_text("\n".join(lines if digests else lines[:1]) + "\n")
    return entry


def poison(part: Path) -> None:
    """A few bytes of the part's largest float weights made NaN: the file still loads,
    and speaks silence or noise."""
    import onnx

    graph = onnx.load(str(part)).graph
    floats = [i for i in graph.initializer if i.data_type == onnx.TensorProto.FLOAT]
    weights = max(floats, key=lambda i: len(i.raw_data)).raw_data
    data = bytearray(part.read_bytes())
    at = data.find(weights[:4096])
    assert at > 0
    at += len(weights) // 8 * 4
    data[at : at + 16] = b"\xff" * 16
    part.write_bytes(bytes(data))


_RUN_CACHES: dict[Path, Path] = {}  # a test's own cache -> the run's


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of the test's own, for this process and those it starts."""
    own = tmp_path / "cache"
    _RUN_CACHES[own] = Path(os.environ["KOKORO_CACHE_DIR"])
    monkeypatch.setenv("KOKORO_CACHE_DIR", str(own))
    return own


def _assets() -> Assets:
    return resolve(None, None, [])


def _load() -> ModelLoading:
    loading = ModelLoading(_assets(), THREADS, find_cut=True)
    loading.result()
    return loading


@pytest.mark.parametrize("part", [PLAN, GENERATOR])
def test_a_damaged_part_is_named_not_used_and_removed(
    part: str, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    entry = own_cut(cache)
    poison(entry / part)
    with caplog.at_level(logging.WARNING):
        loading = _load()
    assert loading.cut_model is None  # whole calls with the model instead
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1 and part in warned[0], warned
    # Gone: the server sees its mark gone and cuts the model again.
    assert not entry.exists()


def test_a_cut_marked_before_digests_gets_them_on_its_first_good_load(cache: Path) -> None:
    from wyoming_kokoro.catalog import digests

    entry = own_cut(cache, digests=False)
    assert _load().cut_model is not None
    recorded = digests.recorded(entry / VERIFIED)
    assert recorded is not None and set(recorded) == set(PARTS)
    assert not any(digests.mismatch(entry, recorded, name) for name in PARTS)
    # And from now on a damaged part is found.
    for copy in entry.glob("*.opt"):
        shutil.rmtree(copy)  # as on a new CPU: the parts are read again
    poison(entry / GENERATOR)
    assert _load().cut_model is None


@pytest.mark.timeout(300, func_only=True)
def test_a_server_on_a_damaged_cut_speaks_then_cuts_the_model_again(cache: Path, listener) -> None:
    """The worker speaks with the whole model at once; the server cuts the model again
    in the background, and a later burst decodes in windows with the new cut (played
    by the test: support/run_cache.playing_the_cut)."""
    entry = own_cut(cache)
    poison(entry / GENERATOR)
    env = {"KOKORO_CACHE_DIR": str(cache)}
    with contextlib.ExitStack() as held:
        place = held.enter_context(playing_the_cut(entry, _RUN_CACHES[cache]))
        with ServerProcess("--idle-timeout", "1", "--no-teaching", env=env) as srv:
            first = run(synthesize(srv.uri, SENTENCE))
            assert first.errors == [], "".join(srv.log)
            log = "".join(srv.log)
            assert log.count(f"{GENERATOR} does not match its sha256") == 1, log
            assert "whole calls" in log
            assert not entry.exists()  # removed, and cut again:
            assert srv.wait_for(lambda: "holds the model's cut lock" in "".join(srv.log), 60)
            place()
            held.close()
            assert srv.wait_for(lambda: "takes up the cut" in "".join(srv.log), 120)
            assert srv.wait_for(lambda: srv.workers() == [], timeout=30)
            second = run(synthesize(srv.uri, SENTENCE))
            assert second.errors == [], "".join(srv.log)
            assert "first calls in windows" in "".join(srv.log), "".join(srv.log)
    listener.check_later((SENTENCE, SENTENCE), [first.audio, second.audio])
