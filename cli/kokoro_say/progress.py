"""How far a long export is where no progress bar can show it (a log, a pipe, a
service's journal): a line on stderr every few seconds."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

# Often enough that a waiting user sees it move, seldom enough not to flood a log.
EVERY = 5.0


class PieceLines:
    """Call with the number of pieces spoken so far: a line when `every` seconds have
    passed since the start or the last line, none once all are spoken."""

    def __init__(
        self,
        total: int,
        every: float = EVERY,
        clock: Callable[[], float] = time.monotonic,
        stream: TextIO | None = None,
    ) -> None:
        self._total = total
        self._every = every
        self._clock = clock
        self._stream = stream if stream is not None else sys.stderr
        self._next = clock() + every

    def __call__(self, done: int) -> None:
        now = self._clock()
        if now < self._next or done >= self._total:
            return
        self._next = now + self._every
        percent = 100 * done // self._total
        print(
            f"kokoro-say: {done} of {self._total} pieces spoken ({percent} %)",
            file=self._stream,
            flush=True,
        )
