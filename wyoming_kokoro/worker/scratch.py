"""The worker's own temporary directory, removed by the next worker once it is gone.

phonemizer copies libespeak-ng (about 0.6 MB) into a fresh temporary directory for
every espeak wrapper, a worker holds four, and each is removed when its wrapper is
finalized. A worker forked by `--prefork` leaves with `os._exit`, and a hung or
crashed one is killed: neither finalizes, so every such burst left its copies in the
system's temporary directory (on a Pi, its SD card) for good. So a worker puts its
temporary files under `wyoming-kokoro-<pid>`, removes it on the way out where
nothing else will, and removes those of workers no longer running when it starts.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

_LOGGER = logging.getLogger(__name__)

PREFIX = "wyoming-kokoro-"


def own_tempdir() -> Path | None:
    """Make this process's temporary files go to a directory of its own (None if it
    cannot be made: they then go where they did), after sweeping gone workers' ones."""
    base = Path(tempfile.gettempdir())
    _sweep(base)
    mine = base / f"{PREFIX}{os.getpid()}"
    try:
        mine.mkdir(exist_ok=True)  # a leftover under a reused pid is this worker's now
    except OSError as err:
        _LOGGER.debug("No temporary directory of the worker's own (%s)", err)
        return None
    tempfile.tempdir = str(mine)
    return mine


def discard(directory: Path | None) -> None:
    """Remove the worker's directory: only on an exit that finalizes nothing (the
    wrappers' own clean-up would fail on it otherwise)."""
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)


def _sweep(base: Path) -> None:
    try:
        leftovers = list(base.glob(f"{PREFIX}*"))
    except OSError:
        return
    for path in leftovers:
        pid = path.name.removeprefix(PREFIX)
        if pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
            _LOGGER.debug("Removing %s, left by a worker that is gone", path)
            shutil.rmtree(path, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: not ours to judge
    return True
