"""Markdown into chapters at its `#` and `##` headings (and their underlined forms), each
line cleaned as the server cleans an answer (wyoming_kokoro/text/markdown.py): code
blocks, rules and marks not read, tables row by row, soft-wrapped lines joined."""

from __future__ import annotations

import re
from pathlib import Path

from kokoro_say.book import Book
from kokoro_say.reading import decoded
from wyoming_kokoro.text.fences import Fences, LineKind
from wyoming_kokoro.text.markdown import LINE_PREFIX, RULE, TABLE_SEP, clean_inline, table_row

from .sections import Block, Paragraphs, chapters_from, name_title, titled

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_FRONT_MATTER = re.compile(r"---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_FIELD = re.compile(r"^(title|author):[ \t]*(['\"]?)(.+?)\2[ \t]*$", re.M | re.I)
# A line ending in two spaces or a backslash is a hard line break.
_HARD_BREAK = re.compile(r"(?:  |\\)$")
# A link's address or a note defined on a line of its own ("[1]: https://…", "[^1]: …").
_DEFINITION = re.compile(
    r" {0,3}(?:\[\^[^\]]+\]:.*|\[[^\]]+\]:[ \t]*<?[^\s<>]+>?(?:[ \t]+[\"'(].*)?[ \t]*)"
)
# Not read in a book, as in an EPUB (html.py): a note's marker, an image with its alt text.
_NOTE_MARK = re.compile(r"\[\^[^\]]+\]")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)|!\[[^\]]*\]\[[^\]]*\]")
_REFERENCE_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_COMMENT_OPENS = re.compile(r"<!--(?!.*-->)")


def read_markdown_book(path: Path, data: bytes) -> Book:
    text = decoded(data, path.name).replace("\r\n", "\n").replace("\r", "\n")
    fields: dict[str, str] = {}
    front = _FRONT_MATTER.match(text)
    if front:
        fields = {k.lower(): v for k, _, v in _FIELD.findall(front[1])}
        text = text[front.end() :]
    sole, blocks = titled(_blocks(text.split("\n")))
    title = fields.get("title") or sole or name_title(path)
    return Book(
        title=title,
        author=fields.get("author"),
        language=None,
        cover=None,
        chapters=tuple(chapters_from(blocks, title)),
    )


def _blocks(lines: list[str]) -> list[Block]:
    """Paragraphs and headings (a heading of level 3 and below is a paragraph)."""
    out = Paragraphs()
    fences = Fences()
    joined = False  # the paragraph's last line may go on on the next line
    skipping = ""  # what ends the lines not read: "-->" in a comment, "" in a note
    in_note = False
    for i, line in enumerate(lines):
        fences.feed(line)
        kind = fences.line(line, may_open=True)
        if kind is not LineKind.TEXT:
            out.end()
            joined = False
            continue
        if skipping:
            if skipping in line:
                skipping = ""
            continue
        if in_note and line.strip() and line[:1] in " \t":
            continue  # a note's definition goes on
        in_note = False
        if _DEFINITION.fullmatch(line):
            out.end()
            joined, in_note = False, True
            continue
        if _COMMENT_OPENS.search(line):
            skipping = "-->"
            line = line[: line.index("<!--")]
        following = lines[i + 1] if i + 1 < len(lines) else ""
        setext = _SETEXT.fullmatch(following)
        atx = _ATX.fullmatch(line)
        if atx:
            level, words = len(atx[1]), _inline(atx[2] or "")
            if level <= 2:
                out.heading(words, level)
            else:
                out.end()
                out.add(words)
                out.end()
            joined = False
        elif setext and line.strip() and not out.lines and not LINE_PREFIX.match(line):
            out.heading(_inline(line), 1 if setext[1][0] == "=" else 2)
            joined = False
        elif not line.strip():
            out.end()
            joined = False
        elif _SETEXT.fullmatch(line) and out.blocks and out.blocks[-1].heading and not out.lines:
            continue  # the underline of the heading just read
        elif TABLE_SEP.match(line):
            continue  # a table's header row goes on into its body
        elif RULE.match(line):
            out.end()
            joined = False
        elif line.lstrip().startswith("|"):
            out.add(table_row(_unread(line)))
            joined = False
        elif LINE_PREFIX.match(line):
            out.add(_inline(LINE_PREFIX.sub("", line)))
            joined = not _HARD_BREAK.search(line)
        elif joined and out.lines:
            out.lines[-1] = f"{out.lines[-1]} {_inline(line)}".strip()
            joined = not _HARD_BREAK.search(line)
        else:
            out.add(_inline(line))
            joined = not _HARD_BREAK.search(line)
    for line in fences.unclosed():  # a short block never closed is read (fences.py)
        out.add(clean_inline(line))
    out.end()
    return out.blocks


def _unread(line: str) -> str:
    line = _NOTE_MARK.sub("", _IMAGE.sub("", line))
    return _REFERENCE_LINK.sub(r"\1", line)


def _inline(line: str) -> str:
    return clean_inline(_unread(line))
