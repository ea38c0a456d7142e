"""The onnxruntime session, from a cached ORT-format copy of the model when there is one.

Loading the .onnx means parsing its protobuf and optimizing the graph at every
burst (0.45-0.5 s on a 2-core x86 for the int8 model). onnxruntime can save the
optimized graph in its own format, which loads in about 0.3 s and speaks
bit-identical audio. That copy holds layout choices for this CPU and this
onnxruntime release, so its name carries both; it is written on the first load
(while the session is built anyway) and only for published model files, whose
sha256 names them. A copy that fails to load is deleted and the .onnx used.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import platform
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .models.assets import AssetError, Assets, cache_dir, model_file
from .models.files import BY_NAME

if TYPE_CHECKING:
    import onnxruntime as ort

_LOGGER = logging.getLogger(__name__)


def _cpu_key() -> str:
    """What the optimized graph may depend on: the machine and its CPU features."""
    flags = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                flags = line.split(":", 1)[1].strip()
                break
    return hashlib.sha256(f"{platform.machine()} {flags}".encode()).hexdigest()[:10]


def optimized_copy(model: Path, directory: Path | None = None) -> Path | None:
    """Where the ORT-format copy of a published model lives; None for other models."""
    import onnxruntime as ort

    known = BY_NAME.get(model.name)
    if known is None or not known.name.endswith(".onnx"):
        return None
    name = f"{known.sha256[:16]}-ort{ort.__version__}-{_cpu_key()}.ort"
    return (directory or cache_dir()) / name


def _options(threads: int) -> ort.SessionOptions:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Input shapes change with every sentence: memory patterns only grow RSS.
    options.enable_mem_pattern = False
    options.log_severity_level = 3  # the warning about CPU-specific layouts is expected
    return options


def _cpu(path: str, options: ort.SessionOptions) -> ort.InferenceSession:
    import onnxruntime as ort

    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


def create_session(model: str, threads: int, copy: Path | None) -> ort.InferenceSession:
    """A CPU session for `model` (a verified path), using or writing `copy` if given."""
    if copy is not None and copy.is_file():
        try:
            session = _cpu(str(copy), _options(threads))
            _LOGGER.debug("Loaded the optimized copy %s", copy)
            return session
        except Exception as err:  # onnxruntime raises its own types for a bad file
            _LOGGER.warning("Optimized model copy %s is unusable (%s); rebuilding it", copy, err)
            with contextlib.suppress(OSError):
                copy.unlink()
    options = _options(threads)
    partial = None
    if copy is not None and _writable(copy.parent):
        partial = copy.with_name(f".{copy.name}.{os.getpid()}.part")
        options.optimized_model_filepath = str(partial)
        options.add_session_config_entry("session.save_model_format", "ORT")
    session = _cpu(model, options)
    if partial is not None:
        _keep(partial, copy)  # type: ignore[arg-type]
    return session


def _writable(directory: Path) -> bool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)


def _keep(partial: Path, copy: Path) -> None:
    try:
        if partial.stat().st_size > 0:
            os.replace(partial, copy)  # atomic: a concurrent burst never reads half a file
            _LOGGER.info("Saved an optimized copy of the model for faster loading: %s", copy)
    except OSError as err:
        _LOGGER.debug("Could not keep the optimized copy %s: %s", copy, err)
    finally:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


class ModelLoading(threading.Thread):
    """Loads the model and voices in the background; onnxruntime releases the GIL.

    The worker starts this before it imports the text side, so imports, the
    normalizer's and G2P's first use and the model load all overlap.
    """

    def __init__(self, assets: Assets, threads: int, use_copy: bool = True) -> None:
        super().__init__(name="kokoro model loader", daemon=True)
        self._assets = assets
        self._threads = threads
        self._use_copy = use_copy
        self._kokoro: Any = None
        self._error: BaseException | None = None
        # Set when the session is being built (or the load failed): from then on
        # onnxruntime works without the GIL and other imports no longer delay it.
        self.building = threading.Event()
        self.start()

    def run(self) -> None:
        try:
            # onnxruntime first and kokoro-onnx after the session: the session build
            # is the longest step, so it starts as early as it can.
            import onnxruntime  # noqa: F401

            with model_file(self._assets) as model:
                copy = optimized_copy(self._assets.model) if self._use_copy else None
                try:
                    self.building.set()
                    session = create_session(model, self._threads, copy)
                    from kokoro_onnx import Kokoro

                    # Inside the block: kokoro-onnx checks that the model path exists.
                    self._kokoro = Kokoro.from_session(session, str(self._assets.voices))
                except Exception as err:  # onnxruntime raises its own exception types
                    raise AssetError(f"cannot load the model {model}: {err}") from err
        except BaseException as err:  # handed to the thread that waits
            self._error = err
        finally:
            self.building.set()

    def result(self) -> Any:
        """The loaded `kokoro_onnx.Kokoro`, or the error that stopped it."""
        self.join()
        if self._error is not None:
            raise self._error
        return self._kokoro


class Interrupted(RuntimeError):
    """A model call was stopped from another thread (see `Interruptible`)."""


class Interruptible:
    """A session whose running call another thread can stop.

    kokoro-onnx calls `sess.run(None, inputs)`; this stand-in passes run options
    whose `terminate` flag onnxruntime checks between operators, so a call can be
    abandoned within milliseconds when someone else needs the model now.
    """

    def __init__(self, session: Any) -> None:
        import onnxruntime as ort

        self._session = session
        self._options = ort.RunOptions()
        self._lock = threading.Lock()
        self._running: object | None = None  # the tag of the call in progress
        self._pending: object | None = None  # stopped before it began
        self._stopped = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)  # inputs, outputs, metadata: as the session

    def run(self, names: Any, feed: Any, run_options: Any = None) -> Any:
        try:
            return self._session.run(names, feed, self._options)
        except Exception as err:
            if self._stopped:
                raise Interrupted("the call was interrupted") from err
            raise

    def begin(self, tag: object) -> None:
        with self._lock:
            stop = self._pending is not None and self._pending == tag
            self._running, self._stopped, self._pending = tag, stop, None
            self._options.terminate = stop

    def end(self) -> None:
        with self._lock:
            self._running = None
            self._options.terminate = False

    def interrupt(self, tag: object) -> bool:
        """Stop the call tagged `tag`: the running one, or the next to begin.

        A stop that arrives just before its call begins still applies to it; one
        that comes after its call ended costs the next call of that tag a retry.
        """
        with self._lock:
            if self._running is None or self._running != tag:
                self._pending = tag
                return False
            self._stopped = True
            self._options.terminate = True
            return True
