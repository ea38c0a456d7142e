"""What the data dirs hold: the first model file that can be used, and the voices
files read and combined into one voice set.

Each file that cannot be used is skipped with a warning (at most `MAX_WARNINGS` per
kind, then one line counts the rest): a bad file must never win over the next one.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from wyoming_kokoro.catalog.digests import sha256_of
from wyoming_kokoro.catalog.files import (
    BY_NAME,
    MODEL_FILES,
    MODEL_PREFERENCE,
    VOICES_FILE,
    AssetError,
)
from wyoming_kokoro.catalog.onnx_walk import model_problem
from wyoming_kokoro.catalog.places import cache_dir
from wyoming_kokoro.catalog.verdicts import remembered

if TYPE_CHECKING:
    from wyoming_kokoro.catalog.voices_file import VoicesFile

_LOGGER = logging.getLogger(__name__)

MAX_WARNINGS = 10  # per kind of file and look at the data dirs; then one line counts the rest


class _Skips:
    """Warnings about files skipped: the first MAX_WARNINGS, then one line counts the rest
    (a data dir full of junk must not flood the log at every rescan)."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._count = 0

    def warn(self, message: str, *args: object) -> None:
        self._count += 1
        if self._count <= MAX_WARNINGS:
            _LOGGER.warning(message, *args)

    def close(self) -> None:
        if self._count > MAX_WARNINGS:
            more = self._count - MAX_WARNINGS
            _LOGGER.warning("%d more %s skipped in whole or in part", more, self._what)


def find_model(data_dirs: list[Path]) -> tuple[Path | None, Path | None]:
    """The first model in the data dirs that can be used; each one skipped is a warning.

    A file that cannot be used must not win over the next candidate (at last the
    embedded model): the worker would refuse it, and every request would fail.
    """
    skips = _Skips("model files")
    try:
        for directory in data_dirs:
            if not directory.is_dir():
                continue
            published = [directory / MODEL_FILES[v].name for v in MODEL_PREFERENCE]
            # Regular files only: a FIFO or a dangling link named *.onnx is not a model.
            others = sorted(
                f for f in directory.glob("*.onnx") if f not in published and f.is_file()
            )
            for candidate in [p for p in published if p.is_file()] + others:
                problem = _model_problem(candidate)
                if problem is None:
                    return candidate, directory
                skips.warn("Model file %s skipped: %s", candidate, problem)
        return None, None
    finally:
        skips.close()


def _model_problem(path: Path) -> str | None:
    """Why `path` cannot be the model; None when it may be. A published name's size
    at once; the rest (its sha256, or an own model's shape) once per file's version
    (verdicts.py)."""
    known = BY_NAME.get(path.name)
    try:
        size = path.stat().st_size
    except OSError as err:
        return f"cannot read it ({err.strerror or err})"
    if known is not None and size != known.size:
        return f"{size} bytes, expected {known.size} (truncated or wrong file)"
    return remembered(path, _look)


def _look(path: Path) -> str | None:
    """A published name must be the published file; any other file a published file
    renamed, or a model of Kokoro's shape (onnx_walk.py: a user's fine-tune)."""
    known = BY_NAME.get(path.name)
    try:
        problem = model_problem(path, inputs=False)
        if problem is not None:
            return problem
        size = path.stat().st_size
        alike = [k for k in MODEL_FILES.values() if k.size == size]
        if known is not None or alike:
            digest = sha256_of(path)
            if known is not None:
                if digest == known.sha256:
                    return None
                return "not the published file (sha256 mismatch): corrupt or another model"
            if any(k.sha256 == digest for k in alike):
                return None
    except OSError as err:
        return f"cannot read it ({err.strerror or err})"
    return model_problem(path, inputs=True)


def voices_sources(data_dirs: list[Path], fallback: Path | None) -> list[Path]:
    """The voices files to read, the installed set first, then the users' own.

    The installed set is the published voices file of the first data dir that has
    it, else `fallback` (the embedded voices). Every other .bin or .npz of the data
    dirs adds its voices to it: a voice dropped in must not take the installed ones away.
    """
    published = None
    for directory in data_dirs:
        candidate = directory / VOICES_FILE.name
        if not candidate.is_file():
            continue
        size = candidate.stat().st_size
        if size == VOICES_FILE.size:
            published = candidate
            break
        # The worker would refuse it (sha256) and speak with nothing: skip it now.
        _LOGGER.warning(
            "Voices file %s skipped: %d bytes, expected %d (truncated or wrong file)",
            candidate,
            size,
            VOICES_FILE.size,
        )
    base = published or fallback
    found = [base] if base is not None else []
    for directory in data_dirs:
        try:
            files = sorted([*directory.glob("*.bin"), *directory.glob("*.npz")])
        except OSError:
            continue
        found += [f for f in files if f.name != VOICES_FILE.name]
    return found


def _combined_path(data_dirs: list[Path]) -> Path:
    # One file per set of data dirs, replaced in place: a worker still reading the
    # previous one keeps it open, and nothing accumulates in the cache.
    key = hashlib.sha256("\0".join(str(d) for d in data_dirs).encode()).hexdigest()[:16]
    return cache_dir() / f"voices-{key}.npz"


def _read_voices(paths: list[Path], skip: Path | None) -> tuple[list[VoicesFile], list[str]]:
    from wyoming_kokoro.catalog.voices_file import (  # here: a cold worker imports this early
        VoicesFileError,
        read_voices_file,
    )

    read, failures = [], []
    skips = _Skips("voices files")
    for path in paths:
        if skip is not None and _same_file(path, skip):
            continue  # our own combined file, when the cache is inside a data dir
        try:
            found = read_voices_file(path)
        except VoicesFileError as err:
            skips.warn("Voices file %s skipped: %s", path, err)
            failures.append(f"{path} is unreadable or corrupt: {err}")
            continue
        if found.problems:
            skips.warn(
                "Voices file %s: %d voice(s) skipped: %s",
                path,
                len(found.problems),
                "; ".join(found.problems[:5]),
            )
        read.append(found)
        if not found.names:
            failures.append(f"{path} holds no voice that can be read")
    skips.close()
    return read, failures


def _same_file(path: Path, other: Path) -> bool:
    # stat, not resolve(): a symlink loop is then a file that is not ours (and is
    # skipped with a warning when read), not an error that stops the server.
    try:
        return path.samefile(other)
    except OSError:
        return False


def _choose_voices(read: list[VoicesFile]) -> dict[str, tuple[Path, str]]:
    chosen: dict[str, tuple[Path, str]] = {}
    for found in read:
        taken = [n for n in found.names if n in chosen]
        if taken:
            _LOGGER.info(
                "Voices file %s: %s already installed; the first one is kept",
                found.path,
                ", ".join(taken[:5]),
            )
        for name in found.names:
            chosen.setdefault(name, (found.path, found.members[name]))
    return dict(sorted(chosen.items()))


def _write_combined(target: Path, chosen: dict[str, tuple[Path, str]], stamp: str) -> None:
    """Copy the chosen voices' members into one npz at `target` (atomically)."""
    with contextlib.suppress(OSError, zipfile.BadZipFile), zipfile.ZipFile(target) as existing:
        if existing.comment.decode("ascii", "replace") == stamp:
            return  # the same sources as last time
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as out:
            sources: dict[Path, zipfile.ZipFile] = {}
            try:
                for name, (path, member) in chosen.items():
                    if path not in sources:
                        sources[path] = zipfile.ZipFile(path)
                    # read() checks the CRC again: the file may have changed since
                    out.writestr(f"{name}.npy", sources[path].read(member))
            finally:
                for source in sources.values():
                    source.close()
            out.comment = stamp.encode("ascii")
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def _stamp_of(chosen: dict[str, tuple[Path, str]]) -> str:
    parts = []
    for path in sorted({p for p, _ in chosen.values()}):
        stat = path.stat()
        parts.append(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}")
    parts += [f"{name}={member}" for name, (_, member) in chosen.items()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def voice_set(sources: list[Path], data_dirs: list[Path]) -> tuple[Path, tuple[str, ...], str]:
    """One voices file holding every readable voice of `sources`, its names, a note
    (the files it came from); combined in the cache, one file per set of `data_dirs`."""
    target = _combined_path(data_dirs)
    read, failures = _read_voices(sources, target)
    chosen = _choose_voices(read)
    if not chosen:
        why = "; ".join(failures[:3]) or "no voices file found"
        raise AssetError(f"no voices: {why}; pass --voices or put voices-v1.0.bin in a data dir")
    names = tuple(chosen)
    files = [found.path for found in read if found.names]
    whole = [f for f in read if not f.problems and set(f.names) == set(names)]
    if whole:  # one file has them all, and nothing unreadable: load it as it is
        return whole[0].path, names, str(whole[0].path)
    try:
        _write_combined(target, chosen, _stamp_of(chosen))
    except (OSError, zipfile.BadZipFile, ValueError) as err:
        # Without a writable cache, the first file that can be loaded as it is serves.
        usable = [f for f in read if f.names and not f.problems]
        if not usable:
            raise AssetError(f"cannot combine the voices files into {target}: {err}") from err
        _LOGGER.warning(
            "Cannot combine the voices files into %s (%s); using %s alone",
            target,
            err,
            usable[0].path,
        )
        return usable[0].path, tuple(usable[0].names), str(usable[0].path)
    return target, names, " + ".join(str(f) for f in files)
