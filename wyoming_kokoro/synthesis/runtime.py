"""The onnxruntime session, from a cached optimized copy of the model when there is one.

Loading the .onnx means parsing its protobuf, optimizing the graph and repacking
the int8 weights for this CPU's kernels at every burst. onnxruntime can save the
result once: the optimized graph, with its weights and their prepacked forms in an
external data file. Loading that copy with graph optimization off is much quicker
(bench/RESULTS.md, C2), and the weights are read straight from the file (page cache,
not the worker's own memory). The audio is bit-identical. The
copy holds layout choices for this CPU and this onnxruntime release, so its name
carries both; it is written on the first load (while the session is built anyway)
and only for published model files, whose sha256 names them. A copy that fails to
load is deleted and the .onnx used; one that cannot be saved (a full disk) costs
only the copy, never the session. The copy keeps its files' sha256 (`digests.py`),
checked before each load: a damaged copy is rebuilt, never loaded. A copy from before
digests were kept is rebuilt too (it costs one slower load, no more).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import platform
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from wyoming_kokoro.catalog import digests
from wyoming_kokoro.catalog.files import BY_NAME
from wyoming_kokoro.catalog.places import cache_dir

if TYPE_CHECKING:
    import onnxruntime as ort

_LOGGER = logging.getLogger(__name__)

# Inside a copy's directory: the graph refers to its weights by this relative name.
GRAPH = "model.onnx"
WEIGHTS = "weights.bin"
DIGESTS = "sha256"  # the copy's files' sha256, written before it is kept


# glibc's mallopt parameter: blocks this large come from mmap and go back when freed.
_M_MMAP_THRESHOLD = -3
_MMAP_FROM = 1 << 20


def return_freed_memory() -> None:
    """Have the C library give freed blocks of 1 MB and more back to the system.

    onnxruntime's arenas grow by such blocks and hand them back after each run. By
    default glibc raises its mmap threshold to the largest block freed so far (up to
    32 MB), so later blocks come from the heap, where a freed one stays resident
    while anything above it lives. A fixed threshold lowers the peak and what a
    worker holds between calls, at the same speed (bench/RESULTS.md, M). Without
    glibc's mallopt, nothing changes.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the symbols the process has loaded
    except Exception:  # no C library to ask (or no mallopt in it)
        return
    if not mallopt(_M_MMAP_THRESHOLD, _MMAP_FROM):
        _LOGGER.debug("The C library kept its own mmap threshold")


def cpu_key() -> str:
    """What the optimized graph may depend on: the machine and its CPU features."""
    flags = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                flags = line.split(":", 1)[1].strip()
                break
    return hashlib.sha256(f"{platform.machine()} {flags}".encode()).hexdigest()[:10]


def optimized_copy(model: Path, directory: Path | None = None) -> Path | None:
    """The directory of the optimized copy of a published model; None for other models."""
    import onnxruntime as ort

    known = BY_NAME.get(model.name)
    if known is None or not known.name.endswith(".onnx"):
        return None
    name = f"{known.sha256[:16]}-ort{ort.__version__}-{cpu_key()}"
    return (directory or cache_dir()) / name


def _options(threads: int) -> ort.SessionOptions:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Input shapes change with every sentence: memory patterns only grow RSS.
    options.enable_mem_pattern = False
    # The parts run one after another, each with its own thread pool: a pool whose
    # threads spin on after its run (onnxruntime's default) takes a core from the
    # next part's, and from the imports while the sessions load. A short spin still
    # bridges the gaps between operators within a run; no spinning at all left the
    # plan's many small operators waiting for woken threads (bench/RESULTS.md, R).
    options.add_session_config_entry("session.intra_op.spin_duration_us", "200")
    options.log_severity_level = 3  # the warning about CPU-specific layouts is expected
    return options


def _cpu(path: str, options: ort.SessionOptions) -> ort.InferenceSession:
    import onnxruntime as ort

    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


def _load_copy(copy: Path, threads: int) -> ort.InferenceSession | None:
    import onnxruntime as ort

    if not (copy / GRAPH).is_file():
        _remove(copy)  # a leftover would block saving a copy
        return None
    problem = _damage(copy)
    if problem:
        _LOGGER.warning("Optimized model copy %s %s; rebuilding it", copy.name, problem)
        _remove(copy)
        return None
    options = _options(threads)
    # Optimized already; running the optimizers again would only cost time.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        session = _cpu(str(copy / GRAPH), options)
    except Exception as err:  # onnxruntime raises its own types for a bad file
        _LOGGER.warning("Optimized model copy %s is unusable (%s); rebuilding it", copy, err)
        _remove(copy)
        return None
    _LOGGER.debug("Loaded the optimized copy %s", copy)
    return session


def _damage(copy: Path) -> str | None:
    """What is wrong with the copy's bytes, or None when its files match their sha256."""
    recorded = digests.recorded(copy / DIGESTS)
    if recorded is None:
        return "has no sha256 of its files (an older release made it)"
    for name in sorted({GRAPH, WEIGHTS, *recorded}):
        if digests.mismatch(copy, recorded, name):
            return f"is damaged: {name} does not match its sha256"
    return None


def _remove(path: Path) -> None:
    """A copy removed; a link to one (a test's cache) loses the link, not its target."""
    if path.is_symlink():
        with contextlib.suppress(OSError):
            path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def create_session(
    model: str, threads: int, copy: Path | None, check: Callable[[], None] | None = None
) -> ort.InferenceSession:
    """A CPU session for `model` (a verified path), using or writing `copy` if given;
    `check` raises if `model` must not be read, and runs only when it would be.

    Saving the copy is a bonus: a full or failing cache disk costs the copy, never
    the session.
    """
    if copy is not None:
        session = _load_copy(copy, threads)
        if session is not None:
            return session
    if check is not None:
        check()
    if copy is not None and _writable(copy.parent) and _room_for_copy(model, copy.parent):
        try:
            return _build_and_save(model, threads, copy)
        except Exception as err:  # onnxruntime raises its own types for a failed write
            _LOGGER.warning(
                "Could not save an optimized copy of the model (%s); loading without it", err
            )
    return _cpu(model, _options(threads))


def _build_and_save(model: str, threads: int, copy: Path) -> ort.InferenceSession:
    """Build the session and save its optimized graph on the way (raises if either fails)."""
    options = _options(threads)
    partial = copy.with_name(f".{copy.name}.{os.getpid()}.part")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir()
        options.optimized_model_filepath = str(partial / GRAPH)
        for key, value in (
            ("session.optimized_model_external_initializers_file_name", WEIGHTS),
            ("session.optimized_model_external_initializers_min_size_in_bytes", "1024"),
            # The repacked int8 weights go to the file too: loading skips repacking.
            ("session.save_external_prepacked_constant_initializers", "1"),
        ):
            options.add_session_config_entry(key, value)
        session = _cpu(model, options)
        # Only a copy whose session was built whole, with its files' sha256.
        try:
            digests.write(partial, sorted(p.name for p in partial.iterdir()), partial / DIGESTS)
        except OSError as err:
            _LOGGER.debug("Could not keep the optimized copy %s: %s", copy, err)
            return session
        _keep(partial, copy)
        return session
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _room_for_copy(model: str, directory: Path) -> bool:
    """Whether the copy (about 1.4 times the model) fits: else building it would only
    fail at the end, and the session would be built a second time."""
    try:
        fs = os.statvfs(directory)
        free, needed = fs.f_bavail * fs.f_frsize, 2 * os.stat(model).st_size
    except OSError:
        return True  # unknown: try, and load without the copy if saving fails
    if free < needed:
        _LOGGER.info(
            "Not saving an optimized copy of the model: %d MB free in %s, %d MB needed",
            free >> 20,
            directory,
            needed >> 20,
        )
    return free >= needed


def _writable(directory: Path) -> bool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)


def _keep(partial: Path, copy: Path) -> None:
    try:
        if (partial / GRAPH).stat().st_size > 0 and (partial / WEIGHTS).stat().st_size > 0:
            # Atomic: a concurrent burst never sees half a copy. If another process
            # saved one first, the rename fails and this one is dropped.
            os.rename(partial, copy)
            _LOGGER.info("Saved an optimized copy of the model for faster loading: %s", copy)
            _drop_stale(copy)
    except OSError as err:
        _LOGGER.debug("Could not keep the optimized copy %s: %s", copy, err)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _drop_stale(copy: Path) -> None:
    """Remove copies of the same model for another onnxruntime, CPU or format."""
    model_key = copy.name.split("-ort", 1)[0]
    for old in copy.parent.glob(f"{model_key}-ort*"):
        if old != copy:
            _LOGGER.debug("Removing the outdated optimized copy %s", old)
            if old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    old.unlink()
