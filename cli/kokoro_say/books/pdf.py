"""A PDF (read with pypdf) into chapters: its text layer, cut where its outline's
entries (bookmarks) point, at the line that shows the entry's title on that page.

A PDF without an outline is one chapter. A PDF whose pages hold no text (a scan) or
that is locked by a password is refused with a message saying what would help.
"""

from __future__ import annotations

import bisect
import io
import itertools
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kokoro_say.book import Book, BookError, Chapter

from .pdf_text import ENDS_SENTENCE, paragraphs, running_lines, written
from .plain import HEADING
from .sections import Block, chapters_from, name_title, says_something

_LOGGER = logging.getLogger("kokoro_say")
# A line longer than this is prose, whatever it starts with.
_MAX_HEADING = 60
# A heading's title on the line under it is short.
_MAX_TITLE = 40


@dataclass(frozen=True)
class _Mark:
    title: str
    page: int


def read_pdf_book(path: Path, data: bytes) -> Book:
    reader = _open(path.name, data)
    try:
        marks = _marks(reader)
        raw, torn = _pages(reader)
        info = reader.metadata
    except Exception as err:
        raise _unreadable(path.name, err) from err
    if len(torn) == len(raw):
        raise _unreadable(path.name, ValueError("no page can be read"))
    if torn:
        _LOGGER.warning(
            "%s: %s cannot be read and %s left out",
            path.name,
            _numbered("page", torn),
            "is" if len(torn) == 1 else "are",
        )
    if not any(says_something(line) for lines in raw for line in lines):
        raise BookError(
            f"{path.name} has no text layer (a scan?): run OCR on it first, then read it"
        )
    # A chapter's heading at the top of its page is no running head.
    titles = [m.title for m in marks]
    keep = {
        line
        for lines in raw
        for line in lines
        if _is_heading(line, titles) or HEADING.fullmatch(line)
    }
    pages = running_lines(raw, keep)
    title = _field(info, "title") or name_title(path)
    return Book(
        title=title,
        author=_field(info, "author"),
        language=None,
        cover=None,
        chapters=tuple(_chapters(pages, marks, title) if marks else _headed(pages, title)),
    )


def _open(name: str, data: bytes) -> Any:
    from pypdf import PdfReader  # only when a PDF is read

    # pypdf warns of every flaw it reads past (a wrong offset, a broken font): nothing
    # a listener can act on, so only --debug shows it.
    if not _LOGGER.isEnabledFor(logging.DEBUG):
        logging.getLogger("pypdf").setLevel(logging.ERROR)

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise BookError(
                f"{name} is protected by a password: remove it (with the password) "
                "and read the copy"
            )
        if not len(reader.pages):
            raise BookError(f"{name} has no pages")
    except BookError:
        raise
    except Exception as err:
        raise _unreadable(name, err) from err
    return reader


def _unreadable(name: str, err: Exception) -> BookError:
    """What pypdf's failure means to the user."""
    from pypdf.errors import DependencyError

    if isinstance(err, DependencyError):  # AES, and no cipher library installed
        return BookError(
            f"{name} is encrypted with AES and this installation cannot decrypt it "
            "(the cryptography package is missing)"
        )
    # pypdf's errors on a damaged file are many and deep: the detail is for --debug.
    _LOGGER.debug("pypdf could not read %s", name, exc_info=err)
    return BookError(f"cannot read {name}: it is not a valid PDF")


def _pages(reader: Any) -> tuple[list[list[str]], list[int]]:
    """Each page's lines, and the numbers of those whose text cannot be taken apart (a
    damaged content stream): one such page costs itself, not the whole book."""
    pages: list[list[str]] = []
    torn: list[int] = []
    for number, page in enumerate(reader.pages, 1):
        try:
            pages.append(_lines(page))
        except Exception:  # pypdf's errors on a damaged stream are many and deep
            _LOGGER.debug("pypdf could not read page %d", number, exc_info=True)
            pages.append([])
            torn.append(number)
    return pages, torn


def _numbered(noun: str, numbers: list[int]) -> str:
    """'page 3' or 'pages 3, 7 and 9'."""
    if len(numbers) == 1:
        return f"{noun} {numbers[0]}"
    listed = ", ".join(str(n) for n in numbers[:-1])
    return f"{noun}s {listed} and {numbers[-1]}"


def _lines(page: Any) -> list[str]:
    text = page.extract_text() or ""
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _marks(reader: Any) -> list[_Mark]:
    marks: list[_Mark] = []

    def walk(items: Any) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # an entry that points nowhere in this file
                continue
            if page is not None and page >= 0:
                marks.append(_Mark(" ".join(str(item.title or "").split()), page))

    walk(reader.outline)
    return marks


def _chapters(pages: list[list[str]], marks: list[_Mark], opening: str) -> list[Chapter]:
    """Cut at each mark's heading line (or its page's first line), in reading order."""
    cuts: dict[tuple[int, int], list[str]] = {}
    for mark in marks:
        at = (
            mark.page,
            _heading_line(pages[mark.page], mark.title) if mark.page < len(pages) else 0,
        )
        cuts.setdefault(at, []).append(mark.title)
    starts = sorted(cuts)
    places = [(p, i) for p, page in enumerate(pages) for i in range(len(page))]
    lines = [line for page in pages for line in page]
    document = written(lines)
    bounds = [(0, 0), *starts, (len(pages), 0)]
    out = []
    carried: tuple[str, str] | None = None  # a heading with nothing under it: goes on
    for n, (start, end) in enumerate(itertools.pairwise(bounds)):
        part = lines[bisect.bisect_left(places, start) : bisect.bisect_left(places, end)]
        if n == 0:
            if part:
                out.append(Chapter(title=opening, text="\n\n".join(paragraphs(part, document))))
            continue
        title = ": ".join(t for t in cuts[start] if t) or opening
        heading = [part.pop(0)] if part and _is_heading(part[0], cuts[start]) else []
        if carried is not None:
            title, heading = f"{carried[0]}: {title}", [carried[1], *heading]
            carried = None
        if heading and not part and n < len(bounds) - 2:
            carried = (title, "\n\n".join(heading))  # "Part One", then its first chapter
            continue
        out.append(Chapter(title=title, text="\n\n".join(heading + paragraphs(part, document))))
    return out


def _headed(pages: list[list[str]], opening: str) -> list[Chapter]:
    """A PDF without an outline: chapters at the lines that read as a chapter's heading
    ("Chapter 1", "Part Two: Home") where a line can start one: at a page's top or after
    a sentence ended (not a wrapped line that happens to start so). A short line under
    it is its title ("Chapter 2" / "The Morning")."""
    document = written([line for page in pages for line in page])
    blocks: list[Block] = []
    text: list[str] = []
    for page in pages:
        may_start = True
        for line in page:
            if may_start and len(line) <= _MAX_HEADING and HEADING.fullmatch(line):
                blocks += [Block(p) for p in paragraphs(text, document)]
                blocks.append(Block(line, 1))
                text = []
            elif _is_title_under(blocks, text, line):
                blocks[-1] = Block(f"{blocks[-1].text}: {line}", 1)
            else:
                text.append(line)
            may_start = ENDS_SENTENCE.search(line) is not None or blocks[-1:] == [Block(line, 1)]
    blocks += [Block(p) for p in paragraphs(text, document)]
    return chapters_from(blocks, opening)


def _is_title_under(blocks: list[Block], text: list[str], line: str) -> bool:
    return (
        not text
        and bool(blocks)
        and blocks[-1].heading
        and ":" not in blocks[-1].text
        and len(line) <= _MAX_TITLE
        and line[:1].isupper()
        and ENDS_SENTENCE.search(line) is None
    )


def _heading_line(lines: list[str], title: str) -> int:
    for i, line in enumerate(lines):
        if _shows(line, title):
            return i
    return 0


def _is_heading(line: str, titles: list[str]) -> bool:
    return any(_shows(line, t) for t in titles)


def _shows(line: str, title: str) -> bool:
    """The line shows the title, maybe with more after it ("Chapter 1" in "Chapter 1 Home")."""
    shape, seen = _shape(title), _shape(line)
    return bool(shape) and (seen == shape or seen.startswith(shape + " "))


def _shape(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def _field(info: Any, name: str) -> str | None:
    value = getattr(info, name, None) if info is not None else None
    text = " ".join(str(value).split()) if value else ""
    return text or None
