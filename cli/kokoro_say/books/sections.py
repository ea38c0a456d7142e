"""From a document's paragraphs and headings to its chapters, the same way for every
kind of input: where chapters start, what each is titled, and which say nothing."""

from __future__ import annotations

import itertools
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from kokoro_say.book import Chapter

_LOGGER = logging.getLogger("kokoro_say")
_WORD = re.compile(r"\w")
# More headings than this in a row, with nothing between them, are a list of
# contents: read where they stand, not a run of chapters that say only their names.
_MAX_HEADING_RUN = 2
# The level of a document's title (see `titled`): read, but no chapter's heading.
TITLE = -1


@dataclass(frozen=True)
class Block:
    """A paragraph as spoken (its lines kept: each ends a piece), or a heading that
    starts a chapter (`level` 1 or 2, as the document's h1 and h2), or the document's
    title (`TITLE`: read as a paragraph)."""

    text: str
    level: int = 0

    @property
    def heading(self) -> bool:
        return self.level > 0


@dataclass
class _Section:
    headings: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    lead: list[str] = field(default_factory=list)  # read before its headings


def chapters_from(blocks: list[Block], opening: str) -> list[Chapter]:
    """Chapters at the headings; what comes before the first is titled `opening`.

    A heading is spoken at its chapter's start. Two headings with nothing between
    ("Part One", then "Chapter 1") start one chapter titled by both; a longer run is a
    list of contents, read at the end of the chapter before.
    """
    sections = [_Section()]
    for block in blocks:
        current = sections[-1]
        if block.heading and (current.body or not current.headings):
            sections.append(_Section(headings=[block.text]))
        elif block.heading:
            current.headings.append(block.text)
        else:
            current.body.append(block.text)
    for before, section in itertools.pairwise(sections):
        if len(section.headings) > _MAX_HEADING_RUN:
            before.body += section.headings[:-1]
            del section.headings[:-1]
    # The document's title with nothing after it but the first chapter: read at that
    # chapter's start, not a chapter that says only the title.
    opened = sections[0]
    if blocks and blocks[0].level == TITLE and len(sections) > 1 and len(opened.body) == 1:
        sections[1].lead, opened.body = opened.body, []
    chapters = []
    for section in sections:
        if not section.headings and not section.body:
            continue
        title = _joined(section.headings) if section.headings else opening
        text = "\n\n".join(section.lead + section.headings + section.body)
        chapters.append(Chapter(title=title, text=text))
    return chapters


def titled(blocks: list[Block]) -> tuple[str | None, list[Block]]:
    """A single first-level heading that opens the document, with second-level ones
    after it, is the document's title, not a chapter: its text, and the blocks with it
    read as a paragraph."""
    headings = [b for b in blocks if b.heading]
    tops = [b for b in headings if b.level == 1]
    if len(tops) != 1 or blocks[0] is not tops[0] or len(headings) < 2:
        return None, blocks
    return tops[0].text, [Block(b.text, TITLE) if b is tops[0] else b for b in blocks]


def _joined(headings: list[str]) -> str:
    title = headings[0]
    for heading in headings[1:]:
        title += (" " if title.endswith((".", ":")) else ": ") + heading
    return title


def says_something(text: str) -> bool:
    return _WORD.search(text) is not None


def spoken(chapters: list[Chapter]) -> list[Chapter]:
    """The chapters that say something; the others named in one warning."""
    kept = [c for c in chapters if says_something(c.text)]
    dropped = [c.title for c in chapters if not says_something(c.text)]
    if dropped:
        _LOGGER.warning(
            "%d chapter%s with nothing to say left out: %s",
            len(dropped),
            "" if len(dropped) == 1 else "s",
            ", ".join(f'"{t}"' for t in dropped),
        )
    return kept


def name_title(path: Path) -> str:
    """A title from a file's name: "my_great-book.txt" -> "my great book"."""
    return re.sub(r"[\s_-]+", " ", path.stem).strip() or path.name


@dataclass
class Paragraphs:
    """Lines gathered into paragraphs; a blank line or `end()` closes one."""

    lines: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)

    def add(self, line: str) -> None:
        if line.strip():
            self.lines.append(line.strip())

    def end(self) -> None:
        if self.lines:
            self.blocks.append(Block("\n".join(self.lines)))
            self.lines = []

    def heading(self, text: str, level: int) -> None:
        self.end()
        self.blocks.append(Block(text, level))
