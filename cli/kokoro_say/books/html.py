"""HTML and XHTML (a web page, or a document of an EPUB) into paragraphs as a listener
hears them: what is not read is left out, what is read is cleaned as the server cleans
text (wyoming_kokoro/text/markdown.py).

Parsed with the standard library's HTML parser: it reads no DTD and no entity from
outside, and takes HTML5 and XHTML alike. Not read: scripts, styles, navigation, notes
(an `aside`, or an element an EPUB or ARIA marks as a footnote or endnote) and the
markers that link to them, what the page hides (`hidden`, `aria-hidden`, an inline
`display: none`), images (their alt text too: a description for the eye,
read in the middle of a sentence, and a figure's caption says it; a drop cap's letter
is read), code blocks, ruby's readings beside their base text. Tables are read row by
row, their cells one after another, as the server reads a Markdown table.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from kokoro_say.book import Book
from kokoro_say.reading import decoded
from wyoming_kokoro.text.markdown import clean_inline

from .sections import Block, chapters_from, name_title, titled

_SKIPPED = {"script", "style", "head", "nav", "aside", "noscript", "template", "svg", "math"}
_SKIPPED |= {"button", "select", "textarea", "iframe", "object", "audio", "video", "canvas"}
# Ruby's reading (furigana) beside its base text: the base is read, not both.
_SKIPPED |= {"rt", "rp"}
# An image that is a word's first letter (a drop cap) is read as that letter.
_DROP_CAP = re.compile(r"[^\W\d_]{1,2}")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param"}
_VOID |= {"source", "track", "wbr"}
_BLOCKS = {"p", "div", "section", "article", "main", "header", "footer", "blockquote", "li"}
_BLOCKS |= {"ul", "ol", "dl", "dt", "dd", "figure", "figcaption", "table", "caption", "body"}
_BLOCKS |= {"h3", "h4", "h5", "h6", "hr", "address", "center", "details", "summary"}
_BLOCKS |= {"thead", "tbody", "tfoot", "html"}
# epub:type (EPUB 3) and role (ARIA DPUB) values of notes, their lists and the links to them.
_NOTES = re.compile(
    r"\b(?:doc-)?(?:foot|end|rear)notes?\b|\bnoteref\b|\bdoc-noteref\b|\bdoc-backlink\b|"
    r"\bbacklink\b|\bpagebreak\b|\bdoc-pagebreak\b|\bdoc-toc\b|\btoc\b",
    re.IGNORECASE,
)
# A link to a note, in its usual dress: a number, a letter or a mark, maybe bracketed.
_MARKER = re.compile(r"\s*[\[(]?(?:\d{1,3}|[a-z]|[*†‡§¶]{1,3})[\])]?\s*")
_SPACE = re.compile(r"\s+")
_NO_DISPLAY = re.compile(r"(?:^|;)\s*display\s*:\s*none\b", re.IGNORECASE)
# The encoding a document names at its start, in its XML declaration or a meta tag.
_NAMED_ENCODING = re.compile(
    rb"<\?xml[^>]*encoding\s*=\s*[\"']([\w.:-]+)|<meta[^>]*charset\s*=\s*[\"']?([\w.:-]+)",
    re.IGNORECASE,
)


def _hidden(values: dict[str, str | None]) -> bool:
    """Not shown to the eye, or not said by a screen reader: not heard either."""
    return (
        "hidden" in values
        or (values.get("aria-hidden") or "").strip().lower() == "true"
        or _NO_DISPLAY.search(values.get("style") or "") is not None
    )


@dataclass
class Page:
    """A document's paragraphs and headings, its title and language, and the paragraph
    at which each `id` stands (where an EPUB's table of contents points)."""

    blocks: list[Block] = field(default_factory=list)
    anchors: dict[str, int] = field(default_factory=dict)
    title: str | None = None
    language: str | None = None


def read_html_book(path: Path, data: bytes) -> Book:
    page = read_page(markup_text(data, path.name))
    sole, blocks = titled(page.blocks)
    title = page.title or sole or name_title(path)
    return Book(
        title=title,
        author=None,
        language=page.language,
        cover=None,
        chapters=tuple(chapters_from(blocks, title)),
    )


def markup_text(data: bytes, name: str) -> str:
    """A page's text in the encoding its byte order mark or its start names; UTF-8
    otherwise (bad bytes not spoken, one warning)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", "replace")
    named = _NAMED_ENCODING.search(data[:1024])
    if named and not data.startswith(codecs.BOM_UTF8):
        try:
            codec = codecs.lookup((named[1] or named[2]).decode("ascii"))
        except LookupError:
            codec = None
        if codec is not None and codec.name != "utf-8":
            return data.decode(codec.name, "replace")
    return decoded(data, name)


def read_page(text: str) -> Page:
    parser = _Walker()
    parser.feed(text)
    parser.close()
    return parser.finish()


class _Walker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._stack: list[str] = []  # open elements
        self._skip = 0  # depth in the stack below which nothing is read (0: reading)
        self._line: list[str] = []  # text of the line being read
        self._lines: list[str] = []  # lines of the paragraph being read
        self._cells: list[str] | None = None  # a table row's cells, while in one
        self._heading = 0  # 1 or 2 while in an h1 or h2
        self._in_title = False
        self._title: list[str] = []
        self._pre = 0
        self._link: tuple[int, list[str]] | None = None  # an open link: its depth, text

    # -- the parser's events -------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "html":
            self.page.language = values.get("lang") or values.get("xml:lang") or None
        if tag == "title" and "head" in self._stack:
            self._in_title = True
        if tag not in _VOID:
            self._stack.append(tag)
        if not self._skip:
            self._open(tag, values)
        # After the paragraph before it was ended: where a chapter cut here starts.
        for name in ("id", "name" if tag == "a" else ""):
            if name and values.get(name) and values[name] not in self.page.anchors:
                self.page.anchors[str(values[name])] = len(self.page.blocks)

    def _open(self, tag: str, values: dict[str, str | None]) -> None:
        if tag == "img" and _DROP_CAP.fullmatch(values.get("alt") or ""):
            self.handle_data(values["alt"] or "")
        if tag == "br":
            self._end_line()
        elif tag == "hr":
            self._end_block()
        if tag in _VOID:
            return
        kind = f"{values.get('epub:type') or ''} {values.get('role') or ''}"
        if (
            tag in _SKIPPED
            or _NOTES.search(kind)
            or (tag == "code" and self._pre)
            or _hidden(values)
        ):
            self._skip = len(self._stack)
            return
        if tag == "a" and "#" in (values.get("href") or ""):
            self._link = (len(self._stack), [])
        if tag in ("h1", "h2"):
            self._end_block()
            self._heading = int(tag[1])
        elif tag == "tr":
            self._end_row()  # the row before, if its end tag was left out
            self._cells = []
        elif tag in ("td", "th"):
            self._end_cell()
        elif tag in _BLOCKS and not self._heading:
            self._end_block()
        elif tag == "pre":
            self._end_block()
            self._pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or tag not in self._stack:
            return
        while self._stack:  # elements left open inside it close with it
            closed = self._stack.pop()
            depth = len(self._stack) + 1
            if closed == "title":
                self._in_title = False
            if self._skip and depth <= self._skip:
                self._skip = 0
            elif not self._skip:
                self._close(closed, depth)
            if closed == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title.append(data)
        if self._skip:
            return
        if self._link is not None:
            self._link[1].append(data)
        if self._pre:
            *whole, last = data.split("\n")
            for part in whole:
                self._line.append(part)
                self._end_line()
            self._line.append(last)
        else:
            self._line.append(data)

    # -- what the events make ------------------------------------------------------

    def _close(self, tag: str, depth: int) -> None:
        if tag == "a" and self._link is not None and self._link[0] == depth:
            text = "".join(self._link[1])
            self._link = None
            if _MARKER.fullmatch(text) and self._line and "".join(self._line).endswith(text):
                self._drop_tail(text)  # a note's number: not read
        elif tag in ("h1", "h2"):
            self._end_block(level=self._heading)
            self._heading = 0
        elif tag in ("td", "th"):
            self._end_cell()
        elif tag == "tr":
            self._end_row()
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            self._end_block()
        elif tag in _BLOCKS and not self._heading:
            self._end_block()

    def _drop_tail(self, text: str) -> None:
        joined = "".join(self._line)
        self._line = [joined[: len(joined) - len(text)]]

    def _end_row(self) -> None:
        self._end_line()
        cells, self._cells = self._cells, None
        if cells:
            self._lines.append(", ".join(cells))

    def _end_cell(self) -> None:
        if self._cells is None:
            return
        cell = clean_inline(_SPACE.sub(" ", "".join(self._line)))
        self._line = []
        if cell:
            self._cells.append(cell)

    def _end_line(self) -> None:
        if self._cells is not None:
            self._end_cell()
            return
        raw = "".join(self._line)
        self._line = []
        line = clean_inline(raw if self._pre else _SPACE.sub(" ", raw))
        if line:
            self._lines.append(line)

    def _end_block(self, level: int = 0) -> None:
        self._end_line()
        if self._cells is not None:
            return  # a paragraph in a cell: the row is still one line of the table
        if self._lines:
            text = " ".join(self._lines) if level else "\n".join(self._lines)
            self.page.blocks.append(Block(text, level))
        self._lines = []

    def finish(self) -> Page:
        self._end_block()
        title = _SPACE.sub(" ", "".join(self._title)).strip()
        self.page.title = title or None
        return self.page
