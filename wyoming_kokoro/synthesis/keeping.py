"""Files a worker leaves in the cache for the next one (statistics, pace)."""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

_LOGGER = logging.getLogger(__name__)


def keep(path: Path, data: bytes, what: str, make_folder: bool = False) -> bool:
    """Write `data` to `path` whole, or not at all; False if the cache cannot take it.

    Written aside and renamed, so a worker starting meanwhile reads a whole file. A
    read-only or full cache only means the next worker learns afresh (logged).
    `make_folder`: create the folder too, else a missing one is such a cache.
    """
    aside = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if make_folder:
            path.parent.mkdir(parents=True, exist_ok=True)
        aside.write_bytes(data)
        os.replace(aside, path)
    except OSError as err:
        _LOGGER.debug("Cannot keep %s in %s: %s", what, path, err)
        with contextlib.suppress(OSError):  # a cache that took nothing holds nothing
            aside.unlink(missing_ok=True)
        return False
    return True
