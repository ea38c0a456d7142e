"""The hidden file a result is written to before it takes its name (audio, captions).

It lies beside the final file and is named for it and for the process writing it
(`.NAME.kokoro-say-PID-HOST-XXXXXXXX`, HOST a hash of the host name: a process of
another machine or container sharing the folder is not looked for here). A run
removes its own on every way out it can catch; one killed outright (SIGKILL, a power
cut) leaves it, and the next run on this host writing the same file removes it once
that process is gone.
"""

from __future__ import annotations

import logging
import os
import tempfile
import zlib

_LOGGER = logging.getLogger(__name__)
_TAG = "kokoro-say-"


def make(final: str) -> tuple[int, str]:
    """A new partial file for `final` (a real path): its descriptor and path, as
    `tempfile.mkstemp` gives them. Partial files of writers that are gone are swept."""
    directory, name = os.path.split(final)
    sweep(directory, name)
    return tempfile.mkstemp(prefix=f".{name}.{_TAG}{os.getpid()}-{_host()}-", dir=directory)


def sweep(directory: str, name: str) -> list[str]:
    """Remove the partial files of `name` in `directory` whose process has ended."""
    prefix = f".{name}.{_TAG}"
    removed: list[str] = []
    try:
        entries = list(os.scandir(directory or "."))
    except OSError:
        return removed  # the run's own mkstemp will say what is wrong
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        fields = entry.name[len(prefix) :].split("-", 2)  # pid, host, mkstemp's letters
        if len(fields) != 3 or not fields[0].isdigit() or fields[1] != _host():
            continue
        if _alive(int(fields[0])):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(entry.name)
                _LOGGER.debug("Removed %s, left by a run that was killed", entry.name)
        except OSError as err:
            _LOGGER.debug("Could not remove %s: %s", entry.name, err)
    return removed


def _host() -> str:
    return f"{zlib.crc32(os.uname().nodename.encode()):08x}"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive, and its file is not ours
    return True
