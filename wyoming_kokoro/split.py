"""Where the cut model lives: built once per model and onnxruntime release, checked
against the single graph before it is trusted, loaded by the worker.

The build cuts the graph (`graph.py`), then runs the whole graph and the chained
parts on sample inputs and keeps the parts only if every sample's audio is the same,
bit for bit. It takes a while (about 10 s of CPU here), so the server runs it once,
in a separate low-priority process, while the worker speaks with whole calls; the
next burst decodes in windows. Only the published model files are cut: their sha256
names the cache entry without hashing the file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from .models.assets import Assets, cache_dir, model_file
from .models.files import BY_NAME

_LOGGER = logging.getLogger(__name__)
VERIFIED = "verified"
SAMPLES = 20


def split_dir(model: Path, directory: Path | None = None) -> Path | None:
    """The cache entry of a published model's parts; None for other models."""
    from importlib.metadata import version  # the server must not import onnxruntime

    known = BY_NAME.get(model.name)
    if known is None or not known.name.endswith(".onnx"):
        return None
    return (directory or cache_dir()) / f"split-{known.sha256[:16]}-ort{version('onnxruntime')}"


def ready(model: Path) -> Path | None:
    """The verified parts of `model`, if they have been built."""
    directory = split_dir(model)
    if directory is not None and (directory / VERIFIED).is_file():
        return directory
    return None


def _session(path: Path, threads: int) -> Any:
    from .session import cpu_key, create_session

    return create_session(str(path), threads, path.with_name(f"{path.stem}-{cpu_key()}.opt"))


def load(directory: Path, threads: int) -> dict[str, Any]:
    """onnxruntime sessions of the parts in `directory` (from optimized copies)."""
    from .graph import PARTS

    return {name: _session(directory / name, threads) for name in PARTS}


def build(assets: Assets, threads: int = 1) -> Path:
    """Cut, check and keep the parts of `assets.model` (GraphError if they differ)."""
    import numpy as np

    from . import graph
    from .decoder import SplitModel
    from .session import create_session

    target = split_dir(assets.model)
    if target is None:
        raise graph.GraphError(f"{assets.model.name} is not a published model file")
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        with model_file(assets) as model:
            graph.save(graph.cut(Path(model)), partial)
            whole = create_session(model, threads, None)
        parts = SplitModel(
            {name: create_session(str(partial / name), threads, None) for name in graph.PARTS}
        )
        with np.load(assets.voices) as voices:
            styles = np.stack([voices[name] for name in voices.files[:8]])
        vocabulary = range(1, 178)  # Kokoro's token ids; 0 is the pad
        graph.verify(
            lambda inputs: whole.run(None, inputs)[0],
            lambda inputs: parts.whole(parts.plan(inputs)),
            graph.sample_inputs(SAMPLES, vocabulary, styles),
        )
        (partial / VERIFIED).write_text(f"{SAMPLES} samples bit-identical\n")
        with contextlib.suppress(OSError):  # another process may have kept one first
            os.rename(partial, target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    _LOGGER.info("Cut the model for decoding in windows: %s", target)
    return target


def _room_for(target: Path, model: Path) -> bool:
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


def start_build(assets: Assets) -> asyncio.Task[None] | None:
    """In the server: build the parts in a low-priority process unless they exist."""
    target = split_dir(assets.model)
    if target is None or ready(assets.model) is not None or not _room_for(target, assets.model):
        return None

    async def run() -> None:
        args = [str(assets.model), str(assets.voices)]
        if assets.embedded_model:
            args.append("--embedded")
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "wyoming_kokoro.split",
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            preexec_fn=lambda: os.nice(19),  # the build must never slow a request down
        )
        try:
            code = await process.wait()
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise
        if code:
            _LOGGER.warning("Cutting the model failed (exit %s): calls are decoded whole", code)

    _LOGGER.info("Cutting the model for decoding in windows (once, in the background)")
    return asyncio.get_running_loop().create_task(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", type=Path, nargs="?", help="default: the embedded model")
    parser.add_argument("voices", type=Path, nargs="?")
    parser.add_argument("--embedded", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s split: %(message)s")
    if args.model is None:
        from .models.assets import resolve

        assets = resolve(None, None, [])
    else:
        assets = Assets(args.model, args.voices, (), "", args.embedded)
    if ready(assets.model) is not None:
        return
    try:
        build(assets)
    except Exception as err:  # any failure: the server goes on with whole calls
        _LOGGER.error("The model cannot be cut: %s", err)
        sys.exit(1)


if __name__ == "__main__":
    main()
