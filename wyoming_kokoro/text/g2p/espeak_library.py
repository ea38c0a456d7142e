"""espeak-ng loaded without a temporary copy per phonemizer backend.

phonemizer copies libespeak-ng into a fresh temporary directory for every espeak
backend it makes (the library keeps global state, so each live backend needs its own
loaded copy), and kokoro-onnx makes a backend per call. A process killed meanwhile
left its copies in the temporary directory, and a full or read-only one stopped the
phonemizer altogether. Here a backend takes a "slot" instead: the first the library
in place, further backends alive at the same time a copy kept in the cache, named
after the library's size and mtime so it is made once, not per run. A slot is given
back when its backend is finalized (which phonemizer's voice-list cache prevented:
fixed here too); without a writable cache, phonemizer's own copy is used as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import filecmp
import logging
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

_LOGGER = logging.getLogger(__name__)

_lock = threading.Lock()
_taken: set[int] = set()  # slots held by live backends in this process
_installed = False


def install() -> None:
    """Make phonemizer's espeak backends load the library through slots (idempotent;
    without phonemizer, nothing to do)."""
    global _installed
    with _lock:
        if _installed:
            return
        try:
            from phonemizer.backend.espeak import wrapper
        except ImportError:
            return
        wrapper.EspeakAPI = _slotted_api(wrapper.EspeakAPI)
        uncached = getattr(wrapper.EspeakWrapper.available_voices, "__wrapped__", None)
        if uncached is not None:
            wrapper.EspeakWrapper.available_voices = _voices_cached_per_library(uncached)
        _installed = True


def _voices_cached_per_library(uncached: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    """phonemizer caches the voice list with an lru_cache on the method, which keeps
    every espeak backend ever made alive (with its library and its slot or copy): one
    more per phonemized call. Cached per library and data instead, as the list is."""
    found: dict[tuple[str, str, str | None], list[Any]] = {}

    def available_voices(self: Any, name: str | None = None) -> list[Any]:
        key = (str(self.library()), str(self.data_path), name)
        if key not in found:
            found[key] = uncached(self, name)
        return found[key]

    return available_voices


def _take_slot() -> int:
    with _lock:
        slot = next(n for n in range(len(_taken) + 1) if n not in _taken)
        _taken.add(slot)
        return slot


def _give_back(slot: int) -> None:
    with _lock:
        _taken.discard(slot)


def cached_copy(original: Path, slot: int) -> Path:
    """The library's copy for `slot` (1, 2, …) in the cache, made on first use
    (OSError if the cache cannot hold it)."""
    from wyoming_kokoro.catalog.places import cache_dir

    info = original.stat()
    directory = cache_dir() / "espeak" / f"{info.st_size}-{info.st_mtime_ns}" / str(slot)
    target = directory / original.name
    # Compared byte for byte (cheap at its size): only the very library is loaded.
    if target.is_file() and filecmp.cmp(original, target, shallow=False):
        return target
    directory.mkdir(parents=True, exist_ok=True)
    # Written beside it and renamed: another process may load it at any moment.
    fd, partial = tempfile.mkstemp(prefix=f".{original.name}.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out, original.open("rb") as source:
            shutil.copyfileobj(source, out)
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
    return target


def _slotted_api(base: type) -> type:
    """A subclass of phonemizer's EspeakAPI that loads its library through a slot."""

    class SlottedEspeakAPI(base):  # type: ignore[misc,valid-type]
        def __init__(self, library: str | Path, data_path: str | Path | None) -> None:
            self._library = None  # as the base does: its finalizer may look at it
            try:
                original = self._shared_library_path(ctypes.cdll.LoadLibrary(str(library)))
            except (OSError, RuntimeError):
                super().__init__(library, data_path)  # its own error message
                return
            slot = _take_slot()
            try:
                path = original if slot == 0 else cached_copy(original, slot)
                loaded = ctypes.cdll.LoadLibrary(str(path))
            except OSError as err:
                _give_back(slot)
                _LOGGER.debug("espeak-ng slot %d unavailable (%s): a temporary copy", slot, err)
                super().__init__(library, data_path)
                return
            # Never `self` in the finalizer: it would keep the backend alive.
            weakref.finalize(self, _release, loaded, slot)
            self._library = loaded
            self._tempdir = None
            self._library_path = original
            data = str(data_path).encode("utf-8") if data_path is not None else None
            if loaded.espeak_Initialize(0x02, 0, data, 0) <= 0:  # synchronous output
                raise RuntimeError("failed to initialize espeak shared library")

    return SlottedEspeakAPI


def _release(library: Any, slot: int) -> None:
    with contextlib.suppress(AttributeError, OSError):
        library.espeak_Terminate()  # frees its state; the next backend initializes again
    _give_back(slot)
