"""Where the cut model lives: one cache entry per published model file and
onnxruntime release, trusted once it holds the `verified` mark. Light, so the server
can ask whether the parts exist without importing onnxruntime.

The mark lists each part's sha256 (`digests.py`): the worker checks a part before it
reads it and removes an entry that does not match; the server only asks whether the
mark is there (a stat, not 90 MB hashed at every look), so it then cuts again. An entry
marked before digests were kept is hashed on its first good load instead of being cut
again: it was checked bit-identical when it was made, and an image that ships only
the cut (`Assets.cut_only`) has no model to cut it from.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import importlib.util
import logging
import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from wyoming_kokoro.catalog import digests
from wyoming_kokoro.catalog.files import BY_NAME
from wyoming_kokoro.catalog.places import cache_dir

_LOGGER = logging.getLogger(__name__)
VERIFIED = "verified"
# What an entry holds, by version (an older entry is rebuilt once, keeping what its
# voices learned): 2, the harmonic source's STFT moved from the plan into the
# generator; 3, the server's voice taught short replies too (teaching.py); 4, the
# quantization scales chosen by an If (graph.py: whole decodes need less memory).
LAYOUT = 4


def _onnxruntime_version() -> str:
    """The version onnxruntime's module reports, which names the cut's cache entry.

    The server must not import onnxruntime, and the package metadata (slow to read)
    may name another build than the module: one installed over another (the GPU or
    OpenVINO build over the CPU one) or under another name. Then the server and the
    worker would look for different entries. So the module's own build info is read.
    """
    module = sys.modules.get("onnxruntime")
    if module is not None:
        return str(module.__version__)
    version = _build_info_version()
    if version:
        return version
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("onnxruntime")
    except PackageNotFoundError:
        return "unknown"


def _build_info_version() -> str | None:
    """`__version__` of `onnxruntime/capi/build_and_package_info.py` (where the module
    takes its own from), run alone: a few assignments, not the package's import."""
    try:
        spec = importlib.util.find_spec("onnxruntime")
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(
            next(iter(spec.submodule_search_locations)), "capi", "build_and_package_info.py"
        )
        info = importlib.util.spec_from_file_location("_onnxruntime_build_info", path)
        if info is None or info.loader is None or not path.is_file():
            return None
        module = importlib.util.module_from_spec(info)
        info.loader.exec_module(module)
        return str(module.__version__)
    except Exception:  # a file of another package: anything may be wrong with it
        return None


def cut_dir(model: Path, directory: Path | None = None) -> Path | None:
    """The cache entry of a published model's parts; None for other models."""
    known = BY_NAME.get(model.name)
    if known is None or not known.name.endswith(".onnx"):
        return None
    # LAYOUT names what the entry holds: parts cut elsewhere are another entry. The
    # name keeps the word of its first release, so caches made since stay valid.
    name = f"split{LAYOUT}-{known.sha256[:16]}-ort{_onnxruntime_version()}"
    return (directory or cache_dir()) / name


def superseded(target: Path) -> list[Path]:
    """Entries of the same model and onnxruntime cut at an older layout than `target`
    (another onnxruntime's entries may belong to another installation: left alone)."""
    layout, _, rest = target.name.partition("-")
    older = [f"split{n}-{rest}" for n in range(2, int(layout[len("split") :]))]
    return [path for path in target.parent.glob("split*-" + rest) if path.name in older] + [
        path for path in [target.parent / f"split-{rest}"] if path.is_dir()
    ]


def ready(model: Path) -> Path | None:
    """The verified parts of `model`, if they have been built."""
    directory = cut_dir(model)
    if directory is not None and (directory / VERIFIED).is_file():
        return directory
    return None


def mark_verified(directory: Path, parts: Iterable[str], note: str) -> None:
    """Write the `verified` mark: `note`, then each part's sha256 (written last, whole)."""
    digests.write(directory, parts, directory / VERIFIED, note)


@contextlib.contextmanager
def locked(target: Path, task: str) -> Iterator[None]:
    """Hold the lock of `task` ("cut", "teach") on the entry `target`: a file beside it,
    flocked, waited for while another process holds it. The kernel releases a lock whose
    holder died, so a crashed cut never blocks the next. A cache where the lock file
    cannot be made goes on without it (nothing can be cut there anyway)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = open(target.with_name(f"{target.name}.{task}.lock"), "a")  # noqa: SIM115
    except OSError as err:
        _LOGGER.debug("No %s lock in %s: %s", task, target.parent, err)
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _LOGGER.info("Another process holds the model's %s lock: waiting for it", task)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def part_of(target: Path, pid: int) -> Path:
    """Where the process `pid` builds the entry `target` before it is renamed in place."""
    return target.with_name(f".{target.name}.{pid}.part")


def sweep_parts(target: Path) -> list[Path]:
    """Remove what cuts of `target` killed outright (SIGKILL, a power cut) left: the
    parts of processes that are gone, hundreds of MB each. Called under the cut lock,
    so no live cut of this entry is half-way; a pid alive again keeps its own."""
    removed = sweep_dead(target.parent, f".{target.name}.", ".part")
    for partial in removed:
        _LOGGER.info("Removed the parts a stopped cut left: %s", partial)
    return removed


def sweep_dead(directory: Path, prefix: str, suffix: str) -> list[Path]:
    """Remove `<prefix><pid><suffix>` in `directory` (a file or a folder) for each pid
    that names no process any more; what was removed."""
    removed = []
    for path in directory.glob(f"{glob.escape(prefix)}*{glob.escape(suffix)}"):
        pid = path.name[len(prefix) : -len(suffix)]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        if not path.exists():
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def room_for(target: Path, model: Path) -> bool:
    """The parts and their optimized copies take about 2.5 times the model: a cache
    that is read-only or short of room is left alone (calls are decoded whole)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fs = os.statvfs(target.parent)
        needed = 3 * (model.stat().st_size if model.exists() else 100_000_000)
    except OSError:
        return False
    if not os.access(target.parent, os.W_OK) or fs.f_bavail * fs.f_frsize < needed:
        _LOGGER.info("No room in %s to cut the model: calls are decoded whole", target.parent)
        return False
    return True
