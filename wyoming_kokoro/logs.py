"""How a log line looks, in the server and its worker: a time stamp first, unless
the lines go to journald.

The add-on's log (s6-overlay, Docker) and a terminal show the lines as written, with
no time of their own, so each line carries one; journald stamps every line it
receives, and systemd says that stderr is the journal (`JOURNAL_STREAM`: its device
and inode), so there a second stamp would only crowd the line.
"""

from __future__ import annotations

import os
import re
import sys

STAMP = "%(asctime)s "


def to_journal() -> bool:
    """Whether stderr is the journal's stream (systemd's `JOURNAL_STREAM` names it)."""
    named = re.fullmatch(r"(\d+):(\d+)", os.environ.get("JOURNAL_STREAM", ""), re.ASCII)
    if named is None:
        return False
    try:
        stat = os.fstat(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # no stderr, or not a real file
        return False
    return (stat.st_dev, stat.st_ino) == (int(named[1]), int(named[2]))


def line_format(rest: str) -> str:
    """A logging format: the time stamp (where nothing else adds one), then `rest`."""
    return rest if to_journal() else STAMP + rest
