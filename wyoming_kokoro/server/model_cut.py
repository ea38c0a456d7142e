"""The server's side of the cut model: build it once, in a low-priority process of
its own (`python -m wyoming_kokoro.synthesis.cutting`), while the worker speaks with
whole calls; the next burst decodes in windows. The same process teaches the
server's voice, so its first listener's windows have its statistics.

Then every other voice is taught (`python -m wyoming_kokoro.synthesis.teaching`), in
a process that runs only when the CPU would otherwise idle: the installed voices,
and any voice, blend or preset a worker found untaught when it was asked for (its
note in the cut's `priors/wanted/`, looked for every few seconds: a directory
listing). A voice is taught once per cut entry (model file and onnxruntime release)
and style; a teacher stopped halfway goes on where it stopped the next time.

A worker that finds a part of the cut damaged (its sha256, `catalog/cut.py`) removes
the entry and speaks whole calls; the same look sees the mark gone and cuts again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.cut import VERIFIED, cut_dir, ready, room_for
from wyoming_kokoro.lifeline import child_env

_LOGGER = logging.getLogger(__name__)
WANTED_EVERY = 5.0  # seconds between looks for voices wanted since the last teacher
# Cuts per server: a cache that damages every cut must not keep a core busy for good.
MAX_CUTS = 3


def start_build(
    assets: Assets,
    teach: str | None = None,
    teaching: bool = True,
    on_cut: Callable[[], None] | None = None,
) -> asyncio.Task[None] | None:
    """In the server: build the parts in a low-priority process unless they exist,
    and again whenever they are gone (a worker removed a damaged entry); `teach`: the
    voice to teach there once they are cut (see synthesis/teaching.py). With
    `teaching`, the other voices are taught, in the background; `on_cut` is called
    each time a cut is made (a loaded worker has none yet). The task never ends by
    itself while the model can be cut."""
    target = cut_dir(assets.model)
    if target is None:
        return None
    if ready(assets.model) is None and not room_for(target, assets.model):
        return None
    args = [str(assets.model), str(assets.voices)]
    if assets.embedded_model:
        args.append("--embedded")
    cutting = [*args, *(["--teach", teach] if teach else [])]
    teacher = [*args, *(["--first", teach] if teach else [])]
    return asyncio.get_running_loop().create_task(
        _keep_cut(assets, target, cutting, teacher if teaching else None, on_cut)
    )


async def _keep_cut(
    assets: Assets,
    target: Path,
    cutting: list[str],
    teacher: list[str] | None,
    on_cut: Callable[[], None] | None,
) -> None:
    """Cut the model whenever its entry is not there; the teacher once, then again
    whenever a voice is wanted that it did not teach."""
    wanted, mark = target / "priors" / "wanted", target / VERIFIED
    cuts = 0
    had = mark.is_file()
    teach = teacher is not None
    while True:
        if not mark.is_file():  # a stat every few seconds: the server hashes nothing
            if cuts >= MAX_CUTS or not room_for(target, assets.model):
                return
            if had:
                _LOGGER.warning("The cut model is gone (damaged or removed): cutting it again")
            else:
                _LOGGER.info("Cutting the model for decoding in windows (once, in the background)")
            cuts += 1
            code = await _child("cutting", cutting)
            if code:
                _LOGGER.warning("Cutting the model failed (exit %s): calls are decoded whole", code)
                return
            had, teach = True, teacher is not None
            if on_cut is not None and mark.is_file():
                _LOGGER.info("The model is cut: the next worker takes up the cut (word times)")
                on_cut()
        if teach and teacher is not None:
            code = await _child("teaching", teacher, idle=True)
            if code:
                _LOGGER.warning(
                    "Teaching the voices failed (exit %s): windows use probe rows", code
                )
                teacher = None
        await asyncio.sleep(WANTED_EVERY)
        teach = _any(wanted)


def _any(folder: Path) -> bool:
    try:
        return any(folder.glob("*.voice"))
    except OSError:
        return False


def _lowest() -> None:
    """Nice 19, and where Linux allows, only when the CPU would otherwise idle."""
    os.nice(19)
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # type: ignore[attr-defined]


async def _child(module: str, args: list[str], idle: bool = False) -> int:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        f"wyoming_kokoro.synthesis.{module}",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        env=child_env(),  # it ends with the server (see lifeline.py)
        # Neither may ever slow a request down.
        preexec_fn=_lowest if idle else lambda: os.nice(19),
    )
    try:
        return await process.wait()
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
