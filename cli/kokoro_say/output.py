"""Where the audio goes: an audio file written atomically, or raw PCM to stdout."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from types import TracebackType

import numpy as np
import soundfile

from wyoming_kokoro.audio import CHANNELS, SAMPLE_RATE

# format name → (libsndfile major format, subtype)
FORMATS: dict[str, tuple[str, str]] = {
    "wav": ("WAV", "PCM_16"),
    "flac": ("FLAC", "PCM_16"),
    "ogg": ("OGG", "VORBIS"),
    "mp3": ("MP3", "MPEG_LAYER_III"),
}


def available_formats() -> list[str]:
    """The formats this machine's libsndfile can write (mp3 needs libsndfile >= 1.1)."""
    have = soundfile.available_formats()
    return [name for name, (fmt, _) in FORMATS.items() if fmt in have] + ["raw"]


def format_for(path: str, explicit: str | None) -> str:
    """The output format: --format, else the file extension, else raw for stdout."""
    if explicit:
        return explicit.lower()
    if path == "-":
        return "raw"
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in FORMATS:
        raise ValueError(f"cannot tell the audio format from {path!r}; use --format")
    return ext


class AudioSink:
    """Writes int16 chunks; a file only appears under its name when complete."""

    def __init__(self, path: str, fmt: str) -> None:
        self._path = path
        self._format = fmt
        self._tmp: str | None = None
        self._file: soundfile.SoundFile | None = None
        if fmt == "raw" and path == "-":
            return
        if fmt not in FORMATS and fmt != "raw":
            raise ValueError(
                f"unknown format {fmt!r}; choose from {', '.join(available_formats())}"
            )
        if fmt != "raw" and fmt not in available_formats():
            raise ValueError(f"this libsndfile cannot write {fmt}")
        target = Path(path)
        directory = target.parent if str(target.parent) else Path(".")
        if not directory.is_dir():
            raise OSError(f"cannot write {path}: directory {directory} does not exist")
        fd, self._tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
        os.close(fd)
        if fmt != "raw":
            major, subtype = FORMATS[fmt]
            self._file = soundfile.SoundFile(
                self._tmp, "w", SAMPLE_RATE, CHANNELS, subtype=subtype, format=major
            )

    def write(self, pcm: np.ndarray) -> None:
        if self._file is not None:
            self._file.write(pcm)
        elif self._tmp is not None:
            with open(self._tmp, "ab") as out:
                out.write(pcm.astype("<i2").tobytes())
        else:
            sys.stdout.buffer.write(pcm.astype("<i2").tobytes())
            sys.stdout.buffer.flush()

    def __enter__(self) -> AudioSink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._file is not None:
            self._file.close()
        if self._tmp is None:
            return
        if exc_type is None:
            os.replace(self._tmp, self._path)
        else:
            Path(self._tmp).unlink(missing_ok=True)  # never leave a partial file
