"""The rescan reads changed presets and lexicon files in a thread: a describe that finds
a large presets file (a 256 KB one takes PyYAML seconds) must not hold every other
client's describe and audio meanwhile; a small one still shows at that describe."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from wyoming_kokoro.catalog.presets import PresetFiles
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
