"""Where sentences end: the marks that may end one, and pysbd asked about bounded windows.

`SentenceStream` (pieces.py) walks a line from one possible end to the next; this
module says where those are, which of them are decided, and what pysbd makes of
the window around them.
"""

from __future__ import annotations

import itertools
import re

import pysbd

from wyoming_kokoro.text.g2p import base_language

# pysbd's cost grows faster than the text: it is shown at most this much text after
# the first sentence end it has to decide, and this much before it (the words its
# abbreviation and number rules look at).
WINDOW = 1000
CONTEXT = 100
# A sentence end in a window cut short is decided only with this much text after it.
LOOKAHEAD = 100
# pysbd decides an end by the words around it, and the next one is known by its
# first letter ("Dr. Smith", "5 p.m. Then"): an end it declines with a letter after
# it is declined for good, so each end is shown to it about once.

# A sentence is complete once text follows it: after Latin marks a space shows it,
# Chinese and Japanese put no space after 。！？ (closing brackets may follow).
# Hindi ends sentences with a danda (।).
SENTENCE_DONE = re.compile(r"[.!?…:;।॥]['\")\]]*\s|[。！？][」』）”]*(?=.)")
# What a possible sentence end can start with and continue in, before its space.
_END_MARKS = frozenset(".!?…:;।॥'\")]。！？」』）”")
_NEXT_WORD = re.compile(r"\S")

_PYSBD_LANGS = {"en", "es", "fr", "it", "hi", "de", "nl", "ja", "zh"}


class Segmenter:
    """pysbd for one language (English where it has none), shown part of a line."""

    def __init__(self, language: str) -> None:
        lang = base_language(language)
        self._segmenter = pysbd.Segmenter(
            language=lang if lang in _PYSBD_LANGS else "en", clean=False
        )

    def bounds(self, line: str, start: int, end: int) -> list[int]:
        """Offsets in `line` where pysbd starts a sentence within line[start:end]."""
        window = line[start:end]
        bounds: list[int] = []
        pos = 0
        first = True
        for seg in self._segmenter.segment(window):
            if not seg:
                continue
            at = window.find(seg, pos)
            if at < 0:
                break  # not a piece of the text as given: trust nothing after it
            if not first:
                bounds.append(start + at)
            first = False
            pos = at + len(seg)
        return bounds

    def segments(self, text: str, start: int, end: int) -> list[str]:
        """text[start:end] cut where pysbd ends sentences; nothing dropped."""
        cuts = [start, *self.bounds(text, start, end), end]
        return [text[a:b] for a, b in itertools.pairwise(cuts) if a < b]


def decided(line: str, first: int, limit: int, known: bool) -> int:
    """Where the undecided sentence ends begin, after pysbd saw text up to `limit`.

    A possible end that pysbd declined is decided once the word after it is
    complete (or enough text follows, for scripts without spaces); in a window
    cut short, every possible end with `LOOKAHEAD` characters after it is.
    """
    settled = max(first, 0)
    for m in SENTENCE_DONE.finditer(line, settled):
        if m.end() > limit:
            break
        after = _skip_space(line, m.end())
        if known and not _NEXT_WORD.match(line, after):
            return m.start()
        settled = after
    return settled


def word_after(line: str, pos: int) -> bool:
    """Whether a word has begun after `pos`, past the spaces there."""
    return _NEXT_WORD.match(line, _skip_space(line, pos)) is not None


def window_start(line: str, first: int) -> int:
    """Where pysbd's window starts: `CONTEXT` before the first undecided end, at a word."""
    start = first - CONTEXT
    if start <= 0:
        return 0
    space = line.find(" ", start, first)
    return space + 1 if space >= 0 else start


def quiet_end(line: str, start: int) -> int:
    """Where the marks at the end of `line` begin: a sentence end may grow from there."""
    end = len(line)
    while end > start and line[end - 1] in _END_MARKS:
        end -= 1
    return end


def _skip_space(line: str, pos: int) -> int:
    while pos < len(line) and line[pos].isspace():
        pos += 1
    return pos
