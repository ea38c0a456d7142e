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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.cut import cut_dir, ready, room_for
from wyoming_kokoro.lifeline import child_env

_LOGGER = logging.getLogger(__name__)
WANTED_EVERY = 5.0  # seconds between looks for voices wanted since the last teacher


def start_build(
    assets: Assets, teach: str | None = None, teaching: bool = True
) -> asyncio.Task[None] | None:
    """In the server: build the parts in a low-priority process unless they exist;
    `teach`: the voice to teach there once they are cut (see synthesis/teaching.py).
    Then, with `teaching`, the other voices are taught, in the background, for as long
    as the server runs (the task never ends by itself)."""
    target = cut_dir(assets.model)
    if target is None:
        return None
    cut = ready(assets.model) is not None
    if (not cut and not room_for(target, assets.model)) or (cut and not teaching):
        return None
    args = [str(assets.model), str(assets.voices)]
    if assets.embedded_model:
        args.append("--embedded")

    async def run() -> None:
        if ready(assets.model) is None:
            _LOGGER.info("Cutting the model for decoding in windows (once, in the background)")
            code = await _child("cutting", [*args, *(["--teach", teach] if teach else [])])
            if code:
                _LOGGER.warning("Cutting the model failed (exit %s): calls are decoded whole", code)
                return
        if teaching:
            await _teaching(target, [*args, *(["--first", teach] if teach else [])])

    return asyncio.get_running_loop().create_task(run())


async def _teaching(target: Path, args: list[str]) -> None:
    """The teacher once, then again whenever a voice is wanted that it did not teach."""
    wanted = target / "priors" / "wanted"
    while True:
        code = await _child("teaching", args, idle=True)
        if code:
            _LOGGER.warning("Teaching the voices failed (exit %s): windows use probe rows", code)
            return
        while not _any(wanted):
            await asyncio.sleep(WANTED_EVERY)


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
