"""Code blocks in spoken text: which lines open and close one, and which only look so.

Lines of code are not read aloud. What makes a fence follows CommonMark where a
misread costs the listener words: a line that opened a block by mistake silenced
everything after it.
"""

from __future__ import annotations

import re
from enum import Enum

# An opening fence: three or more backticks or tildes. A backtick fence's info string
# holds no backtick: "```ls -la``` shows all files." is a line of text.
_OPENS = re.compile(r"\s*(?:(`{3,})[^`]*|(~{3,}).*)")
# A closing fence is fence characters alone, of the opener's kind.
_CLOSES = re.compile(r"\s*(`{3,}|~{3,})\s*")
_TICKS = re.compile(r"`+")
# A block that is never closed is spoken after all, once the text ends: a line taken
# for a fence ("~~~ wavy line ~~~") must not cost the rest of the answer. A long one
# is taken for code cut short (an LLM stopped mid-block) and stays unsaid.
MAX_UNCLOSED_CHARS = 2000


class LineKind(Enum):
    TEXT = "text"
    FENCE = "fence"  # a block opened or closed here: the paragraph ends
    CODE = "code"  # a line inside a block: not read


class Fences:
    """Tracks code blocks over the lines of a text, and open inline code spans.

    A backtick run in mid-line opens an inline code span that a later run of the same
    length closes, even on a later line of the paragraph: a line starting with that run
    closes the span and opens no block. `feed` is shown the raw text of the line being
    written, in any pieces, so the spans are known however the text was chunked.
    """

    def __init__(self) -> None:
        self._fence = ""  # the open block's fence, "" outside one
        self._lines: list[str] | None = []  # the open block's lines; None: too long to say
        self._size = 0
        self._span = 0  # length of the span open when the current line began (0: none)
        self._open = 0  # ... after the current line's text so far
        self._pending = 0  # a backtick run at the end of the text so far: may grow

    @property
    def in_code(self) -> bool:
        return bool(self._fence)

    def feed(self, part: str) -> None:
        """More of the current line (no line break)."""
        if not part:
            return
        end = 0
        for m in _TICKS.finditer(part):
            run = len(m[0])
            if m.start() == 0:
                run += self._pending  # the run the text so far ended in goes on
            else:
                self._run_ends()
            self._pending = run
            end = m.end()
            if end < len(part):
                self._run_ends()
        if end < len(part):
            self._run_ends()

    def line(self, line: str, may_open: bool) -> LineKind:
        """What the complete line `line` is (`may_open`: it starts a line, so may open
        a block)."""
        self._run_ends()
        span, self._span = self._span, self._open
        kind = self._kind(line, may_open, span)
        if kind is not LineKind.TEXT or not line.strip():
            self._span = self._open = 0  # a block or a blank line ends the paragraph
        return kind

    def unclosed(self) -> list[str]:
        """End of text: the lines of a block never closed, to be spoken (see
        MAX_UNCLOSED_CHARS); the block is over either way."""
        lines = self._lines if self._fence else []
        self._fence, self._lines, self._size = "", [], 0
        return lines or []

    def _kind(self, line: str, may_open: bool, span: int) -> LineKind:
        if self._fence:
            closes = _CLOSES.fullmatch(line)
            if closes and closes[1][0] == self._fence[0] and len(closes[1]) >= len(self._fence):
                self._fence, self._lines, self._size = "", [], 0
                return LineKind.FENCE
            self._keep(line)
            return LineKind.CODE
        opens = _OPENS.fullmatch(line) if may_open else None
        if opens is None or (opens[1] and len(opens[1]) == span):
            return LineKind.TEXT
        self._fence = opens[1] or opens[2]
        self._lines, self._size = [], 0
        self._keep(line)
        return LineKind.FENCE

    def _keep(self, line: str) -> None:
        if self._lines is None:
            return
        self._size += len(line) + 1
        if self._size > MAX_UNCLOSED_CHARS:
            self._lines = None
        else:
            self._lines.append(line)

    def _run_ends(self) -> None:
        run, self._pending = self._pending, 0
        if not run:
            return
        self._open = run if not self._open else (0 if run == self._open else self._open)
