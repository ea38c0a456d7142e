"""Download and verify the Kokoro model files (stdlib only, resumable, atomic)."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.client import HTTPException, HTTPResponse
from pathlib import Path
from typing import TextIO

from wyoming_kokoro.catalog.assets import check_file, embedded_is, mark_verified, sha256_of
from wyoming_kokoro.catalog.files import (
    DEFAULT_DOWNLOAD_URL,
    MODEL_FILES,
    VOICES_FILE,
    AssetError,
    KnownFile,
)

_LOGGER = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]  # (file name, bytes done, total bytes)

_CHUNK = 64 * 1024
LOG_EVERY = 5.0  # seconds between a download's progress lines in a log


class DownloadError(Exception):
    """A download failed; the message is one sentence meant for the user."""


class FileCheckError(DownloadError, ValueError):
    """A file on disk does not match its expected size or sha256."""


def _problem(path: Path, known: KnownFile) -> str | None:
    """Describe why *path* is not *known*, or return None when it matches."""
    size = path.stat().st_size
    if size != known.size:
        why = "truncated download" if size < known.size else "wrong or corrupted file"
        return f"expected {known.size} bytes, got {size} ({why})"
    if sha256_of(path) != known.sha256:
        return "sha256 mismatch (corrupted download)"
    return None


def verify_file(path: Path, known: KnownFile) -> None:
    """Raise FileCheckError unless *path* has the expected size and sha256."""
    try:
        problem = _problem(path, known)
    except OSError as exc:
        raise FileCheckError(f"{path}: cannot read file: {exc.strerror or exc}") from exc
    if problem:
        raise FileCheckError(f"{path}: {problem}")


def _fs_error(exc: OSError, directory: Path) -> DownloadError:
    if exc.errno == errno.ENOSPC:
        return DownloadError(f"disk full while writing to {directory}; free some space and retry")
    reason = exc.strerror or str(exc)
    return DownloadError(f"cannot write to directory {directory}: {reason}")


def _fsync_dir(directory: Path) -> None:
    # Makes the rename durable on POSIX; Windows cannot open directories, so skip there.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _open(url: str, offset: int, timeout: float) -> HTTPResponse:
    request = urllib.request.Request(url, headers={"User-Agent": "wyoming-kokoro"})
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    try:
        return urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:
            raise  # handled by the caller: the partial file is unusable
        raise DownloadError(f"{url}: server answered {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        raise DownloadError(f"cannot reach {url}: {exc.reason} (are you offline?)") from exc
    except (OSError, HTTPException) as exc:
        raise DownloadError(f"cannot reach {url}: {exc or type(exc).__name__}") from exc


def download_file(
    url: str,
    dest: Path,
    known: KnownFile,
    progress: ProgressFn | None = None,
    timeout: float = 30.0,
) -> Path:
    """Fetch *url* into *dest* unless a verified copy is already there.

    Data goes to ``<dest>.part`` first, so an interrupted download resumes with
    an HTTP Range request on the next call and *dest* only ever appears whole.
    """
    dest = Path(dest)
    if dest.is_file():
        try:
            # Hashed once and stamped: a Pi does not read the whole model again at every start.
            check_file(dest, known)
            _LOGGER.debug("%s already present and verified", dest)
            return dest
        except AssetError as exc:
            _LOGGER.warning("%s; downloading it again", exc)

    directory = dest.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _fs_error(exc, directory) from exc

    part = dest.with_name(dest.name + ".part")
    offset = part.stat().st_size if part.is_file() else 0
    if offset > known.size:
        offset = 0  # cannot be a prefix of the right file

    if offset < known.size:
        resumed = f", {_mb(offset)} there already" if offset else ""
        _LOGGER.info("Downloading %s (%s%s)", known.name, _mb(known.size), resumed)
        try:
            response = _open(url, offset, timeout)
        except urllib.error.HTTPError:
            _LOGGER.warning("server refused to resume %s; starting again", known.name)
            offset = 0
            response = _open(url, 0, timeout)
        with response:
            _receive(response, part, offset, known, progress)

    problem = _problem(part, known)
    if problem:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{known.name}: {problem}; the partial file was removed")
    try:
        os.replace(part, dest)
    except OSError as exc:
        raise _fs_error(exc, directory) from exc
    _fsync_dir(directory)
    mark_verified(dest, known)  # hashed just above: the first load need not hash again
    _LOGGER.info("Downloaded %s into %s", known.name, directory)
    return dest


def _receive(
    response: HTTPResponse, part: Path, offset: int, known: KnownFile, progress: ProgressFn | None
) -> None:
    """Write the response body to *part*, appending after *offset* bytes on a 206."""
    if offset and response.status != 206:
        _LOGGER.info("server ignored the Range request for %s; restarting", known.name)
        offset = 0
    elif offset:
        _LOGGER.info("resuming %s at byte %d", known.name, offset)
    length = response.headers.get("Content-Length")
    expected = int(length) if length and length.isdigit() else known.size - offset
    done, error = offset, None
    try:
        with part.open("ab" if offset else "wb") as f:
            while done <= known.size:  # stop early when oversized; the size check reports it
                if progress:
                    progress(known.name, done, known.size)
                try:
                    chunk = response.read(_CHUNK)
                except (OSError, HTTPException) as exc:
                    chunk, error = b"", exc
                if not chunk:
                    break
                f.write(chunk)
                done += len(chunk)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise _fs_error(exc, part.parent) from exc
    # http.client does not raise when a body ends early, so compare with the header.
    if done <= known.size and (error is not None or done - offset < expected):
        reason = f" ({error})" if error else ""
        raise DownloadError(
            f"download of {known.name} was interrupted after {done} of {known.size} bytes"
            f"{reason}; run again to resume"
        )


def download_model(
    variant: str,
    dest_dir: Path,
    base_url: str = DEFAULT_DOWNLOAD_URL,
    progress: ProgressFn | None = None,
    *,
    model_files: dict[str, KnownFile] | None = None,
    voices_file: KnownFile | None = None,
    timeout: float = 30.0,
) -> tuple[Path | None, Path]:
    """Fetch the *variant* model and the voices file into *dest_dir*; the model's
    path, or None when the embedded model is that very file (nothing to fetch)."""
    files = MODEL_FILES if model_files is None else model_files
    voices = VOICES_FILE if voices_file is None else voices_file
    if variant not in files:
        raise DownloadError(f"unknown model variant {variant!r}; choose one of: {', '.join(files)}")
    model: Path | None = None
    known = files[variant]
    if embedded_is(known):
        # The installed model is the published file, byte for byte: only voices are missing.
        _LOGGER.info("%s is the embedded model: only the voices are downloaded", known.name)
    else:
        model = _fetch(base_url, dest_dir, known, progress, timeout)
    return model, _fetch(base_url, dest_dir, voices, progress, timeout)


def _fetch(
    base_url: str, dest_dir: Path, known: KnownFile, progress: ProgressFn | None, timeout: float
) -> Path:
    url = f"{base_url.rstrip('/')}/{known.name}"
    return download_file(url, Path(dest_dir) / known.name, known, progress, timeout)


def _mb(size: int) -> str:
    return f"{size / 1e6:.0f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB"


class LogProgress:
    """Progress as a log line every *every* seconds (a log is no terminal)."""

    def __init__(self, every: float | None = None) -> None:
        self._every = LOG_EVERY if every is None else every
        self._name: str | None = None
        self._next = 0.0

    def __call__(self, name: str, done: int, total: int) -> None:
        now = time.monotonic()
        if name != self._name:  # download_file's own line says where it begins
            self._name, self._next = name, now + self._every
        elif now >= self._next and done < total:
            self._next = now + self._every
            _LOGGER.info("Downloading %s: %s of %s", name, _amount(done, total), _mb(total))


def _amount(done: int, total: int) -> str:
    if total < 1e6:
        return f"{done / 1e3:.0f}"
    return f"{done / 1e6:.1f}" if total < 1e7 else f"{done / 1e6:.0f}"


def progress_for(stream: TextIO | None = None) -> ProgressFn:
    """A bar on a terminal, else lines in the log."""
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return ConsoleProgress(stream)
    return LogProgress()


class ConsoleProgress:
    """Progress bar on stderr for ``--download``; silent unless a terminal or forced."""

    def __init__(self, stream: TextIO | None = None, force: bool = False, width: int = 30) -> None:
        self._stream = stream if stream is not None else sys.stderr
        isatty = getattr(self._stream, "isatty", None)
        self._enabled = force or bool(isatty and isatty())
        self._width = width
        self._name: str | None = None
        self._start = self._last = 0.0
        self._start_bytes = 0

    def __call__(self, name: str, done: int, total: int) -> None:
        if not self._enabled:
            return
        now = time.monotonic()
        if name != self._name:
            self._name, self._start, self._start_bytes, self._last = name, now, done, 0.0
        finished = done >= total
        if not finished and now - self._last < 0.1:
            return  # redrawing every 64 KiB chunk would flood slow terminals
        self._last = now
        frac = min(done / total, 1.0) if total else 1.0
        filled = int(frac * self._width)
        rate = (done - self._start_bytes) / max(now - self._start, 1e-3) / 1e6
        self._stream.write(
            f"\r{name} [{'#' * filled}{'-' * (self._width - filled)}] "
            f"{done / 1e6:.1f}/{total / 1e6:.1f} MB {frac:4.0%} {rate:.1f} MB/s"
        )
        if finished:
            self._stream.write("\n")
        self._stream.flush()
