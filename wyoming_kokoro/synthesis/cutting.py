"""The cut model built and loaded: cut once per model and onnxruntime release
(`catalog/cut.py` says where), checked against the single graph before it is trusted.

The build cuts the graph (`graph.py`), then runs the whole graph and the chained
parts on sample inputs and keeps the parts only if every sample's audio is the same,
bit for bit; then it tries the generator on int8 kernels against today's and keeps
the one this CPU runs best (`generator_choice.py`); then it teaches the server's voice
(`teaching.py`). It takes a while
(about 45 s of CPU here for the cut, as much again to teach), so the server runs it
once (`server/model_cut.py`), in a separate low-priority process, while the worker
speaks with whole calls; the next burst decodes in windows. Only the published model files
are cut: their sha256 names the cache entry without hashing the file.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import logging
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

from wyoming_kokoro.catalog.assets import Assets, model_file
from wyoming_kokoro.catalog.cut import (
    VERIFIED,
    cut_dir,
    locked,
    mark_verified,
    part_of,
    ready,
    superseded,
    sweep_parts,
)

_LOGGER = logging.getLogger(__name__)
SAMPLES = 20
VOCABULARY = range(1, 178)  # Kokoro's token ids; 0 is the pad


def build(
    assets: Assets, threads: int = 1, teach: str | None = None, try_int8: bool = True
) -> Path:
    """Cut, check and keep the parts of `assets.model` (GraphError if they differ);
    with `teach`, that voice speaks `teaching.TEXTS` before the parts are used; with
    `try_int8`, the int8 generator is kept if this CPU runs it better."""
    from wyoming_kokoro.synthesis import graph

    target = cut_dir(assets.model)
    if target is None:
        raise graph.GraphError(f"{assets.model.name} is not a published model file")
    partial = part_of(target, os.getpid())
    shutil.rmtree(partial, ignore_errors=True)
    # Minutes of CPU the user did not ask for: the log says when it starts and ends.
    _LOGGER.info(
        "Cutting the model into parts for decoding in windows "
        "(once, about a minute of CPU and a few hundred MB)"
    )
    try:
        _cut_and_check(assets, partial, threads)
        parts: tuple[str, ...] = graph.PARTS
        note = f"{SAMPLES} samples bit-identical"
        if try_int8:
            parts, note = _generator_here(assets, partial, threads, note)
        # Marked before teaching: the teacher loads the generator the mark names.
        mark_verified(partial, parts, note)
        adopt_learned(partial, target)
        if teach is not None:
            _teach(assets, partial, teach, threads)
        if not (target / VERIFIED).is_file():  # what a damaged entry's removal left
            shutil.rmtree(target, ignore_errors=True)
        with contextlib.suppress(OSError):  # another process may have kept one first
            os.rename(partial, target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    remove_superseded(target)
    _LOGGER.info("Cut the model for decoding in windows: %s", target)
    return target


def _cut_and_check(assets: Assets, partial: Path, threads: int) -> None:
    from wyoming_kokoro.synthesis import graph
    from wyoming_kokoro.synthesis.decoder import CutModel
    from wyoming_kokoro.synthesis.runtime import create_session

    with model_file(assets) as model:
        graph.save(graph.cut(Path(model)), partial)
        whole = create_session(model, threads, None)
    parts = CutModel(
        {name: create_session(str(partial / name), threads, None) for name in graph.PARTS}
    )
    _LOGGER.info("Checking the parts against the whole model on %d samples", SAMPLES)
    graph.verify(
        lambda inputs: whole.run(None, inputs)[0],
        lambda inputs: parts.whole(parts.plan(inputs)),
        graph.sample_inputs(SAMPLES, VOCABULARY, _styles(assets)),
    )


def _generator_here(
    assets: Assets, partial: Path, threads: int, note: str
) -> tuple[tuple[str, ...], str]:
    """The parts to keep and the mark's note: with the int8 generator if this CPU runs
    it faster and it sounds like today's (`generator_choice.py`)."""
    from wyoming_kokoro.synthesis import generator_choice, graph

    chosen = generator_choice.make_and_choose(
        assets.model.name, partial, threads, generator_choice.samples(_styles(assets), VOCABULARY)
    )
    if chosen is None:
        return graph.PARTS, note
    return (*graph.PARTS, generator_choice.INT8), f"{note}\n{chosen}"


def _styles(assets: Assets) -> Any:
    import numpy as np

    with np.load(assets.voices) as voices:
        return np.stack([voices[name] for name in voices.files[:8]])


def adopt_learned(partial: Path, target: Path) -> None:
    """What the voices taught the entries this one replaces, moved into it (the
    generator's fed values keep their names across layouts; a file that does not
    match is relearned by `prior.py`)."""
    (partial / "priors").mkdir(exist_ok=True)
    for old in superseded(target):
        for learned in sorted((old / "priors").glob("*.npz")):
            if not (partial / "priors" / learned.name).exists():
                with contextlib.suppress(OSError):
                    shutil.copy2(learned, partial / "priors" / learned.name)


def _teach(assets: Assets, partial: Path, voice: str, threads: int) -> None:
    from wyoming_kokoro.settings import EngineSettings
    from wyoming_kokoro.synthesis import teaching
    from wyoming_kokoro.synthesis.engine import Engine
    from wyoming_kokoro.synthesis.loading import ModelLoading

    loading = ModelLoading(assets, threads, cut=partial)
    engine = Engine(assets, EngineSettings(threads=threads), loading=loading)
    _LOGGER.info("Teaching voice %s, the server's, before the parts are used", voice)
    try:
        teaching.teach(engine, voice)
    except Exception as err:  # the cut is good without it: windows use probe rows
        _LOGGER.warning("Could not teach %s: %s", voice, err)


def remove_superseded(target: Path) -> None:
    """Remove the entries this one replaces (what they learned was adopted)."""
    for old in superseded(target):
        shutil.rmtree(old, ignore_errors=True)
        _LOGGER.info("Removed the model's older cut: %s", old)


def _terminated(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)  # the finally blocks remove the partial parts


def _own_process() -> None:
    """End with the server that started it; keep temporary files to itself."""
    from wyoming_kokoro.lifeline import die_with_parent, parent_from_env
    from wyoming_kokoro.worker.scratch import own_tempdir

    # SIGTERM, not SIGKILL: the half-built parts in the cache are removed on the way.
    signal.signal(signal.SIGTERM, _terminated)
    server = parent_from_env()
    if server is not None:  # not when run by hand
        die_with_parent(server, signal.SIGTERM)
    scratch = own_tempdir()  # one killed outright is removed by a later worker
    if scratch is not None:
        # Registered before anything else uses atexit: it runs after their clean-ups.
        atexit.register(scratch.discard)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", type=Path, nargs="?", help="default: the embedded model")
    parser.add_argument("voices", type=Path, nargs="?")
    parser.add_argument("--embedded", action="store_true")
    parser.add_argument("--teach", metavar="VOICE", help="the voice to teach once cut")
    # The tests compare the cut with the single graph bit for bit, whatever the CPU.
    parser.add_argument(
        "--today-generator", action="store_true", help="do not try the int8 generator"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s cutting: %(message)s")
    _own_process()
    if args.model is None:
        from wyoming_kokoro.catalog.assets import resolve

        assets = resolve(None, None, [])
    else:
        assets = Assets(args.model, args.voices, (), "", args.embedded)
    if ready(assets.model) is not None:
        return
    target = cut_dir(assets.model)
    # Two servers started on one cache: one cuts, the other waits and uses its parts.
    with locked(target, "cut") if target is not None else contextlib.nullcontext():
        if ready(assets.model) is not None:
            _LOGGER.info("Another process cut the model: %s", target)
            return
        if target is not None:
            sweep_parts(target)
        try:
            build(assets, teach=args.teach, try_int8=not args.today_generator)
        except Exception as err:  # any failure: the server goes on with whole calls
            _LOGGER.error("The model cannot be cut: %s", err)
            sys.exit(1)


if __name__ == "__main__":
    main()
