"""Where the cut model lives: one cache entry per published model file and
onnxruntime release, trusted once it holds the `verified` mark. Light, so the server
can ask whether the parts exist without importing onnxruntime."""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from pathlib import Path

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
