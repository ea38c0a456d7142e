"""What the look at a model file in a data dir found, remembered while the file is
unchanged: hashing a 300 MB published file at every server start (and every rescan)
would take seconds on a Raspberry Pi.

The verdict is kept in the cache (`model-files.json`) under the file's path with its
identity: device, inode, size, and the times of its last change (mtime, ctime). A file
replaced by another has a new inode, one rewritten in place a new mtime and ctime,
even when its mtime is set back; a new release's look (`LOOK`) judges every file anew.
A cache that cannot be written costs the memory, never the look.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wyoming_kokoro.catalog.places import cache_dir

_LOGGER = logging.getLogger(__name__)

LOOK = 2  # raised whenever what the look checks changes
_FILE = "model-files.json"
_KEEP = 64  # files remembered: a data dir's few models, and then some


def _identity(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def remembered(path: Path, look: Callable[[Path], str | None]) -> str | None:
    """`look(path)`: why the file cannot be the model, or None; from the cache while
    the file is the one that was looked at."""
    try:
        identity = _identity(path)  # before the look: a change during it is seen next time
    except OSError as err:
        return f"cannot read it ({err.strerror or err})"
    store = _read()
    entry = store.get(str(path))
    if isinstance(entry, dict) and entry.get("identity") == identity:
        problem = entry.get("problem")
        return problem if isinstance(problem, str) else None
    problem = look(path)
    store.pop(str(path), None)
    store[str(path)] = {"identity": identity, "problem": problem}
    _write(dict(list(store.items())[-_KEEP:]))
    return problem


def _read() -> dict[str, Any]:
    try:
        data = json.loads((cache_dir() / _FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("look") != LOOK:
        return {}
    files = data.get("files")
    return dict(files) if isinstance(files, dict) else {}


def _write(files: dict[str, Any]) -> None:
    target = cache_dir() / _FILE
    tmp = target.with_name(f".{_FILE}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"look": LOOK, "files": files}))
        os.replace(tmp, target)  # atomic: another server reads the old list or this one
    except OSError as err:
        _LOGGER.debug("Cannot remember the model files' verdicts in %s: %s", target, err)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
