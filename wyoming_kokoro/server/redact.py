"""What a client may be told of a failure: both doors word it through here.

A failure's text can name the server's files (a model that cannot load, a voices
file gone); the log keeps the whole text, a client gets each file's name only.
"""

from __future__ import annotations

import re

# An absolute path (not the tail of a URL or of a relative one), spaces and all
# when a later word goes on with a slash
_PATH = re.compile(r"(?<![\w.~:/-])/[^\s'\":,]+(?: [^\s'\":,/]+/[^\s'\":,]*)*")


def without_paths(text: str) -> str:
    """`text` with each file-system path cut to its file name: a client is told
    what failed, not where the server keeps its files (the log keeps those)."""
    return _PATH.sub(lambda m: m.group().rstrip("/").rsplit("/", 1)[-1] or "/", text)
