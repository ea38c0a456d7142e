"""What a long render keeps so that the same command run again continues: a hidden work
dir beside the output (`.NAME.kokoro-say-parts`), one file per finished part.

A part's file is named by a hash of everything that makes its audio (its text, voice,
speed, language, the model and the options that change the sound), so a changed input
or option never finds it. It is written to a temporary name, flushed to disk and then
renamed: a file under a part's name is whole, and its length is checked against its
header when read, so nothing half-written is taken as done. The manifest names the
run's key: a run with another key clears the dir and starts over. A lock keeps two
runs from writing the same output at once. The dir is removed once the output is
complete; a stopped run leaves it on purpose.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import struct
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_kokoro.timeline import WordTime

_LOGGER = logging.getLogger("kokoro_say")

SUFFIX = ".kokoro-say-parts"
_MAGIC = b"KSPART1\n"
_PART = ".part"
_MANIFEST = "manifest.json"
_LOCK = "lock"
_HEAD = struct.Struct("<I")


def key_of(data: Any) -> str:
    """A stable hash of JSON-able `data` (a run's or a part's identity)."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def work_dir_for(output: str) -> Path:
    """The work dir of an output file or directory: hidden, beside it, named from it."""
    final = Path(os.path.realpath(output.rstrip("/") or "/"))
    return final.parent / f".{final.name}{SUFFIX}"


class WorkDir:
    """The finished parts of one output; `open` with the run's key before use."""

    def __init__(self, path: Path, shown: str) -> None:
        self.path = path
        self.shown = shown  # the output as the user named it, for messages
        self._lock: int | None = None

    def open(self, key: str) -> None:
        """Take the lock; clear what another run (another key) or a killed write left."""
        try:
            self.path.mkdir(exist_ok=True)
            fd = os.open(self.path / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            reason = (err.strerror or str(err)).lower()
            raise OSError(f"cannot keep the finished parts of {self.shown}: {reason}") from err
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OSError(f"another kokoro-say is writing {self.shown} now") from None
        self._lock = fd
        if self._manifest_key() != key:
            for entry in self.path.iterdir():
                if entry.name != _LOCK:
                    entry.unlink(missing_ok=True)
            self._write_manifest(key)
        for entry in self.path.glob("*.tmp*"):  # a write cut short (only we hold the lock)
            entry.unlink(missing_ok=True)

    def _manifest_key(self) -> str | None:
        try:
            data = json.loads((self.path / _MANIFEST).read_text(encoding="utf-8"))
            return str(data["key"]) if isinstance(data, dict) else None
        except (OSError, ValueError, KeyError):
            return None

    def _write_manifest(self, key: str) -> None:
        text = json.dumps({"key": key}) + "\n"
        self._atomic(self.path / _MANIFEST, text.encode("utf-8"))

    def done(self, part: str) -> bool:
        """Whether `part` is finished: its file is there and whole."""
        return self.samples(part) is not None

    def samples(self, part: str) -> int | None:
        """A finished part's length in samples; None if it is not finished."""
        try:
            found = self._read(part, header_only=True)
        except OSError:
            return None
        return None if found is None else found[0]

    def save(self, part: str, pcm: np.ndarray, words: list[WordTime]) -> None:
        """Keep a finished part (atomically)."""
        samples = np.ascontiguousarray(pcm, dtype="<i2")
        head = json.dumps({"samples": len(samples), "words": [w.to_list() for w in words]})
        raw = head.encode("utf-8")
        data = _MAGIC + _HEAD.pack(len(raw)) + raw + samples.tobytes()
        self._atomic(self.path / f"{part}{_PART}", data)

    def load(self, part: str) -> tuple[np.ndarray, list[WordTime]]:
        """A finished part's audio and word times (OSError if it is not whole)."""
        try:
            found = self._read(part, header_only=False)
        except OSError:
            found = None
        if found is None or found[2] is None:
            raise OSError(f"a finished part of {self.shown} is gone or damaged: run again")
        return found[2], found[1]

    def _read(
        self, part: str, header_only: bool
    ) -> tuple[int, list[WordTime], np.ndarray | None] | None:
        path = self.path / f"{part}{_PART}"
        with path.open("rb") as file:
            magic = file.read(len(_MAGIC) + _HEAD.size)
            if len(magic) != len(_MAGIC) + _HEAD.size or not magic.startswith(_MAGIC):
                return None
            (length,) = _HEAD.unpack(magic[len(_MAGIC) :])
            try:
                head = json.loads(file.read(length).decode("utf-8"))
                samples = int(head["samples"])
                words = [WordTime.from_list(w) for w in head["words"]]
            except (ValueError, KeyError, TypeError):
                return None
            start = len(magic) + length
            if os.fstat(file.fileno()).st_size != start + 2 * samples:
                return None
            if header_only:
                return samples, words, None
            pcm = np.frombuffer(file.read(), dtype="<i2").astype(np.int16)
        return samples, words, pcm

    def _atomic(self, path: Path, data: bytes) -> None:
        tmp = ""
        try:
            fd, tmp = tempfile.mkstemp(prefix=f"{path.name}.tmp", dir=self.path)
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())  # a reboot must not leave a named, empty part
            os.replace(tmp, path)
        except OSError as err:  # a full disk: the user's output and the reason, no path
            reason = (err.strerror or str(err)).lower()
            raise OSError(f"cannot keep the finished parts of {self.shown}: {reason}") from err
        finally:
            if tmp:
                Path(tmp).unlink(missing_ok=True)
        _fsync_dir(self.path)

    def close(self) -> None:
        """Let go of the lock; the parts stay."""
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def remove(self) -> None:
        """The output is complete: the parts are no longer needed."""
        # Removed before the lock is let go: a run starting meanwhile is refused, and
        # never finds parts that then vanish under it.
        shutil.rmtree(self.path, ignore_errors=True)
        self.close()


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as err:  # some file systems cannot: the rename is still atomic
        _LOGGER.debug("Could not sync %s: %s", path, err)
    finally:
        os.close(fd)
