"""What native libraries print straight to file descriptor 2, kept from the user.

libsndfile's MP3 decoder (libmpg123) prints `part2_3_length ... too large` lines
while kokoro-say reads back a file it has just written, a block at a time; the
samples it returns are all there, so the lines say nothing to the user. They are
held in a temporary file and logged with --debug.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Iterator

_LOGGER = logging.getLogger(__name__)
_KEPT = 4096  # bytes of what was printed that the debug log shows


@contextlib.contextmanager
def held() -> Iterator[None]:
    """File descriptor 2 goes to a temporary file while the block runs."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as hold:
            os.dup2(hold.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
                hold.seek(0)
                said = hold.read(_KEPT).decode("utf-8", "replace").strip()
                if said:
                    _LOGGER.debug("A native library said: %s", said)
    finally:
        os.close(saved)
