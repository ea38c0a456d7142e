"""A data dir's small text file (presets.yaml, lexicon.txt) changed in place by the
server, for the page's "save" buttons.

One writer at a time (an flock on a lock file beside it, so two saves never lose one
another's change); the new text is written aside and renamed over the old one, so a
reader (a rescan, the user's editor, a backup) sees the old file or the new, never half.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


class EditError(ValueError):
    """A change refused; its text says why in words a user reads (no paths)."""


def edit_text_file(path: Path, change: Callable[[bytes | None], bytes | None]) -> None:
    """Give `change` the file's bytes (None: there is none) under the lock; write
    what it returns (None or the same bytes: nothing). Its EditError, or an OSError
    of the file system, comes out of here and nothing is written."""
    # A link (e.g. into a shared folder) stays a link: its target is what changes.
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path = target.with_name(f".{target.name}.lock")
    with open(lock_path, "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released when the file closes
        try:
            old: bytes | None = target.read_bytes()
        except FileNotFoundError:
            old = None
        new = change(old)
        if new is not None and new != old:
            _replace(target, new)


def _replace(path: Path, data: bytes) -> None:
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    # The rename itself survives a power cut only once the folder is synced too.
    with contextlib.suppress(OSError):
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
