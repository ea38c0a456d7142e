"""The worker's own temporary directory, removed by a later worker once it is gone.

phonemizer copied libespeak-ng into a fresh temporary directory for
every espeak wrapper (it still does where the cache is read-only: see
text/g2p/espeak_library.py), each removed when its wrapper is finalized. A worker
forked by `--prefork` leaves with `os._exit`, and a hung or crashed one is killed:
neither finalizes, so every such burst left its copies in the system's temporary
directory (on a Pi, its SD card) for good. So a worker (and the model cut) puts
its temporary files in a directory of its own, holds a lock on a file in it while it
runs, removes it on the way out where nothing else will, and removes those whose lock
nobody holds when it starts. A lock, not a pid: a pid may be reused, or belong to
another container sharing the directory.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

_LOGGER = logging.getLogger(__name__)

PREFIX = "wyoming-kokoro-"
_LOCK = ".lock"
# A directory with no lock file yet is being made by a worker starting now; one still
# without it after this long was left by a worker killed in between.
_UNLOCKED_GRACE_S = 600


@dataclass
class Scratch:
    """A worker's temporary directory and the lock that shows it is in use."""

    path: Path
    lock: int  # an open file descriptor, never inherited: locked until the process ends

    def discard(self) -> None:
        """Remove the directory: only on an exit that finalizes nothing (the wrappers'
        own clean-up would fail on it otherwise)."""
        shutil.rmtree(self.path, ignore_errors=True)
        os.close(self.lock)


def own_tempdir() -> Scratch | None:
    """Send this process's temporary files to a directory of its own, after removing
    those of workers that are gone. None (and nothing changed) if that cannot be done:
    the worker then works as it would without it."""
    try:
        base = Path(tempfile.gettempdir())
        _sweep(base)
        # Unique, made atomically and private: another user cannot have made it first.
        path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))
        lock = os.open(path / _LOCK, os.O_CREAT | os.O_WRONLY, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except Exception as err:  # anything at all: the worker must start regardless
        _LOGGER.debug("No temporary directory of the worker's own (%s)", err)
        return None
    tempfile.tempdir = str(path)
    return Scratch(path, lock)


def _sweep(base: Path) -> None:
    for path in base.glob(f"{PREFIX}*"):
        try:
            if path.is_symlink() or not path.is_dir():
                continue
            if _abandoned(path):
                _LOGGER.debug("Removing %s, left by a worker that is gone", path)
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue  # another user's, or gone meanwhile: not ours to judge


def _abandoned(path: Path) -> bool:
    """Whether no running worker holds the directory's lock."""
    try:
        lock = os.open(path / _LOCK, os.O_RDONLY)
    except FileNotFoundError:
        return time.time() - path.stat().st_mtime > _UNLOCKED_GRACE_S
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(lock)  # also lets go of the lock just taken
    return True
