"""A PDF's text layer as prose: the lines a page repeats at its top and foot (running
heads, page numbers) left out, words hyphenated at a line's end made whole, lines joined
into paragraphs."""

from __future__ import annotations

import functools
import importlib.resources
import json
import math
import re
from collections import Counter

# Lines at a page's top and foot that may be a running head or a page number.
_EDGE = 2
# A line at the edge of at least this share of the pages (and of two) runs on every page.
_RUNNING_SHARE = 0.25
_PAGE_NUMBER = re.compile(
    r"(?:page\s+)?(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s*(?:of|/)\s*\d{1,4})?|[-\u2013\u2014]\s*\d{1,4}\s*[-\u2013\u2014]",
    re.IGNORECASE,
)
_NUMBERS = re.compile(r"\d+")
_HYPHENATED = re.compile(r"(\w+)-$")
_NEXT_WORD = re.compile(r"(\w+)(.*)", re.S)
_WRITTEN = re.compile(r"\w+(?:-\w+)*")
# A line that ends a sentence and stops short of the page's width ends its paragraph.
ENDS_SENTENCE = re.compile(r"[.!?:…]['\")\]\u201d\u2019]*$")
_SHORT = 0.85


def running_lines(pages: list[list[str]], keep: set[str]) -> list[list[str]]:
    """Each page's lines without its running heads and page numbers (never a line in
    `keep`: a chapter's heading at the top of its page is not a running head)."""

    def shape(line: str) -> str:
        return _NUMBERS.sub("#", " ".join(line.lower().split()))

    seen: Counter[str] = Counter()
    for lines in pages:
        seen.update({shape(line) for line in lines[:_EDGE] + lines[-_EDGE:]})
    least = max(2, math.ceil(len(pages) * _RUNNING_SHARE))
    running = {s for s, n in seen.items() if n >= least}

    def dropped(line: str) -> bool:
        if line in keep or ENDS_SENTENCE.search(line):  # a running head ends no sentence
            return False
        return shape(line) in running or _PAGE_NUMBER.fullmatch(line) is not None

    out = []
    for lines in pages:
        top = 0
        while top < min(_EDGE, len(lines)) and dropped(lines[top]):
            top += 1
        foot = len(lines)
        while foot > max(top, len(lines) - _EDGE) and dropped(lines[foot - 1]):
            foot -= 1
        out.append(lines[top:foot])
    return out


def written(lines: list[str]) -> frozenset[str]:
    """The words a document writes within its lines, hyphenated ones whole and in parts
    (what shows how it writes a word cut at a line's end)."""
    words: set[str] = set()
    for line in lines:
        for word in _WRITTEN.findall(line.rstrip("-")):
            words.add(word)
            words.update(word.split("-"))
    return frozenset(words)


def paragraphs(lines: list[str], document: frozenset[str]) -> list[str]:
    """Lines joined into paragraphs; `document` (`written()` of all of the text) shows
    how the book writes the words cut at a line's end."""
    width = max((len(line) for line in lines), default=0)
    out: list[str] = []
    current = ""
    for line in lines:
        current = line if not current else _joined(current, line, document)
        if ENDS_SENTENCE.search(line) and len(line) < _SHORT * width:
            out.append(current)
            current = ""
    if current:
        out.append(current)
    return out


def _joined(before: str, line: str, document: frozenset[str]) -> str:
    cut = _HYPHENATED.search(before)
    following = _NEXT_WORD.match(line)
    if cut is None or following is None:
        return f"{before} {line}"
    head, tail = cut[1], following[1]
    whole = keeps_hyphen(head, tail, document)
    return before[: cut.start()] + head + ("-" if whole else "") + tail + following[2]


def keeps_hyphen(head: str, tail: str, document: frozenset[str]) -> bool:
    """Whether "head-" at a line's end and "tail" on the next are a hyphenated word.

    As the document writes it elsewhere, if it does; a name or number after the hyphen
    keeps it ("Jean-Paul", "COVID-19"); else as English writes it: a word whole
    ("every-one" is "everyone"), a compound of two words ("well-known"), or a word the
    typesetter cut ("exam-ple").
    """
    if f"{head}-{tail}" in document:
        return True
    if head + tail in document:
        return False
    if tail[0].isupper() or tail[0].isdigit():
        return True
    words = _english()
    if (head + tail).lower() in words:
        return False
    return head.lower() in words and tail.lower() in words


@functools.cache
def _english() -> frozenset[str]:
    """English words: misaki's lexicon, which the English voices already speak from."""
    try:
        data = (importlib.resources.files("misaki") / "data" / "us_gold.json").read_text()
    except (OSError, ModuleNotFoundError):
        return frozenset()
    return frozenset(word.lower() for word in json.loads(data))
