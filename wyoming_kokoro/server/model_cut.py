"""The server's side of the cut model: build it once, in a low-priority process of
its own (`python -m wyoming_kokoro.synthesis.split`), while the worker speaks with
whole calls; the next burst decodes in windows. The same process teaches the
server's voice, so its first listener's windows have its statistics."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.cut import ready, room_for, split_dir
from wyoming_kokoro.lifeline import child_env

_LOGGER = logging.getLogger(__name__)


def start_build(assets: Assets, teach: str | None = None) -> asyncio.Task[None] | None:
    """In the server: build the parts in a low-priority process unless they exist;
    `teach`: the voice to teach there once they are cut (see synthesis/teaching.py)."""
    target = split_dir(assets.model)
    if target is None or ready(assets.model) is not None or not room_for(target, assets.model):
        return None

    async def run() -> None:
        args = [str(assets.model), str(assets.voices)]
        if assets.embedded_model:
            args.append("--embedded")
        if teach is not None:
            args += ["--teach", teach]
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "wyoming_kokoro.synthesis.split",
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            env=child_env(),  # it ends with the server (see lifeline.py)
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
