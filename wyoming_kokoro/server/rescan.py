"""The data dirs looked at again on `describe`: new presets, lexicon and voices files.

Home Assistant describes every 30 s and rebuilds its voice lists, so a presets or
voices file dropped into a data dir shows up there without a restart. The presets
and lexicon files cost a describe a few stat() calls; one is read again only when
its size or mtime changed, in a thread (a large presets file takes PyYAML seconds):
the describe that finds it waits for the read a little, the other clients not at
all. Voices and model files are looked at (one stat() each: a data dir may hold
thousands) and resolved in a thread that no describe waits for; what changed appears
at a later describe. Nothing here starts the worker or tells the scheduler of
activity: describes never keep a worker alive.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.presets import Preset
from wyoming_kokoro.catalog.presets_file import PRESETS_FILE, PresetFiles
from wyoming_kokoro.server.offer import Offer
from wyoming_kokoro.text.g2p import LEXICON_NAME, load_lexicons

_LOGGER = logging.getLogger(__name__)

_VOICE_SUFFIXES = (".bin", ".npz", ".onnx")
Signature = tuple[tuple[str, int, int], ...]
# How long a describe waits for changed presets or lexicon to be read; a longer
# read goes on, and its result shows at a later describe.
READ_WAIT_S = 0.5
# A look at the voices files waits this many times its own duration after the last:
# a data dir of thousands of files then costs a bounded share of a core.
LOOK_PACE = 10


def _signature(paths: list[Path]) -> Signature:
    found = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(found)


class Rescanner:
    """Keeps a Offer, a lexicon and the worker's assets in step with the data dirs."""

    def __init__(
        self,
        data_dirs: tuple[Path, ...],
        offer: Offer,
        lexicon: dict[str, str],
        resolve_assets: Callable[[], Assets],
        on_assets: Callable[[Assets], None],
        on_lexicon: Callable[[dict[str, str]], None] | None = None,
    ) -> None:
        """`on_lexicon`: given the lexicon read anew when it changed (the loaded
        worker has the old one: it must give way)."""
        self._dirs = data_dirs
        self._offer = offer
        self._lexicon = lexicon  # the one read last (kept up to date in place)
        self._resolve = resolve_assets
        self._on_assets = on_assets
        self._on_lexicon = on_lexicon
        # Start-up read the same files: their texts now are the last good ones.
        self._presets = PresetFiles(data_dirs)
        self._presets.remember()
        self._texts = _signature(self._text_files())
        self._voices = _signature(self._voice_files())
        self._looking: asyncio.Task[None] | None = None
        self._next_look = 0.0
        self._reading: asyncio.Task[None] | None = None
        self._lock = threading.Lock()

    def _text_files(self) -> list[Path]:
        return [d / name for d in self._dirs for name in (PRESETS_FILE, LEXICON_NAME)]

    def _voice_files(self) -> list[Path]:
        files: list[Path] = []
        for directory in self._dirs:
            try:
                files += [p for p in directory.iterdir() if p.suffix in _VOICE_SUFFIXES]
            except OSError:
                continue
        return sorted(files)

    async def refresh(self) -> None:
        """Look at the data dirs; re-read what changed (call on the event loop)."""
        texts = _signature(self._text_files())
        if texts != self._texts and (self._reading is None or self._reading.done()):
            self._texts = texts
            _LOGGER.info("Presets or lexicon changed: reading them again")
            self._reading = asyncio.get_running_loop().create_task(self._reread())
        idle = self._looking is None or self._looking.done()
        if idle and time.monotonic() >= self._next_look:
            self._looking = asyncio.get_running_loop().create_task(self._look())
        if self._reading is not None and not self._reading.done():
            await asyncio.wait({self._reading}, timeout=READ_WAIT_S)

    async def reread(self) -> None:
        """Read presets and lexicon again now and wait for it: the page saved one, and
        its next request must find it (a stat() alone could miss a change made within
        the file system's time step)."""
        while self._reading is not None and not self._reading.done():
            await asyncio.wait({self._reading})
        self._texts = _signature(self._text_files())
        self._reading = asyncio.get_running_loop().create_task(self._reread())
        await asyncio.wait({self._reading})

    def _load_presets(self, voice_names: tuple[str, ...]) -> dict[str, Preset]:
        with self._lock:  # one reader of the files' last good texts at a time
            return self._presets.load(voice_names)

    async def _reread(self) -> None:
        voice_names = self._offer.voice_names
        presets, lexicon = await asyncio.to_thread(
            lambda: (self._load_presets(voice_names), load_lexicons(self._dirs))
        )
        if self._offer.voice_names == voice_names:  # else _reresolve read them anew
            self._offer.update(voice_names, presets)
        if lexicon == self._lexicon:
            return  # the presets changed, or the file's time only
        self._lexicon.clear()
        self._lexicon.update(lexicon)
        if self._on_lexicon is not None:
            self._on_lexicon(dict(lexicon))

    async def _look(self) -> None:
        # Listed and stat()ed in a thread: not by file count on the event loop. The
        # data dirs' own mtimes would not do: a file copied over another in place,
        # or still being written, changes only its own.
        started = time.monotonic()
        voices = await asyncio.to_thread(lambda: _signature(self._voice_files()))
        self._next_look = time.monotonic() + LOOK_PACE * (time.monotonic() - started)
        if voices != self._voices:
            self._voices = voices
            await self._reresolve()

    async def _reresolve(self) -> None:
        try:
            assets = await asyncio.to_thread(self._resolve)
        except Exception as err:  # a half-copied file: tried again when it changes
            _LOGGER.warning("Voices or model files changed but cannot be used: %s", err)
            return
        if assets.voice_names != self._offer.voice_names:
            _LOGGER.info("Voices now: %s (%s)", ", ".join(assets.voice_names), assets.source)
            presets = await asyncio.to_thread(self._load_presets, assets.voice_names)
            self._offer.update(assets.voice_names, presets)
        self._on_assets(assets)
