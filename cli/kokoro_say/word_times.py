"""What `--captions` needs before anything is spoken: word times come from the cut
model's plan (synthesis/timing.py), so a run that has no cut yet makes it, once, in
this process (the server would make it in the background; kokoro-say cannot wait
for that). A model that cannot be cut is refused before the model loads."""

from __future__ import annotations

import logging
import sys
import threading
import time

import click

from wyoming_kokoro.catalog.assets import Assets
from wyoming_kokoro.catalog.cut import cut_dir, locked, ready, room_for

_LOGGER = logging.getLogger("kokoro_say")


def prepare(assets: Assets, threads: int, quiet: bool) -> None:
    """The model's cut made if it is not there (ClickException if it cannot be)."""
    if ready(assets.model) is not None:
        return
    target = cut_dir(assets.model)
    if target is None:
        raise click.ClickException(
            "--captions needs word times, which need the model cut, made only for the "
            f"published model files under their own names; {assets.model.name} is not one"
        )
    if not room_for(target, assets.model):
        raise click.ClickException(
            "--captions needs the model cut for word times, and the cache has no room "
            "for it (about 300 MB; KOKORO_CACHE_DIR chooses the cache)"
        )
    from wyoming_kokoro.synthesis import cutting  # heavy: onnx and onnxruntime

    # A server (or another kokoro-say) cutting the same model: wait and use its parts.
    with _Progress(quiet), locked(target, "cut"):
        if ready(assets.model) is not None:
            return
        try:
            cutting.build(assets, threads)
        except Exception as err:  # the cut's own failures have many types
            _LOGGER.debug("The cut failed", exc_info=True)
            raise click.ClickException(f"cannot prepare word times: {err}") from err


class _Progress:
    """A line on stderr while the cut is made (a minute or more, once); on a terminal
    it counts the seconds."""

    _SAYING = "kokoro-say: preparing the model for word times (once)"

    def __init__(self, quiet: bool) -> None:
        self._quiet = quiet
        self._done = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> _Progress:
        if self._quiet:
            return self
        if sys.stderr.isatty():
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        else:
            click.echo(f"{self._SAYING}, a minute or two", err=True)
        return self

    def _tick(self) -> None:
        started = time.monotonic()
        while True:
            click.echo(f"\r{self._SAYING}: {time.monotonic() - started:.0f} s", err=True, nl=False)
            if self._done.wait(1.0):
                return

    def __exit__(self, exc_type: object, *_: object) -> None:
        self._done.set()
        if self._ticker is not None:
            self._ticker.join()
            click.echo("", err=True)
        if exc_type is None and not self._quiet:
            click.echo("kokoro-say: the model is ready for word times", err=True)
