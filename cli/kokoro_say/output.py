"""Where the audio goes: an audio file replaced atomically, or a stream.

A regular file (new, existing, or behind a symlink) is written to a temporary file
beside it and renamed over it only when complete, so a failed run leaves no partial
file; it is read back first, as libsndfile does not report a write that fails while
it closes a FLAC or OGG file. Anything else (stdout, a FIFO, /dev/null, another
device) is written to directly: renaming over it would replace the device node or
leave a FIFO's reader waiting forever.
"""

from __future__ import annotations

import fcntl
import io
import logging
import os
import stat
import struct
import sys
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import numpy as np
import soundfile

from wyoming_kokoro.audio import CHANNELS, SAMPLE_RATE, SAMPLE_WIDTH

from . import native_stderr, partial
from .formats import FORMATS, available_formats

_LOGGER = logging.getLogger(__name__)

# A streamed WAV's RIFF and data sizes while the length is unknown; readers
# (libsndfile, Python's wave, ffmpeg, sox) read such a stream to its end.
_UNKNOWN_SIZE = 0xFFFFFFFF
_WAV_HEADER_BYTES = 44


def failed(path: str, err: OSError) -> OSError:
    """An operating-system error as one line for the user: their path and the reason
    in words, not an errno and the partial file's name."""
    reason = (err.strerror or str(err)).lower()
    return OSError(f"cannot write {path}: {reason}")


def wav_header(data_bytes: int = _UNKNOWN_SIZE) -> bytes:
    """A 16-bit PCM WAV header; without a length, the sizes say "unknown" (streamed)."""
    riff = _UNKNOWN_SIZE if data_bytes == _UNKNOWN_SIZE else data_bytes + 36
    block = CHANNELS * SAMPLE_WIDTH
    return (
        b"RIFF"
        + struct.pack("<I", riff)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, CHANNELS, SAMPLE_RATE, SAMPLE_RATE * block, block, 16)
        + b"data"
        + struct.pack("<I", data_bytes)
    )


def _umask() -> int:
    # The only portable way to read it is to set it; kokoro-say is one thread here.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _same_file(known: os.stat_result, path: str) -> bool:
    try:
        return os.path.samestat(known, os.stat(path))
    except OSError:
        return False


def _patchable(out: BinaryIO) -> bool:
    """Whether a finished stream's WAV header can be rewritten in place: a regular
    file we can seek in (stdout redirected to a file), not opened for appending."""
    try:
        fd = out.fileno()
        return stat.S_ISREG(os.fstat(fd).st_mode) and not (
            fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND
        )
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


class AudioSink:
    """Writes int16 chunks to a file that appears under its name only when complete,
    or to a stream (stdout, a FIFO, a device) as they come."""

    def __init__(self, path: str, fmt: str) -> None:
        if fmt not in FORMATS and fmt != "raw":
            raise ValueError(
                f"unknown format {fmt!r}; choose from {', '.join(available_formats())}"
            )
        if fmt != "raw" and fmt not in available_formats():
            raise ValueError(f"this libsndfile cannot write {fmt}")
        self._path = path
        self._format = fmt
        self._file: soundfile.SoundFile | None = None  # libsndfile's writer
        self._raw: BinaryIO | None = None  # raw PCM into the temporary file
        # A regular file: the temporary file, its final name and mode.
        self._tmp: str | None = None
        self._final = ""
        self._mode = 0
        self._owner: tuple[int, int] | None = None
        # A stream: where it goes, whether we opened it, and what is held back.
        self._out: BinaryIO | None = None
        self._close_out = False
        self._buffer: io.BytesIO | None = None  # compressed formats: sent when complete
        self._header_at: int | None = None  # streamed WAV: where its header starts
        self._data_bytes = 0
        self._frames = 0  # samples given to libsndfile, to check the file against

        if path == "-":
            self._open_stream(sys.stdout.buffer, close=False)
            return
        try:
            existing: os.stat_result | None = os.stat(path)  # through symlinks
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise OSError(f"cannot write {path}: it is a directory")
        # Replace the symlink's target, so the link stays a link.
        final = os.path.realpath(path)
        if existing is not None and not (
            stat.S_ISREG(existing.st_mode) and _same_file(existing, final)
        ):
            # A FIFO or device; or a /dev/stdout-style link to one that has no path.
            try:
                stream = open(path, "wb")  # noqa: SIM115 (closed in __exit__)
            except OSError as err:
                raise failed(path, err) from err
            self._open_stream(stream, close=True)
            return
        directory = os.path.dirname(final)
        if not os.path.isdir(directory):
            shown = directory if os.path.islink(path) else os.path.dirname(path) or "."
            raise OSError(f"cannot write {path}: directory {shown} does not exist")
        if existing is not None:
            self._mode = stat.S_IMODE(existing.st_mode)
            self._owner = (existing.st_uid, existing.st_gid)
        else:
            self._mode = 0o666 & ~_umask()  # what open() would have given it
        self._final = final
        try:
            fd, self._tmp = partial.make(final)
        except OSError as err:
            raise failed(path, err) from err
        try:
            if fmt == "raw":
                self._raw = os.fdopen(fd, "wb")
            else:
                os.close(fd)
                self._file = self._soundfile(self._tmp)
        except BaseException:
            Path(self._tmp).unlink(missing_ok=True)
            raise

    def _soundfile(self, target: str | io.BytesIO) -> soundfile.SoundFile:
        major, subtype = FORMATS[self._format]
        try:
            return soundfile.SoundFile(
                target, "w", SAMPLE_RATE, CHANNELS, subtype=subtype, format=major
            )
        except soundfile.SoundFileError as err:
            raise self._failed(err) from err

    def _failed(self, err: soundfile.SoundFileError) -> OSError:
        # libsndfile names the partial file: the user knows the file by their name.
        said = str(err).replace(self._tmp, self._path) if self._tmp else str(err)
        return OSError(f"cannot write {self._path}: {said}")

    def _open_stream(self, out: BinaryIO, close: bool) -> None:
        self._out, self._close_out = out, close
        if self._format in ("wav", "raw"):
            return
        # libsndfile seeks back to finish these headers (length, seek table), which
        # a pipe cannot do: build the file in memory and send it when complete.
        self._buffer = io.BytesIO()
        self._file = self._soundfile(self._buffer)

    def write(self, pcm: np.ndarray) -> None:
        """Add int16 samples."""
        try:
            if self._file is not None:
                self._file.write(pcm)
                self._frames += len(pcm)
                return
            data = pcm.astype("<i2").tobytes()
            if self._raw is not None:
                self._raw.write(data)
                return
            assert self._out is not None
            if self._format == "wav" and self._header_at is None:
                self._header_at = self._out.tell() if _patchable(self._out) else -1
                self._out.write(wav_header())
            self._out.write(data)
            self._out.flush()  # whoever reads the stream hears it now
            self._data_bytes += len(data)
        except soundfile.SoundFileError as err:
            raise self._failed(err) from err
        except OSError as err:  # a full disk, a reader gone
            raise failed(self._path, err) from err

    def _finish(self, complete: bool) -> None:
        """Close everything; when ``complete``, put the audio where it belongs."""
        try:
            if self._file is not None:
                file, self._file = self._file, None
                try:
                    file.close()
                except soundfile.SoundFileError as err:
                    raise self._failed(err) from err
            if self._raw is not None:
                raw, self._raw = self._raw, None
                raw.close()
            if not complete:
                return
            if self._tmp is not None:
                if self._format != "raw":
                    self._check(self._tmp)
                self._commit(self._tmp)
            elif self._out is not None:
                self._end_stream(self._out)
        finally:
            if self._tmp is not None:
                Path(self._tmp).unlink(missing_ok=True)  # never leave a partial file
            if self._out is not None and self._close_out:
                self._out.close()

    def _check(self, tmp: str) -> None:
        """Read the file back before it takes the name: libsndfile ignores a failed
        write when it closes a FLAC or OGG file (a full disk), leaving it truncated."""
        if self._frames == 0:
            return  # nothing to lose (and libsndfile cannot read an empty FLAC or MP3)
        try:
            with native_stderr.held(), soundfile.SoundFile(tmp) as written:
                frames = sum(len(block) for block in written.blocks(1 << 16, dtype="int16"))
        except (soundfile.SoundFileError, RuntimeError) as err:
            raise OSError(
                f"cannot write {self._path}: it cannot be read back (disk full?)"
            ) from err
        if frames != self._frames:
            raise OSError(
                f"cannot write {self._path}: {frames} of {self._frames} samples could be "
                "read back (disk full?)"
            )

    def _commit(self, tmp: str) -> None:
        try:
            self._put_in_place(tmp)
        except OSError as err:
            raise failed(self._path, err) from err

    def _put_in_place(self, tmp: str) -> None:
        os.chmod(tmp, self._mode)
        if self._owner is not None and self._owner != (os.getuid(), os.getgid()):
            try:  # root rewriting someone's file: keep it theirs
                os.chown(tmp, *self._owner)
            except OSError as err:
                _LOGGER.debug("Could not keep the owner of %s: %s", self._final, err)
        os.replace(tmp, self._final)
        self._tmp = None

    def _end_stream(self, out: BinaryIO) -> None:
        if self._buffer is not None:
            out.write(self._buffer.getvalue())
        elif self._format == "wav":
            if self._header_at is None:  # no audio at all: still a valid WAV
                self._header_at = out.tell() if _patchable(out) else -1
                out.write(wav_header())
            if self._header_at >= 0 and self._data_bytes <= _UNKNOWN_SIZE - 36:
                # A file after all (stdout redirected): give it its real sizes.
                end = out.tell()
                out.seek(self._header_at)
                out.write(wav_header(self._data_bytes))
                out.seek(end)
        out.flush()

    def __enter__(self) -> AudioSink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self._finish(complete=exc_type is None)
        except Exception as err:
            if exc_type is None:
                raise
            # The error that stopped the run is the one to report.
            _LOGGER.debug("Closing %s after an error failed too: %s", self._path, err)
