"""The rescan reads changed presets and lexicon files in a thread: a describe that finds
a large presets file (a 256 KB one takes PyYAML seconds) must not hold every other
client's describe and audio meanwhile; a small one still shows at that describe."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.presets_file import PresetFiles
from wyoming_kokoro.server.offer import Offer
from wyoming_kokoro.server.rescan import Rescanner

VOICES = ("jm_kumo", "af_heart")


def _no_assets() -> Any:
    raise AssertionError("no voices file changed")


def test_changed_presets_are_read_off_the_event_loop_and_shown_at_that_describe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    load = PresetFiles.load

    def recorded(self: PresetFiles, *args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return load(self, *args, **kwargs)

    async def main() -> tuple[str, ...]:
        offer = Offer(VOICES, {}, VOICES[0], streaming=True)
        lexicon: dict[str, str] = {}
        rescanner = Rescanner((tmp_path,), offer, lexicon, _no_assets, lambda _: None)
        offer.refresh = rescanner.refresh
        monkeypatch.setattr(PresetFiles, "load", recorded)
        (tmp_path / "presets.yaml").write_text("slow:\n  voice: jm_kumo\n  speed: 0.8\n")
        (tmp_path / "lexicon.txt").write_text("zorp  garage door\n")
        await offer.refresh()
        assert lexicon == {"zorp": "garage door"}
        return offer.names

    names = asyncio.run(main())
    assert "slow" in names
    assert threads and threading.main_thread().name not in threads, threads


def test_voices_files_are_looked_at_off_the_event_loop_and_a_rewrite_in_place_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A describe stat()ed every voices file on the event loop: with 100,000 junk files
    in a data dir, 1.1 s per describe, longer than Home Assistant waits for one."""
    import os

    for i in range(300):
        (tmp_path / f"junk{i:03d}.npz").write_bytes(b"x")
    on_loop: list[str] = []  # the data dir listed, a voices file stat()ed
    stat, listdir, scandir = os.stat, os.listdir, os.scandir

    def looked(path: Any) -> None:
        voices_file = str(path).endswith(".npz") or str(path) == str(tmp_path)
        if voices_file and threading.current_thread() is threading.main_thread():
            on_loop.append(str(path))

    def recorded(path: Any, *args: Any, **kwargs: Any) -> Any:
        looked(path)
        return stat(path, *args, **kwargs)

    def listed(path: Any = ".") -> Any:
        looked(path)
        return listdir(path)

    def scanned(path: Any = ".") -> Any:
        looked(path)
        return scandir(path)

    resolved: list[int] = []

    def resolve() -> Any:
        resolved.append(1)
        return Assets(tmp_path / "m.onnx", tmp_path / "v.npz", VOICES, "test")

    async def main() -> None:
        offer = Offer(VOICES, {}, VOICES[0], streaming=True)
        rescanner = Rescanner((tmp_path,), offer, {}, resolve, lambda _: None)
        offer.refresh = rescanner.refresh
        monkeypatch.setattr(os, "stat", recorded)
        monkeypatch.setattr(os, "listdir", listed)
        monkeypatch.setattr(os, "scandir", scanned)
        for _ in range(3):
            await offer.refresh()  # nothing changed
            await asyncio.sleep(0.05)
        assert not resolved
        # Rewritten in place, same size (cp over a file): the data dir's own mtime
        # stays, the file's changes.
        dir_mtime = stat(tmp_path).st_mtime_ns
        (tmp_path / "junk007.npz").write_bytes(b"z")
        assert stat(tmp_path).st_mtime_ns == dir_mtime
        for _ in range(200):
            await offer.refresh()
            if resolved:
                break
            await asyncio.sleep(0.05)

    asyncio.run(main())
    assert resolved, "a file rewritten in place was not noticed"
    assert not on_loop, on_loop[:3]
