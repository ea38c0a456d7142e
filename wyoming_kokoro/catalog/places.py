"""Where the files live: the user's data directory and the cache.

Apart from the rest of catalog/ so that any module may ask (the espeak library's
slots, the cut model's entry, the loudness cache) without importing what finds and
checks the model files.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "wyoming-kokoro"


def default_data_dir() -> Path:
    """Per-user data directory ($KOKORO_DATA_DIR's first entry, else XDG data home)."""
    # The server reads KOKORO_DATA_DIR as its --data-dir list, separated like PATH.
    env = os.environ.get("KOKORO_DATA_DIR", "").split(os.pathsep)[0]
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / APP_NAME


def cache_dir() -> Path:
    """Where the embedded model is assembled ($KOKORO_CACHE_DIR, else XDG cache home)."""
    env = os.environ.get("KOKORO_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / APP_NAME
