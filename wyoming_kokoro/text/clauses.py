"""How long a piece of text is, and where a long one is cut: at clauses, else spaces."""

from __future__ import annotations

import re
from collections.abc import Iterator

from wyoming_kokoro.text.charsets import (
    CJK_MARKS,
    COMPAT_IDEOGRAPHS,
    FULLWIDTH_FORMS,
    IDEOGRAPHS,
    KANA,
)

# Pieces shorter than this sound rushed and flat: speak them with a neighbour.
MIN_PIECE_CHARS = 24
# Longer sentences are cut at clauses: the first audio comes sooner, and another
# client waits at most one piece for its turn.
MAX_PIECE_CHARS = 240

# Clause marks: Latin ones before a space, the CJK ones (、，；：) anywhere.
_CLAUSE_CUT = re.compile(r"(?<=[,;:—–])\s+|\s+(?=—)|(?<=[、，；：])\s*")
# Kana, ideographs and full-width forms: one such character says about as much as
# two Latin letters, so it counts twice towards the piece lengths.
WIDE = re.compile(f"[{CJK_MARKS}{KANA}{IDEOGRAPHS}{COMPAT_IDEOGRAPHS}{FULLWIDTH_FORMS}]")


def piece_length(text: str) -> int:
    """Length for the piece limits: CJK characters count twice (see WIDE)."""
    return len(text) + len(WIDE.findall(text))


def cut_point(line: str, start: int, end: int) -> int:
    """Where to cut line[start:end] short: after its last clause mark, else a space."""
    floor = start + (end - start) // 2
    best = None
    for m in _CLAUSE_CUT.finditer(line, floor, end):
        best = m.end()
    if best is None or best <= start:
        space = line.rfind(" ", floor, end)
        best = space + 1 if space >= 0 else end
    return best


def split_long(text: str, limit: int = MAX_PIECE_CHARS) -> Iterator[str]:
    """Cut a long sentence at clause marks, else at spaces; never drop a word."""
    if piece_length(text) <= limit:
        yield text
        return
    limit = max(1, limit * len(text) // piece_length(text))  # in characters of this text
    parts = _CLAUSE_CUT.split(text)
    current = ""
    for part in parts:
        while len(part) > limit:  # one clause that is still too long
            cut = part.rfind(" ", 0, limit)
            cut = cut if cut > limit // 3 else limit
            if current:
                yield current
                current = ""
            yield part[:cut].strip()
            part = part[cut:].strip()
        if current and len(current) + 1 + len(part) > limit:
            yield current
            current = part
        else:
            current = f"{current} {part}".strip()
    if current:
        yield current
