"""The model loaded in a thread while the worker imports and warms the rest.

onnxruntime builds a session without the GIL, so the session load, the imports of
the text side and its first use all overlap (on two cores, almost fully).
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wyoming_kokoro.catalog import digests
from wyoming_kokoro.catalog.assets import (
    Assets,
    CacheUnwritableError,
    model_file,
    prepare_model,
)
from wyoming_kokoro.catalog.cut import VERIFIED, mark_verified
from wyoming_kokoro.catalog.files import AssetError
from wyoming_kokoro.synthesis.runtime import (
    create_session,
    optimized_copy,
    return_freed_memory,
)

_LOGGER = logging.getLogger(__name__)


class ModelLoading(threading.Thread):
    """Loads the model and voices in the background; onnxruntime releases the GIL.

    The worker starts this before it imports the text side, so imports, the
    normalizer's and G2P's first use and the model load all overlap.
    """

    def __init__(
        self,
        assets: Assets,
        threads: int,
        use_copy: bool = True,
        cut: Path | None = None,
        find_cut: bool = False,
    ) -> None:
        """`cut`: the model's verified parts, to decode in windows; or `find_cut`:
        look for them once onnxruntime is imported (its version names them)."""
        super().__init__(name="kokoro model loader", daemon=True)
        self._assets = assets
        self._threads = threads
        self._use_copy = use_copy
        self._find_cut = find_cut
        self.cut_dir = cut
        self._kokoro: Any = None
        self.cut_model: Any = None  # a decoder.CutModel when the parts were loaded
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

            if self._find_cut or self._assets.cut_only:
                from wyoming_kokoro.catalog.cut import ready

                self.cut_dir = ready(self._assets.model)
            if self.cut_dir is not None and self._load_cut(self.cut_dir):
                return
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
            # After the sessions are built: their many blocks of a few MB, each mapped
            # fresh, would slow the worker's start. The runs' arenas are what it is for.
            return_freed_memory()
            self.building.set()

    def _load_cut(self, directory: Path) -> bool:
        """Load the parts instead of the whole graph; False (logged) if they fail."""
        from wyoming_kokoro.synthesis.graph import PLAN

        try:
            # The parts were cut from the file with this name's sha256: the file must
            # still be that file (a corrupt or replaced model is refused as before).
            # Without the model, the cut was checked against it where it was made.
            if not self._assets.cut_only:
                prepare_model(self._assets)
        except CacheUnwritableError:
            return False
        try:
            self.building.set()
            sessions = load_cut(directory, self._threads)
        except Exception as err:  # a damaged cache entry: decode whole calls instead
            return self._damaged(directory, err)
        # Imported once the sessions are built: the thread that waits imports them
        # meanwhile anyway, and needs them.
        from kokoro_onnx import Kokoro

        from wyoming_kokoro.synthesis.decoder import CutModel

        voices = self._assets.voices
        try:
            cut_model = CutModel(sessions)
            # The plan part has the whole graph's inputs and vocabulary: kokoro-onnx's
            # tokenizer and voices work on it as they do on the whole model.
            self._kokoro = Kokoro.from_session(sessions[PLAN], str(voices))
        except Exception as err:
            if not _readable(voices):  # the voices file, not the cut model, is at fault
                raise AssetError(f"cannot load the voices {voices}: {err}") from err
            return self._damaged(directory, err)  # parts that do not fit together
        self.cut_model = cut_model
        digest_old_mark(directory)
        return True

    def _damaged(self, directory: Path, err: Exception) -> bool:
        if self._assets.cut_only:  # nothing to decode whole with: kept, and an error
            raise AssetError(f"cannot load the cut model {directory}: {err}") from err
        if isinstance(err, DamagedPartError):
            # Removed: the server sees the mark gone and cuts the model again.
            _LOGGER.warning(
                "The cut model %s is damaged (%s): decoding whole calls until it is cut again",
                directory,
                err,
            )
        else:
            _LOGGER.warning(
                "Cannot load the cut model %s (%s); decoding whole calls", directory, err
            )
        shutil.rmtree(directory, ignore_errors=True)
        self.cut_model = None
        return False

    def result(self) -> Any:
        """The loaded `kokoro_onnx.Kokoro`, or the error that stopped it."""
        self.join()
        if self._error is not None:
            raise self._error
        return self._kokoro


def _readable(voices: Path) -> bool:
    """Whether numpy reads the voices file (as kokoro-onnx does)."""
    import numpy as np

    try:
        data = np.load(voices)
    except Exception:  # numpy raises several types for a file it cannot read
        return False
    if hasattr(data, "close"):
        data.close()
    return True


class DamagedPartError(AssetError):
    """A part of the cut model does not match the sha256 its `verified` mark lists."""


def load_cut(directory: Path, threads: int) -> dict[str, Any]:
    """onnxruntime sessions of the cut model's parts in `directory` (from optimized copies
    of this CPU's, made beside them on first use); DamagedPartError if a part read
    differs from its sha256 (an optimized copy checks its own: runtime.py)."""
    from wyoming_kokoro.synthesis.generator_choice import generator_file
    from wyoming_kokoro.synthesis.graph import GENERATOR, PARTS
    from wyoming_kokoro.synthesis.runtime import cpu_key

    recorded = digests.recorded(directory / VERIFIED)

    def check(name: str) -> Callable[[], None]:
        def run() -> None:
            if recorded is not None and digests.mismatch(directory, recorded, name):
                raise DamagedPartError(f"{name} does not match its sha256")

        return run

    # The generator this CPU was found to run best (generator_choice.py).
    files = {name: name for name in PARTS}
    files[GENERATOR] = generator_file(_note(directory / VERIFIED), recorded, cpu_key())
    parts = {name: directory / file for name, file in files.items()}
    return {
        name: create_session(
            str(part), threads, part.with_name(f"{part.stem}-{cpu_key()}.opt"), check(part.name)
        )
        for name, part in parts.items()
    }


def _note(mark: Path) -> str:
    try:
        return mark.read_text(errors="replace")
    except OSError:
        return ""


def digest_old_mark(directory: Path) -> None:
    """A mark from before digests were kept gets its parts' sha256 on their first good
    load (cut.py says why not a new cut); a read-only cache keeps it as it is."""
    from wyoming_kokoro.synthesis.graph import PARTS

    mark = directory / VERIFIED
    if not mark.is_file() or digests.recorded(mark) is not None:
        return  # a cut being made (its mark comes last), or one marked now
    try:
        mark_verified(directory, PARTS, mark.read_text(errors="replace"))
    except OSError as err:
        _LOGGER.debug("Could not add the parts' sha256 to %s: %s", mark, err)
