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


class ChapterProgress:
    """How far a long document is: on a terminal a bar with the chapter, the percentage
    and the time left, redrawn as parts finish; off one a line per chapter finished.
    Parts may finish in any order (several processes): a chapter counts as done when
    its last part is, and the percentage is of the characters to speak."""

    def __init__(
        self,
        chapters: list[tuple[str, int, int]],
        bar: bool,
        clock: Callable[[], float] = time.monotonic,
        stream: TextIO | None = None,
    ) -> None:
        """`chapters`: each chapter's title, its characters and those already spoken."""
        self._titles = [title for title, _, _ in chapters]
        self._left = [total - spoken for _, total, spoken in chapters]
        self._total = sum(total for _, total, _ in chapters) or 1
        self._spoken = sum(spoken for _, _, spoken in chapters)
        self._at_start = self._spoken
        self._bar = bar
        self._clock = clock
        self._started = clock()
        self._stream = stream if stream is not None else sys.stderr
        self._current = next((n for n, left in enumerate(self._left) if left > 0), 0)
        if bar:
            self._draw()

    def part_done(self, chapter: int, chars: int) -> None:
        self._left[chapter] -= chars
        self._spoken += chars
        while self._current < len(self._left) - 1 and self._left[self._current] <= 0:
            self._current += 1
        if self._bar:
            self._draw()
        elif self._left[chapter] <= 0:
            self._line(chapter)

    def percent(self) -> int:
        return min(100, 100 * self._spoken // self._total)

    def seconds_left(self) -> float | None:
        """From this run's pace so far (None before the first part)."""
        spoken = self._spoken - self._at_start
        if spoken <= 0:
            return None
        rate = spoken / max(self._clock() - self._started, 1e-6)
        return (self._total - self._spoken) / rate

    def _left_text(self) -> str:
        seconds = self.seconds_left()
        if seconds is None or self._spoken >= self._total:
            return ""
        whole = round(seconds)
        hours, rest = divmod(whole, 3600)
        text = (
            f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
            if hours
            else f"{rest // 60}:{rest % 60:02d}"
        )
        return f", about {text} left"

    def _line(self, chapter: int) -> None:
        print(
            f"kokoro-say: chapter {chapter + 1} of {len(self._titles)} spoken "
            f"({self.percent()} %{self._left_text()}): {self._titles[chapter]}",
            file=self._stream,
            flush=True,
        )

    def _draw(self) -> None:
        width = 24
        filled = width * self.percent() // 100
        title = self._titles[self._current] if self._titles else ""
        shown = title if len(title) <= 30 else title[:29] + "…"
        text = (
            f"\rChapter {self._current + 1}/{len(self._titles)} "
            f"[{'#' * filled}{'-' * (width - filled)}] {self.percent():3d} %"
            f"{self._left_text()}  {shown}"
        )
        print(f"{text}\033[K", end="", file=self._stream, flush=True)

    def close(self) -> None:
        if self._bar:
            print("", file=self._stream, flush=True)
