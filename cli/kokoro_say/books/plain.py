"""Plain text into chapters: a line such as "Chapter 1", "CHAPTER ONE" or "Part II"
standing alone starts one; Project Gutenberg's licence around the book is not read."""

from __future__ import annotations

import re
from pathlib import Path

from kokoro_say.book import Book
from kokoro_say.reading import decoded

from .sections import Block, chapters_from, name_title

_NUMBER = (
    r"\d{1,4}|[ivxlcdm]{1,8}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|"
    r"thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|first|second|third|fourth|"
    r"fifth|sixth|seventh|eighth|ninth|tenth|last"
)
# A heading line: a chapter, part or book with its number (words may follow after a
# mark: "Chapter 3: The Storm"), or a section of a book's front or back matter alone.
HEADING = re.compile(
    rf"\s*(?:(?:chapter|part|book)\s+(?:{_NUMBER})(?:[-\s](?:{_NUMBER}))*\b\.?"
    r"(?:\s*[:.\u2013\u2014-]\s*\S.{0,80})?"
    r"|prologue|epilogue|preface|foreword|introduction|afterword)\s*[.:]?\s*",
    re.IGNORECASE,
)
# In text alone (not a PDF's lines, where page numbers stand so): a chapter's number
# as an upper-case roman numeral standing alone ("I", "XIV.").
_NUMERAL = re.compile(r"\s*[IVXLC]{1,7}\.?\s*")
# A second line under a heading is its title ("CHAPTER I." / "Down the Rabbit-Hole").
_MAX_TITLE_LINE = 80
# A paragraph with a line this long was wrapped to a width: its lines are one text. A
# paragraph of short lines (verse, an address, a list) keeps its line ends.
_WRAPPED = 60
_GUTENBERG_START = re.compile(r"\*{3}\s*START OF (?:THE|THIS) PROJECT GUTENBERG.*", re.I)
_GUTENBERG_END = re.compile(
    r"\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG.*|^End of (?:the )?Project Gutenberg.*",
    re.I | re.M,
)
# The volunteers' credit that opens many of its books: not the book's words.
_PRODUCED_BY = re.compile(
    r"\s*(?:Produced|Transcribed|E-text prepared) by\b.*?(?:\n[ \t]*\n|\Z)", re.S
)
_FIELD = re.compile(r"^(Title|Author):\s*(\S.*?)\s*$", re.M)


def read_text_book(path: Path, data: bytes) -> Book:
    text = decoded(data, path.name).replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\f", "\n\n")  # a page break ends a paragraph
    text, fields = _without_licence(text)
    title = fields.get("Title") or name_title(path)
    blocks = [_block(p) for p in re.split(r"\n[ \t]*\n", text) if p.strip()]
    return Book(
        title=title,
        author=fields.get("Author"),
        language=None,
        cover=None,
        chapters=tuple(chapters_from(blocks, title)),
    )


def _without_licence(text: str) -> tuple[str, dict[str, str]]:
    start = _GUTENBERG_START.search(text)
    if start is None:
        return text, {}
    fields = dict(_FIELD.findall(text[: start.start()]))
    end = _GUTENBERG_END.search(text, start.end())
    book = text[start.end() : end.start() if end else len(text)]
    credit = _PRODUCED_BY.match(book)
    return book[credit.end() :] if credit else book, fields


def _block(paragraph: str) -> Block:
    lines = [line.strip() for line in paragraph.strip("\n").split("\n") if line.strip()]
    if len(lines) == 1 and _NUMERAL.fullmatch(lines[0]):
        return Block(lines[0], level=1)
    if HEADING.fullmatch(lines[0]) and (
        len(lines) == 1 or (len(lines) == 2 and len(lines[1]) <= _MAX_TITLE_LINE)
    ):
        return Block(_title(lines), level=1)
    if max(len(line) for line in lines) >= _WRAPPED:
        return Block(" ".join(lines))
    return Block("\n".join(lines))


def _title(lines: list[str]) -> str:
    if len(lines) == 1:
        return lines[0]
    first, second = lines
    return first + (" " if first.endswith((".", ":")) else ": ") + second
